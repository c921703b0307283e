/*
 * cuproof check TRACE... --expect EXPR...: expectations judged on
 * recorded traces, in three forms: a case's trace files (per variant),
 * a program's per-process files (merged) and cuproof.rec files. Parsing
 * and printing live here; the scope rule (cp_expect_scope_range), the
 * streaming judge (cp_expect_judge) and the trust rule (cp_trust_judge)
 * are the library's, shared with exec.
 */
#include <cuproof/internal/file.h>
#include <cuproof/internal/measure.h>
#include <cuproof/internal/tracefile.h>
#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/units.h>
#include <cuproof/expect.h>
#include <cuproof/internal/proc.h>
#include <cuproof/internal/rec.h>
#include <cuproof/internal/report.h>
#include <cuproof/program.h>
#include <cuproof/trust.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Where a run of the list's expectations came from, for the messages of
 * validation, which happens after all are parsed. */
typedef struct source {
    const char *label; /* "--expect" or the file's path */
    size_t from, to;   /* its expectations in the list */
    int fault;         /* the status of an error in it: usage for the command
                        * line's --expect, bad input for a file's */
} source;

typedef struct check_args {
    const char **traces;
    size_t ntraces;
    source *sources;
    size_t nsources;
    cp_expect_list list;
    const char *range;
    const char *comm_pattern; /* --comm-pattern; NULL: the files' directive, else nccl */
    bool allow_dropped;
    bool program; /* per-process files rather than cuproof.trace/1 files */
    bool rec;     /* cuproof.rec/1 files, one trace each */
    bool json;    /* --format json: what the traces measured, as JSON */
} check_args;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Parses one --expect argument (first_line > 0: its number among them)
 * or an --expect-file's text (first_line 0; `file_len` its bytes) into
 * the list; an error in it gives `fault`. */
static int add_expectations(check_args *a, const char *label, const char *text, int first_line,
                            size_t file_len, int fault)
{
    size_t from = a->list.n;
    int rc = first_line ? cp_expect_parse_all(text, first_line, &a->list)
                        : cp_expect_parse_file(text, file_len, &a->list);
    if (rc < 0) {
        fprintf(stderr, "cuproof: %s: %s\n", label, cp_last_error());
        return fault;
    }
    a->sources[a->nsources++] = (source){label, from, a->list.n, fault};
    return CP_EXIT_OK;
}

static int parse_args(int argc, char **argv, check_args *a)
{
    int status = CP_EXIT_OK;
    int next_line = 1; /* --expect arguments are numbered as one text */
    const cp_help_opt *table = cp_opts_check;
    for (int i = 0; i < argc && status == CP_EXIT_OK; i++) {
        cp_arg g;
        int kind = cp_arg_next(table, argc, argv, &i, &g);
        const char *opt = g.opt, *val = g.val;
        if (kind == CP_ARG_BAD)
            return CP_EXIT_USAGE;
        if (kind == CP_ARG_OPTION && g.valued && !val)
            return cp_usage_error("%s needs a value", opt);
        if (kind == CP_ARG_OPERAND) {
            const char *arg = g.operand;
            bool rec = ends_with(arg, ".cprec") || cp_rec_is_rec_file(arg);
            bool program = !rec && (is_dir(arg) || cp_proc_is_trace_file(arg));
            if (a->ntraces > 0 && (program != a->program || rec != a->rec))
                return cp_usage_error("%s", "check takes one kind of trace at a time: "
                                            "cuproof.trace/1 files, per-process files (and "
                                            "directories of them) or cuproof.rec files");
            a->program = program;
            a->rec = rec;
            a->traces[a->ntraces++] = arg;
        } else if (strcmp(opt, "--expect") == 0) {
            status = add_expectations(a, "--expect", val, next_line, 0, CP_EXIT_USAGE);
            for (const char *p = val; *p; p++)
                next_line += *p == '\n';
            next_line++;
        } else if (strcmp(opt, "--expect-file") == 0) {
            size_t len = 0;
            char *text = cp_read_file_len(val, &len);
            if (!text) {
                fprintf(stderr, "cuproof: --expect-file: %s\n", cp_last_error());
                return CP_EXIT_INPUT;
            }
            status = add_expectations(a, val, text, 0, len, CP_EXIT_INPUT);
            free(text);
        } else if (strcmp(opt, "--range") == 0) {
            a->range = val;
            if (!a->range[0])
                return cp_usage_error("%s", "--range needs a range name");
        } else if (strcmp(opt, "--comm-pattern") == 0) {
            a->comm_pattern = val;
            if (!cp_comm_pattern_valid(a->comm_pattern))
                return cp_usage_error("--comm-pattern '%s': expected a kernel name's prefix "
                                      "(letters, digits, '_'), as in 'nccl'",
                                      a->comm_pattern);
        } else if (strcmp(opt, "--allow-dropped") == 0) {
            a->allow_dropped = true;
        } else if (strcmp(opt, "--format") == 0) {
            if (strcmp(val, "json") != 0 && strcmp(val, "text") != 0)
                return cp_usage_error("--format '%s': takes text or json", val);
            a->json = strcmp(val, "json") == 0;
        } else {
            return cp_opt_unparsed(opt);
        }
    }
    if (status != CP_EXIT_OK)
        return status;
    if (a->ntraces == 0)
        return cp_usage_error("%s", "check takes one or more traces: TRACE.json files, "
                                    "*.proc.jsonl files or directories of them");
    if (a->json && a->list.n)
        return cp_usage_error("%s", "--format json prints what the traces measured: it goes "
                                    "without an expectation");
    if (a->range && !a->program && !a->rec)
        return cp_usage_error("%s", "--range is for per-process traces; a case's trace is "
                                    "scoped by its variants");
    return CP_EXIT_OK;
}

