/* Headlines and number formats (reports/headline.h, private to the
 * reports layer: found from the source root). */
#include "reports/headline.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

Test(headline, durations_in_the_unit_that_fits)
{
    char b[32];
    cr_expect_str_eq(cp_format_ms(34.0, b, sizeof b), "34.0 ms");
    cr_expect_str_eq(cp_format_ms(0.812, b, sizeof b), "812 µs");
    cr_expect_str_eq(cp_format_ms(2087.0, b, sizeof b), "2.09 s");
    cr_expect_str_eq(cp_format_ms(0.00045, b, sizeof b), "450 ns");
    cr_expect_str_eq(cp_format_ms(0.99996, b, sizeof b), "1.00 ms", "rounding moves the unit");
    cr_expect_str_eq(cp_format_ms(0, b, sizeof b), "0 ms");
    cr_expect_str_eq(cp_format_ms(-1, b, sizeof b), "-");
    cr_expect_str_eq(cp_format_percent(0.823, b, sizeof b), "82%");
    cr_expect_str_eq(cp_format_percent(0.019, b, sizeof b), "1.9%");
    cr_expect_str_eq(cp_format_percent(0.0004, b, sizeof b), "0.04%");
    cr_expect_str_eq(cp_format_percent(0, b, sizeof b), "0%");
    cr_expect_str_eq(cp_format_percent(1e-7, b, sizeof b), "under 0.01%");
}

static cp_case_result passed_case(void)
{
    cp_case_result c = {.status = CP_STATUS_PASSED};
    snprintf(c.name, sizeof c.name, "multi-kernel");
    snprintf(c.baseline, sizeof c.baseline, "sync");
    cp_check_result *k = cp_result_add_check(&c);
    snprintf(k->name, sizeof k->name, "a check");
    k->status = CP_CHECK_PASSED;
    const char *names[] = {"sync", "streams-pinned"};
    double medians[] = {2087.0, 34.0}, overlap[] = {0, 0.823};
    unsigned peaks[] = {1, 128};
    for (int i = 0; i < 2; i++) {
        cp_variant_result *v = cp_result_add_variant(&c);
        snprintf(v->name, sizeof v->name, "%s", names[i]);
        v->ran = v->traced = true;
        v->timing.median_ms = medians[i];
        v->metrics.kernels = 200;
        v->metrics.copies = 400;
        v->metrics.copy_kernel_overlap_ratio = overlap[i];
        v->metrics.peak_concurrent_kernels = peaks[i];
        /* Only the lane count matters to the headline: several lanes, so
         * overlap and concurrency were possible. */
        v->metrics.nlanes = i ? 200 : 1;
    }
    cp_claim_result *cl = cp_result_add_claim(&c);
    snprintf(cl->text, sizeof cl->text, "Streams make the program about 4x faster");
    snprintf(cl->measured, sizeof cl->measured, "61.4x");
    cl->verdict = CP_VERDICT_CONFIRMED;
    return c;
}

/* A passed case: how much faster, how much overlap, how many at once, and
 * the source's claim, from its own numbers. */
Test(headline, a_passed_case_says_what_it_measured)
{
    cp_case_result c = passed_case();
    char h[1024];
    size_t n = cp_case_headline(&c, h, sizeof h);
    cr_expect_eq(n, strlen(h));
    cr_expect_str_eq(h, "All 1 checks passed. streams-pinned ran 61.4× faster than sync (34.0 ms "
                        "against 2.09 s). Copies overlapped kernels for 82% of copy time "
                        "(streams-pinned); up to 128 kernels ran at once (streams-pinned). "
                        "Source's claim \"Streams make the program about 4x faster\": confirmed "
                        "(measured 61.4x).");
    /* Cut to fit, terminated, and the wanted length still returned. */
    char small[16];
    cr_expect_eq(cp_case_headline(&c, small, sizeof small), n);
    cr_expect_eq(strlen(small), sizeof small - 1);
    cp_case_result_free(&c);
}

