/*
 * cuproof compare on the figure a variant is judged on (compare_timing.c
 * chooses it, compare_figure.c's rules follow): synthetic passes whose
 * GPU time spreads 1% between passes and whose wall time spreads 12%, as
 * the H200's host-bound variants did (samples/h200-ci-runs3), compared
 * 1000 times; old reports without GPU time, a report with it against one
 * without, a variant its case judges on wall time, and wall time judged
 * beside the GPU's; and the GPU time written to report.json and read back.
 */
#include <cuproof/internal/compare.h>
#include <cuproof/internal/compare_stats.h>
#include <cuproof/internal/report.h>
#include <cuproof/error.h>
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A small deterministic generator (xorshift64*) and normal deviates. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static double uniform(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return ((rng_state * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
}

static double normal(void)
{
    double u = uniform(), v = uniform();
    return sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

#define PASSES 3
#define SAMPLES 10

/* How one side's variant is drawn: the GPU's time at `gpu_ms` (times
 * `gpu_by`), its passes' levels spreading by `gpu_spread` (sd of the
 * log), samples within a pass by 0.5%; wall time at `wall_ms` (times
 * `wall_by`), passes spreading by `wall_spread`, samples by 3.7% (the
 * median CV within a pass on the H200). `gpu`: GPU time measured and
 * judged on (else a report before schema 1.14); `wall_why`: the case
 * judges it on wall time, for that reason. */
typedef struct draw {
    double gpu_ms, gpu_by, gpu_spread;
    double wall_ms, wall_by, wall_spread;
    bool gpu;
    const char *wall_why;
} draw;

static void fill(double *s, size_t n, double level, double cv)
{
    for (size_t k = 0; k < n; k++)
        s[k] = level * exp(cv * normal());
}

/* Variant `name` of case "k" in *r (which holds that one case), drawn. */
static void add_variant(cp_report *r, const char *name, const draw *d)
{
    cp_variant_result *v = cp_result_add_variant(&r->cases[0]);
    cr_assert_not_null(v);
    snprintf(v->name, sizeof v->name, "%s", name);
    v->ran = v->traced = true;
    v->nruns = PASSES;
    v->runs = calloc(PASSES, sizeof *v->runs);
    v->samples_ms = calloc(PASSES * SAMPLES, sizeof *v->samples_ms);
    v->gpu_samples_ms = d->gpu ? calloc(PASSES * SAMPLES, sizeof *v->gpu_samples_ms) : NULL;
    cr_assert(v->runs && v->samples_ms && (!d->gpu || v->gpu_samples_ms));
    for (int p = 0; p < PASSES; p++) {
        cp_run_value *run = &v->runs[p];
        cp_timing t;
        run->samples_ms = calloc(SAMPLES, sizeof *run->samples_ms);
        cr_assert_not_null(run->samples_ms);
        run->nsamples = SAMPLES;
        fill(run->samples_ms, SAMPLES, d->wall_ms * d->wall_by * exp(d->wall_spread * normal()),
             0.037);
        cr_assert_eq(cp_timing_compute(run->samples_ms, SAMPLES, &t), 0);
        run->median_ms = t.median_ms;
        memcpy(v->samples_ms + p * SAMPLES, run->samples_ms, SAMPLES * sizeof *v->samples_ms);
        run->clocks_before = run->clocks_after = (cp_clocks){.known = true, .sm_mhz = 1980};
        if (d->gpu) {
            run->gpu_samples_ms = calloc(SAMPLES, sizeof *run->gpu_samples_ms);
            cr_assert_not_null(run->gpu_samples_ms);
            run->ngpu_samples = SAMPLES;
            fill(run->gpu_samples_ms, SAMPLES,
                 d->gpu_ms * d->gpu_by * exp(d->gpu_spread * normal()), 0.005);
            cr_assert_eq(cp_timing_compute(run->gpu_samples_ms, SAMPLES, &t), 0);
            run->gpu_median_ms = t.median_ms;
            memcpy(v->gpu_samples_ms + p * SAMPLES, run->gpu_samples_ms,
                   SAMPLES * sizeof *v->gpu_samples_ms);
        }
        run->device_busy_ns = (uint64_t)(d->gpu_ms * d->gpu_by * 1e6);
    }
    v->nsamples = PASSES * SAMPLES;
    cr_assert_eq(cp_timing_compute(v->samples_ms, v->nsamples, &v->timing), 0);
    if (d->gpu) {
        v->ngpu_samples = PASSES * SAMPLES;
        cr_assert_eq(cp_timing_compute(v->gpu_samples_ms, v->ngpu_samples, &v->gpu_timing), 0);
        v->figure = CP_WORK_GPU;
    } else {
        v->figure = CP_WORK_WALL;
        snprintf(v->figure_why, sizeof v->figure_why, "%s", CP_WALL_ONLY);
    }
    if (d->wall_why) {
        v->figure = CP_WORK_WALL;
        snprintf(v->figure_why, sizeof v->figure_why, "%s", d->wall_why);
    }
    /* The traced run: the GPU busy its whole GPU time, a third of the
     * wall time (host-bound by wall time, as 38 of 54 H200 variants). */
    double gpu = d->gpu_ms * d->gpu_by;
    v->metrics.span_ns = (uint64_t)(gpu * 1e6);
    v->metrics.kernel_busy_ns = (uint64_t)(gpu * 1e6);
}

/* A report of nv variants, each drawn by d with its own scale. */
static void report_of(cp_report *r, int nv, const draw *d)
{
    cr_assert_not_null(one_case_report(r, "k", "NVIDIA H200"));
    for (int i = 0; i < nv; i++) {
        char name[16];
        snprintf(name, sizeof name, "v%d", i);
        draw di = *d;
        di.gpu_ms *= 1 + 0.37 * i;
        di.wall_ms *= 1 + 0.37 * i;
        add_variant(r, name, &di);
    }
}

static void compare(cp_report *o, cp_report *n, cp_comparison *c)
{
    const char *po[] = {"old.json"}, *pn[] = {"new.json"};
    cp_compare_side so = {o, po, 1}, sn = {n, pn, 1};
    cr_assert_eq(cp_compare_build(&so, &sn, NULL, c), 0, "%s", cp_last_error());
}

/* nv variants drawn by d against the same with the wall time `by` times
 * longer, compared into *c (free with cp_comparison_free). */
static void wall_moved(const draw *d, int nv, double by, cp_comparison *c)
{
    cp_report o, n;
    report_of(&o, nv, d);
    draw m = *d;
    m.wall_by = by;
    report_of(&n, nv, &m);
    compare(&o, &n, c);
    cp_report_free(&n);
    cp_report_free(&o);
}

static size_t count(const cp_comparison *c, const char *verdict)
{
    size_t k = 0;
    for (size_t i = 0; i < c->nvariants; i++)
        k += strcmp(c->variants[i].verdict, verdict) == 0;
    return k;
}

/* The statistics on the GPU's time: one build against itself, 20 pairs
 * of reports of 50 variants (1000 comparisons), GPU time spreading 1%
 * between passes and wall time 12%: at most 10% noisy, no slower and no
 * faster; then the new side's GPU time 5% more: slower in 95% of them or
 * more. The control: the same passes judged on wall time (reports
 * without GPU time) abstain on far more than 10%. */
Test(compare_figure, gpu_time_rarely_abstains_and_never_cries_wolf)
{
    draw same = {.gpu_ms = 0.2, .gpu_by = 1, .gpu_spread = 0.01,
                 .wall_ms = 0.6, .wall_by = 1, .wall_spread = 0.12, .gpu = true};
    size_t noisy = 0, wrong = 0, caught = 0, total = 0, wall_noisy = 0, wall_total = 0;
    for (int pair = 0; pair < 20; pair++) {
        cp_report o, n, n5;
        report_of(&o, 50, &same);
        report_of(&n, 50, &same);
        draw more = same;
        more.gpu_by = 1.05;
        report_of(&n5, 50, &more);
        cp_comparison c;
        compare(&o, &n, &c);
        cr_assert_eq(c.nvariants, 50);
        cr_expect_eq(c.on_gpu, 50u);
        noisy += count(&c, "noisy");
        wrong += count(&c, "slower") + count(&c, "faster") + count(&c, "drift");
        total += c.nvariants;
        cr_expect_eq(c.regressions, 0);
        cp_comparison_free(&c);
        compare(&o, &n5, &c);
        caught += count(&c, "slower");
        for (size_t i = 0; i < c.nvariants && getenv("SHOW_MISSED"); i++)
            if (strcmp(c.variants[i].verdict, "slower"))
                printf("missed: %s %.4f [%.4f, %.4f] p %.2g\n", c.variants[i].verdict,
                       c.variants[i].ratio, c.variants[i].ci_low, c.variants[i].ci_high,
                       c.variants[i].p);
        cp_comparison_free(&c);
        cp_report_free(&n5);
        cp_report_free(&n);
        cp_report_free(&o);
        /* The control: the same draws judged on wall time. */
        draw wall = same;
        wall.gpu = false;
        report_of(&o, 50, &wall);
        report_of(&n, 50, &wall);
        compare(&o, &n, &c);
        cr_expect_eq(c.wall_only, 50u);
        wall_noisy += count(&c, "noisy");
        wall_total += c.nvariants;
        cp_comparison_free(&c);
        cp_report_free(&n);
        cp_report_free(&o);
    }
    cr_assert_eq(total, 1000u);
    cr_expect_eq(wrong, 0u, "%zu false verdicts in 1000", wrong);
    cr_expect_leq(noisy, 100u, "%zu of 1000 noisy on the GPU's time", noisy);
    cr_expect_geq(caught, 950u, "a 5%% change found in %zu of 1000", caught);
    cr_expect_gt(wall_noisy, wall_total / 2, "the control: %zu of %zu noisy on wall time",
                 wall_noisy, wall_total);
    printf("compare_figure: on the GPU's time %zu of 1000 noisy, %zu false, a 5%% change found "
           "%zu times; on wall time %zu of %zu noisy\n",
           noisy, wrong, caught, wall_noisy, wall_total);
}

/* Each variant of *r (as report_of drew it, scale i) gated or not, its
 * traced runs showing the GPU idle for `idle` of its GPU time and busy
 * with its own work for the rest, times `own_by` (each pass within
 * 0.2%; the events keep their draw). */
static void traced_waits(cp_report *r, double gpu_ms, double idle, double own_by, bool gated)
{
    for (size_t i = 0; i < r->cases[0].nvariants; i++) {
        cp_variant_result *v = &r->cases[0].variants[i];
        double g = gpu_ms * (1 + 0.37 * (double)i) * 1e6;
        v->gated = gated;
        v->metrics.idle_ns = (uint64_t)(idle * g);
        v->metrics.span_ns = v->metrics.idle_ns + (uint64_t)((1 - idle) * g * own_by);
        v->metrics.kernel_busy_ns = v->metrics.span_ns - v->metrics.idle_ns;
        for (size_t p = 0; p < v->nruns; p++) {
            cp_run_value *run = &v->runs[p];
            run->traced = true;
            run->metrics = v->metrics;
            run->metrics.span_ns = run->metrics.idle_ns +
                                   (uint64_t)((1 - idle) * g * own_by * (1 + 0.002 * (double)p));
            run->metrics.kernel_busy_ns = run->metrics.span_ns - run->metrics.idle_ns;
        }
    }
}

/* Events that hold waits (the traced run idle for 60% of them), their
 * passes 15% apart as indexing's were on the H200: judged on each run's
 * own busy time, which a 2.5% shift between invocations does not make
 * slower (CP_CMP_BUSY_MIN_EFFECT) and 10% more work does. The controls:
 * the same gated, and idle for 2% of them, are judged on the events. */
Test(compare_figure, events_that_hold_waits_are_judged_on_the_own_busy_time)
{
    draw d = {.gpu_ms = 1, .gpu_by = 1, .gpu_spread = 0.15, .wall_ms = 2, .wall_by = 1,
              .wall_spread = 0.12, .gpu = true};
    const double by[2] = {1.025, 1.10};
    for (int k = 0; k < 2; k++) {
        cp_report o, n;
        report_of(&o, 4, &d);
        report_of(&n, 4, &d);
        traced_waits(&o, d.gpu_ms, 0.6, 1, false);
        traced_waits(&n, d.gpu_ms, 0.6, by[k], false);
        cp_comparison c;
        compare(&o, &n, &c);
        cr_expect_eq(c.on_busy, 4u, "%zu on busy time", c.on_busy);
        for (size_t i = 0; i < c.nvariants; i++) {
            const cp_cmp_variant *v = &c.variants[i];
            cr_expect(v->by_busy);
            cr_expect_str_eq(v->verdict, k ? "slower" : "same", "x%.3f %s: %s %.4f [%.4f, %.4f]",
                             by[k], v->variant, v->verdict, v->ratio, v->ci_low, v->ci_high);
        }
        cp_comparison_free(&c);
        cp_report_free(&n);
        cp_report_free(&o);
    }
    for (int gated = 0; gated < 2; gated++) {
        cp_report o, n;
        draw e = d;
        e.gpu_spread = gated ? d.gpu_spread : 0.005; /* events the traced run accounts for */
        report_of(&o, 4, &e);
        report_of(&n, 4, &e);
        double idle = gated ? 0.6 : 0.02;
        traced_waits(&o, d.gpu_ms, idle, 1, gated);
        traced_waits(&n, d.gpu_ms, idle, 1, gated);
        cp_comparison c;
        compare(&o, &n, &c);
        cr_expect_eq(c.on_busy, 0u, "%s: judged on the events",
                     gated ? "gated" : "busy the events' whole time");
        cr_expect_eq(c.on_gpu, 4u);
        cp_comparison_free(&c);
        cp_report_free(&n);
        cp_report_free(&o);
    }
}

/* The GPU's own busy time leaves the CPU's staging of pageable copies
 * out; a report from before pageable_copy_sum_ns counts all its copy
 * time as theirs; idle longer than the span is no figure at all. */
Test(compare_figure, own_busy_time_leaves_pageable_copies_out)
{
    cp_metrics m = {.span_ns = 400000, .idle_ns = 20000, .kernel_busy_ns = 25000,
                    .copy_busy_ns = 355000, .pageable_copies = 1,
                    .pageable_copy_sum_ns = 330000};
    cr_expect_eq(cp_metrics_own_ns(&m), 50000u);
    m.pageable_copy_sum_ns = 0; /* before the sum was kept */
    cr_expect_eq(cp_metrics_own_ns(&m), 25000u);
    m.pageable_copies = 0; /* page-locked: all of it the GPU's */
    cr_expect_eq(cp_metrics_own_ns(&m), 380000u);
    m.idle_ns = 500000;
    cr_expect_eq(cp_metrics_own_ns(&m), 0u);
}

/* Reports without GPU time compare as before, each verdict marked wall
 * time only; a report with GPU time against one without says which side
 * lacks it. */
Test(compare_figure, old_reports_and_mixed_sides_are_wall_time_only)
{
    draw gpu = {.gpu_ms = 1, .gpu_by = 1, .gpu_spread = 0.01,
                .wall_ms = 1.2, .wall_by = 1, .wall_spread = 0.01, .gpu = true};
    draw old = gpu;
    old.gpu = false;
    cp_report a, b;
    report_of(&a, 2, &old);
    report_of(&b, 2, &gpu);
    cp_comparison c;
    compare(&a, &a, &c);
    for (size_t i = 0; i < c.nvariants; i++) {
        cr_expect_eq(c.variants[i].judged_on, CP_WORK_WALL);
        cr_expect_str_eq(c.variants[i].judged_why, CP_WALL_ONLY);
    }
    cr_expect_eq(c.wall_only, 2u);
    cr_expect_not_null(strstr(c.figure_note, "2 on wall time only"), "%s", c.figure_note);
    cp_comparison_free(&c);
    compare(&a, &b, &c);
    for (size_t i = 0; i < c.nvariants; i++) {
        cr_expect_eq(c.variants[i].judged_on, CP_WORK_WALL);
        cr_expect_str_eq(c.variants[i].judged_why, CP_WALL_ONLY);
    }
    cp_comparison_free(&c);
    compare(&b, &b, &c);
    for (size_t i = 0; i < c.nvariants; i++)
        cr_expect_eq(c.variants[i].judged_on, CP_WORK_GPU);
    cr_expect_eq(c.on_gpu, 2u);
    cp_comparison_free(&c);
    /* A 1.14 report whose variant lacks GPU samples (as exec's ranges). */
    cp_report bare;
    report_of(&bare, 2, &old);
    for (size_t i = 0; i < bare.cases[0].nvariants; i++) {
        bare.cases[0].variants[i].figure = CP_WORK_GPU;
        bare.cases[0].variants[i].figure_why[0] = '\0';
    }
    compare(&bare, &b, &c);
    for (size_t i = 0; i < c.nvariants; i++)
        cr_expect_str_eq(c.variants[i].judged_why,
                         "wall time only: the old side has no GPU time");
    cp_comparison_free(&c);
    cp_report_free(&bare);
    cp_report_free(&a);
    cp_report_free(&b);
}

/* A variant its case judges on wall time is judged at the host
 * threshold: 5% slower is "same" (saying so), 2.5x is slower. Its
 * control, the same draws without the case's choice (wall time only):
 * 5% in 12%-spread runs is not "same". */
Test(compare_figure, a_wall_time_variant_is_judged_at_the_host_threshold)
{
    const char *why = "its subject is the host's threads";
    draw d = {.gpu_ms = 1, .gpu_by = 1, .gpu_spread = 0.01, .wall_ms = 1, .wall_by = 1,
              .wall_spread = 0.12, .gpu = false, .wall_why = why};
    double by[2] = {1.05, 2.5};
    const char *want[2] = {"same", "slower"};
    for (int k = 0; k < 2; k++) {
        cp_comparison c;
        wall_moved(&d, 4, by[k], &c);
        cr_expect_eq(c.on_declared_wall, 4u);
        for (size_t i = 0; i < c.nvariants; i++) {
            const cp_cmp_variant *v = &c.variants[i];
            cr_expect_str_eq(v->verdict, want[k], "x%.2f %s: %s (%s)", by[k], v->variant,
                             v->verdict, v->why);
            cr_expect_str_eq(v->judged_why, why);
            if (k == 0)
                cr_expect_not_null(strstr(v->why, "at the host threshold"), "%s", v->why);
        }
        cp_comparison_free(&c);
    }
}

/* Judged on the GPU's time, the wall time beside it: a host-side
 * slowdown past the host threshold (2.5x) with the GPU's time unmoved is
 * still slower, saying it is the wall time; 5% more wall time is not. */
Test(compare_figure, wall_time_past_the_host_threshold_is_slower_beside_the_gpu)
{
    draw d = {.gpu_ms = 1, .gpu_by = 1, .gpu_spread = 0.01, .wall_ms = 2, .wall_by = 1,
              .wall_spread = 0.02, .gpu = true};
    double by[2] = {1.05, 2.5};
    for (int k = 0; k < 2; k++) {
        cp_comparison c;
        wall_moved(&d, 3, by[k], &c);
        for (size_t i = 0; i < c.nvariants; i++) {
            const cp_cmp_variant *v = &c.variants[i];
            cr_expect_eq(v->judged_on, CP_WORK_GPU);
            cr_expect_str_eq(v->verdict, k ? "slower" : "same", "x%.2f: %s (%s)", by[k],
                             v->verdict, v->why);
            if (k) {
                cr_expect_not_null(strstr(v->why, "wall time x2."), "%s", v->why);
                /* The row is the wall time's: its ratio, no interval. */
                cr_expect_float_eq(v->ratio, v->new_wall_ms / v->old_wall_ms, 1e-9);
                cr_expect(isnan(v->ci_low) && isnan(v->ci_high));
                cr_expect(v->regression);
            }
            cr_expect(v->new_wall_ms / v->old_wall_ms > (k ? 2 : 1));
        }
        cp_comparison_free(&c);
    }
}

/* report.json keeps each timed run's GPU time, every pass's, and the
 * figure a variant is judged on (schema 1.14), and reads them back. */
Test(compare_figure, gpu_time_is_written_and_read_back)
{
    draw d = {.gpu_ms = 1, .gpu_by = 1, .gpu_spread = 0.01, .wall_ms = 2, .wall_by = 1,
              .wall_spread = 0.02, .gpu = true};
    cp_report r, back;
    report_of(&r, 1, &d);
    draw w = d;
    w.wall_why = "its subject is the host";
    add_variant(&r, "host", &w);
    r.cases[0].variants[0].gated = true;
    char dir[] = "/tmp/cuproof-figure-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/report.json", dir);
    cr_assert_eq(cp_report_json_write(&r, path), 0, "%s", cp_last_error());
    cr_assert_eq(cp_report_read(path, &back), 0, "%s", cp_last_error());
    const cp_variant_result *a = &r.cases[0].variants[0], *b = &back.cases[0].variants[0];
    cr_expect_eq(b->figure, CP_WORK_GPU);
    cr_expect(b->gated);
    cr_assert_eq(b->ngpu_samples, a->ngpu_samples);
    for (size_t i = 0; i < a->ngpu_samples; i++)
        cr_expect_float_eq(b->gpu_samples_ms[i], a->gpu_samples_ms[i], 1e-9);
    cr_assert_eq(b->nruns, 3u);
    cr_expect_eq(b->runs[1].ngpu_samples, (size_t)SAMPLES);
    cr_expect_float_eq(b->runs[1].gpu_median_ms, a->runs[1].gpu_median_ms, 1e-9);
    const cp_variant_result *h = &back.cases[0].variants[1];
    cr_expect_eq(h->figure, CP_WORK_WALL);
    cr_expect_str_eq(h->figure_why, "its subject is the host");
    cr_expect_not(h->gated);
    cp_report_free(&back);
    cp_report_free(&r);
    unlink(path);
    rmdir(dir);
    /* A report of schema 1.13 (the H100's, before GPU time): wall time
     * only, saying why. */
    cr_assert_eq(cp_report_read(CUPROOF_FIXTURES "/compare-h100/mk-base2.report.json", &back), 0,
                 "%s", cp_last_error());
    const cp_variant_result *old = &back.cases[0].variants[0];
    cr_expect_eq(old->figure, CP_WORK_WALL);
    cr_expect_str_eq(old->figure_why, CP_WALL_ONLY);
    cr_expect_eq(old->ngpu_samples, 0u);
    cp_report_free(&back);
}

/* The report of `cuproof run --profile ci --runs 3` number n on the H200
 * (samples/h200-gpu-time), read into *r through a gunzipped copy. */
static void recorded(const char *dir, int n, cp_report *r)
{
    char cmd[512], path[64];
    snprintf(path, sizeof path, "/tmp/cuproof-h200-run%d-%d.json", n, (int)getpid());
    snprintf(cmd, sizeof cmd, "gzip -dc %s/../../samples/h200-gpu-time/%srun%d.json.gz > %s",
             CUPROOF_FIXTURES, dir, n, path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    cr_assert_eq(cp_report_read(path, r), 0, "%s", cp_last_error());
    unlink(path);
}

/* Without its GPU time: as a report before schema 1.14 reads. */
static void wall_time_only(cp_report *r)
{
    for (size_t i = 0; i < r->ncases; i++)
        for (size_t k = 0; k < r->cases[i].nvariants; k++) {
            cp_variant_result *v = &r->cases[i].variants[k];
            v->figure = CP_WORK_WALL;
            snprintf(v->figure_why, sizeof v->figure_why, "%s", CP_WALL_ONLY);
            free(v->gpu_samples_ms);
            v->gpu_samples_ms = NULL;
            v->ngpu_samples = 0;
            for (size_t p = 0; p < v->nruns; p++) {
                free(v->runs[p].gpu_samples_ms);
                v->runs[p].gpu_samples_ms = NULL;
                v->runs[p].ngpu_samples = 0;
                v->runs[p].gpu_median_ms = 0;
            }
        }
}

/* Three back-to-back `run --profile ci --runs 3` of one build on the
 * H200 (samples/h200-gpu-time, the second recording), compared in all
 * six ordered pairs: no slower, faster or drift, 58 variants on the GPU's
 * time (33 of them on their own busy time: their events hold waits) and
 * 16 on wall time by their case's choice, and noisy in at most 10% of the
 * 74 (issue 40; 2 or 3 in each); the same reports without their GPU time
 * are noisy in 40 or more. The first recording (first/, a build that
 * judged multi-kernel streams-pageable on the GPU's time): no false
 * verdict either, 4 to 8 noisy. */
Test(compare_figure, the_h200_runs_on_the_gpus_time, .timeout = 120)
{
    cp_report r[3];
    for (int i = 0; i < 3; i++)
        recorded("", i + 1, &r[i]);
    const char *paths[3] = {"run1.json", "run2.json", "run3.json"};
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1)
            for (int i = 0; i < 3; i++)
                wall_time_only(&r[i]);
        if (pass == 2)
            for (int i = 0; i < 3; i++) {
                cp_report_free(&r[i]);
                recorded("first/", i + 1, &r[i]);
            }
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                if (a == b)
                    continue;
                cp_compare_side so = {&r[a], &paths[a], 1}, sn = {&r[b], &paths[b], 1};
                cp_comparison c;
                cr_assert_eq(cp_compare_build(&so, &sn, NULL, &c), 0, "%s", cp_last_error());
                cr_expect_eq(c.nvariants, 74u);
                cr_expect_eq(count(&c, "slower") + count(&c, "faster") + count(&c, "drift"), 0u,
                             "pass %d, run%d against run%d", pass, a + 1, b + 1);
                cr_expect_eq(c.regressions, 0);
                size_t noisy = count(&c, "noisy");
                if (pass == 0) {
                    cr_expect_eq(c.on_gpu, 58u);
                    cr_expect_eq(c.on_busy, 33u);
                    cr_expect_eq(c.on_declared_wall, 16u);
                    cr_expect_leq(10 * noisy, c.nvariants, "run%d against run%d: %zu noisy",
                                  a + 1, b + 1, noisy);
                } else if (pass == 1) {
                    cr_expect_eq(c.wall_only, 74u);
                    cr_expect_geq(noisy, 40u, "wall time only, run%d against run%d: %zu noisy",
                                  a + 1, b + 1, noisy);
                } else {
                    cr_expect_leq(noisy, 8u, "first recording, run%d against run%d: %zu noisy",
                                  a + 1, b + 1, noisy);
                }
                if (getenv("SHOW_NOISY"))
                    printf("pass %d run%d -> run%d: %zu noisy\n", pass, a + 1, b + 1, noisy);
                cp_comparison_free(&c);
            }
    }
    for (int i = 0; i < 3; i++)
        cp_report_free(&r[i]);
}
