/*
 * Traced windows as the runner opens them: the collect layer's tracer,
 * primed with CUDA runtime calls that the collect layer may not issue.
 */
#ifndef CUPROOF_RUNNER_WINDOW_H
#define CUPROOF_RUNNER_WINDOW_H

#include "collect/tracer.h"

/* Starts recording into `t` (cleared first) on the current device, after
 * priming CUPTI with a small memset whose records are discarded, so that
 * its set-up cost stays out of the window. Returns 0, CP_EINVAL when a
 * window is already open or the tracer is unavailable, CP_ECUDA or
 * CP_ECUPTI. cp_tracer_end (collect/tracer.h) closes the window. */
int cp_tracer_begin(cp_trace *t);

#endif
