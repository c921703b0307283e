/*
 * Run-level statistics for cuproof compare ("compare the run, not the
 * sample"): the comparison of two sets of per-run values (Welch's
 * t on their logarithms), the paired comparison of back-to-back A/B runs
 * (t on the log ratios), a sequential stopping rule for pairs, and the t
 * distribution they use. libc and libm only; no random numbers, so every
 * result is the same on every machine.
 *
 * Why the run and not the sample: the samples of one run share that run's
 * clocks and queue state, so they show how precisely that run was
 * measured, not how much the next run will differ (on an H100, 10-40% for
 * some short variants). A test over within-run samples then "proves"
 * run-to-run drift. Here each run gives one value (its median time), and
 * the spread between those values is what a difference is judged against.
 *
 * Why Welch's t on logs and not a rank test or a bootstrap over runs:
 * with the few runs a comparison can afford (5 a side), a rank test
 * cannot reach a small p at all (Mann-Whitney's smallest two-sided p for
 * 5 against 5 is 2/252 = 0.008, above the false-alarm rate wanted), and a
 * percentile bootstrap of 5 values gives intervals far too narrow (it
 * cannot see beyond the 5 values it has). The t interval accounts for the
 * spread being estimated from few values. Logs because timings are
 * multiplicative (a drift is a factor) and the ratio is what is reported;
 * Welch because a new build may drift more than an old one.
 *
 * The drift that the tests (tests/test_run_stats.c) and docs/compare.md
 * measure this against, "10% random between-run drift": every run's
 * value is the true time multiplied by a factor drawn uniformly from
 * [0.95, 1.05] (a 10% band, relative sd 2.9%), and each run's value is
 * the median of 10 samples with 1.5% lognormal noise of their own.
 *
 * Internal (include/cuproof/internal/): not part of the stable API.
 */
#ifndef CUPROOF_RUN_STATS_H
#define CUPROOF_RUN_STATS_H

#include "../export.h"
#include "compare_stats.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The significance level for slower or faster, two-sided: at most 2
 * false alarms in 1000 comparisons of identical builds, so that a count of
 * 5 in 1000 is not reached by chance (at 0.005 it would be reached half
 * the time). */
#define CP_RUN_ALPHA 0.002
/* The power the "runs needed" of a noisy verdict is worked out for. */
#define CP_RUN_POWER 0.95
/* The most runs (or pairs) a side that "runs needed" names; beyond it,
 * *_capped. */
#define CP_RUN_MAX_RUNS 50
/* Defaults of the sequential rule for pairs. */
#define CP_PAIRS_MIN 5
#define CP_PAIRS_BUDGET 20

/* What cp_compare_runs found. Ratios and intervals are of new / old. */
typedef struct cp_run_cmp {
    /* same, faster, slower, noisy, or single run (CP_CMP_SINGLE_RUN) */
    cp_cmp_verdict verdict;
    double ratio;           /* geometric mean(new runs) / geometric mean(old runs) */
    double ci_low, ci_high; /* CP_CMP_LEVEL Welch t interval of the ratio;
                               [0, inf) for a single run */
    double p;               /* two-sided Welch t p-value; 1 for a single run */
    double df;              /* Welch-Satterthwaite degrees of freedom; 0 for a single run */
    /* Between-run spread: the sd of the logs of each side's run values
     * (about the relative sd); 0 for one run. */
    double spread_old, spread_new;
    /* Within-run precision: the root mean square of each side's run
     * relative standard errors; 0 when not given. */
    double within_old, within_new;
    size_t n_old, n_new;
    /* For noisy and single run: the runs a side that would tell a change
     * of `threshold` from none (with CP_RUN_POWER at CP_RUN_ALPHA), from
     * the spread as estimated; 0 otherwise, and 0 for a single run when no
     * spread at all is known; for noisy, never fewer than one more than
     * the larger side has. runs_capped: even CP_RUN_MAX_RUNS would not
     * (runs_needed is then CP_RUN_MAX_RUNS). */
    size_t runs_needed;
    bool runs_capped;
    /* cp_compare_runs_prior: tested with the comparison's shared spread
     * (df is then the moderated one). */
    bool moderated;
} cp_run_cmp;