/* The analysis options every path of check uses: the communication
 * pattern of --comm-pattern, else of an expectation file's directive
 * (`#! comm-pattern:`), else the default. */
static cp_stream_opts analysis_opts(const check_args *a)
{
    const char *p = a->comm_pattern       ? a->comm_pattern
                    : a->list.comm_pattern[0] ? a->list.comm_pattern
                                              : NULL;
    return (cp_stream_opts){.timeline = {.comm_pattern = p}};
}

/* The expectations of one source, as a list of their own. */
static cp_expect_list sub_list(const check_args *a, const source *s)
{
    return (cp_expect_list){.items = a->list.items + s->from, .n = s->to - s->from,
                            .cap = s->to - s->from};
}

/* What check's verdicts add up to, over every trace: the expectations
 * that passed, failed, or could not be decided (hosts not aligned) or
 * held on a trace that is not to be trusted (they count as neither
 * passed nor failed); and the first reason a trace was not trusted. */
typedef struct tally {
    size_t passed, failed, inconclusive;
    char why[1100];
} tally;

/* One expectation's verdict, on a trace trusted or not: a pass on an
 * untrusted trace is said as judged, not passed (the trust rule: only a
 * failure stands on it). */
static void print_result(bool ok, bool trusted, const char *prefix, const char *text,
                         const char *measured, tally *t)
{
    if (ok && !trusted) {
        printf("judged  %s%s  (%s%s), but the trace's verdict is inconclusive\n", prefix, text,
               cp_measured_label(measured), measured);
        t->inconclusive++;
        return;
    }
    printf("%s  %s%s  (%s%s)\n", ok ? "passed" : "failed", prefix, text,
           cp_measured_label(measured), measured);
    *(ok ? &t->passed : &t->failed) += 1;
}

/* The summary line, and, when a verdict is inconclusive, why, as the last
 * line of standard output (the exit status 3 said where it is read). */
static void print_tally(const tally *t)
{
    printf("%zu passed, %zu failed", t->passed, t->failed);
    if (t->inconclusive)
        printf(", %zu inconclusive", t->inconclusive);
    printf("\n");
}

static void print_inconclusive(const tally *t, int status)
{
    if (status == CP_EXIT_INCONCLUSIVE)
        printf("inconclusive: %s\n",
               t->why[0] ? t->why : "an expectation could not be decided (named above)");
}

/* The trust rule's verdict on a trace, kept in the tally when it is the
 * first not trusted. */
static void judge_trust(const cp_trust_in *in, cp_trust *t, tally *tl)
{
    cp_trust_judge(in, t);
    if (!t->trusted && !tl->why[0])
        snprintf(tl->why, sizeof tl->why, "%s", t->why);
}

static size_t device_work(const cp_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += cp_activity_is_device_work(&t->items[i]);
    return n;
}

