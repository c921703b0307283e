/*
 * Units and names as people read them: the one table that the terminal,
 * report.html, the compare outputs and the timeline exports share for
 * durations (µs below 1 ms, three significant digits), ratios ("43.0×",
 * computable from the times shown beside them), shares (percentages),
 * counts (a unit that agrees: "1 kernel", "2 kernels"), CUDA API names
 * (without CUPTI's "_v3020" suffixes) and streams ("default stream" for
 * the legacy one). One table, because each output had grown its own rules
 * and they disagreed on one screen. JSON keeps raw numbers and raw names;
 * only what a person reads goes through here.
 */
#ifndef CUPROOF_UNITS_H
#define CUPROOF_UNITS_H

#include <cuproof/export.h>
#include <cuproof/trace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A duration in the unit that fits, three significant digits: "216 ns",
 * "8.60 µs", "812 µs", "34.0 ms", "2.09 s"; "0 ms" for 0 and "-" for a
 * negative or non-finite value. A value that rounds to 1000 of a unit is
 * shown in the next (999.96 µs reads "1.00 ms"). Returns buf. */
CP_API char *cp_fmt_ms(double ms, char *buf, size_t size);

/* The value cp_fmt_ms shows, in ms: what a reader can recompute from. */
CP_API double cp_fmt_ms_shown(double ms);

/* A share in [0, 1] as a percentage with the precision that shows it:
 * "82%", "1.9%", "0.04%", "0%", "under 0.01%". Returns buf. */
CP_API char *cp_fmt_percent(double share, char *buf, size_t size);

/* A ratio, three significant digits: "43.0×", "1.11×", "0.840×". */
CP_API char *cp_fmt_times(double x, char *buf, size_t size);

/* A ratio of two durations with the durations it comes from: the ratio
 * num / den into x (as cp_fmt_times), and the times into a and b (each
 * of tsize) as cp_fmt_ms shows them, with more digits (up to six) where
 * three would not give back the ratio shown: a reader can recompute it
 * from what is on the screen. Returns the ratio. */
CP_API double cp_fmt_ratio_of(double num_ms, double den_ms, char *x, size_t xsize, char *a,
                              char *b, size_t tsize);

/* Two durations shown with enough digits (three, up to seven) that their
 * ratio num / den, recomputed from what is shown and rounded to
 * ratio_decimals, is the ratio itself so rounded: for a table whose
 * ratio column has its own format (compare's "1.002"). */
CP_API void cp_fmt_ms_pair(double num_ms, double den_ms, int ratio_decimals, char *a, char *b,
                           size_t tsize);

/* The unit of a count that agrees with it: "kernels" for 1 is "kernel";
 * units the table does not know are returned as given. */
CP_API const char *cp_unit_agree(const char *unit, double count);

/* "1 kernel", "3 kernels", "12800 copies": a count written whole with its
 * unit in agreement. Returns buf. */
CP_API char *cp_fmt_count(double count, const char *unit, char *buf, size_t size);

/* A size in bytes to three significant digits in decimal units: "16 B",
 * "384 B", "2.1 MB", "33.6 MB", "3.7 GB". Returns buf. */
CP_API char *cp_fmt_bytes(double bytes, char *buf, size_t size);

/* A figure's value in its unit, through the rules above: durations
 * ("ms", "us", "µs", "ns", "s"), ratios ("x"), shares ("ratio",
 * "fraction" up to 1: a percentage; above 1 it is no share and is shown
 * as a plain number), counts (whole, unit in agreement), the rest
 * to three significant digits (whole numbers whole). Returns buf. */
CP_API char *cp_fmt_value(double v, const char *unit, char *buf, size_t size);

/* How much copy time kernels overlapped, said only where there was a
 * copy: "copies overlapped kernels for 82% of copy time" (`its` true:
 * "of its copy time", a device's), or "no copies" (no "0% of copy time"
 * of a trace without one). Returns buf. */
CP_API char *cp_fmt_copy_overlap(bool copies, double ratio, bool its, char *buf, size_t size);

/* A share as a fraction and a percentage, as an expectation's measured
 * value shows it: "0.823457 (82.3%)", "0 (0%)". Returns buf. */
CP_API char *cp_fmt_fraction(double share, char *buf, size_t size);

/* A check's expected or measured text as shown: a bare "N UNIT" that an
 * older cuproof wrote (a recording replayed keeps it) in today's form ("1
 * copies" is "1 copy", "0.720729 ratio" is "0.720729 (72.1%)"), and in
 * any other text a count of one in agreement with its unit ("1
 * contexts, 1 lanes" is "1 context, 1 lane"); nothing else changes.
 * Returns buf. */
CP_API char *cp_fmt_measured(const char *text, char *buf, size_t size);

/* The word a verdict line puts before a measured text: "measured " before
 * a value (a finding's "not raised" is one), "" before a text that says
 * there is none ("not measured: ...", "not judged", "not checked"), so
 * that no line reads "measured not measured". */
CP_API const char *cp_measured_label(const char *text);

/* A figure's name without the unit it repeats: "launch call ms" with unit
 * "ms" is "launch call", "global ns per generation" is "global per
 * generation". Returns buf. */
CP_API char *cp_fmt_figure_name(const char *name, const char *unit, char *buf, size_t size);

/* How much of a CUDA API name a person reads: its length without the ABI
 * version suffix CUPTI's callback names carry ("cudaMemcpyAsync_v3020",
 * "cuCtxDestroy_v2": "_v" and digits at the end). The name itself is not
 * copied, so that callers which intern names by pointer keep doing so. */
CP_API size_t cp_api_name_len(const char *name);

/* What a timeline calls an activity: a copy's direction ("HtoD"), else
 * its name; its length to show in *len (an API call's without its
 * suffix). Never NULL. */
CP_API const char *cp_activity_label(const cp_activity *a, size_t *len);

/* The same label as a string of its own, for writers that need one (the
 * Chrome and Perfetto exports): the interned name itself when it is shown
 * whole, else its shown part copied into buf. */
CP_API const char *cp_activity_label_str(const cp_activity *a, char *buf, size_t size);

/* A stream as a person reads it: "default stream" for the legacy default
 * stream of the trace's context (the tracer learns its lane, trace.h),
 * else "stream N"; a stream the program named (nvtxNameCudaStream) is
 * "NAME (stream N)" or "NAME (default stream)". The number stays beside
 * the name because programs give several streams one name (a name per
 * role, or per loop that makes the streams) and a lane must still be told
 * from its neighbour and matched to the stream of a kernel record. The
 * name is cut, never the number, when buf is short. `process` is the
 * stream's process in the trace (0 in one process). Returns buf. */
CP_API char *cp_stream_label(const cp_trace *t, uint32_t process, uint32_t device,
                             uint32_t context, uint32_t stream, char *buf, size_t size);

/* Room for a stream's label with a name of a useful length. */
#define CP_STREAM_LABEL_MAX 160

#endif
