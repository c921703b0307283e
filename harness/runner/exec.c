/*
 * The launcher of `cuproof exec` (cuproof/exec.h): the injection
 * variables, the program in a process group of its own, signals passed on
 * to it, its timeout, and the wait for traced descendants that outlive
 * it. It reads no trace: it only knows the injection library's file
 * names (cp_proc_is_trace_file), to clear old traces and to see which
 * are still being written; whoever reads the traces while it waits does
 * so through its hook (cp_exec_opts.on_wait).
 */
#define _GNU_SOURCE
#include <cuproof/exec.h>

#include <cuproof/case.h>
#include <cuproof/error.h>
#include <cuproof/internal/capture.h>
#include <cuproof/internal/rec.h>
#include <cuproof/version.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* After the program itself exits, how long its traced descendants may
 * take to close their traces. */
#define DESCENDANT_GRACE_MS 10000
/* How often the caller's hook runs while the launcher waits. */
#define HOOK_EVERY_MS 50.0

static pid_t child = -1;

/* The program runs in a process group of its own, so that a timeout ends
 * its children too. SIGINT, SIGTERM and SIGHUP that reach the launcher (a
 * CI runner's timeout, kill, a terminal's ^C when the program is not in
 * the foreground) go on to that group. */
static void forward(int sig)
{
    if (child > 0)
        kill(-child, sig);
}

/* Another tool that injects into CUDA or holds CUPTI: one subscriber only
 * (CUDA 13.0), so tracing beside it cannot be trusted. "" when none. */
const char *cp_exec_other_profiler(char *why, size_t len)
{
    const char *inject = getenv("CUDA_INJECTION64_PATH");
    if (inject && *inject && strcmp(inject, "none") != 0) {
        snprintf(why, len,
                 "another tool already injects into CUDA (CUDA_INJECTION64_PATH=%s): CUPTI takes "
                 "one subscriber, so cuproof cannot trace beside it",
                 inject);
        return why;
    }
    static const char *const markers[][2] = {
        {"NSYS_PROFILING_SESSION_ID", "Nsight Systems"},
        {"NV_NSIGHT_INJECTION_TRANSPORT_TYPE", "Nsight Compute"},
        {"NVPROF_ID", "nvprof"},
    };
    for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++)
        if (getenv(markers[i][0])) {
            snprintf(why, len,
                     "running under %s (%s is set): CUPTI takes one subscriber, so cuproof "
                     "cannot trace beside it",
                     markers[i][1], markers[i][0]);
            return why;
        }
    return "";
}

/* The injection library: CUPROOF_INJECT_LIB, else beside libcuproof. */
static int find_inject_lib(char *path, size_t len)
{
    const char *set = getenv("CUPROOF_INJECT_LIB");
    if (set && *set) {
        snprintf(path, len, "%s", set);
    } else {
        Dl_info info;
        if (!dladdr((void *)cp_version, &info) || !info.dli_fname)
            return cp_failf(CP_ENOENT, "cannot tell where libcuproof is, to find "
                                       "libcuproof_inject.so beside it (set CUPROOF_INJECT_LIB)");
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", info.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(dir, sizeof dir, ".");
        char real[PATH_MAX];
        snprintf(path, len, "%.4000s/libcuproof_inject.so", realpath(dir, real) ? real : dir);
    }
    if (access(path, R_OK) != 0)
        return cp_failf(CP_ENOENT, "the injection library %s cannot be read: %s", path,
                        strerror(errno));
    return 0;
}

