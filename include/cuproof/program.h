/*
 * A traced program's per-process files (cuproof/internal/proc.h), read, analysed
 * and judged against expectations, in memory bounded whatever the
 * program's length: `cuproof exec` and `cuproof check` on a program's
 * directory both go through it.
 *
 * Up to `keep_records` records are held, as cp_proc_read_dir would hold
 * them, and analysed whole (cp_timeline_analyse, cp_expect_eval_trace).
 * Past that the records are streamed: they go once through the streaming
 * analysis (cp_stream) and into DIR/NAME.cprec as they are read; a second
 * reading of that file writes the Perfetto file (protobuf,
 * DIR/NAME.VARIANT.perfetto-trace), the timeline's summary and the scoped
 * expectations' own analyses (cp_expect_stream). The metrics, verdicts and
 * measured values are the same either way (the test suite holds the two
 * equal on the recorded programs).
 */
#ifndef CUPROOF_PROGRAM_H
#define CUPROOF_PROGRAM_H

#include "export.h"

#include "exec.h"
#include "expect.h"
#include "metrics.h"
#include "result.h"
#include "trust.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Records held at most by default: where a report's timeline is a summary
 * anyway and the Perfetto file is written in protobuf
 * (CP_PERFETTO_PROTO_RECORDS), about 40 MB of records in memory. */
#define CP_PROGRAM_KEEP_RECORDS 200000

/*
 * A program's per-process files read while the program runs:
 * the launcher's wait polls it (cp_exec_opts.on_wait, exec.h), each poll
 * reading what the files in `proc_dir` grew by, for at most about 10 ms;
 * the judge then reads only the rest (cp_program_opts.follow), with the
 * same results as reading every file after the program. Records held in
 * memory stay within `keep_records` (0: CP_PROGRAM_KEEP_RECORDS), the
 * records the analysis would hold: past them a JSON-lines file's records
 * go on to a rec file in a directory the follower makes in `spill_dir`
 * (NULL: none, and they are read after the program) and removes when it
 * is freed, and a rec file's are read after the program.
 * cp_follower_new returns 0 or CP_ENOMEM; cp_follower_poll (its argument
 * a cp_follower, for the hook) returns whether it has more to read at
 * once, and never fails: a file it cannot follow is read after the
 * program, and the judge says so (cp_program_info.follow_why). The hook
 * is called only after the launcher saw the program running, so records
 * count as read while it ran (cp_program_info.records_during_run) once a
 * later poll follows the one that read them: the last poll's may have been
 * the program's last act, read as it exited.
 */
typedef struct cp_follower cp_follower;
CP_API int cp_follower_new(cp_follower **out, const char *proc_dir, uint64_t keep_records,
                           const char *spill_dir);
CP_API bool cp_follower_poll(void *follower);
CP_API void cp_follower_free(cp_follower *f);

typedef struct cp_program_opts {
    cp_timeline_opts timeline;
    /* Records held at most; past them the records are streamed. 0 means
     * CP_PROGRAM_KEEP_RECORDS; UINT64_MAX never streams. */
    uint64_t keep_records;
    /* Where streamed records go: out_dir/name.cprec and
     * out_dir/name.variant.perfetto-trace (variant NULL: "program"). */
    const char *out_dir, *name, *variant;
    /* The files as a follower read them while the program ran (above),
     * whose directory is the one analysed; NULL: read after it. */
    cp_follower *follow;
} cp_program_opts;

/* One expectation's verdict: whether it holds, and the measured value or
 * why there is none (cp_expect_eval_trace's words). */
typedef struct cp_program_check {
    bool ok;
    /* Not judged: it spans hosts whose clocks could not be aligned
     * (cp_ranks_unaligned); `measured` says why. Never ok. */
    bool undecided;
    char measured[256];
} cp_program_check;

/* What the reading found beside the metrics. */
#define CP_WINDOWS_LISTED 16

typedef struct cp_program_info {
    size_t nfiles;     /* per-process files read */
    uint64_t records;  /* records read, API calls included */
    uint64_t first_ns; /* the earliest non-zero start; UINT64_MAX with none */
    bool streamed;     /* past keep_records: v->summary is set, v->trace holds no records */
    char rec_path[4352], perfetto_path[4352]; /* the streamed files; "" when kept */
    /* Slices of the streamed Perfetto file that came too far out of order
     * on their track to be checked for nesting (Perfetto may draw them
     * with another's end); 0 when kept or when every one was checked. */
    uint64_t perfetto_unordered;
    /* Of `records`, those read while the program ran (by the follower,
     * cp_program_opts.follow); the rest were read after it. follow_why:
     * the first reason a file's records were read after the program ("":
     * none was, or no follower). */
    uint64_t records_during_run;
    char follow_why[512];
    /* Capture windows read (ranges CP_CAPTURE_RANGE_NAME,
     * cuproof/internal/capture.h) and their summed time; 0 without
     * --capture. */
    uint32_t windows;
    uint64_t window_ns;
    /* The first CP_WINDOWS_LISTED of them: whose process (its index in the
     * trace), the range's first occurrence in it (0: no range), and when. */
    struct cp_window_seen {
        uint32_t process, first;
        uint64_t start_ns, end_ns;
    } window_list[CP_WINDOWS_LISTED];
} cp_program_info;

/*
 * Reads the per-process files in `dir` into `v` (its trace initialised by
 * the caller and empty): v->trace gets the processes and counts, and the
 * records when they are kept; v->metrics the analysis; v->summary the
 * timeline's summary when streamed. Each of list's n expectations (list
 * may be NULL) is evaluated into checks[i], which must hold list->n.
 * With no per-process file, info->nfiles is 0 and nothing is analysed.
 * Returns 0, or the first error: reading (CP_EIO, CP_EPARSE naming the
 * file and line), writing the streamed files (CP_EIO naming them),
 * CP_EINVAL for a scope cp_expect_validate_program refuses, CP_ENOMEM.
 */
