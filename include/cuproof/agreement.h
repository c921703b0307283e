/*
 * Agreement between what a run measured itself and what CUPTI recorded of
 * the same run: CUDA event pairs around kernel launches against the
 * kernels' activity records. Nothing here touches CUDA, so the rules are
 * tested on hand-built traces and replayed on traces recorded on GPUs.
 *
 * An event pair brackets its kernel and may bracket more. The start
 * event's timestamp is written when its stream reaches it, and the kernel
 * may start later: the host is still inside the launch call, the device
 * has no free kernel slot, or the stream shares a hardware queue
 * (CUDA_DEVICE_MAX_CONNECTIONS of them) with work that blocks it. The end
 * event, in the same in-order queue, may likewise fire after another
 * stream's work. So, with t the tolerance, per launch:
 *
 *   event time >= kernel duration - t   always: an event pair shorter than
 *                                       its kernel is not that kernel's
 *                                       (a pairing error or a poisoned value);
 *   event time <= kernel duration + t   "agrees": nothing stood between
 *                                       the events and the kernel.
 *
 * A longer event time is a wait, and is counted, not excused. One wait
 * the trace can bound on its own: the start event cannot fire before the
 * host's cudaEventRecord call began, so with nothing else on the stream's
 * hardware queue an event time is at most (kernel end - start of the last
 * cudaEventRecord call before the launch) + t ("host-bounded"). That
 * covers a launch call that returns late, as under CUPTI.
 */
#ifndef CUPROOF_AGREEMENT_H
#define CUPROOF_AGREEMENT_H

#include "export.h"

#include "metrics.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_event_tolerance {
    double abs_ms; /* fixed part: event resolution, clock mapping, dispatch */
    double rel;    /* part proportional to the kernel's duration */
} cp_event_tolerance;

/*
 * The tolerance the cases use: 0.1 ms plus 0.5% of the kernel. CUDA events
 * resolve about 0.5 us each; when the stream is idle the start event fires
 * at once while the kernel follows only when the host's launch call ends,
 * and a launch under CUPTI took up to 61 us on the H100; the front end
 * adds a few microseconds. 0.5% covers the two clocks drifting apart over
 * a long kernel. A pairing error or a poisoned value is far larger.
 */
#define CP_EVENT_TOLERANCE ((cp_event_tolerance){.abs_ms = 0.1, .rel = 0.005})

typedef struct cp_event_agreement {
    size_t launches;  /* kernels paired with event times, in launch order */
    size_t agreeing;  /* |event - kernel| within the tolerance */
    size_t too_short; /* events shorter than their kernel beyond the tolerance */
    size_t waited;    /* events longer than their kernel beyond the tolerance */
    size_t host_bounded; /* events within the host-side bound above */
    double max_host_wait_ms; /* largest kernel start - record call start */
    double worst_short_ms;                /* largest kernel - event */
    double max_excess_ms, mean_excess_ms; /* event - kernel */
    double kernel_mean_ms, kernel_std_ms; /* CUPTI durations (population std) */
    double event_mean_ms, event_std_ms;
} cp_event_agreement;

/*
 * Pairs event_ms[i] with the i-th kernel called `kernel` in launch order
 * (CUPTI correlation ids rise with each API call) and applies the rules
 * above. Returns 0; CP_EINVAL when the trace does not hold exactly n such
 * kernels (cp_last_error gives both counts) or an argument is NULL;
 * CP_ENOMEM.
 */
CP_API int cp_events_against_trace(const cp_trace *t, const char *kernel, const double *event_ms,
                            size_t n, cp_event_tolerance tol, cp_event_agreement *out);

#ifdef __cplusplus
}
#endif

#endif
