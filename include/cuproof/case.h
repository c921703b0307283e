/*
 * The case contract. A case is one file under cases/ that ends in one
 * self-registering declaration:
 *
 *   CUPROOF_CASE(multi_kernel,
 *       .title    = "200 kernels on 200 streams",
 *       .source   = "seed 000 §3.3.1, 001, 002",
 *       .variants = { "sync", "streams-pageable", "streams-pinned" },
 *       .setup = setup, .prepare = prepare, .run = run, .verify = verify,
 *       .checks = checks, .claims = claims, .teardown = teardown);
 *
 * The case's name is its identifier with '_' written as '-'
 * ("multi-kernel"). Registration happens at load time and never touches
 * CUDA; devices are opened in main. The runner drives the callbacks:
 *
 *   setup once -> per variant: { warm-up, N timed runs, one traced run },
 *   each run being prepare (untimed: poison outputs) -> run (timed) ->
 *   verify (untimed) -> checks and claims over all variants -> teardown.
 *
 * `cuproof run` goes through that twice per case: once untraced for every
 * selected case (the timed runs), then once each with its timed runs lent
 * (a traced warm-up and the traced run per variant, then checks and
 * claims), so that no timed run follows a traced one in the process
 * (internal/runner.h, cp_run_opts.timed). Setup and teardown run each
 * time; state kept across them must not be assumed.
 *
 * Every callback returns 0 or a negative code from error.h; CP_ESKIP (from
 * cp_skip) means the case cannot run here and says why. Teardown runs
 * after any setup, failed or not, so it frees whatever the state holds
 * (the CUDA free functions accept NULL).
 */
#ifndef CUPROOF_CASE_H
#define CUPROOF_CASE_H

#include "export.h"

#include "agreement.h"
#include "check.h"
#include "clock.h"
#include "data.h"
#include "error.h"
#include "result.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CP_PROFILE_CI = 0, CP_PROFILE_FULL } cp_profile;

typedef struct cp_variant {
    const char *name;
    int index;
} cp_variant;

typedef struct cp_ctx cp_ctx;

/* A parameter a case reads with cp_param_int, declared so that `run
 * --param NAME=VALUE` is checked before anything runs, with or without a
 * GPU: its name and bounds (the call's must be the same). */
typedef struct cp_param_def {
    const char *name;
    long lo, hi;
} cp_param_def;

typedef struct cp_case_def {
    const char *id;   /* set by CUPROOF_CASE */
    const char *file; /* set by CUPROOF_CASE: the source file that declares it */
    const char *title;
    const char *source;
    /* The variants' names, NULL-terminated: CP_VARIANTS("a", "b"). */
    const char *const *variants;
    /* The variant the headline measures the others against ("sync"), for
     * cases whose variants all do the same work; NULL when they do not
     * (1 board against 64, a leaked context against a destroyed one), and
     * the headline then gives the range of times without a ratio. A name
     * that is no variant fails the case. */
    const char *baseline;
    /* A case that needs no GPU (the harness's own self-tests). */
    bool cpu_only;
    int (*setup)(cp_ctx *ctx);
    int (*prepare)(cp_ctx *ctx, const cp_variant *v);
    int (*run)(cp_ctx *ctx, const cp_variant *v);
    /* Compares the output with the CPU reference: stores the number of
     * mismatching elements and the number compared. */
    int (*verify)(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements);
    /* Trace checks in the expectation grammar (expect.h), one per line:
     * "streams: copy_kernel_overlap_ratio > 0.5", "sync: no finding
     * cuda_memcpy_async". Each line becomes a check named by its text, on
     * the variant it names (every variant when it names none), skipped
     * with the reason when that variant ran untraced or not at all. A line
     * that does not parse, or names an unknown metric, finding or variant,
     * fails the case with its line and column. */
    const char *expect;
    /* The same grammar for the checks the case's claim rests on: each is
     * essential, so that when it cannot be made (its variant ran untraced
     * although tracing was asked for, a premise failed) the case is
     * inconclusive, never passed. */
    const char *essential;
    int (*checks)(cp_ctx *ctx);
    int (*claims)(cp_ctx *ctx);
    void (*teardown)(cp_ctx *ctx);
    /* Work done in a fresh process (<cuproof/child.h>): the arguments after
     * the case's name; returns the process's exit status. */
    int (*child)(int argc, char **argv);
    /* The parameters it reads (CP_PARAMS), ending with {NULL}; NULL: none. */
    const cp_param_def *params;
} cp_case_def;


CP_API void cp_registry_add(const cp_case_def *def);

/* A case's variant list: .variants = CP_VARIANTS("sync", "streams"). */
#define CP_VARIANTS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A case's parameters: .params = CP_PARAMS({"arrays", 2, 4096}, ...). */
#define CP_PARAMS(...) ((const cp_param_def[]){__VA_ARGS__, {NULL, 0, 0}})

