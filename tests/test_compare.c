/*
 * cuproof compare's layers on their own (compare/compare*.c): a
 * cp_comparison built in memory and printed by each output, which then
 * cannot have read any report; and the comparison of several reports a
 * side, each a run, or each of a report's passes a run.
 */
#include <cuproof/internal/compare.h>
#include <cuproof/internal/compare_stats.h>
#include <cuproof/internal/file.h>
#include <cuproof/internal/report.h>
#include <cuproof/error.h>
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The H100 the recorded reports name. */
#define H100 "NVIDIA H100 80GB HBM3"

/* multi-kernel alone on the H100, with every timed run kept. */
#define FULL CUPROOF_FIXTURES "/compare-h100/mk-base2.report.json"

/* A comparison no report stands behind: two reports whose paths exist
 * nowhere, one variant slower beyond the threshold on 2 runs against 3,
 * and a check that went from passed to failed. */
static void in_memory(cp_comparison *c)
{
    memset(c, 0, sizeof *c);
    c->old_reports = calloc(1, sizeof *c->old_reports);
    c->new_reports = calloc(1, sizeof *c->new_reports);
    c->variants = calloc(1, sizeof *c->variants);
    c->checks = calloc(1, sizeof *c->checks);
    cr_assert(c->old_reports && c->new_reports && c->variants && c->checks);
    c->n_old_reports = c->n_new_reports = 1;
    snprintf(c->old_reports[0].path, sizeof c->old_reports[0].path, "/nowhere/old.json");
    snprintf(c->new_reports[0].path, sizeof c->new_reports[0].path, "/nowhere/new.json");
    snprintf(c->old_reports[0].gpu_name, sizeof c->old_reports[0].gpu_name, "Made-up GPU");
    snprintf(c->new_reports[0].gpu_name, sizeof c->new_reports[0].gpu_name, "Made-up GPU");
    c->comparable = true;
    c->threshold = 0.10;
    c->min_effect = CP_CMP_MIN_EFFECT;
    c->host_threshold = CP_CMP_HOST_THRESHOLD;
    c->ncase_names = 1;
    cp_cmp_variant *v = &c->variants[0];
    c->nvariants = 1;
    snprintf(v->case_name, sizeof v->case_name, "made-up");
    snprintf(v->variant, sizeof v->variant, "slowpoke");
    v->samples = true;
    v->old_median_ms = 2.0;
    v->new_median_ms = 3.0;
    v->ratio = 1.5;
    v->ci_low = 1.4;
    v->ci_high = 1.6;
    v->p = 0.001;
    v->old_samples = v->new_samples = 30;
    v->old_runs = calloc(2, sizeof *v->old_runs);
    v->new_runs = calloc(3, sizeof *v->new_runs);
    cr_assert(v->old_runs && v->new_runs);
    v->n_old_runs = 2;
    v->n_new_runs = 3;
    v->device_share = 0.97;
    snprintf(v->verdict, sizeof v->verdict, "slower");
    v->slower = v->regression = true;
    c->nchecks = 1;
    snprintf(c->checks[0].case_name, sizeof c->checks[0].case_name, "made-up");
    snprintf(c->checks[0].name, sizeof c->checks[0].name, "made-up: output");
    snprintf(c->checks[0].was, sizeof c->checks[0].was, "passed");
    snprintf(c->checks[0].now, sizeof c->checks[0].now, "failed");
    c->checks[0].regression = true;
    c->regressions = 2;
}

/* The page cp_compare_write_html writes of c (the caller frees it). */
static char *page_of(const cp_comparison *c)
{
    char path[] = "/tmp/cuproof-cmp-page-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(cp_compare_write_html(c, path), 0, "%s", cp_last_error());
    char *page = cp_read_file(path);
    remove(path);
    cr_assert_not_null(page);
    return page;
}

/* The table then the JSON of c, as printed (the caller frees it). */
static char *printed(const cp_comparison *c)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    cr_expect_eq(cp_compare_print_text(c, f), 0);
    cr_expect_eq(cp_compare_print_json(c, f), 0);
    fclose(f);
    return text;
}

/* The page is drawn from the structure alone: its paths name no file, so
 * a page that read the reports again could not be written. */
Test(compare, html_is_drawn_from_the_comparison_alone)
{
    cp_comparison c;
    in_memory(&c);
    char *page = page_of(&c);
    cr_expect_not_null(strstr(page, "/nowhere/old.json"));
    cr_expect_not_null(strstr(page, "Made-up GPU"));
    cr_expect_not_null(strstr(page, "data-variant=\"slowpoke\""));
    cr_expect_not_null(strstr(page, "2 regressions"));
    cr_expect_not_null(strstr(page, "passed &rarr; failed"));
    cr_expect_not_null(strstr(page, ">2 / 3<"), "the runs each side rests on");
    free(page);
    /* The table and the JSON print the same structure. */
    char *text = printed(&c);
    cr_expect_not_null(strstr(text, "slower (regression)"), "%s", text);
    cr_expect_not_null(strstr(text, "2/3"), "%s", text);
    cr_expect_not_null(strstr(text, "check made-up: made-up: output: passed -> failed"), "%s",
                       text);
    cr_expect_not_null(strstr(text, "\"old_run_count\":\t2"), "%s", text);
    free(text);
    cp_comparison_free(&c);
}

