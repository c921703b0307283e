/* The timeline analysis on hand-built intervals, each with its answer
 * worked out by hand in the comment above it. */
#include <cuproof/metrics.h>
#include "helpers.h"
#include "stream_equal.h"

#include <criterion/criterion.h>
#include <stdlib.h>

static cp_trace t;
static cp_metrics m;

static void setup(void)
{
    cp_trace_init(&t);
}

static void teardown(void)
{
    cp_metrics_free(&m);
    cp_trace_free(&t);
}

/* Every trace here is analysed both ways, and the two must agree. */
static void analyse(void)
{
    cr_assert_eq(cp_timeline_analyse(&t, NULL, &m), 0);
    expect_stream_equal(&t, NULL, &m);
}

TestSuite(timeline, .init = setup, .fini = teardown);

Test(timeline, empty_trace)
{
    analyse();
    cr_expect_eq(m.span_ns, 0);
    cr_expect_eq(m.nlanes, 0);
    cr_expect_eq(m.peak_concurrent_kernels, 0);
    cr_expect_eq(m.copy_kernel_overlap_ratio, 0.0);
    cr_expect_eq(m.nfindings, 0);
}

/* Runtime calls and host ranges are not device work: no span, no lanes. */
Test(timeline, host_records_are_not_device_work)
{
    cp_activity api = {.kind = CP_ACT_RUNTIME, .start = 0, .end = 100, .name = "cudaMemcpy"};
    cp_activity range = {.kind = CP_ACT_RANGE, .start = 0, .end = 100, .name = "compute"};
    cp_trace_add(&t, &api);
    cp_trace_add(&t, &range);
    analyse();
    cr_expect_eq(m.span_ns, 0);
    cr_expect_eq(m.nlanes, 0);
}

/* One stream, kernel [0,100), copy [100,150), kernel [200,300): touching
 * intervals do not overlap; a 50 ns gap. */
Test(timeline, one_stream_sequential)
{
    add_kernel(&t, 0, 100, 1, 7);
    add_copy(&t, 100, 150, 1, 7, CP_COPY_DTOH, CP_MEM_PINNED, true);
    add_kernel(&t, 200, 300, 1, 7);
    analyse();
    cr_expect_eq(m.span_ns, 300);
    cr_expect_eq(m.kernel_busy_ns, 200);
    cr_expect_eq(m.copy_busy_ns, 50);
    cr_expect_eq(m.copy_kernel_overlap_ns, 0);
    cr_expect_eq(m.copy_kernel_overlap_ratio, 0.0);
    cr_expect_eq(m.peak_concurrent_kernels, 1);
    cr_expect_float_eq(m.mean_concurrent_kernels, 1.0, 1e-12);
    cr_expect_eq(m.idle_ns, 50);
    cr_expect_eq(m.largest_gap_ns, 50);
    cr_assert_eq(m.nlanes, 1);
    cr_expect_eq(m.lanes[0].busy_ns, 250);
    cr_expect_eq(m.lanes[0].kernels, 2);
    cr_expect_eq(m.lanes[0].copies, 1);
    cr_expect_null(cp_metrics_finding(&m, "serialized_streams"));
}

/* Kernels [0,100) and [50,150) on two streams; copy [25,75) on a third:
 * overlap of copy with kernels 50 of 50 ns; peak 2 during [50,100). */
Test(timeline, concurrent_kernels_and_overlap)
{
    add_kernel(&t, 0, 100, 1, 1);
    add_kernel(&t, 50, 150, 1, 2);
    add_copy(&t, 25, 75, 1, 3, CP_COPY_HTOD, CP_MEM_PINNED, true);
    analyse();
    cr_expect_eq(m.span_ns, 150);
    cr_expect_eq(m.kernel_busy_ns, 150);
    cr_expect_eq(m.copy_kernel_overlap_ns, 50);
    cr_expect_float_eq(m.copy_kernel_overlap_ratio, 1.0, 1e-12);
    cr_expect_eq(m.peak_concurrent_kernels, 2);
    /* 1 kernel for 50 ns, 2 for 50 ns, 1 for 50 ns: mean 200/150. */
    cr_expect_float_eq(m.mean_concurrent_kernels, 200.0 / 150.0, 1e-12);
    cr_expect_eq(m.idle_ns, 0);
    cr_expect_eq(m.nlanes, 3);
}

/* Equal timestamps: two kernels starting and ending together run
 * concurrently for their whole length. */
Test(timeline, equal_timestamps)
{
    add_kernel(&t, 10, 20, 1, 1);
    add_kernel(&t, 10, 20, 1, 2);
    analyse();
    cr_expect_eq(m.peak_concurrent_kernels, 2);
    cr_expect_eq(m.kernel_busy_ns, 10);
    cr_expect_eq(m.span_ns, 10);
    cr_expect_float_eq(m.mean_concurrent_kernels, 2.0, 1e-12);
}

/* Touching: [0,10) then [10,20) on two streams never run together. */
Test(timeline, touching_intervals_do_not_overlap)
{
    add_kernel(&t, 0, 10, 1, 1);
    add_kernel(&t, 10, 20, 1, 2);
    analyse();
    cr_expect_eq(m.peak_concurrent_kernels, 1);
    cr_expect_eq(m.kernel_busy_ns, 20);
    cr_expect_eq(m.idle_ns, 0);
    /* Two streams with kernels and peak 1: the streams were serialised. */
    const cp_finding *f = cp_metrics_finding(&m, "serialized_streams");
    cr_assert_not_null(f);
    cr_expect_eq(f->count, 2);
}

/* Zero-length intervals add no busy time and no concurrency, even inside
 * another kernel or at its edges. */
