/*
 * cuproof run [CASE...] and cuproof test CASE: the cases through the
 * runner, their results and the progress of each run into a session whose
 * sinks write the report, the traces and the progress lines. `test` is `run` for one case as a ctest
 * test: it writes files only when asked (--out), and its exit status is the
 * case's (77 when skipped).
 */
#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/case.h>
#include <cuproof/device.h>
#include <cuproof/internal/margin.h>
#include <cuproof/internal/runner.h>
#include <cuproof/internal/session.h>
#include <cuproof/internal/spawn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct run_args {
    cp_run_opts o;
    const char *out_dir; /* NULL: no files (test without --out) */
    const char *devices_arg;
    const cp_case_def **sel;
    size_t nsel;
    const char **params; /* --param NAME=VALUE, room for every argument */
    cp_run_opts rule;    /* the stopping rule's settings given on the command line */
    bool rule_set;
    /* --runs K: K passes over the selected cases, one after the other, each
     * case's passes kept apart in its variants' runs (cp_run_value); the
     * passes after the first each in a process of its own, run with the
     * arguments (argv) less --runs and --out. */
    int runs;
    /* --processes P: each pass times its short cases (every variant under
     * CP_PROCESS_SHORT_MS) in P processes, the pass's own and P - 1 more,
     * untraced (cp_case_result_add_process). */
    int processes;
    int argc;
    char **argv;
} run_args;

/* Parses run's options and case names into `a` (a->sel has room for every
 * argument). Returns -1 when they are good, else the exit status. */
