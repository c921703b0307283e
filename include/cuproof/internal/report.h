/*
 * The run's report: report.json (DESIGN.md's contract, schema
 * "cuproof.report/1") and report.html (a self-contained view of it),
 * written and read back. Trace files, Perfetto exports and compare have
 * headers of their own (tracefile.h, perfetto.h, compare.h).
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_REPORT_H
#define CUPROOF_REPORT_H

#include "../export.h"

#include "../result.h"
#include "ranks.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CP_REPORT_SCHEMA "cuproof.report/1"

/* Writes report.json and report.html into `dir` (the report sink's two
 * files). Returns 0, or CP_EIO with cp_last_error naming the file that
 * could not be written. */
CP_API int cp_report_write(const cp_report *r, const char *dir);

/* report.json alone, to `path`. Returns 0, CP_ENOMEM or CP_EIO. */
CP_API int cp_report_json_write(const cp_report *r, const char *path);

/* report.html alone, to `path`. Returns 0, CP_ENOMEM or CP_EIO. */
CP_API int cp_report_html_write(const cp_report *r, const char *path);

/* The HTML view: a self-contained page that needs no network. Returns a
 * malloc'd string, or NULL when out of memory. */
CP_API char *cp_report_html(const cp_report *r);

/*
 * Reads a report.json written by cp_report_write back into r (zeroed
 * first): the run's description and environment, and every case with its
 * checks (and whether each is essential), variants (timing with the timed
 * samples, clocks, verification, series, device memory kept, the traced
 * run's metrics and findings, and a program's ranks; the trace records
 * themselves are in CASE.trace.json), claims and figures. A check's
 * "ok", when true or false, decides whether it passed; a check
 * "inconclusive" reads as an essential one skipped. A field a
 * reader can do without is left empty when absent; a case or check
 * without a name or with an unknown status, a claim with an unknown
 * verdict, a sample that is not a number, or a field of the ranks of the
 * wrong type (or a row naming no host) is an error naming the file, the
 * case and the variant (and the ranks' field). Returns
 * 0; CP_EIO; CP_EPARSE; CP_ENOMEM (r is then empty). Free with
 * cp_report_free.
 */
CP_API int cp_report_read(const char *path, cp_report *r);


/*
 * The terminal's table of a distributed program's ranks, which `cuproof
 * exec` leads its summary with: a heading line, then per rank its host,
 * devices, busy time (ms), idle share, communication under compute
 * (comm_compute_overlap_ratio), exposed communication share and how often
 * it arrived last at the collectives, the straggler marked; then the
 * straggler's line and a line per host whose clock could not be aligned.
 * Each line starts with `indent`. Returns a malloc'd string, or NULL when
 * out of memory.
 */
CP_API char *cp_ranks_text(const cp_ranks *r, const char *indent);

/* The per-collective table of `m` (cp_collective_row), each line led by
 * `indent`: a string the caller frees, or NULL when m has no row (or out
 * of memory). */
CP_API char *cp_collectives_text(const cp_metrics *m, const char *indent);

/* Frees every case of a report from cp_report_read and empties it. */
CP_API void cp_report_free(cp_report *r);

#ifdef __cplusplus
}
#endif

#endif
