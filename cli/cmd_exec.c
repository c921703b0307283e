/*
 * cuproof exec [options] -- PROGRAM [ARGS...]: parses the options, runs
 * the program under the launcher (cp_exec_run, cuproof/exec.h), judges
 * its traces (cp_program_judge, cuproof/program.h), hands the result to a
 * session for the reports and prints the verdict. The exit status is the
 * judgement's, from the one table of cuproof/exit.h; 77 with
 * --skip-without-gpu when there is no GPU.
 */
#define _GNU_SOURCE
#include <cuproof/internal/file.h>
#include "cli.h"

#include <cuproof/case.h>
#include <cuproof/device.h>
#include <cuproof/error.h>
#include <cuproof/exec.h>
#include <cuproof/expect.h>
#include <cuproof/metrics.h>
#include <cuproof/program.h>
#include <cuproof/units.h>
#include <cuproof/internal/capture.h>
#include <cuproof/internal/report.h>
#include <cuproof/internal/session.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct exec_args {
    const char *out_dir;
    const char *range;
    const char *comm_pattern; /* --comm-pattern; NULL: the files' directive, else nccl */
    double timeout_s; /* 0: none */
    int repeat;       /* timed runs after the traced one, NVTX ranges alone */
    bool allow_dropped, keep_going, skip_without_gpu;
    /* --trace-only: one rank's share of a job launched by srun or mpirun,
     * whose shared directory `cuproof check` judges once every rank ended. */
    bool trace_only;
    int need_gpus; /* --need-gpus: skipped (77) with fewer visible; 0: any */
    bool rec; /* --format rec: the processes write cuproof.rec files */
    bool api_all; /* --api all: the processes record every API call */
    uint64_t keep_records; /* --keep-records: held at most, else streamed; 0: the default */
    const char *capture;   /* --capture SPEC (cuproof/internal/capture.h); NULL: everything */
    cp_capture cap;
    cp_expect_list expect;
    char **program; /* NULL-terminated, from argv */
} exec_args;

/* Parses one source of expectations (an --expect argument or a file),
 * whose errors name it: usage for the command line's, bad input for a
 * file's (`file`). */
static int add_expectation(exec_args *a, const char *text, const char *source, bool file,
                           size_t file_len)
{
    size_t from = a->expect.n;
    int rc = file ? cp_expect_parse_file(text, file_len, &a->expect)
                  : cp_expect_parse_all(text, 1, &a->expect);
    /* Its own lines validated now, while their source is known (an unknown
     * metric in a file is the file's error); the scope rules wait for
     * --range, all sources together. */
    cp_expect_list mine = {.items = a->expect.items + from, .n = a->expect.n - from,
                           .cap = a->expect.n - from};
    if (rc == 0 && mine.n)
        rc = cp_expect_validate_program(&mine);
    if (rc < 0) {
        /* Every error of a file, as many as its list holds (cp_errors). */
        if (file) {
            fprintf(stderr, "cuproof: %s: %s\n", source, cp_last_error());
            return CP_EXIT_INPUT;
        }
        char msg[1200];
        snprintf(msg, sizeof msg, "%s: %s", source, cp_last_error());
        return cp_usage_error("%s", msg);
    }
    return -1;
}

/* --api's values, the option's and CUPROOF_EXEC_API's alike: filtered or
 * all (*all set); false for anything else, *all untouched. */
static bool api_value(const char *v, bool *all)
{
    if (!v || (strcmp(v, "all") != 0 && strcmp(v, "filtered") != 0))
        return false;
    *all = strcmp(v, "all") == 0;
    return true;
}

/* Parses the options before "--" and the program after it. Returns -1
 * when they are good, else the exit status. */
/* Whether `prog` names a program that can be started: a path that is an
 * executable file, or a name found so in PATH (as posix_spawnp looks);
 * else why not, in `why`. A program that cannot be found is the command
 * line's mistake (exit 2), not cuproof's. */
