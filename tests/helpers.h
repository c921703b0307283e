/* Small builders shared by the CPU tests. */
#ifndef CUPROOF_TEST_HELPERS_H
#define CUPROOF_TEST_HELPERS_H

#include <cuproof/internal/report.h>
#include <cuproof/metrics.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void add_kernel(cp_trace *t, uint64_t s, uint64_t e, uint32_t ctx, uint32_t stream)
{
    cp_activity a = {.kind = CP_ACT_KERNEL, .start = s, .end = e, .context = ctx,
                     .stream = stream, .name = "k"};
    cp_trace_add(t, &a);
}

static inline void add_copy(cp_trace *t, uint64_t s, uint64_t e, uint32_t ctx, uint32_t stream,
                            cp_copy_dir dir, cp_mem_kind host, bool async)
{
    cp_activity a = {.kind = CP_ACT_MEMCPY, .start = s, .end = e, .context = ctx,
                     .stream = stream, .copy_dir = dir, .bytes = 4096, .async = async,
                     .src = dir == CP_COPY_HTOD ? host : CP_MEM_DEVICE,
                     .dst = dir == CP_COPY_DTOH ? host : CP_MEM_DEVICE, .name = "memcpy"};
    cp_trace_add(t, &a);
}

/* *r: a fresh report of the ci profile on `gpu` that holds one empty
 * passed case `name`, which it returns; NULL when out of memory. */
static inline cp_case_result *one_case_report(cp_report *r, const char *name, const char *gpu)
{
    memset(r, 0, sizeof *r);
    snprintf(r->profile, sizeof r->profile, "ci");
    snprintf(r->env.gpu_name, sizeof r->env.gpu_name, "%s", gpu);
    if (!(r->cases = calloc(1, sizeof *r->cases)))
        return NULL;
    r->ncases = 1;
    cp_case_result *c = &r->cases[0];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->status = CP_STATUS_PASSED;
    return c;
}

#endif
