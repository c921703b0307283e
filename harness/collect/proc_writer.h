/*
 * The writer of the per-process file (cuproof.proc/1, docs/formats.md,
 * "Per-process files"): what the injection library puts in it, kept apart
 * from the library's threads and callbacks so that the CPU tests can
 * write hand-built CUPTI records and read them back with the reader
 * (reports/proc.c). No CUDA runtime call; the caller serialises calls.
 */
#ifndef CUPROOF_COLLECT_PROC_WRITER_H
#define CUPROOF_COLLECT_PROC_WRITER_H

#include "collect/nccl_payload.h"

#include <cuproof/internal/rec.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A marker (or cuProfilerStart) waiting for its end, in the rec form. */
typedef struct cp_proc_open_range {
    uint64_t id, start;
    char *name;
    uint32_t depth, thread;
    uint32_t correlation; /* a capture window's first occurrence; 0 for others */
    cp_nccl_call nccl;    /* an NCCL call's payload (comm 0: none) */
} cp_proc_open_range;

/*
 * The writer writes one of two forms. With `out`, cuproof.proc/1: a JSON
 * line per CUPTI record, as the record says it. With `rec` instead,
 * cuproof.rec/1 (cuproof/internal/rec.h), the compact form for long programs: the
 * records as the trace keeps them, which means pairing each NVTX marker's
 * start with its end here (a range's depth is the ranges open when it
 * starts) and leaving out the stream, context, device and synchronisation
 * records, which no reader uses; a stream's name (a NAME record) goes as
 * rec's stream name record. The end mark closes a rec writer.
 */
typedef struct cp_proc_writer {
    FILE *out;        /* NULL: nothing is written as JSON lines */
    cp_rec_writer *rec; /* NULL: nothing is written as rec */
    uint64_t origin;  /* CUPTI's clock at the header; times are relative to it */
    /* What tracing cost, written with every flush and end mark when
     * `recorded`: the writer counts the records it writes, the API calls
     * among them and CUPTI's overhead records (summed, never written);
     * the caller sets recorded, api_all and api_filtered and counts the
     * buffers. */
    cp_tracing_cost cost;
    uint64_t dropped; /* CUPTI's dropped count, kept by the caller */
    uint64_t zero_timestamps; /* records left out for zero timestamps */
    cp_proc_open_range *open; /* rec: markers and the profiler range open */
    size_t nopen, open_cap;
    /* The process's rank, local rank, world size, rank variable and exec
     * run for the header (cp_rank_from_env); NULL: all unknown. */
    const cp_process *who;
    /* Test only (CUPROOF_TEST_HOST_SHIFT): added to every time the file
     * holds, as if this process's clock read that many ns ahead. The JSON
     * lines keep their times relative to the origin, so only the origin
     * moves there; the rec form's absolute times each move. 0: none. */
    int64_t shift_ns;
    /* Warm-up capture windows (cp_proc_writer_capture): records that start
     * inside one are traced but not written, so that nothing judged rests
     * on them; the closed ones, and the one open since warm_since. */
    struct cp_proc_span {
        uint64_t start, end;
    } *warm;
    size_t nwarm, warm_cap;
    bool warm_open;
    uint64_t warm_since;
    /* NCCL calls' payloads (cp_proc_writer_nccl) waiting for their range's
     * start marker, which CUPTI delivers with a later buffer: a ring of
     * CP_PROC_NCCL_PENDING (allocated at the first), nnccl from nccl_head,
     * whose oldest goes when it is full (a range never traced: outside a
     * capture window, or its marker dropped), so that a call outside every
     * window costs the same however many came before. A payload taken
     * leaves its slot with no name until the ones before it go. */
    struct cp_proc_nccl {
        uint64_t t;
        cp_nccl_call call;
    } *nccl;
    size_t nccl_head, nnccl;
} cp_proc_writer;

#define CP_PROC_NCCL_PENDING 4096
/* How far apart (ns) a payload's time and its range's start may be: both
 * are taken inside one nvtxDomainRangePushEx call. */
#define CP_PROC_NCCL_NEAR_NS 1000000

/* The header line: the host, the process, its command line, the origin,
 * and w->who's rank fields. */
void cp_proc_writer_header(cp_proc_writer *w, const char *host, long pid, long ppid,
                           const char *command);

/* One CUPTI record (a CUpti_Activity) as its line: kernels, copies and
 * memsets with their graph ids, runtime and driver calls, synchronisation,
 * streams, contexts, devices and NVTX markers; device work whose
 * timestamps CUPTI left at zero is counted, not written; CUPTI's overhead
 * records are summed into the cost, not written; other kinds are
 * neither. */
void cp_proc_writer_record(cp_proc_writer *w, const void *record);

/* A "flush" line at CUPTI time t, or the "end" line when `why` is given
 * ("exit", or why nothing was traced), with the cost so far when it is
 * recorded (in the rec form a cost record, and the process's end); the
 * file is flushed to the kernel. */
void cp_proc_writer_mark(cp_proc_writer *w, uint64_t t, const char *why);

/* An NCCL call's payload (nccl_payload.h), taken at CUPTI time t in
 * its range's push: it goes with the start of the range of the same name
 * that starts nearest t (within CP_PROC_NCCL_NEAR_NS), in both forms
 * ("comm", "bytes" and "peer" on the marker's start line; the range's
 * fields in the rec form). `call->name` must outlive the writer (the
 * decoder's names do). The end mark lets go of those still waiting. */
void cp_proc_writer_nccl(cp_proc_writer *w, uint64_t t, const cp_nccl_call *call);

/* cuProfilerStart (start) or cuProfilerStop at CUPTI time t. */
void cp_proc_writer_profiler(cp_proc_writer *w, uint64_t t, bool start);

/* A capture window (cuproof/internal/capture.h) opening (open) or closing
 * at CUPTI time t: `occurrence` is the range's first occurrence in it (at
 * the opening) or its last (at the closing), 0 for windows of no range;
 * `warmup` marks a window traced as warm-up, not judged: the records that
 * start inside it are left out (CUPTI delivers them after it opened, so
 * the writer knows it by then). The reader makes it a range named
 * CP_CAPTURE_RANGE_NAME (or CP_WARMUP_RANGE_NAME). */
void cp_proc_writer_capture(cp_proc_writer *w, uint64_t t, bool open, uint32_t occurrence,
                            bool warmup);

#endif
