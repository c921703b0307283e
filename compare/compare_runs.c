/*
 * cuproof compare with the run as the unit: each variant's runs a side
 * (their medians, or SM cycles, or device time) tested against each
 * other with the comparison's shared spread between runs
 * (cp_compare_runs_prior), the runs that would decide a noisy one, and
 * drift: the clocks or the device time moving where the time moved
 * (compare/compare_build.h).
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

/* ---- The run as the unit ---- */

/* One value per run of a side (its median, or the median scaled by the
 * run's clock or replaced by its device time), into `out`; false when a
 * run lacks the figure. */
typedef enum { BY_TIME, BY_CYCLES, BY_DEVICE } run_figure;

static bool run_values(const cp_cmp_run *r, size_t n, run_figure f, double *out, double *rse)
{
    for (size_t i = 0; i < n; i++) {
        if (f == BY_TIME)
            out[i] = r[i].median_ms;
        else if (f == BY_CYCLES)
            out[i] = r[i].median_ms * r[i].sm_mhz; /* ms x MHz: SM kilocycles */
        else
            out[i] = (double)r[i].own_ns;
        if (!(out[i] > 0))
            return false;
        /* A run's own precision (rse may be NULL: not wanted): the
         * relative standard error of its median from its samples. */
        if (rse)
            rse[i] = f == BY_TIME ? cp_median_rse_log(r[i].samples_ms, r[i].nsamples) : 0;
    }
    return true;
}

/* The comparison's shared spread: every variant with two runs or more a
 * side gives its pooled between-run variance (cp_runs_prior_from). */
static int shared_spread(const cp_comparison *c, cp_runs_prior *prior)
{
    memset(prior, 0, sizeof *prior);
    double *vars = malloc((c->nvariants + 1) * sizeof *vars);
    double *dfs = malloc((c->nvariants + 1) * sizeof *dfs);
    size_t n = 0, most = 1;
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_cmp_variant *v = &c->variants[i];
        most = v->n_old_runs > most ? v->n_old_runs : most;
        most = v->n_new_runs > most ? v->n_new_runs : most;
    }
    double *a = malloc(most * sizeof *a), *b = malloc(most * sizeof *b);
    int rc = vars && dfs && a && b ? 0 : CP_ENOMEM;
    for (size_t i = 0; rc == 0 && i < c->nvariants; i++) {
        const cp_cmp_variant *v = &c->variants[i];
        if (v->n_old_runs < 2 || v->n_new_runs < 2 ||
            !run_values(v->old_runs, v->n_old_runs, BY_TIME, a, NULL) ||
            !run_values(v->new_runs, v->n_new_runs, BY_TIME, b, NULL))
            continue;
        rc = cp_runs_variance(a, v->n_old_runs, b, v->n_new_runs, &vars[n], &dfs[n]);
        n += rc == 0;
    }
    if (rc == 0)
        rc = cp_runs_prior_from(vars, dfs, n, prior);
    free(vars);
    free(dfs);
    free(a);
    free(b);
    return rc;
}

/* The runs' geometric means, which a ratio by runs is of (run_stats.h),
 * as the times shown beside it, where they give it back; else the
 * medians stay shown. */
static void shown_by_runs(cp_cmp_variant *v)
{
    double *lo = malloc((v->n_old_runs + 1) * sizeof *lo);
    double *ln = malloc((v->n_new_runs + 1) * sizeof *ln);
    for (size_t i = 0; lo && i < v->n_old_runs; i++)
        lo[i] = v->old_runs[i].median_ms;
    for (size_t i = 0; ln && i < v->n_new_runs; i++)
        ln[i] = v->new_runs[i].median_ms;
    double go = lo ? cp_geomean(lo, v->n_old_runs) : NAN;
    double gn = ln ? cp_geomean(ln, v->n_new_runs) : NAN;
    if (isfinite(go) && isfinite(gn) && go > 0 && fabs(gn / go / v->ratio - 1) < 1e-9) {
        v->old_shown_ms = go;
        v->new_shown_ms = gn;
    }
    free(lo);
    free(ln);
}

