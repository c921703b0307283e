/*
 * The stream and event cases replayed from traces recorded on an H100
 * (tests/fixtures/), with the series each run measured itself: the same
 * verdicts as the GPU tests, on a machine with no GPU, and negative
 * controls that show each check can fail.
 */
#include <cuproof/internal/tracefile.h>
#include <cuproof/agreement.h>
#include <cuproof/error.h>
#include "replay.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cp_trace_file f;
static const cp_timeline_opts h100 = {.max_concurrent_kernels = 128};

static void load(const char *name)
{
    replay_load_file(&f, name, "H100");
}

static void load_events(void)
{
    load("multi-kernel-events-h100.trace.json");
}

static void load_event_timing(void)
{
    load("event-timing-h100-ci.trace.json");
}

static void load_conway(void)
{
    load("conway-streams-h100-ci.trace.json");
}

static void unload(void)
{
    cp_trace_file_free(&f);
}

static size_t index_of(const char *variant)
{
    for (size_t i = 0; i < f.nvariants; i++)
        if (strcmp(f.variants[i].name, variant) == 0)
            return i;
    cr_assert_fail("variant %s not in the fixture", variant);
    return 0;
}

static const cp_series *events_of(const char *variant)
{
    size_t i = index_of(variant);
    const cp_series *s = cp_series_find(f.variants[i].series, f.variants[i].nseries, "event_ms");
    cr_assert_not_null(s, "%s has no event_ms series", variant);
    return s;
}

/* The agreement of `events` with the trace of `variant`. */
static cp_event_agreement agree(const char *variant, const double *events, size_t n)
{
    cp_event_agreement a;
    cr_assert_eq(cp_events_against_trace(&f.variants[index_of(variant)].trace, "mult_ker", events, n,
                                         CP_EVENT_TOLERANCE, &a),
                 0, "%s", cp_last_error());
    return a;
}

/* Peak concurrent kernels and kernel count of a variant's trace. */
typedef struct counts {
    uint32_t peak, kernels;
} counts;

static counts analysed(const char *variant)
{
    cp_metrics m;
    cr_assert_eq(cp_timeline_analyse(&f.variants[index_of(variant)].trace, &h100, &m), 0);
    counts c = {m.peak_concurrent_kernels, m.kernels};
    cp_metrics_free(&m);
    return c;
}

static uint32_t peak(const char *variant)
{
    return analysed(variant).peak;
}

static uint32_t kernels(const char *variant)
{
    return analysed(variant).kernels;
}

TestSuite(replay_events, .init = load_events, .fini = unload);

/* As the case asserts: no event time shorter than its kernel anywhere;
 * every one agrees where nothing can stand between events and kernel. */
Test(replay_events, verdicts_of_the_gpu_test)
{
    cr_assert_eq(f.nvariants, 4);
    const char *agreeing[] = {"serialised", "one-big-kernel"};
    for (size_t i = 0; i < f.nvariants; i++) {
        const cp_series *e = events_of(f.variants[i].name);
        cp_event_agreement a = agree(f.variants[i].name, e->values, e->n);
        cr_expect_eq(a.launches, e->n);
        cr_expect_eq(a.too_short, 0, "%s: %zu shorter", f.variants[i].name, a.too_short);
    }
    for (size_t i = 0; i < 2; i++) {
        const cp_series *e = events_of(agreeing[i]);
        cp_event_agreement a = agree(agreeing[i], e->values, e->n);
        cr_expect_eq(a.host_bounded, a.launches, "%s: %zu of %zu within the launch wait",
                     agreeing[i], a.host_bounded, a.launches);
        cr_expect_geq(a.agreeing, a.launches * 9 / 10, "%s: %zu of %zu agree outright",
                      agreeing[i], a.agreeing, a.launches);
    }
    cr_expect_eq(events_of("source-order")->n, 200);
    /* The case's own expectations: kernels run concurrently in the
     * source's order and depth-first, one at a time serialised. Each
     * control fails the other's: the lines can fail. */
    cp_metrics *m = replay_analyse(&f, &h100);
    cr_expect_eq(replay_expectations(&f, m, "multi-kernel-events"), 3);
    cr_expect_eq(replay_expectations_fail_on(&m[index_of("serialised")], "multi-kernel-events",
                                             "source-order"),
                 1);
    cr_expect_eq(replay_expectations_fail_on(&m[index_of("source-order")], "multi-kernel-events",
                                             "serialised"),
                 1);
    replay_metrics_free(m, f.nvariants);
    cr_expect_leq(peak("depth-first"), 8, "8 hardware queues by default");
}