#define CUPROOF_CASE(ident, ...)                                                         \
    static const cp_case_def cp_case_def_##ident = {                                     \
        .id = #ident, .file = __FILE__, __VA_ARGS__};                                    \
    __attribute__((constructor)) static void cp_case_register_##ident(void)              \
    {                                                                                    \
        cp_registry_add(&cp_case_def_##ident);                                           \
    }

/* The registry, in name order. */
CP_API size_t cp_registry_count(void);
CP_API const cp_case_def *cp_registry_at(size_t i);
CP_API const cp_case_def *cp_registry_find(const char *name); /* NULL when unknown */
CP_API const char *cp_case_name(const cp_case_def *def);

/* Checks a case's declaration without running it, so that a typo fails
 * where no GPU is (cuproof list, and cuproof run or test before a case is
 * skipped for want of one): its baseline names one of its variants, and
 * its expectations and essential expectations parse and name its variants
 * and known metrics and findings. Returns 0, or CP_EINVAL with every
 * error in cp_last_error, each naming the file, the case, which text and
 * the line and column in it. */
CP_API int cp_case_validate(const cp_case_def *def);

/* The `--param NAME=VALUE` overrides (n of them) against case def's
 * declared parameters: each must name one of them and hold an integer
 * within its bounds. Returns 0, or CP_EINVAL naming the case, the
 * override and what it takes (every bad one said). Needs no GPU. */
CP_API int cp_case_check_params(const cp_case_def *def, const char *const *params, size_t n);

/* ---- what a case calls ---- */

/* The context a case's callbacks receive is opaque: these read it. */

/* The case's own state, from cp_state_new (NULL before). */
CP_API void *cp_ctx_state(const cp_ctx *ctx);
/* The problem sizes to run: ci (small) or full (the sources'). */
CP_API cp_profile cp_ctx_profile(const cp_ctx *ctx);
/* The GPU the case runs on and the run's settings. */
CP_API const cp_env *cp_ctx_env(const cp_ctx *ctx);
/* The name of variant i of the case, NULL past the last one. */
CP_API const char *cp_ctx_variant(const cp_ctx *ctx, int i);
/* Why variant i does not run in this profile (cp_skip_variant), "" when it
 * runs or when there is no variant i. */
CP_API const char *cp_ctx_variant_skip(const cp_ctx *ctx, int i);

/* Allocates the case's zeroed state and stores it in ctx->state; the
 * runner frees it after teardown, so teardown frees only what the state
 * points to. Returns NULL when out of memory. */
CP_API void *cp_state_new(cp_ctx *ctx, size_t size);

/* Lets variant `variant` (by index) differ from the CPU reference in up to
 * `fraction` of its elements, for the stated reason (contracted
 * multiply-adds, say); the output check then says so and counts. Call in
 * setup. Returns 0, or CP_EINVAL for a bad index or fraction. */
CP_API int cp_allow_mismatches(cp_ctx *ctx, int variant, double fraction, const char *reason);

/* Marks variant `variant` (by index) as leaking device memory on purpose:
 * the runner's leak check must then find the leak, proving it can fail.
 * Returns 0, or CP_EINVAL for a bad index. */
CP_API int cp_expect_leak(cp_ctx *ctx, int variant);

/* Leaves variant `variant` (by index) out of this run, for the stated
 * reason (say, a size only the full profile affords): the report lists it
 * as not run with the reason, and its trace checks are skipped with it.
 * Call in setup. Returns 0, or CP_EINVAL for a bad index or no reason. */
CP_API int cp_skip_variant(cp_ctx *ctx, int variant, const char *reason);

/*
 * What a variant's timed runs measure as its work (cp_work_figure,
 * result.h). Each timed run records the host's wall time around the
 * body, and, unless the variant is judged on wall time, the GPU's time of
 * the body: a start and a stop CUDA event bracketing the legacy default
 * stream, every blocking stream (which order themselves against it) and
 * the streams declared with cp_time_streams. compare, ab and the stopping
 * rule judge the GPU's time; wall time is shown beside it. Call these in
 * setup; variant is an index, or -1 for every variant.
 *
 * cp_time_wall: the variant is judged on wall time, for the stated
 * reason: its subject is the host (threads, processes, context
 * creation), or events cannot bracket its work (several devices). Wall
 * time is judged at compare's host threshold only.
 *
 * cp_time_gated: the variant's body only queues work (no synchronous
 * copy, no synchronisation, no host callback), so the runner holds the
 * work behind a gate kernel until the body returns and its GPU time runs
 * from the gate's end: the GPU's pace, not the host's pace of queuing. A
 * body that waits on its work while gated fails the run, saying so,
 * after the gate's timeout (5 s); so does one that queues more than the
 * launch queue holds (the host then blocks in a launch behind the gate):
 * gate a body of at most CP_TIME_GATE_MAX_OPS kernels and copies (1,536
 * queued behind a gate on the H100 and the H200: conway-streams'
 * queued-64).
 *
 * cp_time_streams: the non-blocking streams (cudaStream_t, passed as
 * void *; at most CP_TIME_MAX_STREAMS) on which a body may return with
 * work still queued: the events bracket them too. A body that
 * synchronises its streams before it returns need not declare them.
 *
 * Each returns 0, or CP_EINVAL for a bad index, a missing reason or too
 * many streams.
 */
#define CP_TIME_MAX_STREAMS 16
#define CP_TIME_GATE_MAX_OPS 1536
CP_API int cp_time_wall(cp_ctx *ctx, int variant, const char *why);
CP_API int cp_time_gated(cp_ctx *ctx, int variant);
CP_API int cp_time_streams(cp_ctx *ctx, void *const *streams, size_t n);

/* Records why the case cannot run here; returns CP_ESKIP to pass on. */
CP_API int cp_skip(cp_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Adds an asserted check; `measured` is a printf format. */
CP_API void cp_check(cp_ctx *ctx, const char *name, bool ok, const char *expected, const char *measured,
              ...) __attribute__((format(printf, 5, 6)));

/* Adds a check that cannot be made in this run, recorded as skipped with
 * `reason` (never passed). */
CP_API void cp_check_skip(cp_ctx *ctx, const char *name, const char *expected, const char *reason);

/* Adds a check that reads the trace of `variant`: when that variant ran
 * untraced the check is recorded as skipped with the reason, never passed. */
CP_API void cp_check_trace(cp_ctx *ctx, const char *variant, const char *name, bool ok,
                    const char *expected, const char *measured, ...)
    __attribute__((format(printf, 6, 7)));

/*
 * A size or count of the case, `def` unless the run overrides it (cuproof
 * run --param NAME=VALUE), within [lo, hi], which the case declares the
 * same in its .params (CP_PARAMS), so that run checks an override before
 * anything runs, with or without a GPU. Call in setup; the value used is
 * recorded in the report. Returns 0 with *out set, or CP_EINVAL when the
 * override is not an integer or lies outside the bounds, or the case does
 * not declare the parameter so (the message names it and its bounds).
 */
CP_API int cp_param_int(cp_ctx *ctx, const char *name, long def, long lo, long hi, long *out);

/* Marks the checks recorded so far under `name` as essential: the case's
 * claim rests on them, so one that is skipped makes the case inconclusive
 * instead of passed (unless tracing was turned off on request: --no-trace).
 * Returns how many were marked (0 names no check: a typo to catch). */
CP_API int cp_essential(cp_ctx *ctx, const char *name);

/* The result of a variant that has run, or NULL. */
CP_API const cp_variant_result *cp_variant_result_get(const cp_ctx *ctx, const char *variant);

/* The last kernel in a variant's trace, or NULL when it has none or was
 * not traced (checks that use it go through cp_check_trace). */
CP_API const cp_activity *cp_variant_last_kernel(const cp_ctx *ctx, const char *variant);

/* A traced variant's "event_ms" series against its kernels called
 * `kernel` (cp_events_against_trace with CP_EVENT_TOLERANCE); *a is zeroed
 * first. Returns 0; CP_ENOENT when the variant did not run traced or
 * recorded no event times; else the pairing's error (cp_last_error says). */
CP_API int cp_variant_events(const cp_ctx *ctx, const char *variant, const char *kernel,
                      cp_event_agreement *a);

/* Keeps the least positive value seen in *slot (0 means none yet). */
CP_API void cp_keep_least(double *slot, double value);

/* Median time of a variant in ms, or -1 when it did not run. */
CP_API double cp_variant_median_ms(const cp_ctx *ctx, const char *variant);

/* Adds a claim: the source's sentence, where it is from, the value it
 * claims, the measured value and the verdict; `reason` is a printf format
 * that explains the verdict. */
CP_API void cp_claim_add(cp_ctx *ctx, const char *text, const char *source, const char *claimed,
                  const char *measured, cp_verdict verdict, const char *reason, ...)
    __attribute__((format(printf, 7, 8)));

/* Adds a claim judged by its window (cp_claim_judge; the verdict is not
 * the case's to choose): `value` measured in w's unit, shown as
 * `measured`; `reason` explains the figure, and must not contradict the
 * verdict (it is checked: tests walk every claim against its window). */
CP_API void cp_claim_measure(cp_ctx *ctx, const char *text, const char *source,
                             const char *claimed, const cp_claim_window *w, double value,
                             const char *measured, const char *reason, ...)
    __attribute__((format(printf, 8, 9)));

/* A named figure of the case (shown on the progress line and in reports). */
CP_API void cp_figure_add(cp_ctx *ctx, const char *name, double value, const char *unit);

/* Records values the run measured itself, one per launch (CUDA event
 * times), for variant `v`; a later run of the variant replaces them, so
 * the traced run, which comes last, leaves its own values next to its
 * trace. Returns 0, CP_EINVAL or CP_ENOMEM. */
CP_API int cp_series_set(cp_ctx *ctx, const cp_variant *v, const char *name, const char *unit,
                  const double *values, size_t n);

/* NVTX phases inside a run (copy-in, compute, copy-out). A run that fails
 * inside a phase may leave it open: the runner closes it. */
CP_API void cp_phase_begin(cp_ctx *ctx, const char *phase);
CP_API void cp_phase_end(cp_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
