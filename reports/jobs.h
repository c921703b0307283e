/* Writes that share nothing, run side by side: the launcher's output
 * files (the merged trace beside the Perfetto file, report.json beside
 * report.html, a streamed program's Perfetto file beside its summary and
 * scopes) each on a thread of its own. Private to the reports layer. */
#ifndef CUPROOF_REPORTS_JOBS_H
#define CUPROOF_REPORTS_JOBS_H

#include <stddef.h>

/* One job: run(ctx) returns 0 or a negative code with cp_last_error
 * saying why (naming the file it could not write). */
typedef struct cp_job {
    int (*run)(void *ctx);
    void *ctx;
    int rc;           /* set by cp_jobs_run */
    char error[1024]; /* the job's cp_last_error when rc < 0 */
} cp_job;

/*
 * Runs the n jobs at once, jobs[0] on the calling thread and each other
 * on a thread of its own (on the calling thread after jobs[0] when a
 * thread cannot be started), and returns once every one has ended: 0, or
 * the first failing job's code (in the jobs' order), with cp_last_error
 * its message. Every job's own code and message stay in jobs[i]. The jobs
 * must share nothing they write.
 */
int cp_jobs_run(cp_job *jobs, size_t n);

#endif
