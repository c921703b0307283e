/*
 * Event times against CUPTI kernel records (<cuproof/agreement.h>) on
 * hand-built traces: pairing by launch order, the tolerance, waits, the
 * host-side bound, and the errors.
 */
#include <cuproof/agreement.h>
#include <cuproof/error.h>

#include <criterion/criterion.h>
#include <string.h>

static const cp_event_tolerance tol = {.abs_ms = 0.1, .rel = 0.005};

/* A kernel of `name` from s to e ns, launched with correlation id `corr`. */
static void kernel(cp_trace *t, const char *name, uint64_t s, uint64_t e, uint32_t stream,
                   uint32_t corr)
{
    cp_activity a = {.kind = CP_ACT_KERNEL, .start = s, .end = e, .context = 1,
                     .stream = stream, .correlation = corr, .name = name};
    cr_assert_eq(cp_trace_add(t, &a), 0);
}

static void record_call(cp_trace *t, uint64_t s, uint32_t corr)
{
    cp_activity a = {.kind = CP_ACT_RUNTIME, .start = s, .end = s + 5000, .correlation = corr,
                     .name = "cudaEventRecord_v3020"};
    cr_assert_eq(cp_trace_add(t, &a), 0);
}

#define MS 1000000ull

Test(agreement, pairs_in_launch_order_not_record_order)
{
    cp_trace t;
    cp_trace_init(&t);
    /* Delivered out of order; launch order is by correlation id. */
    kernel(&t, "k", 10 * MS, 13 * MS, 2, 20); /* second launch: 3 ms */
    kernel(&t, "k", 0, 2 * MS, 1, 10);        /* first launch: 2 ms */
    kernel(&t, "other", 0, 50 * MS, 3, 15);   /* another kernel is not paired */
    const double events[2] = {2.01, 3.02};
    cp_event_agreement a;
    cr_assert_eq(cp_events_against_trace(&t, "k", events, 2, tol, &a), 0);
    cr_expect_eq(a.launches, 2);
    cr_expect_eq(a.agreeing, 2);
    cr_expect_eq(a.too_short, 0);
    cr_expect_eq(a.waited, 0);
    cr_expect_float_eq(a.kernel_mean_ms, 2.5, 1e-9);
    cr_expect_float_eq(a.kernel_std_ms, 0.5, 1e-9);
    cr_expect_float_eq(a.event_mean_ms, 2.515, 1e-9);
    /* Swapped, the same values no longer fit their launches. */
    const double swapped[2] = {3.02, 2.01};
    cr_assert_eq(cp_events_against_trace(&t, "k", swapped, 2, tol, &a), 0);
    cr_expect_eq(a.too_short, 1, "2.01 ms cannot bracket a 3 ms kernel");
    cr_expect_eq(a.waited, 1);
    cp_trace_free(&t);
}

/* A 10 ms kernel: the tolerance is 0.1 ms + 0.5%, 0.15 ms either side. */
Test(agreement, tolerance_edges)
{
    cp_trace t;
    cp_trace_init(&t);
    kernel(&t, "k", 0, 10 * MS, 1, 1);
    const struct {
        double event;
        size_t agreeing, waited, too_short;
    } cases[] = {{10.149, 1, 0, 0}, {10.151, 0, 1, 0}, {9.851, 1, 0, 0}, {9.849, 0, 0, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cp_event_agreement a;
        cr_assert_eq(cp_events_against_trace(&t, "k", &cases[i].event, 1, tol, &a), 0);
        cr_expect_eq(a.agreeing, cases[i].agreeing, "event %.3f", cases[i].event);
        cr_expect_eq(a.waited, cases[i].waited, "event %.3f", cases[i].event);
        cr_expect_eq(a.too_short, cases[i].too_short, "event %.3f", cases[i].event);
        if (cases[i].too_short)
            cr_expect_float_eq(a.worst_short_ms, 10.0 - cases[i].event, 1e-9);
        if (cases[i].waited)
            cr_expect_float_eq(a.max_excess_ms, cases[i].event - 10.0, 1e-9);
    }
    cp_trace_free(&t);
}

/* The start event fires no earlier than its record call: a kernel that
 * began 3 ms after that call may have an event time up to 3 ms longer. */
Test(agreement, host_bound_covers_a_late_launch_only)
{
    cp_trace t;
    cp_trace_init(&t);
    record_call(&t, 1 * MS, 4);
    kernel(&t, "k", 4 * MS, 14 * MS, 7, 5);
    cp_event_agreement a;
    double e = 13.0; /* the kernel plus the 3 ms the launch call took */
    cr_assert_eq(cp_events_against_trace(&t, "k", &e, 1, tol, &a), 0);
    cr_expect_eq(a.waited, 1);
    cr_expect_eq(a.host_bounded, 1);
    cr_expect_float_eq(a.max_host_wait_ms, 3.0, 1e-9);
    e = 13.5; /* more than the trace allows */
    cr_assert_eq(cp_events_against_trace(&t, "k", &e, 1, tol, &a), 0);
    cr_expect_eq(a.host_bounded, 0);
    cp_trace_free(&t);
}

Test(agreement, counts_must_match)
{
    cp_trace t;
    cp_trace_init(&t);
    kernel(&t, "k", 0, MS, 1, 1);
    const double e[2] = {1, 1};
    cp_event_agreement a;
    cr_expect_eq(cp_events_against_trace(&t, "k", e, 2, tol, &a), CP_EINVAL);
    cr_expect_not_null(strstr(cp_last_error(), "1 launches of k but 2 event times"),
                       "%s", cp_last_error());
    cr_expect_eq(cp_events_against_trace(&t, "missing", e, 1, tol, &a), CP_EINVAL);
    cr_expect_eq(cp_events_against_trace(NULL, "k", e, 1, tol, &a), CP_EINVAL);
    cr_expect_eq(cp_events_against_trace(&t, "k", NULL, 1, tol, &a), CP_EINVAL);
    cr_expect_eq(cp_events_against_trace(&t, "k", e, 1, tol, NULL), CP_EINVAL);
    cp_trace_free(&t);
}
