/*
 * The GPU's time of one timed run (private to the runner): a start and a
 * stop CUDA event bracketing every stream the case's body uses, and, for
 * a body that only queues work (cp_time_gated), a gate kernel ahead of
 * the start, opened once the body has queued everything, so that the
 * work runs at the GPU's pace and its time leaves out the host's (the
 * technique of nvbench's blocking kernel).
 *
 * Bracketing: both events go on the legacy default stream, which every
 * blocking stream (cudaStreamCreate's default, cudaStreamPerThread)
 * orders itself against; each stream the case declared
 * (cp_time_streams: the non-blocking ones it leaves work on) waits on
 * the start and is waited on by the stop. A body that returns before its
 * work on an undeclared non-blocking stream has ended is outside the
 * contract (case.h).
 */
#ifndef CUPROOF_RUNNER_GPU_TIME_H
#define CUPROOF_RUNNER_GPU_TIME_H

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>

/* How long the gate waits for the host before it gives up, on the GPU's
 * clock: a body that waits on its own work (a synchronous copy, a
 * synchronisation) while the gate holds it ends up waiting this long
 * once, and the run fails naming why (cp_gpu_timer_read). */
#define CP_GATE_TIMEOUT_NS 5000000000ULL

typedef struct cp_gpu_timer {
    int device; /* the events' device */
    cudaEvent_t start, stop;
    /* The gate's flag ([0], set by the host to open) and its timed-out
     * word ([1]), in mapped pinned host memory; NULL until a gated run. */
    int *gate;
    bool gated; /* this run's start follows a gate */
    bool held;  /* the gate is closed and not yet opened */
} cp_gpu_timer;

/* Before the body: creates the events on `device` (the current device)
 * at the first call; with `gated`, launches the gate; records the start
 * and makes each of the n streams wait on it. Returns 0 or CP_ECUDA. */
int cp_gpu_timer_begin(cp_gpu_timer *t, int device, bool gated, void *const *streams, size_t n);

/* After the body (on every path, failed or not, once begun): records the
 * stop after each stream's work and opens the gate. Returns 0 or
 * CP_ECUDA. */
int cp_gpu_timer_end(cp_gpu_timer *t, void *const *streams, size_t n);

/* After a device synchronisation: the milliseconds between the start and
 * the stop. Returns 0; CP_ECUDA; or CP_EINVAL when the gate timed out
 * (the body waited on work the gate held), which cp_last_error says. */
int cp_gpu_timer_read(cp_gpu_timer *t, double *ms);

/* Frees the events and the gate; the timer may be begun again after. */
void cp_gpu_timer_free(cp_gpu_timer *t);

#endif
