/*
 * `cuproof run --runs K` without a GPU: a case's later passes folded into
 * its first (cp_case_result_add_pass: each pass one run of each variant,
 * the samples pooled, a later pass's failure kept), and the passes
 * written to report.json (timing.passes, schema 1.8; each pass's traced
 * metrics, 1.9) and read back, so that compare can rest on runs; and the
 * margins of declared expectations over the passes (cp_case_margins).
 */
#include <cuproof/error.h>
#include <cuproof/internal/margin.h>
#include <cuproof/internal/report.h>
#include <cuproof/result.h>
#include "reports/pass_progress.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A case of one variant "v" with `n` samples from `base` ms up by 0.1. */
static void one_pass(cp_case_result *c, double base, int n, unsigned sm_mhz, bool fail)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "k");
    c->status = fail ? CP_STATUS_FAILED : CP_STATUS_PASSED;
    if (fail)
        snprintf(c->error, sizeof c->error, "output differs");
    cp_check_result *k = cp_result_add_check(c);
    cr_assert_not_null(k);
    snprintf(k->name, sizeof k->name, "v output matches");
    k->status = fail ? CP_CHECK_FAILED : CP_CHECK_PASSED;
    cp_variant_result *v = cp_result_add_variant(c);
    cr_assert_not_null(v);
    snprintf(v->name, sizeof v->name, "v");
    v->ran = true;
    v->samples_ms = malloc((size_t)n * sizeof *v->samples_ms);
    cr_assert_not_null(v->samples_ms);
    for (int i = 0; i < n; i++)
        v->samples_ms[i] = base + 0.1 * i;
    v->nsamples = (size_t)n;
    cr_assert_eq(cp_timing_compute(v->samples_ms, v->nsamples, &v->timing), 0);
    v->clocks_before = (cp_clocks){.known = true, .sm_mhz = sm_mhz, .mem_mhz = 2619};
    v->clocks_after = v->clocks_before;
}

/* The pass traced, its copies under kernels at `ratio`, raising
 * cuda_memcpy_async, and the case declaring "v: METRIC_LINE". */
static void traced(cp_case_result *c, double ratio, const char *line)
{
    cp_variant_result *v = &c->variants[0];
    v->traced = true;
    v->metrics.copy_kernel_overlap_ratio = ratio;
    v->metrics.copy_busy_ns = 1000; /* a ratio of copies that ran */
    v->metrics.kernel_busy_ns = 1000;
    v->metrics.findings[0] = (cp_finding){.name = "cuda_memcpy_async", .count = 2};
    v->metrics.nfindings = 1;
    cp_check_result *k = cp_result_add_check(c);
    cr_assert_not_null(k);
    snprintf(k->name, sizeof k->name, "v: %s", line);
    k->status = CP_CHECK_PASSED;
}