/* The trust rule's verdict on one trace (judge_trust's), printed: its
 * reason on stderr when it is not trusted, its warning when it is.
 * Returns the exit status it gives (CP_EXIT_OK or CP_EXIT_INCONCLUSIVE). */
static int print_trust(const cp_trust *t)
{
    if (!t->trusted)
        fprintf(stderr, "cuproof: %s\n", t->why);
    else if (t->warning[0])
        printf("warning: %s\n", t->warning);
    return t->exit;
}

/* The list as a program's file reads it: a scope that is the file's one
 * variant's name ("program: ...", as a case's file reads it) is the whole
 * program, no scope. NULL when out of memory; free() it. */
static cp_expectation *as_program(const cp_expect_list *l, const char *variant)
{
    cp_expectation *items = malloc((l->n ? l->n : 1) * sizeof *items);
    for (size_t i = 0; items && i < l->n; i++) {
        items[i] = l->items[i];
        if (!items[i].scope_arg && strcmp(items[i].scope, variant) == 0)
            items[i].scope = "";
    }
    return items;
}

/* cuproof.trace/1 files: each expectation on each variant it names (every
 * variant when it names none), as the runner checks a case; a program's
 * file (cp_trace_file_is_program) with a program's scopes, as check judges its
 * per-process files. */
