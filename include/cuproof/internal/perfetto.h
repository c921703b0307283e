/*
 * A traced run for ui.perfetto.dev and chrome://tracing: the Chrome trace
 * event format (chrome.c), Perfetto's own protobuf (perfetto_pb.c) and
 * the choice between them by size (perfetto.c).
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_PERFETTO_H
#define CUPROOF_PERFETTO_H

#include "../export.h"

#include "../trace.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/*
 * One traced run in the Chrome trace event format, for ui.perfetto.dev and
 * chrome://tracing: a process per (device, context) with a thread per
 * stream, the host's CUDA API calls and NVTX phases on their own threads,
 * "X" slices (copies with bytes and GB/s), and launch-to-work flows by
 * correlation id. `title` names the host process. Returns a malloc'd
 * string, or NULL (CP_ENOMEM in cp_last_error).
 */
CP_API char *cp_chrome_trace(const cp_trace *t, const char *title);

#ifdef __cplusplus
}
#endif

#endif
