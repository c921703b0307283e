/* Runs one case through the contract in case.h and fills its result.  *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_RUNNER_H
#define CUPROOF_RUNNER_H

#include "../export.h"

#include "../case.h"
#include "progress.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_run_opts {
    cp_profile profile;
    /* Timed runs per variant: exactly `repeat` when it is >= 1; when it is
     * 0, the stopping rule below decides. */
    int repeat;
    /* The stopping rule: timed runs go on until the relative standard
     * error of the median is at most max_noise, with at least min_samples
     * runs and min_time_s of them, and stop at max_samples runs or after
     * max_time_s whatever the noise. The variant says which ended it. */
    int min_samples, max_samples;
    double max_noise, min_time_s, max_time_s;
    int warmup; /* untimed runs before them, >= 0 */
    bool trace; /* one traced run per variant when the tracer is available */
    /* The same case already timed in this process, untraced, before any
     * case was traced (cp_run_case with trace false; NULL: none): each of
     * its variants with timed runs lends them (samples, timing, clocks,
     * what verifying and the leak check found) instead of being timed
     * again, and gets one traced warm-up and its traced run. Why: a run
     * that traces times its later untraced runs slower (on an H100 the
     * median variant of ten cases by 5% to 9%, conway-streams' by up to
     * 41%, against --no-trace; samples/h100-layout), whatever the order
     * within a case, so `run` times every case before it traces any. The
     * progress hook hears such a variant's traced warm-up and traced run,
     * and no "done": that was said when it was timed. */
    const cp_case_result *timed;
    /* Overrides of the case's parameters, "NAME=VALUE" each (cuproof run
     * --param): the case reads them with cp_param_int; one it does not
     * read fails the case, naming the parameters it takes. */
    const char *const *params;
    size_t nparams;
    /* Called with `on_run_user` before each run of a variant and once when
     * the variant is done (progress.h says what each call holds), on the
     * thread that called cp_run_case; NULL: no calls. The runner prints
     * nothing itself: showing progress is the caller's business. */
    void (*on_run)(void *user, const cp_run_progress *p);
    void *on_run_user;
} cp_run_opts;

/* The stopping rule's defaults for a profile (repeat 0): ci 5 to 50 runs,
 * 2% noise, at most 1 s per variant; full 5 to 100 runs, 1%, 5 s. */
CP_API void cp_run_opts_stopping_rule(cp_run_opts *o, cp_profile profile);

/* The same, with the settings a user gave in `given` (each non-zero one
 * wins over the default). Returns 0, or CP_EINVAL when the bounds cross
 * (cp_last_error names the options). */
CP_API int cp_run_opts_stopping_rule_given(cp_run_opts *o, cp_profile profile,
                                           const cp_run_opts *given);

/*
 * Runs `def` on the device `env` names and fills `out` (which the caller
 * frees with cp_case_result_free). The case's status says what happened:
 * skipped (no device, or the case said why), failed (a check failed, an
 * output differed from the reference, or a call failed: `error` names it),
 * or passed. Returns 0 when the case ran to a verdict, CP_EINVAL for bad
 * options, or the CUDA error that left the device unusable (the caller
 * should not run further cases in this process then).
 */
CP_API int cp_run_case(const cp_case_def *def, const cp_env *env, const cp_run_opts *opts,
                cp_case_result *out);

/*
 * Tracing for the runs of this process. cp_tracing_init sets CUPTI up and
 * must come before the first CUDA call (DESIGN.md's tracing rules); it
 * always succeeds: when CUPTI cannot subscribe (another tool holds it, no
 * driver, CUPROOF_NO_TRACE) cases run untraced and
 * cp_tracing_unavailable_reason says why ("" while available).
 * cp_tracing_shutdown flushes and frees what the tracer holds; call it
 * before the process exits.
 */
CP_API void cp_tracing_init(void);
CP_API bool cp_tracing_available(void);
CP_API const char *cp_tracing_unavailable_reason(void);
CP_API void cp_tracing_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif
