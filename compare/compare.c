/*
 * cuproof compare, loading and comparing: each side's reports read once
 * (cp_compare_load), then one cp_comparison filled from them
 * (cp_compare_build), which every output prints (compare_text.c,
 * compare_json.c, compare_html.c). First whether the reports can be
 * compared at all (the same GPU, driver and profile, across the sides and
 * within each). Then per case and variant timed on both sides: each
 * report is one run of it (or as many as its passes of `cuproof run
 * --runs K`); when every run kept its timed samples, the ratio of medians
 * with a bootstrap interval, the Mann-Whitney p-value and
 * cp_compare_samples' verdict; else the medians only, with the older rule
 * of cp_compare_verdict. Then the checks, case statuses and claims whose
 * result changed, and the findings raised or cleared (docs/compare.md,
 * "How a verdict is computed").
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

static int side_reports(cp_cmp_report **out, const cp_compare_side *s)
{
    if (!(*out = calloc(s->n, sizeof **out)))
        return CP_ENOMEM;
    for (size_t i = 0; i < s->n; i++) {
        cp_cmp_report *r = &(*out)[i];
        const cp_report *src = &s->reports[i];
        snprintf(r->path, sizeof r->path, "%s", s->paths ? s->paths[i] : "");
        snprintf(r->gpu_name, sizeof r->gpu_name, "%s", src->env.gpu_name);
        r->driver_version = src->env.driver_version;
        snprintf(r->profile, sizeof r->profile, "%s", src->profile);
        snprintf(r->date, sizeof r->date, "%s", src->date);
    }
    return 0;
}

/* The regressions the comparison holds: variants, checks, case statuses,
 * claims, trace metrics and findings, each marked where it was judged. */
static int count_regressions(const cp_comparison *c)
{
    int n = 0;
    for (size_t i = 0; i < c->nvariants; i++)
        n += c->variants[i].regression;
    for (size_t i = 0; i < c->nchecks; i++)
        n += c->checks[i].regression;
    for (size_t i = 0; i < c->ncases; i++)
        n += c->cases[i].regression;
    for (size_t i = 0; i < c->nclaims; i++)
        n += c->claims[i].regression;
    for (size_t i = 0; i < c->nmetrics; i++)
        n += c->metrics[i].regression;
    for (size_t i = 0; i < c->nfindings; i++)
        n += c->findings[i].regression;
    return n;
}

/* The verdicts counted and what the noisy ones rest on (cp_comparison's
 * verdict_counts to median_spread). */
static int summarise(cp_comparison *c)
{
    double *spreads = malloc((c->nvariants ? c->nvariants : 1) * sizeof *spreads);
    double *needed = malloc((c->nvariants ? c->nvariants : 1) * sizeof *needed);
    if (!spreads || !needed) {
        free(spreads);
        free(needed);
        return CP_ENOMEM;
    }
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_cmp_variant *v = &c->variants[i];
        for (size_t k = 0; k < CP_CMP_NVERDICTS; k++)
            c->verdict_counts[k] += strcmp(v->verdict, cp_cmp_summary_verdict(k)) == 0;
        c->on_gpu += v->judged_on == CP_WORK_GPU;
        c->on_busy += v->judged_on == CP_WORK_GPU && v->by_busy;
        c->on_declared_wall += v->judged_on == CP_WORK_WALL && v->declared_wall;
        c->wall_only += v->judged_on == CP_WORK_WALL && !v->declared_wall;
        if (v->by_runs)
            spreads[c->runs_compared++] =
                v->spread_old > v->spread_new ? v->spread_old : v->spread_new;
        /* A capped count is "more than the most": above it in the order. */
        if (strcmp(v->verdict, "noisy") == 0 && !v->reports_needed && v->runs_needed)
            needed[c->noisy_with_runs++] = (double)v->runs_needed + (v->runs_capped ? 1 : 0);
    }
    c->median_spread = c->runs_compared ? cp_median_inplace(spreads, c->runs_compared) : 0;
    c->median_runs_needed =
        c->noisy_with_runs ? (size_t)ceil(cp_median_inplace(needed, c->noisy_with_runs)) : 0;
    c->median_runs_capped = c->median_runs_needed >= CP_RUN_MAX_RUNS;
    if (c->median_runs_capped)
        c->median_runs_needed = CP_RUN_MAX_RUNS;
    if (c->verdict_counts[CP_CMP_COUNT_NOISY] && c->runs_compared) {
        int at = snprintf(c->noisy_note, sizeof c->noisy_note,
                          "the runs of the %zu variant%s compared by runs spread by a median "
                          "%.1f%%; a %g%% change is decided only where runs spread little "
                          "(docs/compare.md)",
                          c->runs_compared, c->runs_compared == 1 ? "" : "s",
                          100 * c->median_spread, 100 * c->threshold);
        if (c->noisy_with_runs && at > 0 && (size_t)at < sizeof c->noisy_note)
            snprintf(c->noisy_note + at, sizeof c->noisy_note - (size_t)at,
                     "; the noisy would need a median of %zu runs a side%s", c->median_runs_needed,
                     c->median_runs_capped ? " or more" : "");
    }
    if (c->nvariants)
        snprintf(c->figure_note, sizeof c->figure_note,
                 "%zu variant%s judged on the GPU's time (%zu of them on their traced runs' "
                 "own busy time: their events hold waits; wall time beside it, judged past "
                 "+%.0f%%), %zu on wall time by their case's choice (at the host threshold), "
                 "%zu on wall time only (a side without GPU time: a report before schema 1.14)",
                 c->on_gpu, c->on_gpu == 1 ? "" : "s", c->on_busy, 100 * c->host_threshold,
                 c->on_declared_wall, c->wall_only);
    free(spreads);
    free(needed);
    return 0;
}