/* Every sample of case/variant in report r scaled by `by`, and its median. */
static cp_variant_result *variant_of(cp_report *r, const char *cname, const char *vname)
{
    for (size_t i = 0; i < r->ncases; i++)
        for (size_t j = 0; strcmp(r->cases[i].name, cname) == 0 && j < r->cases[i].nvariants;
             j++)
            if (strcmp(r->cases[i].variants[j].name, vname) == 0)
                return &r->cases[i].variants[j];
    return NULL;
}

static void scale(cp_report *r, double by)
{
    cp_variant_result *v = variant_of(r, "multi-kernel", "streams-pinned");
    cr_assert_not_null(v);
    cr_assert_gt(v->nsamples, 0);
    for (size_t i = 0; i < v->nsamples; i++)
        v->samples_ms[i] *= by;
    v->timing.median_ms *= by;
    v->metrics.span_ns = (uint64_t)((double)v->metrics.span_ns * by);
    v->metrics.idle_ns = (uint64_t)((double)v->metrics.idle_ns * by);
    /* The GPU's own time too: a slowdown of the work, not drift. */
    v->metrics.kernel_busy_ns = (uint64_t)((double)v->metrics.kernel_busy_ns * by);
    v->metrics.copy_busy_ns = (uint64_t)((double)v->metrics.copy_busy_ns * by);
}

static const cp_cmp_variant *find(const cp_comparison *c, const char *cname, const char *vname)
{
    for (size_t i = 0; i < c->nvariants; i++)
        if (strcmp(c->variants[i].case_name, cname) == 0 &&
            strcmp(c->variants[i].variant, vname) == 0)
            return &c->variants[i];
    return NULL;
}

/* 3 + 3 reports from one fixture, the new ones 1.5x slower in one
 * variant: each report is one run, and the verdict says it rests on 3 a
 * side and every sample of them. */
Test(compare, three_reports_a_side_are_three_runs)
{
    cp_report r[6];
    const char *paths[6];
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(cp_report_read(FULL, &r[i]), 0, "%s", cp_last_error());
        paths[i] = FULL;
        if (i >= 3)
            scale(&r[i], 1.5);
    }
    cp_compare_side o = {r, paths, 3}, n = {r + 3, paths + 3, 3};
    cp_compare_options opt = {.threshold = 0.10,
                              .min_effect = CP_CMP_MIN_EFFECT,
                              .host_threshold = CP_CMP_HOST_THRESHOLD};
    cp_comparison c;
    cr_assert_eq(cp_compare_build(&o, &n, &opt, &c), 0, "%s", cp_last_error());
    cr_expect(c.comparable);
    const cp_cmp_variant *v = find(&c, "multi-kernel", "streams-pinned");
    cr_assert_not_null(v);
    cr_expect_eq(v->n_old_runs, 3);
    cr_expect_eq(v->n_new_runs, 3);
    cr_expect_eq(v->old_runs[2].report, 2);
    cr_expect_eq(v->old_samples, 3 * v->old_runs[0].nsamples);
    cr_expect_str_eq(v->verdict, "slower");
    cr_expect(v->regression);
    cr_expect_float_eq(v->ratio, 1.5, 1e-6);
    /* The other variants did not move: no other regression. */
    cr_expect_eq(c.regressions, 1, "%d", c.regressions);
    cp_comparison_free(&c);
    for (int i = 0; i < 6; i++)
        cp_report_free(&r[i]);
}

/* A report whose variant has passes (cuproof run --runs K) is K runs of
 * it: the passes' medians are the runs'. */
Test(compare, a_report_of_passes_is_several_runs)
{
    cp_report r[2];
    const char *paths[2] = {FULL, FULL};
    for (int i = 0; i < 2; i++)
        cr_assert_eq(cp_report_read(FULL, &r[i]), 0, "%s", cp_last_error());
    cp_variant_result *v = variant_of(&r[1], "multi-kernel", "streams-pinned");
    cr_assert_not_null(v);
    v->runs = calloc(4, sizeof *v->runs);
    cr_assert_not_null(v->runs);
    v->nruns = 4;
    for (size_t k = 0; k < 4; k++) {
        v->runs[k].median_ms = v->timing.median_ms * (1 + 0.01 * (double)k);
        v->runs[k].samples_ms = malloc(v->nsamples * sizeof(double));
        cr_assert_not_null(v->runs[k].samples_ms);
        for (size_t i = 0; i < v->nsamples; i++)
            v->runs[k].samples_ms[i] = v->samples_ms[i] * (1 + 0.01 * (double)k);
        v->runs[k].nsamples = v->nsamples;
    }
    cp_compare_side o = {r, paths, 1}, n = {r + 1, paths + 1, 1};
    cp_comparison c;
    cr_assert_eq(cp_compare_build(&o, &n, NULL, &c), 0, "%s", cp_last_error());
    const cp_cmp_variant *cv = find(&c, "multi-kernel", "streams-pinned");
    cr_assert_not_null(cv);
    cr_expect_eq(cv->n_old_runs, 1);
    cr_expect_eq(cv->n_new_runs, 4);
    cr_expect_float_eq(cv->new_runs[3].median_ms, v->timing.median_ms * 1.03, 1e-9);
    cr_expect_eq(cv->new_samples, 4 * v->nsamples);
    cr_expect_eq(c.regressions, 0, "%d", c.regressions);
    cp_comparison_free(&c);
    cp_report_free(&r[0]);
    cp_report_free(&r[1]);
}

/* Claim `text` of case cname in r, judged by a window [1, 4.5] x, with
 * the verdict v and the passes' values (one value: no passes). */
