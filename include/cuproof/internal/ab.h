/*
 * cuproof ab: two builds of cuproof (two `cuproof` executables, or two
 * install prefixes) run on the same GPU in shuffled AB/BA pairs, each
 * pair back to back, and each variant judged on the paired log ratios of
 * its medians (Pinpoint's A/B mode). What drifts over minutes
 * (clocks, the GPU's state) drifts within a pair far less than between
 * two runs minutes apart, and a pair's order is drawn at random so that
 * "the first one runs colder" cancels.
 *
 * Each run is `BIN run --runs 1 --out DIR/pN-a|b [--profile P] [CASE...]`
 * (a run that exits 0 or 1 counts: a failing case still timed its
 * variants; any other exit, or no report, is an error naming the command
 * and its log), or for programs `SELF exec --repeat 1 --out DIR -- PROGRAM`
 * (0, 1 or 3 count: a program without GPU work still has its wall time;
 * 4, the program failed, is an error). Pairs are added, at least
 * `min_pairs`, until every variant's verdict is decided (cp_pairs_decided),
 * `max_pairs` is reached or `max_time_s` is spent; then an undecided
 * variant is "noisy", with the pairs that would decide it. A pair runs
 * only the cases that still have an undecided variant (builds; a
 * program is one case), and a decided variant takes no more pairs.
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_AB_H
#define CUPROOF_AB_H

#include "../export.h"

#include "run_stats.h"

#include "../result.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_ab_opts {
    const char *a, *b;  /* executables, or prefixes holding bin/cuproof */
    /* Programs instead of builds (cuproof ab --exec): each run is `SELF
     * exec --repeat 1 --out DIR -- PROGRAM...` of exec_a or exec_b
     * (NULL-terminated), judged on the wall time and each NVTX range's
     * (the report's "program" and "range:NAME" variants); a and b are
     * then unused. NULL: builds. */
    char *const *exec_a, *const *exec_b;
    const char *self; /* the cuproof that runs them */
    char *const *cases; /* NULL-terminated; NULL or empty: every case */
    const char *profile; /* NULL: the runs' default (ci) */
    const char *work_dir; /* the runs' reports and logs go under it */
    int min_pairs, max_pairs;
    uint64_t seed; /* the pairs' order */
    double threshold, min_effect;
    /* The time budget (s): no pair starts once it is spent; 0: none. The
     * variants then undecided are noisy, with the pairs that would decide
     * them. */
    double max_time_s;
    FILE *progress; /* a line per pair; NULL: none */
} cp_ab_opts;

typedef struct cp_ab_variant {
    char case_name[64], variant[64];
    /* The figure its pairs are judged on, as compare's (cp_cmp_variant):
     * the GPU's time where both builds measured it and judge on it; wall
     * time else, and at the host threshold when both builds' case
     * judges it on wall time (declared_wall). */
    cp_work_figure judged_on;
    bool declared_wall;
    bool by_busy; /* the GPU's time as each run's traced busy time (compare's by_busy) */
    double *log_ratios; /* log(B / A) of each pair's medians of that figure; owned */
    size_t n;
    cp_pair_cmp verdict;
} cp_ab_variant;

typedef struct cp_ab_result {
    cp_ab_variant *variants; /* in the first pair's report order; owned */
    size_t nvariants;
    int pairs;
    int b_first; /* pairs run B then A */
    bool all_decided;
    bool time_spent; /* stopped by max_time_s with variants undecided */
    int regressions; /* variants "slower" by more than the threshold */
} cp_ab_result;

/* Runs the pairs and judges every variant both builds timed. Returns 0;
 * CP_EINVAL for options out of range; CP_EIO when a build cannot be run
 * or leaves no report (naming the command and its log); the report
 * reader's errors; CP_ENOMEM. */
CP_API int cp_ab_run(const cp_ab_opts *o, cp_ab_result *out);

/* The result as a table (one line per variant, regressions first) on `f`. */
CP_API void cp_ab_print(const cp_ab_result *r, const cp_ab_opts *o, FILE *f);

CP_API void cp_ab_result_free(cp_ab_result *r);

#ifdef __cplusplus
}
#endif

#endif
