/*
 * The API filter of `cuproof exec` replayed on every trace that exec
 * recorded on a GPU before the filter existed (tests/fixtures/exec-*:
 * every call recorded): each trace with the calls the filter drops taken
 * out must give the same metrics, lanes, graphs, per-device figures,
 * kernel breakdown, findings with their words, ranks table, and verdicts
 * of expectations in every scope the trace offers (the whole program, each
 * range, process, device and rank, every rank, a rank spread) as the trace
 * itself. The fixtures are found by name, so that one recorded later is
 * held to the filter too. Two controls show that the comparison can fail:
 * dropping the copy calls (cudaMemcpyAsync) changes cuda_memcpy_async's
 * evidence, and dropping the event waits (cudaStreamWaitEvent) raises
 * serialized_streams on streams the program ordered.
 */
#define _GNU_SOURCE
#include "analysis/api_calls.h"
#include "trace_text.h"

#include <cuproof/error.h>
#include <cuproof/expect.h>
#include <cuproof/metrics.h>
#include <cuproof/internal/ranks.h>
#include <cuproof/internal/proc.h>
#include <cuproof/internal/rec.h>
#include <cuproof/internal/report.h>
#include <cuproof/internal/tracefile.h>

#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Each scope's own metrics, and the verdicts and measured words of
 * expectations there: a count, a share and every finding. */
static void put_scopes(FILE *f, const cp_trace *t, const cp_metrics *m)
{
    char scopes[32][96];
    size_t ns = tt_scopes_of(t, m, scopes, 32);
    for (size_t s = 0; s < ns; s++) {
        char text[4096];
        tt_scope_lines(scopes[s], text, sizeof text);
        cp_expect_list list = {0};
        cr_assert_eq(cp_expect_parse(text, 1, &list), 0, "%s: %s", text, cp_last_error());
        for (size_t i = 0; i < list.n; i++) {
            bool ok = false;
            char measured[1024] = "";
            cr_assert_eq(
                cp_expect_eval_trace(&list.items[i], t, &tt_h100, &ok, measured, sizeof measured),
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
    cr_assert_eq(cp_ranks_builder_new(&b, &tt_h100), 0);
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
    cr_assert_eq(cp_timeline_analyse(t, &tt_h100, &m), 0, "%s", cp_last_error());
    tt_put_metrics(f, &m);
    put_scopes(f, t, &m);
    put_ranks(f, t);
    cp_metrics_free(&m);
    fclose(f);
    return text;
}

/* ---- The recorded traces ---- */

/* What the analyses make of `path`, and of it kept by `keep`; how many
 * API records it holds into *api and how many `keep` dropped into
 * *dropped (both added to). Returns whether they agree, the first
 * difference in `why`. */
static bool same_after(const char *path, keep_fn keep, size_t *api, size_t *dropped, char *why,
                       size_t size)
{
    cp_trace whole, kept;
    tt_load(path, &whole);
    for (size_t k = 0; k < whole.n; k++)
        *api += whole.items[k].kind == CP_ACT_RUNTIME;
    copy_kept(&whole, keep, &kept, dropped);
    char *a = what_it_gives(&whole), *b = what_it_gives(&kept);
    bool same = strcmp(a, b) == 0;
    if (!same)
        tt_first_difference(a, b, why, size);
    free(a);
    free(b);
    cp_trace_free(&whole);
    cp_trace_free(&kept);
    return same;
}

Test(replay_filter, every_recorded_exec_trace_gives_the_same_without_the_filtered_calls,
     .timeout = 600)
{
    glob_t g = tt_recorded();
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