/*
 * Compares the runs of old and new: old_runs[i] and new_runs[j] are each
 * one run's median time (ms, > 0). old_rse and new_rse may be NULL; else
 * each run's own relative standard error (>= 0) from its within-run
 * samples. threshold (e.g. 0.10) is the change that matters, min_effect
 * (e.g. 0.02) the smallest change called a change.
 *
 * On x = log(value): d = mean(x_new) - mean(x_old); each side's variance
 * u = max(s^2, mean(rse^2)), s^2 its sample variance (the within-run
 * precision only ever widens what the runs' spread gives); SE = sqrt(u_old
 * / n_old + u_new / n_new), Welch-Satterthwaite df; p two-sided from t =
 * d / SE; the interval exp(d -+ t_{(1+CP_CMP_LEVEL)/2, df} SE). A zero SE
 * is certainty: p = 0 when d != 0 (1 when d = 0) and the interval is the
 * ratio. In this order:
 *  - single run: a side has 1 run: no between-run spread, so neither
 *    slower nor faster, whatever the values; runs_needed from the other
 *    side's spread, or the within-run errors, when known;
 *  - slower: p < CP_RUN_ALPHA and ci_low > 1 + min_effect;
 *  - faster: p < CP_RUN_ALPHA and ci_high < 1 - min_effect;
 *  - same:   the interval lies within (1 - threshold, 1 + threshold): a
 *            change of threshold is ruled out, and not wholly beyond
 *            1 +- min_effect (a likely change, not yet significant, is
 *            not "same");
 *  - noisy:  otherwise (neither a change nor its absence shown), with
 *            runs_needed: the smallest k with (t_{1-alpha/2, 2k-2} +
 *            t_{power, 2k-2}) sqrt((u_old + u_new) / k) <= log(1 +
 *            threshold), but at least one more than the larger side has.
 * Every field of *out is filled. Returns 0, or CP_EINVAL (NULL, a side
 * with 0 runs, a value not finite and > 0, an rse not finite and >= 0,
 * threshold or min_effect negative or not finite).
 */
CP_API int cp_compare_runs(const double *old_runs, size_t n_old, const double *new_runs,
                           size_t n_new, const double *old_rse, const double *new_rse,
                           double threshold, double min_effect, cp_run_cmp *out);

/*
 * The spread the variants of one comparison share. Run-to-run drift
 * (clocks, the GPU's state) moves a pass's variants alike, so the
 * variants' between-run variances say something of each other's: the
 * empirical-Bayes "moderated t" (Smyth 2004, limma) that microarray
 * studies use for the same few-samples-many-tests problem.
 * cp_runs_prior_from takes each variant's pooled log variance and its
 * degrees of freedom (cp_runs_variance) and fits Smyth's prior by his
 * moments: s0^2, and d0, how much the variances agree beyond what sampling
 * alone scatters them (infinite when they scatter no more; a small d0
 * when they differ by orders of magnitude, as an H100's ci variants do,
 * 0.02% to 50% between processes, so that a tight variant is not widened
 * to the others' spread). d0 is capped at CP_RUN_PRIOR_DF: a prior worth a
 * few variants, never the whole suite. Fewer than 3 variants with a
 * spread (variance > 0 and df > 0): no prior (df 0).
 */
#define CP_RUN_PRIOR_DF 32.0

typedef struct cp_runs_prior {
    double var; /* the shared variance of one run's log value */
    double df;  /* its degrees of freedom; 0: none */
} cp_runs_prior;

/* A variant's pooled between-run variance of log values over both sides
 * and its degrees of freedom (n_old + n_new - 2; 0 with a single run on a
 * side, when *var is 0). Returns 0 or CP_EINVAL as cp_compare_runs. */
CP_API int cp_runs_variance(const double *old_runs, size_t n_old, const double *new_runs,
                           size_t n_new, double *var, double *df);

CP_API int cp_runs_prior_from(const double *vars, const double *dfs, size_t n, cp_runs_prior *out);

/*
 * cp_compare_runs with the comparison's shared spread (prior NULL or df
 * 0: cp_compare_runs itself). A variant whose own variance is consistent
 * with the prior (its ratio to prior->var below the F distribution's 95%
 * quantile at (df, prior->df)) is tested with the moderated variance
 * (prior->df * prior->var + df * var) / (prior->df + df) on prior->df +
 * df degrees of freedom, a pooled two-sample t, never below the runs'
 * within-run floor; a variant that spreads more than the others is
 * tested on its own runs (Welch, as cp_compare_runs), so that the prior
 * never narrows the interval of a variant the prior does not describe.
 * out->moderated says which.
 */
CP_API int cp_compare_runs_prior(const double *old_runs, size_t n_old, const double *new_runs,
                                 size_t n_new, const double *old_rse, const double *new_rse,
                                 double threshold, double min_effect, const cp_runs_prior *prior,
                                 cp_run_cmp *out);

/* P(F > f) for the F distribution with (d1, d2) degrees of freedom. */
CP_API double cp_f_upper(double f, double d1, double d2);

