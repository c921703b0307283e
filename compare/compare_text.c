/*
 * cuproof compare's table (cp_compare_print_text): a cp_comparison as the
 * terminal shows it. Calls no other output of compare.
 */
#include <cuproof/internal/compare.h>

#include <cuproof/error.h>
#include <cuproof/metrics.h>
#include <cuproof/units.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Whether a variant rests on more than one run on a side: only then does
 * the table show how many, so that the usual table stays as it was. */
static bool several_runs(const cp_comparison *c)
{
    for (size_t i = 0; i < c->nvariants; i++)
        if (c->variants[i].n_old_runs > 1 || c->variants[i].n_new_runs > 1)
            return true;
    return false;
}

static void variant_line(const cp_cmp_variant *v, bool runs, FILE *out)
{
    char ci[32] = "-", pv[16] = "-", nr[64] = "";
    if ((v->samples || v->by_runs) && isfinite(v->ci_low) && isfinite(v->ci_high)) {
        snprintf(ci, sizeof ci, "[%.3f, %.3f]", v->ci_low, v->ci_high);
        snprintf(pv, sizeof pv, v->p < 1e-4 ? "%.1e" : "%.4f", v->p);
    }
    if (runs) {
        char both[48];
        snprintf(both, sizeof both, "%zu/%zu", v->n_old_runs, v->n_new_runs);
        snprintf(nr, sizeof nr, " %9s", both);
    }
    /* The times the ratio is of, in the one table's units, with the
     * digits that give back its three decimals (cuproof/units.h). */
    char t_old[32], t_new[32];
    cp_cmp_shown_times(v, 3, t_new, t_old, sizeof t_old);
    /* The figure the verdict rests on, and the wall time beside the GPU's. */
    /* (Wall time only, a report before GPU time, is said once, under
     * the table, so an old comparison prints as it did.) */
    char on[96] = "";
    if (v->declared_wall)
        snprintf(on, sizeof on, " on wall time");
    else if (v->judged_on == CP_WORK_GPU)
        snprintf(on, sizeof on, " on GPU %s time, wall %.3g -> %.3g ms",
                 v->by_busy ? "busy" : "event", v->old_wall_ms, v->new_wall_ms);
    fprintf(out, "%-28s %-26s %11s %11s %7.3f %-17s %8s%s  %s%s%s%s%s%s%s\n", v->case_name,
            v->variant, t_old, t_new, v->ratio, ci, pv, nr, v->verdict, on,
            *v->why ? " (" : "", v->why, *v->why ? ")" : "",
            v->regression ? " (regression)"
            : v->slower   ? " (not counted: incomparable)"
                          : "",
            v->samples || v->by_runs ? "" : " (medians only: old report without samples)");
    if (strcmp(v->verdict, "noisy") == 0 && v->reports_needed)
        fprintf(out, "%-28s %-26s runs from %zu reports a side (cuproof run %zu times) would "
                "decide\n", "", "", v->reports_needed, v->reports_needed);
    else if (strcmp(v->verdict, "noisy") == 0 && v->runs_needed)
        fprintf(out, "%-28s %-26s about %zu runs a side would decide%s\n", "", "", v->runs_needed,
                v->runs_capped ? " (or more)" : "");
}

static const char *regression_mark(bool regression)
{
    return regression ? " (regression)" : "";
}

/* What changed in case `ci` besides its timings, in the order of old:
 * checks, the case's status, claims, then findings. */
