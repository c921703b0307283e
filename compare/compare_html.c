/*
 * The compare page (cuproof compare --html, cp_compare_write_html): one
 * self-contained HTML page with no script and nothing fetched. The
 * reports' environments and whether they are comparable, the regressions
 * and other changes, a chart of every variant's ratio new / old with its
 * interval, then the table of variants. Every number on it comes from the
 * cp_comparison that the table and --format json print too, so the three
 * cannot disagree; it calls no other output of compare.
 */
#include <cuproof/internal/file.h>
#include <cuproof/internal/compare.h>

#include "reports/html_buf.h"

#include <cuproof/internal/compare_stats.h>
#include <cuproof/error.h>
#include <cuproof/metrics.h>
#include "reports/headline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The chart's axis: ratios from half to twice the old time, on a log
 * scale, so that 0.8 and 1.25 lie as far from 1 on either side. */
#define AXIS_LO 0.5
#define AXIS_HI 2.0
#define ROW_H 18     /* one variant per row, in pixels */
#define PLOT_W 600   /* the axis' width */
#define TOP 6        /* space above the first row */
#define BOTTOM 40    /* the tick labels and the axis title */

static const char page_style[] =
    "body{font-family:sans-serif;margin:2em;max-width:80em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}"
    "td.num,td.nowrap{white-space:nowrap}td.num{text-align:right}"
    ".v-same{color:#777}.v-faster{color:#2e9d57}.v-slower{color:#d9822b}.v-noisy{color:#8e5bd0}"
    "g.regression,.legend .regression{color:#b22}"
    "tr.regression{background:#fdecea}"
    ".badge{background:#b22;color:#fff;padding:0 .3em;border-radius:3px;font-weight:bold}"
    ".incomparable{border-left:4px solid #d9822b;padding-left:.8em}"
    "svg text{font-size:12px;fill:#222}svg .variant circle{fill:currentColor}"
    "svg .interval{stroke:currentColor;stroke-width:3;stroke-opacity:.55}"
    "svg .grid{stroke:#ddd}svg .one{stroke:#888}svg .band{fill:#e8eef7}"
    "svg .stripe{fill:#000;fill-opacity:.04}"
    "svg .variant circle.off{fill:#fff;stroke:currentColor;stroke-width:2}";

/* A name from the reports as words, with the name itself as its tooltip
 * when the two differ, so it can still be searched for. */
static void put_name(html_buf *b, const char *s)
{
    if (!strchr(s, '_')) {
        html_text(b, s);
        return;
    }
    html_raw(b, "<span title=\"");
    html_text(b, s);
    html_raw(b, "\">");
    html_human(b, s);
    html_raw(b, "</span>");
}

/* ---- the header ---- */

static void field_row(html_buf *b, const char *label, const char *old, const char *new)
{
    html_fmt(b, "<tr><th>%s</th>", label);
    html_cell(b, *old ? old : "unknown");
    html_cell(b, *new ? new : "unknown");
    html_raw(b, "</tr>");
}

/* The driver as cudaDriverGetVersion gives it (13000) and as CUDA names
 * it (13.0); "" when the report has none. */
static void driver_text(int d, char *out, size_t n)
{
    out[0] = '\0';
    if (d > 0)
        snprintf(out, n, "%d (CUDA %d.%d)", d, d / 1000, d % 1000 / 10);
}

/* A side's reports in its cell, one a line. */
static void paths_cell(html_buf *b, const cp_cmp_report *r, size_t n)
{
    html_raw(b, "<td>");
    for (size_t i = 0; i < n; i++) {
        html_raw(b, i ? "<br><code>" : "<code>");
        html_text(b, r[i].path);
        html_raw(b, "</code>");
    }
    html_raw(b, "</td>");
}

/* Which runs are compared: each side's reports, and its first report's
 * GPU, driver, profile and date (the reasons say where a side's reports
 * differ among themselves). */
static void runs_html(html_buf *b, const cp_comparison *c)
{
    const cp_cmp_report *first[2] = {&c->old_reports[0], &c->new_reports[0]};
    char driver[2][64];
    for (int i = 0; i < 2; i++)
        driver_text(first[i]->driver_version, driver[i], sizeof driver[i]);
    html_raw(b, "<table class=\"runs\"><tr><th></th><th>Old</th><th>New</th></tr>");
    html_raw(b, c->n_old_reports + c->n_new_reports > 2 ? "<tr><th>Reports</th>"
                                                        : "<tr><th>Report</th>");
    paths_cell(b, c->old_reports, c->n_old_reports);
    paths_cell(b, c->new_reports, c->n_new_reports);
    html_raw(b, "</tr>");
    field_row(b, "GPU", first[0]->gpu_name, first[1]->gpu_name);
    field_row(b, "Driver", driver[0], driver[1]);
    field_row(b, "Profile", first[0]->profile, first[1]->profile);
    field_row(b, "Date", first[0]->date, first[1]->date);
    html_raw(b, "</table>");
}

