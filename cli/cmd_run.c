/*
 * cuproof run [CASE...] and cuproof test CASE: parse, run the cases
 * through the passes' policy (cp_passes_run) into a session whose sinks
 * write the report, traces and progress lines, print. `test` is `run` for
 * one case as a ctest test: files only when asked (--out), and its exit
 * status is the case's (77 when skipped).
 */
#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/case.h>
#include <cuproof/internal/names.h>
#include <cuproof/device.h>
#include <cuproof/internal/runner.h>
#include <cuproof/internal/session.h>
#include <cuproof/internal/passes.h>

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
    int runs;      /* --runs K (cp_passes_opts.runs) */
    int processes; /* --processes P (cp_passes_opts.processes) */
    bool cases_given;
    char **kept; /* the options a later pass keeps, with their values */
    size_t nkept;
    /* The device state across cases (run_one): a sticky CUDA error leaves
     * this process's context unusable for the GPU cases after it. */
    const cp_report *report;
    const int *devices;
    int ndevices;
    bool fatal;
    char fatal_msg[1024];
} run_args;

/* Parses run's options (cp_opts_run, or test's: cp_opts_test) and case
 * names into `a` (a->sel has room for every argument), and collects the
 * options a later pass keeps (their rows' `kept`) into a->kept. Returns
 * -1 when they are good, else the exit status. */
/* "unknown case 'vectoradd' (did you mean 'vector-add'?)", or where list
 * shows them. */
static int unknown_case(const char *name)
{
    size_t n = cp_registry_count();
    const char **names = calloc(n + 1, sizeof *names);
    for (size_t i = 0; names && i < n; i++)
        names[i] = cp_case_name(cp_registry_at(i));
    const char *near = names ? cp_nearest_name(name, names, n, sizeof *names) : NULL;
    char why[256];
    if (near)
        snprintf(why, sizeof why, "unknown case '%.100s' (did you mean '%.100s'?)", name, near);
    else
        snprintf(why, sizeof why, "unknown case '%.100s' (list shows the cases)", name);
    free(names);
    return cp_usage_error("%s", why);
}

