/*
 * The runner, driven with CPU-only cases registered here: that a case
 * passes only when it checked something and everything held, and that
 * each way of going wrong (a wrong output, a failed check, a failed call,
 * a skip, no checks at all) ends in the right status with the reason.
 */
#include <cuproof/case.h>
#include "runner/ctx.h"
#include <cuproof/nvtx.h>
#include <cuproof/internal/runner.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int runs, prepares, teardowns;
static uint64_t planted_mismatches;

static int count_prepare(cp_ctx *ctx, const cp_variant *v)
{
    prepares++;
    return 0;
}

static int count_run(cp_ctx *ctx, const cp_variant *v)
{
    runs++;
    return 0;
}

static int verify_planted(cp_ctx *ctx, const cp_variant *v, uint64_t *bad, uint64_t *n)
{
    *bad = strcmp(v->name, "b") == 0 ? planted_mismatches : 0;
    *n = 100;
    return 0;
}

static void count_teardown(cp_ctx *ctx)
{
    teardowns++;
}

static int claims_ok(cp_ctx *ctx)
{
    cp_claim_add(ctx, "b is as fast as a", "test", "1x", "1x", CP_VERDICT_CONFIRMED,
                 "medians %.1f and %.1f", cp_variant_median_ms(ctx, "a"),
                 cp_variant_median_ms(ctx, "b"));
    cp_figure_add(ctx, "answer", 42, "");
    return 0;
}

CUPROOF_CASE(selftest_ok, .title = "passes", .cpu_only = true, .variants = CP_VARIANTS("a", "b"),
             .baseline = "a", .prepare = count_prepare, .run = count_run, .verify = verify_planted,
             .claims = claims_ok, .teardown = count_teardown);

/* Variant b may differ in up to 5% of its 100 elements. */
static int setup_allows(cp_ctx *ctx)
{
    return cp_allow_mismatches(ctx, 1, 0.05, "planted rounding");
}

CUPROOF_CASE(selftest_allowed, .cpu_only = true, .variants = CP_VARIANTS("a", "b"), .setup = setup_allows,
             .run = count_run, .verify = verify_planted);

static int setup_bad_allowance(cp_ctx *ctx)
{
    return cp_allow_mismatches(ctx, 1, 1.5, "nonsense");
}

CUPROOF_CASE(selftest_bad_allowance, .cpu_only = true, .variants = CP_VARIANTS("a"),
             .setup = setup_bad_allowance, .run = count_run, .verify = verify_planted);

static int checks_one_fails(cp_ctx *ctx)
{
    cp_check(ctx, "holds", true, "1", "1");
    cp_check(ctx, "does not hold", false, "1", "%d", 2);
    return 0;
}

CUPROOF_CASE(selftest_check_fails, .cpu_only = true, .variants = CP_VARIANTS("a"), .run = count_run,
             .verify = verify_planted, .checks = checks_one_fails);

static int setup_skips(cp_ctx *ctx)
{
    return cp_skip(ctx, "needs %d GPUs", 2);
}

CUPROOF_CASE(selftest_skips, .cpu_only = true, .variants = CP_VARIANTS("a"), .setup = setup_skips,
             .run = count_run, .teardown = count_teardown);

static int run_fails(cp_ctx *ctx, const cp_variant *v)
{
    return cp_failf(CP_EINVAL, "planted failure in variant %s", v->name);
}

CUPROOF_CASE(selftest_run_fails, .cpu_only = true, .variants = CP_VARIANTS("a"), .run = run_fails,
             .verify = verify_planted);

/* Variant b's trace loses records (as the tracer says when CUPTI runs out
 * of buffers); variant c's output is wrong in the second case. */
static int run_drops(cp_ctx *ctx, const cp_variant *v)
{
    return v->index == 1 ? cp_failf(CP_EDROPPED, "CUPTI dropped 7 activity records (planted)") : 0;
}

static int verify_c_wrong(cp_ctx *ctx, const cp_variant *v, uint64_t *bad, uint64_t *elements)
{
    *elements = 10;
    *bad = v->index == 2 ? 3 : 0;
    return 0;
}

CUPROOF_CASE(selftest_drops, .cpu_only = true, .variants = CP_VARIANTS("a", "b"), .run = run_drops,
             .verify = verify_planted);
CUPROOF_CASE(selftest_drops_and_fails, .cpu_only = true, .variants = CP_VARIANTS("a", "b", "c"),
             .run = run_drops, .verify = verify_c_wrong);

CUPROOF_CASE(selftest_checks_nothing, .cpu_only = true, .variants = CP_VARIANTS("a"), .run = count_run);

static int trace_check(cp_ctx *ctx)
{
    cp_check_trace(ctx, "a", "overlap from the trace", true, "> 0", "1");
    cp_check_trace(ctx, "missing", "of a variant that never ran", true, "> 0", "1");
    cp_check(ctx, "something real", true, "x", "x");
    return 0;
}