static int parse_args(int argc, char **argv, bool test, run_args *a)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--profile") == 0) {
            if (!val || (strcmp(val, "ci") != 0 && strcmp(val, "full") != 0))
                return cp_usage_error("unknown profile '%s': use ci or full", val ? val : "");
            a->o.profile = strcmp(val, "full") == 0 ? CP_PROFILE_FULL : CP_PROFILE_CI;
            i++;
        } else if (strcmp(arg, "--repeat") == 0) {
            if (!cp_parse_int(val, 1, 1000, &a->o.repeat))
                return cp_usage_error("--repeat '%s': expected an integer from 1 to 1000",
                                      val ? val : "");
            i++;
        } else if (strcmp(arg, "--runs") == 0 && !test) {
            if (!cp_parse_int(val, 1, 100, &a->runs))
                return cp_usage_error("--runs '%s': expected an integer from 1 to 100",
                                      val ? val : "");
            i++;
        } else if (strcmp(arg, "--processes") == 0 && !test) {
            if (!cp_parse_int(val, 1, CP_MAX_PROCESSES, &a->processes))
                return cp_usage_error("--processes '%s': expected an integer from 1 to 8",
                                      val ? val : "");
            i++;
        } else if (strcmp(arg, "--warmup") == 0) {
            if (!cp_parse_int(val, 0, 100, &a->o.warmup))
                return cp_usage_error("--warmup '%s': expected an integer from 0 to 100",
                                      val ? val : "");
            i++;
        } else if (strcmp(arg, "--out") == 0) {
            if (!val || !*val)
                return cp_usage_error("%s", "--out needs a directory");
            a->out_dir = val;
            i++;
        } else if (strcmp(arg, "--devices") == 0 && !test) {
            if (!val)
                return cp_usage_error("%s", "--devices needs GPU ids such as 0,1");
            a->devices_arg = val;
            i++;
        } else if (strcmp(arg, "--min-samples") == 0 || strcmp(arg, "--max-samples") == 0) {
            int n = 0;
            if (!cp_parse_int(val, 1, 100000, &n))
                return cp_usage_error("%s: expected an integer from 1 to 100000", arg);
            *(strcmp(arg, "--min-samples") == 0 ? &a->rule.min_samples : &a->rule.max_samples) = n;
            a->rule_set = true;
            i++;
        } else if (strcmp(arg, "--max-noise") == 0 || strcmp(arg, "--min-time") == 0 ||
                   strcmp(arg, "--max-time") == 0) {
            char *end = NULL;
            double x = val ? strtod(val, &end) : -1;
            if (!val || end == val || *end || !(x >= 0 && x <= 1e6))
                return cp_usage_error("%s: expected a non-negative number", arg);
            if (strcmp(arg, "--max-noise") == 0)
                a->rule.max_noise = x;
            else if (strcmp(arg, "--min-time") == 0)
                a->rule.min_time_s = x;
            else
                a->rule.max_time_s = x;
            a->rule_set = true;
            i++;
        } else if (strcmp(arg, "--param") == 0) {
            const char *eq = val ? strchr(val, '=') : NULL;
            if (!eq || eq == val || !eq[1])
                return cp_usage_error("--param '%s': expected NAME=VALUE", val ? val : "");
            a->params[a->o.nparams++] = val;
            a->o.params = a->params;
            i++;
        } else if (strcmp(arg, "--no-trace") == 0) {
            a->o.trace = false;
        } else if (arg[0] == '-') {
            return cp_usage_error("unknown option '%s'", arg);
        } else {
            const cp_case_def *d = cp_registry_find(arg);
            if (!d)
                return cp_usage_error("unknown case '%s' (list shows the cases)", arg);
            a->sel[a->nsel++] = d;
        }
    }
    if (test && a->nsel != 1)
        return cp_usage_error("%s", "test takes exactly one case");
    if (a->nsel == 0)
        for (size_t i = 0; i < cp_registry_count(); i++)
            a->sel[a->nsel++] = cp_registry_at(i);
    /* Every override against every selected case's declaration, before
     * anything runs and whether or not a GPU is here. */
    for (size_t i = 0; a->o.nparams && i < a->nsel; i++)
        if (cp_case_check_params(a->sel[i], a->o.params, a->o.nparams) < 0)
            return cp_usage_error("%s", cp_last_error());
    if (a->o.repeat && a->rule_set)
        return cp_usage_error("%s", "--repeat fixes the number of timed runs: it does not go "
                                    "with --min-samples, --max-samples, --max-noise, --min-time "
                                    "or --max-time");
    if (a->o.repeat == 0 && test && !a->rule_set) {
        /* A test asserts checks, not timings: three timed runs keep the
         * suite quick, as they always have. */
        a->o.repeat = 3;
    } else if (a->o.repeat == 0) {
        cp_run_opts_stopping_rule(&a->o, a->o.profile);
        if (a->rule.min_samples)
            a->o.min_samples = a->rule.min_samples;
        if (a->rule.max_samples)
            a->o.max_samples = a->rule.max_samples;
        if (a->rule.max_noise > 0)
            a->o.max_noise = a->rule.max_noise;
        if (a->rule.min_time_s > 0)
            a->o.min_time_s = a->rule.min_time_s;
        if (a->rule.max_time_s > 0)
            a->o.max_time_s = a->rule.max_time_s;
        if (a->o.max_samples < a->o.min_samples)
            return cp_usage_error("%s", "--max-samples is below --min-samples");
        if (a->o.max_time_s < a->o.min_time_s)
            return cp_usage_error("%s", "--max-time is below --min-time");
    }
    if (a->out_dir && cp_make_dirs(a->out_dir) < 0)
        return cp_tool_error(); /* an output cuproof cannot write */
    return -1;
}

/* Describes the run in the session's report and on the terminal. Returns
 * -1, or the exit status when the devices cannot be used. */
