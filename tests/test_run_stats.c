/* The run-level statistics of cuproof compare: the false-alarm and
 * detection rates of the comparison of runs and of the paired A/B test
 * with its sequential stopping rule, measured over seeded trials of
 * simulated runs that drift, and their edge cases.
 *
 * The drift ("10% random between-run drift"): each run's true time is
 * multiplied by a factor drawn uniformly from [1 - B/2, 1 + B/2], B = 0.10
 * (a 10% band; relative sd 2.9%); the harsher case B = 0.20. Within a run,
 * 10 samples with 1.5% lognormal noise around that; the run's value is
 * their median, its relative standard error 1.2533 sd(log samples) /
 * sqrt(10). In a back-to-back pair, A and B share one drift factor. */
#include <cuproof/internal/run_stats.h>
#include <cuproof/error.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "seeded_rng.h"

enum { TRIALS = 1000, SAMPLES = 10, MAX_RUNS = 32 };
#define WITHIN 0.015 /* within-run noise of one sample (lognormal sigma) */


static double drift(double band)
{
    return 1 + band * (uniform01() - 0.5);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One run at `truth` ms already drifted: the median of SAMPLES samples,
 * and (rse, may be NULL) its relative standard error from those samples. */
static double one_run(double truth, double *rse)
{
    double s[SAMPLES], mean = 0, ss = 0;
    for (int i = 0; i < SAMPLES; i++) {
        double e = WITHIN * normal();
        s[i] = truth * exp(e);
        double d = e - mean;
        mean += d / (i + 1);
        ss += d * (e - mean);
    }
    if (rse)
        *rse = 1.2533 * sqrt(ss / (SAMPLES - 1)) / sqrt((double)SAMPLES);
    qsort(s, SAMPLES, sizeof *s, cmp_double);
    return 0.5 * (s[SAMPLES / 2 - 1] + s[SAMPLES / 2]);
}

static void runs(double *v, double *rse, int n, double truth, double band)
{
    for (int i = 0; i < n; i++)
        v[i] = one_run(truth * drift(band), &rse[i]);
}

/* Verdict counts (indexed by cp_cmp_verdict) over TRIALS trials of n old
 * runs at 1 ms against n new runs at `factor` ms, drift band `band`. */
static void run_trials(int n, double factor, double band, int counts[5], double *mean_needed)
{
    double a[MAX_RUNS], b[MAX_RUNS], ra[MAX_RUNS], rb[MAX_RUNS];
    memset(counts, 0, 5 * sizeof *counts);
    double needed = 0;
    int noisy = 0;
    for (int t = 0; t < TRIALS; t++) {
        rng_state = 1000003u * (uint64_t)t + 17;
        runs(a, ra, n, 1.0, band);
        runs(b, rb, n, factor, band);
        cp_run_cmp r;
        cr_assert_eq(cp_compare_runs(a, (size_t)n, b, (size_t)n, ra, rb, 0.10,
                                     CP_CMP_MIN_EFFECT, &r),
                     0, "%s", cp_last_error());
        cr_assert(r.verdict >= 0 && r.verdict <= CP_CMP_SINGLE_RUN);
        counts[r.verdict]++;
        if (r.verdict == CP_CMP_NOISY) {
            needed += (double)r.runs_needed;
            noisy++;
        }
    }
    *mean_needed = noisy ? needed / noisy : 0;
}

static void log_counts(const char *what, int n, double band, const int c[5], double needed)
{
    cr_log_info("%s, %d runs a side, %.0f%% band: same %d, slower %d, faster %d, noisy %d "
                "(runs needed on average %.1f) of %d",
                what, n, band * 100, c[CP_CMP_SAME], c[CP_CMP_SLOWER], c[CP_CMP_FASTER],
                c[CP_CMP_NOISY], needed, TRIALS);
}

Test(run_stats, same_build_under_drift_false_alarms)
{
    int c[5];
    double needed;
    run_trials(5, 1.0, 0.10, c, &needed);
    log_counts("identical", 5, 0.10, c, needed);
    /* The must-hold: at most 5 false alarms in 1000. */
    cr_expect_leq(c[CP_CMP_SLOWER] + c[CP_CMP_FASTER], 5, "false alarms %d",
                  c[CP_CMP_SLOWER] + c[CP_CMP_FASTER]);
    /* And the point of the change: 5 runs a side say "same", not noisy. */
    cr_expect_geq(c[CP_CMP_SAME], 990, "same %d", c[CP_CMP_SAME]);
    cr_expect_eq(c[CP_CMP_SINGLE_RUN], 0);

    /* The harsher drift: still few false alarms (the spread is measured),
     * but most comparisons cannot rule out a 10% change: noisy. */
    run_trials(5, 1.0, 0.20, c, &needed);
    log_counts("identical", 5, 0.20, c, needed);
    cr_expect_leq(c[CP_CMP_SLOWER] + c[CP_CMP_FASTER], 5, "false alarms %d",
                  c[CP_CMP_SLOWER] + c[CP_CMP_FASTER]);
    run_trials(10, 1.0, 0.20, c, &needed);
    log_counts("identical", 10, 0.20, c, needed);
    cr_expect_leq(c[CP_CMP_SLOWER] + c[CP_CMP_FASTER], 5, "false alarms %d",
                  c[CP_CMP_SLOWER] + c[CP_CMP_FASTER]);
}

Test(run_stats, ten_percent_slower_under_drift_is_detected)
{
    int c[5];
    double needed;
    /* 5 runs a side cannot reach 95% at this false-alarm rate with the
     * spread estimated from the runs themselves: 10% is 5.1 standard
     * errors of the difference, and the t on 8 degrees of freedom (or
     * fewer, Welch) needs about 7 for 95% at alpha 0.002 (it would with
     * the spread known: 98%). Measured here, so a change of the statistic
     * shows; the must-hold is met from 7 runs a side. */
    run_trials(5, 1.10, 0.10, c, &needed);
    log_counts("10% slower", 5, 0.10, c, needed);
    cr_expect(c[CP_CMP_SLOWER] >= 550 && c[CP_CMP_SLOWER] <= 700, "slower %d",
              c[CP_CMP_SLOWER]);
    cr_expect_eq(c[CP_CMP_FASTER], 0);
    /* What is not called slower is noisy far more often than same. */
    cr_expect_leq(c[CP_CMP_SAME], 40, "same %d", c[CP_CMP_SAME]);

    run_trials(7, 1.10, 0.10, c, &needed);
    log_counts("10% slower", 7, 0.10, c, needed);
    cr_expect_geq(c[CP_CMP_SLOWER], 950, "slower %d", c[CP_CMP_SLOWER]);
    cr_expect_eq(c[CP_CMP_FASTER], 0);
    run_trials(7, 1 / 1.10, 0.10, c, &needed);
    log_counts("10% faster", 7, 0.10, c, needed);
    cr_expect_geq(c[CP_CMP_FASTER], 950, "faster %d", c[CP_CMP_FASTER]);
    cr_expect_eq(c[CP_CMP_SLOWER], 0);

    /* The harsher drift: the same runs find it far less often. */
    run_trials(7, 1.10, 0.20, c, &needed);
    log_counts("10% slower", 7, 0.20, c, needed);
    cr_expect_leq(c[CP_CMP_SLOWER], 700, "slower %d", c[CP_CMP_SLOWER]);
    cr_expect_eq(c[CP_CMP_FASTER], 0);
}

Test(run_stats, single_run_never_calls_a_change)
{
    double one[] = {1.0}, many[] = {2.0, 2.02, 1.98, 2.01, 1.99};
    cp_run_cmp r;
    cr_assert_eq(cp_compare_runs(one, 1, many, 5, NULL, NULL, 0.10, 0.02, &r), 0);
    cr_expect_eq(r.verdict, CP_CMP_SINGLE_RUN);
    cr_expect_str_eq(cp_cmp_verdict_name(r.verdict), "single run");
    cr_expect_float_eq(r.ratio, exp((log(2.0) + log(2.02) + log(1.98) + log(2.01) +
                                     log(1.99)) / 5),
                       1e-12);
    cr_expect_eq(r.p, 1);
    cr_expect_eq(r.ci_low, 0);
    cr_expect(isinf(r.ci_high));
    /* The other side's spread (about 1.6%) says how many runs would do. */
    cr_expect(r.runs_needed >= 2 && r.runs_needed <= 5, "runs needed %zu", r.runs_needed);
    cr_expect(!r.runs_capped);
    /* One run on each side, nothing known about the spread: 0. */
    cr_assert_eq(cp_compare_runs(one, 1, many, 1, NULL, NULL, 0.10, 0.02, &r), 0);
    cr_expect_eq(r.verdict, CP_CMP_SINGLE_RUN);
    cr_expect_eq(r.runs_needed, 0);
    /* ... unless the runs' own errors are given. */
    double rse[] = {0.01};
    cr_assert_eq(cp_compare_runs(one, 1, many, 1, rse, rse, 0.10, 0.02, &r), 0);
    cr_expect_eq(r.verdict, CP_CMP_SINGLE_RUN);
    /* 1% a run: 2 runs a side give 2 df, t 22.3 + 2.9 too many standard
     * errors; 3 give 4 df, (8.61 + 2.13) 0.0082 = 0.088 < log 1.1. */
    cr_expect_eq(r.runs_needed, 3);
}

Test(run_stats, identical_values_have_zero_spread)
{
    double a[] = {1.5, 1.5, 1.5}, b[] = {1.5, 1.5, 1.5, 1.5};
    cp_run_cmp r;
    cr_assert_eq(cp_compare_runs(a, 3, b, 4, NULL, NULL, 0.10, 0.02, &r), 0);
    cr_expect_eq(r.verdict, CP_CMP_SAME);
    cr_expect_eq(r.ratio, 1);
    cr_expect_eq(r.p, 1);
    cr_expect_eq(r.ci_low, 1);
    cr_expect_eq(r.ci_high, 1);
    cr_expect_eq(r.spread_old, 0);
    cr_expect_eq(r.spread_new, 0);
    /* Zero spread and a difference: certainty. */
    double c[] = {1.65, 1.65};
    cr_assert_eq(cp_compare_runs(a, 3, c, 2, NULL, NULL, 0.10, 0.02, &r), 0);
    cr_expect_eq(r.verdict, CP_CMP_SLOWER);
    cr_expect_eq(r.p, 0);
    cr_expect_float_eq(r.ratio, 1.1, 1e-12);
    /* ... but not below the minimum effect. */
    double d[] = {1.51, 1.51};
    cr_assert_eq(cp_compare_runs(a, 3, d, 2, NULL, NULL, 0.10, 0.02, &r), 0);
    cr_expect_eq(r.verdict, CP_CMP_SAME);
}

Test(run_stats, within_run_error_only_widens)
{
    double a[] = {1.00, 1.01, 0.99, 1.00, 1.005}, b[] = {1.00, 0.995, 1.01, 1.00, 0.99};
    double tiny[] = {1e-4, 1e-4, 1e-4, 1e-4, 1e-4}, wide[] = {0.2, 0.2, 0.2, 0.2, 0.2};
    cp_run_cmp bare, small, big;
    cr_assert_eq(cp_compare_runs(a, 5, b, 5, NULL, NULL, 0.10, 0.02, &bare), 0);
    cr_assert_eq(cp_compare_runs(a, 5, b, 5, tiny, tiny, 0.10, 0.02, &small), 0);
    cr_assert_eq(cp_compare_runs(a, 5, b, 5, wide, wide, 0.10, 0.02, &big), 0);
    cr_expect_eq(bare.verdict, CP_CMP_SAME);
    /* Errors smaller than the runs' spread change nothing. */
    cr_expect_eq(small.ci_low, bare.ci_low);
    cr_expect_eq(small.ci_high, bare.ci_high);
    cr_expect_eq(small.p, bare.p);
    cr_expect_float_eq(small.within_old, 1e-4, 1e-15);
    /* Larger ones widen the interval: a 10% change is no longer ruled out. */
    cr_expect_lt(big.ci_low, bare.ci_low);
    cr_expect_gt(big.ci_high, bare.ci_high);
    cr_expect_eq(big.verdict, CP_CMP_NOISY);
    cr_expect_gt(big.runs_needed, 5);
    cr_expect_float_eq(big.within_new, 0.2, 1e-12);
    cr_expect_eq(big.spread_old, bare.spread_old);
}

Test(run_stats, noisy_says_how_many_runs)
{
    /* Spread of about 5% (sd of the logs): 3 runs a side cannot tell. */
    double a[] = {0.95, 1.0, 1.05}, b[] = {0.97, 1.02, 1.07};
    cp_run_cmp r;
    cr_assert_eq(cp_compare_runs(a, 3, b, 3, NULL, NULL, 0.10, 0.02, &r), 0);
    cr_expect_eq(r.verdict, CP_CMP_NOISY);
    cr_expect(!r.runs_capped);
    /* The rule in the header, worked here with the same t quantiles. */
    double var = r.spread_old * r.spread_old + r.spread_new * r.spread_new;
    size_t k = 2;
    for (; k <= CP_RUN_MAX_RUNS; k++) {
        double df = 2.0 * (double)(k - 1);
        double z = cp_t_quantile(1 - CP_RUN_ALPHA / 2, df) + cp_t_quantile(CP_RUN_POWER, df);
        if (z * sqrt(var / (double)k) <= log(1.1))
            break;
    }
    cr_expect_eq(r.runs_needed, k);
    cr_expect(k > 3 && k < CP_RUN_MAX_RUNS, "k %zu", k);
    /* A 60% spread: even 50 runs a side would not. */
    double c[] = {0.5, 1.0, 2.0}, d[] = {0.6, 1.2, 2.4};
    cr_assert_eq(cp_compare_runs(c, 3, d, 3, NULL, NULL, 0.10, 0.02, &r), 0);
    cr_expect_eq(r.verdict, CP_CMP_NOISY);
    cr_expect(r.runs_capped);
    cr_expect_eq(r.runs_needed, CP_RUN_MAX_RUNS);
}

Test(run_stats, bad_input_is_einval)
{
    double a[] = {1, 1.1}, nan_[] = {1, NAN}, inf_[] = {INFINITY, 1}, neg[] = {1, -1},
           zero[] = {0, 1}, bad_rse[] = {0.01, -0.01};
    cp_run_cmp r;
    cr_expect_eq(cp_compare_runs(a, 0, a, 2, NULL, NULL, 0.1, 0.02, &r), CP_EINVAL);
    cr_expect_eq(cp_compare_runs(a, 2, a, 0, NULL, NULL, 0.1, 0.02, &r), CP_EINVAL);
    cr_expect_eq(cp_compare_runs(NULL, 2, a, 2, NULL, NULL, 0.1, 0.02, &r), CP_EINVAL);
    cr_expect_eq(cp_compare_runs(a, 2, a, 2, NULL, NULL, 0.1, 0.02, NULL), CP_EINVAL);
    cr_expect_eq(cp_compare_runs(a, 2, nan_, 2, NULL, NULL, 0.1, 0.02, &r), CP_EINVAL);
    cr_expect_eq(cp_compare_runs(inf_, 2, a, 2, NULL, NULL, 0.1, 0.02, &r), CP_EINVAL);
    cr_expect_eq(cp_compare_runs(a, 2, neg, 2, NULL, NULL, 0.1, 0.02, &r), CP_EINVAL);
    cr_expect_eq(cp_compare_runs(zero, 2, a, 2, NULL, NULL, 0.1, 0.02, &r), CP_EINVAL);
    cr_expect_eq(cp_compare_runs(a, 2, a, 2, bad_rse, NULL, 0.1, 0.02, &r), CP_EINVAL);
    cr_expect_eq(cp_compare_runs(a, 2, a, 2, NULL, nan_, 0.1, 0.02, &r), CP_EINVAL);
    cr_expect_eq(cp_compare_runs(a, 2, a, 2, NULL, NULL, -0.1, 0.02, &r), CP_EINVAL);
    cr_expect_eq(cp_compare_runs(a, 2, a, 2, NULL, NULL, 0.1, NAN, &r), CP_EINVAL);

    cp_pair_cmp pr;
    double lr[] = {0.1, NAN, 0.2}, ok[] = {0.1, 0.1, 0.1, 0.1, 0.1};
    cr_expect_eq(cp_compare_pairs(lr, 0, 0.1, 0.02, &pr), CP_EINVAL);
    cr_expect_eq(cp_compare_pairs(lr, 3, 0.1, 0.02, &pr), CP_EINVAL);
    cr_expect_eq(cp_compare_pairs(NULL, 3, 0.1, 0.02, &pr), CP_EINVAL);
    cr_expect_eq(cp_compare_pairs(ok, 5, INFINITY, 0.02, &pr), CP_EINVAL);
    cr_expect_eq(cp_pairs_decided(ok, 5, 0.1, 0.02, 1, 20, &pr), CP_EINVAL);
    cr_expect_eq(cp_pairs_decided(ok, 5, 0.1, 0.02, 6, 5, &pr), CP_EINVAL);
    cr_expect_eq(cp_pairs_decided(ok, 5, 0.1, 0.02, 2, 4, &pr), CP_EINVAL);
    cr_expect_eq(cp_pairs_decided(lr, 3, 0.1, 0.02, 2, 4, &pr), CP_EINVAL);
}

Test(run_stats, same_seed_same_result)
{
    double a[2][8], b[2][8], ra[2][8], rb[2][8];
    cp_run_cmp r[2];
    for (int k = 0; k < 2; k++) {
        rng_state = 4242;
        runs(a[k], ra[k], 8, 1.0, 0.10);
        runs(b[k], rb[k], 8, 1.05, 0.10);
        cr_assert_eq(cp_compare_runs(a[k], 8, b[k], 8, ra[k], rb[k], 0.10, 0.02, &r[k]), 0);
    }
    cr_expect_eq(memcmp(a[0], a[1], sizeof a[0]), 0);
    cr_expect_eq(r[0].verdict, r[1].verdict);
    cr_expect_eq(r[0].ratio, r[1].ratio);
    cr_expect_eq(r[0].ci_low, r[1].ci_low);
    cr_expect_eq(r[0].ci_high, r[1].ci_high);
    cr_expect_eq(r[0].p, r[1].p);
    cr_expect_eq(r[0].df, r[1].df);
    cr_expect_eq(r[0].runs_needed, r[1].runs_needed);
    /* A different seed, different runs. */
    rng_state = 4243;
    runs(a[1], ra[1], 8, 1.0, 0.10);
    cr_expect_neq(memcmp(a[0], a[1], sizeof a[0]), 0);
}

Test(run_stats, t_distribution_matches_tables)
{
    /* Quantiles from the usual tables (6 significant digits). */
    cr_expect_float_eq(cp_t_quantile(0.975, 8), 2.306004, 1e-6);
    cr_expect_float_eq(cp_t_quantile(0.995, 4), 4.604095, 1e-6);
    cr_expect_float_eq(cp_t_quantile(0.95, 30), 1.697261, 1e-6);
    cr_expect_float_eq(cp_t_quantile(0.025, 8), -2.306004, 1e-6);
    cr_expect_float_eq(cp_t_quantile(0.75, 1), 1.0, 1e-9); /* Cauchy */
    cr_expect_eq(cp_t_quantile(0.5, 3), 0);
    cr_expect_float_eq(cp_t_two_sided_p(2.306004, 8), 0.05, 1e-6);
    cr_expect_float_eq(cp_t_two_sided_p(1.0, 1), 0.5, 1e-12);
    cr_expect_float_eq(cp_t_two_sided_p(-1.0, 1), 0.5, 1e-12);
    cr_expect_eq(cp_t_two_sided_p(0, 5), 1);
    cr_expect_eq(cp_t_two_sided_p(INFINITY, 5), 0);
    cr_expect(isnan(cp_t_quantile(1, 5)));
    cr_expect(isnan(cp_t_quantile(0.5, 0)));
    cr_expect(isnan(cp_t_two_sided_p(NAN, 5)));
}

/* One A/B pair: A at 1 ms and B at `factor` ms, both under one drift
 * factor of band `shared`, and each under its own of band `own` (0 for
 * pairs that drift together entirely); the log ratio log(B / A). */
static double one_pair(double factor, double shared, double own)
{
    double f = drift(shared);
    double a = one_run(f * drift(own), NULL);
    double b = one_run(factor * f * drift(own), NULL);
    return log(b / a);
}

/* TRIALS sequential comparisons, each adding pairs until the rule stops
 * (CP_PAIRS_MIN, CP_PAIRS_BUDGET); verdict counts and the mean pairs. */
static void pair_trials(double factor, double shared, double own, int counts[5],
                        double *mean_pairs)
{
    double lr[CP_PAIRS_BUDGET];
    memset(counts, 0, 5 * sizeof *counts);
    double pairs = 0;
    for (int t = 0; t < TRIALS; t++) {
        rng_state = 7000003u * (uint64_t)t + 5;
        cp_pair_cmp r;
        size_t n = 0;
        do {
            lr[n] = one_pair(factor, shared, own);
            n++;
            cr_assert_eq(cp_pairs_decided(lr, n, 0.10, CP_CMP_MIN_EFFECT, CP_PAIRS_MIN,
                                          CP_PAIRS_BUDGET, &r),
                         0, "%s", cp_last_error());
        } while (!r.decided);
        cr_assert(n >= CP_PAIRS_MIN && n <= CP_PAIRS_BUDGET);
        counts[r.verdict]++;
        pairs += (double)n;
    }
    *mean_pairs = pairs / TRIALS;
}

static void log_pairs(const char *what, double shared, double own, const int c[5], double mean)
{
    cr_log_info("pairs, %s, shared %.0f%% band, own %.0f%% band: same %d, slower %d, faster "
                "%d, noisy %d of %d; %.2f pairs on average (min %d, budget %d)",
                what, shared * 100, own * 100, c[CP_CMP_SAME], c[CP_CMP_SLOWER],
                c[CP_CMP_FASTER], c[CP_CMP_NOISY], TRIALS, mean, CP_PAIRS_MIN,
                CP_PAIRS_BUDGET);
}

Test(run_stats, pairs_drifting_together)
{
    int c[5];
    double mean;
    pair_trials(1.0, 0.10, 0, c, &mean);
    log_pairs("identical", 0.10, 0, c, mean);
    cr_expect_leq(c[CP_CMP_SLOWER] + c[CP_CMP_FASTER], 5, "false alarms %d",
                  c[CP_CMP_SLOWER] + c[CP_CMP_FASTER]);
    cr_expect_geq(c[CP_CMP_SAME], 990);
    /* The drift cancels in the ratio: the first look decides. */
    cr_expect_leq(mean, 5.1, "mean pairs %.2f", mean);

    pair_trials(1.10, 0.10, 0, c, &mean);
    log_pairs("10% slower", 0.10, 0, c, mean);
    cr_expect_geq(c[CP_CMP_SLOWER], 950, "slower %d", c[CP_CMP_SLOWER]);
    cr_expect_eq(c[CP_CMP_FASTER], 0);
    cr_expect_leq(mean, 5.1, "mean pairs %.2f", mean);

    /* Harsher: 20% shared drift, and each run of a pair drifting on its
     * own by a 10% band (the drift does not all cancel). */
    pair_trials(1.0, 0.20, 0.10, c, &mean);
    log_pairs("identical", 0.20, 0.10, c, mean);
    cr_expect_leq(c[CP_CMP_SLOWER] + c[CP_CMP_FASTER], 5, "false alarms %d",
                  c[CP_CMP_SLOWER] + c[CP_CMP_FASTER]);
    pair_trials(1.10, 0.20, 0.10, c, &mean);
    log_pairs("10% slower", 0.20, 0.10, c, mean);
    cr_expect_eq(c[CP_CMP_FASTER], 0);
    cr_expect_geq(c[CP_CMP_SLOWER], 900, "slower %d", c[CP_CMP_SLOWER]);
}

Test(run_stats, pairs_edge_cases)
{
    cp_pair_cmp r;
    double one[] = {0.3};
    cr_assert_eq(cp_compare_pairs(one, 1, 0.10, 0.02, &r), 0);
    cr_expect_eq(r.verdict, CP_CMP_SINGLE_RUN);
    cr_expect(!r.decided);
    cr_expect_float_eq(r.ratio, exp(0.3), 1e-12);
    /* Fewer than the minimum: never decided, whatever they say. */
    double big[] = {0.3, 0.31, 0.29, 0.30, 0.30, 0.305};
    cr_assert_eq(cp_pairs_decided(big, 4, 0.10, 0.02, 5, 20, &r), 0);
    cr_expect(!r.decided);
    cr_assert_eq(cp_pairs_decided(big, 5, 0.10, 0.02, 5, 20, &r), 0);
    cr_expect(r.decided);
    cr_expect_eq(r.verdict, CP_CMP_SLOWER);
    cr_expect_float_eq(r.alpha, CP_RUN_ALPHA / 16, 1e-15);
    cr_expect_float_eq(r.level, 1 - 0.05 / 16, 1e-12);
    /* The fixed test at the full level, for comparison. */
    cr_assert_eq(cp_compare_pairs(big, 5, 0.10, 0.02, &r), 0);
    cr_expect_eq(r.verdict, CP_CMP_SLOWER);
    cr_expect(r.decided);
    cr_expect_float_eq(r.alpha, CP_RUN_ALPHA, 1e-15);
    /* Identical ratios: zero spread, certainty. */
    double flat[] = {0, 0, 0, 0, 0};
    cr_assert_eq(cp_compare_pairs(flat, 5, 0.10, 0.02, &r), 0);
    cr_expect_eq(r.verdict, CP_CMP_SAME);
    cr_expect_eq(r.p, 1);
    /* Undecided at the budget: stop, noisy, with the pairs that would do. */
    double wild[] = {0.3, -0.2, 0.25, -0.3, 0.1, -0.1};
    cr_assert_eq(cp_pairs_decided(wild, 5, 0.10, 0.02, 5, 6, &r), 0);
    cr_expect(!r.decided);
    cr_expect_eq(r.verdict, CP_CMP_NOISY);
    cr_assert_eq(cp_pairs_decided(wild, 6, 0.10, 0.02, 5, 6, &r), 0);
    cr_expect(r.decided);
    cr_expect_eq(r.verdict, CP_CMP_NOISY);
    cr_expect_gt(r.pairs_needed, 6);
}

/* ---- The comparison's shared spread (cp_runs_prior: the moderated t) ---- */

enum { VARIANTS = 20 };

/* TRIALS comparisons, each of VARIANTS variants with n runs a side, every
 * run drifting on its own in `band`; variant 0 drifts in `band0` instead
 * (a host-bound variant among device-bound ones when wider). The prior
 * comes from all the variants of the comparison; counts are over
 * variant 0 (the outlier's rate) or over every variant (`all`). */
static void prior_trials(int n, double factor, double band, double band0, bool all,
                         int counts[5], int *moderated)
{
    static double a[VARIANTS][MAX_RUNS], b[VARIANTS][MAX_RUNS], ra[VARIANTS][MAX_RUNS],
        rb[VARIANTS][MAX_RUNS];
    memset(counts, 0, 5 * sizeof *counts);
    *moderated = 0;
    for (int t = 0; t < TRIALS; t++) {
        rng_state = 7000003u * (uint64_t)t + 29;
        double vars[VARIANTS], dfs[VARIANTS];
        for (int v = 0; v < VARIANTS; v++) {
            double bd = v == 0 ? band0 : band;
            runs(a[v], ra[v], n, 1.0 + v, bd);
            runs(b[v], rb[v], n, (1.0 + v) * factor, bd);
            cr_assert_eq(cp_runs_variance(a[v], (size_t)n, b[v], (size_t)n, &vars[v], &dfs[v]), 0);
        }
        cp_runs_prior prior;
        cr_assert_eq(cp_runs_prior_from(vars, dfs, VARIANTS, &prior), 0);
        for (int v = 0; v < (all ? VARIANTS : 1); v++) {
            cp_run_cmp r;
            cr_assert_eq(cp_compare_runs_prior(a[v], (size_t)n, b[v], (size_t)n, ra[v], rb[v],
                                               0.10, CP_CMP_MIN_EFFECT, &prior, &r),
                         0, "%s", cp_last_error());
            counts[r.verdict]++;
            *moderated += r.moderated;
        }
    }
}

/* The two must-holds at 5 runs a side, once the variants of a
 * comparison share their spread: at most 5 false alarms per 1000
 * comparisons of a variant (here per 20000 variant comparisons, so at
 * most 100), and a 10% slowdown called slower in at least 95%. */
Test(run_stats, the_shared_spread_meets_both_bounds_at_five_runs)
{
    int c[5], mod;
    prior_trials(5, 1.0, 0.10, 0.10, true, c, &mod);
    cr_log_info("shared spread, identical, 5 runs a side, 10%% band: same %d, slower %d, "
                "faster %d, noisy %d of %d variant comparisons (%d moderated)",
                c[CP_CMP_SAME], c[CP_CMP_SLOWER], c[CP_CMP_FASTER], c[CP_CMP_NOISY],
                TRIALS * VARIANTS, mod);
    cr_expect_leq(c[CP_CMP_SLOWER] + c[CP_CMP_FASTER], 5 * VARIANTS, "false alarms %d",
                  c[CP_CMP_SLOWER] + c[CP_CMP_FASTER]);
    cr_expect_geq(c[CP_CMP_SAME], 990 * VARIANTS);
    prior_trials(5, 1.10, 0.10, 0.10, true, c, &mod);
    cr_log_info("shared spread, 10%% slower, 5 runs a side, 10%% band: slower %d, same %d, "
                "noisy %d, faster %d of %d", c[CP_CMP_SLOWER], c[CP_CMP_SAME], c[CP_CMP_NOISY],
                c[CP_CMP_FASTER], TRIALS * VARIANTS);
    cr_expect_geq(c[CP_CMP_SLOWER], 950 * VARIANTS, "slower %d", c[CP_CMP_SLOWER]);
    cr_expect_eq(c[CP_CMP_FASTER], 0);
}

/* A variant that drifts three times as much as the others (a 30% band
 * among 10% ones) is not described by their spread: it is tested on its
 * own runs, and does not cry wolf more than the bound allows. */
Test(run_stats, a_wider_variant_is_not_narrowed_by_the_others)
{
    int c[5], mod;
    prior_trials(5, 1.0, 0.10, 0.30, false, c, &mod);
    cr_log_info("the wide variant, identical: same %d, slower %d, faster %d, noisy %d of %d "
                "(%d moderated)",
                c[CP_CMP_SAME], c[CP_CMP_SLOWER], c[CP_CMP_FASTER], c[CP_CMP_NOISY], TRIALS, mod);
    cr_expect_leq(c[CP_CMP_SLOWER] + c[CP_CMP_FASTER], 5, "false alarms %d",
                  c[CP_CMP_SLOWER] + c[CP_CMP_FASTER]);
    cr_expect_lt(mod, TRIALS / 4, "%d of %d moderated", mod, TRIALS);
}

/* The prior (Smyth's moments): none from fewer than three variants;
 * variances that scatter no more than sampling makes them are one spread
 * (their geometric mean once each is unbiased, the most degrees of
 * freedom allowed); variances 10 000 times apart (an H100's ci runs: 0.02%
 * to 50% between processes) are a prior worth little (d0 under 2), so
 * that a tight variant is not widened to the others' spread. */
Test(run_stats, the_prior_needs_three_variants_and_weighs_their_scatter)
{
    double same[] = {5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4};
    double wide[] = {1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-6, 1e-4, 1e-3, 1e-5};
    double dfs[] = {8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
    cp_runs_prior p;
    cr_assert_eq(cp_runs_prior_from(same, dfs, 2, &p), 0);
    cr_expect_eq(p.df, 0);
    cr_assert_eq(cp_runs_prior_from(same, dfs, 10, &p), 0);
    /* log s^2 - digamma(4) + log(4) for each: exp of that, as d0 is
     * infinite. */
    cr_expect_float_eq(p.var, 5e-4 * exp(log(4.0) - 1.2561176684318), 1e-9, "%g", p.var);
    cr_expect_float_eq(p.df, CP_RUN_PRIOR_DF, 1e-12);
    cr_assert_eq(cp_runs_prior_from(wide, dfs, 10, &p), 0);
    cr_expect(p.df > 0 && p.df < 2, "d0 %g", p.df);
    cr_expect(p.var > 1e-6 && p.var < 1e-3, "s0^2 %g", p.var);
    /* A variant with no spread at all (0) tells nothing of it: left out. */
    double zeros[] = {0, 0, 5e-4, 5e-4};
    cr_assert_eq(cp_runs_prior_from(zeros, dfs, 4, &p), 0);
    cr_expect_eq(p.df, 0);
    /* Without a prior, the comparison is cp_compare_runs' own. */
    double a[] = {1.0, 1.01, 0.99, 1.0, 1.02}, b[] = {1.1, 1.12, 1.09, 1.1, 1.11};
    cp_run_cmp x, y;
    cr_assert_eq(cp_compare_runs(a, 5, b, 5, NULL, NULL, 0.1, 0.02, &x), 0);
    cr_assert_eq(cp_compare_runs_prior(a, 5, b, 5, NULL, NULL, 0.1, 0.02, NULL, &y), 0);
    cr_expect_eq(x.verdict, y.verdict);
    cr_expect_eq(x.p, y.p);
    cr_expect_not(y.moderated);
}

/* The small statistics compare rests on, moved from compare/ beside the
 * others: the median sorts in place, the median's relative standard
 * error on the log scale, and the geometric mean of runs. */
Test(run_stats, medians_errors_and_geometric_means)
{
    double odd[] = {5, 1, 3};
    cr_expect_eq(cp_median_inplace(odd, 3), 3);
    cr_expect_eq(odd[0], 1, "sorted in place");
    double even[] = {4, 1, 3, 2};
    cr_expect_eq(cp_median_inplace(even, 4), 2.5);
    cr_expect(isnan(cp_median_inplace(NULL, 0)));
    /* Samples e^-1, e^0, e^1: log sd 1, so 1.2533 / sqrt(3). */
    double s[] = {exp(-1), 1, exp(1)};
    cr_expect_float_eq(cp_median_rse_log(s, 3), 1.2533 / sqrt(3.0), 1e-12);
    cr_expect_eq(cp_median_rse_log(s, 2), 0, "fewer than 3 samples tell nothing");
    double flat[] = {2, 2, 2, 2};
    cr_expect_eq(cp_median_rse_log(flat, 4), 0);
    double g[] = {1, 4, 16};
    cr_expect_float_eq(cp_geomean(g, 3), 4, 1e-12);
    cr_expect_float_eq(cp_geomean(g, 0), 1, 0, "none: the empty product");
}