CUPROOF_CASE(selftest_untraced, .cpu_only = true, .variants = CP_VARIANTS("a"), .run = count_run,
             .checks = trace_check);

CUPROOF_CASE(selftest_needs_gpu, .variants = CP_VARIANTS("a"), .run = count_run);

/* Timed runs of a known length: 2 ms each (steady), or 1 and 6 ms in turn
 * (noisy), spent on the host's clock as the runner times it. */
static int paced_runs;
static void spin_ms(double ms)
{
    double until = cp_now_ms() + ms;
    while (cp_now_ms() < until) {
    }
}

static int run_steady(cp_ctx *ctx, const cp_variant *v)
{
    spin_ms(2);
    return 0;
}

static int run_noisy(cp_ctx *ctx, const cp_variant *v)
{
    spin_ms(paced_runs++ % 2 ? 6 : 1);
    return 0;
}

CUPROOF_CASE(selftest_steady, .cpu_only = true, .variants = CP_VARIANTS("a"), .run = run_steady,
             .checks = trace_check);
CUPROOF_CASE(selftest_noisy, .cpu_only = true, .variants = CP_VARIANTS("a"), .run = run_noisy,
             .checks = trace_check);

/* A case with one parameter, n in [1, 10], 4 unless overridden. */
static long param_n;
static int setup_param(cp_ctx *ctx)
{
    return cp_param_int(ctx, "n", 4, 1, 10, &param_n);
}

CUPROOF_CASE(selftest_param, .cpu_only = true, .variants = CP_VARIANTS("a"), .setup = setup_param,
             .run = count_run, .checks = trace_check, .params = CP_PARAMS({"n", 1, 10}));

/* A case that reads a parameter it does not declare: its run fails. */
CUPROOF_CASE(selftest_undeclared_param, .cpu_only = true, .variants = CP_VARIANTS("a"),
             .setup = setup_param, .run = count_run);

/* Checks the claim rests on, which this CPU case (never traced) cannot
 * make: one essential expectation, and one premise marked by name. */
static int premise_check(cp_ctx *ctx)
{
    cp_check(ctx, "something real", true, "x", "x");
    cp_check_skip(ctx, "premise", "the gate held", "the host's launches blocked");
    cr_expect_eq(cp_essential(ctx, "premise"), 1);
    cr_expect_eq(cp_essential(ctx, "no such check"), 0, "a typo marks nothing");
    return 0;
}

CUPROOF_CASE(selftest_essential_expectation, .cpu_only = true, .variants = CP_VARIANTS("a"),
             .run = count_run, .checks = trace_check, .essential = "a: kernels == 1");

CUPROOF_CASE(selftest_essential_premise, .cpu_only = true, .variants = CP_VARIANTS("a"),
             .run = count_run, .checks = premise_check);

static int setup_leaves_b_out(cp_ctx *ctx)
{
    cr_expect_eq(cp_skip_variant(ctx, 5, ""), CP_EINVAL, "a skip needs a reason");
    cr_expect_eq(cp_skip_variant(ctx, -1, "x"), CP_EINVAL);
    return cp_skip_variant(ctx, 1, "only in the full profile");
}

static int check_b(cp_ctx *ctx)
{
    cp_check_trace(ctx, "b", "b's trace", true, "x", "x");
    cp_check(ctx, "something real", true, "x", "x");
    return 0;
}

CUPROOF_CASE(selftest_variant_left_out, .cpu_only = true, .variants = CP_VARIANTS("a", "b", "c"),
             .setup = setup_leaves_b_out, .run = count_run, .verify = verify_planted,
             .checks = check_b);

/* The timing declarations' bad arguments, each refused; then good ones. */
static int bad_figures;
static int setup_figures(cp_ctx *ctx)
{
    void *many[CP_TIME_MAX_STREAMS + 1] = {0};
    bad_figures = (cp_time_wall(ctx, 2, "no variant 2") == CP_EINVAL) +
                  (cp_time_wall(ctx, 0, "") == CP_EINVAL) +
                  (cp_time_wall(ctx, 0, NULL) == CP_EINVAL) +
                  (cp_time_gated(ctx, -2) == CP_EINVAL) + (cp_time_gated(ctx, 2) == CP_EINVAL) +
                  (cp_time_streams(ctx, many, CP_TIME_MAX_STREAMS + 1) == CP_EINVAL) +
                  (cp_time_streams(ctx, NULL, 1) == CP_EINVAL);
    cp_clear_last_error();
    int rc = cp_time_wall(ctx, -1, "its subject is the host");
    if (rc == 0)
        rc = cp_time_gated(ctx, 1);
    if (rc == 0)
        rc = cp_time_streams(ctx, many, CP_TIME_MAX_STREAMS);
    return rc;
}

CUPROOF_CASE(selftest_figures, .cpu_only = true, .variants = CP_VARIANTS("a", "b"),
             .setup = setup_figures, .run = count_run, .checks = trace_check);

