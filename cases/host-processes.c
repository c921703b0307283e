/*
 * host-processes (seed 001, question 3: the multi-thread example with
 * processes): 10 child processes, each running mult_ker (1 block x 64
 * threads) on its own array and sending the result back through a pipe.
 *
 *   processes       children started fresh (this executable again, in the
 *                   case's child role: <cuproof/child.h>), so each initialises
 *                   CUDA itself, with its own context; every array must come
 *                   back right;
 *   fork-after-init a child forked from this process after it initialised
 *                   CUDA, which then calls cudaMalloc: the documented answer
 *                   is that CUDA cannot be used there. The child reports what
 *                   it got (natively cudaErrorInitializationError; under
 *                   compute-sanitizer's memcheck the call never returns and
 *                   the child is killed), and the case records it; the parent
 *                   then runs mult_ker on one array, which must still come
 *                   back right.
 *
 * The children's GPU work is not in this process's trace (CUPTI traces one
 * process); the case checks their output and exit status instead.
 */
#include <cuproof/case.h>
#include <cuproof/child.h>
#include "../kernels/mult.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { PROCESSES = 0, FORK_AFTER_INIT };

#define CHILDREN 10
#define SEED 61

typedef struct state {
    int len, device;
    float *in;  /* every child's input, as the children draw it */
    float *out; /* what the children sent back */
    uint64_t reference_mismatches;
    int exits_ok;           /* children of the last run that exited 0 */
    char fork_result[128];  /* what cudaMalloc said in the forked child */
    bool fork_cannot_use;   /* cudaMalloc failed with an error, or hung */
} state;

/* A child: draws its array (the same generator and seed as the parent),
 * runs mult_ker on device argv[1] and writes the result to stdout.
 * Arguments: device, length, index. */
static int child(int argc, char **argv)
{
    int rc = 0;
    float *host = NULL, *dev = NULL;
    if (argc != 3)
        return 2;
    int device = atoi(argv[0]), len = atoi(argv[1]), index = atoi(argv[2]);
    if (len <= 0 || index < 0 || index >= CHILDREN)
        return 2;
    size_t total = (size_t)CHILDREN * (size_t)len;
    host = malloc(total * sizeof(float));
    if (!host)
        return 3;
    cp_ref_mult_inputs(host, total, SEED, 0);
    float *mine = host + (size_t)index * len;
    CP_CUDA(cudaSetDevice(device));
    CP_CUDA(cudaMalloc((void **)&dev, (size_t)len * sizeof(float)));
    CP_CUDA(cudaMemcpy(dev, mine, (size_t)len * sizeof(float), cudaMemcpyHostToDevice));
    CP_CUDA(cp_mult_launch(dev, len, 64, 0));
    CP_CUDA(cudaMemcpy(mine, dev, (size_t)len * sizeof(float), cudaMemcpyDeviceToHost));
    if (fwrite(mine, sizeof(float), (size_t)len, stdout) != (size_t)len)
        rc = CP_EIO;
out:
    if (rc < 0)
        fprintf(stderr, "host-processes child %d: %s\n", index, cp_last_error());
    cudaFree(dev);
    free(host);
    return rc < 0 ? 1 : 0;
}

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    free(s->in);
    free(s->out);
}

static int setup(cp_ctx *ctx)
{
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    /* Its subject is the host: the work runs in child processes, which
     * this process's events cannot see. */
    if (cp_time_wall(ctx, -1, "its subject is host processes: the work runs in children") < 0)
        return CP_EINVAL;
    s->len = cp_ctx_profile(ctx) == CP_PROFILE_FULL ? 1 << 20 : 1 << 18;
    s->device = cp_ctx_env(ctx)->device;
    size_t total = (size_t)CHILDREN * (size_t)s->len;
    s->in = malloc(total * sizeof(float));
    s->out = malloc(total * sizeof(float));
    if (!s->in || !s->out)
        return CP_ENOMEM;
    s->reference_mismatches = cp_ref_mult_inputs(s->in, total, SEED, (size_t)s->len);
    return 0;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    state *s = cp_ctx_state(ctx);
    memset(s->out, 0xFF, (size_t)CHILDREN * (size_t)s->len * sizeof(float));
    return 0;
}

static int run_processes(state *s)
{
    int rc = 0;
    pid_t pids[CHILDREN];
    int fds[CHILDREN], started = 0;
    char device[16], len[16], index[CHILDREN][16];
    snprintf(device, sizeof device, "%d", s->device);
    snprintf(len, sizeof len, "%d", s->len);
    for (int i = 0; i < CHILDREN; i++) {
        snprintf(index[i], sizeof index[i], "%d", i);
        char *args[] = {device, len, index[i], NULL};
        CP_TRY(cp_child_spawn("host-processes", args, &pids[i], &fds[i]));
        started++;
    }
out:
    s->exits_ok = 0;
    /* The children run side by side, so one deadline serves them all: ten
     * hung children cost 120 s, not ten times that. The limit leaves room
     * for ten children started at once under compute-sanitizer. */
    double deadline = cp_now_ms() + 120000;
    for (int i = 0; i < started; i++) {
        size_t got = 0;
        double left = deadline - cp_now_ms();
        int left_ms = left > 0 ? (int)left : 0;
        int read_rc = cp_child_read(fds[i], s->out + (size_t)i * s->len,
                                    (size_t)s->len * sizeof(float), left_ms, &got);
        close(fds[i]);
        left = deadline - cp_now_ms();
        int status = -1, wait_rc = cp_child_wait(pids[i], left > 0 ? (int)left : 0, &status);
        if (rc == 0 && (read_rc < 0 || wait_rc < 0))
            rc = read_rc < 0 ? read_rc : wait_rc;
        s->exits_ok += wait_rc == 0 && status == 0;
    }
    if (rc == 0 && s->exits_ok != CHILDREN)
        rc = cp_failf(CP_ECUDA, "%d of %d children failed (their errors are on stderr)",
                      CHILDREN - s->exits_ok, CHILDREN);
    return rc;
}