static void case_changes(const cp_comparison *c, size_t ci, FILE *out)
{
    for (size_t i = 0; i < c->nchecks; i++) {
        const cp_cmp_change *k = &c->checks[i];
        if (k->case_index == ci)
            fprintf(out, "check %s: %s: %s -> %s%s\n", k->case_name, k->name, k->was, k->now,
                    regression_mark(k->regression));
    }
    for (size_t i = 0; i < c->ncases; i++) {
        const cp_cmp_change *k = &c->cases[i];
        if (k->case_index == ci)
            fprintf(out, "case %s: %s -> %s%s\n", k->case_name, k->was, k->now,
                    regression_mark(k->regression));
    }
    for (size_t i = 0; i < c->nclaims; i++) {
        const cp_cmp_change *k = &c->claims[i];
        if (k->case_index == ci)
            fprintf(out, "claim %s: %.60s: %s -> %s%s%s%s\n", k->case_name, k->name, k->was,
                    k->now, regression_mark(k->regression), k->why[0] ? ", not counted: " : "",
                    k->why);
    }
    for (size_t i = 0; i < c->nfindings; i++) {
        const cp_cmp_finding *f = &c->findings[i];
        if (f->case_index == ci)
            fprintf(out, "finding %s: %s: %s %s over %zu/%zu runs%s\n", f->case_name,
                    f->variant, f->name, f->raised ? "raised" : "cleared", f->old_runs,
                    f->new_runs, regression_mark(f->regression));
    }
    for (size_t i = 0; i < c->nmetrics; i++) {
        const cp_cmp_metric *m = &c->metrics[i];
        if (m->case_index != ci)
            continue;
        /* Through cp_metric_format: "12800 kernels", "0.191 (19.1%)". */
        char was[64], now[64];
        const cp_metric_def *d = cp_metric_find(m->metric);
        cp_metric_format(d, m->was, was, sizeof was);
        cp_metric_format(d, m->now, now, sizeof now);
        fprintf(out, "metric %s: %s: %s %s -> %s over %zu/%zu runs%s", m->case_name,
                m->variant, m->metric, was, now, m->n_old, m->n_new,
                m->single_run ? " (single run: its spread between runs is unknown)" : "");
        if (m->regression)
            fprintf(out, " (regression: towards failing '%s')", m->towards);
        fprintf(out, "\n");
    }
}

/* The verdicts counted (those given, in cp_cmp_summary_verdict's order),
 * and for noisy ones the spread they rest on and what would decide them. */
static void summary_lines(const cp_comparison *c, FILE *out)
{
    if (!c->nvariants)
        return;
    fprintf(out, "verdicts:");
    for (size_t k = 0, said = 0; k < CP_CMP_NVERDICTS; k++)
        if (c->verdict_counts[k])
            fprintf(out, "%s %zu %s", said++ ? "," : "", c->verdict_counts[k],
                    cp_cmp_summary_verdict(k));
    fprintf(out, " (%zu variant%s)\n", c->nvariants, c->nvariants == 1 ? "" : "s");
    if (c->noisy_note[0])
        fprintf(out, "noisy: %s\n", c->noisy_note);
    if (c->figure_note[0])
        fprintf(out, "figure: %s\n", c->figure_note);
}

int cp_compare_print_text(const cp_comparison *c, FILE *out)
{
    for (size_t i = 0; i < c->nreasons; i++)
        fprintf(out, "incomparable: %s\n", c->reasons[i].text);
    if (!c->comparable)
        fprintf(out, "%s\n", c->forced ? "--force: timing verdicts count as regressions anyway"
                                       : "timing verdicts are informational (no regression "
                                         "exit); --force counts them");
    bool runs = several_runs(c), medians_only = false;
    if (c->nvariants)
        fprintf(out, "%-28s %-26s %11s %11s %7s %-17s %8s%s  %s\n", "case", "variant", "old",
                "new", "ratio", "95% interval", "p", runs ? "  runs o/n" : "", "verdict");
    else
        fprintf(out, "no timing compared: no variant is timed in both %s and %s; checks, case "
                     "statuses and claims only\n",
                c->n_old_reports > 1 ? "the old reports" : "the old report",
                c->n_new_reports > 1 ? "the new reports" : "the new report");
    for (size_t ci = 0; ci < c->ncase_names; ci++) {
        for (size_t i = 0; i < c->nvariants; i++)
            if (c->variants[i].case_index == ci) {
                variant_line(&c->variants[i], runs, out);
                medians_only |= !c->variants[i].samples && !c->variants[i].by_runs;
            }
        case_changes(c, ci, out);
    }
    summary_lines(c, out);
    if (medians_only)
        fprintf(out, "note: verdicts marked 'medians only' compare medians against the runs' "
                     "standard deviations; reports with timing.samples_ms get a rank test "
                     "and an interval\n");
    if (runs)
        fprintf(out, "note: runs o/n: the runs each verdict rests on, old/new (a report, or "
                     "a pass of cuproof run --runs K, is one run)\n");
    if (c->clock_warning[0])
        fprintf(out, "warning: %s\n", c->clock_warning);
    if (c->layout_warning[0])
        fprintf(out, "warning: %s\n", c->layout_warning);
    for (size_t i = 0; i < c->ntight; i++) {
        const cp_cmp_tight *t = &c->tight[i];
        fprintf(out,
                "warning: %s: '%s' %s by %.1f of its spread between runs (%.4g, sd %.2g over %zu "
                "new runs): another run can %s it\n",
                t->case_name, t->check, t->spreads >= 0 ? "holds" : "fails", fabs(t->spreads),
                t->mean, t->sd, t->runs, t->spreads >= 0 ? "fail" : "pass");
    }
    return 0;
}