static const cp_run_opts opts = {.profile = CP_PROFILE_CI, .repeat = 3, .warmup = 1,
                                 .trace = true};
static cp_env env;
static cp_case_result *res;

static void setup(void)
{
    runs = prepares = teardowns = 0;
    planted_mismatches = 0;
    memset(&env, 0, sizeof env);
    strcpy(env.no_device_reason, "no CUDA device: test");
    res = calloc(1, sizeof *res);
}

static void fini(void)
{
    cp_case_result_free(res);
    free(res);
}

TestSuite(runner, .init = setup, .fini = fini);

static void run(const char *name)
{
    const cp_case_def *d = cp_registry_find(name);
    cr_assert_not_null(d, "case %s not registered", name);
    cr_assert_eq(cp_run_case(d, &env, &opts, res), 0);
    cr_expect_eq(cp_nvtx_depth(), 0, "every NVTX range the run opened is closed");
}

Test(runner, passing_case)
{
    run("selftest-ok");
    cr_expect_eq(res->status, CP_STATUS_PASSED, "%s", res->error);
    cr_expect_str_eq(res->name, "selftest-ok", "underscores become hyphens");
    cr_expect_str_eq(res->baseline, "a");
    cr_assert_eq(res->nvariants, 2);
    /* 2 variants x (1 warm-up + 3 timed); CPU cases have no traced run. */
    cr_expect_eq(runs, 8);
    cr_expect_eq(prepares, 8);
    cr_expect_eq(teardowns, 1);
    cr_expect_eq(res->variants[0].timing.runs, 3);
    /* Every timed run is kept, in order, for compare; a CPU case reads no
     * GPU clocks (nothing to say, not even why). */
    cr_assert_eq(res->variants[0].nsamples, 3);
    for (size_t i = 0; i < 3; i++) {
        cr_expect_geq(res->variants[0].samples_ms[i], res->variants[0].timing.min_ms);
        cr_expect_leq(res->variants[0].samples_ms[i], res->variants[0].timing.max_ms);
    }
    cr_expect_not(res->variants[0].clocks_before.known);
    cr_expect_str_empty(res->variants[0].clocks_before.reason);
    cr_expect_eq(res->variants[0].verified_runs, 4);
    cr_expect_not(res->variants[0].traced);
    cr_expect_str_eq(res->variants[0].untraced_reason, "the case runs on the CPU");
    cr_expect_eq(res->nchecks, 2, "one output check per variant");
    cr_expect_eq(res->nclaims, 1);
    cr_expect_eq(res->nfigures, 1);
}

Test(runner, wrong_output_fails_the_case)
{
    planted_mismatches = 3;
    run("selftest-ok");
    cr_expect_eq(res->status, CP_STATUS_FAILED);
    cr_expect_eq(res->checks[1].status, CP_CHECK_FAILED);
    cr_expect_not_null(strstr(res->checks[1].measured, "3 of 100 elements differ"),
                       "%s", res->checks[1].measured);
    cr_expect_eq(res->checks[0].status, CP_CHECK_PASSED);
}

Test(runner, failed_check_fails_the_case)
{
    run("selftest-check-fails");
    cr_expect_eq(res->status, CP_STATUS_FAILED);
}

Test(runner, skip_carries_the_reason)
{
    run("selftest-skips");
    cr_expect_eq(res->status, CP_STATUS_SKIPPED);
    cr_expect_str_eq(res->skip_reason, "needs 2 GPUs");
    cr_expect_eq(runs, 0);
    cr_expect_eq(teardowns, 1, "teardown follows any setup, to free what it built");
}

Test(runner, failed_call_names_the_problem)
{
    run("selftest-run-fails");
    cr_expect_eq(res->status, CP_STATUS_FAILED);
    cr_expect_not_null(strstr(res->error, "planted failure in variant a"), "%s", res->error);
    cr_expect_not_null(strstr(res->error, "variant a"), "%s", res->error);
}

/* The trust rule in a case: a variant whose records were dropped makes the
 * case inconclusive with the reason, never passed; a check that really
 * failed elsewhere still fails it. */
Test(runner, dropped_records_make_the_case_inconclusive_not_passed)
{
    run("selftest-drops");
    cr_expect_eq(res->status, CP_STATUS_INCONCLUSIVE, "%s", cp_status_name(res->status));
    cr_expect_not_null(strstr(res->skip_reason, "variant b: the trace cannot be trusted: CUPTI "
                                                "dropped 7 activity records"),
                       "%s", res->skip_reason);
    run("selftest-drops-and-fails");
    cr_expect_eq(res->status, CP_STATUS_FAILED, "%s", cp_status_name(res->status));
}

Test(runner, a_case_that_checks_nothing_fails)
{
    run("selftest-checks-nothing");
    cr_expect_eq(res->status, CP_STATUS_FAILED);
    cr_expect_str_eq(res->error, "the case recorded no checks");
}

