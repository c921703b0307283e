#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/expect.h>
#include <cuproof/proc.h>
#include <cuproof/rec.h>
#include <cuproof/report.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A trace that cannot be trusted or read is neither a failed expectation
 * nor bad usage. */
enum { EXIT_TOOL = CP_EXIT_INCONCLUSIVE };

/* Where a run of the list's expectations came from, for the messages of
 * validation, which happens after all are parsed. */
typedef struct source {
    const char *label; /* "--expect" or the file's path */
    size_t from, to;   /* its expectations in the list */
} source;

typedef struct check_args {
    const char **traces;
    size_t ntraces;
    source *sources;
    size_t nsources;
    cp_expect_list list;
    const char *range;
    bool allow_dropped;
    bool program; /* per-process files rather than cuproof.trace/1 files */
    bool rec;     /* cuproof.rec/1 files, one trace each */
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

/* Parses one --expect argument or --expect-file text into the list. */
static int add_expectations(check_args *a, const char *label, const char *text, int first_line)
{
    size_t from = a->list.n;
    if (cp_expect_parse(text, first_line, &a->list) < 0) {
        fprintf(stderr, "cuproof: %s: %s\n", label, cp_last_error());
        return CP_EXIT_USAGE;
    }
    a->sources[a->nsources++] = (source){label, from, a->list.n};
    return CP_EXIT_OK;
}

static int parse_args(int argc, char **argv, check_args *a)
{
    int status = CP_EXIT_OK;
    int next_line = 1; /* --expect arguments are numbered as one text */
    for (int i = 0; i < argc && status == CP_EXIT_OK; i++) {
        const char *arg = argv[i];
        bool takes_value = strcmp(arg, "--expect") == 0 || strcmp(arg, "--expect-file") == 0 ||
                           strcmp(arg, "--range") == 0;
        if (takes_value && i + 1 >= argc)
            return cp_usage_error("%s needs a value", arg);
        if (strcmp(arg, "--expect") == 0) {
            const char *text = argv[++i];
            status = add_expectations(a, "--expect", text, next_line);
            for (const char *p = text; *p; p++)
                next_line += *p == '\n';
            next_line++;
        } else if (strcmp(arg, "--expect-file") == 0) {
            const char *path = argv[++i];
            char *text = cp_read_file(path);
            if (!text)
                return cp_usage_error("--expect-file: %s", cp_last_error());
            status = add_expectations(a, path, text, 1);
            free(text);
        } else if (strcmp(arg, "--range") == 0) {
            a->range = argv[++i];
            if (!a->range[0])
                return cp_usage_error("%s", "--range needs a range name");
        } else if (strcmp(arg, "--allow-dropped") == 0) {
            a->allow_dropped = true;
        } else if (arg[0] == '-' && arg[1] == '-') {
            return cp_usage_error("unknown option '%s'", arg);
        } else {
            bool rec = ends_with(arg, ".cprec") || cp_rec_is_rec_file(arg);
            bool program = !rec && (is_dir(arg) || cp_proc_is_trace_file(arg));
            if (a->ntraces > 0 && (program != a->program || rec != a->rec))
                return cp_usage_error("%s", "check takes one kind of trace at a time: "
                                            "cuproof.trace/1 files, per-process files (and "
                                            "directories of them) or cuproof.rec files");
            a->program = program;
            a->rec = rec;
            a->traces[a->ntraces++] = arg;
        }
    }
    if (status != CP_EXIT_OK)
        return status;
    if (a->ntraces == 0)
        return cp_usage_error("%s", "check takes one or more traces: TRACE.json files, "
                                    "*.proc.jsonl files or directories of them");
    if (a->list.n == 0)
        return cp_usage_error("%s", "check needs an expectation (--expect or --expect-file)");
    if (a->range && !a->program && !a->rec)
        return cp_usage_error("%s", "--range is for per-process traces; a case's trace is "
                                    "scoped by its variants");
    return CP_EXIT_OK;
}

/* --range NAME: every unscoped expectation is checked inside range(NAME)
 * and printed so. */
static int apply_range(check_args *a)
{
    for (size_t i = 0; i < a->list.n; i++) {
        cp_expectation *e = &a->list.items[i];
        if (e->scope[0] || e->scope_arg)
            continue;
        size_t len = strlen(a->range) + strlen(e->text) + 10;
        char *scope = strdup("range"), *arg = strdup(a->range), *text = malloc(len);
        if (!scope || !arg || !text) {
            free(scope);
            free(arg);
            free(text);
            fprintf(stderr, "cuproof: out of memory\n");
            return EXIT_TOOL;
        }
        snprintf(text, len, "range(%s): %s", a->range, e->text);
        free(e->scope);
        free(e->text);
        e->scope = scope;
        e->scope_arg = arg;
        e->text = text;
    }
    return CP_EXIT_OK;
}

/* The expectations of one source, as a list of their own. */
static cp_expect_list sub_list(const check_args *a, const source *s)
{
    return (cp_expect_list){.items = a->list.items + s->from, .n = s->to - s->from,
                            .cap = s->to - s->from};
}

static void print_result(bool ok, const char *prefix, const char *text, const char *measured,
                         size_t *passed, size_t *failed)
{
    printf("%s  %s%s  (measured %s)\n", ok ? "passed" : "failed", prefix, text, measured);
    *(ok ? passed : failed) += 1;
}

static size_t device_work(const cp_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += cp_activity_is_device_work(&t->items[i]);
    return n;
}

/* Exit status of the dropped-records rule: records CUPTI dropped make the
 * metrics an undercount, which no expectation should pass on. */
static int check_dropped(const check_args *a, uint64_t dropped)
{
    if (dropped == 0)
        return CP_EXIT_OK;
    if (a->allow_dropped) {
        printf("warning: CUPTI dropped %llu records; the metrics may miss work "
               "(--allow-dropped)\n", (unsigned long long)dropped);
        return CP_EXIT_OK;
    }
    fprintf(stderr, "cuproof: CUPTI dropped %llu records: the metrics may miss work, so the "
            "results cannot be trusted (--allow-dropped accepts them)\n",
            (unsigned long long)dropped);
    return EXIT_TOOL;
}

/* cuproof.trace/1 files: each expectation on each variant it names (every
 * variant when it names none), as the runner checks a case. */
static int check_trace_files(const check_args *a)
{
    int status = CP_EXIT_OK;
    size_t passed = 0, failed = 0;
    uint64_t dropped = 0;
    cp_trace_file *files = calloc(a->ntraces, sizeof *files);
    const char **names = NULL;
    size_t loaded = 0;
    if (!files) {
        fprintf(stderr, "cuproof: out of memory\n");
        return EXIT_TOOL;
    }
    for (; loaded < a->ntraces; loaded++)
        if (cp_trace_file_read(a->traces[loaded], &files[loaded]) < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            status = EXIT_TOOL;
            goto out;
        }
    for (size_t f = 0; f < a->ntraces; f++) {
        const cp_trace_file *tf = &files[f];
        free(names);
        names = malloc((tf->nvariants ? tf->nvariants : 1) * sizeof *names);
        if (!names) {
            fprintf(stderr, "cuproof: out of memory\n");
            status = EXIT_TOOL;
            goto out;
        }
        size_t work = 0;
        for (size_t v = 0; v < tf->nvariants; v++) {
            names[v] = tf->variants[v].name;
            work += device_work(&tf->variants[v].trace);
            dropped += tf->variants[v].trace.dropped_records;
        }
        for (size_t s = 0; s < a->nsources; s++) {
            cp_expect_list one = sub_list(a, &a->sources[s]);
            if (cp_expect_validate(&one, names, tf->nvariants) < 0) {
                fprintf(stderr, "cuproof: %s: %s (in %s)\n", a->sources[s].label,
                        cp_last_error(), a->traces[f]);
                status = CP_EXIT_USAGE;
                goto out;
            }
        }
        if (work == 0) {
            fprintf(stderr, "cuproof: %s: no kernel, copy or memset in any variant\n",
                    a->traces[f]);
            status = EXIT_TOOL;
            goto out;
        }
    }
    for (size_t f = 0; f < a->ntraces; f++) {
        const cp_trace_file *tf = &files[f];
        printf("%s: case %s, %zu variants, recorded on %s\n", a->traces[f], tf->case_name,
               tf->nvariants, tf->device[0] ? tf->device : "an unnamed device");
        for (size_t k = 0; k < a->list.n; k++) {
            const cp_expectation *e = &a->list.items[k];
            /* The variant scopes the file; what is evaluated is the rest. */
            cp_expectation bare = *e;
            bare.scope = "";
            bare.scope_arg = NULL;
            for (size_t v = 0; v < tf->nvariants; v++) {
                if (e->scope[0] && strcmp(e->scope, tf->variants[v].name) != 0)
                    continue;
                char measured[256], prefix[80] = "";
                bool ok = false;
                if (cp_expect_eval_trace(&bare, &tf->variants[v].trace, NULL, &ok, measured,
                                         sizeof measured) < 0) {
                    fprintf(stderr, "cuproof: %s\n", cp_last_error());
                    status = EXIT_TOOL;
                    goto out;
                }
                if (!e->scope[0])
                    snprintf(prefix, sizeof prefix, "%s: ", tf->variants[v].name);
                print_result(ok, prefix, e->text, measured, &passed, &failed);
            }
        }
    }
    printf("%zu passed, %zu failed\n", passed, failed);
    status = failed ? CP_EXIT_FAILED : CP_EXIT_OK;
    int d = check_dropped(a, dropped);
    if (d != CP_EXIT_OK)
        status = d;
out:
    for (size_t i = 0; i < loaded; i++)
        cp_trace_file_free(&files[i]);
    free(files);
    free(names);
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
        printf("warning: process %u on %s (%s) is truncated: no end record (it died or left by "
               "_exit); its trace stops at %llu ns",
               p->pid, p->host, p->command, (unsigned long long)p->last_ns);
        if (t0 != UINT64_MAX && p->last_ns >= t0)
            printf(" (+%.3f ms)", (double)(p->last_ns - t0) / 1e6);
        printf("\n");
    }
}