static int describe_run(const run_args *a, cp_report *r, int *devices, int *ndevices)
{
    char runs_text[128];
    if (a->o.repeat > 0)
        snprintf(runs_text, sizeof runs_text, "%d timed runs", a->o.repeat);
    else
        snprintf(runs_text, sizeof runs_text,
                 "%d to %d timed runs until the median's noise is %g%% or %g s pass",
                 a->o.min_samples, a->o.max_samples, a->o.max_noise * 100, a->o.max_time_s);
    snprintf(r->profile, sizeof r->profile, "%s",
             a->o.profile == CP_PROFILE_FULL ? "full" : "ci");
    r->repeat = a->o.repeat;
    r->min_samples = a->o.min_samples;
    r->max_samples = a->o.max_samples;
    r->max_noise = a->o.max_noise;
    r->min_time_s = a->o.min_time_s;
    r->max_time_s = a->o.max_time_s;
    r->traced = cp_tracing_available() && a->o.trace;
    snprintf(r->untraced_reason, sizeof r->untraced_reason, "%s",
             !a->o.trace ? "tracing was not requested (--no-trace)"
                         : cp_tracing_unavailable_reason());
    if (cp_env_discover(&r->env) < 0)
        return cp_tool_error();
    if (a->devices_arg) {
        if (!r->env.has_device)
            return cp_usage_error("--devices: %s", r->env.no_device_reason);
        if (cp_parse_device_list(a->devices_arg, r->env.device_count, devices, CP_MAX_DEVICES,
                                 ndevices) < 0)
            return cp_usage_error("%s", cp_last_error());
        if (cp_env_use_device(&r->env, devices[0]) < 0)
            return cp_tool_error();
    }
    /* CUPROOF_CPU_AFFINITY=gpu: the timing process on its GPU's CPUs
     * (cuproof/device.h); any other value is a mistake, said as one. */
    const char *aff = getenv("CUPROOF_CPU_AFFINITY");
    if (aff && *aff && strcmp(aff, "gpu") != 0 && strcmp(aff, "all") != 0)
        return cp_usage_error("CUPROOF_CPU_AFFINITY=%s: takes gpu or all", aff);
    if (aff && strcmp(aff, "gpu") == 0) {
        cp_env_cpu_affinity(&r->env, true);
        printf("cuproof: CPU affinity %s, CPUs %s\n", r->env.cpu_affinity, r->env.cpus);
    }
    if (!r->env.has_device)
        printf("cuproof: %s; GPU cases will be skipped\n", r->env.no_device_reason);
    else
        printf("cuproof: %s (device %d, sm_%d%d, %d SMs), profile %s, %s%s\n", r->env.gpu_name,
               r->env.device, r->env.cc_major, r->env.cc_minor, r->env.sm_count, r->profile,
               runs_text, r->traced ? " + 1 traced" : ", untraced");
    if (*ndevices > 1) {
        printf("cuproof: cases spread over GPUs");
        for (int k = 0; k < *ndevices; k++)
            printf(" %d", devices[k]);
        printf(", one case at a time (ctest -j with a resource spec runs them at once)\n");
    }
    if (a->o.trace && !cp_tracing_available() && r->env.has_device)
        printf("cuproof: running untraced: %s\n", cp_tracing_unavailable_reason());
    return -1;
}

/* The runner's progress hook: the session hands each run to its sinks, and
 * the progress sink shows it. */
static void forward_progress(void *session, const cp_run_progress *p)
{
    cp_session_on_run(session, p);
}

/* Runs case i of the selection into `c` (zeroed by the caller). Returns
 * -1, or the exit status when a device cannot be selected. */
static int run_one(const run_args *a, const cp_run_opts *o, const cp_report *r, size_t i,
                   const int *devices, int ndevices, int *fatal, char *fatal_msg, size_t msg_len,
                   cp_case_result *c)
{
    if (*fatal && !a->sel[i]->cpu_only) {
        /* A sticky CUDA error leaves this process's context unusable. */
        snprintf(c->name, sizeof c->name, "%s", cp_case_name(a->sel[i]));
        c->status = CP_STATUS_FAILED;
        snprintf(c->error, sizeof c->error,
                 "not run: an earlier case left the device unusable (%s)", fatal_msg);
        return -1;
    }
    /* With --devices, case i runs on the (i mod n)th GPU listed. */
    cp_env env = r->env;
    if (ndevices > 1 && cp_env_use_device(&env, devices[i % (size_t)ndevices]) < 0)
        return cp_tool_error();
    /* Only a sticky error (the context is lost) stops the GPU cases after
     * this one; the case's own report says what failed either way. */
    if (cp_run_case(a->sel[i], &env, o, c) < 0 && env.has_device && !cp_device_usable()) {
        *fatal = 1;
        snprintf(fatal_msg, msg_len, "%s", c->error);
    }
    return -1;
}

