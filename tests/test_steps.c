/* Per step (cuproof/internal/steps.h): the grammar of 'per step', each
 * step's figures equal to its range alone (hand-built and on the recorded
 * DDP runs), a bad step named where the range's union dilutes it, and
 * nothing passing for want of steps or of what a ratio needs. */
#include <cuproof/error.h>
#include <cuproof/expect.h>
#include <cuproof/program.h>
#include <cuproof/internal/collectives.h>
#include <cuproof/internal/rec.h>
#include <cuproof/internal/steps.h>
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NCCL "_Z43ncclDevKernel_AllReduce_Sum_f32_RING_LLP128v"

static void add_range_of(cp_trace *t, uint32_t process, uint64_t s, uint64_t e, const char *name)
{
    cp_activity a = {.kind = CP_ACT_RANGE, .start = s, .end = e, .name = name, .process = process};
    cr_assert_eq(cp_trace_add(t, &a), 0);
}

static void add_kernel_of(cp_trace *t, uint32_t process, uint32_t device, uint64_t s, uint64_t e,
                          uint32_t stream, const char *name)
{
    cp_activity a = {.kind = CP_ACT_KERNEL, .start = s, .end = e, .process = process,
                     .device = device, .context = 1, .stream = stream, .name = name};
    cr_assert_eq(cp_trace_add(t, &a), 0);
}

static cp_expectation parse_one(const char *text, cp_expect_list *list)
{
    memset(list, 0, sizeof *list);
    cr_assert_eq(cp_expect_parse(text, 1, list), 0, "%s: %s", text, cp_last_error());
    cr_assert_eq(list->n, 1);
    return list->items[0];
}

Test(steps, the_grammar_of_per_step)
{
    cp_expect_list l;
    cp_expectation e = parse_one("per step: step_ns < 2e7", &l);
    cr_expect(e.per_step);
    cr_expect_str_eq(e.step_range, "step");
    cr_expect_eq(e.step_quantile, 0);
    cr_expect_str_eq(e.name, "step_ns");
    cr_expect_eq(e.step_column, 1);
    cr_expect_eq(cp_expect_validate_program(&l), 0, "%s", cp_last_error());
    cp_expect_list_free(&l);

    e = parse_one("  per step( train step ) p95: exposed_comm_ns <= 1e6", &l);
    cr_expect_str_eq(e.step_range, "train step");
    cr_expect_eq(e.step_quantile, 95);
    cr_expect_eq(e.step_column, 3);
    cp_expect_list_free(&l);

    /* 'per' and 'step' are keywords only together: a variant 'per' stays one. */
    e = parse_one("per: kernels > 1", &l);
    cr_expect_not(e.per_step);
    cr_expect_str_eq(e.scope, "per");
    cp_expect_list_free(&l);

    /* --range leaves a per-step line as it is. */
    e = parse_one("per step: kernels >= 1", &l);
    cr_assert_eq(cp_expect_scope_range(&l, "other"), 0);
    cr_expect_str_eq(l.items[0].text, "per step: kernels >= 1");
    cp_expect_list_free(&l);

    struct {
        const char *text, *says;
    } bad[] = {
        {"per step p0: step_ns < 1", "p1 to p100"},
        {"per step p101: step_ns < 1", "p1 to p100"},
        {"per step pmax: step_ns < 1", "p1 to p100"},
        {"per step max: step_ns < 1", "':' after 'per step'"},
        {"per step(: step_ns < 1", "')' after per step(NAME"},
        {"per step(): step_ns < 1", "a range's name"},
        {"per step: range(step): kernels > 1", "takes no other scope"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&l, 0, sizeof l);
        cr_expect_eq(cp_expect_parse(bad[i].text, 1, &l), CP_EPARSE, "%s", bad[i].text);
        cr_expect_not_null(strstr(cp_last_error(), bad[i].says), "%s: %s", bad[i].text,
                           cp_last_error());
        cr_expect_eq(l.n, 0);
    }
}

