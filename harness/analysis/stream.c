/* The streaming analysis (cuproof/metrics.h): chunks sorted by start,
 * spilled as runs, merged, and swept with a heap of the ends in flight. */
#include <cuproof/metrics.h>

#include <cuproof/error.h>
#include <cuproof/internal/grow.h>

#include "coll_rows.h"
#include "sweep.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#define LANE_BITS 24
#define LANE_MASK ((1u << LANE_BITS) - 1)
#define RUN_BUFFER 8192 /* records read at a time from each run */

/* A device activity as the sweep needs it: 24 bytes. */
typedef struct srec {
    uint64_t start, end;
    /* lane id (24 bits), kind (2 bits), copy direction (3 bits), a
     * communication kernel (1 bit, cp_activity_class), an asynchronous
     * copy from pageable memory (1 bit); 1 bit spare */
    uint32_t lane_kind;
    uint32_t graph;     /* graph id + 1 in discovery order; 0: not graph-launched */
} srec;

/* The fields packed in lane_kind (of a record, or of an end in flight). */
static uint32_t packed_lane(uint32_t lane_kind) { return lane_kind & LANE_MASK; }
static uint8_t packed_kind(uint32_t lane_kind) { return (uint8_t)(lane_kind >> LANE_BITS & 3); }
static uint8_t packed_dir(uint32_t lane_kind) { return (uint8_t)(lane_kind >> (LANE_BITS + 2) & 7); }
static bool packed_comm(uint32_t lane_kind) { return lane_kind >> (LANE_BITS + 5) & 1; }
static bool packed_pageable_async(uint32_t lane_kind) { return lane_kind >> (LANE_BITS + 6) & 1; }

/* Per lane, besides what cp_lane keeps: the extent of its work of
 * non-zero length, for default_stream_serialization's "other streams'
 * work before and after". */
typedef struct lane_extra {
    uint64_t min_start, max_end;
    bool any;
} lane_extra;

struct cp_stream {
    cp_stream_opts opts;
    cp_metrics m; /* the counts, filled as activities arrive */
    copy_counts counted;
    uint64_t first, last, ndevice;
    /* Lanes and graphs in discovery order, with hash indexes. */
    cp_lane *lanes;
    lane_extra *extra;
    size_t nlanes, lanes_cap;
    uint32_t *lane_index; /* open addressing: lane id + 1, 0 empty */
    size_t lane_index_cap;
    uint32_t last_lane;
    cp_graph *graphs;
    size_t ngraphs, graphs_cap;
    uint32_t *graph_index;
    size_t graph_index_cap;
    launch_set launches;
    kernel_table kernels; /* the breakdown: grows with the distinct kernel names */
    coll_rows coll;       /* the per-collective table: grows with the communication kernels */
    /* The chunk being filled, and the runs spilled to one temporary file. */
    srec *chunk, *scratch;
    size_t nchunk;
    FILE *spill;
    size_t *run_len;
    size_t nruns, runs_cap;
    bool has_legacy;
    uint32_t legacy_device, legacy_context, legacy_stream;
    int error;
    bool finished;
};

int cp_stream_new(cp_stream **out, const cp_stream_opts *opts)
{
    *out = NULL;
    cp_stream *s = calloc(1, sizeof *s);
    if (!s)
        return cp_failf(CP_ENOMEM, "out of memory starting a streaming analysis");
    if (opts)
        s->opts = *opts;
    if (!s->opts.chunk_records)
        s->opts.chunk_records = (size_t)1 << 21;
    s->m.gap_threshold_ns =
        s->opts.timeline.gap_threshold_ns ? s->opts.timeline.gap_threshold_ns : 1000000;
    s->first = UINT64_MAX;
    s->last_lane = UINT32_MAX;
    *out = s;
    return 0;
}

void cp_stream_set_legacy(cp_stream *s, uint32_t device, uint32_t context, uint32_t stream)
{
    s->has_legacy = true;
    s->legacy_device = device;
    s->legacy_context = context;
    s->legacy_stream = stream;
}

size_t cp_stream_runs(const cp_stream *s)
{
    return s->nruns;
}