/* The session takes a case's result (and frees it); a failed case makes
 * the run fail. Returns 0, or -1 when the session could not take it. */
static int add_case(cp_session *s, cp_case_result *c, int *status)
{
    if (c->status == CP_STATUS_FAILED)
        *status = CP_EXIT_FAILED;
    if (cp_session_add_case(s, c) < 0) {
        *status = cp_tool_error();
        return -1;
    }
    return 0;
}

/* run's options that take a value: what a pass's own command line keeps
 * of run's, apart from the case names. */
static bool takes_value(const char *opt)
{
    static const char *const with_value[] = {
        "--profile",     "--repeat",    "--runs",     "--warmup",   "--out",
        "--devices",     "--min-samples", "--max-samples", "--max-noise", "--min-time",
        "--max-time",    "--param",     "--processes"};
    for (size_t i = 0; i < sizeof with_value / sizeof *with_value; i++)
        if (strcmp(opt, with_value[i]) == 0)
            return true;
    return false;
}

/* The command line of a pass in another process: run's own arguments less
 * --runs, --out and --processes, and, when `cases` is given, less the
 * case names too, then "--no-trace" and those `ncases` names. `args` has
 * room for a->argc + ncases + 1. Returns the count. */
static size_t pass_args(const run_args *a, const char *const *cases, size_t ncases, char **args)
{
    size_t n = 0;
    for (int i = 0; i < a->argc; i++) {
        const char *arg = a->argv[i];
        bool valued = arg[0] == '-' && takes_value(arg) && i + 1 < a->argc;
        if (valued && (strcmp(arg, "--runs") == 0 || strcmp(arg, "--out") == 0 ||
                       strcmp(arg, "--processes") == 0)) {
            i++;
            continue;
        }
        if (cases && arg[0] != '-')
            continue; /* a case name: the short ones are added below */
        args[n++] = (char *)arg;
        if (valued)
            args[n++] = a->argv[++i];
    }
    if (cases) {
        args[n++] = "--no-trace";
        for (size_t k = 0; k < ncases; k++)
            args[n++] = (char *)cases[k];
    }
    return n;
}

/* Whether a case's pass is timed in more processes: it ran, and each
 * variant it timed took under CP_PROCESS_SHORT_MS (a long variant's level
 * moves less than its run takes to repeat, and would multiply the run's
 * time). */
static bool short_case(const cp_case_result *c)
{
    if (!c || c->status == CP_STATUS_SKIPPED)
        return false;
    size_t timed = 0;
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_variant_result *v = &c->variants[i];
        if (!v->nsamples)
            continue;
        if (!(v->timing.median_ms < CP_PROCESS_SHORT_MS))
            return false;
        timed++;
    }
    return timed > 0;
}

/* --processes P: pass `pass`'s short cases (res[i] the pass's result of
 * selected case i, NULL when it has none) timed in P - 1 more processes
 * of their own, untraced, into OUT/passes/pass-N-process-M, each folded
 * into the pass's result (cp_case_result_add_process). Returns -1, or the
 * exit status when a process failed to leave a report. */