Test(runner, trace_checks_are_skipped_not_passed_when_untraced)
{
    run("selftest-untraced");
    cr_expect_eq(res->status, CP_STATUS_PASSED);
    cr_assert_eq(res->nchecks, 3);
    cr_expect_eq(res->checks[0].status, CP_CHECK_SKIPPED);
    cr_expect_not_null(strstr(res->checks[0].skip_reason, "ran untraced"));
    cr_expect_eq(res->checks[1].status, CP_CHECK_SKIPPED);
    cr_expect_not_null(strstr(res->checks[1].skip_reason, "did not run"));
}

static void run_with(const char *name, const cp_run_opts *o)
{
    const cp_case_def *d = cp_registry_find(name);
    cr_assert_not_null(d);
    cp_case_result_free(res);
    cr_assert_eq(cp_run_case(d, &env, o, res), 0);
    cr_expect_eq(res->status, CP_STATUS_PASSED, "%s", res->error);
}

/* The stopping rule: a steady variant stops at its minimum when the noise
 * target is met; a noisy one runs to its maximum; a time limit stops a
 * rule whose target cannot be met; a fixed count says so. */
Test(runner, the_stopping_rule_says_what_ended_the_runs)
{
    cp_run_opts o = opts;
    run_with("selftest-steady", &o);
    cr_expect_str_eq(res->variants[0].stopped_by, "fixed");
    cr_expect_eq(res->variants[0].nsamples, 3);

    cp_run_opts_stopping_rule(&o, CP_PROFILE_CI);
    /* A loose target and limits the noise reaches first, so that a run
     * slowed by a busy machine only adds runs rather than ending on a
     * limit: with 0.5 and the ci limits (50 runs, 1 s) a 2-core machine
     * busy with builds measured 0.56 and stopped on max_time, twice on
     * 2026-11-25. */
    o.max_noise = 1.0;
    o.max_samples = 1000;
    o.max_time_s = 30;
    run_with("selftest-steady", &o);
    cr_expect_str_eq(res->variants[0].stopped_by, "noise", "noise %g",
                     res->variants[0].noise);
    cr_expect_geq(res->variants[0].nsamples, (size_t)o.min_samples);
    cr_expect_leq(res->variants[0].noise, 1.0);

    cp_run_opts_stopping_rule(&o, CP_PROFILE_CI);
    o.max_noise = 0.05;
    o.max_samples = 8;
    paced_runs = 0;
    run_with("selftest-noisy", &o);
    cr_expect_str_eq(res->variants[0].stopped_by, "max_samples", "noise %g",
                     res->variants[0].noise);
    cr_expect_eq(res->variants[0].nsamples, 8);
    cr_expect_gt(res->variants[0].noise, 0.05);

    cp_run_opts_stopping_rule(&o, CP_PROFILE_CI);
    o.min_samples = 2;
    o.max_samples = 100000;
    o.max_noise = 1e-9;
    o.max_time_s = 0.02;
    /* The noisy variant: its runs differ by 5 ms, so the target is never
     * met (two steady runs can time alike to the nanosecond). */
    paced_runs = 0;
    run_with("selftest-noisy", &o);
    cr_expect_str_eq(res->variants[0].stopped_by, "max_time", "noise %g",
                     res->variants[0].noise);
    cr_expect_geq(res->variants[0].nsamples, 2);
    cr_expect_leq(res->variants[0].nsamples, 30, "3.5 ms runs for 20 ms: about 6");

    o.max_samples = 1; /* below the minimum: a bad rule */
    const cp_case_def *d = cp_registry_find("selftest-steady");
    cp_case_result_free(res);
    cr_expect_eq(cp_run_case(d, &env, &o, res), CP_EINVAL);
}

/* --param: a case's size within its bounds, recorded; out of bounds, not
 * a number, or a parameter the case does not take: the case fails saying
 * so, never runs with a silent default. */
Test(runner, params_override_within_bounds_and_unknown_ones_fail)
{
    run("selftest-param");
    cr_expect_eq(res->status, CP_STATUS_PASSED, "%s", res->error);
    cr_expect_eq(param_n, 4);
    cr_expect_str_eq(res->params, "n=4");
    cp_case_result_free(res);

    const char *seven[] = {"n=7"};
    cp_run_opts o = opts;
    o.params = seven;
    o.nparams = 1;
    const cp_case_def *d = cp_registry_find("selftest-param");
    cr_assert_eq(cp_run_case(d, &env, &o, res), 0);
    cr_expect_eq(res->status, CP_STATUS_PASSED, "%s", res->error);
    cr_expect_eq(param_n, 7);
    cr_expect_str_eq(res->params, "n=7*", "an override is marked");
    cp_case_result_free(res);

    const char *bad[][1] = {{"n=11"}, {"n=3x"}, {"m=1"}};
    const char *why[] = {"from 1 to 10", "'3x' is not an integer", "takes no such parameter (it takes: n)"};
    for (size_t i = 0; i < 3; i++) {
        o.params = bad[i];
        cr_assert_eq(cp_run_case(d, &env, &o, res), 0);
        cr_expect_eq(res->status, CP_STATUS_FAILED, "%s", bad[i][0]);
        cr_expect_not_null(strstr(res->error, why[i]), "%s: %s", bad[i][0], res->error);
        cp_case_result_free(res);
        /* And checked against the declaration with no run at all. */
        cr_expect_eq(cp_case_check_params(d, bad[i], 1), CP_EINVAL, "%s", bad[i][0]);
    }
    cr_expect_eq(cp_case_check_params(d, seven, 1), 0);
    cr_assert_eq(cp_run_case(cp_registry_find("selftest-undeclared-param"), &env, &opts, res), 0);
    cr_expect_eq(res->status, CP_STATUS_FAILED);
    cr_expect_not_null(strstr(res->error, "does not declare so (CP_PARAMS({\"n\", 1, 10}))"), "%s",
                       res->error);
}

