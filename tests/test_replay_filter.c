/*
 * The API filter of `cuproof exec` (issue 30) replayed on every trace that
 * exec recorded on a GPU before the filter existed (tests/fixtures/exec-*:
 * every call recorded): each trace with the calls the filter drops taken
 * out must give the same metrics, lanes, graphs, per-device figures,
 * kernel breakdown, findings with their words, ranks table, and verdicts
 * of expectations in every scope the trace offers (the whole program,
 * each range, process, device and rank, every rank, a rank spread) as the
 * trace itself. The fixtures are found by name, so that one recorded
 * later is held to the filter too. Two controls show that the comparison
 * can fail: dropping the copy calls (cudaMemcpyAsync) changes
 * cuda_memcpy_async's evidence, and dropping the event waits
 * (cudaStreamWaitEvent) raises serialized_streams on streams the program
 * ordered.
 */
#define _GNU_SOURCE
#include "analysis/api_calls.h"

#include <cuproof/error.h>
#include <cuproof/expect.h>
#include <cuproof/metrics.h>
#include <cuproof/ranks.h>
#include <cuproof/internal/proc.h>
#include <cuproof/internal/rec.h>
#include <cuproof/internal/report.h>
#include <cuproof/internal/tracefile.h>

#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The H100's and H200's concurrent-kernel limit (sm_90). */
static const cp_timeline_opts h100 = {.max_concurrent_kernels = 128};

typedef bool (*keep_fn)(const cp_activity *a);

/* What exec records by default. */
static bool filtered(const cp_activity *a)
{
    return a->kind != CP_ACT_RUNTIME || cp_api_kept(a->name);
}

/* The base name of an API record, "" for other records. */
static const char *base_of(const cp_activity *a, char *buf, size_t size)
{
    buf[0] = '\0';
    if (a->kind == CP_ACT_RUNTIME)
        cp_api_base_name(a->name, buf, size);
    return buf;
}

/* The controls: the filter, and one class of calls an analysis reads. */
static bool filtered_without_copy_calls(const cp_activity *a)
{
    char base[160];
    return filtered(a) && strcmp(base_of(a, base, sizeof base), "cudaMemcpyAsync") != 0;
}

static bool filtered_without_event_waits(const cp_activity *a)
{
    char base[160];
    return filtered(a) && strcmp(base_of(a, base, sizeof base), "cudaStreamWaitEvent") != 0;
}

/* `in` with only the records `keep` keeps, and everything else of it:
 * the whole trace as its scope "" copies it, processes and counts with
 * it, then the records left out. */
static void copy_kept(const cp_trace *in, keep_fn keep, cp_trace *out, size_t *dropped)
{
    char why[160];
    cr_assert_eq(cp_trace_scope(in, "", NULL, out, why, sizeof why), 0, "%s", why);
    cr_assert_eq(out->n, in->n, "the whole trace's copy left records out");
    size_t n = 0;
    for (size_t i = 0; i < out->n; i++)
        if (keep(&out->items[i]))
            out->items[n++] = out->items[i];
    *dropped += out->n - n;
    out->n = n;
}

/* ---- What a trace gives, as text ---- */

static void put_metrics(FILE *f, const cp_metrics *m)
{
    size_t n = 0, nd = 0;
    const cp_metric_def *defs = cp_metric_defs(&n), *dd = cp_device_metric_defs(&nd);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s=%.17g\n", defs[i].name, cp_metric_value(m, &defs[i]));
    fprintf(f, "bound=%s\n", m->bound);
    for (size_t i = 0; i < m->nlanes; i++) {
        const cp_lane *l = &m->lanes[i];
        fprintf(f, "lane %u/%u/%u/%u busy %llu k%u c%u m%u g%u\n", l->device, l->process,
                l->context, l->stream, (unsigned long long)l->busy_ns, l->kernels, l->copies,
                l->memsets, l->graph_kernels);
    }
    for (size_t i = 0; i < m->ngraphs; i++) {
        const cp_graph *g = &m->graphs[i];
        fprintf(f, "graph %u/%u launches %u k%u c%u m%u busy %llu\n", g->process, g->graph_id,
                g->launches, g->kernels, g->copies, g->memsets, (unsigned long long)g->busy_ns);
    }
    for (uint32_t i = 0; m->device_metrics && i < m->devices; i++) {
        const cp_device_metrics *d = &m->device_metrics[i];
        for (size_t k = 0; k < nd; k++)
            fprintf(f, "device %u %s=%.17g\n", d->device, dd[k].name,
                    cp_device_metric_value(d, &dd[k]));
        fprintf(f, "device %u bound=%s\n", d->device, d->bound);
    }
    for (size_t i = 0; i < m->nkernel_stats; i++) {
        const cp_kernel_stat *k = &m->kernel_stats[i];
        fprintf(f, "kernel %s class %d count %u total %llu min %llu max %llu\n", k->name,
                (int)k->cls, k->count, (unsigned long long)k->total_ns,
                (unsigned long long)k->min_ns, (unsigned long long)k->max_ns);
    }
    fprintf(f, "pageable async %llu overlap %llu calls %u call_ns %llu\n",
            (unsigned long long)m->pageable_async_ns,
            (unsigned long long)m->pageable_async_overlap_ns, m->pageable_async_calls,
            (unsigned long long)m->pageable_async_call_ns);
    for (size_t i = 0; i < m->nfindings; i++)
        fprintf(f, "finding %s count %u: %s\n", m->findings[i].name, m->findings[i].count,
                m->findings[i].message);
}