static int parse_args(int argc, char **argv, bool test, run_args *a)
{
    const cp_help_opt *table = test ? cp_opts_test : cp_opts_run;
    for (int i = 0; i < argc; i++) {
        cp_arg g;
        int kind = cp_arg_next(table, argc, argv, &i, &g);
        const char *opt = g.opt, *val = g.val;
        if (kind == CP_ARG_BAD)
            return CP_EXIT_USAGE;
        if (kind == CP_ARG_OPERAND) {
            const cp_case_def *d = cp_registry_find(g.operand);
            if (!d)
                return unknown_case(g.operand);
            a->sel[a->nsel++] = d;
            a->cases_given = true;
            continue;
        }
        if (g.row->kept) {
            a->kept[a->nkept++] = (char *)opt;
            if (val)
                a->kept[a->nkept++] = (char *)val;
        }
        if (strcmp(opt, "--profile") == 0) {
            if (!val || (strcmp(val, "ci") != 0 && strcmp(val, "full") != 0))
                return cp_usage_error("unknown profile '%s': use ci or full", val ? val : "");
            a->o.profile = strcmp(val, "full") == 0 ? CP_PROFILE_FULL : CP_PROFILE_CI;
        } else if (strcmp(opt, "--repeat") == 0) {
            if (!cp_parse_int(val, 1, 1000, &a->o.repeat))
                return cp_usage_error("--repeat '%s': expected an integer from 1 to 1000",
                                      val ? val : "");
        } else if (strcmp(opt, "--runs") == 0) {
            if (!cp_parse_int(val, 1, 100, &a->runs))
                return cp_usage_error("--runs '%s': expected an integer from 1 to 100",
                                      val ? val : "");
        } else if (strcmp(opt, "--processes") == 0) {
            if (!cp_parse_int(val, 1, CP_MAX_PROCESSES, &a->processes))
                return cp_usage_error("--processes '%s': expected an integer from 1 to 8",
                                      val ? val : "");
        } else if (strcmp(opt, "--warmup") == 0) {
            if (!cp_parse_int(val, 0, 100, &a->o.warmup))
                return cp_usage_error("--warmup '%s': expected an integer from 0 to 100",
                                      val ? val : "");
        } else if (strcmp(opt, "--out") == 0) {
            if (!val || !*val)
                return cp_usage_error("%s", "--out needs a directory");
            a->out_dir = val;
        } else if (strcmp(opt, "--devices") == 0) {
            if (!val)
                return cp_usage_error("%s", "--devices needs GPU ids such as 0,1");
            a->devices_arg = val;
        } else if (strcmp(opt, "--min-samples") == 0 || strcmp(opt, "--max-samples") == 0) {
            int n = 0;
            if (!cp_parse_int(val, 1, 100000, &n))
                return cp_usage_error("%s: expected an integer from 1 to 100000", opt);
            *(strcmp(opt, "--min-samples") == 0 ? &a->rule.min_samples : &a->rule.max_samples) = n;
            a->rule_set = true;
        } else if (strcmp(opt, "--max-noise") == 0 || strcmp(opt, "--min-time") == 0 ||
                   strcmp(opt, "--max-time") == 0) {
            char *end = NULL;
            double x = val ? strtod(val, &end) : -1;
            if (!val || end == val || *end || !(x >= 0 && x <= 1e6))
                return cp_usage_error("%s: expected a non-negative number", opt);
            *(strcmp(opt, "--max-noise") == 0  ? &a->rule.max_noise
              : strcmp(opt, "--min-time") == 0 ? &a->rule.min_time_s
                                               : &a->rule.max_time_s) = x;
            a->rule_set = true;
        } else if (strcmp(opt, "--param") == 0) {
            const char *eq = val ? strchr(val, '=') : NULL;
            if (!eq || eq == val || !eq[1])
                return cp_usage_error("--param '%s': expected NAME=VALUE", val ? val : "");
            a->params[a->o.nparams++] = val;
            a->o.params = a->params;
        } else if (strcmp(opt, "--no-trace") == 0) {
            a->o.trace = false;
        } else {
            return cp_opt_unparsed(opt);
        }
    }
    if (test && a->nsel != 1)
        return cp_usage_error("%s", "test takes exactly one case");
    char which[512] = ""; /* the cases chosen by --param alone */
    if (a->nsel == 0 && a->o.nparams) {
        /* --param without case names: the cases that take every
         * parameter given, said, rather than every case (of which the
         * first that takes none would fail the run). */
        for (size_t i = 0; i < cp_registry_count(); i++) {
            const cp_case_def *d = cp_registry_at(i);
            cp_clear_last_error();
            if (cp_case_check_params(d, a->o.params, a->o.nparams) < 0 &&
                strstr(cp_last_error(), "takes no such parameter"))
                continue;
            a->sel[a->nsel++] = d;
            size_t used = strlen(which);
            snprintf(which + used, sizeof which - used, "%s%s", used ? ", " : "",
                     cp_case_name(d));
        }
        cp_clear_last_error();
        if (a->nsel == 0)
            return cp_usage_error("--param %s: no case takes it (run CASE --param X=1 says what "
                                  "CASE takes)",
                                  a->o.params[0]);
    }
    if (a->nsel == 0)
        for (size_t i = 0; i < cp_registry_count(); i++)
            a->sel[a->nsel++] = cp_registry_at(i);
    /* Every override against every selected case's declaration, before
     * anything runs and whether or not a GPU is here. */
    for (size_t i = 0; a->o.nparams && i < a->nsel; i++)
        if (cp_case_check_params(a->sel[i], a->o.params, a->o.nparams) < 0)
            return cp_usage_error("%s", cp_last_error());
    if (which[0])
        printf("cuproof: --param given without case names: running the cases that take it: "
               "%s\n",
               which);
    if (a->o.repeat && a->rule_set)
        return cp_usage_error("%s", "--repeat fixes the number of timed runs: it does not go "
                                    "with --min-samples, --max-samples, --max-noise, --min-time "
                                    "or --max-time");
    if (a->o.repeat == 0 && test && !a->rule_set) {
        /* A test asserts checks, not timings: three timed runs keep the
         * suite quick, as they always have. */
        a->o.repeat = 3;
    } else if (a->o.repeat == 0 &&
               cp_run_opts_stopping_rule_given(&a->o, a->o.profile, &a->rule) < 0) {
        return cp_usage_error("%s", cp_last_error());
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
    snprintf(r->profile, sizeof r->profile, "%s", a->o.profile == CP_PROFILE_FULL ? "full" : "ci");
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

/* Runs selected case i in this process (cp_pass_run_fn): untraced for its
 * timed runs, or traced with `timed`'s runs lent, on the (i mod n)th GPU
 * of --devices. After a sticky error no GPU case runs here. */
static int run_one(void *ctx, size_t i, bool timing, const cp_case_result *timed, cp_case_result *c,
                   bool *lost)
{
    run_args *a = ctx;
    if (a->fatal && !a->sel[i]->cpu_only) {
        snprintf(c->name, sizeof c->name, "%s", cp_case_name(a->sel[i]));
        c->status = CP_STATUS_FAILED;
        snprintf(c->error, sizeof c->error,
                 "not run: an earlier case left the device unusable (%.900s)", a->fatal_msg);
        return -1;
    }
    cp_env env = a->report->env;
    if (a->ndevices > 1 && cp_env_use_device(&env, a->devices[i % (size_t)a->ndevices]) < 0)
        return cp_tool_error();
    cp_run_opts o = a->o;
    o.trace = o.trace && !timing;
    o.timed = timed;
    /* Only a sticky error (the context is lost) stops the GPU cases after
     * this one; the case's own report says what failed either way. */
    if (cp_run_case(a->sel[i], &env, &o, c) < 0 && env.has_device && !cp_device_usable()) {
        a->fatal = *lost = true;
        snprintf(a->fatal_msg, sizeof a->fatal_msg, "%s", c->error);
    }
    return -1;
}

/* The selected cases through cp_passes_run: once, or in --runs passes,
 * each timed before any is traced. Returns -1 or the exit status. */
static int run_cases(run_args *a, cp_session *s, int *status)
{
    const char **names = calloc(a->nsel + 1, sizeof *names);
    if (!names) {
        fprintf(stderr, "cuproof: out of memory\n");
        return CP_EXIT_TOOL;
    }
    for (size_t i = 0; i < a->nsel; i++)
        names[i] = cp_case_name(a->sel[i]);
    cp_passes_opts p = {.cases = names,
                        .ncases = a->nsel,
                        .runs = a->runs,
                        .processes = a->processes,
                        .out_dir = a->out_dir,
                        .args = a->kept,
                        .nargs = a->nkept,
                        .cases_given = a->cases_given,
                        .split = a->o.trace && cp_tracing_available(),
                        .run = run_one,
                        .ctx = a,
                        .progress = stdout};
    a->report = cp_session_report(s);
    int rc = cp_passes_run(&p, s, status);
    free(names);
    return rc;
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
               k->measured, cp_verdict_name(k->verdict), *rule ? " (" : "", rule, *rule ? ")" : "");
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
    a.kept = calloc((size_t)argc + 1, sizeof *a.kept);
    a.devices = devices;
    if (!a.sel || !a.params || !a.kept) {
        free(a.sel);
        free(a.params);
        free(a.kept);
        fprintf(stderr, "cuproof: out of memory\n");
        return CP_EXIT_TOOL;
    }
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
        printf("cuproof-test: %s placed on GPU %d (%s) by %s\n", cp_case_name(a.sel[0]), e->device,
               e->gpu_name, e->device_source);
    }
    if (cp_session_add_sink(s, cp_sink_progress(stdout, a.nsel)) < 0 ||
        (a.out_dir && (cp_session_add_sink(s, cp_sink_traces(a.out_dir)) < 0 ||
                       cp_session_add_sink(s, cp_sink_report(a.out_dir)) < 0))) {
        rc = cp_tool_error();
        goto out;
    }
    a.o.on_run = forward_progress;
    a.o.on_run_user = s;
    a.ndevices = ndevices;
    if ((rc = run_cases(&a, s, &status)) >= 0)
        goto out;
    if (cp_session_close(s) < 0) {
        rc = cp_tool_error(); /* its report could not be written */
        goto out;
    }
    if (a.runs > 1)
        cp_passes_print_spread(cp_session_report(s), a.runs, stdout, stderr);
    size_t np, nf, ns, ni;
    cp_session_counts(s, &np, &nf, &ns, &ni);
    if (a.out_dir)
        cp_session_print_counts(s, a.out_dir, stdout);
    /* A case failed (status 1) stands beside one inconclusive. */
    rc = status == CP_EXIT_OK ? cp_exit_of_verdicts(0, ni) : status;
    if (test)
        rc = test_verdict(cp_session_report(s), rc);
    if (test && ns == 1) {
        /* A GPU machine whose driver is broken must not pass by skipping. */
        const char *require = getenv("CUPROOF_REQUIRE_GPU");
        bool required = require && strcmp(require, "1") == 0;
        rc = required && !cp_session_report(s)->env.has_device ? CP_EXIT_FAILED : CP_EXIT_SKIPPED;
        if (rc == CP_EXIT_FAILED)
            fprintf(stderr, "cuproof: CUPROOF_REQUIRE_GPU=1 but %s\n",
                    cp_session_report(s)->env.no_device_reason);
    }
out:
    cp_session_free(s);
    free(a.sel);
    free(a.params);
    free(a.kept);
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
