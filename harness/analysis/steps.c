/* Per step (cuproof/internal/steps.h): a step range's windows found and
 * numbered, the sweep's parts grouped into one row a step, a metric
 * summarised over the steps, and 'per step' verdicts. */
#include <cuproof/internal/steps.h>

#include <cuproof/error.h>
#include <cuproof/internal/capture.h>
#include <cuproof/internal/collectives.h>
#include <cuproof/internal/grow.h>
#include <cuproof/units.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cp_metric_def step_metric_defs[] = {
#define CP_STEP_DEF_(name, type, label, unit, meaning) \
    {#name, label, unit, meaning, CP_METRIC_##type, offsetof(cp_step_row, name)},
    CP_STEP_METRIC_MAP(CP_STEP_DEF_)
#undef CP_STEP_DEF_
};

const cp_metric_def *cp_step_metric_defs(size_t *n)
{
    *n = sizeof step_metric_defs / sizeof step_metric_defs[0];
    return step_metric_defs;
}

const cp_metric_def *cp_step_metric_find(const char *name)
{
    return cp_metric_def_in(step_metric_defs, sizeof step_metric_defs / sizeof *step_metric_defs,
                            name);
}

/* The program's rule (cp_metric_needs), on the step's own counts, which
 * carry the same names. */
const char *cp_step_unmeasured(const cp_step_row *r, const cp_metric_def *d)
{
    const char *count;
    const char *why = cp_metric_needs(d->name, &count);
    const cp_metric_def *c = why ? cp_step_metric_find(count) : NULL;
    return c && cp_field_value(r, c) == 0 ? why : NULL;
}

/* ---- Windows ---- */

int cp_step_windows_init(cp_step_windows *s, const char *range)
{
    memset(s, 0, sizeof *s);
    if (!(s->range = strdup(range ? range : "step")))
        return cp_failf(CP_ENOMEM, "out of memory for the steps of range '%s'", range);
    return 0;
}

int cp_step_windows_learn(cp_step_windows *s, const cp_activity *a)
{
    if (a->kind == CP_ACT_RANGE && a->name && a->correlation &&
        strcmp(a->name, CP_CAPTURE_RANGE_NAME) == 0) {
        /* A capture window and its first occurrence: its steps count from it. */
        cp_step_window *c = cp_grow(s->caps, &s->caps_cap, s->ncaps, sizeof *c, 8);
        if (!c)
            return cp_failf(CP_ENOMEM, "out of memory for the capture windows");
        s->caps = c;
        s->caps[s->ncaps++] = (cp_step_window){a->process, a->correlation, a->start,
                                               a->end < a->start ? a->start : a->end};
        return 0;
    }
    if (a->kind != CP_ACT_RANGE || !a->name || strcmp(a->name, s->range) != 0)
        return 0;
    s->found = true;
    cp_step_window *w = cp_grow(s->w, &s->cap, s->n, sizeof *w, 64);
    if (!w)
        return cp_failf(CP_ENOMEM, "out of memory for the steps of range '%s'", s->range);
    s->w = w;
    s->w[s->n++] = (cp_step_window){.process = a->process,
                                    .start = a->start,
                                    .end = a->end < a->start ? a->start : a->end};
    return 0;
}

