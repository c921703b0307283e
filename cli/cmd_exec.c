/*
 * cuproof exec [options] -- PROGRAM [ARGS...]: runs an unmodified program
 * with libcuproof_inject.so injected into every process of it that uses
 * CUDA, merges the per-process traces, checks the expectations on them and
 * writes the same reports as `run` (the program is a case with one
 * variant, "program"). Exit status: 0 all met, 1 an expectation failed,
 * 2 usage, 3 tool error, 4 the program failed; the worst wins (3, then 4,
 * then 1); 77 with --skip-without-gpu when there is no GPU.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <cuproof/device.h>
#include <cuproof/error.h>
#include <cuproof/expect.h>
#include <cuproof/metrics.h>
#include <cuproof/proc.h>
#include <cuproof/program.h>
#include <cuproof/report.h>
#include <cuproof/session.h>
#include <cuproof/stats.h>
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

enum { EXIT_EXPECTATION = CP_EXIT_FAILED, EXIT_TOOL = CP_EXIT_INCONCLUSIVE, EXIT_PROGRAM = CP_EXIT_PROGRAM };

/* After the program itself exits, how long its traced descendants may
 * take to close their traces. */
#define DESCENDANT_GRACE_MS 10000

typedef struct exec_args {
    const char *out_dir;
    const char *range;
    double timeout_s; /* 0: none */
    int repeat;       /* timed runs after the traced one, NVTX ranges alone */
    bool allow_dropped, keep_going, skip_without_gpu;
    bool rec; /* --format rec: the processes write cuproof.rec files */
    uint64_t keep_records; /* --keep-records: held at most, else streamed; 0: the default */
    cp_expect_list expect;
    char **program; /* NULL-terminated, from argv */
} exec_args;

/* Samples of a name (the program's wall time, or an NVTX range's
 * durations) over the timed runs. */
typedef struct samples {
    char name[64];
    double *ms;
    size_t n, cap;
} samples;

typedef struct timing {
    samples wall;
    samples *ranges;
    size_t nranges;
} timing;

static int add_sample(samples *s, double ms)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        double *p = realloc(s->ms, cap * sizeof *p);
        if (!p)
            return cp_failf(CP_ENOMEM, "out of memory keeping timing samples");
        s->ms = p;
        s->cap = cap;
    }
    s->ms[s->n++] = ms;
    return 0;
}

/* The samples kept for range `name`, added when new; NULL when out of
 * memory. */