/* A skipped essential check makes the case inconclusive, with the check
 * and why in the reason; skipped checks that are not essential do not (the
 * test above). */
Test(runner, a_skipped_essential_check_is_inconclusive_not_passed)
{
    run("selftest-essential-expectation");
    cr_expect_eq(res->status, CP_STATUS_INCONCLUSIVE, "%s", cp_status_name(res->status));
    cr_expect_not_null(strstr(res->skip_reason, "essential check not made: a: kernels == 1"),
                       "%s", res->skip_reason);
    cr_expect_not_null(strstr(res->skip_reason, "ran untraced"), "%s", res->skip_reason);
    cr_expect_str_eq(cp_status_name(res->status), "inconclusive");
    cr_expect_eq(cp_status_from_name("inconclusive"), CP_STATUS_INCONCLUSIVE);
    cp_case_result_free(res);
    run("selftest-essential-premise");
    cr_expect_eq(res->status, CP_STATUS_INCONCLUSIVE);
    cr_expect_not_null(strstr(res->skip_reason, "premise (the host's launches blocked)"), "%s",
                       res->skip_reason);
}

/* Tracing turned off on request (--no-trace) skips trace checks by design:
 * an essential trace check skipped that way leaves the case passed. */
Test(runner, essential_trace_checks_skipped_on_request_pass)
{
    cp_run_opts untraced = opts;
    untraced.trace = false;
    const cp_case_def *d = cp_registry_find("selftest-essential-expectation");
    cr_assert_not_null(d);
    cr_assert_eq(cp_run_case(d, &env, &untraced, res), 0);
    cr_expect_eq(res->status, CP_STATUS_PASSED, "%s", res->skip_reason);
    cr_expect(res->checks[res->nchecks - 1].skipped_on_request);
    cp_case_result_free(res);

    /* A premise that failed is not a request: untraced or not, the case
     * whose essential check rests on it is inconclusive (conway-streams'
     * gate under compute-sanitizer, which runs untraced). */
    d = cp_registry_find("selftest-essential-premise");
    cr_assert_not_null(d);
    cr_assert_eq(cp_run_case(d, &env, &untraced, res), 0);
    cr_expect_eq(res->status, CP_STATUS_INCONCLUSIVE, "%s", cp_status_name(res->status));
    cr_expect_not_null(strstr(res->skip_reason, "premise (the host's launches blocked)"), "%s",
                       res->skip_reason);
}

/* A variant left out of the profile does not run, adds no output check,
 * says why, and its trace checks are skipped with that reason. */
Test(runner, variant_left_out_says_why)
{
    planted_mismatches = 5; /* b would fail its output check if it ran */
    run("selftest-variant-left-out");
    cr_expect_eq(res->status, CP_STATUS_PASSED);
    cr_expect_eq(runs, 2 * (opts.warmup + opts.repeat), "a and c ran, b did not");
    cr_assert_eq(res->nvariants, 3);
    cr_expect_str_eq(res->variants[1].skip_reason, "only in the full profile");
    cr_expect_not(res->variants[1].ran);
    cr_expect_str_empty(res->variants[0].skip_reason);
    size_t output_checks = 0;
    for (size_t i = 0; i < res->nchecks; i++)
        output_checks += strstr(res->checks[i].name, "output equals") != NULL;
    cr_expect_eq(output_checks, 2);
    const cp_check_result *b = &res->checks[res->nchecks - 2];
    cr_expect_str_eq(b->name, "b's trace");
    cr_expect_eq(b->status, CP_CHECK_SKIPPED);
    cr_expect_not_null(strstr(b->skip_reason, "did not run: only in the full profile"), "%s",
                       b->skip_reason);
}

Test(runner, gpu_case_without_device_is_skipped)
{
    run("selftest-needs-gpu");
    cr_expect_eq(res->status, CP_STATUS_SKIPPED);
    cr_expect_str_eq(res->skip_reason, "no CUDA device: test");
    cr_expect_eq(runs, 0);
}