static bool program_found(const char *prog, char *why, size_t len)
{
    struct stat st;
    if (strchr(prog, '/')) {
        if (stat(prog, &st) != 0)
            snprintf(why, len, "exec: no program %.150s: %s", prog, strerror(errno));
        else if (S_ISDIR(st.st_mode) || access(prog, X_OK) != 0)
            snprintf(why, len, "exec: %.150s is not an executable file", prog);
        else
            return true;
        return false;
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char full[PATH_MAX];
        if (snprintf(full, sizeof full, "%.*s/%s", (int)n, n ? p : ".", prog) < (int)sizeof full &&
            stat(full, &st) == 0 && !S_ISDIR(st.st_mode) && access(full, X_OK) == 0)
            return true;
        p = end ? end + 1 : p + n;
    }
    snprintf(why, len, "exec: no program '%.150s' in PATH", prog);
    return false;
}

static int parse_args(int argc, char **argv, exec_args *a)
{
    const cp_help_opt *table = cp_opts_exec;
    int i = 0;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        cp_arg g;
        int kind = cp_arg_next(table, argc, argv, &i, &g);
        const char *opt = g.opt, *val = g.val;
        int rc = -1, secs = 0;
        if (kind == CP_ARG_BAD)
            return CP_EXIT_USAGE;
        /* A word that is no option is the program, given without the --
         * that goes before it. */
        if (kind == CP_ARG_OPERAND)
            return cp_usage_error("exec: '%s' is not an option: the program goes after -- "
                                  "(cuproof exec [OPTIONS] -- PROGRAM [ARGS...])",
                                  argv[i]);
        if (g.valued && !val)
            return cp_usage_error("exec: %s needs a value", opt);
        if (strcmp(opt, "--expect") == 0) {
            char source[64];
            snprintf(source, sizeof source, "--expect '%.40s'", val);
            rc = add_expectation(a, val, source, false, 0);
        } else if (strcmp(opt, "--expect-file") == 0) {
            size_t len = 0;
            char *text = cp_read_file_len(val, &len);
            if (!text) {
                fprintf(stderr, "cuproof: --expect-file: %s\n", cp_last_error());
                return CP_EXIT_INPUT;
            }
            rc = add_expectation(a, text, val, true, len);
            free(text);
        } else if (strcmp(opt, "--range") == 0) {
            if (!*val)
                return cp_usage_error("%s", "--range needs a range name");
            a->range = val;
        } else if (strcmp(opt, "--comm-pattern") == 0) {
            if (!cp_comm_pattern_valid(val))
                return cp_usage_error("--comm-pattern '%s': expected a kernel name's prefix "
                                      "(letters, digits, '_'), as in 'nccl'", val);
            a->comm_pattern = val;
        } else if (strcmp(opt, "--out") == 0) {
            if (!*val)
                return cp_usage_error("%s", "--out needs a directory");
            a->out_dir = val;
        } else if (strcmp(opt, "--timeout") == 0) {
            if (!cp_parse_int(val, 1, 7 * 24 * 3600, &secs))
                return cp_usage_error("--timeout '%s': expected seconds, 1 to 604800", val);
            a->timeout_s = secs;
        } else if (strcmp(opt, "--repeat") == 0) {
            if (!cp_parse_int(val, 1, 1000, &a->repeat))
                return cp_usage_error("--repeat '%s': expected an integer from 1 to 1000", val);
        } else if (strcmp(opt, "--format") == 0) {
            if (strcmp(val, "rec") != 0 && strcmp(val, "jsonl") != 0)
                return cp_usage_error("--format '%s': expected jsonl or rec", val);
            a->rec = strcmp(val, "rec") == 0;
        } else if (strcmp(opt, "--api") == 0) {
            if (!api_value(val, &a->api_all))
                return cp_usage_error("--api '%s': expected filtered or all", val);
        } else if (strcmp(opt, "--keep-records") == 0) {
            int keep;
            if (!cp_parse_int(val, 1, INT_MAX, &keep))
                return cp_usage_error("--keep-records '%s': expected a count of records, 1 or "
                                      "more", val);
            a->keep_records = (uint64_t)keep;
        } else if (strcmp(opt, "--capture") == 0) {
            char why[400];
            if (cp_capture_parse(val, &a->cap, why, sizeof why) < 0)
                return cp_usage_error("%s", why);
            a->capture = val;
        } else if (strcmp(opt, "--allow-dropped") == 0) {
            a->allow_dropped = true;
        } else if (strcmp(opt, "--keep-going") == 0) {
            a->keep_going = true;
        } else if (strcmp(opt, "--trace-only") == 0) {
            a->trace_only = true;
        } else if (strcmp(opt, "--skip-without-gpu") == 0) {
            a->skip_without_gpu = true;
        } else if (strcmp(opt, "--need-gpus") == 0) {
            if (!cp_parse_int(val, 1, 1024, &a->need_gpus))
                return cp_usage_error("--need-gpus '%s': expected a count of GPUs, 1 to 1024",
                                      val);
        } else {
            return cp_opt_unparsed(opt);
        }
        if (rc >= 0)
            return rc;
    }
    if (i + 1 >= argc)
        return cp_usage_error("%s", "exec needs a program after '--': cuproof exec [options] -- "
                                    "PROGRAM [ARGS...]");
    a->program = &argv[i + 1];
    char why[256];
    if (!program_found(a->program[0], why, sizeof why))
        return cp_usage_error("%s", why);
    if (a->trace_only && a->expect.n)
        return cp_usage_error("%s", "--trace-only judges nothing: give the expectations to "
                                    "`cuproof check OUT/proc` once every rank has ended");
    if (cp_expect_scope_range(&a->expect, a->range) < 0)
        return cp_usage_error("%s", cp_last_error());
    if (cp_expect_validate_program(&a->expect) < 0)
        return cp_usage_error("expectation: %s", cp_last_error());
    return -1;
}