/*
 * The expectations of a traced program judged in bounded memory, whatever
 * its length: the records go once through the streaming analysis (every
 * unscoped expectation's answer) and through what each scope must learn;
 * when an expectation has a scope, they come a second time for the
 * scopes to hand their part to their own analyses (cp_expect_stream).
 */
typedef struct judging {
    cp_stream *s;
    uint64_t first; /* the first start, for how far a truncated process got */
    cp_expect_stream **x;
    size_t nx;
    bool scoped, second;
    cp_metrics m;
} judging;

static int judging_new(judging *j, const cp_expect_list *list)
{
    memset(j, 0, sizeof *j);
    j->first = UINT64_MAX;
    int rc = cp_stream_new(&j->s, NULL);
    if (rc == 0 && list->n && !(j->x = calloc(list->n, sizeof *j->x)))
        rc = cp_failf(CP_ENOMEM, "out of memory for %zu expectations", list->n);
    for (; rc == 0 && j->nx < list->n; j->nx++) {
        rc = cp_expect_stream_new(&j->x[j->nx], &list->items[j->nx], NULL);
        j->scoped = j->scoped || list->items[j->nx].scope[0];
    }
    return rc;
}

static int judge_record(void *ctx, const cp_activity *a)
{
    judging *j = ctx;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < j->nx; i++)
        rc = j->second ? cp_expect_stream_add(j->x[i], a) : cp_expect_stream_learn(j->x[i], a);
    if (rc < 0 || j->second)
        return rc;
    if (a->start < j->first)
        j->first = a->start;
    return cp_stream_add(j->s, a);
}