Test(steps, validation_names_the_per_step_metrics)
{
    cp_expect_list l = {0};
    cr_assert_eq(cp_expect_parse("per step: exposed_com_ns < 1\nper step: finding straggler\n"
                                 "per step: span_ns < 1\n",
                                 1, &l),
                 0);
    cr_expect_eq(cp_expect_validate_program(&l), CP_EINVAL);
    const char *err = cp_last_error();
    cr_expect_not_null(strstr(err, "line 1, column 11: per step measures step_ns"), "%s", err);
    cr_expect_not_null(strstr(err, "did you mean 'exposed_comm_ns'"), "%s", err);
    cr_expect_not_null(strstr(err, "line 2"), "%s", err);
    cr_expect_not_null(strstr(err, "line 3"), "%s", err);
    /* A case's expectations are scoped by variant: per step is refused. */
    const char *variants[] = {"v"};
    cp_expect_list one = {0};
    cr_assert_eq(cp_expect_parse("per step: kernels > 1", 1, &one), 0);
    cr_expect_eq(cp_expect_validate(&one, variants, 1), CP_EINVAL);
    cr_expect_not_null(strstr(cp_last_error(), "'per step' is for traced programs"), "%s",
                       cp_last_error());
    cp_expect_list_free(&one);
    cp_expect_list_free(&l);
}

/* Two processes (ranks on devices 0 and 1), five steps each of 100 ns
 * at 1000 * k; rank 0's kernel fills 40 ns of each step, and 90 in step
 * 3; rank 1 runs an NCCL kernel of 50 ns in each, 20 of them beside a
 * compute kernel. One kernel crosses the end of step 5 into the time
 * after it. */
static void five_steps(cp_trace *t)
{
    cp_trace_init(t);
    for (uint64_t k = 1; k <= 5; k++) {
        uint64_t s = 1000 * k;
        add_range_of(t, 0, s, s + 100, "step");
        add_range_of(t, 1, s + 5, s + 105, "step");
        add_kernel_of(t, 0, 0, s + 10, s + 10 + (k == 3 ? 90 : 40), 1, "k");
        add_kernel_of(t, 1, 1, s + 20, s + 70, 2, NCCL);
        add_kernel_of(t, 1, 1, s + 50, s + 90, 3, "k");
    }
    add_kernel_of(t, 0, 0, 5090, 5300, 4, "k"); /* 10 ns inside step 5 */
    add_range_of(t, 0, 9000, 9100, "other");
}

static long rows_of(const cp_trace *t, const char *range, cp_step_windows *s, cp_step_row **rows)
{
    cr_assert_eq(cp_step_windows_init(s, range), 0);
    for (size_t i = 0; i < t->n; i++)
        cr_assert_eq(cp_step_windows_learn(s, &t->items[i]), 0);
    cp_step_windows_finish(s);
    cp_timeline_opts o = {.steps = s->w, .nsteps = s->n};
    cp_metrics m;
    cr_assert_eq(cp_timeline_analyse(t, &o, &m), 0);
    cr_assert_eq(m.nstep_parts, s->n);
    long n = cp_step_rows(s, m.step_parts, rows);
    cp_metrics_free(&m);
    return n;
}

Test(steps, each_step_is_measured_alone)
{
    cp_trace t;
    five_steps(&t);
    cp_step_windows s;
    cp_step_row *r;
    long n = rows_of(&t, "step", &s, &r);
    cr_assert_eq(n, 5);
    for (long k = 0; k < n; k++) {
        cr_expect_eq(r[k].index, (uint32_t)k + 1);
        cr_expect_eq(r[k].processes, 2);
        cr_expect_eq(r[k].devices, 2);
        cr_expect_eq(r[k].step_ns, 100);
        uint64_t mine = k == 2 ? 90 : k == 4 ? 40 + 10 : 40;
        /* device 0: its kernels; device 1: [20, 90) of a kernel or more */
        cr_expect_eq(r[k].kernel_busy_ns, mine + 70, "step %ld", k + 1);
        cr_expect_eq(r[k].kernel_sum_ns, mine + 50 + 40, "step %ld", k + 1);
        cr_expect_eq(r[k].kernels, k == 4 ? 4 : 3, "step %ld", k + 1); /* 5090's starts in step 5 */
        cr_expect_eq(r[k].idle_ns, 200 - mine - 70, "step %ld", k + 1);
        cr_expect_eq(r[k].comm_busy_ns, 50);
        cr_expect_eq(r[k].exposed_comm_ns, 30);
        cr_expect_float_eq(r[k].comm_compute_overlap_ratio, 0.4, 1e-12);
        cr_expect_float_eq(r[k].exposed_comm_share, 30.0 / 200.0, 1e-12);
        cr_expect(isnan(r[k].copy_kernel_overlap_ratio), "no copy: not measured, not 0");
    }
    free(r);
    cp_step_windows_free(&s);
    cp_trace_free(&t);
}