static samples *range_samples(timing *t, const char *name)
{
    for (size_t i = 0; i < t->nranges; i++)
        if (strcmp(t->ranges[i].name, name) == 0)
            return &t->ranges[i];
    samples *p = realloc(t->ranges, (t->nranges + 1) * sizeof *p);
    if (!p)
        return NULL;
    t->ranges = p;
    samples *r = &t->ranges[t->nranges++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    return r;
}

static void timing_free(timing *t)
{
    free(t->wall.ms);
    for (size_t i = 0; i < t->nranges; i++)
        free(t->ranges[i].ms);
    free(t->ranges);
}

/* The outcome of a run of the program. */
typedef struct outcome {
    int status;       /* exit status, when it exited */
    int signal;       /* the signal that ended it, else 0 */
    bool timed_out;
    double wall_ms;
    char tool_error[1024]; /* why the trace cannot be trusted; "" when it can */
} outcome;

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

/* Parses one source of expectations (an --expect argument or a file),
 * whose errors name it. */
static int add_expectation(exec_args *a, const char *text, const char *source)
{
    if (cp_expect_parse(text, 1, &a->expect) < 0) {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s: %s", source, cp_last_error());
        return cp_usage_error("%s", msg);
    }
    return -1;
}

/* --range NAME scopes every expectation that names no scope. */
static int apply_range(exec_args *a)
{
    for (size_t i = 0; a->range && i < a->expect.n; i++) {
        cp_expectation *e = &a->expect.items[i];
        if (e->scope[0])
            continue;
        char *scope = strdup("range"), *arg = strdup(a->range);
        if (!scope || !arg) {
            free(scope);
            free(arg);
            return cp_usage_error("%s", "out of memory");
        }
        free(e->scope);
        free(e->scope_arg);
        e->scope = scope;
        e->scope_arg = arg;
    }
    return -1;
}

/* Parses the options before "--" and the program after it. Returns -1
 * when they are good, else the exit status. */
static int parse_args(int argc, char **argv, exec_args *a)
{
    int i = 0;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = -1, secs = 0;
        if (strcmp(opt, "--expect") == 0 && val) {
            char source[64];
            snprintf(source, sizeof source, "--expect '%.40s'", val);
            rc = add_expectation(a, val, source);
            i++;
        } else if (strcmp(opt, "--expect-file") == 0 && val) {
            char *text = cp_read_file(val);
            if (!text)
                return cp_usage_error("--expect-file: %s", cp_last_error());
            rc = add_expectation(a, text, val);
            free(text);
            i++;
        } else if (strcmp(opt, "--range") == 0 && val && *val) {
            a->range = val;
            i++;
        } else if (strcmp(opt, "--out") == 0 && val && *val) {
            a->out_dir = val;
            i++;
        } else if (strcmp(opt, "--timeout") == 0) {
            if (!cp_parse_int(val, 1, 7 * 24 * 3600, &secs))
                return cp_usage_error("--timeout '%s': expected seconds, 1 to 604800",
                                      val ? val : "");
            a->timeout_s = secs;
            i++;
        } else if (strcmp(opt, "--repeat") == 0) {
            if (!cp_parse_int(val, 1, 1000, &a->repeat))
                return cp_usage_error("--repeat '%s': expected an integer from 1 to 1000",
                                      val ? val : "");
            i++;
        } else if (strcmp(opt, "--format") == 0) {
            if (!val || (strcmp(val, "rec") != 0 && strcmp(val, "jsonl") != 0))
                return cp_usage_error("--format '%s': expected jsonl or rec", val ? val : "");
            a->rec = strcmp(val, "rec") == 0;
            i++;
        } else if (strcmp(opt, "--keep-records") == 0) {
            int keep;
            if (!cp_parse_int(val, 1, INT_MAX, &keep))
                return cp_usage_error("--keep-records '%s': expected a count of records, 1 or "
                                      "more", val ? val : "");
            a->keep_records = (uint64_t)keep;
            i++;
        } else if (strcmp(opt, "--allow-dropped") == 0) {
            a->allow_dropped = true;
        } else if (strcmp(opt, "--keep-going") == 0) {
            a->keep_going = true;
        } else if (strcmp(opt, "--skip-without-gpu") == 0) {
            a->skip_without_gpu = true;
        } else {
            return cp_usage_error("exec: unknown option or missing value '%s'", opt);
        }
        if (rc >= 0)
            return rc;
    }
    if (i + 1 >= argc)
        return cp_usage_error("%s", "exec needs a program after '--': cuproof exec [options] -- "
                                    "PROGRAM [ARGS...]");
    a->program = &argv[i + 1];
    int rc = apply_range(a);
    if (rc >= 0)
        return rc;
    if (cp_expect_validate_program(&a->expect) < 0)
        return cp_usage_error("expectation: %s", cp_last_error());
    return -1;
}

/* Another tool that injects into CUDA or holds CUPTI: one subscriber only
 * (CUDA 13.0), so tracing beside it cannot be trusted. "" when none. */
static const char *other_profiler(char *why, size_t len)
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

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
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

/* Waits for the program's traced descendants that outlived it, for up to
 * `limit_ms`. */
static void wait_for_descendants(const char *dir, double limit_ms)
{
    double until = now_ms() + limit_ms;
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
        if (!open || now_ms() > until)
            return;
        sleep_ms(50);
    }
}

/* When ctest's resource allocation gave this test a GPU
 * (CTEST_RESOURCE_GROUP_0_GPUS), the program sees that one GPU alone:
 * CUDA_VISIBLE_DEVICES names it, as the entry of any list already set. */
