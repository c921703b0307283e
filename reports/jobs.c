/* Writes that share nothing, run side by side: see jobs.h. */
#include "jobs.h"

#include <cuproof/error.h>

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* A job on whichever thread runs it: its error is that thread's
 * (cp_last_error is per thread), so it is kept with the job. */
static void *run_job(void *arg)
{
    cp_job *j = arg;
    j->rc = j->run(j->ctx);
    snprintf(j->error, sizeof j->error, "%s", j->rc < 0 ? cp_last_error() : "");
    return NULL;
}

int cp_jobs_run(cp_job *jobs, size_t n)
{
    pthread_t *threads = calloc(n ? n : 1, sizeof *threads);
    bool *started = calloc(n ? n : 1, sizeof *started);
    /* The writers' threads take no signal: the launcher's (SIGINT and the
     * like, passed on to a program) stay the calling thread's. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (size_t i = 1; threads && started && i < n; i++)
        started[i] = pthread_create(&threads[i], NULL, run_job, &jobs[i]) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || !started || !started[i])
            run_job(&jobs[i]);
    for (size_t i = 1; started && i < n; i++)
        if (started[i])
            pthread_join(threads[i], NULL);
    free(threads);
    free(started);
    for (size_t i = 0; i < n; i++)
        if (jobs[i].rc < 0)
            return cp_failf(jobs[i].rc, "%s", jobs[i].error);
    return 0;
}