/* After the first pass: the metrics, and the scopes made ready on the
 * processes `meta` holds. */
static int judging_between(judging *j, const cp_trace *meta)
{
    if (meta->has_legacy_stream)
        cp_stream_set_legacy(j->s, meta->legacy_device, meta->legacy_context,
                             meta->legacy_stream);
    int rc = cp_stream_finish(j->s, &j->m);
    for (size_t i = 0; rc == 0 && i < j->nx; i++)
        rc = cp_expect_stream_ready(j->x[i], meta);
    j->second = true;
    return rc;
}

static void judging_free(judging *j)
{
    cp_stream_free(j->s);
    for (size_t i = 0; i < j->nx; i++)
        cp_expect_stream_free(j->x[i]);
    free(j->x);
    cp_metrics_free(&j->m);
    memset(j, 0, sizeof *j);
}

/* Every path of a program trace (per-process files and directories of
 * them) through `emit`; `t` gets the processes. */
static int read_program(const check_args *a, cp_trace *t, size_t *files, judging *j)
{
    *files = 0;
    for (size_t i = 0; i < a->ntraces; i++) {
        const char *path = a->traces[i];
        if (is_dir(path)) {
            size_t n = 0;
            int rc = cp_proc_stream_dir(path, t, &n, judge_record, j);
            if (rc < 0)
                return rc;
            if (n == 0)
                return cp_failf(CP_ENOENT, "%s holds no *.proc.jsonl file (nor *.proc.cprec)",
                                path);
            *files += n;
        } else {
            int rc = cp_proc_stream(path, t, judge_record, j);
            if (rc < 0)
                return rc;
            (*files)++;
        }
    }
    return 0;
}

