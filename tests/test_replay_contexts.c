/*
 * host-threads replayed from its H100 trace (full profile): with a context
 * per host thread, T threads give T contexts, each its own lane; with one
 * context and a stream per thread, one context and T stream lanes. The
 * analysis keys lanes by (device, context, stream); a trace with the
 * context ids erased must fail the per-context check.
 */
#include <cuproof/internal/tracefile.h>
#include "replay.h"

#include <criterion/criterion.h>

static cp_trace_file f;

static void load(void)
{
    replay_load_file(&f, "host-threads-h100.trace.json", "H100");
}

static void unload(void)
{
    cp_trace_file_free(&f);
}

/* Distinct contexts among a trace's kernels, and its kernel lanes. */
static void count(const cp_trace *t, size_t *contexts, size_t *kernel_lanes)
{
    cp_metrics m;
    cr_assert_eq(cp_timeline_analyse(t, NULL, &m), 0);
    uint32_t seen[64];
    size_t nc = 0, lanes = 0;
    for (size_t i = 0; i < m.nlanes; i++) {
        if (m.lanes[i].kernels == 0)
            continue;
        lanes++;
        bool known = false;
        for (size_t k = 0; k < nc; k++)
            known = known || seen[k] == m.lanes[i].context;
        if (!known && nc < 64)
            seen[nc++] = m.lanes[i].context;
    }
    cp_metrics_free(&m);
    *contexts = nc;
    *kernel_lanes = lanes;
}

TestSuite(replay_host_threads, .init = load, .fini = unload);

Test(replay_host_threads, a_context_per_thread_is_a_lane_per_context)
{
    const size_t threads[] = {1, 2, 4, 8, 10, 16, 32};
    cr_assert_eq(f.nvariants, 14);
    for (size_t i = 0; i < 7; i++) {
        size_t contexts, lanes;
        count(&f.variants[i].trace, &contexts, &lanes);
        cr_expect_eq(contexts, threads[i], "%s: %zu contexts", f.variants[i].name, contexts);
        cr_expect_eq(lanes, threads[i], "%s: %zu lanes", f.variants[i].name, lanes);
        count(&f.variants[7 + i].trace, &contexts, &lanes);
        cr_expect_eq(contexts, 1, "%s: one shared context", f.variants[7 + i].name);
        cr_expect_eq(lanes, threads[i], "%s: a stream lane per thread", f.variants[7 + i].name);
    }
}

/* The control: with every context id set to one value, the contexts-32
 * trace fails the per-context check that it passed. (CUPTI's stream ids
 * did not repeat across these contexts, so its 32 lanes stay apart.) */
Test(replay_host_threads, erasing_contexts_fails_the_check)
{
    cp_trace *t = &f.variants[6].trace;
    cr_assert_str_eq(f.variants[6].name, "contexts-32");
    size_t contexts, lanes;
    count(t, &contexts, &lanes);
    cr_assert_eq(contexts, 32);
    for (size_t i = 0; i < t->n; i++)
        t->items[i].context = 1;
    count(t, &contexts, &lanes);
    cr_expect_neq(contexts, 32, "the per-context check must fail");
    cr_expect_eq(contexts, 1);
}