static void claim_values(cp_report *r, const char *cname, cp_verdict v, const double *vals,
                         size_t n)
{
    cp_case_result *c = (cp_case_result *)cp_report_case(r, cname);
    cr_assert(c && c->nclaims > 0);
    cp_claim_result *k = &c->claims[0];
    k->verdict = v;
    k->has_window = true;
    k->window = (cp_claim_window){.lo = 3, .hi = 4.5, .none = 1};
    snprintf(k->window.unit, sizeof k->window.unit, "x");
    k->value = vals[0];
    k->npass_values = n > 1 ? n : 0;
    for (size_t i = 0; n > 1 && i < n; i++)
        k->pass_values[i] = vals[i];
}

/* A claim that held and is now refuted is a regression when its value
 * moved, and only said when the passes of both sides straddle its bound
 * (elementwise-vs-handwritten's "about 200x faster" on the H100: 0.74 to
 * 1.04 over three passes, then 0.93 to 0.96). Without passes no spread is
 * known and the flip counts, as before (the control). */
Test(compare, a_claim_flipping_within_its_spread_is_not_a_regression)
{
    static const struct {
        double old[3], new_[3];
        size_t n;
        bool regression;
    } cases[] = {
        {{0.74, 1.04, 0.95}, {0.93, 0.96, 0.95}, 3, false},
        {{4.00, 4.10, 4.05}, {0.98, 1.00, 1.02}, 3, true},
        {{1.04, 0, 0}, {0.95, 0, 0}, 1, true},
    };
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        cp_report r[2];
        const char *paths[2] = {FULL, FULL};
        for (int i = 0; i < 2; i++)
            cr_assert_eq(cp_report_read(FULL, &r[i]), 0, "%s", cp_last_error());
        claim_values(&r[0], "multi-kernel", CP_VERDICT_FELL_SHORT, cases[t].old, cases[t].n);
        claim_values(&r[1], "multi-kernel", CP_VERDICT_REFUTED, cases[t].new_, cases[t].n);
        cp_compare_side o = {r, paths, 1}, n = {r + 1, paths + 1, 1};
        cp_comparison c;
        cr_assert_eq(cp_compare_build(&o, &n, NULL, &c), 0, "%s", cp_last_error());
        cr_assert_eq(c.nclaims, 1, "case %zu", t);
        cr_expect_eq(c.claims[0].regression, cases[t].regression, "case %zu", t);
        if (cases[t].regression)
            cr_expect_str_empty(c.claims[0].why, "case %zu", t);
        else
            cr_expect_not_null(strstr(c.claims[0].why, "within the spread between runs: 0.74 to "
                                                        "1.04 over 3 passes, then 0.93 to 0.96"),
                               "%s", c.claims[0].why);
        cr_expect_eq(c.regressions, cases[t].regression ? 1 : 0, "case %zu: %d", t,
                     c.regressions);
        cp_comparison_free(&c);
        cp_report_free(&r[0]);
        cp_report_free(&r[1]);
    }
}

/* One side's reports of different GPUs: incomparable, said which. */
Test(compare, one_sides_reports_must_be_comparable_too)
{
    cp_report r[4];
    const char *paths[4] = {"a.json", "b.json", "c.json", "d.json"};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(cp_report_read(FULL, &r[i]), 0, "%s", cp_last_error());
    snprintf(r[1].env.gpu_name, sizeof r[1].env.gpu_name, "NVIDIA A100-SXM4-40GB");
    scale(&r[2], 1.5);
    scale(&r[3], 1.5);
    cp_compare_side o = {r, paths, 2}, n = {r + 2, paths + 2, 2};
    cp_comparison c;
    cr_assert_eq(cp_compare_build(&o, &n, NULL, &c), 0, "%s", cp_last_error());
    cr_expect_not(c.comparable);
    cr_assert_eq(c.nreasons, 1);
    cr_expect_not_null(strstr(c.reasons[0].text, "old reports a.json and b.json: different GPUs"),
                       "%s", c.reasons[0].text);
    const cp_cmp_variant *v = find(&c, "multi-kernel", "streams-pinned");
    cr_assert_not_null(v);
    cr_expect(v->slower && !v->regression, "slower (%s), not counted", v->verdict);
    cr_expect_eq(c.regressions, 0);
    cp_comparison_free(&c);
    for (int i = 0; i < 4; i++)
        cp_report_free(&r[i]);
}

/* A report of one case "k" whose variants v0..v(nv-1) each have 3 passes
 * of 10 samples: pass p of variant i at base (1 + i) x `scale` x (1 +
 * 0.004 p) ms, run at `mhz`, its traced GPU time `busy` times the time. */