static int check_trace_files(const check_args *a)
{
    int status = CP_EXIT_OK, untrusted = CP_EXIT_OK;
    tally tl = {0};
    cp_trace_file *files = calloc(a->ntraces, sizeof *files);
    const char **names = NULL;
    uint64_t *dropped = calloc(a->ntraces, sizeof *dropped);
    /* Every file read; one that cannot be is named and left out, and the
     * others are still checked (the run then exits 5 whatever they say).
     * One with no device work is left out too, untrusted (3). */
    bool *bad = calloc(a->ntraces, sizeof *bad);
    cp_trust *trusts = calloc(a->ntraces, sizeof *trusts); /* each file's, once judged */
    size_t loaded = 0, nbad = 0;
    int read_status = CP_EXIT_OK;
    if (!files || !dropped || !bad || !trusts) {
        fprintf(stderr, "cuproof: out of memory\n");
        status = CP_EXIT_TOOL;
        goto out;
    }
    for (; loaded < a->ntraces; loaded++) {
        int rc = cp_trace_file_read(a->traces[loaded], &files[loaded]);
        if (rc < 0) {
            read_status = cp_exit_worse(read_status, cp_input_error(rc));
            bad[loaded] = true;
            nbad++;
        }
    }
    for (size_t f = 0; f < a->ntraces; f++) {
        const cp_trace_file *tf = &files[f];
        if (bad[f])
            continue;
        free(names);
        names = malloc((tf->nvariants ? tf->nvariants : 1) * sizeof *names);
        if (!names) {
            fprintf(stderr, "cuproof: out of memory\n");
            status = CP_EXIT_TOOL;
            goto out;
        }
        size_t work = 0;
        for (size_t v = 0; v < tf->nvariants; v++) {
            names[v] = tf->variants[v].name;
            work += device_work(&tf->variants[v].trace);
            dropped[f] += tf->variants[v].trace.dropped_records;
        }
        cp_expectation *prog = cp_trace_file_is_program(tf) ? as_program(&a->list, names[0]) : NULL;
        if (cp_trace_file_is_program(tf) && !prog) {
            fprintf(stderr, "cuproof: out of memory\n");
            status = CP_EXIT_TOOL;
            goto out;
        }
        for (size_t s = 0; s < a->nsources; s++) {
            cp_expect_list one = sub_list(a, &a->sources[s]);
            if (prog)
                one.items = prog + a->sources[s].from;
            int valid = prog ? cp_expect_validate_program(&one)
                             : cp_expect_validate(&one, names, tf->nvariants);
            if (valid < 0)
                free(prog);
            if (valid < 0) {
                fprintf(stderr, "cuproof: %s: %s (in %s)\n", a->sources[s].label,
                        cp_last_error(), a->traces[f]);
                status = a->sources[s].fault;
                goto out;
            }
        }
        free(prog);
        if (work == 0) {
            /* Nothing to judge in it: untrusted, named, left out. */
            cp_trust_in none = {.what = a->traces[f], .traced_files = SIZE_MAX};
            cp_trust t;
            judge_trust(&none, &t, &tl);
            untrusted = cp_exit_worse(untrusted, print_trust(&t));
            bad[f] = true;
        }
    }
    for (size_t f = 0; f < a->ntraces; f++) {
        const cp_trace_file *tf = &files[f];
        if (bad[f])
            continue;
        /* Judged before its verdicts, said after the summary. */
        const cp_trust *trust = &trusts[f];
        judge_trust(&(cp_trust_in){.what = a->traces[f],
                                   .traced_files = SIZE_MAX,
                                   .device_work = 1, /* counted above */
                                   .dropped = dropped[f],
                                   .allow_dropped = a->allow_dropped},
                    &trusts[f], &tl);
        bool program = cp_trace_file_is_program(tf);
        cp_expectation *prog = program ? as_program(&a->list, tf->variants[0].name) : NULL;
        if (program && !prog) {
            fprintf(stderr, "cuproof: out of memory\n");
            status = CP_EXIT_TOOL;
            goto out;
        }
        size_t np = tf->nvariants ? tf->variants[0].trace.nprocesses : 0;
        if (program)
            printf("%s: program %s, %zu process%s, recorded on %s\n", a->traces[f],
                   tf->case_name, np, np == 1 ? "" : "es",
                   tf->device[0] ? tf->device : "an unnamed device");
        else
            printf("%s: case %s, %zu variant%s, recorded on %s\n", a->traces[f], tf->case_name,
                   tf->nvariants, tf->nvariants == 1 ? "" : "s",
                   tf->device[0] ? tf->device : "an unnamed device");
        for (size_t k = 0; k < a->list.n; k++) {
            const cp_expectation *e = program ? &prog[k] : &a->list.items[k];
            /* The variant scopes a case's file, and what is evaluated is
             * the rest; a program's scopes its records, and device(N)
             * each variant's (every trace has devices). */
            bool on_device = cp_expect_on_device(e);
            cp_expectation bare = *e;
            if (!program && !on_device) {
                bare.scope = "";
                bare.scope_arg = NULL;
            }
            for (size_t v = 0; v < tf->nvariants; v++) {
                if (!program && !on_device && e->scope[0] &&
                    strcmp(e->scope, tf->variants[v].name) != 0)
                    continue;
                char measured[256], prefix[80] = "";
                bool ok = false;
                cp_stream_opts so = analysis_opts(a);
                if (cp_expect_eval_trace(&bare, &tf->variants[v].trace, &so.timeline, &ok, measured,
                                         sizeof measured) < 0) {
                    free(prog);
                    status = cp_tool_error();
                    goto out;
                }
                if ((!e->scope[0] || on_device) && !program)
                    snprintf(prefix, sizeof prefix, "%s: ", tf->variants[v].name);
                print_result(ok, trust->trusted, prefix, e->text, measured, &tl);
            }
        }
        free(prog);
    }
    print_tally(&tl);
    status = cp_exit_worse(cp_exit_of_verdicts(tl.failed, tl.inconclusive), untrusted);
    if (nbad) {
        printf("%zu of %zu trace files could not be read (named above): no verdict on them\n",
               nbad, a->ntraces);
        status = cp_exit_worse(status, read_status);
    }
    for (size_t f = 0; f < a->ntraces; f++)
        if (!bad[f])
            status = cp_exit_worse(status, print_trust(&trusts[f]));
    print_inconclusive(&tl, status);
out:
    for (size_t i = 0; i < loaded; i++)
        cp_trace_file_free(&files[i]);
    free(files);
    free(names);
    free(dropped);
    free(bad);
    free(trusts);
    return status;
}

/* The processes of a program trace: how many, which are truncated and
 * where their traces stop, what CUPTI lost. t0: the trace's first start
 * (UINT64_MAX when unknown), for how far into it a truncated process
 * stops. */
