/*
 * The chapter-3 cases replayed from traces recorded on an H100
 * (tests/fixtures/, the CASE-h100-ci traces): the launch shapes, kernel counts
 * and kernel durations that their GPU tests assert, read back from the
 * trace files on a machine with no GPU, with controls that fail.
 */
#include <cuproof/internal/tracefile.h>
#include "replay.h"

#include <criterion/criterion.h>
#include <string.h>

static cp_trace_file f;

static void load(const char *name)
{
    replay_load(&f, name);
}

static const cp_trace *trace_of(const char *variant)
{
    return replay_variant(&f, variant);
}

static size_t kernels(const char *variant, const cp_activity **last)
{
    return replay_kernels(trace_of(variant), last);
}

/* The last kernel of a variant's trace; asserts that there is one. */
static const cp_activity *last_kernel(const char *variant)
{
    const cp_activity *k;
    kernels(variant, &k);
    cr_assert_not_null(k, "%s: no kernel in the trace", variant);
    return k;
}

/* How many (expectation, variant) pairs of case `name` held on the loaded
 * recording, its variants analysed with the default options. */
static size_t expectations_held(const char *name)
{
    return replay_expectations_analysed(&f, NULL, name);
}

static void unload(void)
{
    cp_trace_file_free(&f);
}

static void load_grid(void)
{
    load("grid-model");
}

TestSuite(replay_grid, .init = load_grid, .fini = unload);

/* ceil(n / block) per dimension for the ci sizes, edge blocks included;
 * a shape one block short in any dimension is not accepted. */
Test(replay_grid, launch_shapes_are_the_models)
{
    const cp_activity *k;
    cr_expect_eq(kernels("1d", &k), 1);
    cr_expect(replay_shape_is(k, 391, 1, 1, 256, 1, 1), "1d: 100003 / 256 rounds up to 391");
    cr_expect_not(replay_shape_is(k, 390, 1, 1, 256, 1, 1));
    cr_expect_eq(kernels("2d", &k), 1);
    cr_expect(replay_shape_is(k, 63, 49, 1, 16, 16, 1), "2d: 1000 x 777 in 16 x 16 blocks");
    cr_expect_eq(kernels("3d", &k), 1);
    cr_expect(replay_shape_is(k, 13, 5, 6, 8, 8, 4), "3d: 100 x 37 x 21 in 8 x 8 x 4 blocks");
    cr_expect_not(replay_shape_is(k, 13, 5, 5, 8, 8, 4));
}

static void load_elementwise(void)
{
    load("elementwise-vs-handwritten");
}

TestSuite(replay_elementwise, .init = load_elementwise, .fini = unload);

/* Each variant ran its own kernel once (the case's expectation); the
 * generated one by its generated name, with the capped grid of a
 * grid-stride loop. */
Test(replay_elementwise, each_variant_ran_its_kernel)
{
    cr_expect_eq(expectations_held("elementwise-vs-handwritten"), 3);
    const cp_activity *k = last_kernel("hand-written");
    cr_expect_str_eq(k->name, "add_ker");
    cr_expect(replay_shape_is(k, 3907, 1, 1, 256, 1, 1), "ceil(1000000 / 256) blocks");
    k = last_kernel("generated");
    cr_expect_str_eq(k->name, "add_kernel");
    cr_expect_eq(k->grid[0], 8 * 132, "grid capped at 8 blocks per SM");
    k = last_kernel("source-kernel");
    cr_expect_str_eq(k->name, "add_source_ker");
    /* Not 200x apart: the kernels' own durations are within a few times. */
    const cp_activity *h, *g;
    kernels("hand-written", &h);
    kernels("generated", &g);
    double ratio = (double)(g->end - g->start) / (double)(h->end - h->start);
    cr_expect(ratio > 0.2 && ratio < 5, "generated / hand-written = %.2f", ratio);
}

static void load_mandelbrot(void)
{
    load("mandelbrot");
}

TestSuite(replay_mandelbrot, .init = load_mandelbrot, .fini = unload);

/* One kernel each (the case's expectation), named for its rounding. */
Test(replay_mandelbrot, one_kernel_each_in_16_by_16_blocks)
{
    cr_expect_eq(expectations_held("mandelbrot"), 2);
    const cp_activity *k = last_kernel("contracted");
    cr_expect_str_eq(k->name, "mandelbrot_ker");
    cr_expect(replay_shape_is(k, 16, 16, 1, 16, 16, 1), "256 x 256 pixels");
    k = last_kernel("exact");
    cr_expect_str_eq(k->name, "mandelbrot_exact_ker");
}

static void load_global(void)
{
    load("conway-global");
}

TestSuite(replay_conway_global, .init = load_global, .fini = unload);

/* One launch per generation, as many copies back, buffers alternating. */
Test(replay_conway_global, one_launch_and_one_copy_per_generation)
{
    const char *variants[] = {"128", "1024", "patterns"};
    const size_t generations[] = {100, 5, 256};
    const unsigned grid[] = {4, 32, 2};
    for (int i = 0; i < 3; i++) {
        const cp_activity *k;
        cr_expect_eq(kernels(variants[i], &k), generations[i], "%s", variants[i]);
        cr_expect(replay_shape_is(k, grid[i], grid[i], 1, 32, 32, 1), "%s: 32 x 32 blocks", variants[i]);
        cp_metrics m;
        cr_assert_eq(cp_timeline_analyse(trace_of(variants[i]), NULL, &m), 0);
        cr_expect_eq(m.copies, generations[i], "%s: each generation copied back", variants[i]);
        cr_expect_eq(m.peak_concurrent_kernels, 1, "generations run in order");
        cp_metrics_free(&m);
    }
}

static void load_block(void)
{
    load("conway-shared");
}

TestSuite(replay_conway_block, .init = load_block, .fini = unload);

/* One launch (the cases' expectation) of one 32 x 32 block each; the
 * shared-memory kernel's CUPTI duration is the shorter, as the claim's
 * figure says. */
Test(replay_conway_block, one_block_and_shared_is_faster)
{
    cr_expect_eq(expectations_held("conway-shared"), 2);
    const cp_activity *s = last_kernel("shared"), *g = last_kernel("global");
    cr_expect_str_eq(s->name, "conway_shared_ker");
    cr_expect(replay_shape_is(s, 1, 1, 1, 32, 32, 1));
    cr_expect_str_eq(g->name, "conway_sync_ker");
    uint64_t global_ns = g->end - g->start;
    cr_expect_lt(s->end - s->start, global_ns);
    cp_trace_file_free(&f);
    load("conway-block-sync");
    cr_expect_eq(expectations_held("conway-block-sync"), 1);
    const cp_activity *b = last_kernel("global");
    cr_expect_str_eq(b->name, "conway_sync_ker");
    cr_expect(replay_shape_is(b, 1, 1, 1, 32, 32, 1));
    /* The same kernel in the two cases takes about the same time. */
    double ratio = (double)(b->end - b->start) / (double)global_ns;
    cr_expect(ratio > 0.8 && ratio < 1.25, "block-sync / shared case's global = %.3f", ratio);
}