Test(timeline, zero_length_intervals)
{
    add_kernel(&t, 0, 100, 1, 1);
    add_kernel(&t, 50, 50, 1, 2);
    add_kernel(&t, 100, 100, 1, 1);
    add_copy(&t, 30, 30, 1, 3, CP_COPY_HTOD, CP_MEM_PINNED, true);
    analyse();
    cr_expect_eq(m.peak_concurrent_kernels, 1);
    cr_expect_eq(m.kernel_busy_ns, 100);
    cr_expect_eq(m.copy_busy_ns, 0);
    cr_expect_eq(m.copy_kernel_overlap_ratio, 0.0);
    cr_expect_eq(m.kernels, 3);
    cr_assert_eq(m.nlanes, 3);
    cr_expect_eq(m.lanes[0].busy_ns, 100); /* stream 1 */
    cr_expect_eq(m.lanes[1].busy_ns, 0);   /* stream 2: only the empty kernel */
}

/* Nested: [0,100) contains [20,30) on the same stream (as overlapping
 * records can) and [40,60) on another: the lane's busy time is the union. */
Test(timeline, nested_intervals)
{
    add_kernel(&t, 0, 100, 1, 1);
    add_kernel(&t, 20, 30, 1, 1);
    add_kernel(&t, 40, 60, 1, 2);
    analyse();
    cr_expect_eq(m.kernel_busy_ns, 100);
    cr_expect_eq(m.peak_concurrent_kernels, 2);
    cr_assert_eq(m.nlanes, 2);
    cr_expect_eq(m.lanes[0].busy_ns, 100);
    cr_expect_eq(m.lanes[1].busy_ns, 20);
}

/* Stream ids repeat across contexts: (ctx 1, stream 7) and (ctx 2,
 * stream 7) are two lanes, and their kernels do run concurrently. */
Test(timeline, same_stream_id_in_two_contexts)
{
    add_kernel(&t, 0, 100, 1, 7);
    add_kernel(&t, 0, 100, 2, 7);
    analyse();
    cr_assert_eq(m.nlanes, 2);
    cr_expect_eq(m.lanes[0].context, 1);
    cr_expect_eq(m.lanes[1].context, 2);
    cr_expect_eq(m.lanes[0].stream, 7);
    cr_expect_eq(m.lanes[1].stream, 7);
    cr_expect_eq(m.peak_concurrent_kernels, 2);
}

/* Devices too: (dev 0, ctx 1, s 1) and (dev 1, ctx 1, s 1) are apart. */
Test(timeline, same_ids_on_two_devices)
{
    cp_activity a = {.kind = CP_ACT_KERNEL, .start = 0, .end = 10, .device = 0, .context = 1,
                     .stream = 1};
    cp_trace_add(&t, &a);
    a.device = 1;
    cp_trace_add(&t, &a);
    analyse();
    cr_expect_eq(m.nlanes, 2);
    cr_expect_eq(m.devices, 2);
    cr_expect_eq(m.multi_device_ns, 10);
}

/* Time with work on more than one device: device 0 busy [0,100) on two
 * streams, device 1 [60,150) and, after a gap, [200,210) touching nothing;
 * 40 ns with both. Two streams of one device are not two devices, and a
 * zero-length record opens no device. */
Test(timeline, multi_device_time)
{
    cp_activity a = {.kind = CP_ACT_KERNEL, .start = 0, .end = 100, .device = 0, .context = 1,
                     .stream = 1};
    cp_trace_add(&t, &a);
    a.stream = 2;
    a.start = 10;
    a.end = 90;
    cp_trace_add(&t, &a);
    a = (cp_activity){.kind = CP_ACT_KERNEL, .start = 60, .end = 150, .device = 1, .context = 2,
                      .stream = 1};
    cp_trace_add(&t, &a);
    a.start = a.end = 95; /* zero length, while device 0 is still busy */
    cp_trace_add(&t, &a);
    a.start = 200;
    a.end = 210;
    cp_trace_add(&t, &a);
    a = (cp_activity){.kind = CP_ACT_KERNEL, .start = 205, .end = 205, .device = 0, .context = 1,
                      .stream = 1};
    cp_trace_add(&t, &a);
    analyse();
    cr_expect_eq(m.devices, 2);
    cr_expect_eq(m.multi_device_ns, 40);
    cp_metrics_free(&m);
    /* One device, two streams overlapping: no multi-device time. */
    cp_trace_clear(&t);
    add_kernel(&t, 0, 100, 1, 1);
    add_kernel(&t, 50, 150, 1, 2);
    analyse();
    cr_expect_eq(m.devices, 1);
    cr_expect_eq(m.multi_device_ns, 0);
}

/* Copies in both directions: HtoD [0,100), DtoH [50,120): 50 ns of
 * both at once; no kernel, so the overlap ratio is 0. */
Test(timeline, h2d_d2h_overlap)
{
    add_copy(&t, 0, 100, 1, 1, CP_COPY_HTOD, CP_MEM_PINNED, true);
    add_copy(&t, 50, 120, 1, 2, CP_COPY_DTOH, CP_MEM_PINNED, true);
    analyse();
    cr_expect_eq(m.h2d_d2h_overlap_ns, 50);
    cr_expect_eq(m.copy_busy_ns, 120);
    cr_expect_eq(m.copy_kernel_overlap_ns, 0);
    cr_expect_eq(m.copy_kernel_overlap_ratio, 0.0);
}

/* Only a part of the copy time overlaps kernels: copy [0,100), kernel
 * [60,200): ratio 40/100. */
