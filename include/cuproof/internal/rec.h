/*
 * cuproof.rec/1: the streaming trace format, for traces too large to hold
 * or to write as one JSON document (an exec'd training loop records
 * millions of activities a minute). One file holds one trace: the same
 * content as a variant of a CASE.trace.json file (activities with every
 * field of cp_activity, the traced processes with how each ended, the
 * dropped and renamed counts, the legacy default stream), written record
 * by record as the activities arrive and read back in one pass with
 * bounded memory.
 *
 * Layout (little-endian throughout; "varint" is unsigned LEB128, "zigzag"
 * a signed value folded into a varint as protobuf does):
 *
 *   header   8 bytes "CUPREC\x01\x05" (magic, major version 1, minor 5;
 *            a reader of major 1 reads every minor)
 *   records  each: type (1 byte), payload length (varint), payload
 *
 *   1 string     id (varint, 1, 2, ... in order), the bytes
 *   2 process    index (varint, 0, 1, ... in order), pid, ppid (varint),
 *                host and command (each a varint length and the bytes);
 *                minor 2 then adds rank, local rank and world size
 *                (zigzag, -1 unknown), the rank's variable, why a rank
 *                variable was not taken and the exec run (strings): a
 *                record that ends after the command is a minor 1 one,
 *                whose process has no rank
 *   3 activity   kind (1 byte), flags (1 byte: 1 async, 2 has launch
 *                shape, 4 has graph ids, 8 has bytes and memory kinds,
 *                16 has a host thread: minor 1, 32 has an NCCL payload:
 *                minor 5),
 *                start as zigzag delta from the previous activity's start,
 *                end - start (zigzag: a reversed record stays reversed),
 *                device, context, stream, process, correlation and name
 *                id (varints; name 0 is no name), then as flagged: grid
 *                and block (6 varints), graph id and node (2 varints),
 *                bytes, copy direction, source and destination kinds (4
 *                varints); a range then has its depth (varint); then, as
 *                flagged, the thread (varint); last, as flagged, an NCCL
 *                range's communicator (varint) and peer or root (zigzag),
 *                its message size in the bytes above. A flag the reader does not
 *                know is an error (the fields after it could not be found)
 *   4 process end  index, ended (0/1), last_ns, dropped, zero_timestamps
 *                (varints) and why (varint length and the bytes)
 *   5 end        activities written, dropped_records, renamed_kernels
 *                (varints), legacy stream flag (1 byte) and its device,
 *                context and stream (varints)
 *   6 process cost  minor 3: what tracing a process cost (cp_tracing_cost):
 *                index, flags (1 api_all), records, api_records,
 *                api_filtered, buffers, overhead records, the number of overhead kinds
 *                that follow and each one's ns (varints, in
 *                cp_overhead_kind's order; kinds past this reader's are
 *                added to "other"). The last one of a process holds; a
 *                process without one (a writer before minor 3) has no
 *                cost recorded, which is not a cost of zero
 *   7 stream name  minor 4: a name the program gave a stream
 *                (nvtxNameCudaStream; cp_stream_name): process index,
 *                device, context, stream and name id (varints; the name
 *                a string record defined before, as an activity's, so
 *                that a reader before minor 4 skips the record and still
 *                reads every string). The stream is numbered as the
 *                activities' device, context and stream, and its process
 *                as theirs (process 0 needs no process record: a case's
 *                trace has none); a later record for the same stream
 *                renames it. A file without one (a writer before minor 4)
 *                names no stream
 *
 * A record type the reader does not know is skipped by its length (a
 * later minor version may add some); a known record whose payload does
 * not decode, a file that stops inside a record, or a string or process
 * used before it is defined is an error naming the byte offset. A file
 * that stops inside its last record (a process killed while writing),
 * that has no end record, or whose end record counts other activities
 * than the file holds, was cut short: the reader reads what is whole and
 * says so (truncated); that is not an error by itself. Activities may come in any order: the
 * streaming analysis (cuproof/metrics.h) sorts them.
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_REC_H
#define CUPROOF_REC_H

#include "../export.h"

#include "../metrics.h"
#include "../trace.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CP_REC_MAGIC "CUPREC\x01\x05"
#define CP_REC_MAGIC_LEN 8

typedef enum {
    CP_REC_STRING = 1,
    CP_REC_PROCESS = 2,
    CP_REC_ACTIVITY = 3,
    CP_REC_PROCESS_END = 4,
    CP_REC_END = 5,
    CP_REC_PROCESS_COST = 6,
    CP_REC_STREAM_NAME = 7,
} cp_rec_type;

/* What the end record carries: the trace-wide fields of cp_trace. */
typedef struct cp_rec_end {
    uint64_t activities; /* written by the writer; checked by the reader */
    uint64_t dropped_records, renamed_kernels;
    bool has_legacy_stream;
    uint32_t legacy_device, legacy_context, legacy_stream;
} cp_rec_end;