static int steer_to_gpu(const cp_env *env)
{
    if (strcmp(env->device_source, "CTEST_RESOURCE_GROUP_0_GPUS") != 0)
        return 0;
    char visible[256];
    const char *set = getenv("CUDA_VISIBLE_DEVICES");
    if (set && *set) {
        /* The allocation's id counts the GPUs the list leaves visible. */
        char copy[256], *save = NULL;
        snprintf(copy, sizeof copy, "%s", set);
        const char *entry = strtok_r(copy, ",", &save);
        for (int i = 0; entry && i < env->device; i++)
            entry = strtok_r(NULL, ",", &save);
        if (!entry)
            return cp_failf(CP_EINVAL, "CTEST_RESOURCE_GROUP_0_GPUS names GPU %d, beyond "
                                       "CUDA_VISIBLE_DEVICES=%s", env->device, set);
        snprintf(visible, sizeof visible, "%s", entry);
    } else {
        snprintf(visible, sizeof visible, "%d", env->device);
    }
    if (setenv("CUDA_VISIBLE_DEVICES", visible, 1))
        return cp_failf(CP_EIO, "cannot set CUDA_VISIBLE_DEVICES: %s", strerror(errno));
    return 0;
}

/* Runs the program with the injection variables and waits for it (and
 * kills it after the timeout). */