static int window_cmp(const void *a, const void *b)
{
    const cp_step_window *x = a, *y = b;
    if (x->process != y->process)
        return x->process < y->process ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* The capture window of process p that step w overlaps (its push comes
 * at the window's opening, a hair either side), or NULL. */
static const cp_step_window *cap_of(const cp_step_windows *s, const cp_step_window *w)
{
    for (size_t k = 0; k < s->ncaps; k++) {
        const cp_step_window *c = &s->caps[k];
        if (c->process == w->process && w->end > c->start && w->start < c->end)
            return c;
    }
    return NULL;
}

void cp_step_windows_finish(cp_step_windows *s)
{
    if (s->n)
        qsort(s->w, s->n, sizeof *s->w, window_cmp);
    if (s->ncaps)
        qsort(s->caps, s->ncaps, sizeof *s->caps, window_cmp);
    /* A process traced in windows (exec --capture) counts its steps from
     * each window's first occurrence, so that the ranks' step k is the
     * same step; a step of such a process outside every window (a marker
     * recorded on either side of one) is none of its steps. */
    const cp_step_window *before = NULL; /* the previous step's window */
    bool captured = false;               /* the process has windows */
    for (size_t i = 0; i < s->n; i++) {
        cp_step_window *w = &s->w[i];
        bool same = i > 0 && s->w[i - 1].process == w->process;
        if (!same) {
            before = NULL;
            captured = false;
            for (size_t k = 0; k < s->ncaps && !captured; k++)
                captured = s->caps[k].process == w->process;
        }
        if (!captured) {
            w->index = same && s->w[i - 1].index ? s->w[i - 1].index + 1 : 1;
            continue;
        }
        const cp_step_window *c = cap_of(s, w);
        w->index = !c ? 0 : before == c && s->w[i - 1].index ? s->w[i - 1].index + 1 : c->index;
        before = c;
    }
}

void cp_step_windows_free(cp_step_windows *s)
{
    free(s->range);
    free(s->w);
    free(s->caps);
    memset(s, 0, sizeof *s);
}

/* ---- Rows ---- */

/* The row of step `index` among n rows sorted by index, or NULL. */
static cp_step_row *row_of(cp_step_row *r, size_t n, uint32_t index)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && r[lo].index == index ? &r[lo] : NULL;
}

long cp_step_rows(const cp_step_windows *s, const cp_step_part *parts, cp_step_row **rows)
{
    *rows = NULL;
    /* One row per step index that some window has (a captured trace's
     * start past 1), in order. */
    uint32_t top = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->w[i].index > top)
            top = s->w[i].index;
    if (top == 0)
        return 0;
    bool *seen = calloc((size_t)top + 1, sizeof *seen);
    if (!seen)
        return cp_failf(CP_ENOMEM, "out of memory for %u steps", top);
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->w[i].index && !seen[s->w[i].index])
            seen[s->w[i].index] = true, n++;
    cp_step_row *r = calloc(n, sizeof *r);
    if (!r) {
        free(seen);
        return cp_failf(CP_ENOMEM, "out of memory for %zu steps", n);
    }
    for (uint32_t k = 1, j = 0; k <= top; k++)
        if (seen[k])
            r[j++] = (cp_step_row){.index = k, .late_rank = -1};
    free(seen);
    for (size_t i = 0; i < s->n; i++) {
        const cp_step_window *w = &s->w[i];
        if (!w->index)
            continue;
        cp_step_row *x = row_of(r, n, w->index);
        uint64_t len = w->end - w->start;
        x->processes++;
        if (len > x->step_ns)
            x->step_ns = len;
        if (!parts)
            continue;
        const cp_step_part *p = &parts[i];
        x->devices += p->devices;
        x->device_ns += len * p->devices;
        x->kernels += (uint32_t)p->kernels;
        x->kernel_busy_ns += p->kernel_busy_ns;
        x->kernel_sum_ns += p->kernel_sum_ns;
        x->copy_busy_ns += p->copy_busy_ns;
        x->copy_kernel_overlap_ns += p->copy_kernel_overlap_ns;
        x->idle_ns += len * p->devices - p->busy_ns;
        x->comm_busy_ns += p->comm_busy_ns;
        x->comm_compute_overlap_ns += p->comm_compute_overlap_ns;
    }
    for (size_t k = 0; k < n; k++) {
        cp_step_row *x = &r[k];
        x->exposed_comm_ns = x->comm_busy_ns - x->comm_compute_overlap_ns;
        x->copy_kernel_overlap_ratio =
            x->copy_busy_ns ? (double)x->copy_kernel_overlap_ns / (double)x->copy_busy_ns : NAN;
        x->comm_compute_overlap_ratio =
            x->comm_busy_ns ? (double)x->comm_compute_overlap_ns / (double)x->comm_busy_ns : NAN;
        x->exposed_comm_share = x->comm_busy_ns && x->device_ns
                                    ? (double)x->exposed_comm_ns / (double)x->device_ns
                                    : NAN;
    }
    *rows = r;
    return (long)n;
}

