/*
 * One session, many sinks. A session collects the results of a run (case
 * results from `cuproof run`, later a traced program from `cuproof exec`
 * or recorded traces from a replay) into one report, and hands each result
 * to every sink as it arrives and the whole report at the end. Where the
 * results come from is the caller's business; where they go is the sinks':
 * report.json and report.html, per-case trace and Perfetto files, the
 * terminal's progress lines, or a user's own sink.
 *
 *   cp_session *s = cp_session_new();
 *   cp_report *r = cp_session_report(s);   // fill env, profile, tracing
 *   cp_session_add_sink(s, cp_sink_progress(stdout, n));
 *   cp_session_add_sink(s, cp_sink_traces(dir));
 *   cp_session_add_sink(s, cp_sink_report(dir));
 *   while a case runs: cp_session_on_run(s, p);       // from cp_run_opts.on_run
 *   for each case: cp_session_add_case(s, &result);   // takes the result
 *   cp_session_close(s);                              // sinks finish
 *   cp_session_free(s);
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_SESSION_H
#define CUPROOF_SESSION_H

#include "../export.h"
#include "progress.h"
#include "../result.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A sink: what it does with each result and with the whole report. Any
 * hook may be NULL. A hook returns 0 or a negative code with
 * cp_last_error naming the problem (the file it could not write); the
 * session keeps calling the other sinks and reports the first failure.
 * `on_run` hears each run of the case under way (cp_session_on_run) and
 * returns nothing: progress is shown where it can be, never an error.
 * `release` frees `data` when the session is freed. */
typedef struct cp_sink {
    const char *name;
    int (*add_case)(void *data, const cp_report *r, const cp_case_result *c);
    void (*on_run)(void *data, const cp_run_progress *p);
    int (*close)(void *data, const cp_report *r);
    void (*release)(void *data);
    void *data;
} cp_sink;

typedef struct cp_session cp_session;

/* A session with an empty report: the tool's version and the date (UTC)
 * are filled in. NULL when out of memory. */
CP_API cp_session *cp_session_new(void);

/* The session's report, for the caller to describe the run (environment,
 * profile, repeat, tracing) before adding results. Owned by the session. */
CP_API cp_report *cp_session_report(cp_session *s);

/* Adds a sink; a sink whose name is NULL is refused (a built-in sink that
 * could not be made). Returns 0, CP_EINVAL or CP_ENOMEM; the sink is
 * released on failure. */
CP_API int cp_session_add_sink(cp_session *s, cp_sink sink);

/* Appends a case result to the report, taking what it owns (traces,
 * metrics, series): `c` is left empty. Then hands it to every sink.
 * Returns 0, CP_ENOMEM (the result is then freed), or the first sink's
 * error. */
CP_API int cp_session_add_case(cp_session *s, cp_case_result *c);

/* Hands the progress of the case under way (what the runner's on_run hook
 * hears, progress.h) to every sink's on_run hook. As with
 * cp_session_add_case, one thread at a time: the session takes no lock,
 * and `cuproof run` runs its cases one after another even over several
 * GPUs. */
CP_API void cp_session_on_run(cp_session *s, const cp_run_progress *p);

/* Counts of the report's cases by status. */
CP_API void cp_session_counts(const cp_session *s, size_t *passed, size_t *failed,
                              size_t *skipped, size_t *inconclusive);

/* The line that closes run, test and replay: the cases counted by status
 * ("1 case", "21 cases") and, with out_dir, where the report is. */
CP_API void cp_session_print_counts(const cp_session *s, const char *out_dir, FILE *f);

/* Hands the whole report to every sink. Returns 0 or the first sink's error. */
CP_API int cp_session_close(cp_session *s);

/* Frees the report, its results and the sinks. Accepts NULL. */
CP_API void cp_session_free(cp_session *s);

/* Built-in sinks. Each returns a sink, or one with a NULL name when out
 * of memory (cp_session_add_sink then refuses it). */

/* report.json and report.html in `dir`, at close. */
CP_API cp_sink cp_sink_report(const char *dir);

/* For every case with a traced variant: DIR/CASE.trace.json, and a Chrome
 * trace per traced variant, DIR/CASE.VARIANT.perfetto.json. */
CP_API cp_sink cp_sink_traces(const char *dir);

/* One line per case on `out` as it arrives ("[i/total] status name ...",
 * with every failed check under it). While a case runs, when `out` is a
 * terminal and CUPROOF_PROGRESS is not "plain": one line rewritten in
 * place, at most 10 times a second ("[i/total] case  variant (j/n)  timed
 * run r/m  4.2 s"), cleared before the case's line. Otherwise nothing per
 * run, and one line for a variant that took more than 10 s ("[i/total]
 * case  variant: 50 timed runs in 12.3 s (stopped by noise)"). */
CP_API cp_sink cp_sink_progress(FILE *out, size_t total);

#ifdef __cplusplus
}
#endif

#endif
