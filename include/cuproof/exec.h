/*
 * The launcher of `cuproof exec`: runs an unmodified program with
 * libcuproof_inject.so injected into every process of it that uses CUDA
 * (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH; children inherit them),
 * each process writing its trace into a directory, and waits for it and
 * for the traced descendants that outlive it. What the traces say is
 * judged apart, by cp_program_judge (program.h), which reads how the
 * program ended (cp_program_run) from here. This header holds no CUDA: the
 * judge may read it, and only the runner may call cp_exec_run.
 *
 * The program runs in a process group of its own, so that a timeout ends
 * its children too; SIGINT, SIGTERM and SIGHUP that reach the caller while
 * it runs are passed on to that group; on a terminal the group takes the
 * foreground. One program at a time per process (the forwarding is
 * process-wide).
 */
#ifndef CUPROOF_EXEC_H
#define CUPROOF_EXEC_H

#include "export.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How one run of the program ended: cp_exec_run fills it, and the judge
 * (cp_program_judge, program.h) reads it. */
typedef struct cp_program_run {
    int status;     /* its exit status, when it exited */
    int signal;     /* the signal that ended it, else 0 */
    bool timed_out; /* killed after the timeout */
    double wall_ms;
    /* The run's id, which cp_exec_run gives every process in
     * CUPROOF_EXEC_RUN (HOST.PID.START_NS of the launcher) and each writes
     * in its file, so that a file of another run is told apart; "" when
     * unknown (the trust rule then compares the files among themselves). */
    char id[128];
} cp_program_run;

typedef struct cp_exec_opts {
    char *const *argv;    /* the program and its arguments, NULL-terminated */
    const char *proc_dir; /* where the processes write their traces; created,
                           * and emptied of earlier traces */
    double timeout_s;     /* the program is killed after it; 0: none */
    bool rec;             /* the processes write cuproof.rec, else JSON lines */
    bool timing_only;     /* record the NVTX ranges alone (a timed run) */
    /* Record every API call (exec --api all). By default the processes
     * record only the calls an analysis reads (each recorded
     * call costs the program time on its own thread). */
    bool api_all;
    /* Trace only inside capture windows (exec --capture SPEC,
     * cuproof/internal/capture.h, as written); NULL: everything. */
    const char *capture;
    /* The GPU ctest's resource allocation gave the caller
     * (CTEST_RESOURCE_GROUP_0_GPUS), by its index among the visible ones:
     * the program sees that GPU alone. -1: no allocation, the program sees
     * what the caller sees. */
    int ctest_gpu;
    /* The caller's work beside the wait (cuproof exec reads the traces as
     * they grow: cp_follower_poll, program.h): called about every 50 ms
     * while the program runs and while its traced descendants finish, and
     * again at once while it returns true (it has more to do). It should
     * return within some 10 ms, since the program's exit, its timeout and
     * the signals are seen between calls. NULL: none. */
    bool (*on_wait)(void *ctx);
    void *on_wait_ctx;
} cp_exec_opts;

/*
 * Another tool that injects into CUDA or holds CUPTI (CUDA_INJECTION64_PATH
 * set, Nsight Systems, Nsight Compute, nvprof): CUPTI takes one
 * subscriber, so cuproof cannot trace beside it. Writes why into `why` and
 * returns it, or returns "" when there is none.
 */
CP_API const char *cp_exec_other_profiler(char *why, size_t len);

/*
 * Runs the program as above and fills `run` (how it ended, its wall time).
 * The injection library is CUPROOF_INJECT_LIB, else libcuproof_inject.so
 * beside libcuproof. Returns 0 when the program ran, whatever its exit;
 * CP_ENOENT when the injection library cannot be read, CP_EIO when the
 * directory cannot be made or the program cannot be started, CP_EINVAL
 * for a ctest GPU beyond CUDA_VISIBLE_DEVICES (cp_last_error says which).
 * The caller's environment is left as it was.
 */
CP_API int cp_exec_run(const cp_exec_opts *o, cp_program_run *run);

#ifdef __cplusplus
}
#endif

#endif