void cp_stream_free(cp_stream *s)
{
    if (!s)
        return;
    free(s->lanes);
    free(s->extra);
    free(s->lane_index);
    free(s->graphs);
    free(s->graph_index);
    cp__launch_set_free(&s->launches);
    cp__kernel_table_free(&s->kernels);
    cp__coll_free(&s->coll);
    cp__copy_counts_free(&s->counted);
    free(s->chunk);
    free(s->scratch);
    free(s->run_len);
    if (s->spill)
        fclose(s->spill);
    free(s);
}

/* ---- Lanes and graphs, by hash ---- */

static uint32_t mix(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    uint32_t h = a * 2654435761u ^ b * 2246822519u ^ c * 3266489917u ^ d * 668265263u;
    return h ^ h >> 15;
}

static bool lane_matches(const cp_lane *l, const cp_activity *a)
{
    return l->device == a->device && l->process == a->process && l->context == a->context &&
           l->stream == a->stream;
}

/* Grows an open-addressing index to hold n + 1 entries at half load,
 * rehashing the ids through `hash` of their entry. */
static int grow_index(uint32_t **index, size_t *cap, size_t n, const void *base, size_t size,
                      uint32_t (*hash)(const void *))
{
    if (2 * (n + 1) <= *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 64;
    uint32_t *t = calloc(c, sizeof *t);
    if (!t)
        return CP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        size_t j = hash((const char *)base + i * size) & (c - 1);
        while (t[j])
            j = (j + 1) & (c - 1);
        t[j] = (uint32_t)i + 1;
    }
    free(*index);
    *index = t;
    *cap = c;
    return 0;
}

static uint32_t lane_hash(const void *p)
{
    const cp_lane *l = p;
    return mix(l->device, l->process, l->context, l->stream);
}

static uint32_t graph_hash(const void *p)
{
    const cp_graph *g = p;
    return mix(g->process, g->graph_id, 0, 0);
}

/* The id of a's lane, made on first sight. Returns it, or a negative code. */
static long lane_of(cp_stream *s, const cp_activity *a)
{
    if (s->last_lane != UINT32_MAX && lane_matches(&s->lanes[s->last_lane], a))
        return s->last_lane;
    cp_lane key = {.device = a->device, .process = a->process, .context = a->context,
                   .stream = a->stream};
    if (s->lane_index_cap) {
        for (size_t j = lane_hash(&key) & (s->lane_index_cap - 1); s->lane_index[j];
             j = (j + 1) & (s->lane_index_cap - 1))
            if (lane_matches(&s->lanes[s->lane_index[j] - 1], a))
                return s->last_lane = s->lane_index[j] - 1;
    }
    if (s->nlanes == LANE_MASK)
        return cp_failf(CP_EINVAL, "a trace of more than %u streams", LANE_MASK);
    if (s->nlanes == s->lanes_cap) {
        size_t cap = s->lanes_cap ? 2 * s->lanes_cap : 64;
        cp_lane *l = realloc(s->lanes, cap * sizeof *l);
        if (!l)
            return CP_ENOMEM;
        s->lanes = l;
        lane_extra *e = realloc(s->extra, cap * sizeof *e);
        if (!e)
            return CP_ENOMEM;
        s->extra = e;
        s->lanes_cap = cap;
    }
    if (grow_index(&s->lane_index, &s->lane_index_cap, s->nlanes, s->lanes, sizeof *s->lanes,
                   lane_hash) < 0)
        return CP_ENOMEM;
    s->lanes[s->nlanes] = key;
    s->extra[s->nlanes] = (lane_extra){.min_start = UINT64_MAX};
    size_t j = lane_hash(&key) & (s->lane_index_cap - 1);
    while (s->lane_index[j])
        j = (j + 1) & (s->lane_index_cap - 1);
    s->lane_index[j] = (uint32_t)++s->nlanes;
    return s->last_lane = (uint32_t)(s->nlanes - 1);
}

/* The graph of a graph-launched activity, made on first sight: its id + 1,
 * or a negative code. */