Test(timeline, partial_overlap_ratio)
{
    add_copy(&t, 0, 100, 1, 1, CP_COPY_HTOD, CP_MEM_PINNED, true);
    add_kernel(&t, 60, 200, 1, 2);
    analyse();
    cr_expect_eq(m.copy_kernel_overlap_ns, 40);
    cr_expect_float_eq(m.copy_kernel_overlap_ratio, 0.4, 1e-12);
}

/* Gaps: activity [0,10), [30,40), [100,110): idle 20 + 60, largest 60. */
Test(timeline, gaps)
{
    add_kernel(&t, 0, 10, 1, 1);
    add_copy(&t, 30, 40, 1, 1, CP_COPY_HTOD, CP_MEM_PINNED, false);
    cp_activity ms = {.kind = CP_ACT_MEMSET, .start = 100, .end = 110, .context = 1,
                      .stream = 1, .bytes = 64};
    cp_trace_add(&t, &ms);
    analyse();
    cr_expect_eq(m.span_ns, 110);
    cr_expect_eq(m.idle_ns, 80);
    cr_expect_eq(m.largest_gap_ns, 60);
    cr_expect_eq(m.memsets, 1);
    cr_expect_eq(m.lanes[0].memsets, 1);
}

/* cuda_memcpy_async: raised for asynchronous copies from pageable memory
 * only; a synchronous pageable copy is counted but not flagged. */
Test(timeline, cuda_memcpy_async_finding)
{
    add_copy(&t, 0, 10, 1, 1, CP_COPY_HTOD, CP_MEM_PAGEABLE, true);
    add_copy(&t, 20, 30, 1, 2, CP_COPY_DTOH, CP_MEM_PAGEABLE, true);
    add_copy(&t, 40, 50, 1, 0, CP_COPY_HTOD, CP_MEM_PAGEABLE, false);
    add_copy(&t, 60, 70, 1, 3, CP_COPY_HTOD, CP_MEM_PINNED, true);
    analyse();
    cr_expect_eq(m.pageable_copies, 3);
    const cp_finding *f = cp_metrics_finding(&m, "cuda_memcpy_async");
    cr_assert_not_null(f);
    cr_expect_eq(f->count, 2);
}

Test(timeline, no_finding_for_pinned_async_copies)
{
    add_copy(&t, 0, 10, 1, 1, CP_COPY_HTOD, CP_MEM_PINNED, true);
    add_kernel(&t, 5, 20, 1, 1);
    analyse();
    cr_expect_null(cp_metrics_finding(&m, "cuda_memcpy_async"));
    cr_expect_eq(m.pageable_copies, 0);
}

/* A record whose end precedes its start (clock trouble) counts as empty
 * rather than as a huge interval. */
Test(timeline, reversed_record_is_empty)
{
    add_kernel(&t, 100, 50, 1, 1);
    add_kernel(&t, 0, 10, 1, 1);
    analyse();
    cr_expect_eq(m.kernel_busy_ns, 10);
    cr_expect_eq(m.span_ns, 100);
}

/* Many streams in a staircase: kernel k runs [k*10, k*10 + 100); with 50
 * kernels the peak is 10 and the analysis stays exact. */
Test(timeline, staircase_many_streams)
{
    for (uint32_t k = 0; k < 50; k++)
        add_kernel(&t, k * 10, k * 10 + 100, 1, k + 1);
    analyse();
    cr_expect_eq(m.peak_concurrent_kernels, 10);
    cr_expect_eq(m.nlanes, 50);
    cr_expect_eq(m.kernel_busy_ns, 590);
    cr_expect_float_eq(m.mean_concurrent_kernels, 5000.0 / 590.0, 1e-9);
}

Test(timeline, enum_names_round_trip)
{
    for (int k = 0; k < CP_ACT_KIND_COUNT; k++)
        cr_expect_eq(cp_act_kind_from_name(cp_act_kind_name((cp_act_kind)k)), k);
    for (int d = 0; d < CP_COPY_DIR_COUNT; d++)
        cr_expect_eq(cp_copy_dir_from_name(cp_copy_dir_name((cp_copy_dir)d)), d);
    for (int mk = 0; mk < CP_MEM_KIND_COUNT; mk++)
        cr_expect_eq(cp_mem_kind_from_name(cp_mem_kind_name((cp_mem_kind)mk)), mk);
    cr_expect_eq(cp_act_kind_from_name("bogus"), -1);
    cr_expect_str_eq(cp_copy_dir_name((cp_copy_dir)99), "unknown");
}

Test(timeline, names_are_interned)
{
    cp_activity a = {.kind = CP_ACT_KERNEL, .start = 0, .end = 1, .name = "mult_ker"};
    for (int i = 0; i < 100; i++)
        cp_trace_add(&t, &a);
    cr_expect_eq(t.nnames, 1);
    cr_expect_eq(t.items[0].name, t.items[99].name);
    cr_expect_str_eq(t.items[50].name, "mult_ker");
}

/* Launch names from the harness win over CUPTI's: correlation 7 was
 * launched as add_kernel but CUPTI called it leaky_relu (as seen on the
 * H100); 8 is already right; 9 has no launch name; a copy with
 * correlation 7 keeps its name. */