Test(passes, later_passes_become_runs_and_keep_failures)
{
    cp_case_result first, second, third;
    one_pass(&first, 1.0, 5, 1980, false);
    one_pass(&second, 2.0, 3, 1755, false);
    one_pass(&third, 3.0, 4, 1980, true);
    cr_assert_eq(cp_case_result_add_pass(&first, &second, 2), 0, "%s", cp_last_error());
    cr_assert_eq(cp_case_result_add_pass(&first, &third, 3), 0, "%s", cp_last_error());
    const cp_variant_result *v = &first.variants[0];
    cr_assert_eq(v->nruns, 3);
    cr_expect_float_eq(v->runs[0].median_ms, 1.2, 1e-12);
    cr_expect_float_eq(v->runs[1].median_ms, 2.1, 1e-12);
    cr_expect_float_eq(v->runs[2].median_ms, 3.15, 1e-12);
    cr_expect_eq(v->runs[1].nsamples, 3);
    cr_expect_eq(v->runs[1].clocks_before.sm_mhz, 1755);
    /* The spread of the medians 1.2, 2.1, 3.15: sd 0.9760 over mean 2.15. */
    double sd, span;
    const char *figure;
    cr_assert(cp_variant_run_spread(v, &sd, &span, &figure));
    cr_expect_str_eq(figure, "wall time");
    cr_expect_float_eq(sd, 0.453935, 1e-5, "%g", sd);
    cr_expect_float_eq(span, 3.15 / 1.2, 1e-12);
    /* Every run's samples together: 5 + 3 + 4, and their median. */
    cr_expect_eq(v->nsamples, 12);
    cr_expect_eq(v->timing.runs, 12);
    cr_expect_float_eq(v->timing.median_ms, 2.05, 1e-12);
    /* The third pass failed: so does the case, saying which pass. */
    cr_expect_eq(first.status, CP_STATUS_FAILED);
    cr_expect_str_eq(first.error, "pass 3: output differs");
    cr_assert_eq(first.nchecks, 2);
    cr_expect_str_eq(first.checks[1].name, "pass 3: v output matches");
    cr_expect_eq(first.checks[1].status, CP_CHECK_FAILED);
    cp_case_result_free(&second);
    cp_case_result_free(&third);
    cp_case_result_free(&first);
}

/* --processes P: a pass timed again in other processes (untraced) keeps
 * each process's median, and the pass's value is their median: one
 * process's level does not pull it, where the pooled samples' median
 * would lean to the process that took the most samples. */
Test(passes, a_pass_of_several_processes_is_the_median_of_theirs)
{
    cp_case_result a, b, c, second;
    one_pass(&a, 1.0, 5, 1980, false);  /* median 1.2 */
    one_pass(&b, 1.3, 5, 1980, false);  /* 1.5 */
    one_pass(&c, 2.0, 40, 1980, false); /* 3.95, and most of the samples */
    cr_assert_eq(cp_case_result_add_process(&a, &b, 2), 0, "%s", cp_last_error());
    cr_assert_eq(cp_case_result_add_process(&a, &c, 3), 0, "%s", cp_last_error());
    const cp_variant_result *v = &a.variants[0];
    cr_assert_eq(v->nprocesses, 3);
    cr_expect_float_eq(v->process_ms[0], 1.2, 1e-12);
    cr_expect_float_eq(v->process_ms[1], 1.5, 1e-12);
    cr_expect_float_eq(v->process_ms[2], 3.95, 1e-12);
    cr_expect_eq(v->nsamples, 50);
    cr_expect_float_eq(v->samples_ms[5], 1.3, 1e-12); /* process 2's after the first's */
    /* The pooled samples' median (the control): the long process's. */
    cr_expect_gt(v->timing.median_ms, 2.0);
    /* As a run, the pass is worth the middle process: 1.5. */
    one_pass(&second, 1.4, 5, 1980, false);
    cr_assert_eq(cp_case_result_add_pass(&a, &second, 2), 0);
    cr_assert_eq(v->nruns, 2);
    cr_expect_float_eq(v->runs[0].median_ms, 1.5, 1e-12);
    cr_expect_eq(v->runs[0].nprocesses, 3);
    cr_expect_float_eq(v->runs[0].process_ms[2], 3.95, 1e-12);
    /* A pass of one process keeps its own median and no processes. */
    cr_expect_float_eq(v->runs[1].median_ms, 1.6, 1e-12);
    cr_expect_eq(v->runs[1].nprocesses, 0);
    cr_expect_eq(a.status, CP_STATUS_PASSED);
    cp_case_result_free(&b);
    cp_case_result_free(&c);
    cp_case_result_free(&second);

    /* A process that failed fails the pass, saying which, and keeps its
     * failed check; a variant the pass did not time takes nothing. */
    cp_case_result d;
    one_pass(&d, 1.0, 5, 1980, true);
    cr_assert_eq(cp_case_result_add_process(&a, &d, 2), 0);
    cr_expect_eq(a.status, CP_STATUS_FAILED);
    cr_expect_str_eq(a.error, "process 2: output differs");
    cr_assert_eq(a.nchecks, 2);
    cr_expect_str_eq(a.checks[1].name, "process 2: v output matches");
    cp_case_result_free(&d);
    cp_case_result_free(&a);

    /* More than CP_MAX_PROCESSES in one pass: refused, said. */
    cp_case_result e, f;
    one_pass(&e, 1.0, 5, 1980, false);
    one_pass(&f, 1.0, 5, 1980, false);
    for (int m = 2; m <= CP_MAX_PROCESSES; m++)
        cr_assert_eq(cp_case_result_add_process(&e, &f, m), 0);
    cr_expect_eq(cp_case_result_add_process(&e, &f, CP_MAX_PROCESSES + 1), CP_EINVAL);
    cr_expect_not_null(strstr(cp_last_error(), "more than 8 processes"), "%s", cp_last_error());
    cp_case_result_free(&e);
    cp_case_result_free(&f);
}