static void passes_report(cp_report *r, int nv, double scale, unsigned mhz, double busy)
{
    cp_case_result *c = one_case_report(r, "k", H100);
    cr_assert_not_null(c);
    for (int i = 0; i < nv; i++) {
        cp_variant_result *v = cp_result_add_variant(c);
        cr_assert_not_null(v);
        snprintf(v->name, sizeof v->name, "v%d", i);
        v->ran = v->traced = true;
        v->runs = calloc(3, sizeof *v->runs);
        v->samples_ms = calloc(30, sizeof *v->samples_ms);
        cr_assert(v->runs && v->samples_ms);
        v->nruns = 3;
        for (int p = 0; p < 3; p++) {
            cp_run_value *run = &v->runs[p];
            double m = (1 + i) * scale * (1 + 0.004 * p);
            run->samples_ms = calloc(10, sizeof *run->samples_ms);
            cr_assert_not_null(run->samples_ms);
            for (int k = 0; k < 10; k++)
                v->samples_ms[10 * p + k] = run->samples_ms[k] = m * (1 + 0.001 * (k - 5));
            run->nsamples = 10;
            run->median_ms = m * (1 + 0.001 * -0.5);
            run->clocks_before = run->clocks_after = (cp_clocks){.known = true, .sm_mhz = mhz};
            run->device_busy_ns = (uint64_t)(busy * m * 1e6);
        }
        v->nsamples = 30;
        cr_assert_eq(cp_timing_compute(v->samples_ms, 30, &v->timing), 0);
        /* Device-bound: the traced run's GPU busy most of its time. */
        v->metrics.span_ns = (uint64_t)(v->timing.median_ms * 1e6);
        v->metrics.kernel_busy_ns = (uint64_t)(busy * v->timing.median_ms * 1e6);
    }
}

/* Runs at a lower SM clock take longer by as much: drift, with the
 * clocks said, and a warning; the same slowdown at one clock is slower. */
Test(compare, a_slowdown_at_lower_clocks_is_drift)
{
    cp_report o, n;
    passes_report(&o, 4, 1.0, 1980, 0.95);
    passes_report(&n, 4, 1980.0 / 1500.0, 1500, 0.95);
    /* NVML said why: a software power cap (clocks-event reason 0x4). */
    for (size_t i = 0; i < n.cases[0].nvariants; i++)
        for (size_t p = 0; p < n.cases[0].variants[i].nruns; p++)
            n.cases[0].variants[i].runs[p].clocks_after.throttle_reasons = 0x4;
    const char *po[] = {"old.json"}, *pn[] = {"new.json"};
    cp_compare_side so = {&o, po, 1}, sn = {&n, pn, 1};
    cp_compare_options opt = {.threshold = 0.10,
                              .min_effect = CP_CMP_MIN_EFFECT,
                              .host_threshold = CP_CMP_HOST_THRESHOLD};
    cp_comparison c;
    cr_assert_eq(cp_compare_build(&so, &sn, &opt, &c), 0, "%s", cp_last_error());
    cr_assert_eq(c.nvariants, 4);
    for (size_t i = 0; i < c.nvariants; i++) {
        cr_expect(c.variants[i].by_runs);
        cr_expect_str_eq(c.variants[i].verdict, "drift", "%s: %s (%s)", c.variants[i].variant,
                         c.variants[i].verdict, c.variants[i].why);
        cr_expect_not_null(strstr(c.variants[i].why, "old runs at 1980 MHz, new at 1500 MHz"),
                           "%s", c.variants[i].why);
        cr_expect_not_null(strstr(c.variants[i].why, "NVML clocks-event reasons 0x4"), "%s",
                           c.variants[i].why);
        cr_expect_not(c.variants[i].regression);
    }
    cr_expect_eq(c.regressions, 0);
    cr_expect_not_null(strstr(c.clock_warning, "old 1980 MHz, new 1500 MHz"), "%s",
                       c.clock_warning);
    cp_comparison_free(&c);
    cp_report_free(&n);

    /* The same slowdown at the same clock, with the GPU time grown too:
     * slower, a regression in every variant. */
    passes_report(&n, 4, 1980.0 / 1500.0, 1980, 0.95);
    cr_assert_eq(cp_compare_build(&so, &sn, &opt, &c), 0, "%s", cp_last_error());
    for (size_t i = 0; i < c.nvariants; i++)
        cr_expect_str_eq(c.variants[i].verdict, "slower", "%s: %s (%s)", c.variants[i].variant,
                         c.variants[i].verdict, c.variants[i].why);
    cr_expect_eq(c.regressions, 4);
    cr_expect_eq(c.clock_warning[0], '\0');
    cp_comparison_free(&c);
    cp_report_free(&n);
    cp_report_free(&o);
}

/* Variant i of report r's case "k": each pass's samples, median and GPU
 * time times factor[p], at `mhz`, and its traced run as busy as before. */
static void move_passes(cp_report *r, size_t i, const double factor[3], unsigned mhz)
{
    cp_variant_result *v = &r->cases[0].variants[i];
    for (size_t p = 0; p < v->nruns; p++) {
        cp_run_value *run = &v->runs[p];
        for (size_t k = 0; k < run->nsamples; k++)
            v->samples_ms[10 * p + k] = run->samples_ms[k] *= factor[p];
        run->median_ms *= factor[p];
        run->device_busy_ns = (uint64_t)((double)run->device_busy_ns * factor[p]);
        run->clocks_before.sm_mhz = run->clocks_after.sm_mhz = mhz;
    }
    cr_assert_eq(cp_timing_compute(v->samples_ms, v->nsamples, &v->timing), 0);
    /* The traced run as passes_report makes it: device-bound still. */
    double busy = (double)v->metrics.kernel_busy_ns / (double)v->metrics.span_ns;
    v->metrics.span_ns = (uint64_t)(v->timing.median_ms * 1e6);
    v->metrics.kernel_busy_ns = (uint64_t)(busy * v->timing.median_ms * 1e6);
}

/* The verdicts are counted once, in the comparison, and every output
 * prints those counts, drift and single run too (the page once counted
 * only same, faster, slower and noisy, so that its counts did not add up
 * to the variants); the noisy ones' spread and the runs that would decide
 * them come with them. Six variants: two at a lower clock (drift), one
 * slower, two whose new passes spread by about 7% (noisy), one the same. */