/* ---- The straggler per step ---- */

typedef struct step_span {
    uint64_t start, end;
    uint32_t row;
} step_span;

static int span_cmp(const void *a, const void *b)
{
    const step_span *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* (step, rank, lag), sorted so that a step's ranks and their lags come
 * together, lags ascending. */
typedef struct late {
    uint32_t row, rank;
    uint64_t lag;
} late;

static int late_cmp(const void *a, const void *b)
{
    const late *x = a, *y = b;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->lag > y->lag) - (x->lag < y->lag);
}

int cp_step_rows_put_arrivals(cp_step_row *rows, size_t n, const cp_step_windows *s,
                              const cp_collective_arrival *a, size_t na)
{
    if (n == 0 || na == 0)
        return 0;
    step_span *sp = calloc(n, sizeof *sp);
    late *l = malloc(na * sizeof *l);
    if (!sp || !l) {
        free(sp);
        free(l);
        return cp_failf(CP_ENOMEM, "out of memory placing %zu collectives in %zu steps", na, n);
    }
    for (size_t k = 0; k < n; k++)
        sp[k] = (step_span){UINT64_MAX, 0, (uint32_t)k};
    for (size_t i = 0; i < s->n; i++) {
        const cp_step_row *row = s->w[i].index ? row_of(rows, n, s->w[i].index) : NULL;
        if (!row)
            continue;
        step_span *x = &sp[row - rows];
        if (s->w[i].start < x->start)
            x->start = s->w[i].start;
        if (s->w[i].end > x->end)
            x->end = s->w[i].end;
    }
    qsort(sp, n, sizeof *sp, span_cmp);
    size_t nl = 0;
    for (size_t i = 0; i < na; i++) {
        if (a[i].first_ns < 0)
            continue;
        uint64_t t = (uint64_t)a[i].first_ns;
        /* The last span starting at or before t, if it still holds t. */
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (sp[mid].start <= t)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == 0 || t >= sp[lo - 1].end)
            continue;
        l[nl++] = (late){sp[lo - 1].row, a[i].last_rank, a[i].lag_ns};
    }
    qsort(l, nl, sizeof *l, late_cmp);
    for (size_t i = 0, j; i < nl; i = j) {
        /* One rank of one step: l[i..j). */
        for (j = i; j < nl && l[j].row == l[i].row && l[j].rank == l[i].rank; j++)
            ;
        cp_step_row *r = &rows[l[i].row];
        r->collectives += (uint32_t)(j - i);
        if ((uint32_t)(j - i) > r->late_count) {
            r->late_count = (uint32_t)(j - i);
            r->late_rank = (int32_t)l[i].rank;
            /* The median lag (the lower middle for an even count). */
            r->straggler_lag_ns = l[i + (j - i - 1) / 2].lag;
        }
    }
    free(sp);
    free(l);
    return 0;
}

/* ---- Summaries and verdicts ---- */

typedef struct valued {
    double v;
    uint32_t step;
} valued;

static int valued_cmp(const void *a, const void *b)
{
    const valued *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return (x->step > y->step) - (x->step < y->step);
}

/* The q-th percentile (1..100) of n sorted values, by nearest rank. */
static double nearest_rank(const valued *v, size_t n, int q)
{
    size_t rank = (size_t)ceil((double)q / 100.0 * (double)n);
    return v[rank ? rank - 1 : 0].v;
}

/* The steps' values of d that are measured, sorted; NULL when none is
 * or memory ran out (*n says which: 0 for none). */
static valued *sorted_values(const cp_step_row *rows, size_t n, const cp_metric_def *d, size_t *out)
{
    *out = 0;
    valued *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!cp_step_unmeasured(&rows[i], d))
            v[(*out)++] = (valued){cp_field_value(&rows[i], d), rows[i].index};
    qsort(v, *out, sizeof *v, valued_cmp);
    return v;
}

