/* Small builders shared by the CPU tests. */
#ifndef CUPROOF_TEST_HELPERS_H
#define CUPROOF_TEST_HELPERS_H

#include <cuproof/metrics.h>

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

#endif
