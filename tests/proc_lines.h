/*
 * One process of a trace written as the injection library's per-process
 * file in either form (docs/formats.md "Per-process files"): the
 * recorded traces that are no per-process files (merged trace files, rec
 * files of several processes) become the files `cuproof exec` reads, for
 * the tests of the follower (tests/test_follow.c), and the bench's
 * synthetic program writes its trace through the same code
 * (ci/bench/proc_gen.c). No criterion here: the bench links it too.
 */
#ifndef CUPROOF_TESTS_PROC_LINES_H
#define CUPROOF_TESTS_PROC_LINES_H

#include <cuproof/trace.h>

#include <stdint.h>

/* Writes process `process` of `t` and its records (ranges as NVTX marker
 * starts and ends, profiler windows as markers too) to `path` as
 * cuproof.proc/1 JSON lines: the header, the names it gave its streams, a
 * line per record, and the end
 * line (with the process's tracing cost when it has one) when the
 * process ended; times relative to the earliest the process holds.
 * Returns 0, or -1 with cp_last_error naming the path. */
int proc_lines_write(const char *path, const cp_trace *t, uint32_t process);

/* The same process as a cuproof.rec per-process file: its process
 * record, its stream names, its records (process index 0), then how it
 * ended and the end
 * record, in the order the injection library writes them. Returns 0 or a
 * negative code naming the path. */
int proc_rec_write(const char *path, const cp_trace *t, uint32_t process);

#endif
