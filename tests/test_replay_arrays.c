/*
 * The seed-004 cases (run-time compilation and array operations) and
 * context-sync replayed from their H100 traces (ci profile): the launch
 * shapes their GPU tests assert, the copies that must and must not be
 * there, and the copy/kernel ordering, read back with no GPU. The zero-copy
 * control that copies was recorded on the GPU too, and its copy is seen.
 */
#include <cuproof/internal/tracefile.h>
#include "replay.h"

#include <criterion/criterion.h>
#include <string.h>

static cp_trace_file f;

static void unload(void)
{
    cp_trace_file_free(&f);
}

/* How many (expectation, variant) pairs of case `name` held on the loaded
 * recording, its variants analysed with the default options. */
static size_t expectations_held(const char *name)
{
    return replay_expectations_analysed(&f, NULL, name);
}

static void load_unroll(void)
{
    replay_load(&f, "rtc-unroll");
}

TestSuite(replay_rtc_unroll, .init = load_unroll, .fini = unload);

/* ci: 2,000,000 floats in blocks of 256 threads, each doing `factor`
 * elements, so ceil(n / (256 * factor)) blocks; no factor's launch has
 * another factor's grid. */
Test(replay_rtc_unroll, each_factor_ran_with_its_grid)
{
    const char *variants[] = {"unroll-1", "unroll-2", "unroll-4", "unroll-8", "unroll-16"};
    const unsigned grids[] = {7813, 3907, 1954, 977, 489};
    for (int i = 0; i < 5; i++) {
        const cp_trace *t = replay_variant(&f, variants[i]);
        const cp_activity *k;
        cr_expect_eq(replay_kernels(t, &k), 1, "%s", variants[i]);
        cr_expect_str_eq(k->name, "scale_unroll");
        cr_expect(replay_shape_is(k, grids[i], 1, 1, 256, 1, 1), "%s: grid %u", variants[i],
                  k->grid[0]);
        if (i > 0)
            cr_expect_not(replay_shape_is(k, grids[i - 1], 1, 1, 256, 1, 1));
        uint64_t bytes;
        cr_expect_eq(replay_copies(t, CP_COPY_DTOH, &bytes), 1);
        cr_expect_eq(bytes, 8000000, "the result, 2M floats");
    }
}

static void load_custom(void)
{
    replay_load(&f, "custom-elementwise");
}

TestSuite(replay_custom_elementwise, .init = load_custom, .fini = unload);

/* The generated kernels ran under their generated names, one thread per
 * element (10,000 and 100,000 elements in blocks of 256). */
Test(replay_custom_elementwise, generated_kernels_ran_by_name)
{
    const cp_activity *k;
    cr_expect_eq(replay_kernels(replay_variant(&f, "leaky-relu"), &k), 1);
    cr_expect_str_eq(k->name, "leaky_relu");
    cr_expect(replay_shape_is(k, 40, 1, 1, 256, 1, 1));
    cr_expect_eq(replay_kernels(replay_variant(&f, "piecewise-scale"), &k), 1);
    cr_expect_str_eq(k->name, "piecewise_scale");
    cr_expect(replay_shape_is(k, 391, 1, 1, 256, 1, 1));
}

static void load_broadcast(void)
{
    replay_load(&f, "broadcast");
}

TestSuite(replay_broadcast, .init = load_broadcast, .fini = unload);

/* One kernel per broadcast and only the result copied back (the case's
 * expectations): the vector is read where it lies, never expanded and
 * copied. The analysis counts a copy that is added to the trace, and the
 * expectations then fail. */
Test(replay_broadcast, one_kernel_and_only_the_result_copied)
{
    const char *variants[] = {"matrix-row", "tensor-last-dim"};
    const char *names[] = {"broadcast_add_ker", "broadcast_mul3_ker"};
    const uint64_t result[] = {512 * 128 * 4, 32 * 64 * 128 * 4};
    cr_expect_eq(expectations_held("broadcast"), 4);
    for (int i = 0; i < 2; i++) {
        cp_trace *t = replay_variant(&f, variants[i]);
        const cp_activity *k;
        replay_kernels(t, &k);
        cr_assert_not_null(k, "%s: no kernel", variants[i]);
        cr_expect_str_eq(k->name, names[i]);
        uint64_t bytes;
        cr_expect_eq(replay_copies(t, CP_COPY_DTOH, &bytes), 1);
        cr_expect_eq(bytes, result[i]);
    }
    /* The control: the same trace with its result copy duplicated as a
     * host-to-device copy of the vector counts two copies. */
    cp_trace *t = replay_variant(&f, "matrix-row");
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].kind == CP_ACT_MEMCPY) {
            cp_activity vector = t->items[i];
            vector.copy_dir = CP_COPY_HTOD;
            vector.bytes = 128 * 4;
            cr_assert_eq(cp_trace_add(t, &vector), 0);
            break;
        }
    cp_metrics m;
    cr_assert_eq(cp_timeline_analyse(t, NULL, &m), 0);
    cr_expect_eq(m.copies, 2, "the added copy must be counted");
    cr_expect_eq(replay_expectations_fail_on(&m, "broadcast", "matrix-row"), 1,
                 "copies == 1 fails, kernels == 1 still holds");
    cp_metrics_free(&m);
}