/* ---- Writing ---- */

typedef struct cp_rec_writer cp_rec_writer;

/* Opens `path` for writing (truncating it) and writes the header. Returns
 * 0 or CP_EIO / CP_ENOMEM (naming the path); *out is NULL on failure. */
CP_API int cp_rec_writer_open(cp_rec_writer **out, const char *path);

/* Appends one process (its index is the order of the calls, 0 first) and
 * how it ended, when known (a process end record may also come later,
 * through cp_rec_put_process_end, which also writes the process's cost
 * record when p->cost is recorded). cp_rec_put_process_cost writes the
 * cost alone (a writer's flush). */
CP_API int cp_rec_put_process(cp_rec_writer *w, const cp_process *p);
CP_API int cp_rec_put_process_end(cp_rec_writer *w, uint32_t index, const cp_process *p);
CP_API int cp_rec_put_process_cost(cp_rec_writer *w, uint32_t index, const cp_process *p);

/* Appends a stream's name: n->process is the index of a process already
 * written (cp_rec_put_process), or 0 in a file of none, the other ids the
 * stream's as its activities carry them; the name is written once as a string record, as
 * an activity's. An empty or NULL name names nothing and writes nothing
 * (as cp_trace_name_stream). Returns 0, CP_EINVAL for a process not yet
 * written (the reader would refuse the file), CP_EIO or CP_ENOMEM. */
CP_API int cp_rec_put_stream_name(cp_rec_writer *w, const cp_stream_name *n);

/* Appends one activity; its name is written once as a string record the
 * first time it is seen (by content, so names need not be interned).
 * Returns 0, CP_EIO or CP_ENOMEM. */
CP_API int cp_rec_put(cp_rec_writer *w, const cp_activity *a);

/* Hands what is buffered to the kernel (a process that dies afterwards
 * leaves it readable). Returns 0 or the writer's first error. */
CP_API int cp_rec_flush(cp_rec_writer *w);

/* Writes the end record (the activity count is the writer's own), closes
 * the file and frees the writer, also after an earlier failure. Returns
 * 0, or the first error met since opening (CP_EIO naming the path). */
CP_API int cp_rec_writer_close(cp_rec_writer *w, const cp_rec_end *end);

/* Frees a writer without an end record: the file reads as truncated. */
CP_API void cp_rec_writer_abandon(cp_rec_writer *w);

/* Writes a whole trace: processes, how each ended, the stream names,
 * activities and the end record. */
CP_API int cp_rec_write_trace(const char *path, const cp_trace *t);

/* ---- Reading ---- */

typedef struct cp_rec_reader cp_rec_reader;

/* One decoded record: `type` and the members of its type are set (an
 * activity's `activity`; a process's `process_index` and `process`; an
 * end's `end`; a process cost's `process_index` and `process.cost`; a
 * stream name's `process_index` and `stream_name`, whose process is the
 * index in the file), the others are left as they were. `activity.name`,
 * `stream_name.name` and the process's strings stay valid until the
 * reader is closed. */
typedef struct cp_rec_item {
    cp_rec_type type; /* CP_REC_ACTIVITY, _PROCESS, _PROCESS_END, _PROCESS_COST, _STREAM_NAME
                         or _END */
    cp_activity activity;
    uint32_t process_index;
    cp_process process; /* PROCESS: who; PROCESS_END: how it ended */
    cp_rec_end end;
    cp_stream_name stream_name;
} cp_rec_item;

/* Whether `path` begins with the magic of a cuproof.rec file (false when
 * it cannot be read). */
CP_API bool cp_rec_is_rec_file(const char *path);

/* Opens `path` and checks its header. Returns 0, CP_EIO (cannot open) or
 * CP_EPARSE (not a cuproof.rec file, or a major version it does not
 * read), naming the path. */
CP_API int cp_rec_reader_open(cp_rec_reader **out, const char *path);

/* The same over a stream already open (a pipe, fmemopen), named `name`
 * in messages; the reader closes it, also on failure. */
CP_API int cp_rec_reader_fopen(cp_rec_reader **out, FILE *f, const char *name);