CP_API int cp_program_analyse(const char *dir, const cp_expect_list *list,
                              const cp_program_opts *opts, cp_variant_result *v,
                              cp_program_check *checks, cp_program_info *info);

/*
 * A program's trace judged straight from its files in bounded memory, as
 * `cuproof check` reads it: per-process files and directories of them
 * (rec false), or one cuproof.rec file (rec true). Every record is placed
 * first (cuproof/internal/ranks.h: each host's devices and, when the hosts' clocks
 * disagree, a second reading on host 0's clock), then judged
 * (cp_expect_judge: read once, or twice when a scope needs it), with the
 * ranks' program-wide figures put in before the verdicts.
 */
typedef struct cp_program_stream {
    cp_expect_judge *judge; /* the verdicts and the whole trace's metrics */
    cp_trace meta;          /* processes and counts, no records */
    struct cp_ranks *ranks; /* NULL when no process has a rank (internal/ranks.h) */
    size_t files;           /* per-process files read (rec false) */
    bool truncated;         /* a rec file cut short, and why */
    char why[600];
} cp_program_stream;

/* Fills `out` (its previous contents ignored). Returns 0, or the first
 * error: CP_ENOENT for a directory of no per-process file, the readers'
 * (CP_EIO, CP_EPARSE naming the file), CP_EINVAL (a scope), CP_ENOMEM;
 * `out` is to be freed with cp_program_stream_free either way. */
CP_API int cp_program_stream_judge(const char *const *paths, size_t n, bool rec,
                                   const cp_expect_list *list, const cp_stream_opts *opts,
                                   cp_program_stream *out);
/* Expectation k's verdict (cp_expect_judge_verdict), undecided as
 * cp_program_check says. Returns 0 or the judge's error. */
CP_API int cp_program_stream_verdict(cp_program_stream *s, const cp_expect_list *list, size_t k,
                                     cp_program_check *out);
CP_API void cp_program_stream_free(cp_program_stream *s);

/* ---- Judging a traced program (cuproof exec, and a library user's own) ---- */

/* Whether the run (cp_program_run, exec.h) failed: a non-zero exit, a signal or the timeout. */
CP_API bool cp_program_run_failed(const cp_program_run *run);

/* Samples of one name over the timed runs: the wall time ("wall_ms") or
 * an NVTX range's durations. */
typedef struct cp_program_samples {
    char name[64];
    double *ms;
    size_t n, cap;
} cp_program_samples;

/* The timed runs of --repeat: the program run again with its NVTX ranges
 * alone recorded, so that no tracing cost is in them. Zero-initialised
 * before the first cp_program_timing_add. */
typedef struct cp_program_timing {
    cp_program_samples wall;
    cp_program_samples *ranges;
    size_t nranges;
} cp_program_timing;

/* Adds one timed run: its wall time, and the durations of the ranges in
 * the per-process files of `dir`. Returns 0, CP_ENOMEM, or a reader's
 * error (CP_EIO, CP_EPARSE naming the file). */
CP_API int cp_program_timing_add(cp_program_timing *t, const cp_program_run *run,
                                 const char *dir);
CP_API void cp_program_timing_free(cp_program_timing *t);

typedef struct cp_judge_opts {
    const cp_expect_list *expect; /* may be NULL: no expectation */
    char *const *argv;            /* the program: the case's name (its base name) and title */
    cp_program_opts program;      /* the analysis (name and variant are set by the judge) */
    bool allow_dropped;           /* --allow-dropped: trust a trace that lost records */
    bool keep_going;              /* check the expectations on an untrusted trace too */
    int device;                   /* the GPU the report names, and its name */
    const char *gpu_name;
    /* Why this machine has no usable GPU (cp_env.no_device_reason); NULL
     * or "" when it has one: what the verdict says when nothing was traced. */
    const char *no_device;
    /* exec --capture's SPEC as written (NULL: none): a run whose windows
     * never opened has nothing to judge (trust.h, rule 5). */
    const char *capture;
} cp_judge_opts;

/* The verdict beside the result. */
typedef struct cp_judgement {
    int exit;          /* CP_EXIT_* (exit.h): the worst of 3, 4, 1, 0 */
    cp_trust trust;    /* whether the trace could be judged, and its warnings */
    bool program_failed;
    bool checked;      /* the expectations were evaluated (trusted, or keep_going) */
    size_t expectations, met;
    cp_program_info info;
} cp_judgement;

/*
 * Judges a traced program: reads the per-process files in `proc_dir`
 * (cp_program_analyse), applies the one trust rule (trust.h), and fills
 * `c` (zeroed by the caller, freed by cp_case_result_free) as a case of
 * one variant "program": a check that the program succeeded, one per
 * process that its trace was closed (truncated ones skipped, with how much
 * may be missing, never passed), one per expectation (when checked), the
 * timing of --repeat's runs (`timing` may be NULL) as the variant's and
 * one variant "range:NAME" per NVTX range. Prints nothing. Returns 0 and
 * the verdict in `j`, whatever the verdict; a negative code only when the
 * result cannot be built (CP_ENOMEM). A trace that cannot be read is not
 * an error here: it is untrusted, and j->trust.why says why.
 */
CP_API int cp_program_judge(const char *proc_dir, const cp_judge_opts *o,
                            const cp_program_run *run, const cp_program_timing *timing,
                            cp_case_result *c, cp_judgement *j);

#ifdef __cplusplus
}
#endif

#endif
