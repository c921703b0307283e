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
enum { EXIT_TOOL = 3 };

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

/* Whether every expectation is unscoped, so that streamed metrics answer them
 * all (a scope needs the records). */
static bool all_unscoped(const check_args *a)
{
    for (size_t i = 0; i < a->list.n; i++)
        if (a->list.items[i].scope[0])
            return false;
    return true;
}

/* The processes of a program trace: how many, which are truncated and
 * where their traces stop, what CUPTI lost. */
static uint64_t first_start(const cp_trace *t)
{
    uint64_t t0 = UINT64_MAX;
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].start < t0)
            t0 = t->items[i].start;
    return t0;
}

/* t0: the trace's first start (UINT64_MAX when unknown), for how far into
 * it a truncated process stops. */
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

/* Streamed records into the analysis, and the first start. */
typedef struct stream_feed {
    cp_stream *s;
    uint64_t first;
} stream_feed;

static int to_stream(void *ctx, const cp_activity *a)
{
    stream_feed *x = ctx;
    if (a->start < x->first)
        x->first = a->start;
    return cp_stream_add(x->s, a);
}

/* Per-process files and directories of them: one program trace. When no
 * expectation has a scope, the records are streamed into the analysis and
 * never held, so a program of any length is checked in bounded memory;
 * a scope needs them all. */
static int check_program(const check_args *a)
{
    int status = CP_EXIT_OK;
    size_t passed = 0, failed = 0, files = 0;
    cp_trace t;
    cp_trace_init(&t);
    cp_metrics m;
    memset(&m, 0, sizeof m);
    stream_feed x = {.first = UINT64_MAX};
    bool stream = all_unscoped(a);
    if (stream && cp_stream_new(&x.s, NULL) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        return EXIT_TOOL;
    }
    for (size_t s = 0; s < a->nsources; s++) {
        cp_expect_list one = sub_list(a, &a->sources[s]);
        if (cp_expect_validate_program(&one) < 0) {
            fprintf(stderr, "cuproof: %s: %s\n", a->sources[s].label, cp_last_error());
            return CP_EXIT_USAGE;
        }
    }
    for (size_t i = 0; i < a->ntraces; i++) {
        const char *path = a->traces[i];
        if (is_dir(path)) {
            size_t n = 0;
            if ((stream ? cp_proc_stream_dir(path, &t, &n, to_stream, &x)
                        : cp_proc_read_dir(path, &t, &n)) < 0) {
                fprintf(stderr, "cuproof: %s\n", cp_last_error());
                status = EXIT_TOOL;
                goto out;
            }
            if (n == 0) {
                fprintf(stderr, "cuproof: %s holds no *.proc.jsonl file\n", path);
                status = EXIT_TOOL;
                goto out;
            }
            files += n;
        } else if ((stream ? cp_proc_stream(path, &t, to_stream, &x) : cp_proc_read(path, &t)) <
                   0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            status = EXIT_TOOL;
            goto out;
        } else {
            files++;
        }
    }
    if (stream && cp_stream_finish(x.s, &m) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        status = EXIT_TOOL;
        goto out;
    }
    uint64_t t0 = stream ? x.first : first_start(&t);
    printf("program: %zu processes from %zu files%s\n", t.nprocesses, files,
           stream ? " (streamed)" : "");
    if (stream ? m.kernels + m.copies + m.memsets == 0 : device_work(&t) == 0) {
        size_t truncated = 0;
        for (size_t i = 0; i < t.nprocesses; i++)
            truncated += !t.processes[i].ended;
        print_processes(&t, t0);
        fprintf(stderr, "cuproof: no kernel, copy or memset in the program's trace%s\n",
                truncated ? " (a truncated process may have lost its work: see the warnings)"
                          : "");
        status = EXIT_TOOL;
        goto out;
    }
    for (size_t k = 0; k < a->list.n; k++) {
        const cp_expectation *e = &a->list.items[k];
        char measured[256];
        bool ok = false;
        if (stream) {
            ok = cp_expect_eval(e, &m, measured, sizeof measured);
        } else if (cp_expect_eval_trace(e, &t, NULL, &ok, measured, sizeof measured) < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            status = EXIT_TOOL;
            goto out;
        }
        print_result(ok, "", e->text, measured, &passed, &failed);
    }
    printf("%zu passed, %zu failed\n", passed, failed);
    print_processes(&t, t0);
    status = failed ? CP_EXIT_FAILED : CP_EXIT_OK;
    int d = check_dropped(a, t.dropped_records);
    if (d != CP_EXIT_OK)
        status = d;
out:
    cp_stream_free(x.s);
    cp_metrics_free(&m);
    cp_trace_free(&t);
    return status;
}

