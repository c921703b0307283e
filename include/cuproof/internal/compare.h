/*
 * cuproof compare: reports side by side (one or several a side), as text,
 * one JSON object or a self-contained HTML page. One comparison, several
 * outputs: cp_compare_load reads each side's reports once, cp_compare_build
 * fills a cp_comparison (compare.c), and each output is a function of that
 * structure alone: cp_compare_print_text (compare_text.c),
 * cp_compare_print_json (compare_json.c), cp_compare_write_html
 * (compare_html.c).
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_COMPARE_H
#define CUPROOF_COMPARE_H

#include "../error.h"
#include "../export.h"

#include "../result.h"

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How cuproof compare decides (cp_compare_files; what it decides is
 * said above cp_compare_verdict). */
typedef struct cp_compare_options {
    double threshold;  /* a change that matters, as a fraction (0.10) */
    double min_effect; /* smallest change called a change (CP_CMP_MIN_EFFECT, 0.02) */
    /* The change a host-bound variant must exceed (CP_CMP_HOST_THRESHOLD). */
    double host_threshold;
    bool force;        /* count timing regressions even when the reports are incomparable */
    bool json;         /* one JSON object on `out` instead of the table */
} cp_compare_options;

/* One report of a side, as the outputs name it. */
typedef struct cp_cmp_report {
    char path[512]; /* the report.json read (a directory's report.json) */
    char gpu_name[256];
    int driver_version; /* as cudaDriverGetVersion gives it; 0: unknown */
    char profile[8];
    char date[32];
} cp_cmp_report;

/* One run of a variant on one side (the run, not the sample, is
 * the unit a comparison rests on): a pass of `cuproof run --runs K`
 * (cp_run_value), or a whole report whose variant has no passes. */
typedef struct cp_cmp_run {
    size_t report;      /* its report, an index into the side's reports */
    double median_ms;
    double stddev_ms;   /* the report's, for a whole report; NAN for a pass */
    double *samples_ms; /* owned; NULL when the report kept none */
    size_t nsamples;
    /* The GPU's SM clock over the run (the mean of before and after; 0
     * unknown) and the GPU's own busy time in its traced run
     * (cp_metrics_own_ns; 0 untraced): what tells drift from a
     * regression, and the figure of one judged on busy time. */
    double sm_mhz;
    uint64_t own_ns;
    unsigned long long throttle; /* NVML's clocks-event reasons around it (0: none) */
    /* The run's wall-time median, kept beside when the variant is judged
     * on the GPU's time (median_ms and samples_ms are then the GPU's). */
    double wall_median_ms;
} cp_cmp_run;