static int run_program(const exec_args *a, const char *lib, const char *proc_dir, bool timing_only,
                       outcome *o)
{
    if (setenv("CUDA_INJECTION64_PATH", lib, 1) || setenv("NVTX_INJECTION64_PATH", lib, 1) ||
        setenv("CUPROOF_EXEC_DIR", proc_dir, 1) ||
        (timing_only && setenv("CUPROOF_EXEC_MODE", "timing", 1)) ||
        setenv("CUPROOF_EXEC_FORMAT", a->rec ? "rec" : "jsonl", 1))
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
    double t0 = now_ms();
    int err = posix_spawnp(&child, a->program[0], NULL, &attr, a->program, environ);
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
    if (err != 0) {
        child = -1;
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
        return cp_failf(CP_EIO, "cannot start %s: %s", a->program[0], strerror(err));
    }
    int st = 0;
    double killed_at = 0;
    for (;;) {
        pid_t w = waitpid(child, &st, WNOHANG);
        if (w == child)
            break;
        if (w < 0 && errno != EINTR)
            break;
        double elapsed = now_ms() - t0;
        if (a->timeout_s > 0 && elapsed > a->timeout_s * 1e3 && !o->timed_out) {
            o->timed_out = true;
            killed_at = elapsed;
            kill(-child, SIGTERM);
        } else if (o->timed_out && elapsed > killed_at + 5000) {
            kill(-child, SIGKILL);
        }
        sleep_ms(5);
    }
    o->wall_ms = now_ms() - t0;
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

/* --repeat N: the program N more times with NVTX ranges alone recorded,
 * keeping its wall time and each range's durations as samples. A timed
 * run that fails makes the program's outcome a failure. */
static int timed_runs(const exec_args *a, const char *lib, timing *t, outcome *o)
{
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%.4000s/timing", a->out_dir);
    snprintf(t->wall.name, sizeof t->wall.name, "wall_ms");
    if (cp_make_dirs(dir) < 0)
        return CP_EIO;
    for (int k = 0; k < a->repeat; k++) {
        outcome run = {0};
        clear_traces(dir);
        int rc = run_program(a, lib, dir, true, &run);
        if (rc < 0)
            return rc;
        wait_for_descendants(dir, DESCENDANT_GRACE_MS);
        if (run.timed_out || run.signal || run.status != 0) {
            o->timed_out = run.timed_out;
            o->signal = run.signal;
            o->status = run.status;
            printf("cuproof exec: timed run %d of %d failed\n", k + 1, a->repeat);
            return 0;
        }
        if (add_sample(&t->wall, run.wall_ms) < 0)
            return CP_ENOMEM;
        cp_trace ranges;
        cp_trace_init(&ranges);
        size_t nfiles = 0;
        rc = cp_proc_read_dir(dir, &ranges, &nfiles);
        for (size_t i = 0; rc == 0 && i < ranges.n; i++) {
            const cp_activity *r = &ranges.items[i];
            if (r->kind != CP_ACT_RANGE || !r->name || !*r->name)
                continue;
            samples *sr = range_samples(t, r->name);
            rc = sr ? add_sample(sr, (double)(r->end - r->start) / 1e6) : CP_ENOMEM;
        }
        cp_trace_free(&ranges);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Keeps a copy of the samples as the variant's timed runs. */
static int keep_samples(cp_variant_result *v, const samples *s)
{
    v->samples_ms = malloc((s->n ? s->n : 1) * sizeof *v->samples_ms);
    if (!v->samples_ms)
        return cp_failf(CP_ENOMEM, "out of memory keeping timing samples");
    memcpy(v->samples_ms, s->ms, s->n * sizeof *v->samples_ms);
    v->nsamples = s->n;
    return 0;
}

/* Timing statistics of samples into a variant of the result. */
static int timing_variant(cp_case_result *c, const samples *s, const char *name, const char *why)
{
    cp_variant_result *v = cp_result_add_variant(c);
    if (!v)
        return CP_ENOMEM;
    snprintf(v->name, sizeof v->name, "%.63s", name);
    v->ran = true;
    snprintf(v->untraced_reason, sizeof v->untraced_reason, "%s", why);
    int rc = cp_timing_compute(s->ms, s->n, &v->timing);
    if (rc == 0)
        rc = keep_samples(v, s);
    if (rc == 0)
        rc = cp_series_store(&v->series, &v->nseries, &v->series_cap, "samples_ms", "ms", s->ms,
                             s->n);
    return rc;
}

/* The program as the report names it: its file's base name. */
static void program_name(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, len, "%s", slash ? slash + 1 : path);
}

/* One check per expectation, with its verdict from cp_program_analyse. */
static int add_expectation_checks(const exec_args *a, const cp_program_check *checks,
                                  cp_case_result *c, size_t *failed)
{
    for (size_t i = 0; i < a->expect.n; i++) {
        const cp_expectation *e = &a->expect.items[i];
        cp_check_result *k = cp_result_add_check(c);
        if (!k)
            return CP_ENOMEM;
        snprintf(k->name, sizeof k->name, "%s", e->text);
        snprintf(k->expected, sizeof k->expected, "%s", e->text);
        snprintf(k->measured, sizeof k->measured, "%s", checks[i].measured);
        k->status = checks[i].ok ? CP_CHECK_PASSED : CP_CHECK_FAILED;
        *failed += !checks[i].ok;
    }
    return 0;
}

/* The program's own exit, and each process's trace, as checks: a process
 * whose trace ended early is not verified past its last flush (skipped,
 * with how much may be missing, after `first`, the trace's first record),
 * never passed. */
static int add_program_checks(const outcome *o, const cp_trace *t, uint64_t first,
                              cp_case_result *c)
{
    cp_check_result *k = cp_result_add_check(c);
    if (!k)
        return CP_ENOMEM;
    snprintf(k->name, sizeof k->name, "the program succeeded");
    snprintf(k->expected, sizeof k->expected, "exit status 0");
    if (o->timed_out)
        snprintf(k->measured, sizeof k->measured, "killed after the timeout (%.0f ms)", o->wall_ms);
    else if (o->signal)
        snprintf(k->measured, sizeof k->measured, "ended by signal %d (%s)", o->signal,
                 strsignal(o->signal));
    else
        snprintf(k->measured, sizeof k->measured, "exit status %d", o->status);
    k->status = !o->timed_out && !o->signal && o->status == 0 ? CP_CHECK_PASSED : CP_CHECK_FAILED;
    for (size_t i = 0; i < t->nprocesses; i++) {
        const cp_process *p = &t->processes[i];
        if (!(k = cp_result_add_check(c)))
            return CP_ENOMEM;
        snprintf(k->name, sizeof k->name, "process %u closed its trace", p->pid);
        snprintf(k->expected, sizeof k->expected, "an end record at exit");
        if (p->ended) {
            k->status = CP_CHECK_PASSED;
            snprintf(k->measured, sizeof k->measured, "ended, %llu records dropped",
                     (unsigned long long)p->dropped);
        } else {
            k->status = CP_CHECK_SKIPPED;
            snprintf(k->measured, sizeof k->measured, "truncated");
            snprintf(k->skip_reason, sizeof k->skip_reason,
                     "process %u (%s) left without its exit handler (_exit, a signal or a kill): "
                     "its trace holds its work up to its last flush, %.3f ms after its first "
                     "record; anything later is missing",
                     p->pid, p->command,
                     p->last_ns > first && first != UINT64_MAX ? (double)(p->last_ns - first) / 1e6
                                                               : 0.0);
        }
    }
    return 0;
}

static void print_summary(const cp_case_result *c, const cp_trace *t, size_t nfiles)
{
    const cp_variant_result *v = &c->variants[0];
    const cp_metrics *m = &v->metrics;
    printf("cuproof exec: %zu process%s traced, %u kernels, %u copies, %u memsets; span %.3f ms\n",
           nfiles, nfiles == 1 ? "" : "es", m->kernels, m->copies, m->memsets,
           (double)m->span_ns / 1e6);
    printf("  copies overlapped kernels for %.1f%% of copy time; up to %u kernels at once "
           "(mean %.2f); idle %.3f ms, largest gap %.3f ms\n",
           m->copy_kernel_overlap_ratio * 100, m->peak_concurrent_kernels,
           m->mean_concurrent_kernels, (double)m->idle_ns / 1e6, (double)m->largest_gap_ns / 1e6);
    for (size_t i = 0; i < m->nfindings; i++)
        printf("  finding %s: %s\n", m->findings[i].name, m->findings[i].message);
    for (size_t i = 0; i < t->nprocesses; i++)
        if (!t->processes[i].ended)
            printf("  process %u (%s): trace truncated, work after its last flush is missing\n",
                   t->processes[i].pid, t->processes[i].command);
    for (size_t i = 0; i < c->nchecks; i++)
        printf("  %-7s %s (measured %s)%s%s\n", cp_check_status_name(c->checks[i].status),
               c->checks[i].name, c->checks[i].measured, c->checks[i].skip_reason[0] ? ": " : "",
               c->checks[i].skip_reason);
}

/* Reads the traces, judges them, and hands the program's result to the
 * session; sets o->tool_error when the trace cannot be trusted. */
static int judge(const exec_args *a, const char *proc_dir, const timing *tm, cp_session *s,
                 outcome *o, size_t *failed)
{
    int rc = 0;
    cp_report *r = cp_session_report(s);
    cp_program_check *checks = NULL;
    cp_case_result c;
    memset(&c, 0, sizeof c);
    program_name(a->program[0], c.name, sizeof c.name);
    snprintf(c.source, sizeof c.source, "cuproof exec");
    size_t used = 0;
    for (char **p = a->program; *p && used < sizeof c.title - 1; p++)
        used += (size_t)snprintf(c.title + used, sizeof c.title - used, "%s%s",
                                 p == a->program ? "" : " ", *p);
    c.device = r->env.device;
    snprintf(c.gpu_name, sizeof c.gpu_name, "%s", r->env.gpu_name);
    cp_variant_result *v = cp_result_add_variant(&c);
    if (!v) {
        rc = CP_ENOMEM;
        goto out;
    }
    snprintf(v->name, sizeof v->name, "program");
    v->ran = true;
    /* The traced run's wall time carries the tracing's cost: only the
     * timed runs of --repeat give timing statistics (compare skips a
     * variant with none). */
    cp_trace_init(&v->trace);
    cp_program_opts po = {
        .timeline.max_concurrent_kernels = cp_max_concurrent_kernels(r->env.cc_major,
                                                                      r->env.cc_minor),
        .keep_records = a->keep_records,
        .out_dir = a->out_dir,
        .name = c.name,
        .variant = v->name,
    };
    cp_program_info info;
    checks = calloc(a->expect.n ? a->expect.n : 1, sizeof *checks);
    if (!checks) {
        rc = cp_failf(CP_ENOMEM, "out of memory for %zu expectations", a->expect.n);
        goto out;
    }
    if (cp_program_analyse(proc_dir, &a->expect, &po, v, checks, &info) < 0) {
        snprintf(o->tool_error, sizeof o->tool_error, "%s", cp_last_error());
    } else if (info.nfiles == 0) {
        snprintf(o->tool_error, sizeof o->tool_error,
                 "no process of the program initialised CUDA (no trace in %.600s): nothing was "
                 "traced",
                 proc_dir);
    }
    size_t nfiles = info.nfiles;
    if (info.streamed)
        printf("cuproof exec: %llu records streamed through the analysis (more than %llu to "
               "hold): %s, %s\n",
               (unsigned long long)info.records,
               (unsigned long long)(a->keep_records ? a->keep_records : CP_PROGRAM_KEEP_RECORDS),
               info.rec_path, info.perfetto_path);
    /* The verdicts do not depend on it, but a timeline drawn wrong in
     * silence would mislead whoever opens it. */
    if (info.perfetto_unordered)
        fprintf(stderr,
                "cuproof exec: warning: %llu slices came too far out of order on their track to "
                "be checked for nesting; Perfetto may draw some of them with another's end\n",
                (unsigned long long)info.perfetto_unordered);
    /* A process whose injection could not have CUPTI says so in its end
     * record: its work is missing, whatever the other processes show. */
    for (size_t i = 0; !o->tool_error[0] && i < v->trace.nprocesses; i++)
        if (strncmp(v->trace.processes[i].why, "cupti unavailable", 17) == 0)
            snprintf(o->tool_error, sizeof o->tool_error, "process %u (%.200s) was not traced: %.600s",
                     v->trace.processes[i].pid, v->trace.processes[i].command,
                     v->trace.processes[i].why);
    v->traced = nfiles > 0;
    if (!v->traced)
        snprintf(v->untraced_reason, sizeof v->untraced_reason, "%.500s", o->tool_error);
    uint64_t dropped = 0;
    for (size_t i = 0; i < v->trace.nprocesses; i++)
        dropped += v->trace.processes[i].dropped;
    v->trace.dropped_records = dropped;
    if (!o->tool_error[0] && v->metrics.kernels + v->metrics.copies + v->metrics.memsets == 0)
        snprintf(o->tool_error, sizeof o->tool_error,
                 "no device activity at all in %zu traced process%s: no kernel, copy or memset "
                 "to check",
                 nfiles, nfiles == 1 ? "" : "es");
    if (!o->tool_error[0] && dropped && !a->allow_dropped)
        snprintf(o->tool_error, sizeof o->tool_error,
                 "CUPTI dropped %llu activity records: the trace is incomplete "
                 "(--allow-dropped checks it anyway)",
                 (unsigned long long)dropped);
    CP_TRY(add_program_checks(o, &v->trace, info.first_ns, &c));
    if (!o->tool_error[0] || a->keep_going)
        CP_TRY(add_expectation_checks(a, checks, &c, failed));
    c.status = CP_STATUS_PASSED;
    for (size_t i = 0; i < c.nchecks; i++)
        if (c.checks[i].status == CP_CHECK_FAILED)
            c.status = CP_STATUS_FAILED;
    if (o->tool_error[0]) {
        c.status = CP_STATUS_FAILED;
        snprintf(c.error, sizeof c.error, "%s", o->tool_error);
    }
    print_summary(&c, &v->trace, nfiles);
    if (tm->wall.n) {
        v = &c.variants[0];
        CP_TRY(cp_timing_compute(tm->wall.ms, tm->wall.n, &v->timing));
        CP_TRY(keep_samples(v, &tm->wall));
        CP_TRY(cp_series_store(&v->series, &v->nseries, &v->series_cap, "wall_ms", "ms",
                               tm->wall.ms, tm->wall.n));
        printf("  %zu timed runs: median %.3f ms (min %.3f, max %.3f)\n", tm->wall.n,
               v->timing.median_ms, v->timing.min_ms, v->timing.max_ms);
        for (size_t i = 0; i < tm->nranges; i++) {
            char name[64];
            snprintf(name, sizeof name, "range:%.57s", tm->ranges[i].name);
            CP_TRY(timing_variant(&c, &tm->ranges[i], name,
                                  "timed runs record the program's NVTX ranges alone"));
            const cp_timing *rt = &c.variants[c.nvariants - 1].timing;
            printf("  range %s: %d samples, median %.3f ms\n", tm->ranges[i].name, rt->runs,
                   rt->median_ms);
        }
    }
    rc = cp_session_add_case(s, &c);
out:
    cp_case_result_free(&c);
    free(checks);
    return rc;
}

int cp_cmd_exec(int argc, char **argv)
{
    exec_args a = {.out_dir = "cuproof-exec"};
    outcome o = {0};
    timing tm = {0};
    cp_session *s = NULL;
    char lib[PATH_MAX], proc_dir[PATH_MAX + 16], why[512];
    size_t failed = 0;
    int status = -1;
    /* The format's default from the environment, so that a whole test
     * suite (ctest -L exec) can be run in the rec form. */
    const char *format = getenv("CUPROOF_EXEC_FORMAT");
    if (format && *format && strcmp(format, "rec") != 0 && strcmp(format, "jsonl") != 0)
        status = cp_usage_error("CUPROOF_EXEC_FORMAT='%s': expected jsonl or rec", format);
    a.rec = format && strcmp(format, "rec") == 0;
    /* The same for the records held before streaming, so that the suite
     * can run through the streaming path (CUPROOF_EXEC_KEEP_RECORDS=1). */
    const char *keep = getenv("CUPROOF_EXEC_KEEP_RECORDS");
    int keep_n = 0;
    if (status < 0 && keep && *keep && !cp_parse_int(keep, 1, INT_MAX, &keep_n))
        status = cp_usage_error("CUPROOF_EXEC_KEEP_RECORDS='%s': expected a count of records, "
                                "1 or more", keep);
    a.keep_records = (uint64_t)keep_n;
    if (status < 0)
        status = parse_args(argc, argv, &a);
    if (status >= 0)
        goto out;
    status = EXIT_TOOL;
    if (*other_profiler(why, sizeof why)) {
        fprintf(stderr, "cuproof exec: %s\n", why);
        goto out;
    }
    s = cp_session_new();
    if (!s) {
        fprintf(stderr, "cuproof exec: out of memory\n");
        goto out;
    }
    cp_report *r = cp_session_report(s);
    if (cp_env_discover(&r->env) < 0) {
        fprintf(stderr, "cuproof exec: %s\n", cp_last_error());
        goto out;
    }
    if (!r->env.has_device && a.skip_without_gpu) {
        printf("cuproof exec: skipped: %s\n", r->env.no_device_reason);
        status = CP_EXIT_SKIPPED;
        goto out;
    }
    snprintf(r->profile, sizeof r->profile, "exec");
    r->repeat = 1;
    r->traced = true;
    snprintf(proc_dir, sizeof proc_dir, "%s/proc", a.out_dir);
    if (find_inject_lib(lib, sizeof lib) < 0 || cp_make_dirs(proc_dir) < 0) {
        fprintf(stderr, "cuproof exec: %s\n", cp_last_error());
        goto out;
    }
    clear_traces(proc_dir);
    if (steer_to_gpu(&r->env) < 0 || run_program(&a, lib, proc_dir, false, &o) < 0) {
        fprintf(stderr, "cuproof exec: %s\n", cp_last_error());
        goto out;
    }
    wait_for_descendants(proc_dir, DESCENDANT_GRACE_MS);
    if (a.repeat && !(o.timed_out || o.signal || o.status) && timed_runs(&a, lib, &tm, &o) < 0) {
        fprintf(stderr, "cuproof exec: %s\n", cp_last_error());
        goto out;
    }
    if (cp_session_add_sink(s, cp_sink_traces(a.out_dir)) < 0 ||
        cp_session_add_sink(s, cp_sink_report(a.out_dir)) < 0 ||
        judge(&a, proc_dir, &tm, s, &o, &failed) < 0 ||
        cp_session_close(s) < 0) {
        fprintf(stderr, "cuproof exec: %s\n", cp_last_error());
        goto out;
    }
    printf("cuproof exec: the program ran %.1f ms (traced)\n", o.wall_ms);
    bool program_failed = o.timed_out || o.signal || o.status != 0;
    if (o.tool_error[0])
        fprintf(stderr, "cuproof exec: cannot check the program: %s\n", o.tool_error);
    if (program_failed)
        fprintf(stderr, "cuproof exec: the program failed: %s\n",
                o.timed_out ? "killed after the timeout"
                : o.signal  ? strsignal(o.signal)
                            : "non-zero exit status");
    status = o.tool_error[0] ? EXIT_TOOL
             : program_failed ? EXIT_PROGRAM
             : failed         ? EXIT_EXPECTATION
                              : CP_EXIT_OK;
    if (o.tool_error[0] && !a.keep_going)
        printf("cuproof exec: %zu expectation%s not checked; report in %s/report.json; exit %d\n",
               a.expect.n, a.expect.n == 1 ? "" : "s", a.out_dir, status);
    else
        printf("cuproof exec: %zu of %zu expectations met; report in %s/report.json; exit %d\n",
               a.expect.n - failed, a.expect.n, a.out_dir, status);
out:
    cp_session_free(s);
    cp_expect_list_free(&a.expect);
    timing_free(&tm);
    return status;
}