/* Whether the timings can be compared, and what follows when they
 * cannot. */
static void comparability_html(html_buf *b, const cp_comparison *c)
{
    if (c->comparable) {
        html_raw(b, "<p class=\"comparable\">Comparable: the same GPU, driver and profile.</p>");
        return;
    }
    html_raw(b, "<div class=\"incomparable\"><p><strong>Not comparable:</strong></p><ul>");
    for (size_t i = 0; i < c->nreasons; i++) {
        html_raw(b, "<li>");
        html_text(b, c->reasons[i].text);
        html_raw(b, "</li>");
    }
    html_raw(b, c->forced ? "</ul><p>Forced: timing regressions count anyway.</p></div>"
                          : "</ul><p>Timing verdicts only inform: they count as no regression "
                            "(--force counts them).</p></div>");
}

/* The thresholds as percentages, then how many variants got each verdict
 * and how many regressions there are. */
static void summary_html(html_buf *b, const cp_comparison *c)
{
    html_fmt(b, "<p>Threshold %g%%: a variant slower by more than this is a regression. "
                "Host threshold %g%%: the change a host-bound or untraced variant must exceed "
                "to be called slower or faster. Changes under %g%% are no change.</p>",
             100 * c->threshold, 100 * c->host_threshold, 100 * c->min_effect);
    if (c->nvariants == 0)
        html_raw(b, "<p class=\"counts\">No timing compared: no variant is timed on both "
                    "sides; the checks, case statuses and claims are.");
    else
        html_fmt(b, "<p class=\"counts\">%zu variant%s: ", c->nvariants,
                 c->nvariants == 1 ? "" : "s");
    /* slower, faster, noisy and same always; drift and single run when
     * some variant got them, so that the counts add up to the variants. */
    for (size_t k = 0, said = 0; c->nvariants && k < CP_CMP_NVERDICTS; k++) {
        const char *name = cp_cmp_summary_verdict(k);
        if (!c->verdict_counts[k] && (k == CP_CMP_COUNT_DRIFT || k == CP_CMP_COUNT_SINGLE_RUN))
            continue;
        html_fmt(b, "%s<span class=\"v-%s\">%zu %s</span>", said++ ? ", " : "",
                 k == CP_CMP_COUNT_SINGLE_RUN ? "single" : name, c->verdict_counts[k], name);
    }
    int regressions = c->regressions > 0 ? c->regressions : 0;
    html_fmt(b, "%s<strong%s>%d regression%s</strong>.</p>", c->nvariants ? ". " : " ",
             regressions ? " class=\"regression\"" : "", regressions,
             regressions == 1 ? "" : "s");
    if (c->noisy_note[0]) {
        html_raw(b, "<p>Noisy: ");
        html_text(b, c->noisy_note);
        html_raw(b, ".</p>");
    }
    if (c->figure_note[0]) {
        html_raw(b, "<p>Figures: ");
        html_text(b, c->figure_note);
        html_raw(b, ".</p>");
    }
}

/* ---- what changed ---- */

static void open_item(html_buf *b, bool regression)
{
    html_raw(b, regression ? "<li class=\"regression\"><span class=\"badge\">Regression</span> "
                           : "<li>");
}

/* A variant that regressed: its medians, ratio and interval. */
static void variant_item(html_buf *b, const cp_cmp_variant *v)
{
    open_item(b, true);
    put_name(b, v->case_name);
    html_raw(b, ", variant ");
    put_name(b, v->variant);
    html_raw(b, ": slower, ");
    /* The times the ratio is of, with the digits that give it back. */
    char t_old[32], t_new[32];
    cp_cmp_shown_times(v, 3, t_new, t_old, sizeof t_old);
    html_text(b, t_old);
    html_raw(b, " &rarr; ");
    html_text(b, t_new);
    html_fmt(b, " (ratio %.3f", v->ratio);
    if (isfinite(v->ci_low) && isfinite(v->ci_high))
        html_fmt(b, ", 95%% interval %.3f to %.3f", v->ci_low, v->ci_high);
    html_raw(b, ")</li>");
}