Test(timeline, launch_names_correct_kernel_names)
{
    cp_activity k7 = {.kind = CP_ACT_KERNEL, .correlation = 7, .end = 1, .name = "leaky_relu"};
    cp_activity k8 = {.kind = CP_ACT_KERNEL, .correlation = 8, .end = 1, .name = "scale"};
    cp_activity k9 = {.kind = CP_ACT_KERNEL, .correlation = 9, .end = 1, .name = "mult_ker"};
    cp_activity c7 = {.kind = CP_ACT_MEMCPY, .correlation = 7, .end = 1, .name = "memcpy"};
    cp_trace_add(&t, &k7);
    cp_trace_add(&t, &k8);
    cp_trace_add(&t, &k9);
    cp_trace_add(&t, &c7);
    cp_launch_name launches[] = {{8, "scale"}, {7, "add_kernel"}, {11, "other"}};
    cr_expect_eq(cp_trace_name_launches(&t, launches, 3), 1);
    cr_expect_str_eq(t.items[0].name, "add_kernel");
    cr_expect_str_eq(t.items[1].name, "scale");
    cr_expect_str_eq(t.items[2].name, "mult_ker");
    cr_expect_str_eq(t.items[3].name, "memcpy");
    cr_expect_eq(t.renamed_kernels, 1);
    cr_expect_eq(cp_trace_name_launches(&t, launches, 3), 0, "a second pass changes nothing");
    cr_expect_eq(t.renamed_kernels, 1);
    cp_trace_clear(&t);
    cr_expect_eq(t.renamed_kernels, 0);
}

static void analyse_with(uint32_t limit, uint64_t gap_ns)
{
    cp_timeline_opts o = {.max_concurrent_kernels = limit, .gap_threshold_ns = gap_ns};
    cr_assert_eq(cp_timeline_analyse(&t, &o, &m), 0);
    expect_stream_equal(&t, &o, &m);
}

/* Ideal time: H2D copies 30+30, D2H 20, kernels 4 x 100 over a limit of
 * 2 = 200: kernels bound it; the last kernel ends at 310 and the copy out
 * at 330, so the efficiency is 200/330. */
Test(timeline, ideal_time_bound_by_kernels)
{
    add_copy(&t, 0, 30, 1, 1, CP_COPY_HTOD, CP_MEM_PINNED, true);
    add_copy(&t, 30, 60, 1, 2, CP_COPY_HTOD, CP_MEM_PINNED, true);
    for (uint32_t k = 0; k < 4; k++)
        add_kernel(&t, 60 + 50 * k, 160 + 50 * k, 1, k + 1);
    add_copy(&t, 310, 330, 1, 4, CP_COPY_DTOH, CP_MEM_PINNED, true);
    analyse_with(2, 0);
    cr_expect_eq(m.h2d_sum_ns, 60);
    cr_expect_eq(m.d2h_sum_ns, 20);
    cr_expect_eq(m.kernel_sum_ns, 400);
    cr_expect_eq(m.concurrency_limit, 2);
    cr_expect_eq(m.ideal_ns, 200);
    cr_expect_str_eq(m.bound, "kernels");
    cr_expect_eq(m.span_ns, 330);
    cr_expect_float_eq(m.efficiency, 200.0 / 330.0, 1e-12);
}

/* With a limit of 128 the same kernels weigh 3 ns: the H2D copies bound
 * it (60); with no limit given, the measured peak (2) stands in. */
Test(timeline, ideal_time_bound_by_copies_and_default_limit)
{
    add_copy(&t, 0, 30, 1, 1, CP_COPY_HTOD, CP_MEM_PINNED, true);
    add_copy(&t, 30, 60, 1, 2, CP_COPY_HTOD, CP_MEM_PINNED, true);
    add_kernel(&t, 60, 160, 1, 1);
    add_kernel(&t, 60, 160, 1, 2);
    analyse_with(128, 0);
    cr_expect_eq(m.ideal_ns, 60);
    cr_expect_str_eq(m.bound, "h2d copies");
    cp_metrics_free(&m);
    cr_assert_eq(cp_timeline_analyse(&t, NULL, &m), 0);
    cr_expect_eq(m.concurrency_limit, 2);
    cr_expect_eq(m.ideal_ns, 100);
    cr_expect_str_eq(m.bound, "kernels");
}

Test(timeline, ideal_time_bound_by_d2h)
{
    add_kernel(&t, 0, 10, 1, 1);
    add_copy(&t, 10, 110, 1, 1, CP_COPY_DTOH, CP_MEM_PINNED, true);
    analyse_with(128, 0);
    cr_expect_eq(m.ideal_ns, 100);
    cr_expect_str_eq(m.bound, "d2h copies");
    cr_expect_float_eq(m.efficiency, 100.0 / 110.0, 1e-12);
}

Test(timeline, concurrency_limits_by_compute_capability)
{
    cr_expect_eq(cp_max_concurrent_kernels(9, 0), 128);
    cr_expect_eq(cp_max_concurrent_kernels(7, 5), 128);
    cr_expect_eq(cp_max_concurrent_kernels(6, 0), 128);
    cr_expect_eq(cp_max_concurrent_kernels(6, 2), 32);
    cr_expect_eq(cp_max_concurrent_kernels(3, 5), 16);
}

/* gpu_gaps: gaps of 50 and 200 ns with a 100 ns threshold: one reported. */
Test(timeline, gpu_gaps_over_threshold)
{
    add_kernel(&t, 0, 10, 1, 1);
    add_kernel(&t, 60, 70, 1, 1);
    add_kernel(&t, 270, 280, 1, 1);
    analyse_with(0, 100);
    cr_expect_eq(m.gaps_over_threshold, 1);
    const cp_finding *f = cp_metrics_finding(&m, "gpu_gaps");
    cr_assert_not_null(f);
    cr_expect_eq(f->count, 1);
    cp_metrics_free(&m);
    analyse_with(0, 500);
    cr_expect_null(cp_metrics_finding(&m, "gpu_gaps"), "no gap exceeds 500 ns");
    cp_metrics_free(&m);
    cr_assert_eq(cp_timeline_analyse(&t, NULL, &m), 0);
    cr_expect_eq(m.gap_threshold_ns, 1000000, "the default threshold is 1 ms");
}