static void load_indexing(void)
{
    replay_load(&f, "indexing");
}

TestSuite(replay_indexing, .init = load_indexing, .fini = unload);

/* Compaction reads back the count (4 bytes) and then exactly the selected
 * elements: 523,792 of 1M above 0.5, none for the empty mask (only the
 * count), all of them for the full one. */
Test(replay_indexing, compaction_copies_what_it_selected)
{
    const char *variants[] = {"mask-select", "mask-empty", "mask-all"};
    const size_t copies[] = {2, 1, 2};
    const uint64_t bytes[] = {4 + 523792 * 4, 4, 4 + 1048576 * 4};
    for (int i = 0; i < 3; i++) {
        const cp_trace *t = replay_variant(&f, variants[i]);
        const cp_activity *k;
        cr_expect_eq(replay_kernels(t, &k), 2, "%s: CUB's init and select kernels", variants[i]);
        uint64_t b;
        cr_expect_eq(replay_copies(t, CP_COPY_DTOH, &b), copies[i], "%s", variants[i]);
        cr_expect_eq(b, bytes[i], "%s: %llu bytes", variants[i], (unsigned long long)b);
    }
}

/* Centring is two kernels in one stream, the means before their use. */
Test(replay_indexing, column_means_come_before_centring)
{
    const cp_trace *t = replay_variant(&f, "centre");
    const cp_activity *means = NULL, *centre = NULL;
    for (size_t i = 0; i < t->n; i++) {
        if (t->items[i].kind != CP_ACT_KERNEL)
            continue;
        if (strcmp(t->items[i].name, "column_means_ker") == 0)
            means = &t->items[i];
        if (strcmp(t->items[i].name, "centre_ker") == 0)
            centre = &t->items[i];
    }
    cr_assert(means && centre);
    cr_expect_leq(means->end, centre->start);
    const cp_activity *k;
    cr_expect_eq(replay_kernels(replay_variant(&f, "gather"), &k), 1);
    cr_expect(replay_shape_is(k, 391, 1, 1, 256, 1, 1), "100,003 index pairs");
}

static void load_interop(void)
{
    replay_load(&f, "zero-copy-interop");
}

TestSuite(replay_zero_copy, .init = load_interop, .fini = unload);

/* Across the two APIs a pointer is all that passes: no device-to-device
 * copy, one kernel (the case's expectation: the driver-loaded NVRTC kernel
 * on runtime memory, the runtime kernel on driver memory). The recorded
 * control shows its copy. */
Test(replay_zero_copy, no_copy_between_the_apis_and_the_control_copies)
{
    uint64_t bytes;
    const cp_activity *k;
    cr_expect_eq(expectations_held("zero-copy-interop"), 2);
    const cp_trace *t = replay_variant(&f, "runtime-to-driver");
    cr_expect_eq(replay_copies(t, CP_COPY_DTOD, &bytes), 0);
    replay_kernels(t, &k);
    cr_assert_not_null(k);
    cr_expect_str_eq(k->name, "scale_unroll");
    t = replay_variant(&f, "driver-to-runtime");
    cr_expect_eq(replay_copies(t, CP_COPY_DTOD, &bytes), 0);
    replay_kernels(t, &k);
    cr_assert_not_null(k);
    cr_expect_str_eq(k->name, "scale_ker");
    t = replay_variant(&f, "copying");
    cr_expect_eq(replay_copies(t, CP_COPY_DTOD, &bytes), 1, "the control's copy");
    cr_expect_eq(bytes, 10000 * 4);
}

static void load_context_sync(void)
{
    replay_load(&f, "context-sync");
}

TestSuite(replay_context_sync, .init = load_context_sync, .fini = unload);

/* Copy in, kernel, copy out, each after the last with no overlap (the
 * case's expectation), in both variants; the analysis finds the overlap
 * when the kernel is moved to start before the copy in ended, and the
 * expectation fails. */