Test(compare, the_verdicts_are_counted_once_for_every_output)
{
    cp_report o, n;
    passes_report(&o, 6, 1.0, 1980, 0.95);
    passes_report(&n, 6, 1.0, 1980, 0.95);
    const double lower[3] = {1980.0 / 1500, 1980.0 / 1500, 1980.0 / 1500},
                 slower[3] = {1.5, 1.5, 1.5}, wide[3] = {1.0, 1.08, 0.94};
    move_passes(&n, 0, lower, 1500);
    move_passes(&n, 1, lower, 1500);
    move_passes(&n, 2, slower, 1980);
    move_passes(&n, 3, wide, 1980);
    move_passes(&n, 4, wide, 1980);
    const char *po[] = {"old.json"}, *pn[] = {"new.json"};
    cp_compare_side so = {&o, po, 1}, sn = {&n, pn, 1};
    cp_comparison c;
    cr_assert_eq(cp_compare_build(&so, &sn, NULL, &c), 0, "%s", cp_last_error());
    cr_assert_eq(c.nvariants, 6);
    static const char *const want[] = {"drift", "drift", "slower", "noisy", "noisy", "same"};
    for (size_t i = 0; i < 6; i++)
        cr_expect_str_eq(c.variants[i].verdict, want[i], "v%zu: %s", i, c.variants[i].why);
    cr_expect_eq(c.verdict_counts[CP_CMP_COUNT_DRIFT], 2);
    cr_expect_eq(c.verdict_counts[CP_CMP_COUNT_SLOWER], 1);
    cr_expect_eq(c.verdict_counts[CP_CMP_COUNT_NOISY], 2);
    cr_expect_eq(c.verdict_counts[CP_CMP_COUNT_SAME], 1);
    cr_expect_eq(c.verdict_counts[CP_CMP_COUNT_FASTER] + c.verdict_counts[CP_CMP_COUNT_SINGLE_RUN],
                 0);
    /* Four variants' passes spread by 0.4%, the two wide ones by about
     * 7% (on the new side): the median is the tight ones'. */
    cr_expect_eq(c.runs_compared, 6);
    cr_expect_float_eq(c.median_spread, 0.004, 0.001, "%g", c.median_spread);
    cr_expect_gt(c.variants[3].spread_new, 0.05, "%g", c.variants[3].spread_new);
    cr_expect_eq(c.noisy_with_runs, 2);
    cr_expect_eq(c.median_runs_needed, c.variants[3].runs_needed);
    cr_expect_gt(c.median_runs_needed, 3);
    cr_expect_not(c.median_runs_capped);
    char *text = printed(&c);
    cr_expect_not_null(strstr(text, "verdicts: 1 slower, 2 drift, 2 noisy, 1 same (6 variants)"),
                       "%s", text);
    char said[200], line[210];
    snprintf(said, sizeof said, "the noisy would need a median of %zu runs a side",
             c.median_runs_needed);
    snprintf(line, sizeof line, "%s\n", said);
    cr_expect_not_null(strstr(text, line), "%s", text);
    cr_expect_not_null(strstr(text, "spread by a median 0.4%"), "%s", text);
    cr_expect_not_null(strstr(text, "\"drift\":\t2"), "%s", text);
    cr_expect_not_null(strstr(text, "\"noisy_with_runs\":\t2"), "%s", text);
    free(text);
    char *page = page_of(&c);
    cr_expect_not_null(strstr(page, ">2 drift</span>"), "the page counts drift too");
    cr_expect_not_null(strstr(page, ">2 noisy</span>"));
    snprintf(line, sizeof line, "%s.</p>", said);
    cr_expect_not_null(strstr(page, line), "the page gives the table's sentence");
    cr_expect_null(strstr(page, "single run</span>"), "a verdict no variant got is left out");
    free(page);
    cp_comparison_free(&c);
    cp_report_free(&n);
    cp_report_free(&o);
}

/* Sides whose timing processes ran with different settings that move a
 * host-bound time, the address-space layout or the CPU affinity, are
 * warned about, each setting that differs named; equal settings, and a
 * report that does not say (before schema 1.10 or 1.12), are not. */