/* cuda_memcpy_sync: a blocking copy where work spans several streams;
 * not in a single-stream program, where blocking copies are the design. */
Test(timeline, cuda_memcpy_sync_only_when_streamed)
{
    add_copy(&t, 0, 10, 1, 7, CP_COPY_HTOD, CP_MEM_PINNED, false);
    add_kernel(&t, 10, 20, 1, 7);
    analyse();
    cr_expect_null(cp_metrics_finding(&m, "cuda_memcpy_sync"));
    cp_metrics_free(&m);
    add_kernel(&t, 10, 20, 1, 8);
    analyse();
    const cp_finding *f = cp_metrics_finding(&m, "cuda_memcpy_sync");
    cr_assert_not_null(f);
    cr_expect_eq(f->count, 1);
}

static void set_legacy(uint32_t stream)
{
    t.has_legacy_stream = true;
    t.legacy_context = 1;
    t.legacy_stream = stream;
}

/* Streams 1 and 2 work, the legacy stream (7) runs alone between them:
 * flagged once. */
Test(timeline, default_stream_serialization_flagged)
{
    set_legacy(7);
    add_kernel(&t, 0, 100, 1, 1);
    add_kernel(&t, 0, 100, 1, 2);
    cp_activity ms = {.kind = CP_ACT_MEMSET, .start = 100, .end = 105, .context = 1,
                      .stream = 7};
    cp_trace_add(&t, &ms);
    add_kernel(&t, 105, 200, 1, 1);
    add_kernel(&t, 105, 200, 1, 2);
    analyse();
    const cp_finding *f = cp_metrics_finding(&m, "default_stream_serialization");
    cr_assert_not_null(f);
    cr_expect_eq(f->count, 1);
}

/* The same program with the memset on another stream (the per-thread
 * default stream), overlapping the kernels: not flagged. So is a memset on
 * the legacy stream that overlaps other work, and a legacy-only program. */
Test(timeline, default_stream_serialization_negative_controls)
{
    set_legacy(7);
    add_kernel(&t, 0, 100, 1, 1);
    add_kernel(&t, 0, 200, 1, 2);
    cp_activity ms = {.kind = CP_ACT_MEMSET, .start = 100, .end = 105, .context = 1,
                      .stream = 9};
    cp_trace_add(&t, &ms);
    add_kernel(&t, 105, 200, 1, 1);
    analyse();
    cr_expect_null(cp_metrics_finding(&m, "default_stream_serialization"), "not legacy");
    cp_metrics_free(&m);

    t.items[2].stream = 7; /* on the legacy stream, but stream 2 still runs */
    analyse();
    cr_expect_null(cp_metrics_finding(&m, "default_stream_serialization"), "overlapped");
    cp_metrics_free(&m);

    cp_trace_clear(&t);
    set_legacy(7);
    add_kernel(&t, 0, 10, 1, 7);
    add_kernel(&t, 20, 30, 1, 7);
    analyse();
    cr_expect_null(cp_metrics_finding(&m, "default_stream_serialization"), "legacy only");
    cp_metrics_free(&m);

    t.has_legacy_stream = false; /* unknown lane: never guess */
    add_kernel(&t, 0, 5, 1, 1);
    add_kernel(&t, 40, 50, 1, 1);
    analyse();
    cr_expect_null(cp_metrics_finding(&m, "default_stream_serialization"));
    cp_metrics_free(&m);

    /* A reversed legacy record is empty at its start, here inside another
     * stream's work: not alone (fuzz_rec found the whole-trace rule reading
     * its end as given, where the sweep took it as empty). */
    cp_trace_clear(&t);
    set_legacy(7);
    add_kernel(&t, 20, 100, 1, 1);
    cp_activity reversed = {.kind = CP_ACT_KERNEL, .start = 50, .end = 10, .context = 1,
                            .stream = 7};
    cp_trace_add(&t, &reversed);
    add_kernel(&t, 200, 300, 1, 7);
    analyse();
    cr_expect_null(cp_metrics_finding(&m, "default_stream_serialization"), "reversed, inside");
}

/* Graph-launched work: graph 7 launched twice (correlations 100 and 200)
 * and graph 9 once, in two streams. Graph 7's first launch is two kernels
 * [0,100) and [50,150) and a copy [150,170); its second one kernel
 * [400,500). Graph 9's kernel [120,300) overlaps graph 7. Union of graph
 * work: [0,300) + [400,500) = 400 ns; graph 7 alone: [0,170) + [400,500)
 * = 270 ns; graph 9: 180 ns. A kernel outside any graph adds nothing. */