/* Removes the traces a previous exec left in `dir`. */
static void clear_traces(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (cp_proc_is_trace_file(e->d_name)) {
            char path[PATH_MAX + 256];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    if (d)
        closedir(d);
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Whether a trace file is still open: its last line is not the end record
 * and its process still runs. A rec file (HOST.PID.proc.cprec) is open
 * while its process runs: its pid is in its name. */
static bool still_writing(const char *path)
{
    size_t len = strlen(path);
    if (len > 11 && strcmp(path + len - 11, ".proc.cprec") == 0) {
        const char *dot = path + len - 11;
        const char *p = dot;
        while (p > path && p[-1] >= '0' && p[-1] <= '9')
            p--;
        long pid = p < dot ? strtol(p, NULL, 10) : 0;
        return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
    }
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char head[512] = "", tail[512] = "";
    if (!fgets(head, sizeof head, f)) {
        fclose(f);
        return false;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, size > (long)sizeof tail - 1 ? size - (long)sizeof tail + 1 : 0, SEEK_SET);
    size_t n = fread(tail, 1, sizeof tail - 1, f);
    tail[n] = '\0';
    fclose(f);
    if (strstr(tail, "\"k\":\"end\""))
        return false;
    const char *p = strstr(head, "\"pid\":");
    long pid = p ? strtol(p + 6, NULL, 10) : 0;
    return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* The caller's hook (cp_exec_opts.on_wait), when it is due: every
 * HOOK_EVERY_MS, or at once while it had more to do. Returns whether it
 * has more to do, so that the wait does not sleep. */
static bool hook(const cp_exec_opts *a, bool *busy, double *last)
{
    if (!a->on_wait || (!*busy && cp_now_ms() - *last < HOOK_EVERY_MS))
        return false;
    *busy = a->on_wait(a->on_wait_ctx);
    *last = cp_now_ms();
    return *busy;
}

/* Waits for the program's traced descendants that outlived it, for up to
 * `limit_ms`. */
static void wait_for_descendants(const cp_exec_opts *a, double limit_ms)
{
    const char *dir = a->proc_dir;
    double until = cp_now_ms() + limit_ms, last = 0;
    bool busy = false;
    for (;;) {
        bool open = false;
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && !open && (e = readdir(d))) {
            char path[PATH_MAX + 256];
            snprintf(path, sizeof path, "%.4000s/%.250s", dir, e->d_name);
            open = cp_proc_is_trace_file(e->d_name) && still_writing(path);
        }
        if (d)
            closedir(d);
        if (!open || cp_now_ms() > until)
            return;
        if (!hook(a, &busy, &last))
            sleep_ms(50);
    }
}

/* When ctest's resource allocation gave this test a GPU
 * (CTEST_RESOURCE_GROUP_0_GPUS), the program sees that one GPU alone:
 * CUDA_VISIBLE_DEVICES names it, as the entry of any list already set. */
static int steer_to_gpu(int gpu)
{
    if (gpu < 0)
        return 0;
    char visible[256];
    const char *set = getenv("CUDA_VISIBLE_DEVICES");
    if (set && *set) {
        /* The allocation's id counts the GPUs the list leaves visible. */
        char copy[256], *save = NULL;
        snprintf(copy, sizeof copy, "%s", set);
        const char *entry = strtok_r(copy, ",", &save);
        for (int i = 0; entry && i < gpu; i++)
            entry = strtok_r(NULL, ",", &save);
        if (!entry)
            return cp_failf(CP_EINVAL, "CTEST_RESOURCE_GROUP_0_GPUS names GPU %d, beyond "
                                       "CUDA_VISIBLE_DEVICES=%s", gpu, set);
        snprintf(visible, sizeof visible, "%s", entry);
    } else {
        snprintf(visible, sizeof visible, "%d", gpu);
    }
    if (setenv("CUDA_VISIBLE_DEVICES", visible, 1))
        return cp_failf(CP_EIO, "cannot set CUDA_VISIBLE_DEVICES: %s", strerror(errno));
    return 0;
}

/* The run's id (cp_program_run.id). Under a launcher that starts one
 * `cuproof exec` per rank (srun, mpirun), every rank's exec must give the
 * same id, so it comes from the job: CUPROOF_EXEC_RUN when the user sets
 * it, else Slurm's job and step, PMIx's namespace, Open MPI's job id.
 * Otherwise the launcher's host and pid and the time it started the
 * program, unique enough that two runs writing into one directory (a
 * straggler of an earlier run, files copied together) differ. */
static void run_id(char *id, size_t len)
{
    const char *given = getenv("CUPROOF_EXEC_RUN");
    const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    const char *pmix = getenv("PMIX_NAMESPACE"), *ompi = getenv("OMPI_MCA_ess_base_jobid");
    if (given && *given) {
        snprintf(id, len, "%s", given);
    } else if (job && *job) {
        snprintf(id, len, "slurm.%s.%s", job, step && *step ? step : "0");
    } else if (pmix && *pmix) {
        snprintf(id, len, "pmix.%s", pmix);
    } else if (ompi && *ompi) {
        snprintf(id, len, "ompi.%s", ompi);
    } else {
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        snprintf(id, len, "%s.%ld.%lld", host, (long)getpid(),
                 (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
    }
}

/* Runs the program with the injection variables and waits for it (and
 * kills it after the timeout). */
static int run_program(const cp_exec_opts *a, const char *lib, cp_program_run *o)
{
    run_id(o->id, sizeof o->id);
    if (setenv("CUDA_INJECTION64_PATH", lib, 1) || setenv("NVTX_INJECTION64_PATH", lib, 1) ||
        setenv("CUPROOF_EXEC_DIR", a->proc_dir, 1) || setenv("CUPROOF_EXEC_RUN", o->id, 1) ||
        (a->timing_only && setenv("CUPROOF_EXEC_MODE", "timing", 1)) ||
        setenv("CUPROOF_EXEC_FORMAT", a->rec ? "rec" : "jsonl", 1) ||
        setenv("CUPROOF_EXEC_API", a->api_all ? "all" : "filtered", 1) ||
        (a->capture && !a->timing_only && setenv(CP_CAPTURE_VAR, a->capture, 1)))
        return cp_failf(CP_EIO, "cannot set the injection variables: %s", strerror(errno));
    struct sigaction sa = {.sa_handler = forward, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    struct sigaction old_int, old_term, old_hup;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    double t0 = cp_now_ms();
    int err = posix_spawnp(&child, a->argv[0], NULL, &attr, a->argv, environ);
    posix_spawnattr_destroy(&attr);
    /* On a terminal, the program's group takes the foreground, as a shell
     * gives it, so that it reads the terminal and gets its ^C. */
    bool terminal = err == 0 && isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
    if (terminal) {
        signal(SIGTTOU, SIG_IGN);
        tcsetpgrp(STDIN_FILENO, child);
    }
    unsetenv("CUDA_INJECTION64_PATH");
    unsetenv("NVTX_INJECTION64_PATH");
    unsetenv("CUPROOF_EXEC_DIR");
    unsetenv("CUPROOF_EXEC_MODE");
    unsetenv("CUPROOF_EXEC_FORMAT");
    unsetenv("CUPROOF_EXEC_API");
    unsetenv(CP_CAPTURE_VAR);
    unsetenv("CUPROOF_EXEC_RUN");
    if (err != 0) {
        child = -1;
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
        return cp_failf(CP_EIO, "cannot start %s: %s", a->argv[0], strerror(err));
    }
    int st = 0;
    double killed_at = 0, hooked = 0;
    bool busy = false;
    for (;;) {
        pid_t w = waitpid(child, &st, WNOHANG);
        if (w == child)
            break;
        if (w < 0 && errno != EINTR)
            break;
        double elapsed = cp_now_ms() - t0;
        if (a->timeout_s > 0 && elapsed > a->timeout_s * 1e3 && !o->timed_out) {
            o->timed_out = true;
            killed_at = elapsed;
            kill(-child, SIGTERM);
        } else if (o->timed_out && elapsed > killed_at + 5000) {
            kill(-child, SIGKILL);
        }
        if (!hook(a, &busy, &hooked))
            sleep_ms(5);
    }
    o->wall_ms = cp_now_ms() - t0;
    if (terminal)
        tcsetpgrp(STDIN_FILENO, getpgrp());
    /* After a timeout, what the program left running goes with it. */
    if (o->timed_out)
        kill(-child, SIGKILL);
    child = -1;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    if (WIFEXITED(st))
        o->status = WEXITSTATUS(st);
    else if (WIFSIGNALED(st))
        o->signal = WTERMSIG(st);
    return 0;
}


int cp_exec_run(const cp_exec_opts *o, cp_program_run *run)
{
    memset(run, 0, sizeof *run);
    char lib[PATH_MAX];
    if (find_inject_lib(lib, sizeof lib) < 0)
        return CP_ENOENT;
    if (mkdir(o->proc_dir, 0777) != 0 && errno != EEXIST)
        return cp_failf(CP_EIO, "cannot make %s: %s", o->proc_dir, strerror(errno));
    clear_traces(o->proc_dir);
    /* The allocation's GPU is the program's alone; the caller's own list
     * comes back after the spawn, so that a second run steers the same. */
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    char *saved = visible ? strdup(visible) : NULL;
    if (visible && !saved)
        return cp_failf(CP_ENOMEM, "out of memory");
    int rc = steer_to_gpu(o->ctest_gpu);
    if (rc == 0)
        rc = run_program(o, lib, run);
    if (saved)
        setenv("CUDA_VISIBLE_DEVICES", saved, 1);
    else
        unsetenv("CUDA_VISIBLE_DEVICES");
    free(saved);
    if (rc == 0)
        wait_for_descendants(o, DESCENDANT_GRACE_MS);
    return rc;
}