/* Cases that did not pass say why, first. */
Test(headline, other_verdicts_say_why)
{
    cp_case_result c = passed_case();
    char h[1024];
    c.checks[0].status = CP_CHECK_FAILED;
    snprintf(c.checks[0].expected, sizeof c.checks[0].expected, "> 1");
    snprintf(c.checks[0].measured, sizeof c.checks[0].measured, "1 kernels");
    c.status = CP_STATUS_FAILED;
    cp_case_headline(&c, h, sizeof h);
    cr_expect_str_eq(h, "Failed: 1 of 1 checks, first \"a check\": expected > 1, measured 1 kernels.");
    c.status = CP_STATUS_INCONCLUSIVE;
    snprintf(c.skip_reason, sizeof c.skip_reason, "essential check not made: x");
    cp_case_headline(&c, h, sizeof h);
    cr_expect_str_eq(h, "Inconclusive: essential check not made: x.");
    c.status = CP_STATUS_SKIPPED;
    snprintf(c.skip_reason, sizeof c.skip_reason, "no CUDA device");
    cp_case_headline(&c, h, sizeof h);
    cr_expect_str_eq(h, "Skipped: no CUDA device.");
    c.status = CP_STATUS_FAILED;
    snprintf(c.error, sizeof c.error, "case: CUDA error");
    cp_case_headline(&c, h, sizeof h);
    cr_expect_str_eq(h, "Failed: case: CUDA error.");
    cp_case_result_free(&c);
}

/* Serialised work: no overlap, one kernel at a time, said plainly. */
Test(headline, no_overlap_and_no_concurrency_are_said)
{
    cp_case_result c = passed_case();
    c.variants[1].metrics.copy_kernel_overlap_ratio = 0;
    c.variants[1].metrics.peak_concurrent_kernels = 1;
    c.claims[0].verdict = CP_VERDICT_REFUTED;
    char h[1024];
    cp_case_headline(&c, h, sizeof h);
    cr_expect(strstr(h, "No copy overlapped a kernel; no two kernels ever ran at once."), "%s", h);
    cr_expect(strstr(h, ": refuted (measured 61.4x)."), "%s", h);
    /* One lane of work: nothing could overlap, so nothing is said of it. */
    c.variants[1].metrics.nlanes = 1;
    cp_case_headline(&c, h, sizeof h);
    cr_expect_null(strstr(h, "overlap"), "%s", h);
    cr_expect_null(strstr(h, "at once"), "%s", h);
    cp_case_result_free(&c);
}

/* Without a baseline the variants do different work: no ratio, the range
 * of their times. With one, a baseline nothing beat is said so; a single
 * variant gives its time. */
Test(headline, speed_is_a_ratio_only_against_a_baseline)
{
    cp_case_result c = passed_case();
    char h[1024];
    c.baseline[0] = '\0';
    cp_case_headline(&c, h, sizeof h);
    cr_expect(strstr(h, "passed. Medians from 34.0 ms (streams-pinned) to 2.09 s (sync)."), "%s",
              h);
    cr_expect_null(strstr(h, "× faster"), "%s", h);
    snprintf(c.baseline, sizeof c.baseline, "streams-pinned");
    cp_case_headline(&c, h, sizeof h);
    cr_expect(strstr(h, "No variant beat streams-pinned: the fastest other, sync, took 61.4× its "
                        "time (2.09 s against 34.0 ms)."),
              "%s", h);
    /* Within 3%: the same time, not "1.01x faster". */
    c.variants[0].timing.median_ms = 34.5;
    cp_case_headline(&c, h, sizeof h);
    cr_expect(strstr(h, "sync took about the same time as streams-pinned (34.5 ms against 34.0 "
                        "ms)."),
              "%s", h);
    c.variants[0].timing.median_ms = 2087.0;
    /* A baseline that did not run: the range again, never a ratio to it. */
    c.variants[1].ran = false;
    snprintf(c.baseline, sizeof c.baseline, "streams-pinned");
    cp_case_headline(&c, h, sizeof h);
    cr_expect(strstr(h, "passed. sync took 2.09 s."), "%s", h);
    cp_case_result_free(&c);
}
