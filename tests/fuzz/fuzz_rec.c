/*
 * libFuzzer target: any bytes as a cuproof.rec file. The reader must
 * accept them, read them as truncated or refuse them with an error, never
 * crash; what it accepts goes through both analyses, the whole-trace one
 * and the streaming one with chunks of four (so that it spills and merges
 * runs), and the two must agree on every metric, lane, graph and finding:
 * a disagreement is a crash too. The same bytes pushed in pieces (the
 * reader of a file still being written, cuproof exec's follower) must read
 * alike: the same records, the same end, the same error.
 */
#include <cuproof/error.h>
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

/* A digest of what one reading gives: each item's type and fields (an
 * activity's name by its text), then how the reading ended (its code, its
 * error or its truncation). */
typedef struct digest {
    uint64_t h;
} digest;

static void mix(digest *d, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        d->h = (d->h ^ b[i]) * 1099511628211ull;
}

static void mix_item(digest *d, const cp_rec_item *it)
{
    mix(d, &it->type, sizeof it->type);
    if (it->type == CP_REC_ACTIVITY) {
        /* Field by field: a struct's padding is no part of what was read. */
        const cp_activity *a = &it->activity;
        uint64_t f[] = {a->kind,     a->start,    a->end,         a->device,   a->context,
                        a->stream,   a->process,  a->correlation, a->graph_id, a->graph_node,
                        a->bytes,    a->copy_dir, a->src,         a->dst,      a->async,
                        a->depth,    a->thread,   a->grid[0],     a->grid[1],  a->grid[2],
                        a->block[0], a->block[1], a->block[2]};
        mix(d, f, sizeof f);
        mix(d, a->name ? a->name : "", strlen(a->name ? a->name : "") + 1);
    } else if (it->type == CP_REC_END) {
        mix(d, &it->end, sizeof it->end);
    } else if (it->type == CP_REC_STREAM_NAME) {
        const cp_stream_name *n = &it->stream_name;
        uint64_t f[] = {n->process, n->device, n->context, n->stream};
        mix(d, f, sizeof f);
        mix(d, n->name, strlen(n->name) + 1);
    } else {
        mix(d, &it->process_index, sizeof it->process_index);
        mix(d, &it->process, sizeof it->process);
    }
}

/* Reads everything `r` gives (more pushed from data[*at] in pieces of 1 to
 * 64 bytes, their sizes taken from the data, when `data` is set). */
static int read_all(cp_rec_reader *r, const uint8_t *data, size_t size, digest *d)
{
    cp_rec_item it;
    memset(&it, 0, sizeof it);
    size_t at = 0;
    int rc;
    for (;;) {
        while ((rc = cp_rec_next(r, &it)) > 0)
            mix_item(d, &it);
        if (rc < 0 || !data || at == size)
            break;
        size_t piece = 1 + data[at] % 64;
        piece = piece < size - at ? piece : size - at;
        if (cp_rec_reader_push(r, data + at, piece) < 0)
            return CP_ENOMEM;
        at += piece;
        if (at == size)
            cp_rec_reader_push_end(r);
    }
    char why[512] = "";
    if (rc == 0 && cp_rec_truncated(r, why, sizeof why))
        mix(d, why, strlen(why));
    if (rc < 0)
        mix(d, cp_last_error(), strlen(cp_last_error()));
    mix(d, &rc, sizeof rc);
    return rc;
}

/* The bytes read whole and pushed in pieces give the same digest. */
static void pieces_agree(const uint8_t *data, size_t size)
{
    digest whole = {1469598103934665603ull}, pushed = whole;
    FILE *f = fmemopen((void *)data, size, "rb");
    cp_rec_reader *r = NULL;
    if (!f)
        return;
    int rc = cp_rec_reader_fopen(&r, f, "fuzz");
    if (rc < 0) {
        /* Its header refused: the pushed reader refuses it on its first read. */
        mix(&whole, cp_last_error(), strlen(cp_last_error()));
        mix(&whole, &rc, sizeof rc);
    } else {
        read_all(r, NULL, 0, &whole);
        cp_rec_reader_close(r);
    }
    if (cp_rec_reader_pushed(&r, "fuzz") < 0)
        return;
    if (size == 0)
        cp_rec_reader_push_end(r);
    rc = read_all(r, data, size, &pushed);
    cp_rec_reader_close(r);
    if (rc != CP_ENOMEM && whole.h != pushed.h)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pieces_agree(data, size);
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
