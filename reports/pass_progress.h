/*
 * Progress of `run --runs K` while it goes (private to reports/, for
 * passes.c): a line as each case of the first pass is timed and traced,
 * the lines of each later pass's own log as its process writes them, a
 * line at least every CP_PASS_QUIET_S seconds while a pass says nothing,
 * and with each line an estimate of the time left. A pass is one unit of
 * work; the time left is the time so far times the units left over the
 * units done.
 */
#ifndef CUPROOF_REPORTS_PASS_PROGRESS_H
#define CUPROOF_REPORTS_PASS_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* The longest a pass goes without a line (s). */
#define CP_PASS_QUIET_S 10.0

typedef struct cp_pass_progress {
    FILE *out;       /* NULL: nothing is said */
    int runs;        /* passes in all */
    double start_ms; /* cp_now_ms when the first pass began */
    double done;     /* passes done, with fractions */
    double said_ms;  /* when the last line was said */
    double quiet_s;  /* the longest silence (CP_PASS_QUIET_S) */
    /* The process being followed: what its lines are said under, its log
     * and how far it was read, the share of the run its cases are. */
    char label[64];
    char log[4200];
    long read_to;
    const pid_t *pid;
    double from, share;
    char partial[1024]; /* a line read without its end yet */
} cp_pass_progress;

/* Starts the clock for `runs` passes, said into `out` (NULL: silent). */
void cp_pass_progress_start(cp_pass_progress *p, FILE *out, int runs);

/* Says "cuproof: LABEL: TEXT (about T left)" with `done` passes done. */
void cp_pass_progress_say(cp_pass_progress *p, double done, const char *label, const char *text);

/* Follows the log of a pass in another process: its case lines ("[i/n]
 * ...") said under `label` as they appear, `from` to `from + share` of
 * the passes done as they go. Then cp_pass_progress_poll, the wait hook
 * of cp_pass_in_process, reads what is new. */
void cp_pass_progress_follow(cp_pass_progress *p, const char *label, const char *log,
                             const pid_t *pid, double from, double share);
void cp_pass_progress_poll(void *progress);

#endif
