#include <cuproof/metrics.h>

#include <cuproof/error.h>

#include "sweep.h"

#include <stddef.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_pageable_copy(const cp_activity *a)
{
    return a->kind == CP_ACT_MEMCPY && (a->src == CP_MEM_PAGEABLE || a->dst == CP_MEM_PAGEABLE);
}

/* Lanes' order: by device, process, context and stream. */
static int key_cmp(uint32_t d1, uint32_t p1, uint32_t c1, uint32_t s1, uint32_t d2, uint32_t p2,
                   uint32_t c2, uint32_t s2)
{
    if (d1 != d2)
        return d1 < d2 ? -1 : 1;
    if (p1 != p2)
        return p1 < p2 ? -1 : 1;
    if (c1 != c2)
        return c1 < c2 ? -1 : 1;
    if (s1 != s2)
        return s1 < s2 ? -1 : 1;
    return 0;
}

static int lane_key_cmp(const cp_lane *l, const cp_activity *a)
{
    return key_cmp(l->device, l->process, l->context, l->stream, a->device, a->process,
                   a->context, a->stream);
}

int cp__lane_cmp(const void *a, const void *b)
{
    const cp_lane *x = a, *y = b;
    return key_cmp(x->device, x->process, x->context, x->stream, y->device, y->process,
                   y->context, y->stream);
}

/* The first of the sorted lanes not before a's key (n when all are). */
static size_t lane_lower_bound(const cp_lane *lanes, size_t n, const cp_activity *a)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (lane_key_cmp(&lanes[mid], a) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool lane_is(const cp_lane *l, const cp_activity *a)
{
    return lane_key_cmp(l, a) == 0;
}

long cp_metrics_lane_index(const cp_metrics *m, const cp_activity *a)
{
    size_t at = lane_lower_bound(m->lanes, m->nlanes, a);
    return at < m->nlanes && lane_is(&m->lanes[at], a) ? (long)at : -1;
}

/* One start or end of a device interval. */
typedef struct sweep_event {
    uint64_t t;
    uint32_t lane;
    uint32_t graph; /* index + 1 in the trace's graphs; 0: not graph-launched */
    uint8_t is_start;
    uint8_t kind; /* cp_act_kind */
    uint8_t dir;  /* cp_copy_dir */
} sweep_event;

static int event_cmp(const void *a, const void *b)
{
    const sweep_event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    /* Ends before starts at one instant: intervals are half-open. */
    return (int)x->is_start - (int)y->is_start;
}

static void add_finding(cp_metrics *m, const char *name, uint32_t count, const char *fmt,
                        ...) __attribute__((format(printf, 4, 5)));

static void add_finding(cp_metrics *m, const char *name, uint32_t count, const char *fmt, ...)
{
    if (m->nfindings == CP_MAX_FINDINGS)
        return;
    cp_finding *f = &m->findings[m->nfindings++];
    f->name = name;
    f->count = count;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
}

static bool on_legacy_stream(const cp_trace *t, const cp_activity *a)
{
    return t->has_legacy_stream && a->process == 0 && a->device == t->legacy_device &&
           a->context == t->legacy_context && a->stream == t->legacy_stream;
}

typedef struct span {
    uint64_t s, e;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return (x->s > y->s) - (x->s < y->s);
}

/*
 * Counts device intervals on the legacy default stream that ran while no
 * other stream ran, with other streams' work both before and after them:
 * the signature of the implicit synchronisation the legacy stream imposes
 * on blocking streams. Other streams' intervals are merged into a sorted
 * union once, and each legacy interval is looked up in it. Returns -1
 * when out of memory.
 */
static long count_default_stream_serialization(const cp_trace *t)
{
    if (!t->has_legacy_stream)
        return 0;
    size_t n = 0, nl = 0;
    for (size_t i = 0; i < t->n; i++)
        if (cp_activity_is_device_work(&t->items[i]))
            on_legacy_stream(t, &t->items[i]) ? nl++ : n++;
    if (n == 0 || nl == 0)
        return 0;
    span *u = malloc(n * sizeof *u);
    if (!u)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (cp_activity_is_device_work(a) && !on_legacy_stream(t, a) && a->end > a->start)
            u[k++] = (span){a->start, a->end};
    }
    qsort(u, k, sizeof *u, span_cmp);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m > 0 && u[i].s <= u[m - 1].e) {
            if (u[i].e > u[m - 1].e)
                u[m - 1].e = u[i].e;
        } else {
            u[m++] = u[i];
        }
    }
    long count = 0;
    for (size_t i = 0; m > 0 && i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (!cp_activity_is_device_work(a) || !on_legacy_stream(t, a))
            continue;
        /* A reversed record is taken as empty at its start, as the sweep
         * takes it. */
        uint64_t end = a->end > a->start ? a->end : a->start;
        /* The first merged interval that ends after this one starts. */
        size_t lo = 0, hi = m;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (u[mid].e <= a->start)
                lo = mid + 1;
            else
                hi = mid;
        }
        bool overlaps = lo < m && u[lo].s < end;
        if (!overlaps && u[0].s < a->start && u[m - 1].e > end)
            count++;
    }
    free(u);
    return count;
}

