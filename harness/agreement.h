/*
 * Agreement between what a run measured itself and what CUPTI recorded of
 * the same run: CUDA event pairs around kernel launches against the
 * kernels' activity records. Nothing here touches CUDA, so the rules are
 * tested on hand-built traces and replayed on traces recorded on GPUs.
 *
 * An event pair brackets its kernel and may bracket more: the start
 * event's timestamp is written when its stream reaches it, and the kernel
 * may then still wait (for a free slot on the device, for the host to
 * launch it). So, with t the tolerance, per launch:
 *
 *   event time >= kernel duration - t   always (else the pair is not this
 *                                       launch's, or a value is poisoned);
 *   event time <= kernel duration + t   when the kernel started as soon as
 *                                       its start event fired ("agrees").
 *
 * A longer event time is a wait. The trace explains it when the event time
 * is at most (kernel end - ready) + t, `ready` being the latest of the end
 * of the previous operation on the kernel's lane and the start of the
 * host's cudaEventRecord call just before the launch: the start event
 * cannot fire before either, so the kernel waited from then on.
 */
#ifndef CUPROOF_AGREEMENT_H
#define CUPROOF_AGREEMENT_H

#include "timeline.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct cp_event_tolerance {
    double abs_ms; /* fixed part: event resolution, clock mapping, dispatch */
    double rel;    /* part proportional to the kernel's duration */
} cp_event_tolerance;

/*
 * The tolerance the cases use: 20 us plus 0.5% of the kernel. CUDA events
 * resolve about 0.5 us each; CUPTI maps GPU timestamps onto the host clock
 * with microsecond error; and the front end takes a few microseconds
 * between an event's timestamp and the next command's start. 0.5% covers
 * the clocks drifting apart over a long kernel.
 */
#define CP_EVENT_TOLERANCE ((cp_event_tolerance){.abs_ms = 0.020, .rel = 0.005})

typedef struct cp_event_agreement {
    size_t launches;  /* kernels paired with event times, in launch order */
    size_t agreeing;  /* |event - kernel| within the tolerance */
    size_t too_short; /* events shorter than their kernel beyond the tolerance */
    size_t waited;    /* events longer than their kernel beyond the tolerance */
    size_t explained; /* waits that the trace's ready time accounts for */
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
int cp_events_against_trace(const cp_trace *t, const char *kernel, const double *event_ms,
                            size_t n, cp_event_tolerance tol, cp_event_agreement *out);

#endif