Test(runner, bad_options)
{
    cp_run_opts bad = opts;
    bad.repeat = 0;
    cr_expect_eq(cp_run_case(cp_registry_find("selftest-ok"), &env, &bad, res), CP_EINVAL);
    cr_expect_eq(res->status, CP_STATUS_FAILED);
}

CUPROOF_CASE(selftest_typo, .variants = CP_VARIANTS("a", "b"), .run = count_run,
             .expect = "a: kernels >= 1\npeak_concurent_kernels > 1\nc: kernels > 0\n");
CUPROOF_CASE(selftest_typo_lines, .variants = CP_VARIANTS("a"), .run = count_run,
             .expect = "a: kernels >= 1\n"
                       "a: peak_concurent_kernels > 1\n");

/* A typo in a GPU case's expectations fails it where no GPU is, instead of
 * the skip that would leave a CPU-only CI green: every error is said, with
 * the file, the case, the line and column, and the name meant. */
Test(runner, a_typo_in_a_gpu_case_fails_without_a_gpu)
{
    const cp_case_def *d = cp_registry_find("selftest-typo");
    cr_assert_not_null(d);
    cr_expect_eq(cp_case_validate(d), CP_EINVAL);
    const char *e = cp_last_error();
    /* Each place said at its line of the source too (issue 41, item 7:
     * the line inside the .expect string alone). */
    cr_expect_not_null(strstr(e, "test_runner.c: case selftest-typo: its expectations, line 2, "
                                 "column 1 ("),
                       "%s", e);
    cr_expect_not_null(strstr(e, "test_runner.c:545): unknown metric 'peak_concurent_kernels' "
                                 "(did you mean 'peak_concurrent_kernels'?)"),
                       "%s", e);
    cr_expect_not_null(strstr(e, "line 3, column 1 ("), "%s", e);
    cr_expect_not_null(strstr(e, "test_runner.c:545): unknown variant 'c'"), "%s", e);
    /* A text over several source lines: each error at its own. */
    cr_expect_eq(cp_case_validate(cp_registry_find("selftest-typo-lines")), CP_EINVAL);
    e = cp_last_error();
    cr_expect_not_null(strstr(e, "line 2, column 4 ("), "%s", e);
    cr_expect_not_null(strstr(e, "test_runner.c:548): unknown metric 'peak_concurent_kernels'"),
                       "%s", e);
    cr_expect_eq(cp_run_case(d, &env, &opts, res), CP_EINVAL);
    cr_expect_eq(res->status, CP_STATUS_FAILED, "%d", res->status);
    cr_expect_not_null(strstr(res->error, "peak_concurent_kernels"), "%s", res->error);
    cr_expect_eq(runs, 0);
    cr_expect_eq(cp_case_validate(cp_registry_find("selftest-ok")), 0);
}

CUPROOF_CASE(selftest_bad_baseline, .cpu_only = true, .variants = CP_VARIANTS("a", "b"),
             .baseline = "c", .run = count_run, .verify = verify_planted);

/* A baseline that names no variant is a mistake in the declaration: the
 * case fails and says so before running anything. */
Test(runner, a_baseline_that_is_no_variant_fails_the_case)
{
    cr_expect_eq(cp_run_case(cp_registry_find("selftest-bad-baseline"), &env, &opts, res),
                 CP_EINVAL);
    cr_expect_eq(res->status, CP_STATUS_FAILED);
    cr_expect(strstr(res->error, "its baseline \"c\" is none of its variants"), "%s", res->error);
    cr_expect_eq(runs, 0);
}

Test(runner, registry_is_sorted_and_searchable)
{
    size_t n = cp_registry_count();
    cr_assert_geq(n, 7);
    for (size_t i = 1; i < n; i++)
        cr_expect_lt(strcmp(cp_case_name(cp_registry_at(i - 1)), cp_case_name(cp_registry_at(i))),
                     0);
    cr_expect_null(cp_registry_find("nope"));
    cr_expect_null(cp_registry_at(n));
}

static int run_fails_in_phase(cp_ctx *ctx, const cp_variant *v)
{
    cp_phase_begin(ctx, "copy-in");
    cp_phase_begin(ctx, "nested");
    return cp_failf(CP_EIO, "planted failure inside a phase");
}

CUPROOF_CASE(selftest_fails_in_phase, .cpu_only = true, .variants = CP_VARIANTS("a"),
             .run = run_fails_in_phase);

/* A run that fails with phases open leaves no phase open behind it: the
 * NVTX stack stays balanced for the next case. */
Test(runner, failure_inside_a_phase_closes_it)
{
    run("selftest-fails-in-phase");
    cr_expect_eq(res->status, CP_STATUS_FAILED);
    cr_expect_not_null(strstr(res->error, "planted failure inside a phase"), "%s", res->error);
    cr_expect_eq(cp_nvtx_depth(), 0);
    cp_ctx probe = {0};
    cp_phase_end(&probe);
    cr_expect_eq(probe.open_phases, 0, "an unmatched end is ignored");
    cr_expect_eq(cp_nvtx_depth(), 0);
}

