/*
 * context-manual (seed 000 §3.3.4, 001: simple_context_create.py): create a
 * context by hand through the driver API, copy a small array in and out,
 * and destroy the context, measuring the device's free memory around it.
 *
 *   leaked     the same without cuCtxDestroy (the context is only popped):
 *              the negative control. The runner's leak check must flag
 *              it; the case keeps the handles and destroys them when the
 *              next variant starts, so the device is left as found;
 *   destroyed  the source's program: the round trip is exact and the free
 *              memory returns to its level before the context existed.
 */
#include <cuproof/expect.h>
#include <cuproof/case.h>
#include <cuproof/driver.h>

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEAKED = 0, DESTROYED };

#define ELEMS 1024
#define MAX_LEAKED 64

typedef struct state {
    const cp_driver *cu;
    CUdevice device;
    float in[ELEMS], out[ELEMS];
    CUcontext leaked[MAX_LEAKED];
    int nleaked;
    /* Free device memory, bytes: before a context existed (the leaked
     * variant's first run), the most a context took, after cleaning up. */
    long long free_before, context_bytes, free_after_cleanup;
    long long worst_kept; /* the destroyed variant: before minus after, worst run */
    bool cleaned;
} state;

/* Destroys every context the leaked variant left. Returns 0 or CP_ECUDA. */
static int clean_up(state *s)
{
    int rc = 0;
    while (s->nleaked > 0) {
        CP_CU(s->cu->CtxDestroy(s->leaked[s->nleaked - 1]));
        s->nleaked--;
    }
out:
    return rc;
}

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (s && s->cu)
        clean_up(s);
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    /* Its subject is creating and destroying a context on the host. */
    CP_TRY(cp_time_wall(ctx, -1, "its subject is creating a context on the host"));
    s->cu = cp_driver_get();
    if (!s->cu)
        return CP_ENODEV;
    CP_CU(s->cu->DeviceGet(&s->device, cp_ctx_env(ctx)->device));
    for (int i = 0; i < ELEMS; i++)
        s->in[i] = (float)i * 0.5f - 100.0f;
    CP_TRY(cp_expect_leak(ctx, LEAKED));
out:
    return rc;
}

static long long free_bytes(const state *s, int *rc)
{
    size_t free = 0, total = 0;
    *rc = cp_check_cu(s->cu->MemGetInfo(&free, &total), __FILE__, __LINE__,
                      "cuMemGetInfo(&free, &total)");
    return (long long)free;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    memset(s->out, 0xFF, sizeof s->out);
    if (v->index == DESTROYED && !s->cleaned) {
        CP_TRY(clean_up(s));
        s->free_after_cleanup = free_bytes(s, &rc);
        CP_TRY(rc);
        s->cleaned = true;
    }
out:
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    CUcontext mine = NULL;
    CUdeviceptr d = 0;
    long long before = free_bytes(s, &rc);
    CP_TRY(rc);
    if (v->index == LEAKED && s->free_before == 0)
        s->free_before = before;
    if (v->index == LEAKED && s->nleaked == MAX_LEAKED)
        return cp_failf(CP_ERANGE, "more than %d leaked contexts", MAX_LEAKED);
    cp_phase_begin(ctx, "context");
    /* Created and made current on this thread. */
    CP_CU(s->cu->CtxCreate(&mine, NULL, 0, s->device));
    CP_CU(s->cu->MemAlloc(&d, sizeof s->in));
    CP_CU(s->cu->MemcpyHtoD(d, s->in, sizeof s->in));
    CP_CU(s->cu->MemcpyDtoH(s->out, d, sizeof s->out));
    CP_CU(s->cu->MemFree(d));
    d = 0;
    long long with_context = free_bytes(s, &rc);
    CP_TRY(rc);
    if (before - with_context > s->context_bytes)
        s->context_bytes = before - with_context;
    if (v->index == DESTROYED) {
        CP_CU(s->cu->CtxDestroy(mine));
        mine = NULL;
        long long after = free_bytes(s, &rc);
        CP_TRY(rc);
        if (before - after > s->worst_kept)
            s->worst_kept = before - after;
    } else {
        /* Forgotten: only taken off this thread's stack. */
        CUcontext popped = NULL;
        CP_CU(s->cu->CtxPopCurrent(&popped));
        s->leaked[s->nleaked++] = mine;
        mine = NULL;
    }
    cp_phase_end(ctx);
out:
    if (d)
        s->cu->MemFree(d);
    if (mine)
        s->cu->CtxDestroy(mine);
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    *mismatches = cp_count_bit_mismatches(s->out, s->in, ELEMS);
    *elements = ELEMS;
    return 0;
}

static int checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    double mib = 1 << 20;
    if (cp_ctx_env(ctx)->shared_gpu[0]) {
        cp_check_skip(ctx, "destroyed: free device memory returns to its level before the context",
                      "at most 8 MiB kept after cuCtxDestroy, every run", cp_ctx_env(ctx)->shared_gpu);
        cp_check_skip(ctx, "leaked: every leaked context is destroyed afterwards",
                      "free memory within 8 MiB of before the first leaked context",
                      cp_ctx_env(ctx)->shared_gpu);
        return 0;
    }
    cp_check(ctx, "destroyed: free device memory returns to its level before the context",
             s->worst_kept <= CP_LEAK_BYTES, "at most 8 MiB kept after cuCtxDestroy, every run",
             "%.1f MiB kept in the worst run; the context took %.1f MiB while it existed",
             (double)s->worst_kept / mib, (double)s->context_bytes / mib);
    cp_check(ctx, "leaked: every leaked context is destroyed afterwards",
             s->cleaned && s->nleaked == 0 &&
                 s->free_before - s->free_after_cleanup <= CP_LEAK_BYTES,
             "free memory within 8 MiB of before the first leaked context",
             "%.1f MiB below it after destroying them", (double)(s->free_before -
                                                                 s->free_after_cleanup) / mib);
    cp_figure_add(ctx, "context footprint", (double)s->context_bytes / mib, "MiB");
    return 0;
}

CUPROOF_CASE(context_manual,
    .title = "A context created by hand: round trip, free memory, and a leak control",
    .source = "seed 000 §3.3.4, 001 (simple_context_create.py)",
    .variants = CP_VARIANTS("leaked", "destroyed"),
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .checks = checks,
    .teardown = teardown);