/*
 * A reader of bytes handed to it as they arrive (a file that a process is
 * still writing, followed by `cuproof exec` while the program runs):
 * cp_rec_next reads what is whole among the bytes pushed so far and
 * returns 0 where a record (or the header) is not whole yet, leaving it
 * for the next push; after cp_rec_reader_push_end the input is complete
 * and the reader reads its end as a file's (a record cut short there is
 * the file's truncation). `name` stands for the file in messages, byte
 * offsets counting every byte pushed. cp_rec_reader_pushed returns 0 or
 * CP_ENOMEM, cp_rec_reader_push 0 or CP_ENOMEM.
 */
CP_API int cp_rec_reader_pushed(cp_rec_reader **out, const char *name);
CP_API int cp_rec_reader_push(cp_rec_reader *r, const void *data, size_t n);
CP_API void cp_rec_reader_push_end(cp_rec_reader *r);

/* Reads the next activity, process, process end, process cost, stream
 * name or end record into *it
 * (string records are taken in passing). Returns 1 with an item, 0 at the
 * end of the file (of what was pushed: see above), or CP_EPARSE / CP_EIO /
 * CP_ENOMEM naming the path and the byte offset of the bad record. */
CP_API int cp_rec_next(cp_rec_reader *r, cp_rec_item *it);

/* After cp_rec_next returned 0: whether the file ended without its end
 * record, or with one that counts other activities than were read; the
 * reason in words is written to `why`. */
CP_API bool cp_rec_truncated(const cp_rec_reader *r, char *why, size_t size);

/* Activities read so far, and the bytes consumed. */
CP_API uint64_t cp_rec_activities_read(const cp_rec_reader *r);
CP_API uint64_t cp_rec_offset(const cp_rec_reader *r);

CP_API void cp_rec_reader_close(cp_rec_reader *r);

/* What a process, process end or end record says, into `t`: a process is
 * appended; a process end applies to process base + its index (base: the
 * processes `t` held before this file's); an end record adds its dropped
 * and renamed counts and sets the legacy stream it names. Activities and
 * strings are the caller's; a process cost replaces that process's; a
 * stream name goes into t's table for process base + its index.
 * Returns 0 or CP_ENOMEM. */
CP_API int cp_rec_apply_meta(cp_trace *t, const cp_rec_item *it, uint32_t base);

/* Reads `path` in one pass: each activity to `each` (valid during the
 * call only), everything else into `meta` (cp_rec_apply_meta; may be
 * NULL). A truncated file is read as far as it goes and *truncated set,
 * with the reason in `why` (both may be NULL). Returns 0, a reading error
 * (CP_EPARSE naming the byte offset, CP_EIO, CP_ENOMEM), or the first
 * negative return of `each`. */
CP_API int cp_rec_stream(const char *path, cp_trace *meta, cp_activity_fn each, void *ctx,
                         bool *truncated, char *why, size_t why_size);

/* Reads a whole file into `t` (initialised by the caller, cleared first):
 * for tests and small traces. A truncated file is read as far as it goes
 * and *truncated set (may be NULL). Returns 0 or a negative code. */
CP_API int cp_rec_read_trace(const char *path, cp_trace *t, bool *truncated);

/* ---- Analysing ---- */

/*
 * Reads `path` in one pass into the streaming analysis (cp_stream) and
 * fills `m`; memory stays bounded whatever the file's length. `meta`
 * (initialised by the caller, may be NULL) receives everything but the
 * activities: the processes and how each ended, the dropped and renamed
 * counts, the legacy stream. A truncated file is analysed as far as it
 * goes and *truncated set, with the reason in `why` (both may be NULL).
 * Returns 0, or a negative code from reading (CP_EPARSE naming the byte
 * offset) or from the analysis.
 */
CP_API int cp_rec_analyse(const char *path, const cp_stream_opts *opts, cp_metrics *m,
                          cp_trace *meta, bool *truncated, char *why, size_t why_size);

/* Whether a file name is a per-process trace's (rec.c: the launcher, in
 * the runner layer, and the readers, in reports, share this one naming
 * rule of the injection library's files): it ends in ".proc.jsonl",
 * or ".proc.cprec" for the rec form (this header) that the injection
 * library writes under CUPROOF_EXEC_FORMAT=rec, which cp_proc_read and
 * the others read as well (after at least one character). */
CP_API bool cp_proc_is_trace_file(const char *name);

#ifdef __cplusplus
}
#endif

#endif