Test(compare, sides_of_different_timing_settings_are_warned_about)
{
    cp_report o, n;
    passes_report(&o, 2, 1.0, 1980, 0.95);
    passes_report(&n, 2, 1.0, 1980, 0.95);
    const char *po[] = {"old.json"}, *pn[] = {"new.json"};
    cp_compare_side so = {&o, po, 1}, sn = {&n, pn, 1};
    cp_compare_options opt = {.threshold = 0.10,
                              .min_effect = CP_CMP_MIN_EFFECT,
                              .host_threshold = CP_CMP_HOST_THRESHOLD};
    const struct {
        const char *old_layout, *new_layout, *old_aff, *new_aff;
        const char *want[2];
    } rows[] = {
        {"fixed", "random", "all", "all", {"address-space layouts (old fixed, new random)", NULL}},
        {"random", "fixed", "all", "all", {"address-space layouts (old random, new fixed)", NULL}},
        {"fixed", "fixed", "all", "all", {NULL, NULL}},
        {"", "random", "all", "all", {NULL, NULL}},
        {"fixed", "", "all", "all", {NULL, NULL}},
        {"fixed", "fixed", "all", "gpu-local", {"CPU affinities (old all, new gpu-local)", NULL}},
        {"fixed", "fixed", "gpu-local", "gpu-local", {NULL, NULL}},
        {"fixed", "fixed", "", "gpu-local", {NULL, NULL}},
        {"fixed", "random", "gpu-local", "all",
         {"address-space layouts (old fixed, new random)",
          "CPU affinities (old gpu-local, new all)"}},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        snprintf(o.env.address_layout, sizeof o.env.address_layout, "%s", rows[r].old_layout);
        snprintf(n.env.address_layout, sizeof n.env.address_layout, "%s", rows[r].new_layout);
        snprintf(o.env.cpu_affinity, sizeof o.env.cpu_affinity, "%s", rows[r].old_aff);
        snprintf(n.env.cpu_affinity, sizeof n.env.cpu_affinity, "%s", rows[r].new_aff);
        cp_comparison c;
        cr_assert_eq(cp_compare_build(&so, &sn, &opt, &c), 0, "%s", cp_last_error());
        if (!rows[r].want[0])
            cr_expect_eq(c.layout_warning[0], '\0', "row %zu: %s", r, c.layout_warning);
        for (size_t w = 0; w < 2 && rows[r].want[w]; w++)
            cr_expect_not_null(strstr(c.layout_warning, rows[r].want[w]), "row %zu: %s", r,
                               c.layout_warning);
        cr_expect_eq(c.regressions, 0);
        cp_comparison_free(&c);
    }
    cp_report_free(&n);
    cp_report_free(&o);
}

/* A single run a side is never slower, whatever its samples say. */
Test(compare, one_run_a_side_is_a_single_run)
{
    cp_report o, n;
    passes_report(&o, 2, 1.0, 1980, 0.95);
    passes_report(&n, 2, 1.5, 1980, 0.95);
    for (int k = 0; k < 2; k++) {
        cp_report *r = k ? &n : &o;
        for (size_t i = 0; i < r->cases[0].nvariants; i++) {
            cp_variant_result *v = &r->cases[0].variants[i];
            for (size_t p = 0; p < v->nruns; p++)
                free(v->runs[p].samples_ms);
            free(v->runs);
            v->runs = NULL;
            v->nruns = 0;
        }
    }
    const char *po[] = {"old.json"}, *pn[] = {"new.json"};
    cp_compare_side so = {&o, po, 1}, sn = {&n, pn, 1};
    cp_comparison c;
    cr_assert_eq(cp_compare_build(&so, &sn, NULL, &c), 0, "%s", cp_last_error());
    for (size_t i = 0; i < c.nvariants; i++) {
        cr_expect_str_eq(c.variants[i].verdict, "single run");
        cr_expect_not_null(strstr(c.variants[i].why, "within the run: slower"), "%s",
                           c.variants[i].why);
    }
    cr_expect_eq(c.regressions, 0);
    cp_comparison_free(&c);
    cp_report_free(&n);
    cp_report_free(&o);
}

/* Copies under kernels falling from 0.74 to about 0.55 in streams-pinned
 * over 3 runs a side, while its declared "> 0.5" still passes: a trace
 * metric's regression, towards failing that expectation; the same runs
 * with the ratio as it was (a little scatter) move nothing. */
Test(compare, a_trace_metric_moving_towards_its_expectation_is_a_regression)
{
    cp_report r[6];
    const char *paths[6] = {"a", "b", "c", "d", "e", "f"};
    const double scatter[] = {1.0, 1.01, 0.99};
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 6; i++) {
            cr_assert_eq(cp_report_read(FULL, &r[i]), 0, "%s", cp_last_error());
            cp_variant_result *v = variant_of(&r[i], "multi-kernel", "streams-pinned");
            cr_assert_not_null(v);
            double base = v->metrics.copy_kernel_overlap_ratio;
            v->metrics.copy_kernel_overlap_ratio =
                (i < 3 || pass == 1 ? base : 0.55) * scatter[i % 3];
        }
        cp_compare_side o = {r, paths, 3}, n = {r + 3, paths + 3, 3};
        cp_comparison c;
        cr_assert_eq(cp_compare_build(&o, &n, NULL, &c), 0, "%s", cp_last_error());
        const cp_cmp_metric *m = NULL;
        for (size_t i = 0; i < c.nmetrics; i++)
            if (strcmp(c.metrics[i].variant, "streams-pinned") == 0 &&
                strcmp(c.metrics[i].metric, "copy_kernel_overlap_ratio") == 0)
                m = &c.metrics[i];
        if (pass == 0) {
            cr_assert_not_null(m, "the fall is reported");
            cr_expect_float_eq(m->now, 0.55, 0.01);
            cr_expect_eq(m->n_old, 3);
            cr_expect(m->regression);
            cr_expect_str_eq(m->towards, "streams-pinned: copy_kernel_overlap_ratio > 0.5");
            cr_expect_geq(c.regressions, 1);
        } else {
            cr_expect_null(m, "a scatter of 1%% moves nothing");
            cr_expect_eq(c.regressions, 0, "%d", c.regressions);
        }
        cp_comparison_free(&c);
        for (int i = 0; i < 6; i++)
            cp_report_free(&r[i]);
    }
}

/* A finding raised in every new run and none of the old, two a side, is
 * a regression; raised in one new run of two, or on one run a side, it is
 * only said (gpu_gaps flipped between identical single H100 runs). */
