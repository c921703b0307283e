/*
 * cuproof compare, one variant's timing: each side's runs of it gathered
 * from every report (a report is one run, or as many as its passes), the
 * samples pooled for the sample-level test (cp_compare_samples: the ratio
 * of medians, its bootstrap interval, the Mann-Whitney p) or the medians
 * alone (cp_compare_verdict), and the host-bound rule (compare/
 * compare_build.h). The verdict that counts is compare_runs.c's where
 * both sides have two runs or more.
 */
#include "compare/compare_build.h"

#include <cuproof/internal/compare_stats.h>
#include <cuproof/internal/margin.h>
#include <cuproof/internal/report.h>
#include <cuproof/internal/run_stats.h>
#include <cuproof/error.h>
#include <cuproof/expect.h>
#include <cuproof/stats.h>
#include <cuproof/units.h>

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *cp_compare_verdict(double old_ms, double old_sd, double new_ms, double new_sd,
                               double *change, double *noise)
{
    *change = (new_ms - old_ms) / old_ms;
    *noise = fmax(fmax(old_sd / old_ms, new_sd / new_ms), 0.02);
    if (fabs(*change) <= *noise)
        return "same";
    return *change < 0 ? "faster" : "slower";
}

/* ---- timing ---- */

/* A seed per case and variant (FNV-1a of the names): the same reports
 * always give the same intervals. */
static uint64_t seed_of(const char *c, const char *v)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *s = c; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    h = (h ^ '/') * 0x100000001b3ULL;
    for (const char *s = v; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

/* What one side holds of a variant: its runs, the timed values counted,
 * the smallest device share of its reports. */
typedef struct side_timing {
    cp_cmp_run *runs;
    size_t n, cap;
    size_t counted;    /* timing.runs summed: the values behind the medians */
    double share;      /* NAN when a report has no trace of it */
    bool every_sample; /* every run kept its samples */
    /* The runs' GPU time, a run at a time (the runs above are wall time
     * until the figure is chosen, cp_cmp_time_variant). */
    double *gpu_median;
    double **gpu_samples;
    size_t *ngpu;
    bool every_gpu;    /* every run measured the GPU's time */
    bool gpu_figure;   /* every report judges the variant on it */
    bool paced;        /* a report's events hold waits (cp_variant_judged_on_busy) */
    bool wall_figure;  /* every report judges it on wall time, by the case's choice */
    char why[160];     /* the first report's reason for wall time */
    double share_gpu;  /* the device share of the GPU's time; NAN as share */
} side_timing;

static void side_free(side_timing *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->runs[i].samples_ms);
        if (t->gpu_samples)
            free(t->gpu_samples[i]);
    }
    free(t->runs);
    free(t->gpu_median);
    free(t->gpu_samples);
    free(t->ngpu);
    memset(t, 0, sizeof *t);
}

/* Run t->n - 1's GPU time (a copy of its samples; none: 0, NULL, 0). */
static int add_gpu(side_timing *t, double median, const double *s, size_t ns)
{
    size_t i = t->n - 1;
    double *m = realloc(t->gpu_median, t->n * sizeof *m);
    if (m)
        t->gpu_median = m;
    double **g = realloc(t->gpu_samples, t->n * sizeof *g);
    if (g)
        t->gpu_samples = g;
    size_t *c = realloc(t->ngpu, t->n * sizeof *c);
    if (c)
        t->ngpu = c;
    if (!m || !g || !c)
        return CP_ENOMEM;
    t->gpu_median[i] = median;
    t->gpu_samples[i] = NULL;
    t->ngpu[i] = 0;
    if (ns) {
        if (!(t->gpu_samples[i] = malloc(ns * sizeof *s)))
            return CP_ENOMEM;
        memcpy(t->gpu_samples[i], s, ns * sizeof *s);
        t->ngpu[i] = ns;
    }
    t->every_gpu &= ns > 0 && median > 0;
    return 0;
}

/* The SM clock over a run: the mean of its known ends (0: unknown). */
static double sm_clock(const cp_clocks *before, const cp_clocks *after)
{
    if (before->known && after->known)
        return 0.5 * (before->sm_mhz + after->sm_mhz);
    return before->known ? before->sm_mhz : after->known ? after->sm_mhz : 0;
}