/* The defaults that the environment sets (so that a whole test suite,
 * ctest -L exec, can run in the rec form, with every API call recorded or
 * through the streaming path).
 * Returns -1 when they are good, else the exit status. */
static int env_defaults(exec_args *a)
{
    const char *format = getenv("CUPROOF_EXEC_FORMAT");
    if (format && *format && strcmp(format, "rec") != 0 && strcmp(format, "jsonl") != 0)
        return cp_usage_error("CUPROOF_EXEC_FORMAT='%s': expected jsonl or rec", format);
    a->rec = format && strcmp(format, "rec") == 0;
    const char *api = getenv("CUPROOF_EXEC_API");
    if (api && *api && !api_value(api, &a->api_all))
        return cp_usage_error("CUPROOF_EXEC_API='%s': expected filtered or all", api);
    const char *keep = getenv("CUPROOF_EXEC_KEEP_RECORDS");
    int keep_n = 0;
    if (keep && *keep && !cp_parse_int(keep, 1, INT_MAX, &keep_n))
        return cp_usage_error("CUPROOF_EXEC_KEEP_RECORDS='%s': expected a count of records, "
                              "1 or more", keep);
    a->keep_records = (uint64_t)keep_n;
    return -1;
}

/* --repeat N: the program N more times with NVTX ranges alone recorded.
 * A timed run that fails makes the program's outcome that failure. */
static int timed_runs(const exec_args *a, cp_exec_opts eo, cp_program_timing *t,
                      cp_program_run *traced)
{
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%.4000s/timing", a->out_dir);
    eo.proc_dir = dir;
    eo.timing_only = true;
    eo.on_wait = NULL; /* the traced run's follower follows its own directory */
    for (int k = 0; k < a->repeat; k++) {
        cp_program_run run;
        if (cp_exec_run(&eo, &run) < 0)
            return -1;
        if (cp_program_run_failed(&run)) {
            /* The outcome is the timed run's; the traces judged are still
             * the traced run's, whose id the trust rule compares them with. */
            memcpy(run.id, traced->id, sizeof run.id);
            *traced = run;
            printf("cuproof exec: timed run %d of %d failed\n", k + 1, a->repeat);
            return 0;
        }
        if (cp_program_timing_add(t, &run, dir) < 0)
            return -1;
    }
    return 0;
}

