/*
 * libFuzzer target: any bytes as a cuproof.rec file. The reader must
 * accept them, read them as truncated or refuse them with an error, never
 * crash; what it accepts goes through both analyses, the whole-trace one
 * and the streaming one with chunks of four (so that it spills and merges
 * runs), and the two must agree on every metric, lane, graph and finding:
 * a disagreement is a crash too.
 */
#include <cuproof/metrics.h>
#include <cuproof/internal/rec.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void agree(const cp_metrics *a, const cp_metrics *b)
{
    size_t n = 0;
    const cp_metric_def *defs = cp_metric_defs(&n);
    for (size_t i = 0; i < n; i++)
        if (cp_metric_value(a, &defs[i]) != cp_metric_value(b, &defs[i]))
            __builtin_trap();
    if (a->nlanes != b->nlanes || a->ngraphs != b->ngraphs || a->nfindings != b->nfindings ||
        strcmp(a->bound, b->bound) != 0)
        __builtin_trap();
    for (size_t i = 0; i < a->nlanes; i++)
        if (memcmp(&a->lanes[i], &b->lanes[i], sizeof a->lanes[i]) != 0)
            __builtin_trap();
    for (size_t i = 0; i < a->ngraphs; i++)
        if (memcmp(&a->graphs[i], &b->graphs[i], sizeof a->graphs[i]) != 0)
            __builtin_trap();
    for (size_t i = 0; i < a->nfindings; i++)
        if (strcmp(a->findings[i].message, b->findings[i].message) != 0)
            __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fmemopen((void *)data, size, "rb");
    if (!f)
        return 0;
    cp_rec_reader *r;
    if (cp_rec_reader_fopen(&r, f, "fuzz") < 0)
        return 0;
    cp_trace t;
    cp_trace_init(&t);
    cp_stream *s = NULL;
    cp_stream_opts o = {.chunk_records = 4};
    if (cp_stream_new(&s, &o) < 0) {
        cp_rec_reader_close(r);
        return 0;
    }
    cp_rec_item it;
    int rc;
    while ((rc = cp_rec_next(r, &it)) > 0) {
        if (it.type == CP_REC_ACTIVITY) {
            if (cp_trace_add(&t, &it.activity) < 0 || cp_stream_add(s, &it.activity) < 0)
                break;
        } else if (it.type == CP_REC_END && it.end.has_legacy_stream) {
            t.has_legacy_stream = true;
            t.legacy_device = it.end.legacy_device;
            t.legacy_context = it.end.legacy_context;
            t.legacy_stream = it.end.legacy_stream;
            cp_stream_set_legacy(s, t.legacy_device, t.legacy_context, t.legacy_stream);
        }
    }
    char why[256];
    if (rc == 0)
        cp_rec_truncated(r, why, sizeof why);
    cp_metrics whole, streamed;
    if (rc == 0 && cp_timeline_analyse(&t, NULL, &whole) == 0) {
        if (cp_stream_finish(s, &streamed) == 0) {
            agree(&whole, &streamed);
            cp_metrics_free(&streamed);
        }
        cp_metrics_free(&whole);
    }
    cp_stream_free(s);
    cp_trace_free(&t);
    cp_rec_reader_close(r);
    return 0;
}