/* Each expectation's verdict, printed. */
static void print_verdicts(const check_args *a, judging *j, size_t *passed, size_t *failed,
                           int *status)
{
    for (size_t k = 0; k < a->list.n && *status != EXIT_TOOL; k++) {
        char measured[256] = "";
        bool ok = false;
        if (cp_expect_stream_finish(j->x[k], &j->m, &ok, measured, sizeof measured) < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            *status = EXIT_TOOL;
            return;
        }
        print_result(ok, "", a->list.items[k].text, measured, passed, failed);
    }
}

static int validate_sources(const check_args *a)
{
    for (size_t s = 0; s < a->nsources; s++) {
        cp_expect_list one = sub_list(a, &a->sources[s]);
        if (cp_expect_validate_program(&one) < 0) {
            fprintf(stderr, "cuproof: %s: %s\n", a->sources[s].label, cp_last_error());
            return CP_EXIT_USAGE;
        }
    }
    return CP_EXIT_OK;
}

/* Per-process files and directories of them: one program trace, judged
 * in bounded memory (judging): never held, read twice when a scope needs
 * it. */
static int check_program(const check_args *a)
{
    int status = validate_sources(a);
    if (status != CP_EXIT_OK)
        return status;
    size_t passed = 0, failed = 0, files = 0;
    cp_trace t, again;
    cp_trace_init(&t);
    cp_trace_init(&again);
    judging j;
    if (judging_new(&j, &a->list) < 0 || read_program(a, &t, &files, &j) < 0 ||
        judging_between(&j, &t) < 0 || (j.scoped && read_program(a, &again, &files, &j) < 0)) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        status = EXIT_TOOL;
        goto out;
    }
    printf("program: %zu processes from %zu files (streamed%s)\n", t.nprocesses, files,
           j.scoped ? " twice, for the scopes" : "");
    if (j.m.kernels + j.m.copies + j.m.memsets == 0) {
        size_t truncated = 0;
        for (size_t i = 0; i < t.nprocesses; i++)
            truncated += !t.processes[i].ended;
        print_processes(&t, j.first);
        fprintf(stderr, "cuproof: no kernel, copy or memset in the program's trace%s\n",
                truncated ? " (a truncated process may have lost its work: see the warnings)"
                          : "");
        status = EXIT_TOOL;
        goto out;
    }
    print_verdicts(a, &j, &passed, &failed, &status);
    if (status == EXIT_TOOL)
        goto out;
    printf("%zu passed, %zu failed\n", passed, failed);
    print_processes(&t, j.first);
    status = failed ? CP_EXIT_FAILED : CP_EXIT_OK;
    int d = check_dropped(a, t.dropped_records);
    if (d != CP_EXIT_OK)
        status = d;