/* A check, case status or claim whose result changed: old -> new. */
static void change_item(html_buf *b, const cp_cmp_change *c, const char *word, bool named)
{
    open_item(b, c->regression);
    put_name(b, c->case_name);
    html_fmt(b, ", %s", word);
    if (named) {
        html_raw(b, " &ldquo;");
        put_name(b, c->name);
        html_raw(b, "&rdquo;");
    }
    html_raw(b, ": ");
    html_text(b, c->was);
    html_raw(b, " &rarr; ");
    html_text(b, c->now);
    if (c->why[0]) {
        html_raw(b, ", not counted: ");
        html_text(b, c->why);
    }
    html_raw(b, "</li>");
}

/* The regressions (variants, then checks, case statuses and claims), or
 * the changes that are none; returns how many it listed. */
static int changes_list(html_buf *b, const cp_comparison *c, bool regressions)
{
    const struct {
        const cp_cmp_change *list;
        size_t n;
        const char *word;
        bool named;
    } kinds[] = {
        {c->checks, c->nchecks, "check", true},
        {c->cases, c->ncases, "case status", false},
        {c->claims, c->nclaims, "claim", true},
    };
    int n = 0;
    for (size_t i = 0; regressions && i < c->nvariants; i++) {
        if (!c->variants[i].regression)
            continue;
        html_raw(b, n++ ? "" : "<ul>");
        variant_item(b, &c->variants[i]);
    }
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (size_t i = 0; i < kinds[k].n; i++) {
            if (kinds[k].list[i].regression != regressions)
                continue;
            html_raw(b, n++ ? "" : "<ul>");
            change_item(b, &kinds[k].list[i], kinds[k].word, kinds[k].named);
        }
    for (size_t i = 0; i < c->nmetrics; i++) {
        const cp_cmp_metric *m = &c->metrics[i];
        if (m->regression != regressions)
            continue;
        html_raw(b, n++ ? "" : "<ul>");
        open_item(b, m->regression);
        put_name(b, m->case_name);
        html_raw(b, ", variant ");
        put_name(b, m->variant);
        html_raw(b, ": trace metric ");
        put_name(b, m->metric);
        /* Through cp_metric_format, as the terminal: "12800 kernels". */
        char was[64], now[64];
        const cp_metric_def *d = cp_metric_find(m->metric);
        html_raw(b, " ");
        html_text(b, (cp_metric_format(d, m->was, was, sizeof was), was));
        html_raw(b, " &rarr; ");
        html_text(b, (cp_metric_format(d, m->now, now, sizeof now), now));
        html_fmt(b, " over %zu and %zu runs", m->n_old, m->n_new);
        if (m->single_run)
            html_raw(b, " (single run: its spread between runs is unknown)");
        if (m->regression) {
            html_raw(b, ", towards failing ");
            put_name(b, m->towards);
        }
        html_raw(b, "</li>");
    }
    for (size_t i = 0; i < c->nfindings; i++) {
        const cp_cmp_finding *f = &c->findings[i];
        if (f->regression != regressions)
            continue;
        html_raw(b, n++ ? "" : "<ul>");
        open_item(b, f->regression);
        put_name(b, f->case_name);
        html_raw(b, ", variant ");
        put_name(b, f->variant);
        html_raw(b, f->raised ? ": the analysis now finds " : ": the analysis no longer finds ");
        html_human(b, f->name);
        html_raw(b, "</li>");
    }
    if (n)
        html_raw(b, "</ul>");
    return n;
}

/* What changed comes first: the regressions, then the checks, case
 * statuses and claims that changed without being one. */
static void changes_html(html_buf *b, const cp_comparison *c)
{
    html_raw(b, "<section id=\"regressions\"><h2>Regressions</h2>");
    if (!changes_list(b, c, true))
        html_raw(b, "<p>None: no variant is slower by more than the threshold, and no check, "
                    "case or claim got worse.</p>");
    html_raw(b, "</section><section id=\"changes\"><h2>Other changes</h2>");
    if (!changes_list(b, c, false))
        html_raw(b, "<p>No other check, case status or claim changed.</p>");
    html_raw(b, "</section>");
    if (!c->ntight)
        return;
    /* Thresholds the next run can cross (cuproof/internal/margin.h). */
    html_raw(b, "<section id=\"tight\"><h2>Expectations within their spread</h2><ul>");
    for (size_t i = 0; i < c->ntight; i++) {
        const cp_cmp_tight *t = &c->tight[i];
        html_raw(b, "<li>");
        put_name(b, t->case_name);
        html_raw(b, ": ");
        put_name(b, t->check);
        html_fmt(b, " %s by %.1f of its spread between runs (%.4g, sd %.2g over %zu new runs)",
                 t->spreads >= 0 ? "holds" : "fails", fabs(t->spreads), t->mean, t->sd, t->runs);
        html_raw(b, "</li>");
    }
    html_raw(b, "</ul></section>");
}

