/*
 * The whole-trace analysis (cp_timeline_analyse, cuproof/metrics.h): a
 * trace held in memory, its lanes and graphs collected in their sorted
 * order, every start and end sorted at once and fed to the sweep it
 * shares with the streaming analysis (sweep.c), and
 * default_stream_serialization answered from the merged union of the
 * other streams' intervals, which needs the whole trace at hand. Traces
 * too large to hold go to stream.c instead, which gives the same metrics.
 */
#include <cuproof/metrics.h>

#include <cuproof/error.h>

#include "coll_rows.h"
#include "sweep.h"

#include <stdlib.h>
#include <string.h>

/* One start or end of a device interval. */
typedef struct sweep_event {
    uint64_t t;
    uint32_t lane;
    uint32_t graph; /* index + 1 in the trace's graphs; 0: not graph-launched */
    uint8_t is_start;
    uint8_t kind; /* cp_act_kind */
    uint8_t dir;  /* cp_copy_dir */
    uint8_t comm; /* a communication kernel (cp_activity_class) */
    uint8_t pageable_async; /* an asynchronous copy from pageable memory */
    uint32_t coll; /* a communication kernel's slot + 1 (coll_rows.h); 0: none */
} sweep_event;

static int event_cmp(const void *a, const void *b)
{
    const sweep_event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    /* Ends before starts at one instant: intervals are half-open. */
    return (int)x->is_start - (int)y->is_start;
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

/* The index of (process, graph_id) among n sorted graphs, or n. */
static size_t graph_find(const cp_graph *g, size_t n, uint32_t process, uint32_t graph_id)
{
    if (n == 0) /* bsearch takes no NULL array, even an empty one */
        return 0;
    cp_graph key = {.process = process, .graph_id = graph_id};
    const cp_graph *hit = bsearch(&key, g, n, sizeof *g, cp__graph_cmp);
    return hit ? (size_t)(hit - g) : n;
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
    kernel_table kernels = {0};
    coll_rows coll = {0};
    sweep_state st = {.m = m};
    copy_counts counted = {0};
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
        size_t at = cp__lane_lower_bound(lanes, nl, a);
        if (!(at < nl && cp__lane_is(&lanes[at], a))) {
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
    if (opts && (rc = cp__sweep_steps_init(&st, opts->steps, opts->nsteps)) < 0)
        goto out;

    size_t ne = 0;
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (!cp_activity_is_device_work(a)) {
            /* An NCCL call's range: its size, for its kernel's row. */
            if ((rc = cp__count_host(&counted, a)) < 0 || (rc = cp__coll_call(&coll, a)) < 0)
                goto out;
            continue;
        }
        uint64_t end = a->end < a->start ? a->start : a->end; /* a reversed record is empty */
        /* Every device activity's lane and graph were collected above. */
        uint32_t lane = (uint32_t)cp__lane_lower_bound(lanes, nl, a);
        uint32_t graph = a->graph_id ? (uint32_t)graph_find(graphs, ng, a->process, a->graph_id) + 1 : 0;
        if ((rc = cp__count_activity(m, &lanes[lane], graph ? &graphs[graph - 1] : NULL, a, end,
                                     &counted)) < 0)
            goto out;
        int cls = cp__kernel_table_add(&kernels, a, end, opts);
        if (cls < 0) {
            rc = cls;
            goto out;
        }
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
        uint8_t comm = cls == CP_CLASS_COMMUNICATION, pa = cp__is_pageable_async(a);
        uint32_t slot = 0;
        if (comm) {
            long k = cp__coll_add(&coll, a, end);
            if (k < 0) {
                rc = (int)k;
                goto out;
            }
            slot = (uint32_t)k + 1;
        }
        ev[ne++] = (sweep_event){a->start, lane, graph, 1, (uint8_t)a->kind, (uint8_t)a->copy_dir,
                                 comm, pa, slot};
        ev[ne++] = (sweep_event){end, lane, graph, 0, (uint8_t)a->kind, (uint8_t)a->copy_dir,
                                 comm, pa, slot};
    }
    qsort(ev, ne, sizeof *ev, event_cmp);
    st.prev = first;
    st.coll = coll.slots;
    for (size_t i = 0; i < ne; i++)
        cp__sweep_apply(&st, ev[i].t, ev[i].lane, ev[i].graph, ev[i].is_start, ev[i].kind,
                        ev[i].dir, ev[i].comm, ev[i].pageable_async, ev[i].coll);

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
    cp__sweep_finish(&st, first, last, opts ? opts->max_concurrent_kernels : 0, &counted, legacy);
    cp__kernel_table_finish(&kernels, m);
    if ((rc = cp__coll_finish(&coll, m)) < 0)
        cp_metrics_free(m);
out:
    cp__copy_counts_free(&counted);
    cp__kernel_table_free(&kernels);
    cp__coll_free(&coll);
    free(ev);
    free(lanes);
    free(graphs);
    cp__launch_set_free(&launches);
    cp__sweep_state_free(&st);
    return rc;
}

