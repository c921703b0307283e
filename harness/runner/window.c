/* Traced windows as the runner opens them (runner/window.h): CUPTI is
 * primed with CUDA runtime calls, which the collect layer may not issue,
 * so that its set-up stalls land before the window opens. */
#include "runner/window.h"

#include <cuproof/check.h>

#include <cuda_runtime_api.h>

#define PRIME_BYTES 256

int cp_tracer_begin(cp_trace *t)
{
    int rc = 0;
    void *prime = NULL;
    CP_TRY(cp_tracer_enable());
    /* The first traced call after enabling stalls for milliseconds while
     * CUPTI sets itself up (about 5 ms on an H100 VM). Prime it with a tiny
     * memset, then flush and discard those records: no window is open yet.
     * The buffer is freed at once, so the device is left as it was. The
     * memset runs on the legacy default stream: its record names that
     * stream's lane, which default_stream_serialization needs. */
    CP_CUDA(cudaMalloc(&prime, PRIME_BYTES));
    CP_CUDA(cudaMemsetAsync(prime, 0, PRIME_BYTES, cudaStreamLegacy));
    CP_CUDA(cudaDeviceSynchronize());
    CP_CUDA(cudaFree(prime));
    prime = NULL;
    CP_TRY(cp_tracer_flush());
    /* The first call after a flush stalls again (about 0.9 ms on an H100,
     * inside CUPTI after the call's own record), which would land between
     * a case's first two calls: absorb it here, and open the window after
     * it, so that this call's record is dropped. */
    CP_CUDA(cudaStreamQuery(cudaStreamLegacy));
    CP_TRY(cp_tracer_open(t));
out:
    if (rc < 0) {
        cudaFree(prime);
        cp_tracer_disable();
    }
    return rc;
}
