/*
 * Findings against their evidence, on programs recorded on the H100
 * (tests/fixtures/exec-h100-findings, README there): for each
 * finding a trace where it must be raised and one where it must not,
 * its message holding the figures it rests on, and the streaming
 * analysis giving the same findings, evidence and words as the
 * whole-trace one.
 */
#include <cuproof/error.h>
#include <cuproof/expect.h>
#include <cuproof/internal/tracefile.h>
#include <cuproof/metrics.h>

#include "stream_equal.h"
#include "../harness/analysis/sweep.h" /* the call match, internal */

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static const cp_timeline_opts h100 = {.max_concurrent_kernels = 128};

/* The metrics of fixture NAME's one variant, within range(RANGE) when
 * given, by both analyses (held equal). */
static void analyse(const char *name, const char *range, cp_metrics *m)
{
    char path[512];
    snprintf(path, sizeof path, CUPROOF_FIXTURES "/exec-h100-findings/%s.trace.json", name);
    cp_trace_file f;
    cr_assert_eq(cp_trace_file_read(path, &f), 0, "%s", cp_last_error());
    cr_assert_eq(f.nvariants, 1);
    const cp_trace *t = &f.variants[0].trace;
    cp_trace scoped;
    if (range) {
        char why[160];
        cr_assert_eq(cp_trace_scope(t, "range", range, &scoped, why, sizeof why), 0, "%s", why);
        t = &scoped;
    }
    cr_assert_eq(cp_timeline_analyse(t, &h100, m), 0);
    expect_stream_equal(t, &h100, m);
    if (range)
        cp_trace_free(&scoped);
    cp_trace_file_free(&f);
}

static const cp_finding *finding(const cp_metrics *m, const char *name)
{
    for (size_t i = 0; i < m->nfindings; i++)
        if (strcmp(m->findings[i].name, name) == 0)
            return &m->findings[i];
    return NULL;
}

/* Lanes with kernels launched one by one, and with any kernel. */
static uint32_t lanes_with(const cp_metrics *m, bool outside_graphs)
{
    uint32_t n = 0;
    for (size_t i = 0; i < m->nlanes; i++)
        n += outside_graphs ? m->lanes[i].kernels > m->lanes[i].graph_kernels
                            : m->lanes[i].kernels > 0;
    return n;
}

/* PyTorch's pageable .to(device, non_blocking=True) beside products queued
 * on another stream: the copies overlapped the products for most of their
 * time (84% on the H100), so the finding must not say they cannot; what it
 * says is the host's time inside the calls, about the copies' own time. */
Test(findings, pageable_copies_that_overlapped_kernels_are_said_to_have)
{
    cp_metrics m;
    analyse("torch-pageable", "step", &m);
    const cp_finding *f = finding(&m, "cuda_memcpy_async");
    cr_assert_not_null(f, "cuda_memcpy_async not raised on 20 pageable copies");
    cr_expect_eq(f->count, 20); /* 5 steps of 4 copies */
    cr_assert_gt(m.pageable_async_ns, 0);
    double share = (double)m.pageable_async_overlap_ns / (double)m.pageable_async_ns;
    cr_expect_gt(share, 0.5, "kernels overlapped %.3f of the pageable copies", share);
    /* The copies' share of overlap is the metric the same range reports. */
    cr_expect_gt(m.copy_kernel_overlap_ratio, 0.5);
    /* Every copy's call is in the trace, and the host sat in it about as
     * long as the copy ran (staging waits for the copy engine). */
    cr_expect_eq(m.pageable_async_calls, 20);
    cr_expect_gt(m.pageable_async_call_ns, m.pageable_async_ns / 2, "%llu ns in the calls",
                 (unsigned long long)m.pageable_async_call_ns);
    cr_expect_null(strstr(f->message, "cannot overlap"), "%s", f->message);
    char want[64];
    cr_expect_not_null(strstr(f->message, "20 asynchronous copies"), "%s", f->message);
    snprintf(want, sizeof want, "overlapped %.0f%%", 100 * share);
    cr_expect_not_null(strstr(f->message, want), "no '%s' in: %s", want, f->message);
    cr_expect_not_null(strstr(f->message, "inside their calls"), "%s", f->message);
    cp_metrics_free(&m);
}

/* The same program from pinned tensors: no finding (the control). */
Test(findings, pinned_copies_raise_no_pageable_finding)
{
    cp_metrics m;
    analyse("torch-pinned", "step", &m);
    cr_expect_gt(m.copies, 0);
    cr_expect_null(finding(&m, "cuda_memcpy_async"), "%s",
                   finding(&m, "cuda_memcpy_async")->message);
    cr_expect_eq(m.pageable_async_ns, 0);
    cp_metrics_free(&m);
}