/* Writes a report of case c to DIR/report.json (dir a fresh temporary
 * folder, its name into dir) and reads it back into *back. */
static void round_trip(cp_case_result *c, char *dir, char *path, size_t size, cp_report *back)
{
    cp_report rep;
    memset(&rep, 0, sizeof rep);
    snprintf(rep.tool_version, sizeof rep.tool_version, "test");
    snprintf(rep.profile, sizeof rep.profile, "ci");
    rep.cases = c;
    rep.ncases = 1;
    if (strstr(dir, "XXXXXX"))
        cr_assert_not_null(mkdtemp(dir));
    snprintf(path, size, "%s/report.json", dir);
    cr_assert_eq(cp_report_json_write(&rep, path), 0, "%s", cp_last_error());
    cr_assert_eq(cp_report_read(path, back), 0, "%s", cp_last_error());
}

/* One pass's GPU time: n samples from `level` ms up by 0.001. */
static void gpu_samples(cp_case_result *c, double level, int n)
{
    cp_variant_result *v = &c->variants[0];
    v->gpu_samples_ms = malloc((size_t)n * sizeof *v->gpu_samples_ms);
    cr_assert_not_null(v->gpu_samples_ms);
    for (int i = 0; i < n; i++)
        v->gpu_samples_ms[i] = level + 0.001 * i;
    v->ngpu_samples = (size_t)n;
    v->figure = CP_WORK_GPU;
    cr_assert_eq(cp_timing_compute(v->gpu_samples_ms, v->ngpu_samples, &v->gpu_timing), 0);
}

/* On the GPU's time the processes' levels are draws of two levels (the
 * stream's hardware channel, samples/h200-gpu-time/queued-levels): the
 * pass's value is their mean, which the median of three (one of the
 * two) and the pooled samples' median (the process with most samples)
 * are not; each process's GPU median is kept, written as
 * gpu_processes_ms (1.18) and read back; wall time keeps the median. */