/* The summary of m sorted values (m may be 0). */
static void summarise_sorted(const valued *v, size_t m, cp_step_summary *out)
{
    memset(out, 0, sizeof *out);
    out->p50 = out->p95 = out->max = out->min = NAN;
    if (m == 0)
        return;
    out->measured = m;
    out->p50 = nearest_rank(v, m, 50);
    out->p95 = nearest_rank(v, m, 95);
    out->min = v[0].v;
    out->min_step = v[0].step;
    /* The first step of the largest value: ties go to the earliest. */
    size_t top = m - 1;
    while (top > 0 && v[top - 1].v == v[m - 1].v)
        top--;
    out->max = v[top].v;
    out->max_step = v[top].step;
}

void cp_step_summarise(const cp_step_row *rows, size_t n, const cp_metric_def *d,
                       cp_step_summary *out)
{
    size_t m;
    valued *v = sorted_values(rows, n, d, &m);
    summarise_sorted(v, v ? m : 0, out);
    free(v);
}

bool cp_step_late_rank(const cp_step_row *rows, size_t n, cp_step_late *out)
{
    memset(out, 0, sizeof *out);
    out->rank = -1;
    late *l = malloc((n ? n : 1) * sizeof *l);
    if (!l)
        return false;
    size_t nl = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].late_rank >= 0)
            l[nl++] = (late){0, (uint32_t)rows[i].late_rank, rows[i].straggler_lag_ns};
    qsort(l, nl, sizeof *l, late_cmp);
    /* Each rank's steps together, lags ascending: the longest run wins,
     * the lowest rank on a tie (it comes first). */
    for (size_t i = 0, j; i < nl; i = j) {
        for (j = i; j < nl && l[j].rank == l[i].rank; j++)
            ;
        if (j - i > out->steps) {
            out->rank = (int32_t)l[i].rank;
            out->steps = j - i;
            out->median_lag_ns = l[i + (j - i - 1) / 2].lag; /* the lower middle */
        }
    }
    out->with = nl;
    free(l);
    return nl > 0;
}

/* "median 12.0 ms, p95 12.9 ms, max 23.1 ms (step 17) over 3000 steps". */
static void describe_spread(const cp_step_summary *s, const cp_metric_def *d, size_t steps,
                            char *out, size_t len)
{
    char p50[48], p95[48], mx[48];
    cp_fmt_value(s->p50, d->unit, p50, sizeof p50);
    cp_fmt_value(s->p95, d->unit, p95, sizeof p95);
    cp_fmt_value(s->max, d->unit, mx, sizeof mx);
    int w = snprintf(out, len, "median %s, p95 %s, max %s (step %u) over %zu step%s", p50, p95,
                     mx, s->max_step, s->measured, s->measured == 1 ? "" : "s");
    if (w > 0 && (size_t)w < len && s->measured < steps)
        snprintf(out + w, len - (size_t)w, " (%zu of %zu without it)", steps - s->measured,
                 steps);
}