Test(timeline, graph_launches_and_busy_time)
{
    struct {
        cp_act_kind kind;
        uint64_t s, e;
        uint32_t stream, graph, corr;
    } w[] = {{CP_ACT_KERNEL, 0, 100, 1, 7, 100},   {CP_ACT_KERNEL, 50, 150, 2, 7, 100},
             {CP_ACT_MEMCPY, 150, 170, 1, 7, 100}, {CP_ACT_KERNEL, 400, 500, 1, 7, 200},
             {CP_ACT_KERNEL, 120, 300, 2, 9, 300}, {CP_ACT_KERNEL, 600, 700, 1, 0, 400}};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        cp_activity a = {.kind = w[i].kind, .start = w[i].s, .end = w[i].e, .context = 1,
                         .stream = w[i].stream, .graph_id = w[i].graph,
                         .graph_node = w[i].graph ? i + 1 : 0, .correlation = w[i].corr,
                         .copy_dir = w[i].kind == CP_ACT_MEMCPY ? CP_COPY_DTOD : CP_COPY_UNKNOWN};
        cp_trace_add(&t, &a);
    }
    analyse();
    cr_expect_eq(m.graph_launches, 3);
    cr_expect_eq(m.graph_busy_ns, 400);
    cr_assert_eq(m.ngraphs, 2);
    cr_expect_eq(m.graphs[0].graph_id, 7);
    cr_expect_eq(m.graphs[0].launches, 2);
    cr_expect_eq(m.graphs[0].busy_ns, 270);
    cr_expect_eq(m.graphs[0].kernels, 3);
    cr_expect_eq(m.graphs[0].copies, 1);
    cr_expect_eq(m.graphs[1].graph_id, 9);
    cr_expect_eq(m.graphs[1].launches, 1);
    cr_expect_eq(m.graphs[1].busy_ns, 180);
    cr_expect_eq(m.kernel_busy_ns, 500); /* [0,300), [400,500), [600,700) */
}

/* The same graph id in two processes is two graphs. */
Test(timeline, graph_ids_repeat_across_processes)
{
    for (uint32_t p = 0; p < 2; p++) {
        cp_activity a = {.kind = CP_ACT_KERNEL, .start = 10 * p, .end = 10 * p + 5, .context = 1,
                         .stream = 1, .process = p, .graph_id = 3, .correlation = 5};
        cp_trace_add(&t, &a);
    }
    analyse();
    cr_expect_eq(m.ngraphs, 2);
    cr_expect_eq(m.graph_launches, 2);
    cr_expect_eq(m.graph_busy_ns, 10);
}

/* A kernel on (device, stream) over [s, e). */
static void dev_kernel(uint32_t device, uint32_t stream, uint64_t s, uint64_t e)
{
    cp_activity a = {.kind = CP_ACT_KERNEL, .start = s, .end = e, .device = device,
                     .context = device + 1, .stream = stream, .name = "k"};
    cr_assert_geq(cp_trace_add(&t, &a), 0);
}

static void dev_copy(uint32_t device, uint32_t stream, uint64_t s, uint64_t e)
{
    cp_activity a = {.kind = CP_ACT_MEMCPY, .start = s, .end = e, .device = device,
                     .context = device + 1, .stream = stream, .copy_dir = CP_COPY_HTOD,
                     .bytes = 4096, .async = true, .src = CP_MEM_PINNED, .dst = CP_MEM_DEVICE,
                     .name = "memcpy"};
    cr_assert_geq(cp_trace_add(&t, &a), 0);
}

/* Concurrency is per device: two kernels at once on GPU 0 and two on GPU
 * 1, all four over [0,100), are at most 2 kernels at once, not 4; the
 * mirror image (the devices swapped) gives the same; both devices busy
 * the whole time count 200 ns of kernel device-time, and the time on
 * several devices is the 100 ns they shared. */
Test(timeline, concurrency_is_per_device)
{
    for (int mirror = 0; mirror < 2; mirror++) {
        cp_metrics_free(&m);
        cp_trace_free(&t);
        cp_trace_init(&t);
        uint32_t a = (uint32_t)mirror, b = 1 - (uint32_t)mirror;
        dev_kernel(a, 1, 0, 100);
        dev_kernel(a, 2, 0, 100);
        dev_kernel(b, 1, 0, 100);
        dev_kernel(b, 2, 0, 100);
        analyse();
        cr_expect_eq(m.devices, 2);
        cr_expect_eq(m.peak_concurrent_kernels, 2, "mirror %d: per device, not 4 across", mirror);
        cr_expect_float_eq(m.mean_concurrent_kernels, 2.0, 1e-12);
        cr_expect_eq(m.kernel_busy_ns, 200, "device-time: 100 ns on each");
        cr_expect_eq(m.multi_device_ns, 100);
        cr_assert_not_null(m.device_metrics);
        for (int d = 0; d < 2; d++) {
            cr_expect_eq(m.device_metrics[d].device, (uint32_t)d);
            cr_expect_eq(m.device_metrics[d].peak_concurrent_kernels, 2);
            cr_expect_eq(m.device_metrics[d].kernel_busy_ns, 100);
        }
        cr_expect_null(cp_metrics_finding(&m, "serialized_streams"));
    }
}

/* Overlap is per device: a copy on GPU 1 [0,100) while only GPU 0 runs a
 * kernel [0,100) overlaps nothing (ratio 0, where a sweep over all devices
 * said 1.0); the mirror image the same; then a kernel on GPU 1 over
 * [50,100) gives that copy 50 of its 100 ns, ratio 0.5, all of it on GPU 1. */
Test(timeline, copy_kernel_overlap_is_per_device)
{
    for (int mirror = 0; mirror < 2; mirror++) {
        cp_metrics_free(&m);
        cp_trace_free(&t);
        cp_trace_init(&t);
        uint32_t k = (uint32_t)mirror, c = 1 - (uint32_t)mirror;
        dev_kernel(k, 1, 0, 100);
        dev_copy(c, 2, 0, 100);
        analyse();
        cr_expect_eq(m.copy_kernel_overlap_ns, 0, "mirror %d: a copy engine of one GPU and "
                                                  "an SM of another share nothing", mirror);
        cr_expect_eq(m.copy_kernel_overlap_ratio, 0.0);
        cr_expect_eq(m.device_metrics[c].copy_busy_ns, 100);
        cr_expect_eq(m.device_metrics[k].copy_busy_ns, 0);

        dev_kernel(c, 3, 50, 100);
        cp_metrics_free(&m);
        analyse();
        cr_expect_eq(m.copy_kernel_overlap_ns, 50);
        cr_expect_float_eq(m.copy_kernel_overlap_ratio, 0.5, 1e-12);
        cr_expect_eq(m.device_metrics[c].copy_kernel_overlap_ns, 50);
        cr_expect_float_eq(m.device_metrics[c].copy_kernel_overlap_ratio, 0.5, 1e-12);
        cr_expect_eq(m.device_metrics[k].copy_kernel_overlap_ns, 0);
    }
}