static long graph_of(cp_stream *s, const cp_activity *a)
{
    cp_graph key = {.process = a->process, .graph_id = a->graph_id};
    if (s->graph_index_cap) {
        for (size_t j = graph_hash(&key) & (s->graph_index_cap - 1); s->graph_index[j];
             j = (j + 1) & (s->graph_index_cap - 1)) {
            const cp_graph *g = &s->graphs[s->graph_index[j] - 1];
            if (g->process == a->process && g->graph_id == a->graph_id)
                return s->graph_index[j];
        }
    }
    cp_graph *g = cp_grow(s->graphs, &s->graphs_cap, s->ngraphs, sizeof *g, 16);
    if (!g)
        return CP_ENOMEM;
    s->graphs = g;
    if (grow_index(&s->graph_index, &s->graph_index_cap, s->ngraphs, s->graphs,
                   sizeof *s->graphs, graph_hash) < 0)
        return CP_ENOMEM;
    s->graphs[s->ngraphs] = key;
    size_t j = graph_hash(&key) & (s->graph_index_cap - 1);
    while (s->graph_index[j])
        j = (j + 1) & (s->graph_index_cap - 1);
    s->graph_index[j] = (uint32_t)++s->ngraphs;
    return (long)s->ngraphs;
}

/* ---- Chunks and runs ---- */

/* Sorts n records by start, stably: least significant digit first, 11
 * bits a pass over the starts' range, a pass skipped where every record
 * has the same digit. */
static void radix_sort(srec *a, srec *tmp, size_t n)
{
    if (n < 2)
        return;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (a[i].start < lo)
            lo = a[i].start;
        if (a[i].start > hi)
            hi = a[i].start;
    }
    uint64_t range = hi - lo;
    srec *src = a, *dst = tmp;
    for (int shift = 0; shift < 64 && (range >> shift) != 0; shift += 11) {
        size_t count[2048] = {0};
        for (size_t i = 0; i < n; i++)
            count[(src[i].start - lo) >> shift & 2047]++;
        if (count[(src[0].start - lo) >> shift & 2047] == n)
            continue;
        size_t sum = 0;
        for (size_t d = 0; d < 2048; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i].start - lo) >> shift & 2047]++] = src[i];
        srec *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

static int spill(cp_stream *s)
{
    if (!s->scratch && !(s->scratch = malloc(s->opts.chunk_records * sizeof *s->scratch)))
        return CP_ENOMEM;
    radix_sort(s->chunk, s->scratch, s->nchunk);
    if (!s->spill && !(s->spill = tmpfile()))
        return cp_failf(CP_EIO, "cannot create a temporary file for the analysis (TMPDIR): %s",
                        strerror(errno));
    size_t *r = cp_grow(s->run_len, &s->runs_cap, s->nruns, sizeof *r, 16);
    if (!r)
        return CP_ENOMEM;
    s->run_len = r;
    if (fwrite(s->chunk, sizeof *s->chunk, s->nchunk, s->spill) != s->nchunk)
        return cp_failf(CP_EIO, "cannot write the analysis' temporary file (TMPDIR): %s",
                        strerror(errno));
    s->run_len[s->nruns++] = s->nchunk;
    s->nchunk = 0;
    return 0;
}

int cp_stream_add(cp_stream *s, const cp_activity *a)
{
    if (s->error)
        return s->error;
    int rc = 0;
    if (!cp_activity_is_device_work(a)) {
        /* An NCCL call's range: its size, for its kernel's row. */
        if ((rc = cp__count_host(&s->counted, a)) == 0)
            rc = cp__coll_call(&s->coll, a);
        goto out;
    }
    long lane = lane_of(s, a);
    long graph = lane >= 0 && a->graph_id ? graph_of(s, a) : 0;
    if (lane < 0 || graph < 0) {
        rc = lane < 0 ? (int)lane : (int)graph;
        goto out;
    }
    uint64_t end = a->end < a->start ? a->start : a->end; /* a reversed record is empty */
    if ((rc = cp__count_activity(&s->m, &s->lanes[lane], graph ? &s->graphs[graph - 1] : NULL, a,
                                 end, &s->counted)) < 0)
        goto out;
    int cls = cp__kernel_table_add(&s->kernels, a, end, &s->opts.timeline);
    if (cls < 0) {
        rc = cls;
        goto out;
    }
    if (cls == CP_CLASS_COMMUNICATION) {
        /* Its slot, found again in the sweep by its lane and start. */
        long k = cp__coll_add(&s->coll, a, end);
        if (k < 0 || (rc = cp__coll_key_put(&s->coll, (uint32_t)lane, a->start, (uint32_t)k)) < 0) {
            rc = k < 0 ? (int)k : rc;
            goto out;
        }
    }
    if (graph) {
        int fresh = cp__launch_set_add(&s->launches, a);
        if (fresh < 0) {
            rc = fresh;
            goto out;
        }
        s->graphs[graph - 1].launches += (uint32_t)fresh;
    }
    lane_extra *x = &s->extra[lane];
    if (end > a->start) {
        x->any = true;
        if (a->start < x->min_start)
            x->min_start = a->start;
        if (end > x->max_end)
            x->max_end = end;
    }
    if (a->start < s->first)
        s->first = a->start;
    if (end > s->last)
        s->last = end;
    s->ndevice++;
    if (!s->chunk && !(s->chunk = malloc(s->opts.chunk_records * sizeof *s->chunk))) {
        rc = CP_ENOMEM;
        goto out;
    }
    s->chunk[s->nchunk++] = (srec){a->start, end,
                                   (uint32_t)lane | (uint32_t)(a->kind & 3) << LANE_BITS |
                                       (uint32_t)(a->copy_dir & 7) << (LANE_BITS + 2) |
                                       (uint32_t)(cls == CP_CLASS_COMMUNICATION)
                                           << (LANE_BITS + 5) |
                                       (uint32_t)cp__is_pageable_async(a) << (LANE_BITS + 6),
                                   (uint32_t)graph};
    if (s->nchunk == s->opts.chunk_records)
        rc = spill(s);
out:
    if (rc == CP_ENOMEM)
        rc = cp_failf(CP_ENOMEM, "out of memory in the streaming analysis");
    if (rc < 0)
        s->error = rc;
    return rc;
}