/* What cp_compare_pairs and cp_pairs_decided found. */
typedef struct cp_pair_cmp {
    cp_cmp_verdict verdict; /* as cp_run_cmp's; single run: 1 pair */
    double ratio;           /* exp(mean log ratio): the geometric mean of B / A */
    double ci_low, ci_high; /* t interval at `level`; [0, inf) for 1 pair */
    double p;               /* two-sided one-sample t p-value of the mean log ratio */
    double spread;          /* sd of the log ratios (0 for 1 pair) */
    size_t n;               /* pairs */
    double alpha, level;    /* the significance level and interval level used */
    /* For noisy: the pairs that would tell a change of threshold from
     * none, as runs_needed above (df k - 1, variance of one log ratio);
     * pairs_capped as runs_capped. 0 otherwise. */
    size_t pairs_needed;
    bool pairs_capped;
    /* cp_compare_pairs: a verdict other than noisy or single run.
     * cp_pairs_decided: stop now (see there). */
    bool decided;
} cp_pair_cmp;

/*
 * Compares B against A from back-to-back pairs: log_ratios[i] = log(B_i /
 * A_i) of pair i, A and B run one after the other (in shuffled order, AB
 * or BA, so neither always runs second), so that the drift of the moment
 * is common to both and cancels in the ratio. One-sample t on the log
 * ratios: mean m, sd s, SE = s / sqrt(n), df n - 1; the verdict is
 * cp_compare_runs' rules with CP_RUN_ALPHA and a CP_CMP_LEVEL interval
 * (single run for 1 pair; a zero SE is certainty as there).
 *
 * Why a t and not Wilcoxon's signed-rank test: with 5 to 9 pairs the
 * signed-rank test's smallest two-sided p (2 / 2^n: 0.0625 for 5) cannot
 * go below the levels used here, so it could not decide before 9 pairs
 * (13 under the sequential rule's per-look level); logs of ratios are
 * close to symmetric, and an outlying pair widens the t interval (towards
 * noisy), it does not make a false alarm.
 * Returns 0 or CP_EINVAL (NULL, n = 0, a log ratio not finite, threshold
 * or min_effect negative or not finite).
 */
CP_API int cp_compare_pairs(const double *log_ratios, size_t n, double threshold,
                            double min_effect, cp_pair_cmp *out);

/*
 * The sequential rule: call after each new pair with all n pairs so far;
 * out->decided says stop. Looks are taken at min_pairs, min_pairs + 1,
 * ..., budget pairs; each is cp_compare_pairs' test with the risks split
 * evenly over the L = budget - min_pairs + 1 looks (Bonferroni): alpha =
 * CP_RUN_ALPHA / L and level = 1 - (1 - CP_CMP_LEVEL) / L, so the chance
 * of a false slower or faster over all the looks stays below
 * CP_RUN_ALPHA, and that of "same" for a change of threshold below 1 -
 * CP_CMP_LEVEL, however the looks correlate. decided: n >= min_pairs and
 * the verdict is slower, faster or same; or n = budget (the verdict may
 * then be noisy, with pairs_needed). Before min_pairs the verdict is
 * filled but decided is false. Returns 0, or CP_EINVAL as
 * cp_compare_pairs or when min_pairs < 2, budget < min_pairs or n >
 * budget.
 */
CP_API int cp_pairs_decided(const double *log_ratios, size_t n, double threshold,
                            double min_effect, size_t min_pairs, size_t budget,
                            cp_pair_cmp *out);

/* Two-sided p-value P(|T| >= |t|) of Student's t with df > 0 (not
 * necessarily whole) degrees of freedom; 0 for infinite t, NaN for NaN t
 * or df <= 0. */
CP_API double cp_t_two_sided_p(double t, double df);

/* The q quantile of Student's t with df > 0 degrees of freedom (by
 * bisection on cp_t_two_sided_p, to the double's precision); NaN outside
 * q in (0, 1) or df <= 0. */
CP_API double cp_t_quantile(double q, double df);

/* The median of n values, sorted in place; NAN for none. */
CP_API double cp_median_inplace(double *v, size_t n);

/* The relative standard error of the median of n positive samples, on
 * the log scale (1.2533 sd / sqrt(n), the median's efficiency against the
 * mean's for a normal distribution); 0 for fewer than 3 samples. */
CP_API double cp_median_rse_log(const double *samples, size_t n);

/* The geometric mean of n positive values (what a ratio of runs is of):
 * exp of the mean log; 1 for none. */
CP_API double cp_geomean(const double *v, size_t n);

#ifdef __cplusplus
}
#endif

#endif