static void print_processes(const cp_trace *t, uint64_t t0)
{
    uint64_t zero = 0;
    size_t truncated = 0;
    for (size_t i = 0; i < t->nprocesses; i++) {
        truncated += !t->processes[i].ended;
        zero += t->processes[i].zero_timestamps;
    }
    printf("processes: %zu (%zu truncated), dropped records: %llu, records with zero "
           "timestamps: %llu\n",
           t->nprocesses, truncated, (unsigned long long)t->dropped_records,
           (unsigned long long)zero);
    for (size_t i = 0; i < t->nprocesses; i++) {
        const cp_process *p = &t->processes[i];
        if (p->ended)
            continue;
        char rank[32] = "";
        if (cp_process_rank(p) >= 0)
            snprintf(rank, sizeof rank, " (rank %d)", (int)cp_process_rank(p));
        /* Where its trace stops, from the trace's first record (a clock's
         * nanoseconds since the epoch say nothing to a reader); the raw
         * stamp only where there is no start to count from. */
        printf("warning: process %u%s on %s (%s) is truncated: no end record (it died or left by "
               "_exit); its trace stops ",
               p->pid, rank, p->host, p->command);
        if (t0 != UINT64_MAX && p->last_ns >= t0) {
            char at[32];
            printf("%s after the trace's first record\n",
                   cp_fmt_ms((double)(p->last_ns - t0) / 1e6, at, sizeof at));
        } else {
            printf("at %llu ns on its clock\n", (unsigned long long)p->last_ns);
        }
    }
}

/* Prints the ranks' table of a program with ranks (nothing otherwise),
 * leading the verdicts as in exec's summary. Returns 0 or CP_ENOMEM. */
static int print_ranks(const cp_ranks *r)
{
    if (!r)
        return 0;
    char *text = cp_ranks_text(r, "");
    if (!text)
        return cp_failf(CP_ENOMEM, "out of memory printing the ranks' table");
    fputs(text, stdout);
    free(text);
    return 0;
}

/* Prints the per-collective table of `m` (nothing without communication
 * kernels), after the ranks'. Returns 0 or CP_ENOMEM. */
static int print_collectives(const cp_metrics *m)
{
    if (!m->ncollective_rows)
        return 0;
    char *text = cp_collectives_text(m, "");
    if (!text)
        return cp_failf(CP_ENOMEM, "out of memory printing the collectives' table");
    fputs(text, stdout);
    free(text);
    return 0;
}

/* Each expectation's verdict, printed. Returns CP_EXIT_OK, or CP_EXIT_TOOL
 * when one could not be evaluated. */
static int print_verdicts(const check_args *a, cp_program_stream *ps, bool trusted, tally *tl)
{
    for (size_t k = 0; k < a->list.n; k++) {
        cp_program_check v;
        if (cp_program_stream_verdict(ps, &a->list, k, &v) < 0)
            return cp_tool_error();
        if (v.undecided) {
            printf("inconclusive  %s  (%s)\n", a->list.items[k].text, v.measured);
            tl->inconclusive++;
            if (!tl->why[0])
                snprintf(tl->why, sizeof tl->why, "%s: %s", a->list.items[k].text, v.measured);
            continue;
        }
        print_result(v.ok, trusted, "", a->list.items[k].text, v.measured, tl);
    }
    return CP_EXIT_OK;
}

static int validate_sources(const check_args *a)
{
    for (size_t s = 0; s < a->nsources; s++) {
        cp_expect_list one = sub_list(a, &a->sources[s]);
        if (cp_expect_validate_program(&one) < 0) {
            fprintf(stderr, "cuproof: %s: %s\n", a->sources[s].label, cp_last_error());
            return a->sources[s].fault;
        }
    }
    return CP_EXIT_OK;
}

static uint64_t work_of(const cp_expect_judge *j)
{
    const cp_metrics *m = cp_expect_judge_metrics(j);
    return (uint64_t)m->kernels + m->copies + m->memsets;
}

/* The traces of another kind in the directories given (a program's
 * trace.json that exec wrote beside its per-process files, a .cprec),
 * which a program's check does not read: named, never skipped silently. */
static void name_other_traces(const check_args *a)
{
    for (size_t i = 0; i < a->ntraces; i++) {
        if (!is_dir(a->traces[i]))
            continue;
        DIR *d = opendir(a->traces[i]);
        struct dirent *e;
        size_t n = 0;
        while (d && (e = readdir(d))) {
            /* A program's own rec files (HOST.PID.proc.cprec) are judged. */
            if ((!ends_with(e->d_name, ".trace.json") && !ends_with(e->d_name, ".cprec")) ||
                cp_proc_is_trace_file(e->d_name))
                continue;
            printf("%s%s/%s", n++ ? ", " : "not judged: ", a->traces[i], e->d_name);
        }
        if (d)
            closedir(d);
        if (n)
            printf(" (check takes one kind of trace at a time: give %s by name)\n",
                   n == 1 ? "it" : "them");
    }
}