/* ---- The merge ---- */

/* One sorted source of records: a run on disk or the last chunk. */
typedef struct source {
    srec *buf;
    size_t pos, len;  /* in buf */
    size_t left;      /* records of the run not yet read into buf */
    long offset;      /* the file offset of the next unread record */
} source;

static int source_refill(cp_stream *s, source *src)
{
    if (src->pos < src->len || src->left == 0)
        return 0;
    size_t n = src->left < RUN_BUFFER ? src->left : RUN_BUFFER;
    if (fseek(s->spill, src->offset, SEEK_SET) != 0 ||
        fread(src->buf, sizeof *src->buf, n, s->spill) != n)
        return cp_failf(CP_EIO, "cannot read back the analysis' temporary file: %s",
                        strerror(errno));
    src->offset += (long)(n * sizeof *src->buf);
    src->left -= n;
    src->pos = 0;
    src->len = n;
    return 0;
}

/* ---- The sweep ---- */

/* An end in flight: when, what, and for a legacy-stream interval the slot
 * of its overlap flag (0: none). `other`: a non-legacy interval of
 * non-zero length, which counts for the legacy rule. */
typedef struct pending {
    uint64_t t;
    uint32_t lane_kind, graph;
    uint32_t slot;
    uint32_t coll; /* a communication kernel's slot + 1 in the collectives' table */
    uint8_t other;
} pending;

typedef struct heap {
    pending *a;
    size_t n, cap;
} heap;

static int heap_push(heap *h, pending p)
{
    pending *a = cp_grow(h->a, &h->cap, h->n, sizeof *a, 256);
    if (!a)
        return CP_ENOMEM;
    h->a = a;
    size_t i = h->n++;
    while (i > 0 && h->a[(i - 1) / 2].t > p.t) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = p;
    return 0;
}

static pending heap_pop(heap *h)
{
    pending top = h->a[0], last = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->a[c + 1].t < h->a[c].t)
            c++;
        if (h->a[c].t >= last.t)
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n)
        h->a[i] = last;
    return top;
}

/* default_stream_serialization, counted during the sweep: a legacy-stream
 * interval that no other stream's work overlapped, with other streams'
 * work starting before it and ending after it (timeline.c's rule, which
 * merges the other streams' intervals; here the same is read from what is
 * in flight). */
typedef struct legacy_rule {
    uint32_t lane; /* the legacy lane's id, UINT32_MAX when none */
    uint64_t other_min, other_max;
    bool other_any;
    long other_open;       /* non-legacy intervals of non-zero length in flight */
    long other_open_before; /* the same just before the current instant */
    uint64_t now;
    bool *overlapped; /* per slot */
    uint64_t *slot_start;
    uint32_t *free_slots;
    size_t nslots, nfree, cap;
    uint64_t (*zero)[2]; /* zero-length legacy intervals at `now`: start, end */
    size_t nzero, zero_cap;
    long count;
} legacy_rule;