/* An allowed bound passes at and fails above it, and says so. */
Test(runner, allowed_mismatches_bound_the_output_check)
{
    planted_mismatches = 5;
    run("selftest-allowed");
    cr_expect_eq(res->status, CP_STATUS_PASSED, "%s", res->error);
    cr_expect_not_null(strstr(res->checks[1].name, "within the bound"), "%s", res->checks[1].name);
    cr_expect_not_null(strstr(res->checks[1].expected, "planted rounding"));
    cr_expect_not_null(strstr(res->checks[1].measured, "5 of 100"));
    cp_case_result_free(res);
    planted_mismatches = 6;
    run("selftest-allowed");
    cr_expect_eq(res->status, CP_STATUS_FAILED);
    cr_expect_eq(res->checks[1].status, CP_CHECK_FAILED);
    cp_case_result_free(res);
    run("selftest-bad-allowance");
    cr_expect_eq(res->status, CP_STATUS_FAILED);
    cr_expect_not_null(strstr(res->error, "cp_allow_mismatches"), "%s", res->error);
}

/* What the progress hook was told, copied: its strings last for the call. */
typedef struct heard_run {
    char case_name[64], variant[64], phase[16], stopped_by[16];
    int variant_index, nvariants, run, max_runs;
    double elapsed_s;
    bool has_result;
    size_t nsamples;
} heard_run;

typedef struct heard {
    heard_run calls[256];
    int n;
} heard;

static void hear(void *user, const cp_run_progress *p)
{
    heard *h = user;
    cr_assert_lt(h->n, 256, "more calls than any of these cases makes");
    heard_run *c = &h->calls[h->n++];
    snprintf(c->case_name, sizeof c->case_name, "%s", p->case_name);
    snprintf(c->variant, sizeof c->variant, "%s", p->variant);
    snprintf(c->phase, sizeof c->phase, "%s", p->phase);
    c->variant_index = p->variant_index;
    c->nvariants = p->nvariants;
    c->run = p->run;
    c->max_runs = p->max_runs;
    c->elapsed_s = p->elapsed_s;
    c->has_result = p->result != NULL;
    if (p->result) {
        snprintf(c->stopped_by, sizeof c->stopped_by, "%s", p->result->stopped_by);
        c->nsamples = p->result->nsamples;
    }
}

/* Checks one variant's calls from h->calls[*at]: `warmup` warm-up runs,
 * `timed` timed runs out of at most `max_runs`, then "done" with the
 * variant's result; elapsed time never goes back (and moves on at every
 * call when `paced`, whose runs take 2 ms each). */
static void expect_variant_calls(const heard *h, int *at, const char *case_name,
                                 const char *variant, int index, int nvariants, int warmup,
                                 int timed, int max_runs, bool paced)
{
    double last = -1;
    for (int k = 0; k < warmup + timed + 1; k++) {
        cr_assert_lt(*at, h->n, "%s: call %d of its variant is missing", variant, k + 1);
        const heard_run *c = &h->calls[(*at)++];
        bool warm = k < warmup, done = k == warmup + timed;
        cr_expect_str_eq(c->case_name, case_name);
        cr_expect_str_eq(c->variant, variant);
        cr_expect_eq(c->variant_index, index);
        cr_expect_eq(c->nvariants, nvariants);
        cr_expect_str_eq(c->phase, warm ? "warm-up" : done ? "done" : "timed");
        cr_expect_eq(c->run, warm ? k + 1 : done ? timed : k - warmup + 1, "%s call %d", c->phase,
                     k + 1);
        cr_expect_eq(c->max_runs, warm ? warmup : max_runs);
        cr_expect_eq(c->has_result, done, "only \"done\" carries the result");
        if (done)
            cr_expect_eq(c->nsamples, (size_t)timed);
        cr_expect_geq(c->elapsed_s, 0);
        if (paced && k > 0)
            cr_expect_gt(c->elapsed_s, last, "%s call %d: %g s after %g s", variant, k + 1,
                         c->elapsed_s, last);
        else
            cr_expect_geq(c->elapsed_s, last);
        last = c->elapsed_s;
    }
}

/* The progress hook hears every run of every variant that runs, in order,
 * with the phase, the run's number out of the most there can be, and the
 * time since the variant began; a variant left out makes no call, one
 * that fails gets no "done", and without a hook nothing is called. */
