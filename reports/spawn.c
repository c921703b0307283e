/* cuproof started again as a child with its output in a log: the spawn
 * that `cuproof ab` and the later passes of `cuproof run --runs K` share
 * (cuproof/internal/spawn.h). */
#include <cuproof/internal/spawn.h>

#include <cuproof/error.h>
#include "reports/pass_progress.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int spawn(const char *exe, char *const argv[], const char *log, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    int err = posix_spawn(pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return err ? cp_failf(CP_EIO, "cannot run %s: %s", exe, strerror(err)) : 0;
}

/* Waits for `pid`; with `on_wait`, calls it about every 200 ms while the
 * child runs (and once more after it ended), so that its caller can show
 * what the child's log says. */
static void wait_for(pid_t pid, int *status, int *signal_no, void (*on_wait)(void *),
                     void *ctx)
{
    int st = 0;
    for (;;) {
        pid_t got = waitpid(pid, &st, on_wait ? WNOHANG : 0);
        if (got == pid || (got < 0 && errno != EINTR))
            break;
        if (got == 0) {
            on_wait(ctx);
            struct timespec nap = {0, 200 * 1000 * 1000};
            nanosleep(&nap, NULL);
        }
    }
    if (on_wait)
        on_wait(ctx);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (signal_no)
        *signal_no = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

int cp_spawn_logged(const char *exe, char *const argv[], const char *log, int *status,
                    int *signal_no)
{
    pid_t pid;
    int rc = spawn(exe, argv, log, &pid);
    if (rc == 0)
        wait_for(pid, status, signal_no, NULL, NULL);
    return rc;
}

/* Every file of `dir` but its report.json: the pass's traces and pages
 * are the first pass's to write. */
static void keep_report_only(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            strcmp(e->d_name, "report.json") == 0)
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
}

int cp_pass_in_process(char *const args[], size_t nargs, const char *dir, cp_report *report,
                       pid_t *pid, void (*on_wait)(void *ctx), void *ctx)
{
    memset(report, 0, sizeof *report);
    char exe[PATH_MAX], log[PATH_MAX + 8], path[PATH_MAX + 16];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return cp_failf(CP_EIO, "cannot find this executable (/proc/self/exe): %s",
                        strerror(errno));
    exe[len] = '\0';
    snprintf(log, sizeof log, "%s.log", dir);
    snprintf(path, sizeof path, "%s/report.json", dir);
    char **argv = calloc(nargs + 5, sizeof *argv);
    if (!argv)
        return cp_failf(CP_ENOMEM, "out of memory");
    size_t k = 0;
    argv[k++] = exe;
    argv[k++] = "run";
    for (size_t i = 0; i < nargs; i++)
        argv[k++] = args[i];
    argv[k++] = "--out";
    argv[k++] = (char *)dir;
    int status = 0, sig = 0;
    /* The pass says each case as it is timed, for on_wait to follow. */
    setenv(CP_PASS_PROGRESS_ENV, "1", 1);
    int rc = spawn(exe, argv, log, pid);
    unsetenv(CP_PASS_PROGRESS_ENV);
    free(argv);
    if (rc < 0)
        return rc;
    wait_for(*pid, &status, &sig, on_wait, ctx);
    /* 0 passed, 1 a case failed, 3 one was inconclusive: each wrote its
     * report, which says what happened. */
    if (status < 0 || !(status == 0 || status == 1 || status == 3))
        return cp_failf(CP_EIO, "the pass in process %d (%s run ... --out %s) ended with %s %d; "
                                "its output is in %s",
                        (int)*pid, exe, dir, status < 0 ? "signal" : "exit status",
                        status < 0 ? sig : status, log);
    rc = cp_report_read(path, report);
    keep_report_only(dir);
    if (rc < 0) {
        char why[768];
        snprintf(why, sizeof why, "%s", cp_last_error());
        return cp_failf(rc, "the pass in process %d left no report to read (%s); its output is "
                            "in %s",
                        (int)*pid, why, log);
    }
    return 0;
}
