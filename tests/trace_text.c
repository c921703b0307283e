/* What the analyses make of a recorded trace, as text, and the recorded
 * exec traces: see trace_text.h. */
#define _GNU_SOURCE
#include "trace_text.h"

#include <cuproof/error.h>
#include <cuproof/internal/proc.h>
#include <cuproof/internal/rec.h>
#include <cuproof/internal/tracefile.h>

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

const cp_timeline_opts tt_h100 = {.max_concurrent_kernels = 128};

void tt_put_metrics(FILE *f, const cp_metrics *m)
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
size_t tt_scopes_of(const cp_trace *t, const cp_metrics *m, char scopes[][96], size_t cap)
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

int tt_scope_lines(const char *scope, char *text, size_t size)
{
    size_t nf = 0;
    const cp_finding_def *findings = cp_finding_defs(&nf);
    int used =
        snprintf(text, size, "%skernels >= 1\n%scopy_kernel_overlap_ratio > 0.5\n", scope, scope);
    bool spread = strncmp(scope, "rank spread", 11) == 0;
    for (size_t k = 0; k < nf && !spread; k++)
        used +=
            snprintf(text + used, size - (size_t)used, "%sfinding %s\n", scope, findings[k].name);
    return used;
}

void tt_first_difference(const char *a, const char *b, char *out, size_t size)
{
    size_t i = 0, line = 0;
    while (a[i] && a[i] == b[i])
        line = a[i++] == '\n' ? i : line;
    snprintf(out, size, "%.200s | %.200s", a + line, b + line);
    for (char *p = out; *p; p++)
        if (*p == '\n')
            *p = ' ';
}

void tt_load(const char *path, cp_trace *t)
{
    size_t len = strlen(path);
    cp_trace_init(t);
    if (len > 11 && strcmp(path + len - 11, ".trace.json") == 0) {
        /* A copy of the first variant, which outlives the file. */
        cp_trace_file tf;
        char why[160];
        cr_assert_eq(cp_trace_file_read(path, &tf), 0, "%s", cp_last_error());
        cr_assert_geq(tf.nvariants, 1, "%s", path);
        cr_assert_eq(cp_trace_scope(&tf.variants[0].trace, "", NULL, t, why, sizeof why), 0, "%s",
                     why);
        cp_trace_file_free(&tf);
        return;
    }
    /* A process's own file (.proc.jsonl, .proc.cprec), or a whole trace
     * exported in the rec form. */
    if (cp_proc_is_trace_file(path))
        cr_assert_eq(cp_proc_read(path, t), 0, "%s", cp_last_error());
    else
        cr_assert_eq(cp_rec_read_trace(path, t, NULL), 0, "%s", cp_last_error());
}

glob_t tt_recorded(void)
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