static bool legacy_counts(const legacy_rule *r, uint64_t start, uint64_t end)
{
    return r->other_any && r->other_min < start && r->other_max > end;
}

/* A zero-length interval at t overlaps the others' union when the union
 * covers both sides of t: something open just before t and something
 * open just after it. */
static void legacy_settle(legacy_rule *r)
{
    for (size_t i = 0; i < r->nzero; i++)
        if (!(r->other_open_before > 0 && r->other_open > 0) &&
            legacy_counts(r, r->zero[i][0], r->zero[i][1]))
            r->count++;
    r->nzero = 0;
}

/* Called before each event at time t. */
static void legacy_advance(legacy_rule *r, uint64_t t)
{
    if (t == r->now)
        return;
    legacy_settle(r);
    r->now = t;
    r->other_open_before = r->other_open;
}

static long legacy_open_slot(legacy_rule *r, uint64_t start, bool overlapped)
{
    uint32_t slot;
    if (r->nfree) {
        slot = r->free_slots[--r->nfree];
    } else {
        if (r->nslots == r->cap) {
            size_t cap = r->cap ? 2 * r->cap : 8;
            bool *o = realloc(r->overlapped, cap * sizeof *o);
            if (!o)
                return CP_ENOMEM;
            r->overlapped = o;
            uint32_t *f = realloc(r->free_slots, cap * sizeof *f);
            if (!f)
                return CP_ENOMEM;
            r->free_slots = f;
            uint64_t *st = realloc(r->slot_start, cap * sizeof *st);
            if (!st)
                return CP_ENOMEM;
            r->slot_start = st;
            r->cap = cap;
        }
        slot = (uint32_t)r->nslots++;
    }
    r->overlapped[slot] = overlapped;
    r->slot_start[slot] = start;
    return (long)slot + 1;
}

/* A non-legacy interval of non-zero length starts: every legacy interval
 * in flight is overlapped. */
static void legacy_other_starts(legacy_rule *r)
{
    for (size_t i = 0; i < r->nslots; i++)
        r->overlapped[i] = true;
    r->other_open++;
}

/* An end leaves the sweep (and, for a legacy interval, is judged). */
static void apply_end(sweep_state *st, legacy_rule *lr, const pending *e)
{
    legacy_advance(lr, e->t);
    if (e->other)
        lr->other_open--;
    if (e->slot) {
        uint32_t k = e->slot - 1;
        if (!lr->overlapped[k] && legacy_counts(lr, lr->slot_start[k], e->t))
            lr->count++;
        lr->free_slots[lr->nfree++] = k;
    }
    cp__sweep_apply(st, e->t, packed_lane(e->lane_kind), e->graph, false,
                    packed_kind(e->lane_kind), packed_dir(e->lane_kind),
                    packed_comm(e->lane_kind), packed_pageable_async(e->lane_kind), e->coll);
}

