/*
 * Statistics for comparing two sets of timed runs (cuproof compare): the
 * Mann-Whitney U rank test, a bootstrap confidence interval for the ratio
 * of medians, the Hodges-Lehmann shift, and the verdict built from them
 * (docs/compare.md, "How a verdict is computed"). libc and libm only.
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_COMPARE_STATS_H
#define CUPROOF_COMPARE_STATS_H

#include "../export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults that cuproof compare uses. */
#define CP_CMP_ALPHA 0.01          /* the rank test's significance level */
#define CP_CMP_MIN_SAMPLES 5       /* fewer on either side: "noisy" */
#define CP_CMP_MIN_EFFECT 0.02     /* smallest change of the median called a change */
/* The same, for a variant judged on the GPU's time (CUDA events): its
 * samples within a run spread by 0.5% or less, so a 1% change is one it
 * can resolve; with 2%, a 5% change at 3 runs a side of 1% spread is
 * missed one time in ten (tests/test_compare_figure.c). */
#define CP_CMP_GPU_MIN_EFFECT 0.01
/* The same, for a variant judged on its traced runs' own busy time (one
 * traced run a pass, no samples within it): the passes of one invocation
 * sit on one level that the next invocation need not share. Two
 * recordings of three invocations of the ci profile on the H200, nothing
 * changed (samples/h200-gpu-time): rtc-unroll unroll-4 4.97 against
 * 4.86 us (2.2%, p 0.0005 at 3 runs a side, each invocation's passes on
 * one level), the most 3.2% (indexing mask-empty) and 2.8%
 * (custom-elementwise piecewise-scale); more only where one pass stood
 * apart (elementwise-vs-handwritten, 5.3%: noisy, its interval wide). */
#define CP_CMP_BUSY_MIN_EFFECT 0.04
#define CP_CMP_RESAMPLES 2000      /* bootstrap resamples */
#define CP_CMP_LEVEL 0.95          /* confidence level of the interval */
#define CP_CMP_EXACT_BELOW 8       /* exact rank test when the smaller side is below this */
/* A variant whose traced run kept the GPU busy for less than this share
 * of its timed median is host-bound: its time is set by the CPU (launch
 * calls, synchronisation, driver work), which differs between processes
 * on the same machine by far more than the runs of one process show
 * (identical runs on an H100 differed by up to 1.63x, against 1.02x for
 * variants that kept the GPU busy 90% of the time or more). */
#define CP_CMP_DEVICE_SHARE 0.85
/* The share of a variant's events that its traced run's own busy time
 * must reach for the events to be its figure (cp_variant_judged_on_busy):
 * then they agree with CUPTI's account of the work within 5%. Below it
 * they hold waits (on the H200, conway-shared's events were 2.15 ms
 * against CUPTI's 1.94 ms span of the same runs' work, 10% more). */
#define CP_CMP_EVENTS_SHARE 0.95
/* The change a host-bound variant must exceed to be called slower or
 * faster (a fraction: 1.0 is twice as slow); below it, "noisy". */
#define CP_CMP_HOST_THRESHOLD 1.0

typedef enum cp_cmp_verdict {
    CP_CMP_SAME = 0,
    CP_CMP_FASTER,
    CP_CMP_SLOWER,
    CP_CMP_NOISY,
    /* Run-level comparisons only (run_stats.h): a side has one run, so the
     * spread between runs cannot be estimated and no change is called.
     * cp_compare_samples never gives it. */
    CP_CMP_SINGLE_RUN
} cp_cmp_verdict;

/* What cp_compare_samples found. */
typedef struct cp_cmp_result {
    cp_cmp_verdict verdict;
    double ratio;           /* median(new) / median(old) */
    double ci_low, ci_high; /* percentile bootstrap interval of the ratio */
    double p;               /* two-sided Mann-Whitney p-value */
    double shift_ms;        /* Hodges-Lehmann estimate of new - old */
    size_t n_old, n_new;
} cp_cmp_result;

/* "same", "faster", "slower", "noisy", "single run"; "unknown" for another
 * value. */
CP_API const char *cp_cmp_verdict_name(cp_cmp_verdict v);

/*
 * Two-sided Mann-Whitney U test of a against b. *u (may be NULL) receives
 * U of `a`: the number of pairs (a_i, b_j) with a_i > b_j, ties counting
 * one half. *p receives the two-sided p-value:
 *  - when the smaller sample has fewer than CP_CMP_EXACT_BELOW values and
 *    na + nb <= 64: exactly, from the permutation distribution of the rank
 *    sum of the smaller sample given the observed midranks (so ties are
 *    handled exactly too): p = min(1, 2 min(P(R <= r), P(R >= r)));
 *  - otherwise by the normal approximation with the tie-corrected variance
 *    n_a n_b / 12 ((N + 1) - sum(t^3 - t) / (N (N - 1))) and a continuity
 *    correction of 1/2; p = 1 when every value ties.
 * Returns 0, or CP_EINVAL when a side is empty, a pointer is NULL or a
 * value is not finite, or CP_ENOMEM. The inputs are not modified.
 */
CP_API int cp_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u,
                           double *p);

/*
 * Percentile bootstrap interval for median(new) / median(old): `resamples`
 * times, both sides are resampled with replacement (each on its own, the
 * same sizes) and the ratio of their medians taken; *low and *high are the
 * (1 - level) / 2 and (1 + level) / 2 quantiles of those ratios (linear
 * interpolation between order statistics), *ratio (may be NULL) the ratio
 * of the samples' own medians. The random numbers come from a splitmix64
 * generator started at `seed`: the same inputs and seed give the same
 * interval, on every machine. Medians are the mean of the two middle
 * values for an even count. Returns 0, CP_EINVAL when a side is empty, a
 * value is not finite and > 0, resamples < 1 or level is not in (0, 1),
 * or CP_ENOMEM.
 */