/* The scopes a trace offers, as expectation prefixes ("" is the whole
 * program): each range name (the first 8 met), process, device and rank. */
static size_t scopes_of(const cp_trace *t, const cp_metrics *m, char scopes[][96], size_t cap)
{
    size_t n = 0;
    scopes[n++][0] = '\0';
    for (size_t i = 0; i < t->n && n < 9; i++) {
        const cp_activity *a = &t->items[i];
        if (a->kind != CP_ACT_RANGE || !a->name || !a->name[0] || strchr(a->name, ')') ||
            strchr(a->name, '#'))
            continue;
        char s[96];
        snprintf(s, sizeof s, "range(%.80s): ", a->name);
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++)
            seen = strcmp(scopes[k], s) == 0;
        if (!seen)
            snprintf(scopes[n++], 96, "%s", s);
    }
    for (size_t i = 0; i < t->nprocesses && n < cap; i++)
        snprintf(scopes[n++], 96, "process(%u): ", t->processes[i].pid);
    for (uint32_t i = 0; m->device_metrics && i < m->devices && n < cap; i++)
        snprintf(scopes[n++], 96, "device(%u): ", m->device_metrics[i].device);
    int32_t *ranks = NULL;
    long nr = cp_trace_ranks(t, &ranks);
    for (long i = 0; i < nr && n < cap; i++)
        snprintf(scopes[n++], 96, "rank(%d): ", (int)ranks[i]);
    if (nr > 0 && n + 2 <= cap) {
        snprintf(scopes[n++], 96, "every rank: ");
        snprintf(scopes[n++], 96, "rank spread: ");
    }
    free(ranks);
    return n;
}

/* Each scope's own metrics, and the verdicts and measured words of
 * expectations there: a count, a share and every finding. */
static void put_scopes(FILE *f, const cp_trace *t, const cp_metrics *m)
{
    char scopes[32][96];
    size_t ns = scopes_of(t, m, scopes, 32), nf = 0;
    const cp_finding_def *findings = cp_finding_defs(&nf);
    for (size_t s = 0; s < ns; s++) {
        char text[4096];
        int used = snprintf(text, sizeof text, "%skernels >= 1\n%scopy_kernel_overlap_ratio > 0.5\n",
                            scopes[s], scopes[s]);
        bool spread = strncmp(scopes[s], "rank spread", 11) == 0;
        for (size_t k = 0; k < nf && !spread; k++)
            used += snprintf(text + used, sizeof text - (size_t)used, "%sfinding %s\n", scopes[s],
                             findings[k].name);
        cp_expect_list list = {0};
        cr_assert_eq(cp_expect_parse(text, 1, &list), 0, "%s: %s", text, cp_last_error());
        for (size_t i = 0; i < list.n; i++) {
            bool ok = false;
            char measured[1024] = "";
            cr_assert_eq(cp_expect_eval_trace(&list.items[i], t, &h100, &ok, measured,
                                              sizeof measured),
                         0, "%s: %s", list.items[i].text, cp_last_error());
            fprintf(f, "%s: %s (%s)\n", list.items[i].text, ok ? "holds" : "fails", measured);
        }
        cp_expect_list_free(&list);
    }
}

/* The ranks table the terminal and the reports show, when there are ranks. */
static void put_ranks(FILE *f, const cp_trace *t)
{
    cp_ranks_builder *b = NULL;
    cp_ranks *r = NULL;
    cr_assert_eq(cp_ranks_builder_new(&b, &h100), 0);
    for (size_t i = 0; i < t->n; i++)
        cr_assert_eq(cp_ranks_builder_add(b, t, &t->items[i]), 0);
    cr_assert_eq(cp_ranks_builder_finish(b, t, &r), 0);
    cp_ranks_builder_free(b);
    if (!r)
        return;
    char *text = cp_ranks_text(r, "");
    cr_assert_not_null(text);
    fputs(text, f);
    free(text);
    cp_ranks_free(r);
}

/* Everything the analyses make of `t`, as text (the caller frees it). */
static char *what_it_gives(const cp_trace *t)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    cr_assert_not_null(f);
    cp_metrics m;
    cr_assert_eq(cp_timeline_analyse(t, &h100, &m), 0, "%s", cp_last_error());
    put_metrics(f, &m);
    put_scopes(f, t, &m);
    put_ranks(f, t);
    cp_metrics_free(&m);
    fclose(f);
    return text;
}