/* ---- the chart ---- */

/* The x of ratio r, clamped to the axis. */
static double axis_x(double label_w, double r)
{
    double clamped = fmin(fmax(r, AXIS_LO), AXIS_HI);
    return label_w + PLOT_W * log(clamped / AXIS_LO) / log(AXIS_HI / AXIS_LO);
}

/* Room for the longest "case variant" label at about 6.6 pixels a
 * character, within bounds: a longer one is cut at the chart's left edge,
 * and its row's tooltip names it whole. */
static double label_width(const cp_comparison *c)
{
    size_t longest = 0;
    for (size_t i = 0; i < c->nvariants; i++) {
        size_t n = strlen(c->variants[i].case_name) + 1 + strlen(c->variants[i].variant);
        longest = n > longest ? n : longest;
    }
    return fmin(fmax(12 + 6.6 * (double)longest, 100), 360);
}

/* The shaded threshold band, the grid at the ticks, and their labels. */
static void chart_axis(html_buf *b, double label_w, double bottom, double threshold)
{
    static const double ticks[] = {0.5, 0.8, 1, 1.25, 2};
    if (threshold > 0) {
        double x0 = axis_x(label_w, 1 - threshold), x1 = axis_x(label_w, 1 + threshold);
        html_fmt(b, "<rect class=\"band\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%.1f\">"
                    "<title>Within the threshold: 1 &#177; %g%%</title></rect>",
                 x0, TOP, x1 - x0, bottom - TOP, 100 * threshold);
    }
    for (size_t i = 0; i < sizeof ticks / sizeof ticks[0]; i++) {
        double x = axis_x(label_w, ticks[i]);
        html_fmt(b, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>",
                 ticks[i] == 1 ? "one" : "grid", x, TOP, x, bottom + 4, x, bottom + 16, ticks[i]);
    }
    html_fmt(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">Ratio new / old "
                "(logarithmic axis)</text>",
             label_w + PLOT_W / 2.0, bottom + 32);
}

/* A row's tooltip: the numbers, the verdict, and whether the ratio or its
 * interval lies beyond the axis and is drawn at its edge. */
static void row_tooltip(html_buf *b, const cp_cmp_variant *v)
{
    double ratio = v->ratio, lo = v->ci_low, hi = v->ci_high;
    html_raw(b, "<title>");
    html_human(b, v->case_name);
    html_raw(b, " ");
    html_human(b, v->variant);
    if (isfinite(ratio))
        html_fmt(b, ": ratio %.3f", ratio);
    else
        html_raw(b, ": no ratio");
    if (isfinite(lo) && isfinite(hi))
        html_fmt(b, ", 95%% interval %.3f to %.3f", lo, hi);
    html_raw(b, ", ");
    html_text(b, v->verdict);
    html_raw(b, v->regression ? ", a regression" : "");
    if (ratio < AXIS_LO || ratio > AXIS_HI)
        html_fmt(b, "; the ratio lies beyond the axis (%g to %g) and is drawn at its edge",
                 AXIS_LO, AXIS_HI);
    else if (lo < AXIS_LO || hi > AXIS_HI)
        html_fmt(b, "; the interval reaches beyond the axis (%g to %g) and is cut at its edge",
                 AXIS_LO, AXIS_HI);
    html_raw(b, "</title>");
}

/* One variant: its label, the bar of its 95% interval (none without one)
 * and a dot at its ratio, coloured by its verdict and hollow when the
 * ratio lies beyond the axis; every other row is shaded, so that the eye
 * can follow a label to its dot. */