static int more_processes(const run_args *a, int pass, cp_case_result **res)
{
    if (a->processes < 2)
        return -1;
    const char **names = calloc(a->nsel + 1, sizeof *names);
    char **args = calloc((size_t)a->argc + a->nsel + 2, sizeof *args);
    bool *is_short = calloc(a->nsel + 1, sizeof *is_short);
    int status = -1;
    if (!names || !args || !is_short) {
        fprintf(stderr, "cuproof: out of memory\n");
        status = CP_EXIT_TOOL;
        goto done;
    }
    /* Judged once, on the pass's own process: a fold changes a case's
     * timing, and every process must time and fold the same cases. */
    size_t nshort = 0;
    for (size_t i = 0; i < a->nsel; i++)
        if ((is_short[i] = short_case(res[i])))
            names[nshort++] = cp_case_name(a->sel[i]);
    if (!nshort)
        goto done;
    size_t n = pass_args(a, names, nshort, args);
    for (int m = 2; m <= a->processes && status < 0; m++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/passes/pass-%d-process-%d", a->out_dir, pass, m);
        cp_report r;
        pid_t pid = 0;
        if (cp_make_dirs(dir) < 0 || cp_pass_in_process(args, n, dir, &r, &pid) < 0) {
            fprintf(stderr, "cuproof: pass %d, process %d: %s\n", pass, m, cp_last_error());
            status = CP_EXIT_TOOL;
            break;
        }
        printf("cuproof: pass %d, process %d of %d: %zu short case%s in process %d (%s.log)\n",
               pass, m, a->processes, nshort, nshort == 1 ? "" : "s", (int)pid, dir);
        for (size_t i = 0; i < a->nsel && status < 0; i++) {
            const cp_case_result *c = cp_report_case(&r, cp_case_name(a->sel[i]));
            if (c && is_short[i] && cp_case_result_add_process(res[i], c, m) < 0)
                status = cp_tool_error();
        }
        cp_report_free(&r);
    }
done:
    free(names);
    free(args);
    free(is_short);
    return status;
}

/* Pass `pass` (2 and later) of every selected case in a process of its
 * own (cp_pass_in_process), into OUT/passes/pass-N, timed in more
 * processes with --processes, each case folded into its first pass.
 * Returns -1, or the exit status when the pass failed to leave a report. */
static int pass_in_process(const run_args *a, int pass, cp_case_result *first)
{
    char **args = calloc((size_t)a->argc + 1, sizeof *args);
    cp_case_result **res = calloc(a->nsel + 1, sizeof *res);
    char dir[4096];
    if (!args || !res) {
        free(args);
        free(res);
        fprintf(stderr, "cuproof: out of memory\n");
        return CP_EXIT_TOOL;
    }
    size_t n = pass_args(a, NULL, 0, args);
    snprintf(dir, sizeof dir, "%s/passes/pass-%d", a->out_dir, pass);
    cp_report r;
    pid_t pid = 0;
    int rc = cp_make_dirs(dir) < 0 ? -1 : cp_pass_in_process(args, n, dir, &r, &pid);
    free(args);
    if (rc < 0) {
        free(res);
        fprintf(stderr, "cuproof: pass %d: %s\n", pass, cp_last_error());
        return CP_EXIT_TOOL;
    }
    printf("cuproof: pass %d of %d ran in process %d (%s.log)\n", pass, a->runs, (int)pid, dir);
    for (size_t i = 0; i < a->nsel; i++) {
        res[i] = (cp_case_result *)cp_report_case(&r, cp_case_name(a->sel[i]));
        if (res[i])
            res[i]->pid = (int)pid;
    }
    int status = more_processes(a, pass, res);
    for (size_t i = 0; i < a->nsel && rc == 0 && status < 0; i++)
        if (res[i]) /* else not run there: its first pass says why */
            rc = cp_case_result_add_pass(&first[i], res[i], pass);
    free(res);
    cp_report_free(&r);
    if (status >= 0)
        return status;
    if (rc < 0)
        return cp_tool_error();
    return -1;
}

/* Runs the selected cases into the session: once, or in a->runs passes
 * over all of them (each pass after the last, so that what drifts between
 * runs, clocks and the GPU's state, drifts between passes too; the first
 * in this process, each later one in its own, since a host-bound variant
 * moves between processes by more than between passes of one), each
 * case's later passes folded into its first (cp_case_result_add_pass).
 * Returns -1, or the exit status when a device cannot be selected. */
