/* Capture windows (cuproof/internal/capture.h, issue 43): the SPEC's
 * grammar and its errors, which occurrences each form takes, a window
 * that never opened as no verdict, and the verdicts of a window recorded
 * on an H200 equal to the whole run's over the same steps. */
#include <cuproof/error.h>
#include <cuproof/exit.h>
#include <cuproof/expect.h>
#include <cuproof/internal/capture.h>
#include <cuproof/internal/proc.h>
#include <cuproof/internal/steps.h>
#include <cuproof/trust.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cp_capture parsed(const char *spec)
{
    cp_capture c;
    char why[400];
    cr_assert_eq(cp_capture_parse(spec, &c, why, sizeof why), 0, "%s: %s", spec, why);
    char again[200];
    cp_capture_format(&c, again, sizeof again);
    cp_capture d;
    cr_assert_eq(cp_capture_parse(again, &d, why, sizeof why), 0, "%s -> %s: %s", spec, again, why);
    cr_expect_eq(memcmp(&c, &d, sizeof c), 0, "%s reads back as %s", spec, again);
    return c;
}

Test(capture, the_forms_and_what_each_takes)
{
    cp_capture c = parsed("range:step");
    cr_expect_eq(c.kind, CP_CAPTURE_RANGE);
    cr_expect_str_eq(c.name, "step");
    cr_expect_eq(cp_capture_takes(&c, 1), 1);
    cr_expect_eq(cp_capture_takes(&c, 123456), 1);
    cr_expect(cp_capture_more_after(&c, 99999));

    c = parsed("range:train step@3-52");
    cr_expect_str_eq(c.name, "train step");
    cr_expect_eq(cp_capture_takes(&c, 2), 0);
    cr_expect_eq(cp_capture_takes(&c, 3), 1);
    cr_expect_eq(cp_capture_takes(&c, 52), 1);
    cr_expect_eq(cp_capture_takes(&c, 53), 0);
    cr_expect(cp_capture_more_after(&c, 51));
    cr_expect_not(cp_capture_more_after(&c, 52), "after the last, tracing can stop for good");

    c = parsed("range:step@7");
    cr_expect_eq(c.first, 7);
    cr_expect_eq(c.last, 7);
    cr_expect_eq(cp_capture_takes(&c, 7) + cp_capture_takes(&c, 6) + cp_capture_takes(&c, 8), 1);

    /* The PyTorch profiler's schedule: wait 2, warm-up 1, active 3, twice. */
    c = parsed("steps:step:2,1,3,2");
    int want[] = {0, 0, 2, 1, 1, 1, 0, 0, 2, 1, 1, 1, 0, 0};
    for (uint32_t k = 1; k <= 14; k++)
        cr_expect_eq(cp_capture_takes(&c, k), want[k - 1], "occurrence %u", k);
    cr_expect(cp_capture_more_after(&c, 11));
    cr_expect_not(cp_capture_more_after(&c, 12));
    c = parsed("steps:step:0,0,1");
    cr_expect_eq(cp_capture_takes(&c, 1000), 1, "no repeat: every cycle");

    c = parsed("profiler-api");
    cr_expect_eq(c.kind, CP_CAPTURE_PROFILER);
    cr_expect_eq(cp_capture_takes(&c, 1), 0, "no occurrences: the profiler's calls open it");

    c = parsed("after:1.5,for:0.25");
    cr_expect_eq(c.kind, CP_CAPTURE_TIME);
    cr_expect_eq(c.after_ns, 1500000000ull);
    cr_expect_eq(c.for_ns, 250000000ull);
}