static void print_summary(const cp_case_result *c, const cp_judgement *j, uint64_t keep)
{
    const cp_variant_result *v = &c->variants[0];
    const cp_metrics *m = &v->metrics;
    const cp_program_info *info = &j->info;
    if (info->streamed)
        printf("cuproof exec: %llu records streamed through the analysis (more than %llu to "
               "hold): %s, %s\n",
               (unsigned long long)info->records,
               (unsigned long long)(keep ? keep : CP_PROGRAM_KEEP_RECORDS), info->rec_path,
               info->perfetto_path);
    /* The verdicts do not depend on it, but a timeline drawn wrong in
     * silence would mislead whoever opens it. */
    if (info->perfetto_unordered)
        fprintf(stderr,
                "cuproof exec: warning: %llu slices came too far out of order on their track to "
                "be checked for nesting; Perfetto may draw some of them with another's end\n",
                (unsigned long long)info->perfetto_unordered);
    /* Counts, times and shares through the one table (cuproof/units.h):
     * "1 kernel", "812 µs", "82%". */
    char nk[32], nc[32], nm[32], t1[32], t2[32], t3[32], pc[24], pc2[24];
    printf("cuproof exec: %zu process%s traced, %s, %s, %s; span %s\n", info->nfiles,
           info->nfiles == 1 ? "" : "es", cp_fmt_count(m->kernels, "kernels", nk, sizeof nk),
           cp_fmt_count(m->copies, "copies", nc, sizeof nc),
           cp_fmt_count(m->memsets, "memsets", nm, sizeof nm),
           cp_fmt_ms((double)m->span_ns / 1e6, t1, sizeof t1));
    /* What --capture took: the verdicts rest on these windows alone. */
    if (info->windows)
        printf("  traced inside %u capture window%s, %s in all; outside them no device work "
               "or API call was recorded\n",
               info->windows, info->windows == 1 ? "" : "s",
               cp_fmt_ms((double)info->window_ns / 1e6, t1, sizeof t1));
    /* A distributed program leads with its ranks: which rank waited,
     * communicated exposed or came last says more than the sums below. */
    if (v->ranks) {
        char *ranks = cp_ranks_text(v->ranks, "  ");
        if (ranks)
            fputs(ranks, stdout);
        else
            fprintf(stderr, "cuproof exec: out of memory printing the ranks' table\n");
        free(ranks);
    }
    /* Then its collectives, by operation, algorithm and protocol. */
    if (m->ncollective_rows) {
        char *coll = cp_collectives_text(m, "  ");
        if (coll)
            fputs(coll, stdout);
        else
            fprintf(stderr, "cuproof exec: out of memory printing the collectives' table\n");
        free(coll);
    }
    bool several = m->devices > 1;
    /* Nothing is said of what the trace does not hold: no "0% of copy
     * time" without a copy, no concurrency without a kernel. */
    char overlap[96];
    cp_fmt_copy_overlap(m->copies > 0, m->copy_kernel_overlap_ratio, false, overlap,
                        sizeof overlap);
    if (m->kernels + m->copies + m->memsets == 0)
        printf("  no device work in the trace\n");
    else
        printf("  %s; up to %u kernel%s at once%s (mean %.2f); idle %s%s, largest gap %s\n",
               overlap, m->peak_concurrent_kernels, m->peak_concurrent_kernels == 1 ? "" : "s",
               several ? " on one GPU" : "", m->mean_concurrent_kernels,
               cp_fmt_ms((double)m->idle_ns / 1e6, t1, sizeof t1),
               several ? " summed over GPUs" : "",
               cp_fmt_ms((double)m->largest_gap_ns / 1e6, t2, sizeof t2));
    /* Overlap and concurrency happen on one device: with several, each
     * device's own figures (the line above is their summary). */
    for (uint32_t i = 0; m->devices > 1 && m->device_metrics && i < m->devices; i++) {
        const cp_device_metrics *d = &m->device_metrics[i];
        printf("  GPU %u: %s; up to %u kernel%s at once (mean %.2f); idle %s, largest gap %s\n",
               d->device,
               cp_fmt_copy_overlap(d->copy_busy_ns > 0, d->copy_kernel_overlap_ratio, true,
                                   overlap, sizeof overlap),
               d->peak_concurrent_kernels, d->peak_concurrent_kernels == 1 ? "" : "s",
               d->mean_concurrent_kernels, cp_fmt_ms((double)d->idle_ns / 1e6, t1, sizeof t1),
               cp_fmt_ms((double)d->largest_gap_ns / 1e6, t2, sizeof t2));
    }
    /* Communication (cuproof metrics prints the rule), only where a
     * kernel was: a program without NCCL has nothing to say here. */
    if (m->comm_busy_ns)
        printf("  communication %s, %s of it under compute, %s exposed (%s of the devices' "
               "time)\n",
               cp_fmt_ms((double)m->comm_busy_ns / 1e6, t1, sizeof t1),
               cp_fmt_percent(m->comm_compute_overlap_ratio, pc, sizeof pc),
               cp_fmt_ms((double)m->exposed_comm_ns / 1e6, t2, sizeof t2),
               cp_fmt_percent(m->exposed_comm_share, pc2, sizeof pc2));
    for (size_t i = 0; i < m->nfindings; i++)
        printf("  finding %s: %s\n", m->findings[i].name, m->findings[i].message);
    for (size_t i = 0; i < v->trace.nprocesses; i++)
        if (!v->trace.processes[i].ended)
            printf("  process %u (%s): trace truncated, work after its last flush is missing\n",
                   v->trace.processes[i].pid, v->trace.processes[i].command);
    if (j->trust.trusted && j->trust.warning[0])
        printf("  warning: %s\n", j->trust.warning);
    /* The expectations' checks come last (cp_program_judge); one that
     * held on a trace not to be trusted (--keep-going) is judged, not
     * passed: only a failure stands on it (the trust rule). */
    size_t first_expectation = c->nchecks - (j->checked ? j->expectations : 0);
    for (size_t i = 0; i < c->nchecks; i++) {
        const cp_check_result *k = &c->checks[i];
        char measured[sizeof k->measured];
        bool judged = !j->trust.trusted && i >= first_expectation && k->status == CP_CHECK_PASSED;
        /* An expectation left undecided on a trusted trace (collectives
         * that cannot be matched) is inconclusive, as check says it. */
        if (j->trust.trusted && i >= first_expectation && k->status == CP_CHECK_SKIPPED) {
            printf("  inconclusive %s (%s)\n", k->name, k->skip_reason);
            continue;
        }
        cp_fmt_measured(k->measured, measured, sizeof measured);
        printf("  %-7s %s (%s%s)%s%s%s\n", judged ? "judged" : cp_check_status_name(k->status),
               k->name, cp_measured_label(measured), measured, k->skip_reason[0] ? ": " : "",
               k->skip_reason, judged ? ", but the program's verdict is inconclusive" : "");
    }
    if (v->timing.runs > 0)
        printf("  %d timed runs: median %s (min %s, max %s)\n", v->timing.runs,
               cp_fmt_ms(v->timing.median_ms, t1, sizeof t1),
               cp_fmt_ms(v->timing.min_ms, t2, sizeof t2),
               cp_fmt_ms(v->timing.max_ms, t3, sizeof t3));
    for (size_t i = 1; i < c->nvariants; i++)
        printf("  range %s: %d samples, median %s\n", c->variants[i].name + 6,
               c->variants[i].timing.runs, cp_fmt_ms(c->variants[i].timing.median_ms, t1,
                                                     sizeof t1));
}

