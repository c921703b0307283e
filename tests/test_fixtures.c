/*
 * Traces recorded on real GPUs (tests/fixtures/), replayed through the
 * analysis on a machine with none. The verdicts must be those the GPU test
 * asserts: pinned streams overlap copies with kernels and run kernels
 * concurrently, sync does neither, pageable streams are flagged, the legacy
 * default stream serialises where the per-thread one does not, and the
 * serialised control fails the checks the streamed variant passes.
 */
#include <cuproof/internal/tracefile.h>
#include <cuproof/error.h>
#include <cuproof/metrics.h>

#include "replay.h"

#include <criterion/criterion.h>
#include <string.h>

static cp_trace_file f;
static cp_metrics m[16]; /* the fixture has 8 variants; load() checks */

/* The H100 (compute capability 9.0) runs up to 128 kernels at once. */
static const cp_timeline_opts h100 = {.max_concurrent_kernels = 128};

static void load(void)
{
    memset(m, 0, sizeof m);
    cr_assert_eq(cp_trace_file_read(CUPROOF_FIXTURES "/multi-kernel-h100.trace.json", &f), 0,
                 "%s", cp_last_error());
    cr_assert_leq(f.nvariants, sizeof m / sizeof m[0]);
    for (size_t i = 0; i < f.nvariants; i++)
        cr_assert_eq(cp_timeline_analyse(&f.variants[i].trace, &h100, &m[i]), 0);
}

static void unload(void)
{
    for (size_t i = 0; i < f.nvariants; i++)
        cp_metrics_free(&m[i]);
    cp_trace_file_free(&f);
}

static const cp_metrics *variant(const char *name)
{
    for (size_t i = 0; i < f.nvariants; i++)
        if (strcmp(f.variants[i].name, name) == 0)
            return &m[i];
    cr_assert_fail("variant %s not in the fixture", name);
    return NULL;
}

TestSuite(fixtures, .init = load, .fini = unload);

Test(fixtures, recorded_on_an_h100_with_every_kernel)
{
    cr_expect_str_eq(f.case_name, "multi-kernel");
    cr_expect_not_null(strstr(f.device, "H100"), "%s", f.device);
    cr_assert_eq(f.nvariants, 8);
    for (size_t i = 0; i < f.nvariants; i++) {
        cr_expect_eq(f.variants[i].trace.dropped_records, 0);
        cr_expect_gt(m[i].kernels, 1);
        cr_expect_eq(m[i].kernels, m[0].kernels, "each variant launches every kernel");
        cr_expect_eq(m[i].copies, 2 * m[i].kernels, "one copy in and one out per kernel");
        cr_expect_leq(m[i].ideal_ns, m[i].span_ns, "%s: the ideal is a lower bound", f.variants[i].name);
    }
}

/* The case's own expectations (multi-kernel's .expect), not a copy of
 * its thresholds: every one holds on the H100's recording. */
Test(fixtures, the_cases_expectations_hold_on_the_recording)
{
    cr_expect_eq(replay_expectations(&f, m, "multi-kernel"), 15);
}

Test(fixtures, pinned_streams_overlap)
{
    const cp_metrics *p = variant("streams-pinned");
    cr_expect_eq(p->pageable_copies, 0);
    cr_expect_null(cp_metrics_finding(p, "serialized_streams"));
    cr_expect_gt(p->nlanes, 1, "one lane per stream");
}

Test(fixtures, pageable_streams_flagged)
{
    const cp_metrics *g = variant("streams-pageable");
    const cp_finding *fd = cp_metrics_finding(g, "cuda_memcpy_async");
    cr_assert_not_null(fd);
    cr_expect_eq(fd->count, g->pageable_copies);
}

/* The NVTX phases were recorded on CUPTI's clock: they lie inside the
 * device activity's neighbourhood rather than on another clock. The graph
 * variant has none: its run is one call, cudaGraphLaunch. */