/* Per-process files and directories of them: one program trace, judged
 * in bounded memory (cp_expect_judge): never held, read twice when a
 * scope needs it. */
static int check_program(const check_args *a)
{
    int status = validate_sources(a);
    if (status != CP_EXIT_OK)
        return status;
    name_other_traces(a);
    tally tl = {0};
    cp_stream_opts so = analysis_opts(a);
    cp_program_stream ps;
    /* The files are one program's, merged: one that cannot be read leaves
     * no program to judge (a verdict on the rest would be on another
     * program), so it is named and nothing is judged. */
    int rc = cp_program_stream_judge((const char *const *)a->traces, a->ntraces, false, &a->list,
                                     &so, &ps);
    if (rc < 0) {
        status = cp_input_error(rc);
        goto out;
    }
    cp_expect_judge *j = ps.judge;
    printf("program: %zu process%s from %zu file%s (streamed%s)\n", ps.meta.nprocesses,
           ps.meta.nprocesses == 1 ? "" : "es", ps.files, ps.files == 1 ? "" : "s",
           cp_expect_judge_second_pass(j) ? " twice, for the scopes" : "");
    if (print_ranks(ps.ranks) < 0 || print_collectives(cp_expect_judge_metrics(j)) < 0) {
        status = cp_tool_error();
        goto out;
    }
    cp_trust_in in = {.what = "the program's trace",
                      .traced_files = ps.files,
                      .processes = &ps.meta,
                      .device_work = work_of(j),
                      .dropped = ps.meta.dropped_records,
                      .allow_dropped = a->allow_dropped,
                      .ranks = ps.ranks};
    cp_trust trust;
    judge_trust(&in, &trust, &tl);
    if (in.device_work == 0) {
        print_processes(&ps.meta, cp_expect_judge_first(j));
        status = print_trust(&trust);
        print_inconclusive(&tl, status);
        goto out;
    }
    status = print_verdicts(a, &ps, trust.trusted, &tl);
    if (status == CP_EXIT_TOOL)
        goto out;
    print_tally(&tl);
    print_processes(&ps.meta, cp_expect_judge_first(j));
    /* An expectation not judged (hosts not aligned, collectives not
     * matched) is no pass (cp_exit_of_verdicts); an untrusted trace is 3
     * by the trust rule. */
    status = cp_exit_worse(cp_exit_of_verdicts(tl.failed, tl.inconclusive), print_trust(&trust));
    print_inconclusive(&tl, status);
out:
    cp_program_stream_free(&ps);
    return status;
}

/* cuproof.rec/1 files, each a trace of its own, judged in bounded memory
 * (cp_expect_judge) whatever the file's size: read once, or twice when a
 * scope needs it. A file cut short is untrusted, as lost records are
 * (the trust rule; --allow-dropped accepts both), since its metrics miss
 * what was not written. */
static int check_rec(const check_args *a)
{
    int status = validate_sources(a);
    if (status != CP_EXIT_OK)
        return status;
    tally tl = {0};
    size_t nbad = 0;
    /* Each file is a trace of its own: one that cannot be read is named
     * and the others are still judged (then exit 5 whatever they say). */
    for (size_t f = 0; f < a->ntraces && status != CP_EXIT_TOOL; f++) {
        const char *path = a->traces[f];
        cp_stream_opts so = analysis_opts(a);
        cp_program_stream ps;
        int rc = cp_program_stream_judge(&path, 1, true, &a->list, &so, &ps);
        if (rc < 0) {
            status = cp_exit_worse(status, cp_input_error(rc));
            nbad++;
            cp_program_stream_free(&ps);
            continue;
        }
        cp_expect_judge *j = ps.judge;
        cp_trust_in in = {.what = path,
                          .traced_files = SIZE_MAX,
                          .processes = &ps.meta,
                          .dropped = ps.meta.dropped_records,
                          .cut_short = ps.truncated,
                          .cut_why = ps.why,
                          .allow_dropped = a->allow_dropped,
                          .ranks = ps.ranks};
        const cp_metrics *m = cp_expect_judge_metrics(j);
        printf("%s: %u kernels, %u copies, %u memsets, %zu lanes (streamed%s)\n", path,
               m->kernels, m->copies, m->memsets, m->nlanes,
               cp_expect_judge_second_pass(j) ? " twice, for the scopes" : "");
        in.device_work = work_of(j);
        cp_trust trust;
        judge_trust(&in, &trust, &tl);
        if (print_ranks(ps.ranks) < 0 || print_collectives(m) < 0)
            status = cp_tool_error();
        else if (in.device_work == 0)
            status = cp_exit_worse(status, print_trust(&trust));
        else
            status = cp_exit_worse(status, print_verdicts(a, &ps, trust.trusted, &tl));
        if (status != CP_EXIT_TOOL) {
            print_processes(&ps.meta, cp_expect_judge_first(j));
            status = cp_exit_worse(status, print_trust(&trust));
        }
        cp_program_stream_free(&ps);
    }
    print_tally(&tl);
    if (nbad)
        printf("%zu of %zu trace files could not be read (named above): no verdict on them\n",
               nbad, a->ntraces);
    status = cp_exit_worse(status, cp_exit_of_verdicts(tl.failed, tl.inconclusive));
    print_inconclusive(&tl, status);
    return status;
}