static int add_run(side_timing *t, size_t report, double median, double sd, const double *s,
                   size_t ns, const cp_clocks *before, const cp_clocks *after, uint64_t busy)
{
    double sm_mhz = sm_clock(before, after);
    cp_cmp_run *r = push(&t->runs, &t->n, &t->cap, sizeof *r);
    if (!r)
        return CP_ENOMEM;
    r->report = report;
    r->median_ms = median;
    r->stddev_ms = sd;
    r->sm_mhz = sm_mhz;
    r->own_ns = busy;
    r->throttle = before->throttle_reasons | after->throttle_reasons;
    if (ns) {
        if (!(r->samples_ms = malloc(ns * sizeof *s)))
            return CP_ENOMEM;
        memcpy(r->samples_ms, s, ns * sizeof *s);
        r->nsamples = ns;
    }
    t->every_sample &= ns > 0;
    return 0;
}

/* Every run of case/variant on a side: a report whose variant has passes
 * gives one run each, any other that timed it one run. */
static int side_runs(const side_case *s, const char *vname, side_timing *t)
{
    int rc = 0;
    memset(t, 0, sizeof *t);
    t->every_sample = t->every_gpu = t->gpu_figure = t->wall_figure = true;
    bool first = true;
    for (size_t i = 0; i < s->n; i++) {
        const cp_variant_result *v = cp_case_variant(s->of[i], vname);
        if (!v || !(v->timing.median_ms > 0))
            continue;
        if (v->nruns) {
            for (size_t k = 0; k < v->nruns; k++) {
                const cp_run_value *r = &v->runs[k];
                CP_TRY(add_run(t, i, r->median_ms, NAN, r->samples_ms, r->nsamples,
                               &r->clocks_before, &r->clocks_after, cp_pass_own_ns(r)));
                CP_TRY(add_gpu(t, r->gpu_median_ms, r->gpu_samples_ms, r->ngpu_samples));
            }
        } else {
            CP_TRY(add_run(t, i, v->timing.median_ms, v->timing.stddev_ms, v->samples_ms,
                           v->nsamples, &v->clocks_before, &v->clocks_after,
                           cp_variant_own_ns(v)));
            CP_TRY(add_gpu(t, v->gpu_timing.median_ms, v->gpu_samples_ms, v->ngpu_samples));
        }
        t->counted += v->timing.runs > 0 ? (size_t)v->timing.runs : 0;
        t->gpu_figure &= v->figure == CP_WORK_GPU;
        t->paced |= cp_variant_judged_on_busy(v);
        t->wall_figure &= cp_variant_declared_wall(v);
        if (first && v->figure == CP_WORK_WALL)
            snprintf(t->why, sizeof t->why, "%s", v->figure_why);
        double share = cp_variant_device_share(v, v->timing.median_ms),
               gshare = cp_variant_device_share(v, v->gpu_timing.median_ms);
        t->share = first ? share : isnan(share) || isnan(t->share) ? NAN : fmin(t->share, share);
        t->share_gpu = first                                ? gshare
                       : isnan(gshare) || isnan(t->share_gpu) ? NAN
                                                              : fmin(t->share_gpu, gshare);
        first = false;
    }
out:
    return rc;
}

/* The median of a side's runs' wall-time medians. */
static double wall_of(const side_timing *t)
{
    double *m = malloc((t->n + 1) * sizeof *m);
    if (!m)
        return NAN;
    for (size_t i = 0; i < t->n; i++)
        m[i] = t->runs[i].wall_median_ms;
    double w = cp_median_inplace(m, t->n);
    free(m);
    return w;
}

/* The figure variant v is judged on (cp_cmp_variant.judged_on): the
 * GPU's time where every run of both sides measured it and every report
 * judges on it; then each run's median and samples become the GPU's, its
 * wall time kept beside. Else wall time, and why. */