CP_API int cp_median_ratio_ci(const double *old_ms, size_t n_old, const double *new_ms,
                              size_t n_new, uint64_t seed, int resamples, double level,
                              double *ratio, double *low, double *high);

/*
 * Hodges-Lehmann estimate of the shift from a to b: the median of every
 * difference b_j - a_i. Returns 0, CP_EINVAL (empty side, NULL, not
 * finite) or CP_ENOMEM.
 */
CP_API int cp_hodges_lehmann(const double *a, size_t na, const double *b, size_t nb,
                             double *shift);

/*
 * The verdict on old against new timed runs (milliseconds, each > 0).
 * `threshold` is the change (a fraction, e.g. 0.10) that matters, and
 * `min_effect` (e.g. 0.02) the smallest change of the median that is
 * called a change at all. In this order:
 *  - noisy:  fewer than CP_CMP_MIN_SAMPLES runs on either side;
 *  - slower: p < CP_CMP_ALPHA and ci_low > 1 + min_effect (the whole
 *            interval lies above 1 + min_effect);
 *  - faster: p < CP_CMP_ALPHA and ci_high < 1 - min_effect;
 *  - noisy:  the interval is too wide to tell a change of `threshold`
 *            from none: ci_high - ci_low > 2 threshold (which is the case
 *            whenever it holds both 1 - threshold and 1 + threshold);
 *  - same:   otherwise.
 * The interval is cp_median_ratio_ci's at CP_CMP_LEVEL with
 * CP_CMP_RESAMPLES resamples and `seed`; p is cp_mann_whitney's. Every
 * field of *out is filled for every verdict (with fewer than two runs the
 * interval may be a point). A regression, for cuproof compare, is
 * "slower" with ratio - 1 > threshold. Returns 0, CP_EINVAL (empty side,
 * a value not finite and > 0, threshold or min_effect negative or not
 * finite) or CP_ENOMEM.
 */
CP_API int cp_compare_samples(const double *old_ms, size_t n_old, const double *new_ms,
                              size_t n_new, double threshold, double min_effect, uint64_t seed,
                              cp_cmp_result *out);

/*
 * The share of `median_ms` (a variant's timed median: its wall time's or
 * its GPU time's) that is the GPU's own busy time in its traced run
 * (cp_variant_own_ns); NAN without a trace. Below CP_CMP_DEVICE_SHARE
 * that figure holds waits: the host's, or the GPU's between its work.
 */
struct cp_variant_result;
CP_API double cp_variant_device_share(const struct cp_variant_result *v, double median_ms);

/* The device time a variant's traced run kept kernels and copies busy,
 * summed: a pass's device_busy_ns in report.json (0 untraced). */
CP_API uint64_t cp_variant_busy_ns(const struct cp_variant_result *v);

/* The GPU's own busy time in a traced run: its span less its idle time
 * and less its pageable copies' time, which is the CPU's staging them
 * (indexing centre on the H200: a pageable copy of 0.33 ms beside 25 us
 * of kernels; its passes' busy time 0.32 to 0.49 ms, their own time
 * within 0.2%); a report from before pageable_copy_sum_ns counts all copy
 * time as theirs when it has any. What the busy-time figure and drift
 * rest on, and what cp_variant_device_share divides. cp_variant_own_ns:
 * a variant's, 0 untraced; cp_pass_own_ns: a pass's (cp_run_value), its
 * traced run's, or for a pass from before its metrics were kept (schema
 * 1.9) its busy time. */
struct cp_metrics;
struct cp_run_value;
CP_API uint64_t cp_metrics_own_ns(const struct cp_metrics *m);
CP_API uint64_t cp_variant_own_ns(const struct cp_variant_result *v);
CP_API uint64_t cp_pass_own_ns(const struct cp_run_value *r);

/*
 * The figure rules compare and ab share, on one report's variant:
 * judged_on_gpu: its case judges it on the GPU's time and it measured it;
 * declared_wall: its case judges it on wall time, saying why (not a
 * report before GPU time, nor a result the runner did not time);
 * judged_on_busy: judged on the GPU's time, ungated, and its traced run
 * kept the GPU busy with its own work (cp_metrics_own_ns) less than
 * CP_CMP_EVENTS_SHARE of its events' median: the events hold time the
 * GPU waited for the host (launches one at a time, synchronous and
 * pageable copies), which moves between processes where the work does
 * not (indexing centre on the H200: events 0.49 ms, its own work 25 us).
 * Its GPU figure is then each run's own busy time (untraced: false,
 * nothing to take it from). A gated variant's events are its figure.
 */
CP_API bool cp_variant_judged_on_gpu(const struct cp_variant_result *v);
CP_API bool cp_variant_declared_wall(const struct cp_variant_result *v);
CP_API bool cp_variant_judged_on_busy(const struct cp_variant_result *v);

/* The smallest change called a change: on the GPU's events,
 * CP_CMP_GPU_MIN_EFFECT when it is less than min_effect; on its own busy
 * time, no less than CP_CMP_BUSY_MIN_EFFECT; else min_effect. */
static inline double cp_cmp_min_effect(bool on_gpu, bool by_busy, double min_effect)
{
    if (on_gpu && by_busy)
        return CP_CMP_BUSY_MIN_EFFECT > min_effect ? CP_CMP_BUSY_MIN_EFFECT : min_effect;
    return on_gpu && CP_CMP_GPU_MIN_EFFECT < min_effect ? CP_CMP_GPU_MIN_EFFECT : min_effect;
}

#ifdef __cplusplus
}
#endif

#endif