/* No expectation: what each trace measured, scope by scope, printed as
 * text or JSON (internal/measure.h); exit 0, or the worst input error of
 * a trace that could not be read (each named, the others still
 * measured), or a tool error. A program's files are one trace; a case's
 * and a rec file each its own. */
static int measure(const check_args *a)
{
    int status = CP_EXIT_OK;
    size_t ntraces = a->program ? 1 : a->ntraces;
    bool first = true;
    cp_stream_opts so = analysis_opts(a);
    for (size_t f = 0; f < ntraces; f++) {
        cp_measured m;
        const char *what = a->program ? (a->ntraces == 1 ? a->traces[0] : "the program's files")
                                      : a->traces[f];
        int rc = a->program ? cp_measure_program(a->traces, a->ntraces, false, &so, &m)
                 : a->rec   ? cp_measure_program(&a->traces[f], 1, true, &so, &m)
                            : cp_measure_trace_file(a->traces[f], &so.timeline, &m);
        if (rc < 0) {
            fprintf(stderr, "cuproof: %s: %s\n", what, cp_last_error());
            status = cp_exit_worse(status, rc == CP_ENOMEM ? CP_EXIT_TOOL : cp_input_error(rc));
        } else if (a->json) {
            cp_measured_print_json(stdout, &m, what, first);
            first = false;
        } else {
            cp_measured_print_text(stdout, &m, what);
        }
        cp_measured_free(&m);
    }
    if (a->json) {
        if (first)
            fputs("{\"traces\":[", stdout);
        cp_measured_print_json_end(stdout);
    }
    return status;
}

/* cuproof check TRACE... [--expect EXPR]... [--expect-file F] [--range NAME]
 * [--allow-dropped]: exit 0 when every expectation holds, 1 when one
 * fails, 2 for bad usage or a malformed or unknown --expect, 3 when a
 * trace holds no device work or lost records, or an expectation spans
 * hosts that could not be aligned, 5 when a trace or an expectation file
 * cannot be read or has errors (each named), 6 when cuproof itself could
 * not finish (out of memory). */
int cp_cmd_check(int argc, char **argv)
{
    check_args a = {0};
    int status = CP_EXIT_OK;
    /* Each argument is at most one trace or one source. */
    a.traces = calloc((size_t)argc + 1, sizeof *a.traces);
    a.sources = calloc((size_t)argc + 1, sizeof *a.sources);
    if (!a.traces || !a.sources) {
        fprintf(stderr, "cuproof: out of memory\n");
        status = CP_EXIT_TOOL;
        goto out;
    }
    status = parse_args(argc, argv, &a);
    if (status == CP_EXIT_OK && cp_expect_scope_range(&a.list, a.range) < 0)
        status = cp_tool_error(); /* out of memory: the range was checked */
    if (status == CP_EXIT_OK)
        status = a.list.n == 0 ? measure(&a)
                 : a.rec      ? check_rec(&a)
                 : a.program  ? check_program(&a)
                              : check_trace_files(&a);
out:
    cp_expect_list_free(&a.list);
    free(a.traces);
    free(a.sources);
    return status;
}