/* The first line where a and b differ, for the message. */
static void first_difference(const char *a, const char *b, char *out, size_t size)
{
    size_t i = 0, line = 0;
    while (a[i] && a[i] == b[i])
        line = a[i++] == '\n' ? i : line;
    snprintf(out, size, "%.200s | %.200s", a + line, b + line);
    for (char *p = out; *p; p++)
        if (*p == '\n')
            *p = ' ';
}

/* ---- The recorded traces ---- */

static bool keep_all(const cp_activity *a)
{
    (void)a;
    return true;
}

/* Reads fixture `path` into t (a copy of its first variant for a trace
 * file, which outlives the file). */
static void load(const char *path, cp_trace *t)
{
    size_t len = strlen(path), none = 0;
    if (len > 11 && strcmp(path + len - 11, ".trace.json") == 0) {
        cp_trace_file tf;
        cr_assert_eq(cp_trace_file_read(path, &tf), 0, "%s", cp_last_error());
        cr_assert_geq(tf.nvariants, 1, "%s", path);
        copy_kept(&tf.variants[0].trace, keep_all, t, &none);
        cp_trace_file_free(&tf);
        return;
    }
    cp_trace_init(t);
    /* A process's own file (.proc.jsonl, .proc.cprec), or a whole trace
     * exported in the rec form. */
    if (cp_proc_is_trace_file(path))
        cr_assert_eq(cp_proc_read(path, t), 0, "%s", cp_last_error());
    else
        cr_assert_eq(cp_rec_read_trace(path, t, NULL), 0, "%s", cp_last_error());
}

/* The traces exec recorded: the per-process files, the merged trace files
 * and the rec files of tests/fixtures/exec-*. */
static glob_t recorded(void)
{
    glob_t g;
    static const char *const patterns[] = {"/exec-*/*.proc.jsonl", "/exec-*/*.trace.json",
                                           "/exec-*/*.cprec"};
    for (size_t i = 0; i < 3; i++) {
        char pattern[512];
        snprintf(pattern, sizeof pattern, "%s%s", CUPROOF_FIXTURES, patterns[i]);
        int rc = glob(pattern, i ? GLOB_APPEND : 0, NULL, &g);
        cr_assert(rc == 0 || rc == GLOB_NOMATCH, "%s", pattern);
    }
    return g;
}

/* What the analyses make of `path`, and of it kept by `keep`; how many
 * API records it holds into *api and how many `keep` dropped into
 * *dropped (both added to). Returns whether they agree, the first
 * difference in `why`. */
static bool same_after(const char *path, keep_fn keep, size_t *api, size_t *dropped, char *why,
                       size_t size)
{
    cp_trace whole, kept;
    load(path, &whole);
    for (size_t k = 0; k < whole.n; k++)
        *api += whole.items[k].kind == CP_ACT_RUNTIME;
    copy_kept(&whole, keep, &kept, dropped);
    char *a = what_it_gives(&whole), *b = what_it_gives(&kept);
    bool same = strcmp(a, b) == 0;
    if (!same)
        first_difference(a, b, why, size);
    free(a);
    free(b);
    cp_trace_free(&whole);
    cp_trace_free(&kept);
    return same;
}

Test(replay_filter, every_recorded_exec_trace_gives_the_same_without_the_filtered_calls,
     .timeout = 600)
{
    glob_t g = recorded();
    cr_assert_geq(g.gl_pathc, 15, "the recorded exec traces are missing (%zu)", g.gl_pathc);
    size_t dropped = 0, api = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char why[512] = "";
        cr_expect(same_after(g.gl_pathv[i], filtered, &api, &dropped, why, sizeof why), "%s: %s",
                  g.gl_pathv[i], why);
    }
    /* The filter had work to do: most recorded calls are of no analysis. */
    cr_expect_gt(dropped, api / 2, "only %zu of %zu API records dropped", dropped, api);
    cr_expect_lt(dropped, api, "every API record dropped");
    globfree(&g);
}

/* The controls: what the comparison above would say if the filter lost a
 * class of calls an analysis reads. */
Test(replay_filter, dropping_the_copy_calls_or_the_event_waits_is_seen)
{
    char why[512] = "";
    size_t api = 0, dropped = 0;
    cr_expect_not(same_after(CUPROOF_FIXTURES "/exec-h100-findings/torch-pageable.trace.json",
                             filtered_without_copy_calls, &api, &dropped, why, sizeof why),
                  "without cudaMemcpyAsync the pageable copies' calls are lost");
    cr_expect_not_null(strstr(why, "pageable async"), "%s", why);
    cr_expect_not(same_after(CUPROOF_FIXTURES "/exec-h100-findings/graph-chain-events.trace.json",
                             filtered_without_event_waits, &api, &dropped, why, sizeof why),
                  "without cudaStreamWaitEvent the ordered streams look serialised");
    cr_expect_not_null(strstr(why, "serialized_streams"), "%s", why);
}