Test(compare, a_finding_raised_in_every_new_run_is_a_regression)
{
    const struct {
        size_t runs;
        int raised_in; /* new runs that raise it */
        bool regression;
    } cases[] = {{2, 2, true}, {2, 1, false}, {1, 1, false}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        cp_report r[4];
        const char *paths[4] = {"a", "b", "c", "d"};
        size_t k = cases[t].runs;
        for (size_t i = 0; i < 2 * k; i++) {
            cr_assert_eq(cp_report_read(FULL, &r[i]), 0, "%s", cp_last_error());
            cp_variant_result *v = variant_of(&r[i], "multi-kernel", "streams-pinned");
            cr_assert_not_null(v);
            bool raise = i >= k && (int)(i - k) < cases[t].raised_in;
            for (size_t f = 0; f < v->metrics.nfindings; f++)
                cr_assert_neq(strcmp(v->metrics.findings[f].name, "serialized_streams"), 0);
            if (raise) {
                cp_finding *f = &v->metrics.findings[v->metrics.nfindings++];
                memset(f, 0, sizeof *f);
                f->name = "serialized_streams";
                f->count = 1;
            }
        }
        cp_compare_side o = {r, paths, k}, n = {r + k, paths + k, k};
        cp_comparison c;
        cr_assert_eq(cp_compare_build(&o, &n, NULL, &c), 0, "%s", cp_last_error());
        const cp_cmp_finding *found = NULL;
        for (size_t i = 0; i < c.nfindings; i++)
            if (strcmp(c.findings[i].name, "serialized_streams") == 0)
                found = &c.findings[i];
        cr_assert_not_null(found, "case %zu", t);
        cr_expect(found->raised);
        cr_expect_eq(found->regression, cases[t].regression, "case %zu", t);
        cp_comparison_free(&c);
        for (size_t i = 0; i < 2 * k; i++)
            cp_report_free(&r[i]);
    }
}

/* A program's report (cuproof exec: one case, one variant "program", its
 * expectation a bare check) of 3 passes, the copies under kernels of
 * pass p at ratio[p]. */
static void program_report(cp_report *r, const double ratio[3])
{
    cp_case_result *c = one_case_report(r, "streams_overlap", H100);
    cr_assert_not_null(c);
    cp_check_result *k = cp_result_add_check(c);
    cr_assert_not_null(k);
    snprintf(k->name, sizeof k->name, "copy_kernel_overlap_ratio > 0.3");
    k->status = CP_CHECK_PASSED;
    cp_variant_result *v = cp_result_add_variant(c);
    cr_assert_not_null(v);
    snprintf(v->name, sizeof v->name, "program");
    v->ran = v->traced = true;
    v->metrics.copy_kernel_overlap_ratio = ratio[0];
    v->metrics.copy_busy_ns = 1000; /* a ratio of copies that ran */
    v->runs = calloc(3, sizeof *v->runs);
    cr_assert_not_null(v->runs);
    v->nruns = 3;
    for (int p = 0; p < 3; p++) {
        v->runs[p].traced = true;
        v->runs[p].metrics.copy_kernel_overlap_ratio = ratio[p];
        v->runs[p].metrics.copy_busy_ns = 1000;
    }
}

/* A program that stops overlapping part of its copies (0.80 -> 0.45 over
 * 3 passes a side) while its "> 0.3" still passes: a trace-metric
 * regression towards failing it, each pass one run; where the new runs
 * hold it by less than 3 of their spread (0.31 to 0.37), a warning too;
 * the report against itself: nothing. */
Test(compare, a_program_that_overlaps_less_regresses_while_its_expectation_passes)
{
    const double was[3] = {0.80, 0.81, 0.79}, less[3] = {0.45, 0.46, 0.44},
                 near[3] = {0.31, 0.34, 0.37};
    const double *news[3] = {less, near, was};
    for (int t = 0; t < 3; t++) {
        cp_report r[2];
        const char *paths[2] = {"old", "new"};
        program_report(&r[0], was);
        program_report(&r[1], news[t]);
        cp_compare_side o = {r, paths, 1}, n = {r + 1, paths + 1, 1};
        cp_comparison c;
        cr_assert_eq(cp_compare_build(&o, &n, NULL, &c), 0, "%s", cp_last_error());
        if (t == 2) {
            cr_expect_eq(c.nmetrics, 0);
            cr_expect_eq(c.ntight, 0);
            cr_expect_eq(c.regressions, 0);
        } else {
            cr_assert_eq(c.nmetrics, 1, "%zu", c.nmetrics);
            cr_expect_eq(c.metrics[0].n_old, 3);
            cr_expect_eq(c.metrics[0].n_new, 3);
            cr_expect(c.metrics[0].regression);
            cr_expect_str_eq(c.metrics[0].towards, "copy_kernel_overlap_ratio > 0.3");
            cr_expect_eq(c.regressions, 1, "%d", c.regressions);
            cr_expect_eq(c.ntight, t == 1 ? 1u : 0u, "%zu", c.ntight);
        }
        if (t == 1) {
            cr_expect_float_eq(c.tight[0].mean, 0.34, 1e-9);
            cr_expect_float_eq(c.tight[0].spreads, 4.0 / 3.0, 1e-6, "%g", c.tight[0].spreads);
            char *text = printed(&c);
            cr_expect_not_null(strstr(text, "warning: streams_overlap: 'copy_kernel_overlap_ratio "
                                            "> 0.3' holds by 1.3 of its spread between runs"),
                               "%s", text);
            free(text);
        }
        cp_comparison_free(&c);
        cp_report_free(&r[0]);
        cp_report_free(&r[1]);
    }
}