Test(passes, a_pass_of_several_processes_is_the_mean_of_their_gpu_times)
{
    cp_case_result a, b, c, second, plain;
    one_pass(&a, 1.0, 5, 1980, false);
    one_pass(&b, 1.3, 5, 1980, false);
    one_pass(&c, 2.0, 40, 1980, false);
    gpu_samples(&a, 0.130, 5);  /* median 0.132 */
    gpu_samples(&b, 0.139, 5);  /* 0.141 */
    gpu_samples(&c, 0.130, 40); /* 0.1495, most of the samples */
    cr_assert_eq(cp_case_result_add_process(&a, &b, 2), 0, "%s", cp_last_error());
    cr_assert_eq(cp_case_result_add_process(&a, &c, 3), 0, "%s", cp_last_error());
    const cp_variant_result *v = &a.variants[0];
    cr_assert_eq(v->ngpu_processes, 3);
    cr_expect_float_eq(v->gpu_process_ms[0], 0.132, 1e-12);
    cr_expect_float_eq(v->gpu_process_ms[1], 0.141, 1e-12);
    cr_expect_float_eq(v->gpu_process_ms[2], 0.1495, 1e-12);
    cr_expect_eq(v->ngpu_samples, 50);
    one_pass(&second, 1.4, 5, 1980, false);
    gpu_samples(&second, 0.135, 5);
    cr_assert_eq(cp_case_result_add_pass(&a, &second, 2), 0);
    cr_assert_eq(v->nruns, 2);
    double mean = (0.132 + 0.141 + 0.1495) / 3;
    cr_expect_float_eq(v->runs[0].gpu_median_ms, mean, 1e-12, "%g", v->runs[0].gpu_median_ms);
    cr_expect_float_eq(v->runs[0].median_ms, 1.5, 1e-12); /* wall: the middle process */
    cr_expect_eq(v->runs[0].ngpu_processes, 3);
    /* A pass of one process: its samples' median, no processes. */
    cr_expect_float_eq(v->runs[1].gpu_median_ms, 0.137, 1e-12);
    cr_expect_eq(v->runs[1].ngpu_processes, 0);
    /* The spread between the passes is on the GPU's time, which the
     * variant is judged on: 0.14083 and 0.137, not wall's 1.5 and 1.6. */
    double sd, span;
    const char *figure;
    cr_assert(cp_variant_run_spread(v, &sd, &span, &figure));
    cr_expect_str_eq(figure, "GPU time");
    cr_expect_float_eq(span, mean / 0.137, 1e-9, "%g", span);

    char dir[] = "/tmp/cuproof-gpuproc-XXXXXX", path[64];
    cp_report back;
    round_trip(&a, dir, path, sizeof path, &back);
    const cp_variant_result *r = &back.cases[0].variants[0];
    cr_assert_eq(r->nruns, 2);
    cr_assert_eq(r->runs[0].ngpu_processes, 3);
    cr_expect_float_eq(r->runs[0].gpu_process_ms[2], 0.1495, 1e-12);
    cr_expect_float_eq(r->runs[0].gpu_median_ms, mean, 1e-12);
    cr_expect_eq(r->runs[1].ngpu_processes, 0);
    cp_report_free(&back);
    /* A report of one pass keeps them in timing. */
    one_pass(&plain, 1.0, 5, 1980, false);
    gpu_samples(&plain, 0.130, 5);
    cp_case_result p2;
    one_pass(&p2, 1.0, 5, 1980, false);
    gpu_samples(&p2, 0.139, 5);
    cr_assert_eq(cp_case_result_add_process(&plain, &p2, 2), 0);
    round_trip(&plain, dir, path, sizeof path, &back);
    cr_assert_eq(back.cases[0].variants[0].ngpu_processes, 2);
    cr_expect_float_eq(back.cases[0].variants[0].gpu_process_ms[1], 0.141, 1e-12);
    cp_report_free(&back);
    unlink(path);
    rmdir(dir);
    cp_case_result_free(&p2);
    cp_case_result_free(&plain);
    cp_case_result_free(&b);
    cp_case_result_free(&c);
    cp_case_result_free(&second);
    cp_case_result_free(&a);
}

