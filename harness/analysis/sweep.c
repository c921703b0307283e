/*
 * The sweep that the whole-trace analysis (timeline.c) and the streaming
 * one (stream.c) share, behind sweep.h: counting each device activity
 * into its lane and graph, applying starts and ends in time order, and
 * the derivations after the last event (span, ratios, the ideal time, the
 * findings), with the orders of lanes and graphs that the metrics record
 * is sorted by. One copy of each step is what makes the two analyses give
 * the same metrics by construction; how the events come to be in time
 * order is each analysis's own.
 */
#include <cuproof/metrics.h>

#include <cuproof/error.h>

#include <cuproof/units.h>

#include "api_calls.h"
#include "coll_rows.h"
#include "sweep.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_pageable_copy(const cp_activity *a)
{
    return a->kind == CP_ACT_MEMCPY && (a->src == CP_MEM_PAGEABLE || a->dst == CP_MEM_PAGEABLE);
}

bool cp__is_pageable_async(const cp_activity *a)
{
    return is_pageable_copy(a) && a->async;
}

/* ---- Calls matched with their copies ---- */

static size_t slot_of(const copy_counts *c, uint32_t p1, uint32_t corr)
{
    return (size_t)((p1 * 2654435761u) ^ (corr * 2246822519u)) & (c->cap - 1);
}

/* Rebuilds the table at `cap` slots with the entries still waiting
 * (matched ones are dropped: nothing can match them again). */
static int slots_rehash(copy_counts *c, size_t cap)
{
    struct call_slot *old = c->slots;
    size_t n = c->cap;
    c->slots = calloc(cap, sizeof *c->slots);
    if (!c->slots) {
        c->slots = old;
        return CP_ENOMEM;
    }
    c->cap = cap;
    c->used = 0;
    for (size_t i = 0; i < n; i++) {
        if (!old[i].process1 || old[i].state == 3)
            continue;
        size_t j = slot_of(c, old[i].process1, old[i].correlation);
        while (c->slots[j].process1)
            j = (j + 1) & (cap - 1);
        c->slots[j] = old[i];
        c->used++;
    }
    free(old);
    return 0;
}

/* One half of a (copy, call) pair: `state` 1 a call of `call_ns`, 2 a
 * copy (`pageable_async` when it is one of those). Matched with the other
 * half when it is there (the host time of a pageable asynchronous copy's
 * call counted once), else kept until it comes. */
static int match_half(copy_counts *c, uint32_t process, uint32_t corr, uint8_t state,
                      bool pageable_async, uint64_t call_ns)
{
    if (c->used + 1 > c->cap / 2) {
        size_t waiting = 0;
        for (size_t i = 0; i < c->cap; i++)
            waiting += c->slots[i].process1 && c->slots[i].state != 3;
        size_t cap = c->cap ? c->cap : 64;
        while (waiting + 1 > cap / 4)
            cap *= 2;
        int rc = slots_rehash(c, cap);
        if (rc < 0)
            return rc;
    }
    uint32_t p1 = process + 1;
    size_t j = slot_of(c, p1, corr);
    for (; c->slots[j].process1; j = (j + 1) & (c->cap - 1)) {
        struct call_slot *s = &c->slots[j];
        if (s->process1 != p1 || s->correlation != corr)
            continue;
        if (s->state == 3 || s->state == state)
            return 0; /* matched already, or a second record of the same half */
        if (state == 2 ? pageable_async : s->pageable_async) {
            c->calls_matched++;
            c->calls_ns += state == 1 ? call_ns : s->call_ns;
        }
        s->state = 3;
        return 0;
    }
    c->slots[j] = (struct call_slot){p1, corr, state, pageable_async, call_ns};
    c->used++;
    return 0;
}

int cp__count_host(copy_counts *c, const cp_activity *a)
{
    if (a->kind != CP_ACT_RUNTIME || !a->name)
        return 0;
    if (cp_api_is(a->name, CP_API_STREAM_WAIT_EVENT))
        c->wait_event_calls++;
    /* cudaMemcpy*, cuMemcpy*: the calls that may issue a copy. */
    if (!cp_api_is(a->name, CP_API_COPY_CALL))
        return 0;
    return match_half(c, a->process, a->correlation, 1, false,
                      a->end > a->start ? a->end - a->start : 0);
}