static int run_cases(const run_args *a, cp_session *s, const int *devices, int ndevices,
                     int *status)
{
    int fatal = 0, rc = -1;
    char fatal_msg[1024] = "";
    int passes = a->runs > 1 ? a->runs : 1;
    cp_case_result *first = calloc(a->nsel ? a->nsel : 1, sizeof *first);
    if (!first) {
        fprintf(stderr, "cuproof: out of memory\n");
        return CP_EXIT_TOOL;
    }
    if (passes > 1)
        printf("cuproof: pass 1 of %d in this process (%d)\n", passes, (int)getpid());
    /* Every case timed before any is traced (cp_run_opts.timed says why):
     * first each case untraced, then each again, its timed runs lent,
     * for its traced runs and checks. */
    bool split = a->o.trace && cp_tracing_available();
    cp_case_result *timed = split ? calloc(a->nsel ? a->nsel : 1, sizeof *timed) : NULL;
    if (split && !timed) {
        free(first);
        fprintf(stderr, "cuproof: out of memory\n");
        return CP_EXIT_TOOL;
    }
    cp_run_opts untraced = a->o;
    untraced.trace = false;
    size_t lost_at = a->nsel; /* the case whose timing lost the device */
    for (size_t i = 0; split && i < a->nsel && rc < 0 && !fatal; i++) {
        rc = run_one(a, &untraced, cp_session_report(s), i, devices, ndevices, &fatal, fatal_msg,
                     sizeof fatal_msg, &timed[i]);
        if (fatal)
            lost_at = i;
    }
    for (size_t i = 0; i < a->nsel && rc < 0; i++) {
        cp_run_opts o = a->o;
        o.timed = split ? &timed[i] : NULL;
        if (i == lost_at) {
            /* The device was lost while this case was timed: that is its
             * result; every other case is not run (run_one says why),
             * since none can be traced now. */
            first[i] = timed[i];
            memset(&timed[i], 0, sizeof timed[i]);
        } else {
            rc = run_one(a, &o, cp_session_report(s), i, devices, ndevices, &fatal, fatal_msg,
                         sizeof fatal_msg, &first[i]);
        }
        first[i].pid = (int)getpid();
        /* One pass of one process: each case reaches the sinks as soon
         * as it ran. */
        if (passes == 1 && a->processes < 2 && rc < 0 && add_case(s, &first[i], status) < 0)
            rc = CP_EXIT_TOOL;
    }
    if (rc < 0 && a->processes > 1) {
        cp_case_result **res = calloc(a->nsel + 1, sizeof *res);
        for (size_t i = 0; res && i < a->nsel; i++)
            res[i] = &first[i];
        rc = res ? more_processes(a, 1, res) : CP_EXIT_TOOL;
        free(res);
    }
    for (int pass = 2; pass <= passes && rc < 0; pass++)
        rc = pass_in_process(a, pass, first);
    for (size_t i = 0; (passes > 1 || a->processes > 1) && i < a->nsel; i++) {
        if (rc < 0)
            add_case(s, &first[i], status);
        else
            cp_case_result_free(&first[i]);
    }
    for (size_t i = 0; timed && i < a->nsel; i++)
        cp_case_result_free(&timed[i]);
    free(timed);
    free(first);
    return rc;
}

/* After --runs K: each variant's spread between its passes, the figure a
 * timing threshold must stay above, and each declared expectation's
 * metric over the traced passes, warned about when its bound lies within
 * its spread (cp_case_margins; issue 28). */