Test(replay_context_sync, copy_kernel_copy_in_order)
{
    const char *variants[] = {"context-sync", "stream-ordered"};
    cr_expect_eq(expectations_held("context-sync"), 2);
    for (int i = 0; i < 2; i++) {
        cp_trace *t = replay_variant(&f, variants[i]);
        const cp_activity *in = NULL, *out = NULL, *k = NULL;
        for (size_t j = 0; j < t->n; j++) {
            if (t->items[j].kind == CP_ACT_MEMCPY && t->items[j].copy_dir == CP_COPY_HTOD)
                in = &t->items[j];
            if (t->items[j].kind == CP_ACT_MEMCPY && t->items[j].copy_dir == CP_COPY_DTOH)
                out = &t->items[j];
        }
        cr_expect_eq(replay_kernels(t, &k), 1);
        cr_assert(in && out && k, "%s: a copy in, a kernel and a copy out", variants[i]);
        cr_expect_leq(in->end, k->start);
        cr_expect_leq(k->end, out->start);
        cp_activity *moved = (cp_activity *)k;
        moved->start = in->end - 1000;
        cp_metrics m;
        cr_assert_eq(cp_timeline_analyse(t, NULL, &m), 0);
        cr_expect_eq(m.copy_kernel_overlap_ns, 1000, "%s: the moved kernel overlaps",
                     variants[i]);
        cr_expect_eq(replay_expectations_fail_on(&m, "context-sync", variants[i]), 1);
        cp_metrics_free(&m);
    }
}

static void load_multi_gpu(void)
{
    replay_load_file(&f, "multi-gpu-h200x2-ci.trace.json", "H200");
}

TestSuite(replay_multi_gpu, .init = load_multi_gpu, .fini = unload);

/* Kernels per device in a trace: [0] and [1]. */
static void kernels_per_device(const cp_trace *t, size_t per[2])
{
    per[0] = per[1] = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].kind == CP_ACT_KERNEL && t->items[i].device < 2)
            per[t->items[i].device]++;
}

/* Recorded on two H200s (ci: 64 arrays): all-gpus has 32 kernels on each
 * GPU and both busy for most of the span; in-turn has the same split and
 * never two at once (the case's expectation); one-gpu one device. Moving
 * in-turn's second GPU back onto the first's time gives it multi-device
 * time: the expectation can fail. */
Test(replay_multi_gpu, devices_work_at_once_only_when_issued_together)
{
    size_t per[2];
    cp_metrics m;
    cr_expect_eq(expectations_held("multi-gpu"), 1);
    cp_trace *t = replay_variant(&f, "all-gpus");
    kernels_per_device(t, per);
    cr_expect(per[0] == 32 && per[1] == 32, "%zu and %zu kernels", per[0], per[1]);
    cr_assert_eq(cp_timeline_analyse(t, NULL, &m), 0);
    cr_expect_eq(m.devices, 2);
    cr_expect_geq((double)m.multi_device_ns, 0.5 * (double)m.span_ns, "%llu of %llu ns",
                  (unsigned long long)m.multi_device_ns, (unsigned long long)m.span_ns);
    cp_metrics_free(&m);

    cr_assert_eq(cp_timeline_analyse(replay_variant(&f, "one-gpu"), NULL, &m), 0);
    cr_expect_eq(m.devices, 1);
    cr_expect_eq(m.multi_device_ns, 0);
    cp_metrics_free(&m);

    t = replay_variant(&f, "in-turn");
    kernels_per_device(t, per);
    cr_expect(per[0] == 32 && per[1] == 32);
    cr_assert_eq(cp_timeline_analyse(t, NULL, &m), 0);
    cr_expect_eq(m.devices, 2);
    cp_metrics_free(&m);
    uint64_t first0 = UINT64_MAX, first1 = UINT64_MAX;
    for (size_t i = 0; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (!cp_activity_is_device_work(a))
            continue;
        uint64_t *first = a->device == 0 ? &first0 : &first1;
        if (a->start < *first)
            *first = a->start;
    }
    cr_assert(first0 < first1);
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].device == 1 && cp_activity_is_device_work(&t->items[i])) {
            t->items[i].start -= first1 - first0;
            t->items[i].end -= first1 - first0;
        }
    cr_assert_eq(cp_timeline_analyse(t, NULL, &m), 0);
    cr_expect_eq(replay_expectations_fail_on(&m, "multi-gpu", "in-turn"), 1,
                 "the moved GPU now works beside the other");
    cp_metrics_free(&m);
}