/* A variant timed on both sides: its verdict and what it rests on. */
typedef struct cp_cmp_variant {
    char case_name[64], variant[64];
    size_t case_index; /* the case's place in the comparison (the text's order) */
    /* true: cp_compare_samples on every run's samples (method "samples");
     * false: the medians against the standard deviations (method
     * "medians", cp_compare_verdict), when a report kept no samples. */
    bool samples;
    double old_median_ms, new_median_ms; /* one run's median, else the median of the runs' */
    /* The times the ratio is of, which the text and the page show beside
     * it so that it can be recomputed: the pooled samples'
     * medians (method samples), the runs' geometric means (method runs),
     * else the medians above. JSON keeps the medians above. */
    double old_shown_ms, new_shown_ms;
    double ratio, ci_low, ci_high, p;    /* NAN where there is none */
    size_t old_samples, new_samples;     /* timed values each side (JSON old_runs, new_runs) */
    cp_cmp_run *old_runs, *new_runs;     /* owned */
    size_t n_old_runs, n_new_runs;
    /* The smallest device share of any report of either side; NAN when a
     * report has no trace of the variant. */
    double device_share;
    bool host_bound;
    /* same, faster, slower, noisy; "single run" when a side has one run
     * (no between-run spread to judge by: never a regression); "drift"
     * for a slowdown that disappears at equal clocks or in device time */
    char verdict[16];
    /* The runs are the unit (both sides >= 2 runs: cp_compare_runs_prior,
     * the comparison's shared spread when the variant fits it; method
     * "runs"); the between-run relative spread of each side; for noisy,
     * the runs a side that would decide (runs_capped: even 50 would not). */
    bool by_runs, moderated;
    double spread_old, spread_new;
    double old_sm_mhz, new_sm_mhz; /* each side's runs' mean SM clock; 0 unknown */
    size_t runs_needed;
    bool runs_capped;
    /* A host-bound change called noisy because a side's runs all come
     * from one report (one invocation): the reports a side that would
     * decide (2); 0 otherwise. */
    size_t reports_needed;
    char why[160];    /* a host-bound verdict's reason, else "" */
    /* The figure the verdict rests on: the GPU's time where both sides
     * measured it and judge on it, else wall time, and why (a case's
     * reason, CP_WALL_ONLY, or the side that has no GPU time).
     * declared_wall: both sides' case judges the variant on wall time,
     * so it is judged at the host threshold only (compare_figure.c). With
     * the GPU's time, each side's wall time (the median of its runs'),
     * shown beside and judged at the host threshold. */
    cp_work_figure judged_on;
    char judged_why[160];
    bool declared_wall;
    /* On the GPU's time, but each run's own busy time (traced) instead of
     * its events: events that hold waits (cp_variant_judged_on_busy). */
    bool by_busy;
    double old_wall_ms, new_wall_ms;
    bool slower;      /* slower by more than the threshold, counted or not */
    bool regression;  /* slower, and the sides are comparable or forced */
} cp_cmp_variant;

/* A check, case status or claim whose result changed. */
typedef struct cp_cmp_change {
    char case_name[64];
    size_t case_index;
    char name[256];        /* the check's name or the claim's text; "" for a case */
    char was[16], now[16]; /* old and new result */
    bool regression;
    /* Why a worse result is not counted (a claim whose passes' values on
     * both sides straddle its bound); "" otherwise. */
    char why[160];
} cp_cmp_change;

/* A finding of the traced run's analysis that one side raised and the
 * other did not. A finding raised in every run (report) of the new side
 * and in none of the old's, two or more a side, is a regression; with
 * fewer it is only said: findings such as gpu_gaps flip between
 * identical single runs (host-threads' streams-32 in two of three
 * pairs of the H100's ci runs). */
typedef struct cp_cmp_finding {
    char case_name[64], variant[64];
    size_t case_index;
    char name[64];
    bool raised; /* true: new raised it; false: new cleared it */
    size_t old_runs, new_runs; /* traced reports each side */
    bool regression;
} cp_cmp_finding;

/* A trace metric of a variant that moved between the sides (its
 * overlap, concurrency, efficiency, counts): each side's mean over its
 * runs (reports) and their spread. It moved when the change exceeds both
 * 3 standard errors of the difference (two runs or more a side) and a
 * tenth of the old value (0.05 for a ratio); with one run a side only the
 * latter, and it is said to rest on single runs. A move towards failing a
 * declared expectation of the case on it (a check named "VARIANT: METRIC
 * OP N") is a regression, said with the expectation. */
typedef struct cp_cmp_metric {
    char case_name[64], variant[64];
    size_t case_index;
    char metric[48];
    double was, now;           /* each side's mean */
    double spread_old, spread_new; /* each side's standard deviation (0 for one run) */
    size_t n_old, n_new;
    bool single_run;           /* a side has one run: no spread to judge by */
    bool regression;
    char towards[160];         /* the expectation it moves towards failing; "" */
} cp_cmp_metric;

/* A declared expectation that the new side's runs hold (or fail) by less
 * than CP_MARGIN_SPREADS of their own spread between runs: the next run
 * can flip it (cuproof/internal/margin.h). Two runs or more. */
typedef struct cp_cmp_tight {
    char case_name[64], variant[64];
    size_t case_index;
    char check[160];
    double mean, sd, spreads;
    size_t runs;
} cp_cmp_tight;