/* The run-level test of variant v on figure f; false when a run lacks
 * the figure. */
static int runs_test(const cp_cmp_variant *v, run_figure f, const cp_comparison *c,
                     const cp_runs_prior *prior, cp_run_cmp *out, bool *done)
{
    size_t most = v->n_old_runs > v->n_new_runs ? v->n_old_runs : v->n_new_runs;
    double *a = malloc(most * sizeof *a), *b = malloc(most * sizeof *b);
    double *ra = malloc(most * sizeof *ra), *rb = malloc(most * sizeof *rb);
    int rc = a && b && ra && rb ? 0 : CP_ENOMEM;
    *done = false;
    if (rc == 0 && run_values(v->old_runs, v->n_old_runs, f, a, ra) &&
        run_values(v->new_runs, v->n_new_runs, f, b, rb)) {
        /* The shared spread is of times, and of cycles alike (a clock
         * scales a run, not its spread); the device's own figure is
         * judged on its own runs. */
        rc = cp_compare_runs_prior(a, v->n_old_runs, b, v->n_new_runs, f == BY_TIME ? ra : NULL,
                                   f == BY_TIME ? rb : NULL, c->threshold, min_effect_of(v, c),
                                   f == BY_DEVICE ? NULL : prior, out);
        *done = rc == 0;
    }
    free(a);
    free(b);
    free(ra);
    free(rb);
    return rc;
}

/* The distinct reports (invocations of cuproof) a side's runs come from. */
static size_t reports_of(const cp_cmp_run *r, size_t n)
{
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = r[k].report == r[i].report;
        distinct += !seen;
    }
    return distinct;
}

/* The mean SM clock of a side's runs (0: unknown for one). */
static double side_clock(const cp_cmp_run *r, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(r[i].sm_mhz > 0))
            return 0;
        sum += r[i].sm_mhz;
    }
    return n ? sum / (double)n : 0;
}

/* A slowdown that equal clocks or the device's own time do not show is
 * drift, with its reason. */
static int drift_check(cp_cmp_variant *v, const cp_comparison *c, const cp_runs_prior *prior)
{
    cp_run_cmp t;
    bool done = false;
    int rc = 0;
    /* Drift is shown, not presumed: the slowdown must disappear, the
     * interval of the other figure's ratio lying wholly below half of the
     * time's slowdown. By the clock only where the clocks differ (2% or
     * more); by the device time only for a device-bound variant. Neither
     * "noisy" nor a smaller but real growth is drift: on the H100, 10%
     * more work grew streams-pinned's GPU time by 7.4% and its time by
     * 9.8%, a slowdown. */
    double half_way = 1 + (v->ratio - 1) / 2;
    double oc = side_clock(v->old_runs, v->n_old_runs), nc = side_clock(v->new_runs, v->n_new_runs);
    bool clocks_differ = oc > 0 && nc > 0 && fabs(nc / oc - 1) >= 0.02;
    if (clocks_differ)
        rc = runs_test(v, BY_CYCLES, c, prior, &t, &done);
    if (rc == 0 && done && t.ci_high < half_way) {
        snprintf(v->verdict, sizeof v->verdict, "drift");
        int w = snprintf(v->why, sizeof v->why,
                         "the clock: old runs at %.0f MHz, new at %.0f MHz; in SM cycles the "
                         "ratio is %.3f [%.3f, %.3f]",
                         oc, nc, t.ratio, t.ci_low, t.ci_high);
        /* Why the clock fell, when NVML said (its clocks-event reasons). */
        unsigned long long thr = 0;
        for (size_t i = 0; i < v->n_new_runs; i++)
            thr |= v->new_runs[i].throttle;
        if (thr && w > 0 && (size_t)w < sizeof v->why)
            snprintf(v->why + w, sizeof v->why - (size_t)w, "; NVML clocks-event reasons 0x%llx",
                     thr);
        return 0;
    }
    /* The device time explains the time of a device-bound variant only:
     * a host-bound one's slowdown is on the host, which it cannot see. */
    if (rc == 0 && v->device_share >= CP_CMP_DEVICE_SHARE)
        rc = runs_test(v, BY_DEVICE, c, NULL, &t, &done);
    else
        done = false;
    if (rc == 0 && done && t.ci_high < half_way) {
        snprintf(v->verdict, sizeof v->verdict, "drift");
        snprintf(v->why, sizeof v->why,
                 "the device time: the traced runs' GPU busy time moved by %.3f [%.3f, %.3f] "
                 "against %.3f",
                 t.ratio, t.ci_low, t.ci_high, v->ratio);
    }
    return rc;
}