Test(fixtures, host_ranges_share_the_clock)
{
    for (size_t i = 0; i < f.nvariants; i++) {
        if (strcmp(f.variants[i].name, "graph") == 0)
            continue;
        uint64_t first = UINT64_MAX, range_start = UINT64_MAX;
        int ranges = 0;
        for (size_t k = 0; k < f.variants[i].trace.n; k++) {
            const cp_activity *a = &f.variants[i].trace.items[k];
            if (a->kind == CP_ACT_RANGE) {
                ranges++;
                if (a->start < range_start)
                    range_start = a->start;
            } else if (a->kind != CP_ACT_RUNTIME && a->start < first) {
                first = a->start;
            }
        }
        cr_expect_geq(ranges, 3, "copy-in, compute and copy-out ranges");
        /* The copy-in range opens before the first copy, by less than a second. */
        cr_expect_leq(range_start, first);
        cr_expect_lt(first - range_start, 1000000000ull);
    }
}

/* The negative control: the serialised variant's trace fails the
 * expectations that streams-pinned passes (overlap ratio and concurrency:
 * its copies are pinned, so only no finding cuda_memcpy_async holds). */
Test(fixtures, serialised_control_fails_the_overlap_checks)
{
    const cp_metrics *se = variant("serialised");
    cr_expect_eq(replay_expectations_fail_on(variant("streams-pinned"), "multi-kernel",
                                             "streams-pinned"),
                 0);
    cr_expect_eq(replay_expectations_fail_on(se, "multi-kernel", "streams-pinned"), 2);
    const cp_finding *fd = cp_metrics_finding(se, "serialized_streams");
    cr_assert_not_null(fd);
    cr_expect_eq(fd->count, 200);
}

/* The graph's own expectations fail on the serialised control's metrics
 * (concurrency and overlap), and only the graph's records carry graph ids:
 * its checks can fail. */
Test(fixtures, graph_checks_fail_on_the_serialised_control)
{
    cr_expect_eq(replay_expectations_fail_on(variant("graph"), "multi-kernel", "graph"), 0);
    cr_expect_eq(replay_expectations_fail_on(variant("serialised"), "multi-kernel", "graph"), 2);
    for (size_t i = 0; i < f.nvariants; i++) {
        size_t tagged = 0, work = 0;
        for (size_t k = 0; k < f.variants[i].trace.n; k++) {
            const cp_activity *a = &f.variants[i].trace.items[k];
            work += a->kind == CP_ACT_KERNEL || a->kind == CP_ACT_MEMCPY;
            tagged += a->graph_id != 0;
        }
        bool graph = strcmp(f.variants[i].name, "graph") == 0;
        cr_expect_eq(tagged, graph ? work : 0, "%s: %zu of %zu tagged", f.variants[i].name,
                     tagged, work);
    }
}

Test(fixtures, legacy_default_stream_serialises)
{
    cr_expect_not_null(cp_metrics_finding(variant("legacy-default-stream"),
                                          "default_stream_serialization"));
    cr_expect_null(cp_metrics_finding(variant("per-thread-default-stream"),
                                      "default_stream_serialization"));
    cr_expect_null(cp_metrics_finding(variant("streams-pinned"), "default_stream_serialization"));
    cr_expect_null(cp_metrics_finding(variant("sync"), "default_stream_serialization"),
                   "a program all on the legacy stream is not flagged");
}

/* Depth-first issue on the H100: at least half the ideal, and a shorter
 * span than the source's breadth-first order. */
Test(fixtures, depth_first_is_efficient)
{
    const cp_metrics *df = variant("depth-first");
    const cp_metrics *bf = variant("streams-pinned");
    cr_expect_geq(df->efficiency, 0.5, "efficiency %.3f", df->efficiency);
    cr_expect_lt(df->span_ns, bf->span_ns);
    cr_expect_gt(df->peak_concurrent_kernels, 1);
    cr_expect_eq(df->concurrency_limit, 128);
    cr_expect_leq(df->ideal_ns, df->span_ns, "the ideal is a lower bound");
}