/* Idle time and gaps are per device, inside each device's own span: GPU 0
 * works [0,100) and [300,400) (a 200 ns gap), GPU 1 works [100,300) with
 * no gap. A sweep over all devices saw no idle time at all; per device,
 * GPU 0 sat idle 200 ns and GPU 1 never (its time before 100 and after
 * 300 is outside its span). The ideal time is the largest device's: GPU 0
 * and GPU 1 each need 200 ns of kernel time at one kernel at once. */
Test(timeline, idle_time_and_gaps_are_per_device)
{
    dev_kernel(0, 1, 0, 100);
    dev_kernel(0, 1, 300, 400);
    dev_kernel(1, 1, 100, 300);
    cp_timeline_opts o = {.max_concurrent_kernels = 1, .gap_threshold_ns = 150};
    cr_assert_eq(cp_timeline_analyse(&t, &o, &m), 0);
    expect_stream_equal(&t, &o, &m);
    cr_expect_eq(m.span_ns, 400);
    cr_expect_eq(m.idle_ns, 200);
    cr_expect_eq(m.largest_gap_ns, 200);
    cr_expect_eq(m.gaps_over_threshold, 1);
    cr_expect_not_null(cp_metrics_finding(&m, "gpu_gaps"));
    cr_expect_eq(m.device_metrics[0].idle_ns, 200);
    cr_expect_eq(m.device_metrics[0].span_ns, 400);
    cr_expect_eq(m.device_metrics[1].idle_ns, 0);
    cr_expect_eq(m.device_metrics[1].span_ns, 200);
    cr_expect_eq(m.ideal_ns, 200, "the largest device's, not the 400 ns summed over both");
    cr_expect_float_eq(m.efficiency, 0.5, 1e-12);
    cr_expect_float_eq(m.device_metrics[1].efficiency, 1.0, 1e-12);
}

/* ---- Communication against compute: per device, as HTA's
 * comm_comp_overlap, on the demangled name (cp_activity_class). ---- */

#define NCCL_MANGLED "_Z43ncclDevKernel_AllReduce_Sum_f32_RING_LLP128v"
#define NCCL_PLAIN "ncclKernel_AllReduce_RING_LL_Sum_float"
#define COMPUTE_MANGLED "_ZN2at6native29vectorized_elementwise_kernelILi4EEEvi"

static void named_kernel(uint32_t device, uint32_t stream, uint64_t s, uint64_t e,
                         const char *name)
{
    cp_activity a = {.kind = CP_ACT_KERNEL, .start = s, .end = e, .device = device,
                     .context = device + 1, .stream = stream, .name = name};
    cr_assert_geq(cp_trace_add(&t, &a), 0);
}

/* An NCCL kernel [20,80) wholly under a compute kernel [0,100): ratio 1,
 * nothing exposed; both the mangled ncclDevKernel and the plain C
 * ncclKernel name are communication, the mangled at::native one compute. */
Test(timeline, comm_fully_under_compute)
{
    const char *names[] = {NCCL_MANGLED, NCCL_PLAIN};
    for (int i = 0; i < 2; i++) {
        cp_metrics_free(&m);
        cp_trace_free(&t);
        cp_trace_init(&t);
        named_kernel(0, 1, 0, 100, COMPUTE_MANGLED);
        named_kernel(0, 2, 20, 80, names[i]);
        analyse();
        cr_expect_eq(m.comm_busy_ns, 60, "%s", names[i]);
        cr_expect_eq(m.comm_compute_overlap_ns, 60);
        cr_expect_float_eq(m.comm_compute_overlap_ratio, 1.0, 1e-12);
        cr_expect_eq(m.exposed_comm_ns, 0);
        cr_expect_float_eq(m.exposed_comm_share, 0.0, 1e-12);
        cr_expect_eq(m.kernel_busy_ns, 100, "communication kernels are still kernels");
    }
}

/* An NCCL kernel [50,150) half under a compute kernel [0,100): 50 of its
 * 100 ns overlap (ratio 0.5), 50 exposed over a 150 ns span (1/3). */
Test(timeline, comm_half_under_compute)
{
    named_kernel(0, 1, 0, 100, "gemm");
    named_kernel(0, 2, 50, 150, NCCL_MANGLED);
    analyse();
    cr_expect_eq(m.comm_busy_ns, 100);
    cr_expect_eq(m.comm_compute_overlap_ns, 50);
    cr_expect_float_eq(m.comm_compute_overlap_ratio, 0.5, 1e-12);
    cr_expect_eq(m.exposed_comm_ns, 50);
    cr_expect_float_eq(m.exposed_comm_share, 50.0 / 150.0, 1e-12);
    cr_expect_eq(m.device_metrics[0].exposed_comm_ns, 50);
}

/* Per device: an NCCL kernel on GPU 1 while only GPU 0 computes overlaps
 * nothing (ratio 0, all 100 ns exposed), in both mirror images; the share
 * is device-time over the devices' summed spans (100 / 200). */
