/*
 * The passes of `cuproof run --runs K --processes P`: which runs go where.
 * Each case is timed before any is traced (cp_run_opts.timed says why),
 * the first pass in this process, each later pass in a process of its own
 * (cp_pass_in_process, spawn.h), and with P > 1 each pass's short cases
 * (every variant under CP_PROCESS_SHORT_MS) timed in P - 1 more untraced
 * processes, since a short variant's time sits on a level each process
 * draws. Every later pass and process is folded into the case's first
 * (cp_case_result_add_pass, cp_case_result_add_process) before the
 * session sees it. This is the one policy of runs in child processes;
 * `cuproof ab` (ab.h) runs its builds through the same spawn.
 *
 * The caller runs a case in this process (the runner is a layer this one
 * does not link) and says which of its options a pass keeps; the library
 * decides the rest.
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_INTERNAL_PASSES_H
#define CUPROOF_INTERNAL_PASSES_H

#include "../export.h"
#include "../result.h"
#include "session.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs selected case `i` in this process into `out` (zeroed by the
 * caller): untraced for its timed runs when `timing` is true; else traced,
 * with `timed` (NULL or the case's untraced result) lending its timed
 * runs. *lost is set when the device can no longer be used (a sticky
 * error): no later GPU case can run here. Returns -1, or an exit status
 * (CP_EXIT_*) that ends the run. */
typedef int (*cp_pass_run_fn)(void *ctx, size_t i, bool timing, const cp_case_result *timed,
                              cp_case_result *out, bool *lost);

typedef struct cp_passes_opts {
    const char *const *cases; /* the selected cases' names, in order */
    size_t ncases;
    int runs;            /* K >= 1: passes over every selected case */
    int processes;       /* P >= 1: processes that time a pass's short cases */
    const char *out_dir; /* OUT: passes go to OUT/passes/pass-N[-process-M] */
    /* The options a pass in another process keeps, each with its value,
     * without case names, --runs, --out or --processes (the option table
     * says which: cli/commands.c). */
    char *const *args;
    size_t nargs;
    bool cases_given; /* the command line named its cases */
    bool split;       /* traced: time every case before tracing any */
    cp_pass_run_fn run;
    void *ctx;
    FILE *progress; /* a line per pass and process; NULL: none */
} cp_passes_opts;

/*
 * Runs the selected cases into session `s`: once, or in o->runs passes
 * over all of them, each case's later passes and processes folded into
 * its first. With one pass of one process each case reaches the sinks as
 * soon as it ran; else at the end. *status becomes CP_EXIT_FAILED when a
 * case failed. Returns -1, or the exit status that ends the run early
 * (CP_EXIT_TOOL for a pass that left no report, with the reason on
 * stderr, or the status o->run returned).
 */
CP_API int cp_passes_run(const cp_passes_opts *o, cp_session *s, int *status);

/* Whether a case's pass is timed in more processes: it ran, and each
 * variant it timed took under CP_PROCESS_SHORT_MS (a long variant's level
 * moves less than its run takes to repeat, and would multiply the run's
 * time). */
CP_API bool cp_pass_short_case(const cp_case_result *c);

/* After --runs K, what the passes showed: each variant's spread between
 * its passes (the figure a timing threshold must stay above), and each
 * declared expectation's metric and each claim's value over the traced
 * passes, into `out`; a warning into `warn` for each whose bound lies
 * within CP_MARGIN_SPREADS of its spread (another run can change its
 * verdict). */
CP_API void cp_passes_print_spread(const cp_report *r, int runs, FILE *out, FILE *warn);

#ifdef __cplusplus
}
#endif

#endif