Test(capture, a_bad_spec_says_what_and_where)
{
    struct {
        const char *spec, *says;
    } bad[] = {
        {"", "nothing"},
        {"range:", "a range's name is missing at character 7"},
        {"range:step@", "an occurrence from 1 after '@'"},
        {"range:step@0", "an occurrence from 1 after '@'"},
        {"range:step@5-3", "the last occurrence comes before the first"},
        {"range:step@5-", "the last occurrence after '-'"},
        {"range:step@5x", "unexpected text after the range at character 13"},
        {"steps:step:1,1", "expected ',' between the counts"},
        {"steps:step:1,1,0", "ACTIVE must be at least 1"},
        {"steps:step", "expected ':' and WAIT,WARMUP,ACTIVE"},
        {"after:1", "expected ',for:SECONDS'"},
        {"after:1,for:0", "seconds above 0"},
        {"after:x,for:1", "expected seconds after 'after:'"},
        {"nvtx:step", "not a capture form at character 1"},
        {"profiler", "not a capture form"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cp_capture c;
        char why[400] = "";
        cr_expect_eq(cp_capture_parse(bad[i].spec, &c, why, sizeof why), CP_EPARSE, "%s",
                     bad[i].spec);
        cr_expect_not_null(strstr(why, bad[i].says), "'%s': %s", bad[i].spec, why);
        cr_expect_not_null(strstr(why, "the forms: range:NAME"), "%s", why);
        cr_expect_str_eq(cp_last_error(), why);
    }
}

/* Rule 5 of the trust rule: a capture whose window never opened is no
 * verdict, naming the SPEC; one that opened is judged. */
Test(capture, a_window_that_never_opened_is_no_verdict)
{
    cp_trust t;
    cp_trust_judge(&(cp_trust_in){.what = "x", .traced_files = 1, .device_work = 0,
                                  .capture = "range:step@6-9", .windows = 0},
                   &t);
    cr_expect_not(t.trusted);
    cr_expect_eq(t.exit, CP_EXIT_INCONCLUSIVE);
    cr_expect_not_null(strstr(t.why, "the capture window 'range:step@6-9' never opened"), "%s",
                       t.why);
    cp_trust_judge(&(cp_trust_in){.what = "x", .traced_files = 1, .device_work = 7,
                                  .capture = "range:step@2-3", .windows = 1},
                   &t);
    cr_expect(t.trusted, "%s", t.why);
    /* Without --capture a trace of no window is judged as before. */
    cp_trust_judge(&(cp_trust_in){.what = "x", .traced_files = 1, .device_work = 7}, &t);
    cr_expect(t.trusted, "%s", t.why);
}

static int read_one(const char *dir, cp_trace *t)
{
    cp_trace_init(t);
    size_t n = 0;
    int rc = cp_proc_read_dir(dir, t, &n);
    cr_assert_eq(n, 1);
    return rc;
}

static size_t count_named(const cp_trace *t, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->items[i].kind == CP_ACT_RANGE && t->items[i].name &&
             strcmp(t->items[i].name, name) == 0;
    return n;
}

/* nvtx_ranges (5 steps) recorded on an H200 twice: traced whole, and with
 * --capture range:step@2-3. The window's trace holds its one window and
 * steps 2 and 3 alone (the push that opens it recorded too); its verdicts
 * on nvtx_ranges.expect and per step equal the whole run's over the same
 * steps (the other steps' ranges renamed), as a window promises. */
Test(capture, a_windows_verdicts_equal_the_whole_runs_over_its_steps)
{
    cp_trace win, full;
    cr_assert_eq(read_one(CUPROOF_FIXTURES "/exec-h200-capture/window", &win), 0, "%s",
                 cp_last_error());
    cr_assert_eq(read_one(CUPROOF_FIXTURES "/exec-h200-capture/full", &full), 0, "%s",
                 cp_last_error());
    cr_expect_eq(count_named(&win, CP_CAPTURE_RANGE_NAME), 1);
    cr_expect_eq(count_named(&win, "step"), 2);
    cr_expect_eq(count_named(&full, "step"), 5);
    cr_expect_eq(count_named(&full, CP_CAPTURE_RANGE_NAME), 0);
    /* The whole run's steps 2 and 3 alone. */
    size_t k = 0;
    for (size_t i = 0; i < full.n; i++) {
        cp_activity *a = &full.items[i];
        if (a->kind == CP_ACT_RANGE && a->name && strcmp(a->name, "step") == 0 && ++k != 2 &&
            k != 3)
            a->name = "step-not-captured";
    }
    cr_assert_eq(k, 5);
    const char *lines = "range(step): copy_kernel_overlap_ratio > 0.3\n"
                        "range(step): peak_concurrent_kernels > 1\n"
                        "range(step): kernels >= 5\n"
                        "range(step): kernels >= 33\n" /* 16 a step: fails on both */
                        "per step: kernels >= 16\n"
                        "per step: copy_kernel_overlap_ratio > 0.3\n"
                        "per step: kernels > 16\n"; /* fails on both */
    cp_expect_list l = {0};
    cr_assert_eq(cp_expect_parse(lines, 1, &l), 0, "%s", cp_last_error());
    size_t held = 0;
    for (size_t i = 0; i < l.n; i++) {
        bool ok_w = false, ok_f = false;
        char mw[512], mf[512];
        cr_assert_eq(cp_expect_eval_trace(&l.items[i], &win, NULL, &ok_w, mw, sizeof mw), 0);
        cr_assert_eq(cp_expect_eval_trace(&l.items[i], &full, NULL, &ok_f, mf, sizeof mf), 0);
        cr_expect_eq(ok_w, ok_f, "%s: window %s (%s), whole run %s (%s)", l.items[i].text,
                     ok_w ? "passed" : "failed", mw, ok_f ? "passed" : "failed", mf);
        held += ok_w;
    }
    cr_expect_eq(held, 5, "the two lines written to fail fail, the others hold");
    /* The window's steps are the program's steps 2 and 3, as numbered. */
    cp_step_windows sw;
    cp_step_row *rows = NULL;
    long n = cp_step_rows_of_trace(&win, "step", NULL, &sw, &rows);
    cr_assert_eq(n, 2);
    cr_expect_eq(rows[0].index, 2);
    cr_expect_eq(rows[1].index, 3);
    free(rows);
    cp_step_windows_free(&sw);
    cp_expect_list_free(&l);
    cp_trace_free(&win);
    cp_trace_free(&full);
}