Test(timeline, comm_overlap_is_per_device)
{
    for (int mirror = 0; mirror < 2; mirror++) {
        cp_metrics_free(&m);
        cp_trace_free(&t);
        cp_trace_init(&t);
        uint32_t c = (uint32_t)mirror, n = 1 - (uint32_t)mirror;
        named_kernel(c, 1, 0, 100, "gemm");
        named_kernel(n, 1, 0, 100, NCCL_PLAIN);
        analyse();
        cr_expect_eq(m.comm_busy_ns, 100, "mirror %d", mirror);
        cr_expect_eq(m.comm_compute_overlap_ns, 0, "mirror %d: another GPU's compute", mirror);
        cr_expect_eq(m.comm_compute_overlap_ratio, 0.0);
        cr_expect_eq(m.exposed_comm_ns, 100);
        cr_expect_float_eq(m.exposed_comm_share, 0.5, 1e-12);
        cr_expect_eq(m.device_metrics[n].comm_busy_ns, 100);
        cr_expect_float_eq(m.device_metrics[n].exposed_comm_share, 1.0, 1e-12);
        cr_expect_eq(m.device_metrics[c].comm_busy_ns, 0);
    }
}

/* Two NCCL kernels [0,100) and [50,150) overlap each other: communication
 * busy time is their union, 150, not 200; two communication kernels are
 * no compute for each other, so nothing overlaps and all is exposed. */
Test(timeline, comm_busy_is_a_union)
{
    named_kernel(0, 1, 0, 100, NCCL_MANGLED);
    named_kernel(0, 2, 50, 150, NCCL_PLAIN);
    analyse();
    cr_expect_eq(m.comm_busy_ns, 150);
    cr_expect_eq(m.comm_compute_overlap_ns, 0);
    cr_expect_eq(m.exposed_comm_ns, 150);
    cr_expect_float_eq(m.exposed_comm_share, 1.0, 1e-12);
}

/* Copies, memsets, API calls (synchronisation among them) and ranges are
 * never compute: a copy [0,100) and a cudaStreamSynchronize [0,100)
 * beside an NCCL kernel [0,100) leave it all exposed; no communication at
 * all gives ratio and share 0. */
Test(timeline, only_kernels_are_compute)
{
    dev_copy(0, 1, 0, 100);
    cp_activity sync = {.kind = CP_ACT_RUNTIME, .start = 0, .end = 100,
                        .name = "cudaStreamSynchronize"};
    cr_assert_geq(cp_trace_add(&t, &sync), 0);
    analyse();
    cr_expect_eq(m.comm_busy_ns, 0);
    cr_expect_eq(m.comm_compute_overlap_ratio, 0.0);
    cr_expect_eq(m.exposed_comm_share, 0.0);
    named_kernel(0, 2, 0, 100, NCCL_MANGLED);
    cp_metrics_free(&m);
    analyse();
    cr_expect_eq(m.comm_busy_ns, 100);
    cr_expect_eq(m.comm_compute_overlap_ns, 0);
    cr_expect_eq(m.exposed_comm_ns, 100);
}

/* The pattern is the user's: under "gloo" the NCCL kernel is compute and
 * the gloo one communication, in both analyses. */
Test(timeline, comm_pattern_overrides)
{
    named_kernel(0, 1, 0, 100, NCCL_MANGLED);
    named_kernel(0, 2, 50, 150, "_Z14gloo_allreducePf");
    cp_timeline_opts o = {.comm_pattern = "gloo"};
    cr_assert_eq(cp_timeline_analyse(&t, &o, &m), 0);
    expect_stream_equal(&t, &o, &m);
    cr_expect_eq(m.comm_busy_ns, 100);
    cr_expect_eq(m.comm_compute_overlap_ns, 50);
    cr_expect_float_eq(m.comm_compute_overlap_ratio, 0.5, 1e-12);
}

/* The kernel breakdown, per distinct name: "gemm" launched three times
 * (100, 300 and 200 ns) on two devices, an NCCL kernel twice (50 ns each),
 * two kernels of 70 ns each, and a copy, which is no kernel. Sorted by total device time; the class
 * under the pattern; both analyses alike (names met in other orders). */
Test(timeline, kernel_breakdown_per_name)
{
    named_kernel(0, 1, 0, 100, "gemm");
    named_kernel(1, 1, 0, 300, "gemm");
    named_kernel(0, 2, 100, 300, "gemm");
    named_kernel(0, 3, 0, 50, NCCL_MANGLED);
    named_kernel(0, 3, 60, 110, NCCL_MANGLED);
    dev_copy(0, 4, 0, 1000);
    /* A tie of totals is ordered by name, whatever order they came in. */
    named_kernel(0, 5, 0, 70, "tie_b");
    named_kernel(0, 5, 100, 170, "tie_a");
    analyse();
    cr_assert_eq(m.nkernel_stats, 4);
    cr_expect_str_eq(m.kernel_stats[2].name, "tie_a");
    cr_expect_str_eq(m.kernel_stats[3].name, "tie_b");
    const cp_kernel_stat *g = &m.kernel_stats[0], *n = &m.kernel_stats[1];
    cr_expect_str_eq(g->name, "gemm");
    cr_expect_eq(g->cls, CP_CLASS_COMPUTE);
    cr_expect_eq(g->count, 3);
    cr_expect_eq(g->total_ns, 600);
    cr_expect_eq(g->min_ns, 100);
    cr_expect_eq(g->max_ns, 300);
    cr_expect_str_eq(n->name, NCCL_MANGLED);
    cr_expect_eq(n->cls, CP_CLASS_COMMUNICATION);
    cr_expect_eq(n->count, 2);
    cr_expect_eq(n->total_ns, 100);
    cr_expect_eq(n->min_ns, 50);
    cr_expect_eq(n->max_ns, 50);
}