static void derive_findings(cp_metrics *m, copy_counts copies, long legacy_serialised)
{
    uint32_t async_pageable = copies.async_pageable, sync_copies = copies.sync;
    uint32_t lanes_with_work = 0, lanes_with_kernels = 0;
    for (size_t i = 0; i < m->nlanes; i++) {
        lanes_with_work += m->lanes[i].kernels + m->lanes[i].copies + m->lanes[i].memsets > 0;
        lanes_with_kernels += m->lanes[i].kernels > 0;
    }
    if (async_pageable)
        add_finding(m, "cuda_memcpy_async", async_pageable,
                    "%u asynchronous copies used pageable host memory: the driver stages "
                    "them through its own pinned buffer, so they cannot overlap with "
                    "kernels; allocate the host side with cudaMallocHost",
                    async_pageable);

    if (lanes_with_work > 1 && sync_copies)
        add_finding(m, "cuda_memcpy_sync", sync_copies,
                    "%u blocking copies in work spread over %u streams: a blocking copy "
                    "waits for the device and stops the host issuing the next stream's work; "
                    "use cudaMemcpyAsync on the stream",
                    sync_copies, lanes_with_work);

    if (m->gaps_over_threshold)
        add_finding(m, "gpu_gaps", m->gaps_over_threshold,
                    "%u idle gaps longer than %.3f ms inside the span (largest %.3f ms, "
                    "%.3f ms idle in all)",
                    m->gaps_over_threshold, (double)m->gap_threshold_ns / 1e6,
                    (double)m->largest_gap_ns / 1e6, (double)m->idle_ns / 1e6);

    if (legacy_serialised > 0)
        add_finding(m, "default_stream_serialization", (uint32_t)legacy_serialised,
                    "%ld operations on the legacy default stream ran alone between other "
                    "streams' work: the legacy stream waits for every blocking stream and "
                    "they wait for it; use cudaStreamPerThread or non-blocking streams",
                    legacy_serialised);

    if (lanes_with_kernels > 1 && m->peak_concurrent_kernels == 1)
        add_finding(m, "serialized_streams", lanes_with_kernels,
                    "kernels were issued on %u streams but never ran concurrently "
                    "(peak 1): something serialised the streams",
                    lanes_with_kernels);
}

uint32_t cp_max_concurrent_kernels(int cc_major, int cc_minor)
{
    /* 128 resident grids from compute capability 7.0 on (and 6.0); the
     * smaller and embedded parts before it allowed 16 or 32. */
    if (cc_major >= 7 || (cc_major == 6 && cc_minor == 0))
        return 128;
    return cc_major >= 5 ? 32 : 16;
}

/* The ideal time and the resource that bounds it (see cp_metrics). */
static void ideal_time(cp_metrics *m, uint32_t limit)
{
    m->concurrency_limit = limit ? limit : m->peak_concurrent_kernels;
    uint64_t kernel_ideal =
        m->concurrency_limit ? m->kernel_sum_ns / m->concurrency_limit : m->kernel_sum_ns;
    m->ideal_ns = kernel_ideal;
    m->bound = m->kernels ? "kernels" : "none";
    if (m->h2d_sum_ns > m->ideal_ns) {
        m->ideal_ns = m->h2d_sum_ns;
        m->bound = "h2d copies";
    }
    if (m->d2h_sum_ns > m->ideal_ns) {
        m->ideal_ns = m->d2h_sum_ns;
        m->bound = "d2h copies";
    }
    m->efficiency = m->span_ns ? (double)m->ideal_ns / (double)m->span_ns : 0.0;
}