static void choose_figure(cp_cmp_variant *v, side_timing *a, side_timing *b)
{
    for (size_t i = 0; i < a->n; i++)
        a->runs[i].wall_median_ms = a->runs[i].median_ms;
    for (size_t i = 0; i < b->n; i++)
        b->runs[i].wall_median_ms = b->runs[i].median_ms;
    v->declared_wall = a->wall_figure && b->wall_figure;
    bool gpu = a->every_gpu && b->every_gpu && a->gpu_figure && b->gpu_figure;
    if (!gpu) {
        v->judged_on = CP_WORK_WALL;
        const char *why = a->why[0] && !a->gpu_figure ? a->why
                          : b->why[0] && !b->gpu_figure ? b->why
                          : !a->every_gpu ? "wall time only: the old side has no GPU time"
                                          : "wall time only: the new side has no GPU time";
        snprintf(v->judged_why, sizeof v->judged_why, "%s", why);
        return;
    }
    v->judged_on = CP_WORK_GPU;
    /* Events that hold waits (the GPU busy with its own work less than
     * CP_CMP_EVENTS_SHARE of them: cp_variant_judged_on_busy): the
     * figure is then each run's own busy time, where every run has one. */
    bool paced = a->paced || b->paced;
    for (size_t i = 0; paced && i < a->n; i++)
        paced = a->runs[i].own_ns > 0;
    for (size_t i = 0; paced && i < b->n; i++)
        paced = b->runs[i].own_ns > 0;
    v->by_busy = paced;
    side_timing *sides[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        side_timing *t = sides[s];
        t->every_sample = !paced;
        for (size_t i = 0; i < t->n; i++) {
            cp_cmp_run *r = &t->runs[i];
            free(r->samples_ms);
            r->samples_ms = paced ? NULL : t->gpu_samples[i];
            r->nsamples = paced ? 0 : t->ngpu[i];
            if (!paced)
                t->gpu_samples[i] = NULL;
            r->median_ms = paced ? (double)r->own_ns / 1e6 : t->gpu_median[i];
            if (paced) {
                r->stddev_ms = NAN;
                continue;
            }
            /* A whole report's spread is of its GPU samples now. */
            if (!isnan(r->stddev_ms)) {
                cp_timing g;
                r->stddev_ms = cp_timing_compute(r->samples_ms, r->nsamples, &g) == 0
                                   ? g.stddev_ms
                                   : NAN;
            }
        }
    }
    v->old_wall_ms = wall_of(a);
    v->new_wall_ms = wall_of(b);
}

/* Every sample of a side's runs in one array (malloc'd, *n of them). */
static double *pooled(const side_timing *t, size_t *n)
{
    size_t total = 0;
    for (size_t i = 0; i < t->n; i++)
        total += t->runs[i].nsamples;
    *n = 0;
    double *v = total ? malloc(total * sizeof *v) : NULL;
    for (size_t i = 0; v && i < t->n; i++) {
        memcpy(v + *n, t->runs[i].samples_ms, t->runs[i].nsamples * sizeof *v);
        *n += t->runs[i].nsamples;
    }
    return v;
}

/* A side's median and spread: its one run's, else the median and the
 * standard deviation of its runs' medians (the spread between runs). */
static int side_summary(const side_timing *t, double *median, double *sd)
{
    if (t->n == 1) {
        *median = t->runs[0].median_ms;
        *sd = t->runs[0].stddev_ms;
        return 0;
    }
    double *m = malloc(t->n * sizeof *m), mean = 0, ss = 0;
    if (!m)
        return CP_ENOMEM;
    for (size_t i = 0; i < t->n; i++)
        mean += (m[i] = t->runs[i].median_ms) / (double)t->n;
    for (size_t i = 0; i < t->n; i++)
        ss += (m[i] - mean) * (m[i] - mean);
    *sd = sqrt(ss / (double)(t->n - 1));
    *median = cp_median_inplace(m, t->n);
    free(m);
    return 0;
}

/* The verdict on one variant from its runs on both sides (v's names,
 * medians and runs set). */
