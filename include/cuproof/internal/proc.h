/*
 * Per-process trace files of a traced program (`cuproof exec`, schema
 * "cuproof.proc/1", docs/formats.md "Per-process files"): read one, or a
 * directory of them, into one trace whose records carry their process, so
 * that the analysis keeps the lanes of several processes apart.
 *
 * What a file becomes:
 *  - kernels, copies and memsets: CP_ACT_KERNEL, CP_ACT_MEMCPY and
 *    CP_ACT_MEMSET records at absolute times (origin_ns + offset), with
 *    their device, context, stream, correlation and graph ids;
 *  - runtime and driver API calls: CP_ACT_RUNTIME records named after the
 *    call;
 *  - markers: CP_ACT_RANGE records, a start and an end of the same id
 *    paired into one range and an instant a range of length zero. A
 *    range's depth is the number of ranges of the same process open at its
 *    start (a range that starts with another at the same time holds it when
 *    it ends later, or ends together and started first in the file);
 *  - cuProfilerStart/Stop: a CP_ACT_RANGE named "cuProfilerStart" from each
 *    start to the stop after it (a start while started and a stop while
 *    stopped change nothing, as in CUDA);
 *  - sync, stream, context and device records are checked and not kept;
 *  - flush and end: the process's dropped and zero_timestamps counts (the
 *    largest seen, as both are counts so far), its tracing cost (the last
 *    line's; a file whose lines carry none, from an earlier writer, has
 *    none recorded) and its end.
 *
 * Decisions beyond the format's text:
 *  - An end marker whose start the file does not hold is skipped: its start
 *    came before tracing began (a range opened before cuInit), which is no
 *    fault of the file. A start whose id is already open is an error.
 *  - A range or profiler window still open when the file ends lasts to the
 *    process's last_ns, whether the file ended or was truncated: the
 *    program never closed it while traced.
 *  - last_ns is the latest time the file holds, in its records, flush
 *    records and end record alike: the end record's time for a file that
 *    ended, the last flush's or the last record's for a truncated one.
 *  - A line after the end record is an error, as is an empty file or one
 *    whose header is cut: without a header the records have no origin and
 *    no process.
 *  - Unknown fields are ignored, so that a later writer may add some; an
 *    unknown record kind is an error.
 *  - Offsets may be negative (a record that began before origin_ns) as long
 *    as the absolute time is not; integers must be exact in a double
 *    (|n| <= 2^53).
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_PROC_H
#define CUPROOF_PROC_H

#include "../export.h"

#include "../program.h"
#include "../trace.h"
#include "rec.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CP_PROC_SCHEMA "cuproof.proc/1"

/* The longest line a reader accepts, its newline not counted. */
#define CP_PROC_MAX_LINE ((size_t)1 << 20)

/*
 * Reads the cuproof.proc/1 file at `path` and appends it to `t` (which the
 * caller initialised, and which may hold other processes already) as one
 * new process: cp_trace_add_process with its pid, ppid, host, command,
 * whether it ended, its last_ns, dropped and zero_timestamps counts, and
 * its records, each carrying the new process's index. The process's
 * dropped count is added to t->dropped_records. A file without its end
 * record is a truncated process (ended false); an incomplete last line
 * (no newline and not valid JSON) is taken as that truncation.
 * Returns 0; CP_EIO when the file cannot be read; CP_EPARSE for a
 * malformed line, a wrong schema, an unknown record kind, a missing or
 * wrongly typed field or a line longer than CP_PROC_MAX_LINE, with
 * cp_last_error saying "PATH:LINE: what"; CP_ENOMEM. After an error `t`
 * holds the records, processes and dropped count it held before the call
 * (only its table of interned names may have grown).
 */
CP_API int cp_proc_read(const char *path, cp_trace *t);

/*
 * cp_proc_read on `size` bytes in memory (which need no terminating NUL
 * and may hold any byte); `name` stands for the file in messages. Returns
 * what cp_proc_read does, CP_EIO aside.
 */
CP_API int cp_proc_parse(const char *name, const char *data, size_t size, cp_trace *t);