int cp__sweep_state_alloc(sweep_state *st, size_t nl, size_t ng)
{
    st->lane_open = calloc(nl + 1, sizeof *st->lane_open);
    st->lane_since = calloc(nl + 1, sizeof *st->lane_since);
    st->lane_device = calloc(nl + 1, sizeof *st->lane_device);
    st->device_open = calloc(nl + 1, sizeof *st->device_open);
    st->graph_open = calloc(ng + 1, sizeof *st->graph_open);
    st->graph_since = calloc(ng + 1, sizeof *st->graph_since);
    return st->lane_open && st->lane_since && st->lane_device && st->device_open &&
                   st->graph_open && st->graph_since
               ? 0
               : CP_ENOMEM;
}

void cp__sweep_state_free(sweep_state *st)
{
    free(st->lane_open);
    free(st->lane_since);
    free(st->lane_device);
    free(st->device_open);
    free(st->graph_open);
    free(st->graph_since);
}

void cp__sweep_apply(sweep_state *st, uint64_t t, uint32_t lane, uint32_t graph, bool is_start,
                     uint8_t kind, uint8_t dir)
{
    cp_metrics *m = st->m;
    /* Between consecutive event times the counts are constant, so each
     * segment adds its length to whatever is in flight. */
    uint64_t seg = t - st->prev;
    if (seg > 0) {
        if (st->kernels > 0) {
            m->kernel_busy_ns += seg;
            st->weighted_kernels += seg * (uint64_t)st->kernels;
            if ((uint32_t)st->kernels > m->peak_concurrent_kernels)
                m->peak_concurrent_kernels = (uint32_t)st->kernels;
        }
        if (st->copies > 0)
            m->copy_busy_ns += seg;
        if (st->kernels > 0 && st->copies > 0)
            m->copy_kernel_overlap_ns += seg;
        if (st->h2d > 0 && st->d2h > 0)
            m->h2d_d2h_overlap_ns += seg;
        if (st->devices_busy > 1)
            m->multi_device_ns += seg;
        if (st->graphs_busy > 0)
            m->graph_busy_ns += seg;
        if (st->busy == 0) {
            m->idle_ns += seg;
            if (seg > m->largest_gap_ns)
                m->largest_gap_ns = seg;
            if (seg > m->gap_threshold_ns)
                m->gaps_over_threshold++;
        }
        st->prev = t;
    }
    long d = is_start ? 1 : -1;
    st->busy += d;
    if (kind == CP_ACT_KERNEL) {
        st->kernels += d;
    } else if (kind == CP_ACT_MEMCPY) {
        st->copies += d;
        if (dir == CP_COPY_HTOD)
            st->h2d += d;
        else if (dir == CP_COPY_DTOH)
            st->d2h += d;
    }
    /* Per-lane busy time: count this lane's open intervals and add the time
     * from its first opening to its last closing. */
    int32_t *open = &st->lane_open[lane];
    int32_t *device = &st->device_open[st->lane_device[lane]];
    if (is_start) {
        if ((*open)++ == 0) {
            st->lane_since[lane] = t;
            st->devices_busy += (*device)++ == 0;
        }
    } else if (--(*open) == 0) {
        st->lanes[lane].busy_ns += t - st->lane_since[lane];
        st->devices_busy -= --(*device) == 0;
    }
    if (graph) {
        st->graphs_busy += d;
        int32_t *g = &st->graph_open[graph - 1];
        if (is_start) {
            if ((*g)++ == 0)
                st->graph_since[graph - 1] = t;
        } else if (--(*g) == 0) {
            st->graphs[graph - 1].busy_ns += t - st->graph_since[graph - 1];
        }
    }
}