int cp_compare_build(const cp_compare_side *o, const cp_compare_side *n,
                     const cp_compare_options *opt, cp_comparison *c)
{
    int rc = 0;
    caps k = {0};
    memset(c, 0, sizeof *c);
    if (!o->n || !n->n)
        return cp_failf(CP_EINVAL, "compare needs at least one report a side");
    c->threshold = opt ? opt->threshold : 0.10;
    c->min_effect = opt ? opt->min_effect : CP_CMP_MIN_EFFECT;
    c->host_threshold = opt ? opt->host_threshold : CP_CMP_HOST_THRESHOLD;
    c->forced = opt && opt->force;
    c->n_old_reports = o->n;
    c->n_new_reports = n->n;
    CP_TRY(side_reports(&c->old_reports, o));
    CP_TRY(side_reports(&c->new_reports, n));
    CP_TRY(cp_cmp_env_reasons(c, &k, &o->reports[0], &n->reports[0], ""));
    cp_cmp_layout_warning(c, o, n);
    CP_TRY(cp_cmp_side_reasons(c, &k, o, "old"));
    CP_TRY(cp_cmp_side_reasons(c, &k, n, "new"));
    c->comparable = c->nreasons == 0;
    /* The old side's cases in order, each once however many of its
     * reports hold it. */
    for (size_t r = 0; r < o->n; r++)
        for (size_t i = 0; i < o->reports[r].ncases; i++) {
            const cp_case_result *ca = &o->reports[r].cases[i];
            bool seen = false;
            for (size_t q = 0; q < r && !seen; q++)
                seen = cp_report_case(&o->reports[q], ca->name) != NULL;
            for (size_t q = 0; q < i && !seen; q++)
                seen = strcmp(o->reports[r].cases[q].name, ca->name) == 0;
            if (seen)
                continue;
            CP_TRY(cp_cmp_compare_case(c, &k, o, n, ca, c->ncase_names++));
        }
    /* The timing verdicts again with the run as the unit, then every
     * regression counted once, from what the comparison holds. */
    CP_TRY(cp_cmp_run_verdicts(c));
    cp_cmp_figure_verdicts(c);
    CP_TRY(summarise(c));
    c->regressions = count_regressions(c);
out:
    if (rc == CP_ENOMEM)
        rc = cp_failf(CP_ENOMEM, "out of memory comparing %s and %s",
                      o->paths ? o->paths[0] : "the old reports",
                      n->paths ? n->paths[0] : "the new reports");
    if (rc < 0)
        cp_comparison_free(c);
    return rc;
}

void cp_comparison_free(cp_comparison *c)
{
    for (size_t i = 0; c->variants && i < c->nvariants; i++) {
        cp_cmp_variant *v = &c->variants[i];
        for (size_t r = 0; r < v->n_old_runs; r++)
            free(v->old_runs[r].samples_ms);
        for (size_t r = 0; r < v->n_new_runs; r++)
            free(v->new_runs[r].samples_ms);
        free(v->old_runs);
        free(v->new_runs);
    }
    free(c->variants);
    free(c->old_reports);
    free(c->new_reports);
    free(c->reasons);
    free(c->checks);
    free(c->cases);
    free(c->claims);
    free(c->findings);
    free(c->metrics);
    free(c->tight);
    memset(c, 0, sizeof *c);
}

int cp_compare_files(const char *const *old_paths, size_t n_old, const char *const *new_paths,
                     size_t n_new, const cp_compare_options *opt, cp_comparison *out,
                     cp_errors *bad)
{
    int rc = 0;
    cp_report *a = NULL, *b = NULL;
    char **pa = NULL, **pb = NULL;
    size_t ka = 0, kb = 0;
    memset(out, 0, sizeof *out);
    CP_TRY(cp_compare_load(old_paths, n_old, &a, &pa, &ka, bad));
    CP_TRY(cp_compare_load(new_paths, n_new, &b, &pb, &kb, bad));
    if (ka == 0 || kb == 0) {
        /* A side with no report left: nothing to compare; every report
         * that could not be read is named. */
        rc = cp_errors_finish(bad);
        goto out;
    }
    cp_compare_side o = {a, (const char *const *)pa, ka};
    cp_compare_side n = {b, (const char *const *)pb, kb};
    rc = cp_compare_build(&o, &n, opt, out);
out:
    cp_compare_unload(a, pa, a ? ka : 0);
    cp_compare_unload(b, pb, b ? kb : 0);
    return rc;
}

void cp_cmp_shown_times(const cp_cmp_variant *v, int ratio_decimals, char *t_new, char *t_old,
                        size_t size)
{
    bool set = v->old_shown_ms > 0 && v->new_shown_ms > 0;
    cp_fmt_ms_pair(set ? v->new_shown_ms : v->new_median_ms,
                   set ? v->old_shown_ms : v->old_median_ms, ratio_decimals, t_new, t_old, size);
}
