/*
 * fork_exec_children: a program of several processes, for `cuproof exec` to
 * follow. The parent initialises CUDA and runs a kernel and a copy, then
 * starts 3 children with fork() + execv() of its own executable
 * (/proc/self/exe, argv[1] = "child", argv[2] = the child's index). Forking
 * after CUDA is initialised is safe here because the child calls nothing
 * but execv (and _exit if that fails): the exec gives it a fresh image, so
 * it initialises CUDA itself, and the injection (CUDA_INJECTION64_PATH, in
 * the environment the child inherits) is loaded into it as into the parent.
 * Each child fills an array on the GPU with values of its own, copies it
 * back, checks it and exits 0. The parent waits for every child and exits 0
 * only if its own result and all 3 children were right.
 *
 * Written for: `kernels >= 4` (the parent's kernel and one per child, from
 * 4 processes merged into one trace; the children's pids are not known in
 * advance, so no process(PID) scope is written) and `devices >= 1`:
 * `cuproof exec` exits 0.
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *who = "fork_exec_children";

#define PROGRAM "fork_exec_children"
#include "exec_common.cuh"

enum { CHILDREN = 3, N = 1 << 20, PARENT_TAG = 100 };

__global__ void fill(int *x, int n, int tag)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = tag * 7919 + i;
}

/* One kernel and one copy back, checked: 0 when every element is right. */
static int work(int tag)
{
    int *dev = NULL, *host = (int *)malloc(N * sizeof(int));
    if (!host) {
        fprintf(stderr, "%s: out of host memory\n", who);
        return 1;
    }
    CHECK(cudaMalloc((void **)&dev, N * sizeof(int)));
    fill<<<64, 256>>>(dev, N, tag);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(host, dev, N * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(dev));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += host[i] != tag * 7919 + i;
    free(host);
    if (wrong)
        fprintf(stderr, "%s: %d of %d elements wrong\n", who, wrong, N);
    return wrong != 0;
}

static int child(const char *index)
{
    char *end = NULL;
    long k = strtol(index, &end, 10);
    if (*index == '\0' || *end != '\0' || k < 0 || k >= CHILDREN) {
        fprintf(stderr, "%s: bad child index '%s' (0 to %d)\n", who, index, CHILDREN - 1);
        return 2;
    }
    if (work((int)k) != 0)
        return 1;
    printf("%s: child %ld (pid %d): output right\n", who, k, (int)getpid());
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0) {
        who = "fork_exec_children (child)";
        return child(argv[2]);
    }
    if (argc != 1) {
        fprintf(stderr, "usage: %s (the children are started as: %s child INDEX)\n", argv[0],
                argv[0]);
        return 2;
    }

    int failed = work(PARENT_TAG);
    fflush(stdout); /* nothing buffered may be written twice */
    fflush(stderr);
    pid_t pids[CHILDREN];
    int started = 0;
    for (int k = 0; k < CHILDREN; k++) {
        char index[16];
        snprintf(index, sizeof index, "%d", k);
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "%s: fork failed: %s\n", who, strerror(errno));
            failed = 1;
            break;
        }
        if (pid == 0) {
            char *args[] = {argv[0], (char *)"child", index, NULL};
            execv("/proc/self/exe", args);
            _exit(127); /* only async-signal-safe calls between fork and exec */
        }
        pids[started++] = pid;
    }
    for (int k = 0; k < started; k++) {
        int status = 0;
        while (waitpid(pids[k], &status, 0) < 0) {
            if (errno != EINTR) {
                fprintf(stderr, "%s: waitpid(%d) failed: %s\n", who, (int)pids[k], strerror(errno));
                return EXIT_FAILURE;
            }
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            continue;
        failed = 1;
        if (WIFEXITED(status))
            fprintf(stderr, "%s: child %d (pid %d) exited with %d%s\n", who, k, (int)pids[k],
                    WEXITSTATUS(status),
                    WEXITSTATUS(status) == 127 ? " (execv of /proc/self/exe failed)" : "");
        else if (WIFSIGNALED(status))
            fprintf(stderr, "%s: child %d (pid %d) killed by signal %d (%s)\n", who, k,
                    (int)pids[k], WTERMSIG(status), strsignal(WTERMSIG(status)));
    }
    if (failed) {
        fprintf(stderr, "%s: failed\n", who);
        return EXIT_FAILURE;
    }
    printf("%s: parent (pid %d) and %d children: every output right\n", who, (int)getpid(),
           CHILDREN);
    return EXIT_SUCCESS;
}
