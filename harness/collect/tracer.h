/*
 * The collect layer: CUPTI and nothing else (no CUDA runtime call), so that
 * the runner and an injected library share it. The activity tracer follows
 * DESIGN.md's tracing rules:
 * CONCURRENT_KERNEL (never KERNEL, which serialises kernels), MEMCPY with
 * both memory kinds, MEMSET and RUNTIME for launch correlation; enabled
 * before the first CUDA call, flushed after synchronising, dropped records
 * counted. Only one traced window is open at a time (CUPTI's activity
 * buffers are process-wide).
 */
#ifndef CUPROOF_TRACER_H
#define CUPROOF_TRACER_H

#include <cuproof/trace.h>

#include <stdbool.h>
#include <stdint.h>

/*
 * Registers the buffer callbacks and checks that every activity kind can be
 * enabled, then disables them until cp_tracer_begin, so that timed runs are
 * not traced. Call before the first CUDA call. Returns 0 in every case:
 * when CUPTI cannot subscribe (another tool such as Nsight Systems holds
 * it, or no driver is loaded) the tracer stays unavailable and
 * cp_tracer_unavailable_reason says why; cases then run untraced.
 */
int cp_tracer_init(void);
bool cp_tracer_available(void);
const char *cp_tracer_unavailable_reason(void);

/*
 * A traced window opens in three steps, so that this layer issues no CUDA
 * runtime call (an injected library must issue none): cp_tracer_enable
 * turns the activity kinds on in priming mode (records are converted but
 * kept nowhere, except that a memset's record names the legacy default
 * stream's lane); the caller then issues whatever absorbs CUPTI's set-up
 * cost, and cp_tracer_flush discards it; cp_tracer_open stamps the window's
 * start and records into `t` (cleared first) from then on. The runner does
 * the priming in cp_tracer_begin (runner/window.h).
 * cp_tracer_enable returns 0, CP_EINVAL when a window is already open or
 * the tracer is unavailable, or CP_ECUPTI; cp_tracer_open returns 0,
 * CP_EINVAL when not enabled, or CP_ECUPTI; after a failure the kinds are
 * disabled again. cp_tracer_disable turns the kinds off (a failed priming).
 */
int cp_tracer_enable(void);
int cp_tracer_flush(void);
int cp_tracer_open(cp_trace *t);
void cp_tracer_disable(void);

/* Flushes every buffer (the caller has synchronised the device), closes
 * the window and stores the dropped-record count in the trace. Returns 0,
 * CP_EDROPPED when records were lost, or CP_ECUPTI. */
int cp_tracer_end(void);

/* CUPTI's clock (ns), or CLOCK_MONOTONIC when CUPTI is unavailable. */
uint64_t cp_tracer_timestamp(void);

/* Names `stream` (a CUstream) of `context` (its CUcontext) for every
 * window from now on, as the program named it through NVTX: `cuproof run`
 * does not make CUPTI NVTX's injection (its own ranges are stamped by the
 * harness), so no NAME record would come, and a case names its streams in
 * its setup, before a window opens. The ids are CUPTI's own
 * (cuptiGetStreamIdEx, cuptiGetContextId, cuptiGetDeviceId), the ids its
 * kernel and copy records carry. Returns 0, or a negative code when CUPTI
 * cannot number the stream (the stream then keeps its number alone). */
int cp_tracer_name_stream(void *context, void *stream, const char *name);

/* Adds a host-side range to the open window; does nothing without one. */
void cp_tracer_add_range(const char *name, uint64_t start, uint64_t end, uint32_t depth);

/*
 * Names the kernels the calling thread launches until the matching pop, in
 * the open window: CUPTI can give a kernel of a library loaded at run time
 * the name of an unloaded kernel whose handle it reused (seen on the H100
 * with CUDA 13.0: add_kernel reported as leaky_relu, a case earlier in the
 * same process). cp_tracer_end then corrects such names from the harness's
 * record and counts them in the trace's renamed_kernels. With no window
 * open both do nothing. Pushes nest per thread, as CUPTI's external
 * correlation ids do. Return 0, CP_ENOMEM or CP_ECUPTI.
 */
int cp_tracer_push_launch_name(const char *name);
int cp_tracer_pop_launch_name(void);
/* A named launch's end: pops the name when `pushed`, and returns the
 * launch's own error `rc` first, else the pop's. */
int cp_tracer_launch_named_end(bool pushed, int rc);

/* Flushes CUPTI and frees the tracer's buffers; call
 * before the process exits. Safe to call when unavailable. */
void cp_tracer_shutdown(void);

#endif
