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

/* Set by the parent in the environment of a pass it runs in another
 * process: that process says each case as it is timed, bare ("[i/n] CASE
 * timed: STATUS"), for the parent to follow in its log. */
#define CP_PASS_PROGRESS_ENV "CUPROOF_PASS_PROGRESS"

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
    bool split;         /* a pass times every case, then traces each */
    bool bare;          /* a pass's own process: its case lines alone, for
                         * the parent that follows its log */
} cp_pass_progress;

/* Starts the clock for `runs` passes, said into `out` (NULL: silent);
 * `split`: each pass times every case before it traces any. */
void cp_pass_progress_start(cp_pass_progress *p, FILE *out, int runs, bool split);

/* A session sink (cp_sink.on_run, session.h) that hears every run of the
 * case under way in this process and says where it is when the pass has
 * been quiet for quiet_s: a long case is never silent. */
struct cp_run_progress;
void cp_pass_progress_on_run(void *progress, const struct cp_run_progress *r);

/* Says "cuproof: LABEL: TEXT (S s in; about T left)", LABEL the pass under
 * way (`label`: "pass 1 of K", or the process followed), with `done`
 * passes done. */
void cp_pass_progress_say(cp_pass_progress *p, double done, const char *text);

/* Follows the log of a pass in another process: its case lines ("[i/n]
 * ...") said under `label` as they appear, `from` to `from + share` of
 * the passes done as they go. Then cp_pass_progress_poll, the wait hook
 * of cp_pass_in_process, reads what is new. */
void cp_pass_progress_follow(cp_pass_progress *p, const char *label, const char *log,
                             const pid_t *pid, double from, double share);
void cp_pass_progress_poll(void *progress);

#endif