static int sweep(cp_stream *s, source *src, size_t nsrc, sweep_state *st, legacy_rule *lr)
{
    heap ends = {0};
    /* The sources in a small heap of indexes, by their next record's start. */
    size_t *order = malloc(nsrc * sizeof *order), norder = 0;
    int rc = order ? 0 : CP_ENOMEM;
    for (size_t i = 0; rc == 0 && i < nsrc; i++) {
        if ((rc = source_refill(s, &src[i])) < 0)
            break;
        if (src[i].pos < src[i].len)
            order[norder++] = i;
    }
#define HEAD(k) (src[order[k]].buf[src[order[k]].pos].start)
    /* Heapify by insertion order: few sources. */
    for (size_t i = 1; rc == 0 && i < norder; i++)
        for (size_t k = i; k > 0 && HEAD((k - 1) / 2) > HEAD(k); k = (k - 1) / 2) {
            size_t t = order[k];
            order[k] = order[(k - 1) / 2];
            order[(k - 1) / 2] = t;
        }
    while (rc == 0 && norder) {
        source *from = &src[order[0]];
        srec r = from->buf[from->pos++];
        if (from->pos == from->len && (rc = source_refill(s, from)) < 0)
            break;
        if (from->pos == from->len)
            order[0] = order[--norder];
        for (size_t k = 0;;) {
            size_t c = 2 * k + 1;
            if (c >= norder)
                break;
            if (c + 1 < norder && HEAD(c + 1) < HEAD(c))
                c++;
            if (HEAD(c) >= HEAD(k))
                break;
            size_t t = order[k];
            order[k] = order[c];
            order[c] = t;
            k = c;
        }
        /* Every end no later than this start comes first: ends before
         * starts at one instant (half-open intervals). */
        while (ends.n && ends.a[0].t <= r.start) {
            pending e = heap_pop(&ends);
            apply_end(st, lr, &e);
        }
        legacy_advance(lr, r.start);
        uint32_t lane = packed_lane(r.lane_kind);
        bool legacy = lane == lr->lane;
        uint32_t coll = packed_comm(r.lane_kind) ? cp__coll_key_get(&s->coll, lane, r.start) : 0;
        pending p = {r.end, r.lane_kind, r.graph, 0, coll, 0};
        if (legacy && r.end == r.start) {
            if (lr->nzero == lr->zero_cap) {
                size_t cap = lr->zero_cap ? 2 * lr->zero_cap : 8;
                uint64_t(*z)[2] = realloc(lr->zero, cap * sizeof *z);
                if (!z) {
                    rc = CP_ENOMEM;
                    break;
                }
                lr->zero = z;
                lr->zero_cap = cap;
            }
            lr->zero[lr->nzero][0] = r.start;
            lr->zero[lr->nzero++][1] = r.end;
        } else if (legacy) {
            long slot = legacy_open_slot(lr, r.start, lr->other_open > 0);
            if (slot < 0) {
                rc = (int)slot;
                break;
            }
            p.slot = (uint32_t)slot;
        } else if (r.end > r.start) {
            legacy_other_starts(lr);
            p.other = 1;
        }
        cp__sweep_apply(st, r.start, lane, r.graph, true, packed_kind(r.lane_kind),
                        packed_dir(r.lane_kind), packed_comm(r.lane_kind),
                        packed_pageable_async(r.lane_kind), coll);
        if ((rc = heap_push(&ends, p)) < 0)
            break;
    }
#undef HEAD
    while (rc == 0 && ends.n) {
        pending e = heap_pop(&ends);
        apply_end(st, lr, &e);
    }
    legacy_settle(lr);
    free(order);
    free(ends.a);
    return rc;
}

/* ---- Finishing ---- */

/* The discovery ids of n entries of `size` bytes (lanes or graphs) in the
 * order `cmp` gives them. Each entry is sorted with its id stored after it,
 * so that the entry's own comparator orders the pair: no context for
 * qsort to lack. */
static uint32_t *sorted_ids(const void *entries, size_t size, size_t n,
                            int (*cmp)(const void *, const void *))
{
    /* Whole steps of the widest alignment an entry needs (a uint64_t). */
    size_t step = (size + sizeof(uint32_t) + 7) & ~(size_t)7;
    char *at = malloc((n ? n : 1) * step);
    uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!at || !ids) {
        free(at);
        free(ids);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t id = (uint32_t)i;
        memcpy(at + i * step, (const char *)entries + i * size, size);
        memcpy(at + i * step + size, &id, sizeof id);
    }
    if (n)
        qsort(at, n, step, cmp);
    for (size_t i = 0; i < n; i++)
        memcpy(&ids[i], at + i * step + size, sizeof ids[i]);
    free(at);
    return ids;
}