void cp__sweep_finish(sweep_state *st, uint64_t first, uint64_t last, uint32_t max_concurrent,
                      copy_counts copies, long legacy_serialised)
{
    cp_metrics *m = st->m;
    m->span_ns = last - first;
    m->copy_kernel_overlap_ratio =
        m->copy_busy_ns ? (double)m->copy_kernel_overlap_ns / (double)m->copy_busy_ns : 0.0;
    m->mean_concurrent_kernels =
        m->kernel_busy_ns ? (double)st->weighted_kernels / (double)m->kernel_busy_ns : 0.0;
    for (size_t i = 0; i < m->ngraphs; i++)
        m->graph_launches += m->graphs[i].launches;
    ideal_time(m, max_concurrent);
    derive_findings(m, copies, legacy_serialised);
}

int cp__launch_set_add(launch_set *s, const cp_activity *a)
{
    if (2 * (s->n + 1) > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        uint32_t(*t)[3] = calloc(cap, sizeof *t);
        if (!t)
            return CP_ENOMEM;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slots[i][0])
                continue;
            size_t j = (s->slots[i][0] * 2654435761u ^ s->slots[i][1] * 40503u ^
                        s->slots[i][2] * 2246822519u) & (cap - 1);
            while (t[j][0])
                j = (j + 1) & (cap - 1);
            memcpy(t[j], s->slots[i], sizeof t[j]);
        }
        free(s->slots);
        s->slots = t;
        s->cap = cap;
    }
    uint32_t key[3] = {a->process + 1, a->graph_id, a->correlation};
    size_t j = (key[0] * 2654435761u ^ key[1] * 40503u ^ key[2] * 2246822519u) & (s->cap - 1);
    for (; s->slots[j][0]; j = (j + 1) & (s->cap - 1))
        if (memcmp(s->slots[j], key, sizeof key) == 0)
            return 0;
    memcpy(s->slots[j], key, sizeof key);
    s->n++;
    return 1;
}

void cp__launch_set_free(launch_set *s)
{
    free(s->slots);
    memset(s, 0, sizeof *s);
}

int cp__graph_cmp(const void *a, const void *b)
{
    const cp_graph *x = a, *y = b;
    if (x->process != y->process)
        return x->process < y->process ? -1 : 1;
    return (x->graph_id > y->graph_id) - (x->graph_id < y->graph_id);
}

/* The index of (process, graph_id) among n sorted graphs, or n. */
static size_t graph_find(const cp_graph *g, size_t n, uint32_t process, uint32_t graph_id)
{
    if (n == 0) /* bsearch takes no NULL array, even an empty one */
        return 0;
    cp_graph key = {.process = process, .graph_id = graph_id};
    const cp_graph *hit = bsearch(&key, g, n, sizeof *g, cp__graph_cmp);
    return hit ? (size_t)(hit - g) : n;
}

void cp__count_activity(cp_metrics *m, cp_lane *l, cp_graph *g, const cp_activity *a,
                           uint64_t end, copy_counts *counted)
{
    /* A later piece of a clipped record adds its time, not a record. */
    uint32_t one = a->piece ? 0 : 1;
    if (a->kind == CP_ACT_KERNEL) {
        l->kernels += one;
        m->kernels += one;
        m->kernel_sum_ns += end - a->start;
        if (g)
            g->kernels += one;
    } else if (a->kind == CP_ACT_MEMCPY) {
        l->copies += one;
        m->copies += one;
        if (g)
            g->copies += one;
        if (a->copy_dir == CP_COPY_HTOD)
            m->h2d_sum_ns += end - a->start;
        else if (a->copy_dir == CP_COPY_DTOH)
            m->d2h_sum_ns += end - a->start;
        if (is_pageable_copy(a)) {
            m->pageable_copies += one;
            m->pageable_copy_sum_ns += end - a->start;
            counted->async_pageable += a->async && one;
        }
        counted->sync += !a->async && one;
    } else {
        l->memsets += one;
        m->memsets += one;
        if (g)
            g->memsets += one;
    }
}

