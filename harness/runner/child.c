/*
 * Child processes of a case (cuproof/child.h): this executable started
 * again in a case's hidden child role, its output on a pipe, and the
 * parent's bounded reads and waits, so that a child that hangs cannot
 * hang the parent. A child starts fresh because CUDA must not be used in
 * a process forked from one that already initialised it.
 */
#include <cuproof/child.h>

#include <cuproof/case.h>
#include <cuproof/error.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

bool cp_child_dispatch(int argc, char **argv, int *status)
{
    if (argc < 2 || strcmp(argv[1], CP_CHILD_FLAG) != 0)
        return false;
    const cp_case_def *def = argc >= 3 ? cp_registry_find(argv[2]) : NULL;
    if (!def || !def->child) {
        fprintf(stderr, "cuproof: no child role for case '%s'\n", argc >= 3 ? argv[2] : "");
        *status = 2;
        return true;
    }
    *status = def->child(argc - 3, argv + 3);
    return true;
}

int cp_child_spawn(const char *name, char *const args[], pid_t *pid, int *fd)
{
    int rc = 0, p[2] = {-1, -1};
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return cp_failf(CP_EIO, "cannot find this executable: %s", strerror(errno));
    exe[len] = '\0';
    size_t nargs = 0;
    while (args && args[nargs])
        nargs++;
    char **argv = calloc(nargs + 4, sizeof *argv);
    if (!argv)
        return cp_failf(CP_ENOMEM, "out of memory starting a child");
    argv[0] = exe;
    argv[1] = CP_CHILD_FLAG;
    argv[2] = (char *)name;
    for (size_t i = 0; i < nargs; i++)
        argv[3 + i] = args[i];
    /* The child's environment, less a test framework's sandbox variables
     * (Criterion's BXFI_*): the child is not one of its workers. */
    size_t nenv = 0;
    while (environ[nenv])
        nenv++;
    char **envp = calloc(nenv + 1, sizeof *envp);
    if (!envp) {
        free(argv);
        return cp_failf(CP_ENOMEM, "out of memory starting a child");
    }
    for (size_t i = 0, j = 0; i < nenv; i++)
        if (strncmp(environ[i], "BXFI_", 5) != 0)
            envp[j++] = environ[i];
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (pipe(p) != 0) {
        rc = cp_failf(CP_EIO, "pipe: %s", strerror(errno));
        goto out;
    }
    posix_spawn_file_actions_adddup2(&actions, p[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, p[0]);
    posix_spawn_file_actions_addclose(&actions, p[1]);
    int e = posix_spawn(pid, exe, &actions, NULL, argv, envp);
    if (e != 0) {
        rc = cp_failf(CP_EIO, "posix_spawn %s: %s", exe, strerror(e));
        goto out;
    }
    *fd = p[0];
    p[0] = -1;
out:
    if (p[0] >= 0)
        close(p[0]);
    if (p[1] >= 0)
        close(p[1]);
    posix_spawn_file_actions_destroy(&actions);
    free(argv);
    free(envp);
    return rc;
}

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int cp_child_read(int fd, void *buf, size_t bytes, int timeout_ms, size_t *got)
{
    long long deadline = now_ms() + timeout_ms;
    *got = 0;
    while (*got < bytes) {
        long long left = deadline - now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = left > 0 ? poll(&p, 1, (int)left) : 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0)
            return cp_failf(CP_EIO, "poll on a child's pipe: %s", strerror(errno));
        if (ready == 0)
            return cp_failf(CP_ETIMEDOUT, "a child sent %zu of %zu bytes within %d ms", *got, bytes,
                            timeout_ms);
        ssize_t r = read(fd, (char *)buf + *got, bytes - *got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return cp_failf(CP_EIO, "reading a child's pipe: %s", strerror(errno));
        if (r == 0)
            return cp_failf(CP_EIO, "a child sent %zu of %zu bytes and closed its pipe", *got,
                            bytes);
        *got += (size_t)r;
    }
    return 0;
}

int cp_child_wait(pid_t pid, int timeout_ms, int *exit_status)
{
    int st = 0;
    for (int waited = 0;; waited++) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            break;
        if (r < 0)
            return cp_failf(CP_EIO, "waitpid %d: %s", (int)pid, strerror(errno));
        if (waited >= timeout_ms) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return cp_failf(CP_ETIMEDOUT, "child %d did not finish within %d ms and was killed",
                            (int)pid, timeout_ms);
        }
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    if (WIFSIGNALED(st))
        return cp_failf(CP_EIO, "child %d was killed by signal %d", (int)pid, WTERMSIG(st));
    *exit_status = WEXITSTATUS(st);
    return 0;
}