Test(runner, the_progress_hook_hears_every_run)
{
    static heard h;
    memset(&h, 0, sizeof h);
    cp_run_opts o = opts;
    o.on_run = hear;
    o.on_run_user = &h;
    run_with("selftest-variant-left-out", &o);
    int at = 0;
    expect_variant_calls(&h, &at, "selftest-variant-left-out", "a", 0, 3, 1, 3, 3, false);
    expect_variant_calls(&h, &at, "selftest-variant-left-out", "c", 2, 3, 1, 3, 3, false);
    cr_expect_eq(at, h.n, "no call for b, which did not run, nor after c");
    cr_expect_str_eq(h.calls[h.n - 1].stopped_by, "fixed");

    /* Under the stopping rule a timed run counts to its maximum, and the
     * rule stops it sooner. */
    memset(&h, 0, sizeof h);
    cp_run_opts_stopping_rule(&o, CP_PROFILE_CI);
    o.max_noise = 0.5;
    /* Only the noise may end it: on a loaded machine a preempted spin
     * can inflate samples until the ci profile's 50 samples or 1 s ran
     * out first (the test failed so, once in a -j2 run). */
    o.max_samples = 1000;
    o.max_time_s = 60;
    o.warmup = 2;
    run_with("selftest-steady", &o);
    at = 0;
    cr_assert_geq(res->variants[0].nsamples, (size_t)o.min_samples);
    expect_variant_calls(&h, &at, "selftest-steady", "a", 0, 1, 2,
                         (int)res->variants[0].nsamples, o.max_samples, true);
    cr_expect_eq(at, h.n);
    cr_expect_str_eq(h.calls[h.n - 1].stopped_by, "noise");

    memset(&h, 0, sizeof h);
    cp_case_result_free(res);
    cr_assert_eq(cp_run_case(cp_registry_find("selftest-run-fails"), &env, &o, res), 0);
    cr_expect_eq(res->status, CP_STATUS_FAILED);
    cr_expect_eq(h.n, 1, "the failed warm-up run was announced, and nothing after it");
    cr_expect_str_eq(h.calls[0].phase, "warm-up");

    memset(&h, 0, sizeof h);
    o = opts;
    o.on_run_user = &h;
    run_with("selftest-ok", &o);
    cr_expect_eq(h.n, 0, "no hook, no calls");
}

/* A case timed before (cp_run_opts.timed, as `run` times every case
 * before it traces any) lends its timed runs: the second run of the case
 * makes its warm-up (and traced run, on a GPU) alone, keeps the lent
 * samples, clocks and what verifying found, and says no second "done". A
 * variant the first run did not time is timed as always (the control). */
Test(runner, a_case_timed_before_lends_its_timed_runs)
{
    cp_run_opts untraced = opts;
    untraced.trace = false;
    run_with("selftest-ok", &untraced);
    cp_case_result timed = *res;
    memset(res, 0, sizeof *res);
    cr_assert_eq(timed.variants[0].nsamples, 3);
    timed.variants[0].clocks_before = (cp_clocks){.known = true, .sm_mhz = 1234};
    timed.variants[0].worst_mismatches = 7; /* as if its timed runs had differed */
    timed.variants[1].nsamples = 0;         /* b: not timed there */
    runs = 0;
    static heard h;
    memset(&h, 0, sizeof h);
    cp_run_opts o = opts;
    o.timed = &timed;
    o.on_run = hear;
    o.on_run_user = &h;
    const cp_case_def *d = cp_registry_find("selftest-ok");
    cr_assert_eq(cp_run_case(d, &env, &o, res), 0);
    /* a: 1 warm-up; b: 1 warm-up + 3 timed. */
    cr_expect_eq(runs, 5);
    const cp_variant_result *a = &res->variants[0];
    cr_assert_eq(a->nsamples, 3);
    for (size_t i = 0; i < 3; i++)
        cr_expect_float_eq(a->samples_ms[i], timed.variants[0].samples_ms[i], 0);
    cr_expect_eq(a->timing.runs, 3);
    cr_expect_eq(a->clocks_before.sm_mhz, 1234);
    cr_expect_eq(a->worst_mismatches, 7);
    cr_expect_eq(res->status, CP_STATUS_FAILED, "the lent runs' mismatches fail its output check");
    cr_expect_eq(res->variants[1].nsamples, 3);
    int done = 0;
    for (int k = 0; k < h.n; k++)
        done += strcmp(h.calls[k].phase, "done") == 0;
    cr_expect_eq(done, 1, "only b, timed here, is said done here");
    timed.variants[1].nsamples = 3;
    cp_case_result_free(&timed);
}

/* A case's timing declarations refuse bad arguments (a variant out of
 * range, no reason, too many streams); a CPU-only case is judged on wall
 * time, saying so, and has no GPU time whatever it declares. */
Test(runner, timing_declarations_are_checked_and_a_cpu_case_is_on_wall_time)
{
    run("selftest-figures");
    cr_expect_eq(res->status, CP_STATUS_PASSED, "%s", res->error);
    cr_expect_eq(bad_figures, 7, "each of 7 bad declarations refused");
    cr_assert_eq(res->nvariants, 2);
    for (size_t i = 0; i < 2; i++) {
        cr_expect_eq(res->variants[i].figure, CP_WORK_WALL);
        cr_expect_str_eq(res->variants[i].figure_why, "the case runs on the CPU");
        cr_expect_not(res->variants[i].gated);
        cr_expect_eq(res->variants[i].ngpu_samples, 0u);
    }
}