Test(passes, report_keeps_each_pass_and_reads_it_back)
{
    cp_case_result c, second;
    one_pass(&c, 1.0, 5, 1980, false);
    one_pass(&second, 1.5, 5, 1410, false);
    traced(&c, 0.75, "copy_kernel_overlap_ratio > 0.5");
    traced(&second, 0.70, "copy_kernel_overlap_ratio > 0.5");
    second.variants[0].metrics.nfindings = 0;
    /* The second pass timed in two processes (1.2 and 1.7: value 1.45). */
    cp_case_result other;
    one_pass(&other, 1.0, 5, 1980, false);
    cr_assert_eq(cp_case_result_add_process(&second, &other, 2), 0);
    cp_case_result_free(&other);
    cr_assert_eq(cp_case_result_add_pass(&c, &second, 2), 0);
    /* A windowed claim with each pass's value (1.13: window.passes). */
    cp_claim_result *k = cp_result_add_claim(&c);
    cr_assert_not_null(k);
    snprintf(k->text, sizeof k->text, "about 4x faster");
    k->verdict = CP_VERDICT_CONFIRMED;
    k->has_window = true;
    k->window = (cp_claim_window){.lo = 3, .hi = 4.5, .none = 1};
    snprintf(k->window.unit, sizeof k->window.unit, "x");
    k->value = 3.9;
    k->pass_values[0] = 3.9;
    k->pass_values[1] = 4.2;
    k->npass_values = 2;
    char dir[] = "/tmp/cuproof-passes-XXXXXX", path[64];
    cp_report back;
    round_trip(&c, dir, path, sizeof path, &back);
    const cp_variant_result *b = &back.cases[0].variants[0];
    cr_assert_eq(b->nruns, 2);
    cr_expect_float_eq(b->runs[0].median_ms, 1.2, 1e-12);
    cr_expect_float_eq(b->runs[1].median_ms, 1.45, 1e-12);
    cr_expect_eq(b->runs[1].nsamples, 10);
    cr_expect_float_eq(b->runs[1].samples_ms[4], 1.9, 1e-12);
    cr_expect_eq(b->runs[1].clocks_before.sm_mhz, 1410);
    /* 1.13: its processes' medians, read back; none for the first pass. */
    cr_assert_eq(b->runs[1].nprocesses, 2);
    cr_expect_float_eq(b->runs[1].process_ms[0], 1.7, 1e-12);
    cr_expect_float_eq(b->runs[1].process_ms[1], 1.2, 1e-12);
    cr_expect_eq(b->runs[0].nprocesses, 0);
    cr_expect_eq(b->nsamples, 15);
    /* 1.9: each pass's traced metrics and findings, read back. */
    cr_expect(b->runs[0].traced && b->runs[1].traced);
    cr_expect_float_eq(b->runs[0].metrics.copy_kernel_overlap_ratio, 0.75, 1e-12);
    cr_expect_float_eq(b->runs[1].metrics.copy_kernel_overlap_ratio, 0.70, 1e-12);
    cr_expect_eq(b->runs[0].device_busy_ns, 2000); /* kernels 1000, copies 1000 */
    cr_assert_eq(b->runs[0].metrics.nfindings, 1);
    cr_expect_str_eq(b->runs[0].metrics.findings[0].name, "cuda_memcpy_async");
    cr_expect_eq(b->runs[0].metrics.findings[0].count, 2);
    cr_expect_eq(b->runs[1].metrics.nfindings, 0);
    const cp_claim_result *bk = &back.cases[0].claims[0];
    cr_assert_eq(bk->npass_values, 2);
    cr_expect_float_eq(bk->pass_values[1], 4.2, 1e-12);
    cp_report_free(&back);

    /* A pass without its median is a bad report, named. */
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *m = strstr(text, "\"median_ms\":\t1.2");
    cr_assert_not_null(m, "%s", text);
    memcpy(m, "\"medien_ms\"", 11);
    f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    cr_expect_eq(cp_report_read(path, &back), CP_EPARSE);
    cr_expect_not_null(strstr(cp_last_error(), "timing.passes has no median_ms"), "%s",
                       cp_last_error());
    /* A process's median that is not a time > 0: named too. */
    round_trip(&c, dir, path, sizeof path, &back); /* written whole again */
    cp_report_free(&back);
    f = fopen(path, "r");
    cr_assert_not_null(f);
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    m = strstr(text, "\"processes_ms\":\t[");
    cr_assert_not_null(m, "%s", text);
    m += strlen("\"processes_ms\":\t[");
    *m = '-';
    f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    cr_expect_eq(cp_report_read(path, &back), CP_EPARSE);
    cr_expect_not_null(strstr(cp_last_error(), "processes_ms holds a value that is not a time"),
                       "%s", cp_last_error());
    unlink(path);
    rmdir(dir);
    cp_case_result_free(&second);
    cp_case_result_free(&c);
}

