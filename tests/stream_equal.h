/* The streaming analysis held to the whole-trace one: the same trace fed
 * one activity at a time, in its order and reversed, with chunks so small
 * that it spills and merges runs and with one chunk that holds it all,
 * must give every metric, lane, graph and finding the whole-trace
 * analysis gave. */
#ifndef CUPROOF_TEST_STREAM_EQUAL_H
#define CUPROOF_TEST_STREAM_EQUAL_H

#include <cuproof/metrics.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static inline void expect_same_metrics(const cp_metrics *a, const cp_metrics *b, const char *how)
{
    size_t n = 0;
    const cp_metric_def *defs = cp_metric_defs(&n);
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(cp_metric_value(a, &defs[i]), cp_metric_value(b, &defs[i]),
                     "%s: %s: %.17g against %.17g", how, defs[i].name,
                     cp_metric_value(a, &defs[i]), cp_metric_value(b, &defs[i]));
    cr_expect_str_eq(a->bound, b->bound, "%s: bound", how);
    cr_assert_eq(a->nlanes, b->nlanes, "%s: lanes", how);
    for (size_t i = 0; i < a->nlanes; i++)
        cr_expect(memcmp(&a->lanes[i], &b->lanes[i], sizeof a->lanes[i]) == 0,
                  "%s: lane %zu (stream %u busy %llu against stream %u busy %llu)", how, i,
                  a->lanes[i].stream, (unsigned long long)a->lanes[i].busy_ns,
                  b->lanes[i].stream, (unsigned long long)b->lanes[i].busy_ns);
    cr_assert_eq(a->ngraphs, b->ngraphs, "%s: graphs", how);
    for (size_t i = 0; i < a->ngraphs; i++)
        cr_expect(memcmp(&a->graphs[i], &b->graphs[i], sizeof a->graphs[i]) == 0,
                  "%s: graph %zu", how, i);
    cr_assert_eq(a->devices, b->devices, "%s: devices", how);
    for (uint32_t i = 0; a->device_metrics && i < a->devices; i++) {
        const cp_device_metrics *x = &a->device_metrics[i], *y = &b->device_metrics[i];
        cr_assert_not_null(b->device_metrics, "%s: per-device metrics", how);
        size_t nd = 0;
        const cp_metric_def *dd = cp_device_metric_defs(&nd);
        for (size_t k = 0; k < nd; k++)
            cr_expect_eq(cp_device_metric_value(x, &dd[k]), cp_device_metric_value(y, &dd[k]),
                         "%s: device %u's %s: %.17g against %.17g", how, x->device, dd[k].name,
                         cp_device_metric_value(x, &dd[k]), cp_device_metric_value(y, &dd[k]));
        cr_expect_str_eq(x->bound, y->bound, "%s: device %u's bound", how, x->device);
    }
    cr_assert_eq(a->nkernel_stats, b->nkernel_stats, "%s: distinct kernels", how);
    for (size_t i = 0; i < a->nkernel_stats; i++) {
        const cp_kernel_stat *x = &a->kernel_stats[i], *y = &b->kernel_stats[i];
        cr_expect_str_eq(x->name, y->name, "%s: kernel %zu", how, i);
        cr_expect(x->cls == y->cls && x->count == y->count && x->total_ns == y->total_ns &&
                      x->min_ns == y->min_ns && x->max_ns == y->max_ns,
                  "%s: kernel %s's breakdown differs", how, x->name);
    }
    /* cuda_memcpy_async's evidence, which no metric of the map holds. */
    cr_expect(a->pageable_async_ns == b->pageable_async_ns &&
                  a->pageable_async_overlap_ns == b->pageable_async_overlap_ns &&
                  a->pageable_async_calls == b->pageable_async_calls &&
                  a->pageable_async_call_ns == b->pageable_async_call_ns,
              "%s: the pageable copies' evidence differs", how);
    cr_assert_eq(a->nfindings, b->nfindings, "%s: findings", how);
    for (size_t i = 0; i < a->nfindings; i++) {
        cr_expect_str_eq(a->findings[i].name, b->findings[i].name, "%s", how);
        cr_expect_eq(a->findings[i].count, b->findings[i].count, "%s: %s", how,
                     a->findings[i].name);
        cr_expect_str_eq(a->findings[i].message, b->findings[i].message, "%s", how);
    }
}

static inline void expect_stream_equal(const cp_trace *t, const cp_timeline_opts *o,
                                       const cp_metrics *want)
{
    static const size_t chunks[] = {1, 3, 0};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++)
        for (int reversed = 0; reversed < 2; reversed++) {
            cp_stream_opts so = {.chunk_records = chunks[c]};
            if (o)
                so.timeline = *o;
            cp_stream *s;
            cr_assert_eq(cp_stream_new(&s, &so), 0);
            if (t->has_legacy_stream)
                cp_stream_set_legacy(s, t->legacy_device, t->legacy_context, t->legacy_stream);
            for (size_t i = 0; i < t->n; i++)
                cr_assert_eq(cp_stream_add(s, &t->items[reversed ? t->n - 1 - i : i]), 0);
            cp_metrics got;
            cr_assert_eq(cp_stream_finish(s, &got), 0);
            char how[64];
            snprintf(how, sizeof how, "streamed, chunks of %zu%s (%zu runs)", chunks[c],
                     reversed ? ", reversed" : "", cp_stream_runs(s));
            expect_same_metrics(want, &got, how);
            cp_metrics_free(&got);
            cp_stream_free(s);
        }
}

#endif