static bool judge_text(const cp_trace *t, const char *text, char *measured, size_t len)
{
    cp_expect_list l = {0};
    cr_assert_eq(cp_expect_parse(text, 1, &l), 0, "%s", cp_last_error());
    cr_assert_eq(cp_expect_validate_program(&l), 0, "%s", cp_last_error());
    bool ok = false;
    cr_assert_eq(cp_expect_eval_trace(&l.items[0], t, NULL, &ok, measured, len), 0);
    cp_expect_list_free(&l);
    return ok;
}

/* Step 3's long kernel: the union of the steps passes at 60 ns a step on
 * average, each step alone names step 3; p80 of five (the fourth
 * value) passes; ratios judged per step. */
Test(steps, a_bad_step_is_named_where_the_union_dilutes_it)
{
    cp_trace t;
    five_steps(&t);
    char m[512];
    cr_expect(judge_text(&t, "range(step): kernel_busy_ns < 900", m, sizeof m), "%s", m);
    cr_expect_not(judge_text(&t, "per step: kernel_busy_ns < 150", m, sizeof m));
    cr_expect_not_null(strstr(m, "1 of 5 steps fail; worst step 3: 160 ns"), "%s", m);
    cr_expect_not_null(strstr(m, "max 160 ns (step 3) over 5 steps"), "%s", m);
    cr_expect(judge_text(&t, "per step p80: kernel_busy_ns < 150", m, sizeof m), "%s", m);
    cr_expect_not_null(strstr(m, "p80 120 ns"), "%s", m);
    cr_expect_not(judge_text(&t, "per step p100: kernel_busy_ns < 150", m, sizeof m), "%s", m);
    cr_expect(judge_text(&t, "per step: comm_compute_overlap_ratio >= 0.4", m, sizeof m), "%s", m);
    cr_expect(judge_text(&t, "per step: step_ns == 100", m, sizeof m), "%s", m);
    /* The worst of a '>' line is the smallest. */
    cr_expect_not(judge_text(&t, "per step: idle_ns > 50", m, sizeof m));
    cr_expect_not_null(strstr(m, "worst step 3: 40.0 ns"), "%s", m);
    cp_trace_free(&t);
}

Test(steps, nothing_passes_for_want_of_steps)
{
    cp_trace t;
    five_steps(&t);
    char m[512];
    cr_expect_not(judge_text(&t, "per step: copy_kernel_overlap_ratio >= 0", m, sizeof m));
    cr_expect_not_null(strstr(m, "not measured: no copy in every one of the 5 steps"), "%s", m);
    cr_expect_not(judge_text(&t, "per step(stpe): step_ns > 0", m, sizeof m));
    cr_expect_not_null(strstr(m, "no range named 'stpe' in the trace"), "%s", m);
    /* Steps without device work: their length is measured, nothing else. */
    cr_expect(judge_text(&t, "per step(other): step_ns == 100", m, sizeof m), "%s", m);
    cr_expect_not(judge_text(&t, "per step(other): idle_ns >= 0", m, sizeof m));
    cr_expect_not_null(strstr(m, "no kernels or copies inside the 1 step of range 'other'"), "%s", m);
    /* One step without communication among steps with it fails, naming it. */
    add_range_of(&t, 0, 7000, 7100, "step");
    add_kernel_of(&t, 0, 0, 7010, 7020, 1, "k");
    cr_expect_not(judge_text(&t, "per step: comm_compute_overlap_ratio >= 0.4", m, sizeof m));
    cr_expect_not_null(strstr(m, "not measured: no communication kernel in 1 step (the first: "
                                 "step 6)"),
                       "%s", m);
    /* Step 6 ran on one process of two: a rank that missed it, named. */
    cr_expect_not(judge_text(&t, "per step: processes == 2", m, sizeof m));
    cr_expect_not_null(strstr(m, "1 of 6 steps fail; worst step 6: 1 process"), "%s", m);
    cp_trace_free(&t);
}