/* The margins of a declared expectation over the passes: "> 0.5" held by
 * 0.52, 0.55, 0.58 (mean 0.55, sd 0.03: 1.7 sd) is tight, by 0.80, 0.81,
 * 0.82 (30 sd) it is not; "< 0.5" there fails by 30 sd (not tight
 * either: it fails every time). A check that states no comparison on the
 * variant gives none. */
Test(passes, margins_of_declared_expectations_over_the_passes)
{
    const struct {
        double v[3];
        const char *line;
        double spreads;
        bool tight;
    } cases[] = {
        {{0.52, 0.55, 0.58}, "copy_kernel_overlap_ratio > 0.5", 5.0 / 3.0, true},
        {{0.80, 0.81, 0.82}, "copy_kernel_overlap_ratio > 0.5", 31.0, false},
        {{0.80, 0.81, 0.82}, "copy_kernel_overlap_ratio < 0.5", -31.0, false},
        {{0.48, 0.50, 0.52}, "copy_kernel_overlap_ratio <= 0.49", -0.5, true},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        cp_case_result c, p;
        one_pass(&c, 1.0, 5, 1980, false);
        traced(&c, cases[t].v[0], cases[t].line);
        for (int k = 1; k < 3; k++) {
            one_pass(&p, 1.0, 5, 1980, false);
            traced(&p, cases[t].v[k], cases[t].line);
            cr_assert_eq(cp_case_result_add_pass(&c, &p, k + 1), 0);
            cp_case_result_free(&p);
        }
        cp_case_margin m[4];
        size_t n = cp_case_margins(&c, m, 4);
        cr_assert_eq(n, 1, "%s: %zu margins", cases[t].line, n);
        cr_expect_str_eq(m[0].variant, "v");
        cr_expect_str_eq(m[0].metric, "copy_kernel_overlap_ratio");
        cr_expect_eq(m[0].margin.runs, 3);
        cr_expect_float_eq(m[0].margin.spreads, cases[t].spreads, 1e-6, "%s: %g", cases[t].line,
                           m[0].margin.spreads);
        cr_expect_eq(m[0].margin.tight, cases[t].tight, "%s", cases[t].line);
        cp_case_result_free(&c);
    }
}

/* Which checks state an expectation on the whole variant: scoped to it,
 * or bare where the case has one variant (a program's); not another
 * variant's, a range's, a rank's, a finding or prose. */