static void chart_row(html_buf *b, const cp_cmp_variant *v, int row, double label_w)
{
    double ratio = v->ratio, lo = v->ci_low, hi = v->ci_high;
    double y = TOP + (row + 0.5) * ROW_H;
    html_raw(b, "<g class=\"variant v-");
    html_text(b, v->verdict);
    html_raw(b, v->regression ? " regression\" data-case=\"" : "\" data-case=\"");
    html_text(b, v->case_name);
    html_raw(b, "\" data-variant=\"");
    html_text(b, v->variant);
    html_raw(b, "\">");
    row_tooltip(b, v);
    if (row % 2)
        html_fmt(b, "<rect class=\"stripe\" x=\"0\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"/>",
                 y - ROW_H / 2.0, label_w + PLOT_W, ROW_H);
    html_fmt(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", label_w - 8, y + 4);
    html_human(b, v->case_name);
    html_raw(b, " ");
    html_human(b, v->variant);
    html_raw(b, "</text>");
    if (isfinite(lo) && isfinite(hi))
        html_fmt(b, "<line class=\"interval\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                 axis_x(label_w, lo), y, axis_x(label_w, hi), y);
    if (isfinite(ratio))
        html_fmt(b, "<circle%s cx=\"%.1f\" cy=\"%.1f\" r=\"4\"/>",
                 ratio < AXIS_LO || ratio > AXIS_HI ? " class=\"off\"" : "", axis_x(label_w, ratio),
                 y);
    html_raw(b, "</g>");
}

static const char legend_html[] =
    "<p class=\"legend\"><span class=\"v-same\">&#9679; same</span> "
    "<span class=\"v-faster\">&#9679; faster</span> "
    "<span class=\"v-slower\">&#9679; slower</span> "
    "<span class=\"v-slower regression\">&#9679; slower, a regression</span> "
    "<span class=\"v-noisy\">&#9679; noisy</span>; bars: 95% intervals; shaded: within the "
    "threshold; hollow dots: beyond the axis, drawn at its edge. Hover over a row for its "
    "numbers.</p>";

/* Every variant's ratio new / old on a log axis around 1, in the reports'
 * order, so that a case's variants stay together. */
static void chart_html(html_buf *b, const cp_comparison *c)
{
    double label_w = label_width(c), bottom = TOP + (double)c->nvariants * ROW_H;
    double w = label_w + PLOT_W + 20, h = bottom + BOTTOM;
    html_fmt(b, "<section id=\"chart\"><h2>Ratios new / old</h2>"
                "<svg class=\"ratios\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                "role=\"img\" aria-label=\"The ratio new / old of every variant\">",
             w, h, w, h);
    chart_axis(b, label_w, bottom, c->threshold);
    for (size_t i = 0; i < c->nvariants; i++)
        chart_row(b, &c->variants[i], (int)i, label_w);
    html_raw(b, "</svg>");
    html_raw(b, legend_html);
    html_raw(b, "</section>");
}

/* ---- the table ---- */

/* Where a variant stands in the table: regressions, then slower, faster,
 * noisy and same, then anything else. */
static int table_rank(const cp_cmp_variant *v)
{
    static const char *const order[] = {"slower", "faster", "noisy", "same"};
    if (v->regression)
        return 0;
    for (int i = 0; i < 4; i++)
        if (strcmp(v->verdict, order[i]) == 0)
            return i + 1;
    return 5;
}

/* Why a verdict is what it is: compare's own reason (host-bound,
 * untraced), medians only, or a slowdown that does not count. */
static void reason_cell(html_buf *b, const cp_cmp_variant *v)
{
    const char *parts[4];
    int n = 0;
    char on[200];
    if (v->judged_on == CP_WORK_GPU)
        snprintf(on, sizeof on, "on the GPU's %s (wall %.3g ms -> %.3g ms beside it)",
                 v->by_busy ? "own busy time in the traced runs (its events hold waits)"
                            : "time by events",
                 v->old_wall_ms, v->new_wall_ms);
    else
        snprintf(on, sizeof on, "on wall time: %s", v->judged_why);
    parts[n++] = on;
    if (*v->why)
        parts[n++] = v->why;
    if (!v->samples)
        parts[n++] = "medians only: a report without every timed run";
    if (v->slower && !v->regression)
        parts[n++] = "not counted: the reports are not comparable";
    html_raw(b, "<td>");
    for (int i = 0; i < n; i++) {
        html_raw(b, i ? "; " : "");
        html_text(b, parts[i]);
    }
    /* What would decide a noisy verdict, and the spread it rests on. */
    bool noisy = strcmp(v->verdict, "noisy") == 0;
    if (noisy && v->reports_needed)
        html_fmt(b, "%sruns from %zu reports a side would decide", n++ ? "; " : "",
                 v->reports_needed);
    else if (noisy && v->runs_needed)
        html_fmt(b, "%sabout %zu runs a side would decide%s", n++ ? "; " : "", v->runs_needed,
                 v->runs_capped ? " (or more)" : "");
    if (v->by_runs)
        html_fmt(b, "%sspread between runs %.1f%% / %.1f%%", n++ ? "; " : "",
                 100 * v->spread_old, 100 * v->spread_new);
    if (v->old_sm_mhz > 0 && v->new_sm_mhz > 0)
        html_fmt(b, "%sSM clock %.0f / %.0f MHz", n ? "; " : "", v->old_sm_mhz, v->new_sm_mhz);
    html_raw(b, "</td>");
}

static void number_cell(html_buf *b, const char *format, double x)
{
    if (isfinite(x))
        html_fmt(b, format, x);
    else
        html_raw(b, "<td class=\"num\">&ndash;</td>");
}

static void variant_row(html_buf *b, const cp_cmp_variant *v)
{
    double lo = v->ci_low, hi = v->ci_high, p = v->p;
    html_raw(b, v->regression ? "<tr class=\"regression\"><td class=\"nowrap\">"
                              : "<tr><td class=\"nowrap\">");
    put_name(b, v->case_name);
    html_raw(b, "</td><td class=\"nowrap\">");
    put_name(b, v->variant);
    char t_old[32], t_new[32];
    cp_cmp_shown_times(v, 3, t_new, t_old, sizeof t_old);
    html_raw(b, "</td><td class=\"num\">");
    html_text(b, t_old);
    html_raw(b, "</td><td class=\"num\">");
    html_text(b, t_new);
    html_raw(b, "</td>");
    number_cell(b, "<td class=\"num\">%.3f</td>", v->ratio);
    if (isfinite(lo) && isfinite(hi))
        html_fmt(b, "<td class=\"num\">%.3f to %.3f</td>", lo, hi);
    else
        html_raw(b, "<td class=\"num\">&ndash;</td>");
    number_cell(b, p < 1e-4 ? "<td class=\"num\">%.1e</td>" : "<td class=\"num\">%.4f</td>", p);
    html_fmt(b, "<td class=\"num\">%zu / %zu</td>", v->n_old_runs, v->n_new_runs);
    html_raw(b, "<td class=\"nowrap v-");
    html_text(b, v->verdict);
    html_raw(b, "\">");
    html_text(b, v->verdict);
    html_raw(b, v->regression ? " <span class=\"badge\">regression</span></td>" : "</td>");
    reason_cell(b, v);
    html_raw(b, "</tr>");
}

static void table_html(html_buf *b, const cp_comparison *c)
{
    html_raw(b, "<section id=\"variants\"><h2>Variants</h2><table><tr><th>Case</th>"
                "<th>Variant</th><th>Old median</th><th>New median</th>"
                "<th>Ratio new / old</th><th>95% interval</th><th>p</th>"
                "<th title=\"A report, or a pass of cuproof run --runs, is one run\">Runs old / "
                "new</th><th>Verdict</th><th>Why</th></tr>");
    for (int rank = 0; rank <= 5; rank++)
        for (size_t i = 0; i < c->nvariants; i++)
            if (table_rank(&c->variants[i]) == rank)
                variant_row(b, &c->variants[i]);
    html_raw(b, "</table></section>");
}

/* ---- the page ---- */

static char *compare_page(const cp_comparison *c)
{
    html_buf b = {0};
    html_raw(&b, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                 "<title>cuproof compare</title><style>");
    html_raw(&b, page_style);
    html_raw(&b, "</style></head><body><h1>cuproof compare</h1>");
    runs_html(&b, c);
    comparability_html(&b, c);
    summary_html(&b, c);
    changes_html(&b, c);
    if (c->nvariants) {
        chart_html(&b, c);
        table_html(&b, c);
    }
    html_raw(&b, "</body></html>\n");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

int cp_compare_write_html(const cp_comparison *c, const char *html_path)
{
    char *page = compare_page(c);
    if (!page)
        return cp_failf(CP_ENOMEM, "out of memory drawing the comparison of %s and %s",
                        c->n_old_reports ? c->old_reports[0].path : "",
                        c->n_new_reports ? c->new_reports[0].path : "");
    int rc = cp_write_file(html_path, page);
    free(page);
    return rc;
}
