/* Headlines and number formats (reports/headline.h, private to the
 * reports layer: found from the source root). */
#include "reports/headline.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

Test(headline, durations_in_the_unit_that_fits)
{
    char b[32];
    cr_expect_str_eq(cp_fmt_ms(34.0, b, sizeof b), "34.0 ms");
    cr_expect_str_eq(cp_fmt_ms(0.812, b, sizeof b), "812 µs");
    cr_expect_str_eq(cp_fmt_ms(2087.0, b, sizeof b), "2.09 s");
    cr_expect_str_eq(cp_fmt_ms(0.00045, b, sizeof b), "450 ns");
    cr_expect_str_eq(cp_fmt_ms(0.99996, b, sizeof b), "1.00 ms", "rounding moves the unit");
    cr_expect_str_eq(cp_fmt_ms(0, b, sizeof b), "0 ms");
    cr_expect_str_eq(cp_fmt_ms(-1, b, sizeof b), "-");
    cr_expect_str_eq(cp_fmt_percent(0.823, b, sizeof b), "82%");
    cr_expect_str_eq(cp_fmt_percent(0.019, b, sizeof b), "1.9%");
    cr_expect_str_eq(cp_fmt_percent(0.0004, b, sizeof b), "0.04%");
    cr_expect_str_eq(cp_fmt_percent(0, b, sizeof b), "0%");
    cr_expect_str_eq(cp_fmt_percent(1e-7, b, sizeof b), "under 0.01%");
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
    /* One speedup figure: the claim's, which it ends with. */
    cr_expect_str_eq(h, "Its 1 check passed. Copies overlapped kernels for 82% of copy time "
                        "(streams-pinned); up to 128 kernels ran at once (streams-pinned). "
                        "Source's claim \"Streams make the program about 4x faster\": confirmed "
                        "(measured 61.4x).");
    /* A claim that measured no ratio leaves the figure to the baseline's,
     * with times that give the ratio back (2087 / 34.00 = 61.4). */
    snprintf(c.claims[0].measured, sizeof c.claims[0].measured, "all of it");
    cp_case_headline(&c, h, sizeof h);
    cr_expect(strstr(h, "Its 1 check passed. streams-pinned ran 61.4× faster than sync (34.00 ms "
                        "against 2.087 s). "),
              "%s", h);
    snprintf(c.claims[0].measured, sizeof c.claims[0].measured, "61.4x");
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
    snprintf(c.checks[0].measured, sizeof c.checks[0].measured, "1 kernel");
    c.status = CP_STATUS_FAILED;
    cp_case_headline(&c, h, sizeof h);
    cr_expect_str_eq(h, "Failed: 1 of 1 check, first \"a check\": expected > 1, measured 1 kernel.");
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

/* Without a baseline the variants do different work: no ratio and no
 * range of their times; the overlap is the fact said. With one, a
 * baseline nothing beat is said so; a single variant gives its time. */
Test(headline, speed_is_a_ratio_only_against_a_baseline)
{
    cp_case_result c = passed_case();
    char h[1024];
    /* A claim that measured no ratio: the speed is the baseline's. */
    snprintf(c.claims[0].measured, sizeof c.claims[0].measured, "all of it");
    c.baseline[0] = '\0';
    cp_case_headline(&c, h, sizeof h);
    cr_expect(strstr(h, "passed. Copies overlapped kernels for 82% of copy time"), "%s", h);
    cr_expect_null(strstr(h, "Medians"), "%s", h);
    cr_expect_null(strstr(h, "× faster"), "%s", h);
    snprintf(c.baseline, sizeof c.baseline, "streams-pinned");
    cp_case_headline(&c, h, sizeof h);
    cr_expect(strstr(h, "No variant beat streams-pinned: the fastest other, sync, took 61.4× its "
                        "time (2.087 s against 34.00 ms)."),
              "%s", h);
    /* Within 3%: the same time, not "1.01x faster". */
    c.variants[0].timing.median_ms = 34.5;
    cp_case_headline(&c, h, sizeof h);
    cr_expect(strstr(h, "sync took about the same time as streams-pinned (34.5 ms against 34.0 "
                        "ms)."),
              "%s", h);
    c.variants[0].timing.median_ms = 2087.0;
    /* A baseline that did not run: the one timed variant, never a ratio. */
    c.variants[1].ran = false;
    snprintf(c.baseline, sizeof c.baseline, "streams-pinned");
    cp_case_headline(&c, h, sizeof h);
    cr_expect(strstr(h, "passed. sync took 2.09 s."), "%s", h);
    cp_case_result_free(&c);
}

/* No baseline, nothing that could overlap and no claim decided: the check
 * the case rests on, else the slowest variant; never a range of times. */
Test(headline, without_a_baseline_the_telling_fact)
{
    cp_case_result c = passed_case();
    char h[1024];
    c.baseline[0] = '\0';
    c.variants[1].metrics.nlanes = 1;
    c.claims[0].verdict = CP_VERDICT_NOT_MEASURED;
    cp_case_headline(&c, h, sizeof h);
    cr_expect(strstr(h, "Its 1 check passed. The slowest of its 2 variants, sync, took 2.09 s."),
              "%s", h);
    cr_expect_null(strstr(h, "Medians"), "%s", h);
    c.checks[0].essential = true;
    snprintf(c.checks[0].name, sizeof c.checks[0].name, "sync: copies == 1");
    snprintf(c.checks[0].measured, sizeof c.checks[0].measured, "1 copies");
    cp_case_headline(&c, h, sizeof h);
    /* An older cuproof's "1 copies", shown as the one table has it. */
    cr_expect(strstr(h, "passed. Its essential check, \"sync: copies == 1\", measured 1 copy."),
              "%s", h);
    cr_expect_null(strstr(h, "slowest"), "%s", h);
    /* A claim decided is the fact: nothing else is added. */
    c.claims[0].verdict = CP_VERDICT_REFUTED;
    cp_case_headline(&c, h, sizeof h);
    cr_expect_str_eq(h, "Its 1 check passed. Source's claim \"Streams make the program about 4x "
                        "faster\": refuted (measured 61.4x).");
    cp_case_result_free(&c);
}

/* ---- key findings ---- */

static void add_check(cp_case_result *c, const char *name, cp_check_status st)
{
    cp_check_result *k = cp_result_add_check(c);
    cr_assert_not_null(k);
    snprintf(k->name, sizeof k->name, "%s", name);
    snprintf(k->expected, sizeof k->expected, "%s", name);
    snprintf(k->measured, sizeof k->measured, "measured");
    k->status = st;
}

static cp_variant_result *add_variant(cp_case_result *c, const char *name, double ms,
                                      double overlap, unsigned peak)
{
    cp_variant_result *v = cp_result_add_variant(c);
    cr_assert_not_null(v);
    snprintf(v->name, sizeof v->name, "%s", name);
    v->ran = v->traced = true;
    v->timing.median_ms = ms;
    v->metrics.kernels = v->metrics.copies = 4;
    v->metrics.nlanes = 4;
    v->metrics.copy_kernel_overlap_ratio = overlap;
    v->metrics.peak_concurrent_kernels = peak;
    return v;
}

static void add_claim(cp_case_result *c, const char *text, const char *claimed,
                      const char *measured, cp_verdict verdict)
{
    cp_claim_result *k = cp_result_add_claim(c);
    cr_assert_not_null(k);
    snprintf(k->text, sizeof k->text, "%s", text);
    snprintf(k->claimed, sizeof k->claimed, "%s", claimed);
    snprintf(k->measured, sizeof k->measured, "%s", measured);
    k->verdict = verdict;
}

/* A run of seven cases, each a kind of finding or a near miss of one. */
static cp_report findings_run(cp_case_result cases[7])
{
    /* small comes before streams: the largest speedup is not the first. */
    static const char *const names[] = {"small", "streams", "slow", "plain",
                                        "missed", "unsure", "refuted"};
    for (int i = 0; i < 7; i++) {
        cases[i] = (cp_case_result){.status = CP_STATUS_PASSED};
        snprintf(cases[i].name, sizeof cases[i].name, "%s", names[i]);
    }
    /* plain: no baseline, a serialised control (== 0 / == 1 declares no
     * overlap) and a claim confirmed within what it claimed. */
    add_variant(&cases[3], "one", 1, 0, 1);
    add_check(&cases[3], "one: copy_kernel_overlap_ns == 0", CP_CHECK_PASSED);
    add_check(&cases[3], "one: peak_concurrent_kernels == 1", CP_CHECK_PASSED);
    add_claim(&cases[3], "about 4x", "about 4x (3x to 4.5x)", "3.9x", CP_VERDICT_CONFIRMED);
    /* streams: 61.4x against its baseline, overlap and concurrency
     * declared and achieved, a claim confirmed past its range. */
    snprintf(cases[1].baseline, sizeof cases[1].baseline, "sync");
    add_variant(&cases[1], "sync", 2087, 0, 1);
    add_variant(&cases[1], "pinned", 34, 0.62, 64);
    add_variant(&cases[1], "graph", 40, 0.823, 128);
    /* The ratio the claim rests on is said first, the other after it. */
    add_check(&cases[1], "graph: copy_kernel_overlap_ratio > 0.3", CP_CHECK_PASSED);
    add_check(&cases[1], "pinned: copy_kernel_overlap_ratio > 0.5", CP_CHECK_PASSED);
    cases[1].checks[1].essential = true;
    add_check(&cases[1], "pinned: peak_concurrent_kernels > 1", CP_CHECK_PASSED);
    add_check(&cases[1], "graph: peak_concurrent_kernels > 1", CP_CHECK_PASSED);
    add_claim(&cases[1], "Streams make it about 4x faster", "about 4x (3x to 4.5x)", "61.4x",
              CP_VERDICT_CONFIRMED);
    /* slow: failed. */
    cases[2].status = CP_STATUS_FAILED;
    add_check(&cases[2], "output equals the reference", CP_CHECK_FAILED);
    /* small: 1.5x against its baseline, less than streams; 1.02x in
     * another case would not count at all. */
    snprintf(cases[0].baseline, sizeof cases[0].baseline, "a");
    add_variant(&cases[0], "a", 3, 0, 1);
    add_variant(&cases[0], "b", 2, 0, 1);
    /* missed: overlap declared (the case's own words for concurrency
     * too) and not reached. */
    cases[4].status = CP_STATUS_FAILED;
    add_variant(&cases[4], "pinned", 5, 0.12, 1);
    add_check(&cases[4], "pinned: copy_kernel_overlap_ratio > 0.5", CP_CHECK_FAILED);
    add_check(&cases[4], "pinned: kernels of different streams overlap", CP_CHECK_FAILED);
    snprintf(cases[4].checks[1].expected, sizeof cases[4].checks[1].expected,
             "peak concurrent kernels > 1");
    /* unsure: inconclusive. */
    cases[5].status = CP_STATUS_INCONCLUSIVE;
    snprintf(cases[5].skip_reason, sizeof cases[5].skip_reason, "the trace was lost");
    /* refuted: two refuted claims. */
    add_variant(&cases[6], "x", 1, 0, 1);
    add_claim(&cases[6], "about 200x faster", "about 200x", "0.84x", CP_VERDICT_REFUTED);
    add_claim(&cases[6], "takes 419 ms", "419 ms", "5.0 ms", CP_VERDICT_REFUTED);
    return (cp_report){.cases = cases, .ncases = 7};
}

/* Every finding with its numbers, failures first, each naming its case;
 * near misses (a claim within its range, a serialised control, a smaller
 * speedup) are no finding. */
Test(headline, key_findings_say_what_stands_out)
{
    cp_case_result cases[7];
    cp_report r = findings_run(cases);
    cp_key_finding f[16];
    size_t n = cp_key_findings(&r, f, 16);
    cr_assert_eq(n, 8);
    static const struct {
        cp_key_kind kind;
        size_t at;
        const char *text;
    } want[] = {
        {CP_KEY_FAILED, 2, "Failed: 1 of 1 check, first \"output equals the reference\": "
                           "expected output equals the reference, measured measured."},
        {CP_KEY_FAILED, 4, "Failed: 2 of 2 checks, first \"pinned: copy_kernel_overlap_ratio > "
                           "0.5\": expected pinned: copy_kernel_overlap_ratio > 0.5, measured "
                           "measured."},
        {CP_KEY_INCONCLUSIVE, 5, "Inconclusive: the trace was lost."},
        {CP_KEY_SPEEDUP, 1, "the largest speedup against a baseline: pinned ran 61.4× faster "
                            "than sync (34.00 ms against 2.087 s)."},
        {CP_KEY_OVERLAP, 1, "copy/kernel overlap and kernel concurrency achieved: copies "
                            "overlapped kernels for 62% of copy time in pinned (wanted over "
                            "50%), 82% in graph (wanted over 30%); up to 128 kernels ran at once "
                            "in graph (wanted more than 1); 2 variants were meant to run "
                            "kernels at once, and did."},
        {CP_KEY_OVERLAP, 4, "copy/kernel overlap and kernel concurrency missed: copies "
                            "overlapped kernels for 12% of copy time in pinned (wanted over "
                            "50%); at most 1 kernel ran at once in pinned (wanted more than 1)."},
        {CP_KEY_CLAIM, 1, "the source's claim \"Streams make it about 4x faster\" exceeded: "
                          "claimed about 4x (3x to 4.5x), measured 61.4x."},
        {CP_KEY_CLAIM, 6, "the source's claim \"about 200x faster\" refuted: claimed about 200x, "
                          "measured 0.84x; 1 more claim refuted."},
    };
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(f[i].kind, want[i].kind, "finding %zu", i);
        cr_expect_eq(f[i].case_index, want[i].at, "finding %zu", i);
        cr_expect_str_eq(f[i].text, want[i].text, "finding %zu", i);
    }
    /* Fewer slots: the first ones, and the count of all. */
    cr_expect_eq(cp_key_findings(&r, f, 2), 8);
    cr_expect_eq(f[1].case_index, 4);
    /* The interest that orders the cases: small has a speedup, but not the
     * largest, and no claim. */
    static const int interest[] = {2, 1, 0, 1, 0, 0, 1};
    for (size_t i = 0; i < 7; i++)
        cr_expect_eq(cp_case_interest(&r, i), interest[i], "case %s", cases[i].name);
    /* Without the speedup, the claims and the overlap: nothing. */
    cases[1].baseline[0] = '\0';
    cases[1].nclaims = 0;
    for (size_t i = 0; i < cases[1].nchecks; i++)
        cases[1].checks[i].status = CP_CHECK_SKIPPED;
    n = cp_key_findings(&r, f, 16);
    cr_expect_eq(f[3].kind, CP_KEY_SPEEDUP, "small's 1.5x is now the largest");
    cr_expect_eq(f[3].case_index, 0);
    cr_expect_eq(cp_case_interest(&r, 0), 1);
    cr_expect_str_eq(f[4].text, "copy/kernel overlap and kernel concurrency not measured: its 4 "
                                "checks could not be made.");
    cases[1].nclaims = 1;
    for (size_t i = 0; i < 7; i++)
        cp_case_result_free(&cases[i]);
}

/* A traced program's expectation names no variant: in a case of one
 * variant it is that variant's; in a case of several, no one's. */
Test(headline, a_program_declares_overlap_without_naming_its_variant)
{
    cp_case_result c = {.status = CP_STATUS_PASSED};
    snprintf(c.name, sizeof c.name, "sh");
    add_variant(&c, "program", 1, 0.59, 2);
    add_check(&c, "peak_concurrent_kernels > 1", CP_CHECK_PASSED);
    cp_report r = {.cases = &c, .ncases = 1};
    cp_key_finding f[4];
    cr_assert_eq(cp_key_findings(&r, f, 4), 1);
    cr_expect_str_eq(f[0].text, "kernel concurrency achieved: up to 2 kernels ran at once in "
                                "program (wanted more than 1).");
    add_variant(&c, "other", 1, 0, 1);
    cr_expect_eq(cp_key_findings(&r, f, 4), 0);
    cp_case_result_free(&c);
}