/* Every variant's verdict with the run as the unit: both sides of two
 * runs or more, cp_compare_runs_prior with the comparison's shared
 * spread; a side of one run, "single run" (the sample test's finding is
 * only said); then drift. */
int cp_cmp_run_verdicts(cp_comparison *c)
{
    cp_runs_prior prior;
    int rc = shared_spread(c, &prior);
    double old_clock = 0, new_clock = 0;
    size_t clocked = 0;
    for (size_t i = 0; rc == 0 && i < c->nvariants; i++) {
        cp_cmp_variant *v = &c->variants[i];
        double oc = side_clock(v->old_runs, v->n_old_runs);
        double nc = side_clock(v->new_runs, v->n_new_runs);
        v->old_sm_mhz = oc;
        v->new_sm_mhz = nc;
        if (oc > 0 && nc > 0) {
            old_clock += oc;
            new_clock += nc;
            clocked++;
        }
        cp_run_cmp t;
        bool done;
        rc = runs_test(v, BY_TIME, c, &prior, &t, &done);
        if (rc < 0)
            break;
        if (!done)
            continue; /* no run-level figure: the verdict stays the samples' */
        if (t.verdict == CP_CMP_SINGLE_RUN) {
            /* run_stats' rule: no spread between runs, no change called;
             * what the samples within the run say, said beside it. */
            char within[160];
            snprintf(within, sizeof within,
                     "one run a side: the spread between runs is unknown; "
                     "within the run: %s",
                     v->verdict);
            snprintf(v->why, sizeof v->why, "%s", within);
            snprintf(v->verdict, sizeof v->verdict, "%s", cp_cmp_verdict_name(t.verdict));
            mark_slower(v, c);
            continue;
        }
        v->by_runs = true;
        v->moderated = t.moderated;
        v->ratio = t.ratio;
        shown_by_runs(v);
        v->ci_low = t.ci_low;
        v->ci_high = t.ci_high;
        v->p = t.p;
        v->spread_old = t.spread_old;
        v->spread_new = t.spread_new;
        v->runs_needed = t.runs_needed;
        v->runs_capped = t.runs_capped;
        v->reports_needed = 0;
        v->why[0] = '\0';
        snprintf(v->verdict, sizeof v->verdict, "%s", cp_cmp_verdict_name(t.verdict));
        if (t.verdict == CP_CMP_SLOWER)
            rc = drift_check(v, c, &prior);
        /* The passes of one invocation do not show how much a
         * host-bound variant moves between invocations minutes apart,
         * even each in its own process (five ci runs on the H100:
         * broadcast matrix-row 0.070 to 0.075 ms in all three passes of
         * one, 0.059 to 0.062 in all three of another, a false "slower"
         * at p 0.0006): the host rule holds unless each side's runs come
         * from two reports or more. */
        if (rc == 0 && (reports_of(v->old_runs, v->n_old_runs) < 2 ||
                        reports_of(v->new_runs, v->n_new_runs) < 2))
            cp_cmp_host_rule(v, v->device_share, c);
        mark_slower(v, c);
    }
    if (rc == 0 && clocked) {
        old_clock /= (double)clocked;
        new_clock /= (double)clocked;
        if (fabs(new_clock / old_clock - 1) > 0.05)
            snprintf(c->clock_warning, sizeof c->clock_warning,
                     "the sides ran at different SM clocks: old %.0f MHz, new %.0f MHz on average "
                     "(a slowdown that equal clocks do not show is drift)",
                     old_clock, new_clock);
    }
    return rc;
}