static void print_spread(const cp_report *r, int runs)
{
    printf("cuproof: between-run spread of each variant's median over %d passes:\n", runs);
    for (size_t i = 0; i < r->ncases; i++)
        for (size_t k = 0; k < r->cases[i].nvariants; k++) {
            const cp_variant_result *v = &r->cases[i].variants[k];
            double sd, span;
            if (cp_variant_run_spread(v, &sd, &span))
                printf("  %s/%s: %.1f%% (largest/smallest %.3f)\n", r->cases[i].name, v->name,
                       100 * sd, span);
        }
    enum { CAP = 256 };
    static cp_case_margin m[CAP];
    size_t tight = 0;
    bool said = false;
    for (size_t i = 0; i < r->ncases; i++) {
        size_t n = cp_case_margins(&r->cases[i], m, CAP);
        if (n && !said)
            printf("cuproof: each declared expectation's metric over the traced passes "
                   "(mean, sd, and the bound's distance in sds):\n");
        said |= n > 0;
        for (size_t k = 0; k < n; k++) {
            printf("  %s: %s: %.4g, sd %.2g over %zu: %s by %.1f sd\n", r->cases[i].name,
                   m[k].check, m[k].margin.mean, m[k].margin.sd, m[k].margin.runs,
                   m[k].margin.spreads >= 0 ? "holds" : "fails", fabs(m[k].margin.spreads));
            tight += m[k].margin.tight;
        }
        for (size_t k = 0; k < n; k++)
            if (m[k].margin.tight)
                fprintf(stderr,
                        "cuproof: warning: %s: '%s' %s by %.1f of its spread between runs "
                        "(under %g): another run can %s it\n",
                        r->cases[i].name, m[k].check,
                        m[k].margin.spreads >= 0 ? "holds" : "fails", fabs(m[k].margin.spreads),
                        CP_MARGIN_SPREADS, m[k].margin.spreads >= 0 ? "fail" : "pass");
    }
    if (tight)
        fprintf(stderr, "cuproof: %zu expectation%s within %g of %s spread between runs\n", tight,
                tight == 1 ? "" : "s", CP_MARGIN_SPREADS, tight == 1 ? "its" : "their");
    /* A claim's window is a threshold too: its nearest bound within the
     * spread of what the passes measured can change its verdict. */
    for (size_t i = 0; i < r->ncases; i++)
        for (size_t k = 0; k < r->cases[i].nclaims; k++) {
            const cp_claim_result *c = &r->cases[i].claims[k];
            double mean, sd, bound, spreads;
            if (!cp_claim_spread(c, &mean, &sd, &bound, &spreads))
                continue;
            const char *gap = strcmp(c->window.unit, "x") == 0 ? "" : " ";
            printf("  %s: claim \"%.60s\": %.4g%s%s, sd %.2g over %zu passes; its window's "
                   "bound %.4g is %.1f sd away\n",
                   r->cases[i].name, c->text, mean, gap, c->window.unit, sd, c->npass_values,
                   bound, spreads);
            if (spreads < CP_MARGIN_SPREADS)
                fprintf(stderr,
                        "cuproof: warning: %s: claim \"%.60s\": its window's bound %.4g%s%s "
                        "lies within %.1f of the passes' spread (%.4g, sd %.2g): another run "
                        "can change its verdict\n",
                        r->cases[i].name, c->text, bound, gap, c->window.unit, spreads, mean, sd);
        }
}

/* `test` prints every check and claim of its one case, for the ctest log,
 * and fails a case that skipped a check although the run was traced: on a
 * GPU machine with tracing, a skipped check is a check that did not run. */
static int test_verdict(const cp_report *r, int status)
{
    const cp_case_result *c = &r->cases[0];
    int skipped = 0;
    for (size_t i = 0; i < c->nchecks; i++) {
        const cp_check_result *k = &c->checks[i];
        printf("  %-7s %s (expected %s, measured %s)%s%s\n", cp_check_status_name(k->status),
               k->name, k->expected, k->measured, k->skip_reason[0] ? ": " : "", k->skip_reason);
        skipped += k->status == CP_CHECK_SKIPPED;
    }
    for (size_t i = 0; i < c->nclaims; i++) {
        const cp_claim_result *k = &c->claims[i];
        char rule[256] = "";
        if (k->has_window)
            cp_claim_rule(&k->window, rule, sizeof rule);
        printf("  claim   %s: claimed %s, measured %s: %s%s%s%s\n", k->text, k->claimed,
               k->measured, cp_verdict_name(k->verdict), *rule ? " (" : "", rule,
               *rule ? ")" : "");
    }
    if (c->status == CP_STATUS_INCONCLUSIVE) {
        printf("cuproof: %s is inconclusive: %s\n", c->name, c->skip_reason);
        return CP_EXIT_FAILED;
    }
    if (c->status == CP_STATUS_PASSED && r->traced && skipped) {
        printf("cuproof: %s: %d check%s skipped although the run was traced\n", c->name, skipped,
               skipped == 1 ? "" : "s");
        return CP_EXIT_FAILED;
    }
    return status;
}