int cp_timeline_analyse(const cp_trace *t, const cp_timeline_opts *opts, cp_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->bound = "none";
    m->gap_threshold_ns = opts && opts->gap_threshold_ns ? opts->gap_threshold_ns : 1000000;
    size_t ndev = 0;
    for (size_t i = 0; i < t->n; i++)
        ndev += cp_activity_is_device_work(&t->items[i]);
    if (ndev == 0)
        return 0;

    int rc = 0;
    sweep_event *ev = malloc(2 * ndev * sizeof *ev);
    cp_lane *lanes = malloc(ndev * sizeof *lanes);
    cp_graph *graphs = NULL;
    launch_set launches = {0};
    sweep_state st = {.m = m};
    if (!ev || !lanes) {
        rc = CP_ENOMEM;
        goto out;
    }

    /* Lanes: the distinct (device, process, context, stream) keys, sorted,
     * so that stream ids that repeat across contexts (and context ids
     * across processes) stay apart. Kept sorted as they are found: a
     * binary search per record (and an insertion per new lane, of which
     * there are few) rather than sorting a key per record. Graphs alike. */
    size_t nl = 0, ng = 0, graphs_cap = 0;
    for (size_t i = 0; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (!cp_activity_is_device_work(a))
            continue;
        size_t at = lane_lower_bound(lanes, nl, a);
        if (!(at < nl && lane_is(&lanes[at], a))) {
            memmove(&lanes[at + 1], &lanes[at], (nl - at) * sizeof *lanes);
            lanes[at] = (cp_lane){.device = a->device, .process = a->process,
                                  .context = a->context, .stream = a->stream};
            nl++;
        }
        if (!a->graph_id || graph_find(graphs, ng, a->process, a->graph_id) < ng)
            continue;
        if (ng == graphs_cap) {
            size_t cap = graphs_cap ? 2 * graphs_cap : 8;
            cp_graph *p = realloc(graphs, cap * sizeof *p);
            if (!p) {
                rc = CP_ENOMEM;
                goto out;
            }
            graphs = p;
            graphs_cap = cap;
        }
        graphs[ng++] = (cp_graph){.process = a->process, .graph_id = a->graph_id};
        qsort(graphs, ng, sizeof *graphs, cp__graph_cmp);
    }
    st.lanes = lanes;
    st.graphs = graphs;
    if ((rc = cp__sweep_state_alloc(&st, nl, ng)) < 0)
        goto out;
    /* Lanes are sorted by device first: number the devices in that order. */
    for (size_t i = 0; i < nl; i++) {
        if (i == 0 || lanes[i].device != lanes[i - 1].device)
            m->devices++;
        st.lane_device[i] = m->devices - 1;
    }

    size_t ne = 0;
    copy_counts counted = {0};
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (!cp_activity_is_device_work(a))
            continue;
        uint64_t end = a->end < a->start ? a->start : a->end; /* a reversed record is empty */
        /* Every device activity's lane and graph were collected above. */
        uint32_t lane = (uint32_t)lane_lower_bound(lanes, nl, a);
        uint32_t graph = a->graph_id ? (uint32_t)graph_find(graphs, ng, a->process, a->graph_id) + 1 : 0;
        cp__count_activity(m, &lanes[lane], graph ? &graphs[graph - 1] : NULL, a, end, &counted);
        if (graph) {
            int fresh = cp__launch_set_add(&launches, a);
            if (fresh < 0) {
                rc = fresh;
                goto out;
            }
            graphs[graph - 1].launches += (uint32_t)fresh;
        }
        if (a->start < first)
            first = a->start;
        if (end > last)
            last = end;
        ev[ne++] = (sweep_event){a->start, lane, graph, 1, (uint8_t)a->kind, (uint8_t)a->copy_dir};
        ev[ne++] = (sweep_event){end, lane, graph, 0, (uint8_t)a->kind, (uint8_t)a->copy_dir};
    }
    qsort(ev, ne, sizeof *ev, event_cmp);
    st.prev = first;
    for (size_t i = 0; i < ne; i++)
        cp__sweep_apply(&st, ev[i].t, ev[i].lane, ev[i].graph, ev[i].is_start, ev[i].kind,
                        ev[i].dir);

    m->lanes = lanes;
    m->nlanes = nl;
    m->graphs = graphs;
    m->ngraphs = ng;
    lanes = NULL;
    graphs = NULL;
    long legacy = count_default_stream_serialization(t);
    if (legacy < 0) {
        rc = CP_ENOMEM;
        cp_metrics_free(m);
        goto out;
    }
    cp__sweep_finish(&st, first, last, opts ? opts->max_concurrent_kernels : 0, counted, legacy);
out:
    free(ev);
    free(lanes);
    free(graphs);
    cp__launch_set_free(&launches);
    cp__sweep_state_free(&st);
    return rc;
}
