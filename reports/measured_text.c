/*
 * What a trace measured, scope by scope, as the terminal shows it
 * (`cuproof check TRACE` without --expect; internal/measure.h): each
 * scope as an expectation names it, then every metric it measured with
 * its value and unit (cp_metric_format, as verdicts show them) and every
 * finding raised; a scope without figures says why. The metrics a scope
 * cannot measure (cp_metric_unmeasured) are left out, not printed as 0.
 * A program's whole is followed by each operation of its per-collective
 * table as collective(OP) names it; a 'per step(NAME)' scope prints each
 * per-step metric's median, p95 and largest with its step.
 */
#include <cuproof/internal/measure.h>
#include <cuproof/internal/ranks.h>
#include <cuproof/internal/steps.h>
#include <cuproof/units.h>

#include <stdio.h>

/* A 'per step' scope: each per-step metric's median, p95 and largest over
 * the steps, with the step of the largest (internal/steps.h). */
static void print_steps(FILE *f, const cp_measured_scope *s)
{
    fprintf(f, "%s: %zu step%s (median, p95, max and its step; 'per step(NAME): METRIC OP "
               "VALUE' judges every step, 'per step(NAME) p95: ...' the p95):\n",
            s->scope, s->nsteps, s->nsteps == 1 ? "" : "s");
    size_t n = 0;
    const cp_metric_def *defs = cp_step_metric_defs(&n);
    for (size_t i = 0; i < n; i++) {
        cp_step_summary sum;
        cp_step_summarise(s->steps, s->nsteps, &defs[i], &sum);
        if (sum.measured == 0)
            continue;
        /* Counts without their unit, which the name says. */
        const char *unit = defs[i].type == CP_METRIC_U32 ? "" : defs[i].unit;
        char p50[48], p95[48], mx[48];
        cp_fmt_value(sum.p50, unit, p50, sizeof p50);
        cp_fmt_value(sum.p95, unit, p95, sizeof p95);
        cp_fmt_value(sum.max, unit, mx, sizeof mx);
        fprintf(f, "  %-28s %10s %10s %10s (step %u)", defs[i].name, p50, p95, mx, sum.max_step);
        if (sum.measured < s->nsteps)
            fprintf(f, " over %zu steps", sum.measured);
        fputc('\n', f);
    }
    /* The straggler per step: the rank late in most steps, and by how
     * much, beside the least a straggler shows: late by a hair is no
     * straggler. */
    cp_step_late late;
    if (!cp_step_late_rank(s->steps, s->nsteps, &late))
        return;
    char lag[48];
    cp_fmt_value((double)late.median_lag_ns, "ns", lag, sizeof lag);
    fprintf(f, "  late rank: rank %d arrived last at most collectives in %zu of the %zu steps with "
               "collectives, by a median %s there (a straggler's median lag is %.1f ms or "
               "more)\n",
            (int)late.rank, late.steps, late.with, lag, (double)CP_STRAGGLER_MIN_LAG_NS / 1e6);
}

static void print_scope(FILE *f, const cp_measured *m, const cp_measured_scope *s)
{
    const char *label = s->scope[0] ? s->scope : "the whole program";
    if (!s->measured) {
        fprintf(f, "%s: not measured: %s\n", label, s->why);
        return;
    }
    if (s->per_step) {
        print_steps(f, s);
        return;
    }
    fprintf(f, "%s%s:\n", label, !m->program ? " (variant)" : "");
    size_t n = 0;
    const cp_metric_def *defs = cp_metric_defs(&n);
    for (size_t i = 0; i < n; i++) {
        if (cp_metric_unmeasured(&s->m, defs[i].name))
            continue;
        char v[96];
        cp_metric_format(&defs[i], cp_metric_value(&s->m, &defs[i]), v, sizeof v);
        fprintf(f, "  %-28s %s\n", defs[i].name, v);
    }
    for (size_t i = 0; i < s->m.nfindings; i++)
        fprintf(f, "  finding %s (raised %s): %s\n", s->m.findings[i].name,
                s->m.findings[i].count == 1 ? "once" : "more than once",
                s->m.findings[i].message);
}

/* After the whole program: each operation of its per-collective table as
 * collective(OP) names it, with that scope's metrics. */
static void print_collectives(FILE *f, const cp_metrics *whole)
{
    size_t n = 0, row = 0;
    const cp_metric_def *defs = cp_collective_metric_defs(&n);
    const char *op = NULL;
    cp_collective_figures c;
    bool several = false;
    while (cp_collective_next(whole, &row, &op, &c, &several)) {
        fprintf(f, "collective(%s):\n", op);
        for (size_t i = 0; i < n; i++) {
            if (cp_collective_unmeasured(&c, defs[i].name, several))
                continue;
            char v[96];
            cp_metric_format(&defs[i], cp_field_value(&c, &defs[i]), v, sizeof v);
            fprintf(f, "  %-28s %s\n", defs[i].name, v);
        }
    }
}

void cp_measured_print_text(FILE *f, const cp_measured *m, const char *path)
{
    if (m->program)
        fprintf(f, "%s: program %s, %zu process%s; what it measured, scope by scope (write "
                   "expectations on these names: 'SCOPE: METRIC OP VALUE')\n",
                path, m->name, m->processes, m->processes == 1 ? "" : "es");
    else
        fprintf(f, "%s: case %s, %zu variant%s; what each measured (write expectations on "
                   "these names: 'VARIANT: METRIC OP VALUE')\n",
                path, m->name, m->n, m->n == 1 ? "" : "s");
    for (size_t i = 0; i < m->n; i++) {
        print_scope(f, m, &m->scopes[i]);
        if (m->program && !m->scopes[i].scope[0] && m->scopes[i].measured)
            print_collectives(f, &m->scopes[i].m);
    }
    if (m->more_ranges)
        fprintf(f, "(more range names than the first 64: name one with range(NAME) to measure "
                   "it)\n");
}
