/* report.html: a plain, self-contained page (no scripts, no fetches). */
#include "report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
    char *s;
    size_t len, cap;
    bool oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 8192;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void raw(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

/* Appends printf output with every argument already escaped by the caller
 * where it is text; numbers need none. */
static void fmt(buf *b, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void fmt(buf *b, const char *f, ...)
{
    char tmp[2048];
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(tmp, sizeof tmp, f, ap);
    va_end(ap);
    if (n > 0)
        put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void text(buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': raw(b, "&lt;"); break;
        case '>': raw(b, "&gt;"); break;
        case '&': raw(b, "&amp;"); break;
        case '"': raw(b, "&quot;"); break;
        default: put(b, s, 1);
        }
    }
}

static void cell(buf *b, const char *s)
{
    raw(b, "<td>");
    text(b, s);
    raw(b, "</td>");
}

static void case_html(buf *b, const cp_case_result *c)
{
    fmt(b, "<section id=\"case-%s\"><h2>", c->name);
    text(b, c->name);
    raw(b, " <span class=\"");
    raw(b, cp_status_name(c->status));
    raw(b, "\">");
    raw(b, cp_status_name(c->status));
    raw(b, "</span></h2><p>");
    text(b, c->title);
    raw(b, " <small>(");
    text(b, c->source);
    raw(b, ")</small></p>");
    if (c->status == CP_STATUS_SKIPPED) {
        raw(b, "<p class=\"skipped\">Skipped: ");
        text(b, c->skip_reason);
        raw(b, "</p>");
    }
    if (c->error[0]) {
        raw(b, "<p class=\"failed\">Error: ");
        text(b, c->error);
        raw(b, "</p>");
    }
    if (c->nchecks) {
        raw(b, "<h3>Checks</h3><table><tr><th>check</th><th>status</th><th>expected</th>"
               "<th>measured</th></tr>");
        for (size_t i = 0; i < c->nchecks; i++) {
            const cp_check_result *k = &c->checks[i];
            raw(b, "<tr>");
            cell(b, k->name);
            fmt(b, "<td class=\"%s\">%s</td>", cp_check_status_name(k->status),
                cp_check_status_name(k->status));
            cell(b, k->expected);
            cell(b, k->status == CP_CHECK_SKIPPED ? k->skip_reason : k->measured);
            raw(b, "</tr>");
        }
        raw(b, "</table>");
    }
    if (c->nclaims) {
        raw(b, "<h3>Claims</h3><table><tr><th>claim</th><th>claimed</th><th>measured</th>"
               "<th>verdict</th><th>why</th></tr>");
        for (size_t i = 0; i < c->nclaims; i++) {
            const cp_claim_result *k = &c->claims[i];
            raw(b, "<tr><td>");
            text(b, k->text);
            raw(b, "<br><small>");
            text(b, k->source);
            raw(b, "</small></td>");
            cell(b, k->claimed);
            cell(b, k->measured);
            cell(b, cp_verdict_name(k->verdict));
            cell(b, k->reason);
            raw(b, "</tr>");
        }
        raw(b, "</table>");
    }
    if (c->nvariants) {
        raw(b, "<h3>Variants</h3><table><tr><th>variant</th><th>median ms</th><th>min</th>"
               "<th>max</th><th>stddev</th><th>span ms</th><th>overlap ratio</th>"
               "<th>peak kernels</th><th>mean kernels</th><th>idle ms</th><th>ideal ms</th>"
               "<th>efficiency</th><th>bound</th><th>streams</th>"
               "<th>findings</th></tr>");
        for (size_t i = 0; i < c->nvariants; i++) {
            const cp_variant_result *v = &c->variants[i];
            const cp_metrics *m = &v->metrics;
            raw(b, "<tr>");
            cell(b, v->name);
            fmt(b, "<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>", v->timing.median_ms,
                v->timing.min_ms, v->timing.max_ms, v->timing.stddev_ms);
            if (v->traced) {
                fmt(b, "<td>%.3f</td><td>%.3f</td><td>%u</td><td>%.2f</td><td>%.3f</td>"
                       "<td>%.3f</td><td>%.2f</td><td>%s</td><td>%zu</td><td>",
                    (double)m->span_ns / 1e6, m->copy_kernel_overlap_ratio,
                    m->peak_concurrent_kernels, m->mean_concurrent_kernels,
                    (double)m->idle_ns / 1e6, (double)m->ideal_ns / 1e6, m->efficiency,
                    m->bound, m->nlanes);
                for (size_t f = 0; f < m->nfindings; f++) {
                    raw(b, "<b>");
                    text(b, m->findings[f].name);
                    raw(b, "</b>: ");
                    text(b, m->findings[f].message);
                    raw(b, "<br>");
                }
                raw(b, "</td>");
            } else {
                raw(b, "<td colspan=\"10\">untraced: ");
                text(b, v->untraced_reason);
                raw(b, "</td>");
            }
            raw(b, "</tr>");
        }
        raw(b, "</table>");
    }
    bool any_series = false;
    for (size_t i = 0; i < c->nvariants; i++)
        any_series = any_series || c->variants[i].nseries;
    if (any_series) {
        raw(b, "<h3>Measured by the run itself</h3><table><tr><th>variant</th><th>series</th>"
               "<th>n</th><th>mean</th><th>stddev</th><th>unit</th></tr>");
        for (size_t i = 0; i < c->nvariants; i++)
            for (size_t k = 0; k < c->variants[i].nseries; k++) {
                const cp_series *sr = &c->variants[i].series[k];
                double mean, std;
                cp_mean_std(sr->values, sr->n, &mean, &std);
                raw(b, "<tr>");
                cell(b, c->variants[i].name);
                cell(b, sr->name);
                fmt(b, "<td>%zu</td><td>%.4g</td><td>%.4g</td>", sr->n, mean, std);
                cell(b, sr->unit);
                raw(b, "</tr>");
            }
        raw(b, "</table>");
    }
    if (c->nfigures) {
        raw(b, "<h3>Figures</h3><ul>");
        for (size_t i = 0; i < c->nfigures; i++) {
            raw(b, "<li>");
            text(b, c->figures[i].name);
            fmt(b, ": %.4g ", c->figures[i].value);
            text(b, c->figures[i].unit);
            raw(b, "</li>");
        }
        raw(b, "</ul>");
    }
    raw(b, "</section>");
}

char *cp_report_html(const cp_report *r)
{
    buf b = {0};
    raw(&b, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>cuproof report</title><style>"
            "body{font-family:sans-serif;margin:2em;max-width:80em}"
            "table{border-collapse:collapse;margin:.5em 0}"
            "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}"
            ".passed,.confirmed{color:#060}.failed,.refuted{color:#a00}.skipped{color:#888}"
            "</style></head><body><h1>cuproof report</h1>");
    raw(&b, "<h2>Environment</h2><table>");
    const cp_env *e = &r->env;
    raw(&b, "<tr><th>GPU</th>");
    if (e->has_device) {
        raw(&b, "<td>");
        text(&b, e->gpu_name);
        fmt(&b, " (sm_%d%d, %d SMs, %d copy engines)</td></tr>", e->cc_major, e->cc_minor,
            e->sm_count, e->copy_engines);
    } else {
        cell(&b, e->no_device_reason);
        raw(&b, "</tr>");
    }
    fmt(&b, "<tr><th>driver / runtime</th><td>%d / %d</td></tr>", e->driver_version,
        e->runtime_version);
    raw(&b, "<tr><th>host</th>");
    cell(&b, e->host);
    raw(&b, "</tr><tr><th>profile</th>");
    cell(&b, r->profile);
    fmt(&b, "</tr><tr><th>timed runs</th><td>%d per variant</td></tr>", r->repeat);
    raw(&b, "<tr><th>tracing</th>");
    cell(&b, r->traced ? "CUPTI activity trace, one separate run per variant"
                       : r->untraced_reason);
    raw(&b, "</tr><tr><th>date</th>");
    cell(&b, r->date);
    raw(&b, "</tr></table><h2>Cases</h2><table><tr><th>case</th><th>status</th>"
            "<th>claims</th></tr>");
    for (size_t i = 0; i < r->ncases; i++) {
        const cp_case_result *c = &r->cases[i];
        fmt(&b, "<tr><td><a href=\"#case-%s\">%s</a></td><td class=\"%s\">%s</td><td>",
            c->name, c->name, cp_status_name(c->status), cp_status_name(c->status));
        for (size_t k = 0; k < c->nclaims; k++) {
            fmt(&b, "<span class=\"%s\">%s</span> (", cp_verdict_name(c->claims[k].verdict),
                cp_verdict_name(c->claims[k].verdict));
            text(&b, c->claims[k].measured);
            raw(&b, ") ");
        }
        raw(&b, "</td></tr>");
    }
    raw(&b, "</table>");
    for (size_t i = 0; i < r->ncases; i++)
        case_html(&b, &r->cases[i]);
    raw(&b, "</body></html>\n");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
