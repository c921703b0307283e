/*
 * A traced program judged (cp_program_judge in cuproof/program.h): its
 * per-process files analysed, the one trust rule applied, and the result
 * built as a case of one variant with the program's own checks, the
 * expectations' and --repeat's timing. Nothing here prints: the command
 * line prints the result, a library user reads it.
 */
#include <cuproof/program.h>

#include <cuproof/error.h>
#include <cuproof/exit.h>
#include <cuproof/internal/proc.h>
#include <cuproof/stats.h>
#include <cuproof/units.h>
#include <cuproof/internal/grow.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cp_program_run_failed(const cp_program_run *run)
{
    return run->timed_out || run->signal || run->status != 0;
}

/* ---- Timing of --repeat ---- */

static int add_sample(cp_program_samples *s, double ms)
{
    double *p = cp_grow(s->ms, &s->cap, s->n, sizeof *p, 16);
    if (!p)
        return cp_failf(CP_ENOMEM, "out of memory keeping timing samples");
    s->ms = p;
    s->ms[s->n++] = ms;
    return 0;
}

/* The samples kept for range `name`, added when new; NULL when out of
 * memory. */
static cp_program_samples *range_samples(cp_program_timing *t, const char *name)
{
    for (size_t i = 0; i < t->nranges; i++)
        if (strcmp(t->ranges[i].name, name) == 0)
            return &t->ranges[i];
    cp_program_samples *p = realloc(t->ranges, (t->nranges + 1) * sizeof *p);
    if (!p)
        return NULL;
    t->ranges = p;
    cp_program_samples *r = &t->ranges[t->nranges++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    return r;
}

int cp_program_timing_add(cp_program_timing *t, const cp_program_run *run, const char *dir)
{
    snprintf(t->wall.name, sizeof t->wall.name, "wall_ms");
    int rc = add_sample(&t->wall, run->wall_ms);
    cp_trace ranges;
    cp_trace_init(&ranges);
    size_t nfiles = 0;
    if (rc == 0)
        rc = cp_proc_read_dir(dir, &ranges, &nfiles);
    for (size_t i = 0; rc == 0 && i < ranges.n; i++) {
        const cp_activity *r = &ranges.items[i];
        if (r->kind != CP_ACT_RANGE || !r->name || !*r->name)
            continue;
        cp_program_samples *sr = range_samples(t, r->name);
        rc = sr ? add_sample(sr, (double)(r->end - r->start) / 1e6)
                : cp_failf(CP_ENOMEM, "out of memory keeping timing samples");
    }
    cp_trace_free(&ranges);
    return rc;
}

void cp_program_timing_free(cp_program_timing *t)
{
    free(t->wall.ms);
    for (size_t i = 0; i < t->nranges; i++)
        free(t->ranges[i].ms);
    free(t->ranges);
    memset(t, 0, sizeof *t);
}

/* Samples as a variant's timing statistics, kept samples and series. */
static int put_timing(cp_variant_result *v, const cp_program_samples *s, const char *series)
{
    int rc = cp_timing_compute(s->ms, s->n, &v->timing);
    if (rc == 0) {
        free(v->samples_ms);
        v->samples_ms = malloc((s->n ? s->n : 1) * sizeof *v->samples_ms);
        if (!v->samples_ms)
            return cp_failf(CP_ENOMEM, "out of memory keeping timing samples");
        memcpy(v->samples_ms, s->ms, s->n * sizeof *v->samples_ms);
        v->nsamples = s->n;
        rc = cp_series_store(&v->series, &v->nseries, &v->series_cap, series, "ms", s->ms, s->n);
    }
    return rc;
}

/* ---- The program's checks ---- */

/* The program's own exit, and each process's trace, as checks: a process
 * whose trace ended early is not verified past its last flush (skipped,
 * with how much may be missing after `first`, the trace's first record),
 * never passed. */
static int add_program_checks(const cp_program_run *o, const cp_trace *t, uint64_t first,
                              cp_case_result *c)
{
    cp_check_result *k = cp_result_add_check(c);
    if (!k)
        return CP_ENOMEM;
    snprintf(k->name, sizeof k->name, "the program succeeded");
    snprintf(k->expected, sizeof k->expected, "exit status 0");
    char took[32];
    if (o->timed_out)
        snprintf(k->measured, sizeof k->measured, "killed after the timeout (%s)",
                 cp_fmt_ms(o->wall_ms, took, sizeof took));
    else if (o->signal)
        snprintf(k->measured, sizeof k->measured, "ended by signal %d (%s)", o->signal,
                 strsignal(o->signal));
    else
        snprintf(k->measured, sizeof k->measured, "exit status %d", o->status);
    k->status = cp_program_run_failed(o) ? CP_CHECK_FAILED : CP_CHECK_PASSED;
    for (size_t i = 0; i < t->nprocesses; i++) {
        const cp_process *p = &t->processes[i];
        if (!(k = cp_result_add_check(c)))
            return CP_ENOMEM;
        /* A job's process is named by its rank too, which the user
         * launched it as. */
        if (cp_process_rank(p) >= 0)
            snprintf(k->name, sizeof k->name, "process %u (rank %d) closed its trace", p->pid,
                     (int)cp_process_rank(p));
        else
            snprintf(k->name, sizeof k->name, "process %u closed its trace", p->pid);
        snprintf(k->expected, sizeof k->expected, "an end record at exit");
        if (p->ended) {
            k->status = CP_CHECK_PASSED;
            snprintf(k->measured, sizeof k->measured, "ended, %llu records dropped",
                     (unsigned long long)p->dropped);
        } else {
            k->status = CP_CHECK_SKIPPED;
            snprintf(k->measured, sizeof k->measured, "truncated");
            snprintf(k->skip_reason, sizeof k->skip_reason,
                     "process %u (%s) left without its exit handler (_exit, a signal or a kill): "
                     "its trace holds its work up to its last flush, %s after its first "
                     "record; anything later is missing",
                     p->pid, p->command,
                     cp_fmt_ms(p->last_ns > first && first != UINT64_MAX
                                   ? (double)(p->last_ns - first) / 1e6
                                   : 0.0,
                               took, sizeof took));
        }
    }
    return 0;
}

/* Each expectation kept in the report, not checked, with why: the trace
 * could not be judged. Never passed, never lost. */
static int add_unchecked(const cp_expect_list *list, const char *why, cp_case_result *c)
{
    for (size_t i = 0; list && i < list->n; i++) {
        cp_check_result *k = cp_result_add_check(c);
        if (!k)
            return CP_ENOMEM;
        snprintf(k->name, sizeof k->name, "%s", list->items[i].text);
        snprintf(k->expected, sizeof k->expected, "%s", list->items[i].text);
        snprintf(k->measured, sizeof k->measured, "not checked");
        snprintf(k->skip_reason, sizeof k->skip_reason, "not checked: %.600s", why);
        k->status = CP_CHECK_SKIPPED;
        k->essential = true;
    }
    return 0;
}

/* One check per expectation, with its verdict from cp_program_analyse. */
static int add_expectation_checks(const cp_expect_list *list, const cp_program_check *checks,
                                  cp_case_result *c, size_t *met)
{
    for (size_t i = 0; list && i < list->n; i++) {
        const cp_expectation *e = &list->items[i];
        cp_check_result *k = cp_result_add_check(c);
        if (!k)
            return CP_ENOMEM;
        snprintf(k->name, sizeof k->name, "%s", e->text);
        snprintf(k->expected, sizeof k->expected, "%s", e->text);
        snprintf(k->measured, sizeof k->measured, "%s", checks[i].measured);
        k->status = checks[i].ok ? CP_CHECK_PASSED : CP_CHECK_FAILED;
        if (checks[i].undecided) {
            /* Neither met nor failed: the case is inconclusive. */
            k->status = CP_CHECK_SKIPPED;
            k->essential = true;
            snprintf(k->skip_reason, sizeof k->skip_reason, "%s", checks[i].measured);
            snprintf(k->measured, sizeof k->measured, "not judged");
        }
        *met += checks[i].ok;
    }
    return 0;
}

/* The case's name (the program's base name) and title (its command). */
static void name_case(cp_case_result *c, char *const *argv)
{
    const char *slash = strrchr(argv[0], '/');
    snprintf(c->name, sizeof c->name, "%s", slash ? slash + 1 : argv[0]);
    snprintf(c->source, sizeof c->source, "cuproof exec");
    size_t used = 0;
    for (char *const *p = argv; *p && used < sizeof c->title - 1; p++)
        used += (size_t)snprintf(c->title + used, sizeof c->title - used, "%s%s",
                                 p == argv ? "" : " ", *p);
}

int cp_program_judge(const char *proc_dir, const cp_judge_opts *o, const cp_program_run *run,
                     const cp_program_timing *timing, cp_case_result *c, cp_judgement *j)
{
    int rc = 0;
    memset(j, 0, sizeof *j);
    const cp_expect_list *list = o->expect;
    j->expectations = list ? list->n : 0;
    cp_program_check *checks = calloc(j->expectations ? j->expectations : 1, sizeof *checks);
    if (!checks)
        return cp_failf(CP_ENOMEM, "out of memory for %zu expectations", j->expectations);
    name_case(c, o->argv);
    c->device = o->device;
    snprintf(c->gpu_name, sizeof c->gpu_name, "%s", o->gpu_name ? o->gpu_name : "");
    cp_variant_result *v = cp_result_add_variant(c);
    if (!v) {
        rc = CP_ENOMEM;
        goto out;
    }
    snprintf(v->name, sizeof v->name, "program");
    v->ran = true;
    /* The traced run's wall time carries the tracing's cost: only the
     * timed runs of --repeat give timing statistics (compare skips a
     * variant with none). */
    cp_trace_init(&v->trace);
    cp_program_opts po = o->program;
    po.name = c->name;
    po.variant = v->name;
    char unreadable[1024] = "";
    if (cp_program_analyse(proc_dir, list, &po, v, checks, &j->info) < 0)
        snprintf(unreadable, sizeof unreadable, "%s", cp_last_error());
    v->traced = j->info.nfiles > 0;
    uint64_t dropped = 0;
    for (size_t i = 0; i < v->trace.nprocesses; i++)
        dropped += v->trace.processes[i].dropped;
    v->trace.dropped_records = dropped;
    char what[96];
    snprintf(what, sizeof what, "the program's trace (%zu traced process%s)", j->info.nfiles,
             j->info.nfiles == 1 ? "" : "es");
    cp_trust_in in = {
        .what = what,
        .traced_files = j->info.nfiles,
        .dir = proc_dir,
        .processes = &v->trace,
        .device_work = (uint64_t)v->metrics.kernels + v->metrics.copies + v->metrics.memsets,
        .dropped = dropped,
        .allow_dropped = o->allow_dropped,
        .run = run->id,
        .no_device = o->no_device,
        .ranks = v->ranks,
        .capture = o->capture,
        .windows = j->info.windows,
    };
    cp_trust_judge(&in, &j->trust);
    /* A trace that cannot be read is untrusted before any rule. */
    if (unreadable[0]) {
        j->trust.trusted = false;
        j->trust.exit = CP_EXIT_INCONCLUSIVE;
        snprintf(j->trust.why, sizeof j->trust.why, "%s", unreadable);
    }
    if (!v->traced)
        snprintf(v->untraced_reason, sizeof v->untraced_reason, "%.500s", j->trust.why);
    CP_TRY(add_program_checks(run, &v->trace, j->info.first_ns, c));
    j->checked = j->trust.trusted || o->keep_going;
    if (j->checked)
        CP_TRY(add_expectation_checks(list, checks, c, &j->met));
    else
        CP_TRY(add_unchecked(list, j->trust.why, c));
    c->status = CP_STATUS_PASSED;
    for (size_t i = 0; i < c->nchecks; i++)
        if (c->checks[i].status == CP_CHECK_FAILED)
            c->status = CP_STATUS_FAILED;
    size_t undecided = 0;
    for (size_t i = 0; j->checked && i < j->expectations; i++)
        undecided += checks[i].undecided;
    if (c->status == CP_STATUS_PASSED && undecided)
        c->status = CP_STATUS_INCONCLUSIVE;
    /* No verdict, as the exit status says (3): inconclusive, with why,
     * in report.json and on the page as on the terminal. */
    if (!j->trust.trusted) {
        c->status = CP_STATUS_INCONCLUSIVE;
        snprintf(c->skip_reason, sizeof c->skip_reason, "%.*s", (int)sizeof c->skip_reason - 1,
                 j->trust.why);
    }
    if (timing && timing->wall.n) {
        CP_TRY(put_timing(&c->variants[0], &timing->wall, "wall_ms"));
        for (size_t i = 0; i < timing->nranges; i++) {
            cp_variant_result *r = cp_result_add_variant(c);
            if (!r) {
                rc = CP_ENOMEM;
                goto out;
            }
            snprintf(r->name, sizeof r->name, "range:%.57s", timing->ranges[i].name);
            r->ran = true;
            snprintf(r->untraced_reason, sizeof r->untraced_reason,
                     "timed runs record the program's NVTX ranges alone");
            CP_TRY(put_timing(r, &timing->ranges[i], "samples_ms"));
        }
    }
    j->program_failed = cp_program_run_failed(run);
    /* An untrusted trace carries no verdict (3); then the program's
     * failure (4); then the expectations' verdicts (cp_exit_of_verdicts:
     * a failure stands beside an undecided one). */
    j->exit = !j->trust.trusted   ? CP_EXIT_INCONCLUSIVE
              : j->program_failed ? CP_EXIT_PROGRAM
                                  : cp_exit_of_verdicts(j->met + undecided < j->expectations,
                                                        undecided);
out:
    free(checks);
    return rc;
}