/* fork() after CUDA is initialised; the child only asks for memory and
 * reports the answer, then leaves without running any exit handler. */
static int run_fork_after_init(state *s)
{
    int p[2];
    if (pipe(p) != 0)
        return cp_failf(CP_EIO, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return cp_failf(CP_EIO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        void *d = NULL;
        cudaError_t e = cudaMalloc(&d, 256);
        char msg[128];
        int n = snprintf(msg, sizeof msg, "%s", cudaGetErrorName(e));
        if (write(p[1], msg, (size_t)n) < 0)
            _exit(2);
        _exit(e == cudaSuccess ? 0 : 1);
    }
    close(p[1]);
    /* The child writes a short message and exits: end of file is the
     * normal end. A child silent for 20 s hangs in cudaMalloc (as under
     * compute-sanitizer's memcheck) and is killed at once. */
    char msg[128] = "";
    size_t n = 0;
    int read_rc = cp_child_read(p[0], msg, sizeof msg - 1, 20000, &n);
    close(p[0]);
    int status = -1;
    int wait_rc = cp_child_wait(pid, read_rc == CP_ETIMEDOUT ? 0 : 20000, &status);
    msg[n] = '\0';
    if (wait_rc == CP_ETIMEDOUT && n == 0) {
        /* Never returning is as much "cannot use CUDA" as an error is. */
        snprintf(s->fork_result, sizeof s->fork_result,
                 "cudaMalloc did not return within 20 s; the child was killed");
        s->fork_cannot_use = true;
    } else if (wait_rc < 0) {
        snprintf(s->fork_result, sizeof s->fork_result, "no answer: %s", cp_last_error());
        s->fork_cannot_use = false;
    } else {
        snprintf(s->fork_result, sizeof s->fork_result, "%s (exit %d)", n > 0 ? msg : "nothing",
                 status);
        s->fork_cannot_use = status == 1 && n > 0 && strcmp(msg, "cudaSuccess") != 0;
    }
    cp_clear_last_error();
    /* The parent's CUDA must be unharmed: it processes the first array. */
    int rc = 0;
    float *d = NULL;
    size_t bytes = (size_t)s->len * sizeof(float);
    CP_CUDA(cudaMalloc((void **)&d, bytes));
    CP_CUDA(cudaMemcpy(d, s->in, bytes, cudaMemcpyHostToDevice));
    CP_CUDA(cp_mult_launch(d, s->len, 64, 0));
    CP_CUDA(cudaMemcpy(s->out, d, bytes, cudaMemcpyDeviceToHost));
out:
    cudaFree(d);
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    state *s = cp_ctx_state(ctx);
    cp_phase_begin(ctx, v->index == PROCESSES ? "children" : "fork");
    int rc = v->index == PROCESSES ? run_processes(s) : run_fork_after_init(s);
    cp_phase_end(ctx);
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    size_t n = (size_t)CHILDREN * (size_t)s->len;
    if (v->index == FORK_AFTER_INIT)
        n = (size_t)s->len; /* the parent's own array after the fork */
    *mismatches = cp_count_bit_mismatches(s->out, s->in, n);
    *elements = n;
    return 0;
}

static int checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    cp_check(ctx, "reference: mult_ker's arithmetic leaves these inputs unchanged",
             s->reference_mismatches == 0, "0 changed", "%llu changed",
             (unsigned long long)s->reference_mismatches);
    cp_check(ctx, "processes: every child initialised CUDA itself and exited cleanly",
             s->exits_ok == CHILDREN, "10 children, exit status 0", "%d of %d",
             s->exits_ok, CHILDREN);
    cp_check(ctx, "fork-after-init: a child forked after CUDA initialisation cannot use it",
             s->fork_cannot_use,
             "cudaMalloc fails in the child with a CUDA error, or never returns",
             "%s", s->fork_result);
    return 0;
}

CUPROOF_CASE(host_processes,
    .title = "Ten child processes each run mult_ker; and what a child forked after CUDA "
             "initialisation gets",
    .source = "seed 001 (question 3: multi-kernel_multi-thread.py with processes)",
    .variants = CP_VARIANTS("processes", "fork-after-init"),
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .checks = checks,
    .teardown = teardown,
    .child = child);