/* The agreement check fails on the source's order, where kernels waited,
 * and passes on the serialised control: it discriminates. */
Test(replay_events, waits_fail_the_agreement_check)
{
    const cp_series *e = events_of("source-order");
    cp_event_agreement a = agree("source-order", e->values, e->n);
    cr_expect_gt(a.waited, 0);
    cr_expect_lt(a.agreeing, a.launches);
    cr_expect_gt(a.event_std_ms, a.kernel_std_ms,
                 "the events spread wider (%.3f ms) than the kernels (%.3f ms)",
                 a.event_std_ms, a.kernel_std_ms);
    const cp_series *d = events_of("depth-first");
    cp_event_agreement b = agree("depth-first", d->values, d->n);
    cr_expect_gt(b.mean_excess_ms, 1.0, "the false dependency shows in the events");
}

/* Negative controls: poisoned or mispaired event times fail. */
Test(replay_events, poisoned_and_mispaired_events_fail)
{
    const cp_series *e = events_of("serialised");
    double *half = malloc(e->n * sizeof *half);
    cr_assert_not_null(half);
    for (size_t i = 0; i < e->n; i++)
        half[i] = e->values[i] / 2;
    cp_event_agreement a = agree("serialised", half, e->n);
    cr_expect_eq(a.too_short, e->n);
    free(half);
    /* The depth-first run's events against the serialised run's kernels. */
    const cp_series *d = events_of("depth-first");
    cr_assert_eq(d->n, e->n);
    cp_event_agreement b = agree("serialised", d->values, d->n);
    cr_expect_lt(b.agreeing, b.launches);
    cr_expect_lt(b.host_bounded, b.launches, "waits the trace cannot account for");
    cp_event_agreement c;
    cr_expect_eq(cp_events_against_trace(&f.variants[index_of("one-big-kernel")].trace, "mult_ker",
                                         e->values, e->n, CP_EVENT_TOLERANCE, &c),
                 CP_EINVAL, "200 event times cannot pair with one launch");
}

TestSuite(replay_event_timing, .init = load_event_timing, .fini = unload);

/* Under CUPTI the launch call returned late: the start event fired at its
 * record call, the kernel after the launch; the trace bounds that wait. */
Test(replay_event_timing, event_time_is_the_kernel_plus_the_launch_wait)
{
    const cp_series *e = events_of("default-stream");
    cr_assert_eq(e->n, 1);
    cp_event_agreement a = agree("default-stream", e->values, 1);
    cr_expect_eq(a.too_short, 0);
    cr_expect_eq(a.host_bounded, 1, "event %.3f ms, kernel %.3f ms, launch wait %.3f ms",
                 e->values[0], a.kernel_mean_ms, a.max_host_wait_ms);
    double late = e->values[0] + 5.0, early = e->values[0] / 2;
    a = agree("default-stream", &late, 1);
    cr_expect_eq(a.host_bounded, 0, "5 ms more than the trace allows");
    a = agree("default-stream", &early, 1);
    cr_expect_eq(a.too_short, 1);
}

TestSuite(replay_conway, .init = load_conway, .fini = unload);

/* Queued behind the gate, kernels of different boards overlap; one board
 * never does; host-issued 128 x 128 boards did not on the H100. */
Test(replay_conway, queued_streams_overlap_and_one_board_does_not)
{
    cr_assert_eq(f.nvariants, 10);
    const char *queued[] = {"queued-4", "queued-8", "queued-16", "queued-64"};
    const int boards[] = {4, 8, 16, 64};
    uint32_t generations = kernels("streams-1");
    cr_assert_gt(generations, 0);
    for (int i = 0; i < 4; i++) {
        cr_expect_gt(peak(queued[i]), 1, "%s", queued[i]);
        cr_expect_eq(kernels(queued[i]), (uint32_t)boards[i] * 8 + 1, "%s: 8 generations and "
                     "the gate", queued[i]);
    }
    /* One board, host-paced or queued, runs one kernel at a time: the
     * case's expectations, which queued-4's trace fails. */
    cp_metrics *m = replay_analyse(&f, &h100);
    cr_expect_eq(replay_expectations(&f, m, "conway-streams"), 2);
    cr_expect_eq(replay_expectations_fail_on(&m[index_of("queued-4")], "conway-streams",
                                             "queued-1"),
                 1);
    replay_metrics_free(m, f.nvariants);
    cr_expect_eq(kernels("streams-64"), 64 * generations);
    cr_expect_eq(peak("streams-64"), 1, "the host paced the kernels one at a time");
}