/* cuproof.rec/1 files, each a trace of its own. Unscoped expectations are
 * answered by the streaming analysis in bounded memory, whatever the
 * file's size; scoped ones (range, process, device) need the records, so
 * the file is read whole. A file cut short is a tool error, as lost
 * records are (--allow-dropped accepts both), since its metrics miss what
 * was not written. */
static int check_rec(const check_args *a)
{
    int status = CP_EXIT_OK;
    size_t passed = 0, failed = 0;
    for (size_t s = 0; s < a->nsources; s++) {
        cp_expect_list one = sub_list(a, &a->sources[s]);
        if (cp_expect_validate_program(&one) < 0) {
            fprintf(stderr, "cuproof: %s: %s\n", a->sources[s].label, cp_last_error());
            return CP_EXIT_USAGE;
        }
    }
    bool streamed = all_unscoped(a);
    cp_stream_opts opts = {0};
    for (size_t f = 0; f < a->ntraces && status != EXIT_TOOL; f++) {
        const char *path = a->traces[f];
        cp_trace t;
        cp_trace_init(&t);
        cp_metrics m;
        memset(&m, 0, sizeof m);
        bool truncated = false;
        char why[600] = "";
        int rc = streamed ? cp_rec_analyse(path, &opts, &m, &t, &truncated, why, sizeof why)
                          : cp_rec_read_trace(path, &t, &truncated);
        if (rc < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            status = EXIT_TOOL;
        } else if (!streamed && (rc = cp_timeline_analyse(&t, &opts.timeline, &m)) < 0) {
            fprintf(stderr, "cuproof: out of memory analysing %s\n", path);
            status = EXIT_TOOL;
        }
        if (status == EXIT_TOOL) {
            cp_trace_free(&t);
            break;
        }
        if (!streamed && truncated)
            snprintf(why, sizeof why, "%s was cut short", path);
        printf("%s: %u kernels, %u copies, %u memsets, %zu lanes (%s)\n", path, m.kernels,
               m.copies, m.memsets, m.nlanes, streamed ? "streamed" : "read whole for scopes");
        if (m.kernels + m.copies + m.memsets == 0) {
            fprintf(stderr, "cuproof: %s: no kernel, copy or memset in the trace%s\n", path,
                    truncated ? " (it was cut short)" : "");
            status = EXIT_TOOL;
        }
        for (size_t k = 0; k < a->list.n && status != EXIT_TOOL; k++) {
            const cp_expectation *e = &a->list.items[k];
            char measured[256];
            bool ok = false;
            if (streamed) {
                ok = cp_expect_eval(e, &m, measured, sizeof measured);
            } else if (cp_expect_eval_trace(e, &t, &opts.timeline, &ok, measured,
                                            sizeof measured) < 0) {
                fprintf(stderr, "cuproof: %s\n", cp_last_error());
                status = EXIT_TOOL;
                break;
            }
            print_result(ok, "", e->text, measured, &passed, &failed);
        }
        if (status != EXIT_TOOL) {
            print_processes(&t, first_start(&t));
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
        cp_metrics_free(&m);
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