/* Each recorded DDP run's steps, measured by the sweep, equal each rank's
 * range alone (rank(N) range(step) with only that occurrence kept): the
 * figures the two ways share, on every window of every rank. */
Test(steps, the_recorded_ddp_steps_equal_each_range_alone)
{
    const char *runs[] = {"overlap", "serial", "straggler"};
    for (size_t f = 0; f < 3; f++) {
        char path[512];
        snprintf(path, sizeof path, CUPROOF_FIXTURES "/exec-h100x2-ddp/%s.cprec", runs[f]);
        cp_trace t;
        cp_trace_init(&t);
        bool truncated = false;
        cr_assert_eq(cp_rec_read_trace(path, &t, &truncated), 0, "%s", cp_last_error());
        cp_step_windows s;
        cr_assert_eq(cp_step_windows_init(&s, "step"), 0);
        for (size_t i = 0; i < t.n; i++)
            cr_assert_eq(cp_step_windows_learn(&s, &t.items[i]), 0);
        cp_step_windows_finish(&s);
        cr_assert_geq(s.n, 10, "%s: %zu windows", runs[f], s.n);
        cp_timeline_opts o = {.steps = s.w, .nsteps = s.n};
        cp_metrics m;
        cr_assert_eq(cp_timeline_analyse(&t, &o, &m), 0);
        size_t compared = 0;
        for (size_t w = 0; w < s.n; w++) {
            /* Every other 'step' range renamed: the window alone. */
            const cp_step_window *win = &s.w[w];
            for (size_t i = 0; i < t.n; i++) {
                cp_activity *a = &t.items[i];
                if (a->kind == CP_ACT_RANGE && a->name &&
                    (strcmp(a->name, "step") == 0 || strcmp(a->name, "step-other") == 0))
                    a->name = a->process == win->process && a->start == win->start ? "step"
                                                                                    : "step-other";
            }
            int32_t rank = t.processes[win->process].rank;
            cp_trace alone;
            char why[256];
            cr_assert_eq(cp_trace_scope_rank(&t, rank, "range", "step", &alone, why, sizeof why),
                         0, "%s", why);
            cp_metrics a;
            cr_assert_eq(cp_timeline_analyse(&alone, NULL, &a), 0);
            const cp_step_part *p = &m.step_parts[w];
            cr_expect_eq(p->kernel_busy_ns, a.kernel_busy_ns, "%s window %zu", runs[f], w);
            cr_expect_eq(p->copy_busy_ns, a.copy_busy_ns, "%s window %zu", runs[f], w);
            cr_expect_eq(p->copy_kernel_overlap_ns, a.copy_kernel_overlap_ns, "%s %zu", runs[f], w);
            cr_expect_eq(p->comm_busy_ns, a.comm_busy_ns, "%s window %zu", runs[f], w);
            cr_expect_eq(p->comm_compute_overlap_ns, a.comm_compute_overlap_ns, "%s %zu", runs[f],
                         w);
            cr_expect_eq(p->kernel_sum_ns, a.kernel_sum_ns, "%s window %zu", runs[f], w);
            compared += a.kernels > 0;
            cp_metrics_free(&a);
            cp_trace_free(&alone);
        }
        cr_expect_geq(compared, s.n / 2, "%s: windows with work", runs[f]);
        cp_metrics_free(&m);
        cp_step_windows_free(&s);
        cp_trace_free(&t);
    }
}

/* The straggler per step, by hand: three steps of two processes; a
 * collective goes to the step whose span holds its first start; per step
 * the rank late at most of its collectives (the lowest on a tie) and its
 * median lag; a step without one has none, and its lag is not measured. */
