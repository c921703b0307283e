/*
 * The GPU's time of one timed run: events bracketing the body's streams,
 * behind a gate when the body only queues work (runner/gpu_time.h).
 */
#include "runner/gpu_time.h"

#include <cuproof/check.h>
#include <cuproof/error.h>
#include <cuproof/gate.h>

#include <string.h>

int cp_gpu_timer_begin(cp_gpu_timer *t, int device, bool gated, void *const *streams, size_t n)
{
    int rc = 0;
    if (!t->start) {
        t->device = device;
        CP_CUDA(cudaEventCreate(&t->start));
        CP_CUDA(cudaEventCreate(&t->stop));
    }
    t->gated = gated;
    if (gated) {
        if (!t->gate)
            CP_CUDA(cudaHostAlloc((void **)&t->gate, 2 * sizeof *t->gate, cudaHostAllocMapped));
        __atomic_store_n(&t->gate[0], 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&t->gate[1], 0, __ATOMIC_SEQ_CST);
        int *flag = NULL;
        CP_CUDA(cudaHostGetDevicePointer((void **)&flag, t->gate, 0));
        CP_TRY(cp_gate_launch(flag, CP_GATE_TIMEOUT_NS, flag + 1, cudaStreamLegacy));
        t->held = true;
    }
    CP_CUDA(cudaEventRecord(t->start, cudaStreamLegacy));
    for (size_t i = 0; i < n; i++)
        CP_CUDA(cudaStreamWaitEvent((cudaStream_t)streams[i], t->start, 0));
out:
    return rc;
}

int cp_gpu_timer_end(cp_gpu_timer *t, void *const *streams, size_t n)
{
    int rc = 0;
    /* Each declared stream's end, then the stop after them all on the
     * legacy stream (one event, re-recorded, carries each end: the wait
     * takes the record it was given at the time of the call). */
    for (size_t i = 0; i < n; i++) {
        CP_CUDA(cudaEventRecord(t->stop, (cudaStream_t)streams[i]));
        CP_CUDA(cudaStreamWaitEvent(cudaStreamLegacy, t->stop, 0));
    }
    CP_CUDA(cudaEventRecord(t->stop, cudaStreamLegacy));
out:
    /* Opened on every path, so that a failed body cannot leave the device
     * spinning until the timeout. */
    if (t->held) {
        __atomic_store_n(&t->gate[0], 1, __ATOMIC_SEQ_CST);
        t->held = false;
    }
    return rc;
}

int cp_gpu_timer_read(cp_gpu_timer *t, double *ms)
{
    int rc = 0;
    float elapsed = 0;
    *ms = 0;
    if (t->gated && __atomic_load_n(&t->gate[1], __ATOMIC_SEQ_CST) != 0)
        return cp_failf(CP_EINVAL,
                        "the timing gate gave up after %.0f s: the body waited on work the gate "
                        "held (a synchronous copy or a synchronisation), so it cannot be timed "
                        "behind a gate (cp_time_gated)",
                        CP_GATE_TIMEOUT_NS / 1e9);
    CP_CUDA(cudaEventElapsedTime(&elapsed, t->start, t->stop));
    *ms = elapsed;
out:
    return rc;
}

void cp_gpu_timer_free(cp_gpu_timer *t)
{
    if (t->start)
        cudaEventDestroy(t->start);
    if (t->stop)
        cudaEventDestroy(t->stop);
    if (t->gate)
        cudaFreeHost(t->gate);
    memset(t, 0, sizeof *t);
}
