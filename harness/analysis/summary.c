/* A timeline's summary (cuproof/summary.h): columns of busy time per lane,
 * built in two passes that never hold the records. */
#include <cuproof/summary.h>

#include <cuproof/error.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

cp_summary_kind cp_summary_kind_of(const cp_activity *a)
{
    return a->kind == CP_ACT_RANGE        ? CP_SUMMARY_RANGE
           : a->kind == CP_ACT_KERNEL     ? CP_SUMMARY_KERNEL
           : a->kind == CP_ACT_MEMSET     ? CP_SUMMARY_MEMSET
           : a->copy_dir == CP_COPY_HTOD ? CP_SUMMARY_HTOD
           : a->copy_dir == CP_COPY_DTOH ? CP_SUMMARY_DTOH
                                         : CP_SUMMARY_COPY;
}

long cp_summary_lane(const cp_metrics *m, const cp_activity *a)
{
    if (a->kind == CP_ACT_RUNTIME)
        return -1;
    return a->kind == CP_ACT_RANGE ? (long)m->nlanes : cp_metrics_lane_index(m, a);
}

void cp_summary_span_add(cp_summary_span *sp, const cp_activity *a)
{
    sp->all++;
    if (a->kind == CP_ACT_RUNTIME)
        return;
    sp->records++;
    if (a->start < sp->origin)
        sp->origin = a->start;
    if (a->end > sp->end)
        sp->end = a->end;
}

int cp_summary_init(cp_summary *s, const cp_metrics *m, const cp_summary_span *sp, uint32_t nbins)
{
    memset(s, 0, sizeof *s);
    if (nbins == 0)
        return cp_failf(CP_EINVAL, "a timeline summary needs at least one column");
    bool empty = sp->records == 0 || sp->origin > sp->end;
    s->origin = empty ? 0 : sp->origin;
    s->end = empty ? 0 : sp->end;
    s->records = sp->records;
    s->all = sp->all;
    s->nlanes = (uint32_t)m->nlanes + 1;
    s->nbins = nbins;
    s->width_ns = (double)(s->end - s->origin) / nbins;
    if (s->width_ns <= 0)
        s->width_ns = 1;
    size_t cells = (size_t)s->nlanes * nbins;
    s->busy = calloc(cells * CP_SUMMARY_KINDS, sizeof *s->busy);
    s->count = calloc(cells, sizeof *s->count);
    if (!s->busy || !s->count) {
        cp_summary_free(s);
        return cp_failf(CP_ENOMEM, "out of memory for a timeline summary of %zu columns", cells);
    }
    return 0;
}

void cp_summary_add(cp_summary *s, const cp_metrics *m, const cp_activity *a)
{
    long lane = cp_summary_lane(m, a);
    if (lane < 0 || (uint32_t)lane >= s->nlanes || a->start < s->origin || !s->count)
        return;
    cp_summary_kind kind = cp_summary_kind_of(a);
    double start = (double)(a->start - s->origin);
    double end = (double)((a->end > a->start ? a->end : a->start) - s->origin);
    size_t first = (size_t)(start / s->width_ns), last = (size_t)(end / s->width_ns);
    if (first >= s->nbins)
        first = s->nbins - 1;
    if (last >= s->nbins)
        last = s->nbins - 1;
    for (size_t k = first; k <= last; k++) {
        double lo = fmax(start, (double)k * s->width_ns);
        double hi = fmin(end, (double)(k + 1) * s->width_ns);
        size_t cell = (size_t)lane * s->nbins + k;
        if (hi > lo)
            s->busy[cell * CP_SUMMARY_KINDS + kind] += hi - lo;
        s->count[cell]++;
    }
}

uint32_t cp_summary_cell(const cp_summary *s, size_t cell, cp_summary_kind *busiest, double *level)
{
    const double *busy = &s->busy[cell * CP_SUMMARY_KINDS];
    int best = 0;
    double sum = 0;
    for (int k = 0; k < CP_SUMMARY_KINDS; k++) {
        sum += busy[k];
        if (busy[k] > busy[best])
            best = k;
    }
    *busiest = (cp_summary_kind)best;
    /* Overlapping records on one lane can add up past the column. */
    *level = fmin(1.0, sum / s->width_ns);
    return s->count[cell];
}

void cp_summary_free(cp_summary *s)
{
    if (!s)
        return;
    free(s->busy);
    free(s->count);
    s->busy = NULL;
    s->count = NULL;
}