/* What tracing cost the program, one line (report.json's tracing_cost):
 * its processes' own counts where they recorded them, "not recorded"
 * where none did (files of an earlier writer: unknown, not zero), and
 * the launcher's post-processing. */
static void print_tracing_cost(const cp_report *r, double total_ms)
{
    const cp_trace *t = &r->cases[0].variants[0].trace;
    cp_tracing_cost sum;
    size_t recorded = cp_trace_tracing_cost(t, &sum);
    uint64_t dropped = 0;
    for (size_t i = 0; i < t->nprocesses; i++)
        dropped += t->processes[i].dropped;
    char n1[48], n2[48], n3[48], n4[48], ms[32], post[96], whole[32], before[32], part[96] = "";
    /* report.json holds the time until the report was handed to be
     * written; the terminal adds the writing of report.json/html. */
    snprintf(post, sizeof post, "%s (%s before writing the report)",
             cp_fmt_ms(total_ms, whole, sizeof whole),
             cp_fmt_ms(r->postprocess_ms, before, sizeof before));
    /* How much of the reading overlapped the program (the follower). */
    char live[700] = "", pc[24];
    uint64_t all = r->records_read_during_run + r->records_read_after_exit;
    if (all)
        snprintf(live, sizeof live, ", %s of the records read while the program ran%s%.560s%s",
                 cp_fmt_percent((double)r->records_read_during_run / (double)all, pc, sizeof pc),
                 r->read_after_exit_why[0] ? " (after it: " : "", r->read_after_exit_why,
                 r->read_after_exit_why[0] ? ")" : "");
    if (!t->nprocesses) {
        printf("  tracing: no process traced; post-processing %s%s\n", post, live);
        return;
    }
    if (!recorded) {
        printf("  tracing: cost not recorded (trace files from an earlier cuproof), %llu "
               "dropped; post-processing %s%s\n",
               (unsigned long long)dropped, post, live);
        return;
    }
    if (recorded < t->nprocesses)
        snprintf(part, sizeof part, " (%zu of %zu processes recorded it)", recorded,
                 t->nprocesses);
    char filter[80];
    if (sum.api_all)
        snprintf(filter, sizeof filter, "none filtered (--api all)");
    else
        snprintf(filter, sizeof filter, "%s filtered",
                 cp_fmt_count((double)sum.api_filtered, "call kinds", n3, sizeof n3));
    printf("  tracing%s: %s (%llu dropped), %s recorded, %s, CUPTI overhead %s, %s; "
           "post-processing %s%s\n",
           part, cp_fmt_count((double)sum.records, "records", n1, sizeof n1),
           (unsigned long long)dropped,
           cp_fmt_count((double)sum.api_records, "API calls", n2, sizeof n2), filter,
           cp_fmt_ms((double)cp_tracing_overhead_ns(&sum) / 1e6, ms, sizeof ms),
           cp_fmt_count((double)sum.buffers, "buffers", n4, sizeof n4), post, live);
}