static int run_or_test(int argc, char **argv, bool test)
{
    run_args a = {.o = {.profile = CP_PROFILE_CI, .repeat = 0, .warmup = 1, .trace = true},
                  .out_dir = test ? NULL : "cuproof-out"};
    int devices[CP_MAX_DEVICES], ndevices = 0;
    int status = CP_EXIT_OK, rc = -1;
    cp_session *s = NULL;
    a.sel = calloc(cp_registry_count() + (size_t)argc + 1, sizeof *a.sel);
    a.params = calloc((size_t)argc + 1, sizeof *a.params);
    if (!a.sel || !a.params) {
        free(a.sel);
        free(a.params);
        fprintf(stderr, "cuproof: out of memory\n");
        return CP_EXIT_TOOL;
    }
    a.argc = argc;
    a.argv = argv;
    if ((rc = parse_args(argc, argv, test, &a)) >= 0)
        goto out;
    /* CUPTI before the first CUDA call (DESIGN.md's tracing rules). */
    cp_tracing_init();
    s = cp_session_new();
    if (!s) {
        fprintf(stderr, "cuproof: out of memory\n");
        rc = CP_EXIT_TOOL;
        goto out;
    }
    if ((rc = describe_run(&a, cp_session_report(s), devices, &ndevices)) >= 0)
        goto out;
    if (test && cp_session_report(s)->env.has_device) {
        /* Where ctest's resource allocation placed the test (ci/gpu.sh
         * lists these lines from the log). */
        const cp_env *e = &cp_session_report(s)->env;
        printf("cuproof-test: %s placed on GPU %d (%s) by %s\n", cp_case_name(a.sel[0]),
               e->device, e->gpu_name, e->device_source);
    }
    if (cp_session_add_sink(s, cp_sink_progress(stdout, a.nsel)) < 0 ||
        (a.out_dir && (cp_session_add_sink(s, cp_sink_traces(a.out_dir)) < 0 ||
                       cp_session_add_sink(s, cp_sink_report(a.out_dir)) < 0))) {
        rc = cp_tool_error();
        goto out;
    }
    a.o.on_run = forward_progress;
    a.o.on_run_user = s;
    if ((rc = run_cases(&a, s, devices, ndevices, &status)) >= 0)
        goto out;
    if (cp_session_close(s) < 0) {
        rc = cp_tool_error(); /* its report could not be written */
        goto out;
    }
    if (a.runs > 1)
        print_spread(cp_session_report(s), a.runs);
    size_t np, nf, ns, ni;
    cp_session_counts(s, &np, &nf, &ns, &ni);
    if (a.out_dir)
        printf("cuproof: %zu cases: %zu passed, %zu failed, %zu inconclusive, %zu skipped; "
               "report in %s/report.json and %s/report.html\n",
               np + nf + ns + ni, np, nf, ni, ns, a.out_dir, a.out_dir);
    rc = status == CP_EXIT_OK && ni ? CP_EXIT_INCONCLUSIVE : status;
    if (test)
        rc = test_verdict(cp_session_report(s), rc);
    if (test && ns == 1) {
        /* A GPU machine whose driver is broken must not pass by skipping. */
        const char *require = getenv("CUPROOF_REQUIRE_GPU");
        bool required = require && strcmp(require, "1") == 0;
        rc = required && !cp_session_report(s)->env.has_device ? CP_EXIT_FAILED
                                                                : CP_EXIT_SKIPPED;
        if (rc == CP_EXIT_FAILED)
            fprintf(stderr, "cuproof: CUPROOF_REQUIRE_GPU=1 but %s\n",
                    cp_session_report(s)->env.no_device_reason);
    }
out:
    cp_session_free(s);
    free(a.sel);
    free(a.params);
    cp_tracing_shutdown();
    return rc;
}

int cp_cmd_run(int argc, char **argv)
{
    return run_or_test(argc, argv, false);
}

int cp_cmd_test(int argc, char **argv)
{
    return run_or_test(argc, argv, true);
}