void cp__copy_counts_free(copy_counts *c)
{
    free(c->slots);
    c->slots = NULL;
    c->cap = c->used = 0;
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
size_t cp__lane_lower_bound(const cp_lane *lanes, size_t n, const cp_activity *a)
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

bool cp__lane_is(const cp_lane *l, const cp_activity *a)
{
    return lane_key_cmp(l, a) == 0;
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

/* cuda_memcpy_async, from what was measured: how many, the host's time
 * inside their calls, how much of their copy time kernels overlapped;
 * the advice follows from those (a program whose pageable copies
 * overlapped kernels for 84% of their time was once told they "cannot
 * overlap"). */
static void pageable_finding(cp_metrics *m, const copy_counts *copies)
{
    uint32_t n = copies->async_pageable;
    char in_calls[256] = "", copy[32], share[32];
    cp_fmt_ms((double)m->pageable_async_ns / 1e6, copy, sizeof copy);
    double overlap = m->pageable_async_ns
                         ? (double)m->pageable_async_overlap_ns / (double)m->pageable_async_ns
                         : 0.0;
    cp_fmt_percent(overlap, share, sizeof share);
    if (copies->calls_matched) {
        char host[32], whose[48] = "their";
        cp_fmt_ms((double)copies->calls_ns / 1e6, host, sizeof host);
        if (copies->calls_matched != n)
            snprintf(whose, sizeof whose, "the %u traced", copies->calls_matched);
        snprintf(in_calls, sizeof in_calls,
                 "the host thread spent %s inside %s calls, which return only once the driver "
                 "has staged the data, so it could not queue work meanwhile; ",
                 host, whose);
    }
    add_finding(m, "cuda_memcpy_async", n,
                "%u asynchronous %s from pageable host memory: %skernels overlapped %s of their "
                "%s on the device. Pinned host memory (cudaMallocHost, pin_memory()) lets the "
                "calls return at once",
                n, cp_unit_agree("copies", n), in_calls, share, copy);
}

static void derive_findings(cp_metrics *m, const copy_counts *copies, long legacy_serialised)
{
    uint32_t async_pageable = copies->async_pageable, sync_copies = copies->sync;
    uint32_t lanes_with_work = 0, lanes_with_kernels = 0;
    for (size_t i = 0; i < m->nlanes; i++) {
        lanes_with_work += m->lanes[i].kernels + m->lanes[i].copies + m->lanes[i].memsets > 0;
        /* A graph's kernels run in the order of its edges, which the
         * trace does not hold: only kernels launched one by one count. */
        lanes_with_kernels += m->lanes[i].kernels > m->lanes[i].graph_kernels;
    }
    if (async_pageable)
        pageable_finding(m, copies);

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

    /* Kernels on several streams that never ran at once may have been
     * ordered by the program itself: by event waits (cudaStreamWaitEvent)
     * or a graph's edges. Only where neither is in the trace is it
     * something else that serialised them. */
    if (lanes_with_kernels > 1 && m->peak_concurrent_kernels == 1 && copies->wait_event_calls == 0)
        add_finding(m, "serialized_streams", lanes_with_kernels,
                    "kernels were launched on %u streams, outside any graph and with no event "
                    "wait between streams, but never ran concurrently (peak 1): something "
                    "serialised the streams (the legacy default stream, CUDA_LAUNCH_BLOCKING, "
                    "a synchronisation between launches, or kernels that each fill the GPU)",
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

int cp__sweep_state_alloc(sweep_state *st, size_t nl, size_t ng)
{
    st->lane_open = calloc(nl + 1, sizeof *st->lane_open);
    st->lane_since = calloc(nl + 1, sizeof *st->lane_since);
    st->lane_device = calloc(nl + 1, sizeof *st->lane_device);
    st->device_open = calloc(nl + 1, sizeof *st->device_open);
    st->graph_open = calloc(ng + 1, sizeof *st->graph_open);
    st->graph_since = calloc(ng + 1, sizeof *st->graph_since);
    st->dev = calloc(nl + 1, sizeof *st->dev);
    st->dev_out = calloc(nl + 1, sizeof *st->dev_out);
    st->nlanes = nl;
    return st->lane_open && st->lane_since && st->lane_device && st->device_open &&
                   st->graph_open && st->graph_since && st->dev && st->dev_out
               ? 0
               : CP_ENOMEM;
}

void cp__sweep_state_free(sweep_state *st)
{
    free(st->steps.bounds);
    free(st->steps.parts);
    free(st->steps.proc_first);
    free(st->steps.proc_dev);
    free(st->lane_open);
    free(st->lane_since);
    free(st->lane_device);
    free(st->device_open);
    free(st->graph_open);
    free(st->graph_since);
    free(st->dev);
    free(st->dev_out);
}

/* The segment of device d since its previous event, in which its counts
 * held: what was in flight adds the segment's length; nothing in flight
 * is idle time and, past the threshold, a gap. Its first event only starts
 * its span, so time before its first and after its last work is never
 * its idle time. */
static void device_segment(sweep_device *dv, cp_device_metrics *o, uint64_t t, uint64_t threshold)
{
    if (!dv->started) {
        dv->started = true;
        dv->prev = t;
        return;
    }
    uint64_t seg = t - dv->prev;
    if (seg == 0)
        return;
    if (dv->kernels > 0) {
        o->kernel_busy_ns += seg;
        dv->weighted_kernels += seg * (uint64_t)dv->kernels;
        if ((uint32_t)dv->kernels > o->peak_concurrent_kernels)
            o->peak_concurrent_kernels = (uint32_t)dv->kernels;
    }
    if (dv->copies > 0)
        o->copy_busy_ns += seg;
    if (dv->kernels > 0 && dv->copies > 0)
        o->copy_kernel_overlap_ns += seg;
    if (dv->h2d > 0 && dv->d2h > 0)
        o->h2d_d2h_overlap_ns += seg;
    if (dv->pageable_async > 0) {
        dv->pageable_async_ns += seg;
        if (dv->kernels > 0)
            dv->pageable_async_overlap_ns += seg;
    }
    /* Compute kernels are the kernels that are not communication. */
    if (dv->kernels <= dv->comm)
        dv->compute_free += seg;
    if (dv->comm > 0) {
        o->comm_busy_ns += seg;
        if (dv->kernels > dv->comm)
            o->comm_compute_overlap_ns += seg;
    }
    if (dv->busy == 0) {
        o->idle_ns += seg;
        if (seg > o->largest_gap_ns)
            o->largest_gap_ns = seg;
        if (seg > threshold)
            o->gaps_over_threshold++;
    }
    o->span_ns += seg;
    dv->prev = t;
}

/* ---- Per step ---- */

static int bound_cmp(const void *a, const void *b)
{
    const step_bound *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->is_end != y->is_end)
        return x->is_end ? 1 : -1; /* an empty window opens before it closes */
    return (x->window > y->window) - (x->window < y->window);
}

int cp__sweep_steps_init(sweep_state *st, const cp_step_window *w, size_t n)
{
    sweep_steps *s = &st->steps;
    if (n == 0)
        return 0;
    uint32_t np = 0;
    for (size_t i = 0; i < st->nlanes; i++)
        if (st->lanes[i].process + 1 > np)
            np = st->lanes[i].process + 1;
    s->windows = w;
    s->nwindows = n;
    s->nprocesses = np;
    s->bounds = malloc(2 * n * sizeof *s->bounds);
    s->parts = calloc(n, sizeof *s->parts);
    s->proc_first = calloc((size_t)np + 1, sizeof *s->proc_first);
    /* At most one entry per lane: a process's distinct devices. */
    s->proc_dev = malloc((st->nlanes + 1) * sizeof *s->proc_dev);
    if (!s->bounds || !s->parts || !s->proc_first || !s->proc_dev)
        return CP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        s->bounds[2 * i] = (step_bound){w[i].start, (uint32_t)i, false};
        s->bounds[2 * i + 1] = (step_bound){w[i].end < w[i].start ? w[i].start : w[i].end,
                                            (uint32_t)i, true};
    }
    qsort(s->bounds, 2 * n, sizeof *s->bounds, bound_cmp);
    /* Lanes come sorted by device, then process: a process's devices are
     * found in device order, each once. */
    size_t k = 0;
    for (uint32_t p = 0; p < np; p++) {
        s->proc_first[p] = (uint32_t)k;
        for (size_t i = 0; i < st->nlanes; i++) {
            if (st->lanes[i].process != p)
                continue;
            uint32_t d = st->lane_device[i];
            if (k > s->proc_first[p] && s->proc_dev[k - 1] == d)
                continue;
            s->proc_dev[k++] = d;
        }
    }
    s->proc_first[np] = (uint32_t)k;
    for (size_t i = 0; i < n; i++)
        s->parts[i].devices = w[i].process < np ? s->proc_first[w[i].process + 1] -
                                                      s->proc_first[w[i].process]
                                                : 0;
    return 0;
}

/* Device dv's figures up to time t (no earlier than its last event),
 * without changing it: what its counts held since then added. */
static cp_step_part device_at(const sweep_device *dv, const cp_device_metrics *o, uint64_t t)
{
    cp_step_part c = {
        .kernel_busy_ns = o->kernel_busy_ns,
        .copy_busy_ns = o->copy_busy_ns,
        .copy_kernel_overlap_ns = o->copy_kernel_overlap_ns,
        .comm_busy_ns = o->comm_busy_ns,
        .comm_compute_overlap_ns = o->comm_compute_overlap_ns,
        .busy_ns = o->span_ns - o->idle_ns,
        .kernel_sum_ns = dv->weighted_kernels,
        .kernels = dv->kernel_starts,
    };
    uint64_t seg = dv->started && t > dv->prev ? t - dv->prev : 0;
    if (seg == 0)
        return c;
    if (dv->kernels > 0) {
        c.kernel_busy_ns += seg;
        c.kernel_sum_ns += seg * (uint64_t)dv->kernels;
    }
    if (dv->copies > 0)
        c.copy_busy_ns += seg;
    if (dv->kernels > 0 && dv->copies > 0)
        c.copy_kernel_overlap_ns += seg;
    if (dv->comm > 0) {
        c.comm_busy_ns += seg;
        if (dv->kernels > dv->comm)
            c.comm_compute_overlap_ns += seg;
    }
    if (dv->busy > 0)
        c.busy_ns += seg;
    return c;
}

/* Takes every bound up to time t (before the events at t are applied,
 * so that a window is [start, end)). Sums wrap modulo 2^64 between a
 * window's start and its end, which leaves the difference exact. */
static void steps_take(sweep_state *st, uint64_t t)
{
    sweep_steps *s = &st->steps;
    for (; s->next < 2 * s->nwindows && s->bounds[s->next].t <= t; s->next++) {
        const step_bound *b = &s->bounds[s->next];
        uint32_t p = s->windows[b->window].process;
        if (p >= s->nprocesses)
            continue; /* a process with no device work: nothing to measure */
        cp_step_part *part = &s->parts[b->window];
        for (uint32_t k = s->proc_first[p]; k < s->proc_first[p + 1]; k++) {
            uint32_t d = s->proc_dev[k];
            cp_step_part c = device_at(&st->dev[d], &st->dev_out[d], b->t);
#define CP_STEP_SUM_(f) part->f = b->is_end ? part->f + c.f : part->f - c.f;
            CP_STEP_SUM_(kernel_busy_ns)
            CP_STEP_SUM_(copy_busy_ns)
            CP_STEP_SUM_(copy_kernel_overlap_ns)
            CP_STEP_SUM_(comm_busy_ns)
            CP_STEP_SUM_(comm_compute_overlap_ns)
            CP_STEP_SUM_(busy_ns)
            CP_STEP_SUM_(kernel_sum_ns)
            CP_STEP_SUM_(kernels)
#undef CP_STEP_SUM_
        }
    }
}

void cp__sweep_apply(sweep_state *st, uint64_t t, uint32_t lane, uint32_t graph, bool is_start,
                     uint8_t kind, uint8_t dir, bool comm, bool pageable_async, uint32_t coll)
{
    cp_metrics *m = st->m;
    if (st->steps.nwindows)
        steps_take(st, t);
    /* Between consecutive event times the counts are constant, so each
     * segment adds its length to whatever is in flight: across devices,
     * only the time with several busy and graph-launched time. */
    uint64_t seg = t - st->prev;
    if (seg > 0) {
        if (st->devices_busy > 1)
            m->multi_device_ns += seg;
        if (st->graphs_busy > 0)
            m->graph_busy_ns += seg;
        st->prev = t;
    }
    /* Everything else on the event's own device. */
    uint32_t di = st->lane_device[lane];
    sweep_device *dv = &st->dev[di];
    device_segment(dv, &st->dev_out[di], t, m->gap_threshold_ns);
    if (coll && st->coll) {
        struct coll_slot *k = &st->coll[coll - 1];
        if (is_start)
            k->free_at_start = dv->compute_free;
        else
            k->exposed_ns = dv->compute_free - k->free_at_start;
    }
    long d = is_start ? 1 : -1;
    uint64_t signed_t = is_start ? (uint64_t)0 - t : t; /* sum of ends minus starts */
    dv->busy += d;
    if (kind == CP_ACT_KERNEL) {
        dv->kernels += d;
        dv->kernel_starts += is_start;
        dv->kernel_sum += signed_t;
        if (comm)
            dv->comm += d;
    } else if (kind == CP_ACT_MEMCPY) {
        dv->copies += d;
        if (pageable_async)
            dv->pageable_async += d;
        if (dir == CP_COPY_HTOD) {
            dv->h2d += d;
            dv->h2d_sum += signed_t;
        } else if (dir == CP_COPY_DTOH) {
            dv->d2h += d;
            dv->d2h_sum += signed_t;
        }
    }
    /* Per-lane busy time: count this lane's open intervals and add the time
     * from its first opening to its last closing. */
    int32_t *open = &st->lane_open[lane];
    int32_t *device = &st->device_open[di];
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

/* A device's ideal time (see cp_metrics) and the resource that bounds it;
 * `limit` 0 lets the device's own peak stand in for its concurrency. */
static void device_ideal(cp_device_metrics *o, uint32_t limit)
{
    uint32_t lim = limit ? limit : o->peak_concurrent_kernels;
    o->ideal_ns = lim ? o->kernel_sum_ns / lim : o->kernel_sum_ns;
    o->bound = o->kernel_sum_ns ? "kernels" : "none";
    if (o->h2d_sum_ns > o->ideal_ns) {
        o->ideal_ns = o->h2d_sum_ns;
        o->bound = "h2d copies";
    }
    if (o->d2h_sum_ns > o->ideal_ns) {
        o->ideal_ns = o->d2h_sum_ns;
        o->bound = "d2h copies";
    }
    o->efficiency = o->span_ns ? (double)o->ideal_ns / (double)o->span_ns : 0.0;
}

void cp__sweep_finish(sweep_state *st, uint64_t first, uint64_t last, uint32_t max_concurrent,
                      const copy_counts *copies, long legacy_serialised)
{
    cp_metrics *m = st->m;
    /* The windows that end after the last event: nothing is in flight
     * then, so the figures stand where they are. */
    if (st->steps.nwindows) {
        steps_take(st, UINT64_MAX);
        m->step_parts = st->steps.parts;
        m->nstep_parts = st->steps.nwindows;
        st->steps.parts = NULL;
    }
    m->span_ns = last - first;
    m->pageable_async_calls = copies->calls_matched;
    m->pageable_async_call_ns = copies->calls_ns;
    for (size_t j = 0; j < st->nlanes; j++)
        st->dev_out[st->lane_device[j]].device = st->lanes[j].device;
    /* Each device's own figures, then the program's as their summary. */
    uint64_t weighted = 0, device_spans = 0;
    m->ideal_ns = 0;
    m->bound = m->kernels ? "kernels" : "none";
    for (uint32_t i = 0; i < m->devices; i++) {
        cp_device_metrics *o = &st->dev_out[i];
        const sweep_device *dv = &st->dev[i];
        o->kernel_sum_ns = dv->kernel_sum;
        o->h2d_sum_ns = dv->h2d_sum;
        o->d2h_sum_ns = dv->d2h_sum;
        o->copy_kernel_overlap_ratio =
            o->copy_busy_ns ? (double)o->copy_kernel_overlap_ns / (double)o->copy_busy_ns : 0.0;
        o->mean_concurrent_kernels =
            o->kernel_busy_ns ? (double)dv->weighted_kernels / (double)o->kernel_busy_ns : 0.0;
        device_ideal(o, max_concurrent);
        o->exposed_comm_ns = o->comm_busy_ns - o->comm_compute_overlap_ns;
        o->comm_compute_overlap_ratio =
            o->comm_busy_ns ? (double)o->comm_compute_overlap_ns / (double)o->comm_busy_ns : 0.0;
        o->exposed_comm_share = o->span_ns ? (double)o->exposed_comm_ns / (double)o->span_ns : 0.0;
        m->comm_busy_ns += o->comm_busy_ns;
        m->comm_compute_overlap_ns += o->comm_compute_overlap_ns;
        device_spans += o->span_ns;
        m->kernel_busy_ns += o->kernel_busy_ns;
        m->copy_busy_ns += o->copy_busy_ns;
        m->copy_kernel_overlap_ns += o->copy_kernel_overlap_ns;
        m->h2d_d2h_overlap_ns += o->h2d_d2h_overlap_ns;
        m->pageable_async_ns += dv->pageable_async_ns;
        m->pageable_async_overlap_ns += dv->pageable_async_overlap_ns;
        m->idle_ns += o->idle_ns;
        m->gaps_over_threshold += o->gaps_over_threshold;
        weighted += dv->weighted_kernels;
        if (o->peak_concurrent_kernels > m->peak_concurrent_kernels)
            m->peak_concurrent_kernels = o->peak_concurrent_kernels;
        if (o->largest_gap_ns > m->largest_gap_ns)
            m->largest_gap_ns = o->largest_gap_ns;
        if (o->ideal_ns > m->ideal_ns || i == 0) {
            m->ideal_ns = o->ideal_ns;
            m->bound = o->bound;
        }
    }
    m->concurrency_limit = max_concurrent ? max_concurrent : m->peak_concurrent_kernels;
    m->efficiency = m->span_ns ? (double)m->ideal_ns / (double)m->span_ns : 0.0;
    m->copy_kernel_overlap_ratio =
        m->copy_busy_ns ? (double)m->copy_kernel_overlap_ns / (double)m->copy_busy_ns : 0.0;
    m->mean_concurrent_kernels =
        m->kernel_busy_ns ? (double)weighted / (double)m->kernel_busy_ns : 0.0;
    /* Device time over device time: summed over devices, as the busy
     * times are, so that the share stays within 0..1 with several. */
    m->exposed_comm_ns = m->comm_busy_ns - m->comm_compute_overlap_ns;
    m->comm_compute_overlap_ratio =
        m->comm_busy_ns ? (double)m->comm_compute_overlap_ns / (double)m->comm_busy_ns : 0.0;
    m->exposed_comm_share = device_spans ? (double)m->exposed_comm_ns / (double)device_spans : 0.0;
    m->device_metrics = st->dev_out;
    st->dev_out = NULL;
    for (size_t i = 0; i < m->ngraphs; i++)
        m->graph_launches += m->graphs[i].launches;
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

int cp__count_activity(cp_metrics *m, cp_lane *l, cp_graph *g, const cp_activity *a,
                       uint64_t end, copy_counts *counted)
{
    /* A later piece of a clipped record adds its time, not a record. */
    uint32_t one = a->piece ? 0 : 1;
    if (a->kind == CP_ACT_KERNEL) {
        l->kernels += one;
        l->graph_kernels += a->graph_id ? one : 0;
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
        }
        bool pa = cp__is_pageable_async(a);
        counted->async_pageable += pa && one;
        /* Every copy meets its call, so that no call waits for ever. */
        if (one) {
            int rc = match_half(counted, a->process, a->correlation, 2, pa, 0);
            if (rc < 0)
                return rc;
        }
        counted->sync += !a->async && one;
    } else {
        l->memsets += one;
        m->memsets += one;
        if (g)
            g->memsets += one;
    }
    return 0;
}