typedef struct cp_cmp_reason {
    char text[768];
} cp_cmp_reason;

/* One comparison, whatever prints it. Every list is owned; free with
 * cp_comparison_free. */
/* The verdicts a timed variant can get, as cp_comparison counts them
 * (cp_cmp_summary_verdict names each). */
enum {
    CP_CMP_COUNT_SLOWER,
    CP_CMP_COUNT_FASTER,
    CP_CMP_COUNT_DRIFT,
    CP_CMP_COUNT_NOISY,
    CP_CMP_COUNT_SINGLE_RUN,
    CP_CMP_COUNT_SAME,
    CP_CMP_NVERDICTS
};

typedef struct cp_comparison {
    cp_cmp_report *old_reports, *new_reports;
    size_t n_old_reports, n_new_reports;
    /* Why timings cannot be compared (another GPU, driver or profile,
     * across the sides or among one side's reports); comparable when none. */
    cp_cmp_reason *reasons;
    size_t nreasons;
    bool comparable, forced;
    double threshold, min_effect, host_threshold;
    cp_cmp_variant *variants;
    size_t nvariants; /* 0: no timed variant in common, no timing compared */
    cp_cmp_change *checks, *cases, *claims;
    size_t nchecks, ncases, nclaims;
    cp_cmp_finding *findings;
    size_t nfindings;
    cp_cmp_metric *metrics; /* trace metrics that moved */
    size_t nmetrics;
    cp_cmp_tight *tight; /* expectations within their spread (warned about) */
    size_t ntight;
    size_t ncase_names; /* case_index runs below this */
    int regressions;
    /* The sides ran at different SM clocks (their runs' medians more than
     * 5% apart): said beside the verdicts; "" when not, or unknown. */
    char clock_warning[192];
    /* The sides' timing processes ran with different address-space
     * layouts (fixed or random, internal/layout.h); "" when not, or
     * unknown. */
    char layout_warning[400];
    /* The timed variants' verdicts counted, in cp_cmp_summary_verdict's
     * order, and what the noisy ones rest on: of the variants compared by
     * their runs (runs_compared), the median of each one's larger side's
     * spread between runs; of the noisy ones that name the runs a side
     * that would decide (noisy_with_runs), the median of those runs (0:
     * none; median_runs_capped: that median is CP_RUN_MAX_RUNS or more);
     * noisy_note says so in words when some variant is noisy and some
     * was compared by runs ("" otherwise). Computed once
     * (cp_compare_build); every output prints them. */
    size_t verdict_counts[CP_CMP_NVERDICTS];
    size_t runs_compared, noisy_with_runs, median_runs_needed;
    bool median_runs_capped;
    double median_spread;
    char noisy_note[320];
    /* The figures the verdicts rest on (cp_cmp_variant.judged_on),
     * counted: the GPU's time; wall time by the case's choice; wall time
     * only, where a side has no GPU time (a report before schema 1.14);
     * and in words, for every output. */
    size_t on_gpu, on_busy, on_declared_wall, wall_only; /* on_busy: of on_gpu, by_busy */
    char figure_note[320];
} cp_comparison;

/* The verdict that cp_comparison.verdict_counts[i] counts (i below
 * CP_CMP_NVERDICTS: slower, faster, drift, noisy, single run, same), the
 * order the outputs list them in; NULL past the end. Inline, so that the
 * outputs need not call into compare.c, which calls them (layers_test). */
static inline const char *cp_cmp_summary_verdict(size_t i)
{
    static const char *const order[CP_CMP_NVERDICTS] = {
        [CP_CMP_COUNT_SLOWER] = "slower", [CP_CMP_COUNT_FASTER] = "faster",
        [CP_CMP_COUNT_DRIFT] = "drift",   [CP_CMP_COUNT_NOISY] = "noisy",
        [CP_CMP_COUNT_SINGLE_RUN] = "single run", [CP_CMP_COUNT_SAME] = "same"};
    return i < CP_CMP_NVERDICTS ? order[i] : NULL;
}

