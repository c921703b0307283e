/*
 * CUPTI plumbing, apart from what is done with the records (as Kineto
 * keeps CuptiActivityApi apart from its profiler session): activity
 * buffers from a pool touched once, the request and completion callbacks,
 * dropped-record counts, and the conversion of CUPTI's records into
 * cp_activity. Two users sit on it: the tracer's windows (tracer.h) and
 * the injection library of `cuproof exec`. Nothing here issues a CUDA
 * runtime call.
 */
#ifndef CUPROOF_COLLECT_CUPTI_H
#define CUPROOF_COLLECT_CUPTI_H

#include <cuproof/trace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Called for every record of every completed buffer, in CUPTI's order
 * within a buffer and buffer after buffer in the order CUPTI completed
 * them, on the collect layer's worker thread with the collect lock held
 * (calls never overlap): `record` is a CUpti_Activity. CUPTI's callbacks
 * only queue a completed buffer, so that no program thread waits while
 * records are written (cupti.c says how). */
typedef void (*cp_record_fn)(const void *record, void *arg);

/* Called after each completed buffer with the records CUPTI reports as
 * dropped since the last call (0 mostly), with the lock held. */
typedef void (*cp_dropped_fn)(uint64_t dropped, void *arg);

/*
 * Registers the buffer callbacks, which hand every record to `on_record`
 * and each buffer's dropped count to `on_dropped` (either may be NULL).
 * Call before the first CUDA call; one registration per process. Reads
 * CUPROOF_CUPTI_BUFFER_KB and CUPROOF_CUPTI_MAX_BUFFERS (test settings: a
 * small buffer and a limit make CUPTI drop records). Returns 0 or
 * CP_ECUPTI (another tool holds CUPTI, or no driver).
 */
int cp_cupti_register(cp_record_fn on_record, cp_dropped_fn on_dropped, void *arg);

/* Enables or disables each of the n CUPTI activity kinds; stops at the
 * first failure. Returns 0 or CP_ECUPTI. */
int cp_cupti_enable(const int *kinds, size_t n, bool enable);

/* Called by cp_cupti_filter_api for each callback id it names. */
typedef void (*cp_api_seen_fn)(void *ctx, bool runtime, uint32_t cbid, const char *name,
                               bool kept);

/*
 * The API filter of `cuproof exec`: walks every runtime and driver
 * callback id, names it (cuptiGetCallbackName) and, with `apply`, turns
 * off the activity records of each call that cp_api_kept
 * (analysis/api_calls.h) does not keep. Call it after enabling
 * CUPTI_ACTIVITY_KIND_RUNTIME and _DRIVER: enabling a kind afterwards
 * records every call of it again. An id CUPTI cannot name stays
 * recorded. `each` (may be NULL) sees every id named, kept or not;
 * *filtered gets how many are (with `apply`) or would be turned off.
 * Returns 0, or CP_ECUPTI naming the first id CUPTI refused to turn off
 * (each refused id stays recorded, and the walk goes on past it).
 */
int cp_cupti_filter_api(bool apply, cp_api_seen_fn each, void *ctx, uint32_t *filtered);

/* Delivers every buffer (forced: also those with incomplete records),
 * waits until their records have been handed on, and returns 0 or
 * CP_ECUPTI; plus CUPTI's global dropped count since the last
 * call in *dropped when it is not NULL. */
int cp_cupti_flush(bool forced, uint64_t *dropped);

/* Keeps `n` written buffers ready in the pool (their page faults then do
 * not land in a traced run). */
void cp_cupti_reserve(size_t n);

/* The size of each buffer (bytes, at least 1 KiB), set before registering. */
void cp_cupti_set_buffer_size(size_t bytes);
size_t cp_cupti_buffer_size(void);

/* Buffers handed to CUPTI so far, and the limit (0: none). */
void cp_cupti_buffer_counts(size_t *given, size_t *limit);

/* Tests: hands `buffer` (aligned_alloc'd: the pool takes it) with
 * `valid` bytes of records to the completion path as CUPTI would, and
 * waits until every buffer so delivered has been handed on. */
void cp_cupti_deliver(uint8_t *buffer, size_t valid);
void cp_cupti_wait_delivered(void);

/* Stops the worker once it has handed on what is queued, and frees the
 * pool's buffers (after a final flush). */
void cp_cupti_release(void);

/* Detaches CUPTI from the process (cuptiFinalize): every subscription,
 * kind and instrumentation gone, so that the program runs on as if never
 * traced. A kind only disabled leaves its cost behind: on the H200 the
 * CuPy loop's steps after a traced window ran 17% slower than before it
 * (samples/h200-capture). The caller flushes first; no CUPTI call may
 * follow but another attach. Returns 0 or the CUPTI error. */
int cp_cupti_detach(void);

/* The lock the record callbacks run under, for state they share with
 * other threads. */
void cp_cupti_lock(void);
void cp_cupti_unlock(void);

/*
 * Converts one CUPTI activity record (a CUpti_Activity*) into `out`, whose
 * name points into CUPTI's storage or a static string until the caller
 * interns it: kernels, copies, memsets (with their graph ids) and runtime
 * API calls. Returns 1 when converted, 0 for kinds it does not convert.
 * Exposed so that CPU tests can convert hand-built records.
 */
int cp_cupti_convert(const void *record, cp_activity *out);

/*
 * Converts a NAME record (CUpti_ActivityName) that names a stream, as
 * nvtxNameCudaStream does, into `out` (process 0; the name points into
 * CUPTI's storage until the caller interns it). Returns 1 when converted,
 * 0 for any other record, a NAME of another object kind, or one without a
 * name. CUPTI numbers the stream as in its kernel and copy records (its
 * objectId.dcs is the context-unique stream id that cuptiGetStreamIdEx
 * gives, the id the kernel records' streamId carries), which is what lets
 * the name label the lane of those records.
 */
int cp_cupti_stream_name(const void *record, cp_stream_name *out);

#endif