static int timing_verdict(cp_cmp_variant *v, const side_timing *a, const side_timing *b,
                          const cp_comparison *c)
{
    int rc = 0;
    size_t na = 0, nb = 0;
    double *sa = NULL, *sb = NULL, sda = NAN, sdb = NAN;
    CP_TRY(side_summary(a, &v->old_median_ms, &sda));
    CP_TRY(side_summary(b, &v->new_median_ms, &sdb));
    /* Every run's samples pooled: the sample-level test. The verdict that
     * counts rests on the runs (run_verdicts, below), which replaces this
     * one and keeps it only as the samples' finding. */
    if (a->every_sample && b->every_sample) {
        sa = pooled(a, &na);
        sb = pooled(b, &nb);
        if (!sa || !sb)
            CP_TRY(CP_ENOMEM);
    }
    cp_cmp_result st;
    v->samples = sa && sb &&
                 cp_compare_samples(sa, na, sb, nb, c->threshold, min_effect_of(v, c),
                                    seed_of(v->case_name, v->variant), &st) == 0;
    v->ci_low = v->ci_high = v->p = NAN;
    v->old_shown_ms = v->old_median_ms;
    v->new_shown_ms = v->new_median_ms;
    if (v->samples) {
        snprintf(v->verdict, sizeof v->verdict, "%s", cp_cmp_verdict_name(st.verdict));
        v->ratio = st.ratio;
        /* st.ratio is of the pooled samples' medians (compare_stats.h). */
        v->old_shown_ms = cp_median_inplace(sa, na);
        v->new_shown_ms = cp_median_inplace(sb, nb);
        v->ci_low = st.ci_low;
        v->ci_high = st.ci_high;
        v->p = st.p;
        v->old_samples = st.n_old;
        v->new_samples = st.n_new;
    } else {
        double change, noise;
        snprintf(v->verdict, sizeof v->verdict, "%s",
                 cp_compare_verdict(v->old_median_ms, isnan(sda) ? 0 : sda, v->new_median_ms,
                                    isnan(sdb) ? 0 : sdb, &change, &noise));
        v->ratio = v->new_median_ms / v->old_median_ms;
        v->old_samples = a->counted;
        v->new_samples = b->counted;
    }
out:
    free(sa);
    free(sb);
    return rc;
}

/* Host-bound (or untraced, so it cannot be told): a change within the
 * host threshold is noise this comparison cannot rule out, whatever the
 * processes' own runs say. */
void cp_cmp_host_rule(cp_cmp_variant *v, double share, const cp_comparison *c)
{
    v->device_share = share;
    /* The own busy time is the GPU's, however the host paced it. */
    v->host_bound = !v->by_busy && !(share >= CP_CMP_DEVICE_SHARE);
    double moved = v->ratio >= 1 ? v->ratio - 1 : 1 / v->ratio - 1;
    bool changed = strcmp(v->verdict, "slower") == 0 || strcmp(v->verdict, "faster") == 0;
    if (v->host_bound && changed && moved <= c->host_threshold) {
        if (isnan(share))
            snprintf(v->why, sizeof v->why, "untraced: host-bound or not cannot be told");
        else {
            /* "busy 0.4% of the run", never "busy 0%" (cuproof/units.h). */
            char busy[24];
            snprintf(v->why, sizeof v->why, "host-bound: the GPU was busy %s of the run",
                     cp_fmt_percent(share, busy, sizeof busy));
        }
        snprintf(v->verdict, sizeof v->verdict, "noisy");
        v->reports_needed = 2;
    }
}

int cp_cmp_time_variant(cp_comparison *c, caps *k, const side_case *o, const side_case *n,
                        size_t case_index, const char *vname)
{
    const char *cname = o->name;
    int rc = 0;
    side_timing a = {0}, b = {0};
    CP_TRY(side_runs(o, vname, &a));
    CP_TRY(side_runs(n, vname, &b));
    if (a.n == 0 || b.n == 0)
        goto out;
    cp_cmp_variant *v = push(&c->variants, &c->nvariants, &k->variants, sizeof *v);
    if (!v)
        CP_TRY(CP_ENOMEM);
    snprintf(v->case_name, sizeof v->case_name, "%s", cname);
    snprintf(v->variant, sizeof v->variant, "%s", vname);
    v->case_index = case_index;
    choose_figure(v, &a, &b);
    CP_TRY(timing_verdict(v, &a, &b, c));
    /* The runs move into the comparison, which frees them from now on. */
    v->old_runs = a.runs;
    v->n_old_runs = a.n;
    v->new_runs = b.runs;
    v->n_new_runs = b.n;
    a.runs = b.runs = NULL;
    a.n = b.n = 0;
    /* The host rule reads the device's share of the figure judged; a
     * variant the case judges on wall time is judged at the host
     * threshold by compare_figure.c instead. */
    double sa = v->judged_on == CP_WORK_GPU ? a.share_gpu : a.share;
    double sb = v->judged_on == CP_WORK_GPU ? b.share_gpu : b.share;
    cp_cmp_host_rule(v, isnan(sa) || isnan(sb) ? NAN : fmin(sa, sb), c);
    mark_slower(v, c);
out:
    side_free(&a);
    side_free(&b);
    return rc;
}