/* One side: its reports (read by cp_compare_load, or built in memory) and
 * the paths they came from. */
typedef struct cp_compare_side {
    const cp_report *reports;
    const char *const *paths;
    size_t n;
} cp_compare_side;

/*
 * Reads n reports with cp_report_read into *reports (a calloc'd array of
 * n; free with cp_compare_unload): a path that is a directory means its
 * report.json, and *resolved (n strings, owned by the array's free too;
 * may be NULL) gets the paths read. A report.json's check whose "ok" is
 * true or false is passed or failed whatever its status, as compare has
 * always read it. With `bad` NULL every report must be read: returns 0,
 * CP_EINVAL for n == 0, cp_report_read's errors (nothing loaded then) or
 * CP_ENOMEM. With `bad`, a report that cannot be read is added to it (its
 * message names the file, and the line and column of bad JSON) and left
 * out, the others kept in order: so that a command given several names
 * each bad one and still compares the rest. *loaded (may be NULL) gets
 * how many were read; free with cp_compare_unload(..., *loaded).
 */
CP_API int cp_compare_load(const char *const *paths, size_t n, cp_report **reports,
                           char ***resolved, size_t *loaded, cp_errors *bad);
CP_API void cp_compare_unload(cp_report *reports, char **resolved, size_t n);

/*
 * The comparison of two sides (cuproof compare), into *out (zeroed
 * first). Comparability: the first reports of the two sides, and each
 * report of a side against that side's first, must share GPU name, driver
 * version and profile; otherwise the reasons say which differ and timing
 * verdicts count as no regression unless opt->force. Each report is one
 * run of each variant it holds, or as many as its variant's passes
 * (cp_variant_result.runs). Per case and variant timed on both sides (in
 * the order of the old side's cases): the verdict as the contract below
 * says, from every run's samples pooled (the run-level test,
 * cp_compare_runs, plugs in where both sides have two runs or more). Then
 * the checks, case statuses and claims that changed (a side's result is
 * the worst of its reports': a failure in any counts), and the findings
 * raised or cleared. No variant timed on both sides is no error: nvariants
 * is 0 and the rest is compared. `opt` may be NULL (its defaults).
 * Returns 0, CP_EINVAL for an empty side, or CP_ENOMEM (*out empty).
 */
CP_API int cp_compare_build(const cp_compare_side *old_side, const cp_compare_side *new_side,
                            const cp_compare_options *opt, cp_comparison *out);

/* cp_compare_load of each side, then cp_compare_build: each report read
 * once. With `bad` (may be NULL: all or nothing), the reports that cannot
 * be read are left out and added to it, and the rest compared; a side left
 * with none returns the first one's error, every one named
 * (cp_errors_finish). Returns their errors. */
CP_API int cp_compare_files(const char *const *old_paths, size_t n_old,
                            const char *const *new_paths, size_t n_new,
                            const cp_compare_options *opt, cp_comparison *out,
                            cp_errors *bad);

CP_API void cp_comparison_free(cp_comparison *c);

/* The table (compare_text.c): the reasons the sides are incomparable, one
 * line per variant (case, variant, old and new ms, ratio, interval, p and
 * verdict; a column of the runs each side rests on when a side has more
 * than one), then per case the checks, case status and claims that
 * changed, the findings raised or cleared; "no timing compared" when no
 * variant is timed on both sides. Returns 0. */
CP_API int cp_compare_print_text(const cp_comparison *c, FILE *out);

/* The comparison as one JSON object (compare_json.c; its keys are
 * listed below). Returns 0 or CP_ENOMEM. */
CP_API int cp_compare_print_json(const cp_comparison *c, FILE *out);

/* The page (compare_html.c) into `html_path`, as said below. Returns 0, CP_ENOMEM, or CP_EIO naming the file. */
CP_API int cp_compare_write_html(const cp_comparison *c, const char *html_path);