Test(steps, the_late_rank_of_each_step)
{
    cp_step_windows s;
    cr_assert_eq(cp_step_windows_init(&s, "step"), 0);
    cp_step_window w[] = {{0, 0, 100, 200}, {1, 0, 105, 210}, {0, 0, 300, 400},
                          {1, 0, 305, 420}, {0, 0, 500, 600}, {1, 0, 500, 600}};
    for (size_t i = 0; i < 6; i++) {
        cp_activity a = {.kind = CP_ACT_RANGE, .name = "step", .process = w[i].process,
                         .start = w[i].start, .end = w[i].end};
        cr_assert_eq(cp_step_windows_learn(&s, &a), 0);
    }
    cp_step_windows_finish(&s);
    cp_step_row *rows;
    long n = cp_step_rows(&s, NULL, &rows);
    cr_assert_eq(n, 3);
    cp_collective_arrival a[] = {
        {110, 1, 40}, {150, 1, 60}, {190, 0, 10},  /* step 1: rank 1 twice, lags 40 60 */
        {310, 0, 5},  {320, 1, 7},                 /* step 2: a tie, the lower rank */
        {209, 1, 99},                              /* inside step 1's span (to 210) */
        {450, 1, 1000},                            /* between steps: no step's */
    };
    cr_assert_eq(cp_step_rows_put_arrivals(rows, 3, &s, a, sizeof a / sizeof a[0]), 0);
    cr_expect_eq(rows[0].collectives, 4);
    cr_expect_eq(rows[0].late_rank, 1);
    cr_expect_eq(rows[0].late_count, 3);
    cr_expect_eq(rows[0].straggler_lag_ns, 60, "the middle of 40, 60, 99");
    cr_expect_eq(rows[1].collectives, 2);
    cr_expect_eq(rows[1].late_rank, 0);
    cr_expect_eq(rows[1].straggler_lag_ns, 5);
    cr_expect_eq(rows[2].collectives, 0);
    cr_expect_eq(rows[2].late_rank, -1);
    const cp_metric_def *d = cp_step_metric_find("straggler_lag_ns");
    cr_assert_not_null(d);
    cr_expect_not_null(cp_step_unmeasured(&rows[2], d));
    cr_expect_null(cp_step_unmeasured(&rows[0], d));
    /* Over the steps: a tie of one step each goes to the lower rank. */
    cp_step_late late;
    cr_assert(cp_step_late_rank(rows, 3, &late));
    cr_expect_eq(late.rank, 0);
    cr_expect_eq(late.steps, 1);
    cr_expect_eq(late.with, 2);
    cr_expect_eq(late.median_lag_ns, 5);
    free(rows);
    /* Its median lag is over all its steps (the page once took the first 64). */
    cp_step_row many[100];
    for (uint32_t i = 0; i < 100; i++)
        many[i] = (cp_step_row){.index = i + 1, .late_rank = 1, .straggler_lag_ns = 99 - i};
    many[7].late_rank = -1;
    cr_assert(cp_step_late_rank(many, 100, &late));
    cr_expect_eq(late.rank, 1);
    cr_expect_eq(late.steps, 99);
    cr_expect_eq(late.with, 99);
    cr_expect_eq(late.median_lag_ns, 49, "the middle of 0..99 without 92");
    cr_expect_not(cp_step_late_rank(many, 0, &late));
    cr_expect_eq(late.rank, -1);
    cp_step_windows_free(&s);
}

/* On the recorded DDP runs, judged as `cuproof check` judges a rec file:
 * where rank 1 sleeps 20 ms a step its median step lag passes the
 * straggler's 0.4 ms, and where no rank is slow it stays under; the same
 * line passes on one and fails on the other. */
Test(steps, the_recorded_straggler_is_late_step_by_step)
{
    const char *lines = "per step p50: straggler_lag_ns >= 4e5\n"
                        "per step p50: collectives >= 8\n";
    cp_expect_list l = {0};
    cr_assert_eq(cp_expect_parse(lines, 1, &l), 0, "%s", cp_last_error());
    const char *runs[] = {CUPROOF_FIXTURES "/exec-h100x2-ddp/straggler.cprec",
                          CUPROOF_FIXTURES "/exec-h100x2-ddp/overlap.cprec"};
    for (size_t f = 0; f < 2; f++) {
        cp_program_stream ps;
        cr_assert_eq(cp_program_stream_judge(&runs[f], 1, true, &l, NULL, &ps), 0, "%s",
                     cp_last_error());
        cp_program_check c[2];
        for (size_t k = 0; k < 2; k++)
            cr_assert_eq(cp_program_stream_verdict(&ps, &l, k, &c[k]), 0);
        cr_expect_eq(c[0].ok, f == 0, "%s: %s", runs[f], c[0].measured);
        cr_expect_not(c[0].undecided, "%s", c[0].measured);
        cr_expect(c[1].ok, "%s: %s", runs[f], c[1].measured);
        cp_program_stream_free(&ps);
    }
    cp_expect_list_free(&l);
}