/* A chain of kernels alternating between two streams, each waiting for the
 * one before by an event: never two at once, by the program's own order.
 * The old rule fired here (kernels on 2 streams, peak 1); the finding must
 * not, neither for the chain run as it is nor captured into a graph. */
Test(findings, kernels_ordered_by_events_or_a_graph_are_not_serialised_streams)
{
    const char *names[] = {"graph-chain-events", "graph-chain"};
    for (size_t i = 0; i < 2; i++) {
        cp_metrics m;
        analyse(names[i], NULL, &m);
        cr_expect_eq(m.peak_concurrent_kernels, 1, "%s", names[i]);
        cr_expect_eq(m.kernels, 24, "%s", names[i]);
        cr_expect_null(finding(&m, "serialized_streams"), "%s: %s", names[i],
                       finding(&m, "serialized_streams")->message);
        if (i == 0) /* the precondition the old rule fired on */
            cr_expect_geq(lanes_with(&m, true), 2, "%s", names[i]);
        else /* every kernel a graph node's */
            cr_expect_eq(lanes_with(&m, true), 0, "%s", names[i]);
        cp_metrics_free(&m);
    }
}

/* Independent kernels on two streams run two at once; under
 * CUDA_LAUNCH_BLOCKING=1 one at a time, with nothing of the program's
 * own ordering them: the finding is raised there, and only there. */
Test(findings, independent_kernels_one_at_a_time_are_serialised_streams)
{
    cp_metrics m;
    analyse("graph-independent", NULL, &m);
    cr_expect_eq(m.peak_concurrent_kernels, 2);
    cr_expect_null(finding(&m, "serialized_streams"));
    cp_metrics_free(&m);

    analyse("graph-independent-blocking", NULL, &m);
    cr_expect_eq(m.peak_concurrent_kernels, 1);
    const cp_finding *f = finding(&m, "serialized_streams");
    cr_assert_not_null(f, "serialized_streams not raised under CUDA_LAUNCH_BLOCKING=1");
    cr_expect_eq(f->count, 2);
    cr_expect_not_null(strstr(f->message, "launched on 2 streams"), "%s", f->message);
    cr_expect_not_null(strstr(f->message, "no event wait"), "%s", f->message);
    cp_metrics_free(&m);
}

/* The match of copies with their calls keeps only the halves still
 * waiting: 100000 copies with their calls, in either order, leave a
 * table of a few slots, and only the pageable asynchronous copies' calls
 * count (the streaming analysis's memory must not grow with the copies). */
Test(findings, the_call_match_keeps_only_the_halves_waiting)
{
    copy_counts c = {0};
    cp_metrics m;
    memset(&m, 0, sizeof m);
    cp_lane lane = {0};
    uint32_t pageable_async = 0;
    for (uint32_t i = 1; i <= 100000; i++) {
        cp_activity call = {.kind = CP_ACT_RUNTIME, .start = 0, .end = 10, .correlation = i,
                            .name = "cudaMemcpyAsync_v3020"};
        cp_activity copy = {.kind = CP_ACT_MEMCPY, .start = 0, .end = 5, .correlation = i,
                            .copy_dir = CP_COPY_HTOD, .dst = CP_MEM_DEVICE,
                            .src = i % 4 == 1 ? CP_MEM_PAGEABLE : CP_MEM_PINNED,
                            .async = i % 2 == 1};
        pageable_async += i % 4 == 1;
        if (i % 3 == 0) { /* the copy's record first, now and then */
            cr_assert_eq(cp__count_activity(&m, &lane, NULL, &copy, copy.end, &c), 0);
            cr_assert_eq(cp__count_host(&c, &call), 0);
        } else {
            cr_assert_eq(cp__count_host(&c, &call), 0);
            cr_assert_eq(cp__count_activity(&m, &lane, NULL, &copy, copy.end, &c), 0);
        }
    }
    cr_expect_eq(c.async_pageable, pageable_async);
    cr_expect_eq(c.calls_matched, pageable_async);
    cr_expect_eq(c.calls_ns, 10ull * pageable_async);
    cr_expect_leq(c.cap, 256, "the table grew to %zu slots", c.cap);
    /* A call whose copy never comes stays, and only it. */
    cp_activity lone = {.kind = CP_ACT_RUNTIME, .end = 7, .correlation = 200001,
                        .name = "cudaMemcpy_v3020"};
    cr_assert_eq(cp__count_host(&c, &lone), 0);
    size_t waiting = 0;
    for (size_t i = 0; i < c.cap; i++)
        waiting += c.slots[i].process1 && c.slots[i].state != 3;
    cr_expect_eq(waiting, 1);
    cp__copy_counts_free(&c);
}