/* The recorded H100 runs (multi-kernel, 3 passes, all at 1980 MHz) and
 * the same runs as they would have been at 1600 MHz: every pass's times
 * and traced GPU time longer by 1980/1600, its clocks 1600 MHz (the
 * device's clocks cannot be lowered on the lent machines, so the lowered
 * run is made from the recorded one). Every device-bound variant is drift
 * (in SM cycles the runs agree), never slower, and the clocks are warned
 * about; compared at one clock, the same slowdown is slower. */
Test(compare, recorded_runs_at_lowered_clocks_are_drift)
{
    const char *path = CUPROOF_FIXTURES "/compare-h100-runs/mk-base.runs3.report.json";
    for (int same_clock = 0; same_clock < 2; same_clock++) {
        cp_report o, n;
        cr_assert_eq(cp_report_read(path, &o), 0, "%s", cp_last_error());
        cr_assert_eq(cp_report_read(path, &n), 0, "%s", cp_last_error());
        const double by = 1980.0 / 1600.0;
        cp_case_result *c = &n.cases[0];
        for (size_t i = 0; i < c->nvariants; i++) {
            cp_variant_result *v = &c->variants[i];
            cr_assert_eq(v->nruns, 3);
            for (size_t p = 0; p < v->nruns; p++) {
                cp_run_value *r = &v->runs[p];
                cr_assert_eq(r->clocks_before.sm_mhz, 1980);
                for (size_t k = 0; k < r->nsamples; k++)
                    r->samples_ms[k] *= by;
                r->median_ms *= by;
                r->device_busy_ns = (uint64_t)((double)r->device_busy_ns * by);
                if (!same_clock)
                    r->clocks_before.sm_mhz = r->clocks_after.sm_mhz = 1600;
            }
            for (size_t k = 0; k < v->nsamples; k++)
                v->samples_ms[k] *= by;
            v->timing.median_ms *= by;
            v->metrics.span_ns = (uint64_t)((double)v->metrics.span_ns * by);
            v->metrics.idle_ns = (uint64_t)((double)v->metrics.idle_ns * by);
            v->metrics.kernel_busy_ns = (uint64_t)((double)v->metrics.kernel_busy_ns * by);
            v->metrics.copy_busy_ns = (uint64_t)((double)v->metrics.copy_busy_ns * by);
        }
        const char *po[] = {"base"}, *pn[] = {"lowered"};
        cp_compare_side so = {&o, po, 1}, sn = {&n, pn, 1};
        cp_comparison cmp;
        cr_assert_eq(cp_compare_build(&so, &sn, NULL, &cmp), 0, "%s", cp_last_error());
        size_t device_bound = 0;
        for (size_t i = 0; i < cmp.nvariants; i++) {
            const cp_cmp_variant *v = &cmp.variants[i];
            if (v->host_bound)
                continue;
            device_bound++;
            cr_expect_str_eq(v->verdict, same_clock ? "slower" : "drift", "%s: %s (%s)",
                             v->variant, v->verdict, v->why);
            if (!same_clock)
                cr_expect_not_null(strstr(v->why, "old runs at 1980 MHz, new at 1600 MHz"),
                                   "%s", v->why);
        }
        cr_expect_geq(device_bound, 6, "%zu", device_bound);
        if (same_clock) {
            cr_expect_geq(cmp.regressions, 6, "%d", cmp.regressions);
        } else {
            cr_expect_eq(cmp.regressions, 0, "%d", cmp.regressions);
            cr_expect_not_null(strstr(cmp.clock_warning, "old 1980 MHz, new 1600 MHz"), "%s",
                               cmp.clock_warning);
        }
        cp_comparison_free(&cmp);
        cp_report_free(&n);
        cp_report_free(&o);
    }
}

/* A host-bound variant 20% slower in every pass of one report against
 * another (as broadcast matrix-row moved between two ci runs on the H100,
 * every pass of each in its own process): the passes of one invocation do
 * not show its drift between invocations, so it is noisy, saying that
 * runs from 2 reports a side would decide; with 2 reports a side it is
 * slower. */
Test(compare, a_host_bound_change_needs_two_reports_a_side)
{
    cp_report r[4];
    for (int i = 0; i < 4; i++) {
        passes_report(&r[i], 1, i < 2 ? 1.0 : 1.2, 1980, 0.01);
        /* The GPU idle 99% of the traced run's span: host-bound. */
        cp_metrics *m = &r[i].cases[0].variants[0].metrics;
        m->idle_ns = m->span_ns - m->span_ns / 100;
        for (size_t p = 0; p < 3; p++)
            r[i].cases[0].variants[0].runs[p].pid = 100 * i + (int)p + 1;
    }
    const char *paths[4] = {"a", "b", "c", "d"};
    for (size_t k = 1; k <= 2; k++) {
        cp_compare_side o = {r, paths, k}, n = {r + 2, paths + 2, k};
        cp_comparison c;
        cr_assert_eq(cp_compare_build(&o, &n, NULL, &c), 0, "%s", cp_last_error());
        cr_assert_eq(c.nvariants, 1);
        const cp_cmp_variant *v = &c.variants[0];
        cr_expect(v->host_bound);
        cr_expect_str_eq(v->verdict, k == 1 ? "noisy" : "slower", "%zu a side: %s (%s)", k,
                         v->verdict, v->why);
        cr_expect_eq(v->reports_needed, k == 1 ? 2u : 0u);
        cp_comparison_free(&c);
    }
    for (int i = 0; i < 4; i++)
        cp_report_free(&r[i]);
}