/*
 * What cuproof compare decides, over the cp_comparison that cp_compare_files
 * builds and the table, the JSON and the page print. First comparability:
 * another GPU name, driver version or profile makes the reports
 * "incomparable" (said at the top, with the reasons); their timing
 * verdicts are then informational and count as no regression unless
 * opt->force. Per case and variant in both: when both sides carry
 * timing.samples_ms, cp_compare_samples (compare_stats.h) gives the ratio
 * of medians, its 95% bootstrap interval, the Mann-Whitney p and a verdict
 * (same, faster, slower, noisy); else the medians and cp_compare_verdict,
 * marked "medians only". A variant is host-bound when either report's
 * traced run kept the GPU busy for less than CP_CMP_DEVICE_SHARE of its
 * timed median, or when a report has no trace of it to tell: its slower
 * or faster verdict becomes "noisy" unless the change exceeds
 * opt->host_threshold, since runs of one process cannot show how much
 * host-bound timings move between processes. Then checks, case statuses and claims whose
 * result changed. *regressions counts variants "slower" with ratio - 1 >
 * threshold (when they count), checks and case statuses that went from
 * passed to failed or inconclusive (a case only when none of its checks
 * did), and claims from confirmed to refuted or inconclusive. With
 * opt->json, `out` gets one object: comparable, forced, reasons,
 * threshold, min_effect, host_threshold, variants [{case, variant, method ("samples" or
 * "medians"), old_median_ms, new_median_ms, ratio, ci_low, ci_high, p
 * (null when medians only), old_runs, new_runs, device_share (the smaller
 * of the two, null when untraced), host_bound, verdict, why (a host-bound
 * verdict's reason, else ""), regression, old_run_count, new_run_count
 * (the runs the verdict rests on: reports, or passes of `cuproof run
 * --runs K`), old_run_medians_ms, new_run_medians_ms}],
 * checks, cases and claims [{case, check|claim, old, new, regression}],
 * regressions, timing_compared (false when no variant is timed in both),
 * old_reports, new_reports (the paths read), findings [{case, variant,
 * finding, change: raised or cleared}]. Reports that share no timed
 * variant (cuproof exec without --repeat) compare the rest: a report
 * against itself is always 0 regressions. Returns 0; CP_EIO or CP_EPARSE
 * for a file that cannot be read or is not a report; CP_ENOMEM. The
 * table, the JSON and the page print one cp_comparison (cp_compare_files).
 */

/*
 * The page (cuproof compare --html, cp_compare_write_html): one
 * self-contained HTML page: no script and nothing fetched.
 * It is drawn from the cp_comparison the table and the JSON print
 * (opt->json is ignored), so they cannot disagree, and shows each
 * report's file, GPU, driver, profile and date; whether they are
 * comparable, with the reasons; the thresholds; the count of each verdict
 * and of regressions; the regressions, then the other changed checks, case
 * statuses and claims; an SVG chart of every variant's ratio new / old and
 * 95% interval on a log axis from 0.5 to 2 (ratios beyond it drawn at its
 * edge), coloured by verdict; and the table of variants, regressions
 * first, with the runs each rests on. Names from the reports are escaped.
 */
/* The verdict on one variant: "same" when the relative change lies within
 * the noise (the larger relative standard deviation of the two, at least
 * 2%), else "faster" or "slower"; the change and the noise come back too. */
CP_API const char *cp_compare_verdict(double old_ms, double old_sd, double new_ms, double new_sd,
                               double *change, double *noise);

#ifdef __cplusplus
}
#endif

/* A variant's new and old times as the text and the page show them
 * beside its ratio: old_shown_ms and new_shown_ms (the medians where a
 * comparison left them unset), with digits enough that new / old,
 * rounded to ratio_decimals, is the ratio shown (cuproof/units.h). */
void cp_cmp_shown_times(const cp_cmp_variant *v, int ratio_decimals, char *t_new, char *t_old,
                        size_t size);

#endif
