/*
 * cuproof compare: two report.json files side by side, as text, one JSON
 * object or a self-contained HTML page (compare.c, compare_html.c).
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_COMPARE_H
#define CUPROOF_COMPARE_H

#include "../export.h"

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How cuproof compare decides (cp_compare_reports_opts). */
typedef struct cp_compare_options {
    double threshold;  /* a change that matters, as a fraction (0.10) */
    double min_effect; /* smallest change called a change (CP_CMP_MIN_EFFECT, 0.02) */
    /* The change a host-bound variant must exceed (CP_CMP_HOST_THRESHOLD). */
    double host_threshold;
    bool force;        /* count timing regressions even when the reports are incomparable */
    bool json;         /* one JSON object on `out` instead of the table */
} cp_compare_options;

/*
 * Compares two report.json files (cuproof compare). First comparability:
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
 * verdict's reason, else ""), regression}],
 * checks, cases and claims [{case, check|claim, old, new, regression}],
 * regressions. Returns 0; CP_EIO or CP_EPARSE for a file that cannot be
 * read or is not a report; CP_EINVAL when the reports share no timed
 * variant; CP_ENOMEM.
 */
CP_API int cp_compare_reports_opts(const char *old_path, const char *new_path,
                                   const cp_compare_options *opt, FILE *out, int *regressions);

/*
 * The same comparison as one self-contained HTML page written to
 * `html_path` (cuproof compare --html): no script and nothing fetched.
 * It is drawn from the document cp_compare_reports_opts prints with
 * opt->json (opt->json itself is ignored), so the two cannot disagree, and
 * shows each report's file, GPU, driver, profile and date; whether they are
 * comparable, with the reasons; the thresholds; the count of each verdict
 * and of regressions; the regressions, then the other changed checks, case
 * statuses and claims; an SVG chart of every variant's ratio new / old and
 * 95% interval on a log axis from 0.5 to 2 (ratios beyond it drawn at its
 * edge), coloured by verdict; and the table of variants, regressions
 * first. Names from the reports are escaped. *regressions is counted as by
 * cp_compare_reports_opts; `opt` may be NULL (its defaults). Returns 0;
 * that function's errors; CP_EIO or CP_EPARSE when a report cannot be read
 * again; CP_ENOMEM; CP_EIO when the page cannot be written (cp_last_error
 * names the file). Nothing is written on an error before that.
 */
CP_API int cp_compare_reports_html(const char *old_path, const char *new_path,
                                   const cp_compare_options *opt, const char *html_path,
                                   int *regressions);

/* cp_compare_reports_opts with `threshold`, the default minimum effect,
 * the table and no --force. */
CP_API int cp_compare_reports(const char *old_path, const char *new_path, double threshold, FILE *out,
                       int *regressions);

/* The verdict on one variant: "same" when the relative change lies within
 * the noise (the larger relative standard deviation of the two, at least
 * 2%), else "faster" or "slower"; the change and the noise come back too. */
CP_API const char *cp_compare_verdict(double old_ms, double old_sd, double new_ms, double new_sd,
                               double *change, double *noise);

#ifdef __cplusplus
}
#endif

#endif