out:
    judging_free(&j);
    cp_trace_free(&t);
    cp_trace_free(&again);
    return status;
}

/* cuproof.rec/1 files, each a trace of its own, judged in bounded memory
 * (judging) whatever the file's size: read once, or twice when a scope
 * needs it. A file cut short is a tool error, as lost records are
 * (--allow-dropped accepts both), since its metrics miss what was not
 * written. */
static int check_rec(const check_args *a)
{
    int status = validate_sources(a);
    if (status != CP_EXIT_OK)
        return status;
    size_t passed = 0, failed = 0;
    for (size_t f = 0; f < a->ntraces && status != EXIT_TOOL; f++) {
        const char *path = a->traces[f];
        cp_trace t;
        cp_trace_init(&t);
        judging j;
        bool truncated = false;
        char why[600] = "";
        if (judging_new(&j, &a->list) < 0 ||
            cp_rec_stream(path, &t, judge_record, &j, &truncated, why, sizeof why) < 0 ||
            judging_between(&j, &t) < 0 ||
            (j.scoped && cp_rec_stream(path, NULL, judge_record, &j, NULL, NULL, 0) < 0)) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            status = EXIT_TOOL;
        }
        if (status != EXIT_TOOL) {
            printf("%s: %u kernels, %u copies, %u memsets, %zu lanes (streamed%s)\n", path,
                   j.m.kernels, j.m.copies, j.m.memsets, j.m.nlanes,
                   j.scoped ? " twice, for the scopes" : "");
            if (j.m.kernels + j.m.copies + j.m.memsets == 0) {
                fprintf(stderr, "cuproof: %s: no kernel, copy or memset in the trace%s\n", path,
                        truncated ? " (it was cut short)" : "");
                status = EXIT_TOOL;
            }
            print_verdicts(a, &j, &passed, &failed, &status);
        }
        if (status != EXIT_TOOL) {
            print_processes(&t, j.first);
            int d = check_dropped(a, t.dropped_records);
            if (truncated && a->allow_dropped) {
                printf("warning: %s; the metrics may miss work (--allow-dropped)\n", why);
            } else if (truncated) {
                fprintf(stderr, "cuproof: %s: the metrics may miss work, so the results cannot "
                                "be trusted (--allow-dropped accepts it)\n", why);
                d = EXIT_TOOL;
            }
            if (d != CP_EXIT_OK)
                status = d;
        }
        judging_free(&j);
        cp_trace_free(&t);
    }
    printf("%zu passed, %zu failed\n", passed, failed);
    if (status == CP_EXIT_OK && failed)
        status = CP_EXIT_FAILED;
    return status;
}

/* cuproof check TRACE... [--expect EXPR]... [--expect-file F] [--range NAME]
 * [--allow-dropped]: exit 0 when every expectation holds, 1 when one
 * fails, 2 for bad usage or a malformed or unknown expectation, 3 when a
 * trace cannot be read, holds no device work or lost records. */
int cp_cmd_check(int argc, char **argv)
{
    check_args a = {0};
    int status = CP_EXIT_OK;
    /* Each argument is at most one trace or one source. */
    a.traces = calloc((size_t)argc + 1, sizeof *a.traces);
    a.sources = calloc((size_t)argc + 1, sizeof *a.sources);
    if (!a.traces || !a.sources) {
        fprintf(stderr, "cuproof: out of memory\n");
        status = EXIT_TOOL;
        goto out;
    }
    status = parse_args(argc, argv, &a);
    if (status == CP_EXIT_OK && a.range)
        status = apply_range(&a);
    if (status == CP_EXIT_OK)
        status = a.rec ? check_rec(&a) : a.program ? check_program(&a) : check_trace_files(&a);
out:
    cp_expect_list_free(&a.list);
    free(a.traces);
    free(a.sources);
    return status;
}
