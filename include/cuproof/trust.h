/*
 * Whether a trace can be trusted enough to judge expectations on it: the
 * one trust rule that `cuproof exec`, `cuproof check` (every form of
 * trace) and a library user's judge share, so that nothing passes
 * vacuously and each reason has its own message. A case's run follows
 * the same rule where it applies: a variant whose records were dropped
 * makes its case inconclusive, and CUPTI held elsewhere leaves it
 * untraced with its trace checks skipped (runner.c).
 *
 * A trace is not trusted, and its verdict is CP_EXIT_INCONCLUSIVE (3),
 * for the first of these that holds, in this order:
 *   1. no process of the program was traced (no per-process file);
 *   2. a file belongs to another run: its exec run id (cp_process.run)
 *      differs from the launcher's (`run`) or, without one, from the
 *      first file's that names one (a file naming no run, from a writer
 *      before run ids, is compared with nothing); the directory mixes
 *      programs, so no figure is this run's alone (docs/distributed.md);
 *      or, where no file names a run and no launcher is given, two
 *      processes or more have no traced parent on their host and are not
 *      all ranks: separate programs, not one tree;
 *   3. two processes of the run claim the same rank: a launcher's
 *      variables leaked, or files of two jobs were merged, so a rank's
 *      figures would mix two processes; or the ranks of one host are
 *      not one job: their collectives end further apart than one
 *      collective is from the next (cp_ranks.not_one_job), so the files
 *      are two runs' that no run id told apart;
 *   4. a process could not have CUPTI (another tool held it): its work is
 *      missing whatever the others show;
 *   5. capture windows were asked for (exec --capture) and none opened:
 *      the program never reached what the windows take (the range never
 *      pushed, its K-th occurrence never came, the profiler never
 *      started), so nothing it did was traced where it is judged;
 *      no device work at all: no kernel, copy or memset to check;
 *   6. CUPTI dropped records (unless allow_dropped): every metric may be
 *      an undercount;
 *   7. a file was cut short mid-record (unless allow_dropped), likewise.
 * Accepted dropped records or a cut file, and processes truncated (no
 * end record: `_exit`, a signal), are warnings: the verdicts stand on
 * what was recorded, and the warning says what may be missing (and the
 * rank of a truncated process, when it has one).
 */
#ifndef CUPROOF_TRUST_H
#define CUPROOF_TRUST_H

#include "export.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cp_ranks;

typedef struct cp_trust_in {
    /* What the trace is, in the messages: "the program's trace", a path. */
    const char *what;
    /* Per-process files read for a traced program; SIZE_MAX for a trace
     * that is not a program's (a case's trace file, a rec file). */
    size_t traced_files;
    const char *dir; /* where those files were looked for (rule 1's message) */
    /* The processes, for rule 2 and the truncated ones (may be NULL). */
    const cp_trace *processes;
    uint64_t device_work; /* kernels + copies + memsets */
    uint64_t dropped;     /* records CUPTI dropped */
    bool cut_short;       /* a file ended mid-record */
    const char *cut_why;  /* the reader's words for it (may be NULL) */
    bool allow_dropped;   /* --allow-dropped */
    /* The launcher's run id (cp_program_run.id) for rule 2; NULL or "":
     * the processes are compared among themselves. */
    const char *run;
    /* Why this machine has no usable GPU (cp_env.no_device_reason), for
     * rule 1's message; NULL or "" when it has one. */
    const char *no_device;
    /* The ranks' analysis (internal/ranks.h), for rule 3's one job; NULL
     * for a trace without ranks. */
    const struct cp_ranks *ranks;
    /* exec --capture's SPEC (NULL: none) and the windows read, for rule 5. */
    const char *capture;
    uint32_t windows;
} cp_trust_in;

typedef struct cp_trust {
    bool trusted;
    int exit;           /* CP_EXIT_OK when trusted, else CP_EXIT_INCONCLUSIVE */
    char why[1024];     /* why it is not trusted; "" when it is */
    char warning[1024]; /* trusted, with what may be missing; "" when nothing */
} cp_trust;

/* Applies the rule to `in`. */
CP_API void cp_trust_judge(const cp_trust_in *in, cp_trust *out);

#ifdef __cplusplus
}
#endif

#endif