int cp_stream_finish(cp_stream *s, cp_metrics *m)
{
    memset(m, 0, sizeof *m);
    if (s->error)
        return s->error;
    if (s->finished)
        return s->error = cp_failf(CP_EINVAL, "the streaming analysis was finished already");
    s->finished = true;
    *m = s->m;
    m->bound = "none";
    if (s->ndevice == 0)
        return 0;
    int rc = 0;
    size_t nl = s->nlanes, ng = s->ngraphs;
    sweep_state st = {.m = m, .lanes = s->lanes, .graphs = s->graphs, .prev = s->first,
                      .coll = s->coll.slots};
    legacy_rule lr = {.lane = UINT32_MAX, .other_min = UINT64_MAX};
    source *src = calloc(s->nruns + 1, sizeof *src);
    uint32_t *lane_ids = sorted_ids(s->lanes, sizeof *s->lanes, nl, cp__lane_cmp);
    uint32_t *graph_ids = sorted_ids(s->graphs, sizeof *s->graphs, ng, cp__graph_cmp);
    cp_lane *lanes = malloc(nl * sizeof *lanes);
    cp_graph *graphs = malloc((ng ? ng : 1) * sizeof *graphs);
    int alloc = cp__sweep_state_alloc(&st, nl, ng);
    if (!src || !lane_ids || !graph_ids || !lanes || !graphs || alloc < 0) {
        rc = CP_ENOMEM;
        goto out;
    }
    /* Devices are numbered in the order of the sorted lanes, as the
     * whole-trace analysis numbers them. */
    for (size_t i = 0; i < nl; i++) {
        const cp_lane *l = &s->lanes[lane_ids[i]];
        if (i == 0 || l->device != s->lanes[lane_ids[i - 1]].device)
            m->devices++;
        st.lane_device[lane_ids[i]] = m->devices - 1;
    }
    if ((rc = cp__sweep_steps_init(&st, s->opts.timeline.steps, s->opts.timeline.nsteps)) < 0)
        goto out;
    if (s->has_legacy)
        for (size_t i = 0; i < nl; i++) {
            const cp_lane *l = &s->lanes[i];
            if (l->process == 0 && l->device == s->legacy_device &&
                l->context == s->legacy_context && l->stream == s->legacy_stream)
                lr.lane = (uint32_t)i;
        }
    for (size_t i = 0; lr.lane != UINT32_MAX && i < nl; i++) {
        if (i == lr.lane || !s->extra[i].any)
            continue;
        lr.other_any = true;
        if (s->extra[i].min_start < lr.other_min)
            lr.other_min = s->extra[i].min_start;
        if (s->extra[i].max_end > lr.other_max)
            lr.other_max = s->extra[i].max_end;
    }

    /* The runs on disk, each read through its own buffer, and the last
     * chunk, sorted where it lies. */
    size_t nsrc = 0;
    if (s->nruns && fflush(s->spill) != 0) {
        rc = cp_failf(CP_EIO, "cannot write the analysis' temporary file: %s", strerror(errno));
        goto out;
    }
    long offset = 0;
    for (size_t i = 0; i < s->nruns; i++) {
        if (!(src[nsrc].buf = malloc(RUN_BUFFER * sizeof *src[nsrc].buf))) {
            rc = CP_ENOMEM;
            goto out;
        }
        src[nsrc].left = s->run_len[i];
        src[nsrc++].offset = offset;
        offset += (long)(s->run_len[i] * sizeof(srec));
    }
    if (s->nchunk) {
        if (!s->scratch && !(s->scratch = malloc(s->nchunk * sizeof *s->scratch))) {
            rc = CP_ENOMEM;
            goto out;
        }
        radix_sort(s->chunk, s->scratch, s->nchunk);
        src[nsrc++] = (source){.buf = s->chunk, .len = s->nchunk};
    }
    if ((rc = sweep(s, src, nsrc, &st, &lr)) < 0)
        goto out;

    for (size_t i = 0; i < nl; i++)
        lanes[i] = s->lanes[lane_ids[i]];
    for (size_t i = 0; i < ng; i++)
        graphs[i] = s->graphs[graph_ids[i]];
    m->lanes = lanes;
    m->nlanes = nl;
    m->graphs = graphs;
    m->ngraphs = ng;
    lanes = NULL;
    graphs = NULL;
    cp__sweep_finish(&st, s->first, s->last, s->opts.timeline.max_concurrent_kernels, &s->counted,
                     lr.count);
    cp__kernel_table_finish(&s->kernels, m);
    if ((rc = cp__coll_finish(&s->coll, m)) < 0)
        goto out;
out:
    for (size_t i = 0; src && i < s->nruns; i++)
        free(src[i].buf);
    free(src);
    free(lane_ids);
    free(graph_ids);
    free(lanes);
    free(graphs);
    cp__sweep_state_free(&st);
    free(lr.overlapped);
    free(lr.slot_start);
    free(lr.free_slots);
    free(lr.zero);
    if (rc == CP_ENOMEM)
        rc = cp_failf(CP_ENOMEM, "out of memory in the streaming analysis");
    if (rc < 0) {
        s->error = rc;
        memset(m, 0, sizeof *m);
    }
    return rc;
}