static void print_verdict(const exec_args *a, const cp_program_run *run, const cp_judgement *j)
{
    if (j->info.windows) {
        /* What tracing cost where (issue 43): CUPTI's overhead, in the
         * tracing line above, is the windows' own, since outside them no
         * kind is on. */
        double in = (double)j->info.window_ns / 1e6;
        printf("cuproof exec: the program ran %.1f ms: %.1f ms inside %u capture window%s "
               "(%.1f%%), traced; %.1f ms outside, with the hooks alone\n",
               run->wall_ms, in, j->info.windows, j->info.windows == 1 ? "" : "s",
               run->wall_ms > 0 ? 100.0 * in / run->wall_ms : 0.0,
               run->wall_ms > in ? run->wall_ms - in : 0.0);
    } else {
        printf("cuproof exec: the program ran %.1f ms (traced)\n", run->wall_ms);
    }
    if (!j->trust.trusted)
        fprintf(stderr, "cuproof exec: cannot check the program: %s\n", j->trust.why);
    if (j->program_failed)
        fprintf(stderr, "cuproof exec: the program failed: %s\n",
                run->timed_out ? "killed after the timeout"
                : run->signal  ? strsignal(run->signal)
                               : "non-zero exit status");
    if (!j->checked)
        printf("cuproof exec: %zu expectation%s not checked; report in %s/report.json; exit %d\n",
               j->expectations, j->expectations == 1 ? "" : "s", a->out_dir, j->exit);
    else
        printf("cuproof exec: %zu of %zu expectations met; report in %s/report.json; exit %d\n",
               j->met, j->expectations, a->out_dir, j->exit);
    /* No verdict: why, as the last line, as check says it. */
    if (j->exit == CP_EXIT_INCONCLUSIVE)
        printf("inconclusive: %s\n",
               !j->trust.trusted ? j->trust.why
                                 : "an expectation could not be decided (named above)");
}

