/*
 * Writers that turn a run into files: report.json (DESIGN.md's contract,
 * schema "cuproof.report/1"), report.html (a view of it), and trace files
 * ("cuproof.trace/1": every activity of every traced variant) that tests
 * replay through the analysis.
 */
#ifndef CUPROOF_REPORT_H
#define CUPROOF_REPORT_H

#include "export.h"

#include "result.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CP_REPORT_SCHEMA "cuproof.report/1"
#define CP_TRACE_SCHEMA "cuproof.trace/1"

/* Writes report.json and report.html into `dir`. Returns 0, or CP_EIO with
 * cp_last_error naming the file that could not be written. */
CP_API int cp_report_write(const cp_report *r, const char *dir);

/* Writes `text` to `path`. Returns 0 or CP_EIO (naming the path). */
CP_API int cp_write_file(const char *path, const char *text);

/* DIR/CASE.VARIANT.perfetto.json: one traced run as a Chrome trace
 * (cp_chrome_trace) titled after the case and variant. Returns 0,
 * CP_ENOMEM or CP_EIO (naming the file). */
CP_API int cp_perfetto_write(const char *dir, const char *case_name, const char *variant,
                             const cp_trace *t);

/* DIR/CASE.VARIANT.perfetto-trace: the same run in Perfetto's native
 * protobuf format (perfetto.protos.Trace), for traces too large for JSON:
 * under a third of the Chrome trace's size, written packet by packet
 * through a bounded buffer. It shows what the Chrome trace shows: per
 * traced process (or, for a case's own trace, a track titled after the
 * case and variant) the CUDA API calls, the NVTX ranges and per (device,
 * context) a lane per stream; a slice per record with its bytes, copy
 * memory, grid, block and graph as annotations; flows from launches to
 * their work. Returns 0, CP_ENOMEM or CP_EIO (naming the file). */
CP_API int cp_perfetto_pb_write(const char *dir, const char *case_name, const char *variant,
                                const cp_trace *t);

/* Above this many records a traced run's Perfetto file is written in the
 * protobuf format: its Chrome trace would take over 20 MB, which the JSON
 * importers of Perfetto and chrome://tracing read slowly and, by a few
 * hundred MB, not at all. */
#define CP_PERFETTO_PROTO_RECORDS 200000

/* The suffix of the Perfetto file that `cuproof run` and `exec` write for
 * `t`: "perfetto-trace" past CP_PERFETTO_PROTO_RECORDS, else "perfetto.json". */
CP_API const char *cp_perfetto_suffix(const cp_trace *t);

/* DIR/CASE.VARIANT.SUFFIX in the format cp_perfetto_suffix names. */
CP_API int cp_perfetto_write_auto(const char *dir, const char *case_name, const char *variant,
                                  const cp_trace *t);

/* The HTML view: a self-contained page that needs no network. Returns a
 * malloc'd string, or NULL when out of memory. */
CP_API char *cp_report_html(const cp_report *r);

/* A page of timelines drawn from recorded trace files (cuproof timeline),
 * with the same drawing as report.html. Returns a malloc'd string, or NULL
 * when out of memory. */
typedef struct cp_trace_file cp_trace_file;
CP_API char *cp_trace_files_html(const cp_trace_file *files, size_t n);

/* Writes the traces of a case's traced variants, recorded on `device` (its
 * name), to `path`. Returns 0, CP_ENOMEM or CP_EIO. */
CP_API int cp_trace_file_write(const cp_case_result *c, const char *device, const char *path);

/* One variant of a recorded trace file: its trace and what its run
 * measured itself. */
typedef struct cp_trace_variant {
    char name[64];
    cp_trace trace;
    cp_series *series;
    size_t nseries, series_cap;
} cp_trace_variant;

/* A recorded trace file read back: one trace per variant. */
struct cp_trace_file {
    char case_name[64];
    char device[256];
    cp_trace_variant *variants;
    size_t nvariants, variants_cap;
};

/*
 * Parses a trace file. Returns 0, CP_EIO when it cannot be read, or
 * CP_EPARSE when it is not JSON, has another schema, or a record misses a
 * field or has an unknown kind (cp_last_error says which and where).
 */
CP_API int cp_trace_file_read(const char *path, cp_trace_file *out);
CP_API int cp_trace_file_parse(const char *text, cp_trace_file *out);
CP_API void cp_trace_file_free(cp_trace_file *f);

/*
 * One traced run in the Chrome trace event format, for ui.perfetto.dev and
 * chrome://tracing: a process per (device, context) with a thread per
 * stream, the host's CUDA API calls and NVTX phases on their own threads,
 * "X" slices (copies with bytes and GB/s), and launch-to-work flows by
 * correlation id. `title` names the host process. Returns a malloc'd
 * string, or NULL (CP_ENOMEM in cp_last_error).
 */
CP_API char *cp_chrome_trace(const cp_trace *t, const char *title);

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

/*
 * Reads a report.json written by cp_report_write back into r (zeroed
 * first): the run's description and environment, and every case with its
 * checks (and whether each is essential), variants (timing with the timed
 * samples, clocks, verification, series, device memory kept, and the
 * traced run's metrics and findings; the trace records themselves are in
 * CASE.trace.json), claims and figures. A field a reader can do without
 * is left empty when absent; a case or check without a name or with an
 * unknown status, a claim with an unknown verdict, or a sample that is not
 * a number is an error naming the file, the case and the variant. Returns
 * 0; CP_EIO; CP_EPARSE; CP_ENOMEM (r is then empty). Free with
 * cp_report_free.
 */
CP_API int cp_report_read(const char *path, cp_report *r);

/* Frees every case of a report from cp_report_read and empties it. */
CP_API void cp_report_free(cp_report *r);

/* Reads a whole file into a malloc'd, NUL-terminated string; NULL with
 * cp_last_error set when it cannot. */
CP_API char *cp_read_file(const char *path);

#ifdef __cplusplus
}
#endif

#endif