/*
 * Reads every file of `dir` whose name ends in ".proc.jsonl", in the byte
 * order of their names (so the processes of a trace come in the same order
 * on every run), into `t` as with cp_proc_read, and sets *nfiles to how
 * many it read. A directory without such files gives 0 with *nfiles 0:
 * whether that is an error is the caller's to say. Returns 0; CP_EIO when
 * the directory cannot be listed or a file cannot be read; the errors of
 * cp_proc_read. After an error `t` is as before the call and *nfiles 0.
 */
CP_API int cp_proc_read_dir(const char *dir, cp_trace *t, size_t *nfiles);

/*
 * Streaming: the same reading, but each activity goes to `emit` as its
 * line is read instead of into `t` (the activity and its name are valid
 * during the call only), so that memory stays bounded by a line, the open
 * ranges and the ranges of the file being read, however many records the
 * files hold. Ranges (markers and cuProfilerStart/Stop) go out when their
 * file ends, with their depths. `t` receives the processes (how each
 * ended), the dropped count and interned names, and no activity. A
 * negative return from `emit` stops the reading and is returned. After an
 * error `emit` may have seen part of the file: the caller discards what it
 * made of them.
 */
typedef cp_activity_fn cp_proc_emit;
CP_API int cp_proc_stream(const char *path, cp_trace *t, cp_proc_emit emit, void *ctx);
CP_API int cp_proc_stream_dir(const char *dir, cp_trace *t, size_t *nfiles, cp_proc_emit emit,
                              void *ctx);

/* The per-process trace files of `dir` (cp_proc_is_trace_file, rec.h), in the
 * byte order of their names, into a new array *names of *n copies (free
 * with cp_proc_names_free). Returns 0, CP_EIO naming the directory, or
 * CP_ENOMEM. */
CP_API int cp_proc_list_dir(const char *dir, char ***names, size_t *n);
CP_API void cp_proc_names_free(char **names, size_t n);

/*
 * One file's reading from its bytes as they arrive: what cp_proc_stream
 * does with a file (cp_proc_read's with `emit` NULL), through the same
 * code, for a file that its process is still writing (`cuproof exec`
 * reads the files while the program runs, cuproof/program.h). The form
 * comes from the name, as cp_proc_stream's does (".proc.cprec" is rec).
 * cp_proc_parser_push reads what is whole among the bytes handed over so
 * far: complete lines, complete rec records; a line without its newline,
 * a record (or a rec header) cut short waits for the next push, so a file
 * still being written is never read as cut short. cp_proc_parser_end says
 * the file is complete: what is left is read as a file's end (a cut last
 * line or record is the process's truncation), then ranges get their
 * depths and the process its totals. Each returns 0 or cp_proc_stream's
 * errors, naming the file (`path`), its line or byte; after an error `t`
 * is as it was before cp_proc_parser_new and the parser reads no more.
 */
typedef struct cp_proc_parser cp_proc_parser;
CP_API int cp_proc_parser_new(cp_proc_parser **out, const char *path, cp_trace *t,
                              cp_proc_emit emit, void *ctx);
CP_API int cp_proc_parser_push(cp_proc_parser *p, const void *data, size_t n);
CP_API int cp_proc_parser_end(cp_proc_parser *p);
CP_API void cp_proc_parser_free(cp_proc_parser *p);

/*
 * The judge's reading of a directory that `f` followed while the program
 * ran (cp_follower, cuproof/program.h): what cp_proc_stream_dir does with
 * `f`'s directory, the same records in the same order with the same
 * values, the processes, counts and errors alike, but reading only what
 * the files grew by since the follower's last poll (the first call reads
 * every file to its end; a later one, such as the second reading when the
 * hosts' clocks are aligned, reads nothing). A file the follower could
 * not serve is read here by cp_proc_stream. *during gets the records read
 * while the program ran, `why` (of why_size bytes) the first reason a
 * file's records were read after it ("" when none was; set also when the
 * reading then fails).
 */
CP_API int cp_follower_stream(cp_follower *f, cp_trace *t, size_t *nfiles, cp_proc_emit emit,
                              void *ctx, uint64_t *during, char *why, size_t why_size);

#ifdef __cplusplus
}
#endif

#endif