int cp_cmd_exec(int argc, char **argv)
{
    exec_args a = {.out_dir = "cuproof-exec"};
    cp_program_run run = {0};
    cp_program_timing tm = {0};
    cp_case_result c;
    memset(&c, 0, sizeof c);
    cp_session *s = NULL;
    cp_follower *follow = NULL;
    char proc_dir[PATH_MAX + 16], why[512];
    int status = env_defaults(&a);
    if (status < 0)
        status = parse_args(argc, argv, &a);
    if (status >= 0)
        goto out;
    /* Another profiler holding CUPTI leaves no trace to trust: no verdict
     * (3), as the trust rule says of a process that could not have CUPTI. */
    if (*cp_exec_other_profiler(why, sizeof why)) {
        fprintf(stderr, "cuproof exec: %s\n", why);
        status = CP_EXIT_INCONCLUSIVE;
        goto out;
    }
    /* From here a failure is cuproof's own (an output directory it cannot
     * write, out of memory, the driver or the launcher failing it): the
     * program's outcome and the trace's trust come in the judgement. */
    status = CP_EXIT_TOOL;
    if (!(s = cp_session_new())) {
        fprintf(stderr, "cuproof exec: out of memory\n");
        goto out;
    }
    cp_report *r = cp_session_report(s);
    if (cp_env_discover(&r->env) < 0) {
        fprintf(stderr, "cuproof exec: %s\n", cp_last_error());
        goto out;
    }
    if (!r->env.has_device && (a.skip_without_gpu || a.need_gpus)) {
        printf("cuproof exec: skipped: %s\n", r->env.no_device_reason);
        status = CP_EXIT_SKIPPED;
        goto out;
    }
    /* A program written for several GPUs cannot show on fewer what it is
     * written to show: a skip with the reason, never a run that fails. */
    if (a.need_gpus > r->env.device_count) {
        printf("cuproof exec: skipped: the program needs %d GPUs, %d visible\n", a.need_gpus,
               r->env.device_count);
        status = CP_EXIT_SKIPPED;
        goto out;
    }
    snprintf(r->profile, sizeof r->profile, "exec");
    r->repeat = 1;
    r->traced = true;
    snprintf(proc_dir, sizeof proc_dir, "%s/proc", a.out_dir);
    cp_exec_opts eo = {
        .argv = a.program,
        .proc_dir = proc_dir,
        .timeout_s = a.timeout_s,
        .rec = a.rec,
        .api_all = a.api_all,
        .capture = a.capture,
        /* Several GPUs: the program sees every visible one, not the one
         * GPU of ctest's first resource group. */
        .ctest_gpu = a.need_gpus <= 1 &&
                             strcmp(r->env.device_source, "CTEST_RESOURCE_GROUP_0_GPUS") == 0
                         ? r->env.device : -1,
    };
    cp_judge_opts jo = {
        .expect = &a.expect,
        .argv = a.program,
        .program = {.timeline = {.max_concurrent_kernels =
                                     cp_max_concurrent_kernels(r->env.cc_major, r->env.cc_minor),
                                 /* The option wins over an expectation file's directive. */
                                 .comm_pattern = a.comm_pattern     ? a.comm_pattern
                                                 : a.expect.comm_pattern[0] ? a.expect.comm_pattern
                                                                            : NULL},
                    .keep_records = a.keep_records,
                    .out_dir = a.out_dir},
        .allow_dropped = a.allow_dropped,
        .keep_going = a.keep_going,
        .device = r->env.device,
        .gpu_name = r->env.gpu_name,
        .no_device = r->env.has_device ? NULL : r->env.no_device_reason,
        .capture = a.capture,
    };
    if (a.trace_only) {
        /* The other ranks may still be writing: nothing is judged here. */
        if (cp_make_dirs(a.out_dir) < 0 || cp_exec_run(&eo, &run) < 0) {
            fprintf(stderr, "cuproof exec: %s\n", cp_last_error());
            goto out;
        }
        printf("cuproof exec: traced into %s (run %s); judge it with `cuproof check %s` once "
               "every rank has ended\n", proc_dir, run.id, proc_dir);
        status = cp_program_run_failed(&run) ? CP_EXIT_PROGRAM : CP_EXIT_OK;
        goto out;
    }
    /* The traces are read while the program runs, so that
     * after it only the rest is left to read; CUPROOF_EXEC_FOLLOW=0 reads
     * them all after it, as before (for comparisons). */
    const char *follow_env = getenv("CUPROOF_EXEC_FOLLOW");
    char not_followed[128] = "";
    if (follow_env && strcmp(follow_env, "0") == 0)
        snprintf(not_followed, sizeof not_followed, "not followed (CUPROOF_EXEC_FOLLOW=0)");
    else if (cp_follower_new(&follow, proc_dir, a.keep_records, a.out_dir) < 0)
        snprintf(not_followed, sizeof not_followed, "not followed: %.100s", cp_last_error());
    eo.on_wait = follow ? cp_follower_poll : NULL;
    eo.on_wait_ctx = follow;
    jo.program.follow = follow;
    cp_judgement j;
    double exited = 0;
    bool ran = cp_make_dirs(a.out_dir) == 0 && cp_exec_run(&eo, &run) == 0 &&
               !(a.repeat && !cp_program_run_failed(&run) && timed_runs(&a, eo, &tm, &run) < 0);
    /* Post-processing runs from the program's last exit (the traced run's,
     * or the last timed run's) until the report is handed to be written. */
    if (ran)
        exited = cp_now_ms();
    if (!ran || cp_session_add_sink(s, cp_sink_traces(a.out_dir)) < 0 ||
        cp_session_add_sink(s, cp_sink_report(a.out_dir)) < 0 ||
        cp_program_judge(proc_dir, &jo, &run, &tm, &c, &j) < 0) {
        fprintf(stderr, "cuproof exec: %s\n", cp_last_error());
        goto out;
    }
    print_summary(&c, &j, a.keep_records);
    r->has_tracing_cost = true;
    r->records_read_during_run = j.info.records_during_run;
    r->records_read_after_exit =
        j.info.records > j.info.records_during_run ? j.info.records - j.info.records_during_run : 0;
    snprintf(r->read_after_exit_why, sizeof r->read_after_exit_why, "%s",
             not_followed[0] ? not_followed : j.info.follow_why);
    r->postprocess_ms = cp_now_ms() - exited;
    if (a.capture) {
        r->has_capture = true;
        snprintf(r->capture, sizeof r->capture, "%s", a.capture);
        r->capture_windows = j.info.windows;
        r->capture_window_ms = (double)j.info.window_ns / 1e6;
        r->capture_program_ms = run.wall_ms;
        /* Each window listed: when, for how long, from which occurrence. */
        const cp_trace *t = &c.variants[0].trace;
        for (uint32_t i = 0; i < j.info.windows && i < CP_WINDOWS_LISTED &&
                             r->ncapture_list < sizeof r->capture_list / sizeof *r->capture_list;
             i++) {
            const struct cp_window_seen *w = &j.info.window_list[i];
            r->capture_list[r->ncapture_list++] = (struct cp_report_window){
                .pid = w->process < t->nprocesses ? t->processes[w->process].pid : 0,
                .first = w->first,
                .start_ms = w->start_ns > j.info.first_ns ? (double)(w->start_ns - j.info.first_ns) / 1e6
                                                          : 0,
                .length_ms = w->end_ns > w->start_ns ? (double)(w->end_ns - w->start_ns) / 1e6 : 0};
        }
    }
    /* Last: the session takes the result (c is empty after it), and the
     * windows above read its trace. */
    if (cp_session_add_case(s, &c) < 0 || cp_session_close(s) < 0) {
        fprintf(stderr, "cuproof exec: %s\n", cp_last_error());
        goto out;
    }
    print_tracing_cost(r, cp_now_ms() - exited);
    print_verdict(&a, &run, &j);
    status = j.exit;
out:
    cp_case_result_free(&c);
    cp_session_free(s);
    cp_follower_free(follow);
    cp_expect_list_free(&a.expect);
    cp_program_timing_free(&tm);
    return status;
}
