/*
 * cuproof compare, the figure a verdict rests on (cp_cmp_variant.judged_on,
 * chosen as the runs are gathered, compare_timing.c): after the run-level
 * verdicts, a variant judged on the GPU's time has its wall time judged
 * beside it at the host threshold (a host-side slowdown past it is still a
 * regression), and a variant its case judges on wall time is judged at the
 * host threshold alone: its change is "same" when the interval of its
 * ratio lies within the threshold, whatever a smaller change the runs
 * show, since the host's time moves between processes by more than a
 * GPU-time threshold (compare/compare_build.h).
 */
#include "compare/compare_build.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The least and the most of a side's runs' wall-time medians. */
static void wall_range(const cp_cmp_run *r, size_t n, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = 0;
    for (size_t i = 0; i < n; i++) {
        *lo = fmin(*lo, r[i].wall_median_ms);
        *hi = fmax(*hi, r[i].wall_median_ms);
    }
}

/* Judged on the GPU's time: every new run's wall time past every old
 * run's by more than the host threshold is a slowdown the GPU's time does
 * not show, called slower with why. */
static void judge_wall_beside(cp_cmp_variant *v, const cp_comparison *c)
{
    double old_lo, old_hi, new_lo, new_hi;
    wall_range(v->old_runs, v->n_old_runs, &old_lo, &old_hi);
    wall_range(v->new_runs, v->n_new_runs, &new_lo, &new_hi);
    if (!(old_hi > 0) || !(new_lo / old_hi > 1 + c->host_threshold) ||
        strcmp(v->verdict, "slower") == 0)
        return;
    snprintf(v->why, sizeof v->why,
             "wall time x%.2f (%.3g ms to %.3g ms), past the host threshold of +%.0f%%; the "
             "GPU's time x%.3f (%s)",
             v->new_wall_ms / v->old_wall_ms, v->old_wall_ms, v->new_wall_ms,
             100 * c->host_threshold, v->ratio, v->verdict);
    snprintf(v->verdict, sizeof v->verdict, "slower");
    /* The row shows the wall time's ratio, which the verdict rests on;
     * it has no interval (the runs' extremes decided it), so the GPU
     * time's is not left beside it. */
    v->ratio = v->new_wall_ms / v->old_wall_ms;
    v->old_shown_ms = v->old_wall_ms;
    v->new_shown_ms = v->new_wall_ms;
    v->ci_low = v->ci_high = v->p = NAN;
}

/* Judged on wall time by its case's choice: within the host threshold
 * (the ratio's interval inside it, or the ratio where there is none) is
 * "same"; a slower or faster verdict past it stands. */
static void judge_at_host_threshold(cp_cmp_variant *v, const cp_comparison *c)
{
    double up = 1 + c->host_threshold, down = 1 / up;
    bool has_ci = isfinite(v->ci_low) && isfinite(v->ci_high);
    double lo = has_ci ? v->ci_low : v->ratio, hi = has_ci ? v->ci_high : v->ratio;
    bool decided = strcmp(v->verdict, "same") == 0 || strcmp(v->verdict, "slower") == 0 ||
                   strcmp(v->verdict, "faster") == 0 || strcmp(v->verdict, "noisy") == 0;
    if (!decided || !(lo >= down && hi <= up))
        return;
    char moved[64];
    if (has_ci)
        snprintf(moved, sizeof moved, "x%.3f [%.3f, %.3f]", v->ratio, v->ci_low, v->ci_high);
    else
        snprintf(moved, sizeof moved, "x%.3f", v->ratio);
    snprintf(v->why, sizeof v->why,
             "judged on wall time at the host threshold (x%.2f to x%.2f): it moved %s, within it",
             down, up, moved);
    snprintf(v->verdict, sizeof v->verdict, "same");
    v->runs_needed = 0;
    v->runs_capped = false;
    v->reports_needed = 0;
}

void cp_cmp_figure_verdicts(cp_comparison *c)
{
    for (size_t i = 0; i < c->nvariants; i++) {
        cp_cmp_variant *v = &c->variants[i];
        if (strcmp(v->verdict, "single run") == 0)
            continue;
        if (v->judged_on == CP_WORK_GPU)
            judge_wall_beside(v, c);
        else if (v->declared_wall)
            judge_at_host_threshold(v, c);
        mark_slower(v, c);
    }
}