bool cp_step_judge(const cp_expectation *e, const cp_step_windows *s, const cp_step_row *rows,
                   size_t n, char *measured, size_t len)
{
    const cp_metric_def *d = cp_step_metric_find(e->name);
    if (!d || e->kind != CP_EXPECT_COMPARE) {
        snprintf(measured, len, "no per-step metric '%s'", e->name);
        return false;
    }
    if (!s->found || n == 0) {
        snprintf(measured, len, "no range named '%s' in the trace: no steps", s->range);
        return false;
    }
    uint64_t work = 0;
    for (size_t i = 0; i < n; i++)
        work += rows[i].kernels + rows[i].kernel_busy_ns + rows[i].copy_busy_ns;
    if (work == 0 && strcmp(d->name, "step_ns") != 0) {
        snprintf(measured, len, "no kernels or copies inside the %zu step%s of range '%s'", n,
                 n == 1 ? "" : "s", s->range);
        return false;
    }
    size_t m;
    valued *v = sorted_values(rows, n, d, &m);
    if (!v) {
        snprintf(measured, len, "out of memory judging %zu steps", n);
        return false;
    }
    if (m == 0) {
        snprintf(measured, len, "%s in every one of the %zu steps", cp_step_unmeasured(&rows[0], d),
                 n);
        free(v);
        return false;
    }
    cp_step_summary sum;
    summarise_sorted(v, m, &sum);
    char spread[200], value[48];
    describe_spread(&sum, d, n, spread, sizeof spread);
    bool ok;
    if (e->step_quantile) {
        double q = nearest_rank(v, m, e->step_quantile);
        ok = cp_expect_compare(q, e->op, e->value) && m == n;
        cp_fmt_value(q, d->unit, value, sizeof value);
        snprintf(measured, len, "p%d %s; %s", e->step_quantile, value, spread);
    } else {
        /* The worst step: a failing one before a passing one, then the
         * farthest from holding (cp_expect_badness, as 'every rank' names
         * its worst); the earliest on a tie. */
        size_t failing = 0, worst = 0;
        double worst_by = -INFINITY;
        bool worst_fails = false;
        for (size_t i = 0; i < m; i++) {
            bool holds = cp_expect_compare(v[i].v, e->op, e->value);
            failing += !holds;
            double by = cp_expect_badness(v[i].v, e->op, e->value);
            /* v is sorted by value, then step: a strict '>' keeps the
             * earliest of equals. */
            if (i == 0 || (!holds && !worst_fails) || (!holds == worst_fails && by > worst_by)) {
                worst = i;
                worst_by = by;
                worst_fails = !holds;
            }
        }
        ok = failing == 0 && m == n;
        cp_fmt_value(v[worst].v, d->unit, value, sizeof value);
        if (failing)
            snprintf(measured, len, "%zu of %zu steps fail; worst step %u: %s; %s", failing, n,
                     v[worst].step, value, spread);
        else
            snprintf(measured, len, "worst step %u: %s; %s", v[worst].step, value, spread);
    }
    /* A step with nothing to measure is no step that held. */
    if (m < n) {
        size_t used = strlen(measured), first = 0;
        while (first < n && !cp_step_unmeasured(&rows[first], d))
            first++;
        if (used < len)
            snprintf(measured + used, len - used, "; %s in %zu step%s (the first: step %u)",
                     cp_step_unmeasured(&rows[first], d), n - m, n - m == 1 ? "" : "s",
                     rows[first].index);
    }
    free(v);
    return ok;
}

long cp_step_rows_of_trace(const cp_trace *t, const char *range, const cp_timeline_opts *opts,
                           cp_step_windows *s, cp_step_row **rows)
{
    *rows = NULL;
    int rc = cp_step_windows_init(s, range);
    for (size_t i = 0; rc == 0 && i < t->n; i++)
        rc = cp_step_windows_learn(s, &t->items[i]);
    if (rc < 0)
        return rc;
    cp_step_windows_finish(s);
    cp_timeline_opts o = opts ? *opts : (cp_timeline_opts){0};
    o.steps = s->w;
    o.nsteps = s->n;
    cp_metrics m;
    if ((rc = cp_timeline_analyse(t, &o, &m)) < 0)
        return rc;
    long n = cp_step_rows(s, m.step_parts, rows);
    cp_metrics_free(&m);
    return n;
}

int cp_step_eval_trace_arrivals(const cp_expectation *e, const cp_trace *t,
                                const cp_timeline_opts *opts, const cp_collective_arrival *a,
                                size_t na, bool *ok, char *measured, size_t len)
{
    *ok = false;
    cp_step_windows s;
    cp_step_row *rows = NULL;
    long n = cp_step_rows_of_trace(t, e->step_range, opts, &s, &rows);
    int rc = n < 0 ? (int)n : cp_step_rows_put_arrivals(rows, (size_t)n, &s, a, na);
    if (rc == 0)
        *ok = cp_step_judge(e, &s, rows, (size_t)n, measured, len);
    free(rows);
    cp_step_windows_free(&s);
    return rc;
}

int cp_step_eval_trace(const cp_expectation *e, const cp_trace *t, const cp_timeline_opts *opts,
                       bool *ok, char *measured, size_t len)
{
    return cp_step_eval_trace_arrivals(e, t, opts, NULL, 0, ok, measured, len);
}