Test(passes, checks_that_state_an_expectation)
{
    const struct {
        const char *check, *variant;
        bool bare, is;
    } cases[] = {
        {"v: peak_concurrent_kernels > 1", "v", false, true},
        {"w: peak_concurrent_kernels > 1", "v", false, false},
        {"peak_concurrent_kernels > 1", "v", false, false},
        {"peak_concurrent_kernels > 1", "program", true, true},
        {"range(step): copy_kernel_overlap_ratio > 0.3", "program", true, false},
        {"rank(0): copy_kernel_overlap_ratio > 0.3", "program", true, false},
        {"no finding cuda_memcpy_async", "program", true, false},
        {"v: output equals the CPU reference", "v", false, false},
        {"the program succeeded", "program", true, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cp_expect_list l;
        bool is = cp_check_expectation(cases[i].check, cases[i].variant, cases[i].bare, &l);
        cr_expect_eq(is, cases[i].is, "%s", cases[i].check);
        cr_expect_eq(l.n, is ? 1u : 0u);
        cp_expect_list_free(&l);
    }
}

/* The claim verdict's one rule (cp_claim_judge): the window of multi-
 * kernel's "about 4x (3x to 4.5x)", no effect at 1x, and the mirrored
 * window of a claim below its no-effect point ("about 20 or fewer",
 * none at 64); the rule said in one line, and verdicts read back by name. */
Test(passes, claim_verdicts_follow_their_window)
{
    const cp_claim_window up = {.lo = 3, .hi = 4.5, .none = 1, .unit = "x"};
    const struct {
        double value;
        cp_verdict v;
    } ups[] = {{3, CP_VERDICT_CONFIRMED},    {4.5, CP_VERDICT_CONFIRMED},
               {43.0, CP_VERDICT_EXCEEDED},  {8.2, CP_VERDICT_EXCEEDED},
               {2.0, CP_VERDICT_FELL_SHORT}, {1.0, CP_VERDICT_REFUTED},
               {0.84, CP_VERDICT_REFUTED},   {NAN, CP_VERDICT_NOT_MEASURED}};
    for (size_t i = 0; i < sizeof ups / sizeof ups[0]; i++)
        cr_expect_eq(cp_claim_judge(&up, ups[i].value), ups[i].v, "%g: %s", ups[i].value,
                     cp_verdict_name(cp_claim_judge(&up, ups[i].value)));
    const cp_claim_window down = {.lo = 0, .hi = 20, .none = 64, .unit = "contexts"};
    cr_expect_eq(cp_claim_judge(&down, 12), CP_VERDICT_CONFIRMED);
    cr_expect_eq(cp_claim_judge(&down, 30), CP_VERDICT_FELL_SHORT);
    cr_expect_eq(cp_claim_judge(&down, 64), CP_VERDICT_REFUTED);
    cr_expect_eq(cp_claim_judge(&down, -1), CP_VERDICT_EXCEEDED);
    char rule[256];
    cp_claim_rule(&up, rule, sizeof rule);
    cr_expect_str_eq(rule, "confirmed from 3x to 4.5x; exceeded above 4.5x; fell short between 1x "
                           "and 3x; refuted at 1x or below");
    const cp_claim_window ms = {.lo = 374.685364, .hi = 1498.741456, .none = 0, .unit = "ms"};
    cp_claim_rule(&ms, rule, sizeof rule);
    cr_expect_str_eq(rule, "confirmed from 374.7 ms to 1499 ms; exceeded above 1499 ms; fell short "
                           "between 0 ms and 374.7 ms; refuted at 0 ms or below");
    const cp_claim_window open = {.lo = 1.2, .hi = INFINITY, .none = 1, .unit = "x"};
    cr_expect_eq(cp_claim_judge(&open, 40), CP_VERDICT_CONFIRMED);
    cr_expect_eq(cp_claim_judge(&open, 1.1), CP_VERDICT_FELL_SHORT);
    cp_claim_rule(&open, rule, sizeof rule);
    cr_expect_str_eq(rule, "confirmed at 1.2x or above; fell short between 1x and 1.2x; refuted "
                           "at 1x or below");
    const cp_verdict all[] = {CP_VERDICT_CONFIRMED, CP_VERDICT_EXCEEDED, CP_VERDICT_FELL_SHORT,
                              CP_VERDICT_REFUTED, CP_VERDICT_NOT_MEASURED};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        cr_expect_eq(cp_verdict_from_name(cp_verdict_name(all[i])), (int)all[i]);
}

/* A windowed claim over the passes of run --runs K: each pass's value kept
 * beside the first's, and the bound nearest their mean, where the verdict
 * changes, in standard deviations of them: 4.4x, 4.6x, 4.5x against "3x
 * to 4.5x" sits on its top bound (0 sd: another run can flip confirmed and
 * exceeded); 40x, 43x, 46x is 12.8 sd above it. */
Test(passes, a_claims_window_against_the_passes_spread)
{
    const double sets[2][3] = {{4.4, 4.6, 4.5}, {40, 43, 46}};
    const double want_spreads[2] = {0, 38.5 / 3.0};
    for (int s = 0; s < 2; s++) {
        cp_case_result c, p;
        one_pass(&c, 1.0, 5, 1980, false);
        cp_claim_result *k = cp_result_add_claim(&c);
        cr_assert_not_null(k);
        snprintf(k->text, sizeof k->text, "about 4x");
        k->has_window = true;
        k->window = (cp_claim_window){.lo = 3, .hi = 4.5, .none = 1, .unit = "x"};
        k->value = sets[s][0];
        for (int n = 1; n < 3; n++) {
            one_pass(&p, 1.0, 5, 1980, false);
            cp_claim_result *q = cp_result_add_claim(&p);
            cr_assert_not_null(q);
            *q = *k;
            q->value = sets[s][n];
            cr_assert_eq(cp_case_result_add_pass(&c, &p, n + 1), 0);
            cp_case_result_free(&p);
        }
        double mean, sd, bound, spreads;
        cr_assert(cp_claim_spread(&c.claims[0], &mean, &sd, &bound, &spreads));
        cr_expect_eq(c.claims[0].npass_values, 3);
        cr_expect_float_eq(mean, (sets[s][0] + sets[s][1] + sets[s][2]) / 3, 1e-9);
        cr_expect_float_eq(bound, 4.5, 1e-12);
        cr_expect_float_eq(spreads, want_spreads[s], 1e-6, "%g", spreads);
        cp_case_result_free(&c);
    }
}

/* Progress of a later pass, read from its process's log as it grows: a
 * case's line is said as soon as its end is written (not before), with
 * the share of the run it closes and the time left (a split pass: the
 * timing is its first half, the verdicts its second); a slow variant's
 * line closes nothing; a silence longer than the quiet limit is broken by
 * a line of its own. */
Test(passes, a_later_pass_is_said_from_its_log_as_it_grows)
{
    char log[] = "/tmp/cuproof-progress-XXXXXX";
    int fd = mkstemp(log);
    cr_assert(fd >= 0);
    FILE *w = fdopen(fd, "w");
    char *said = NULL;
    size_t said_len = 0;
    FILE *out = open_memstream(&said, &said_len);
    cr_assert(w && out);
    cp_pass_progress p;
    cp_pass_progress_start(&p, out, 2, true);
    p.quiet_s = 3600; /* no heartbeat until asked for below */
    pid_t pid = 4242;
    cp_pass_progress_follow(&p, "pass 2 of 2", log, &pid, 1, 1);
    fputs("cuproof: NVIDIA H200 ...\n[1/2] vector-add timed: passed\n", w);
    fflush(w);
    cp_pass_progress_poll(&p);
    cr_expect_float_eq(p.done, 1.25, 1e-9, "case 1 of 2 timed: a quarter of pass 2");
    fputs("[1/2] vector-add  add: 50 timed runs in 3.2 s (stop", w);
    fflush(w);
    cp_pass_progress_poll(&p);
    fflush(out);
    cr_expect_null(strstr(said, "50 timed runs"), "nothing whole yet: %s", said);
    fputs("ped by noise)\n[1/2] passed  vector-add  ok\n", w);
    fflush(w);
    cp_pass_progress_poll(&p);
    fflush(out);
    cr_expect_not_null(strstr(said, "cuproof: pass 2 of 2: [1/2] vector-add  add: 50 timed runs in "
                                    "3.2 s (stopped by noise)"),
                       "%s", said);
    cr_expect_not_null(strstr(said, "cuproof: pass 2 of 2: [1/2] passed  vector-add  ok"), "%s",
                       said);
    cr_expect_float_eq(p.done, 1.75, 1e-9, "case 1 of 2 traced: three quarters of pass 2");
    cr_expect_not_null(strstr(said, "left)"), "the time left is said: %s", said);
    /* The control: no line, but a quiet limit passed. */
    p.quiet_s = 0;
    cp_pass_progress_poll(&p);
    fflush(out);
    cr_expect_not_null(strstr(said, "pass 2 of 2: still running in process 4242"), "%s", said);
    fclose(w);
    fclose(out);
    free(said);
    unlink(log);
}
