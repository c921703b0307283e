/*
 * The sweep that both analyses share (its code in sweep.c): the
 * whole-trace one (timeline.c, which sorts every start and end in memory)
 * and the streaming one (stream.c, which sorts starts in bounded chunks
 * and keeps the ends of what is in flight in a heap). Both feed the same
 * events, in time order, to sweep_apply, and finish with the same
 * derivations, so that the two give the same metrics by construction
 * where they can and a test holds them equal where they cannot (the order
 * of events, the lanes).
 */
#ifndef CUPROOF_SWEEP_H
#define CUPROOF_SWEEP_H

#include <cuproof/metrics.h>

#include <stdbool.h>
#include <stdint.h>

/* One device's own sweep: overlap, concurrency, idle time and gaps
 * happen on one device (a copy engine of GPU 1 and an SM of GPU 0 share
 * nothing), so each device keeps its counts in flight and the time they
 * held, from its own first event to its own last. */
typedef struct sweep_device {
    long kernels, copies, h2d, d2h, busy;
    long comm; /* communication kernels in flight (kernels counts them too) */
    bool started;
    uint64_t prev; /* its last event */
    uint64_t weighted_kernels;
    /* Summed interval times as the sum of ends minus the sum of starts
     * (modulo 2^64, exact once every interval has ended). */
    uint64_t kernel_sum, h2d_sum, d2h_sum;
    /* Asynchronous copies from pageable memory in flight, the time one
     * was, and the part of it a kernel was too (cuda_memcpy_async's
     * evidence). */
    long pageable_async;
    uint64_t pageable_async_ns, pageable_async_overlap_ns;
    /* Its time with no compute kernel in flight, so far: a communication
     * kernel's exposed time is its growth over the kernel (coll_rows.h). */
    uint64_t compute_free;
    uint64_t kernel_starts; /* kernels started so far (per step's kernels) */
} sweep_device;

/* Per step (cp_timeline_opts.steps): each window's start and end in time
 * order; at each, the cumulative figures of its process's devices are
 * taken (nothing of the sweep changes) and subtracted from (start) or
 * added to (end) its part, so that a part holds what happened inside its
 * window. Memory: two boundaries a window and its process's devices. */
typedef struct step_bound {
    uint64_t t;
    uint32_t window;
    bool is_end;
} step_bound;

typedef struct sweep_steps {
    const cp_step_window *windows;
    size_t nwindows;
    step_bound *bounds; /* 2 * nwindows, by time (a start before an end at one time) */
    size_t next;        /* the first bound not yet taken */
    cp_step_part *parts;
    /* Each process's devices (sweep numbering), from the lanes:
     * proc_dev[proc_first[p] .. proc_first[p + 1]). */
    uint32_t *proc_first, *proc_dev;
    uint32_t nprocesses;
} sweep_steps;

/* The counts in flight, and the per-lane, per-device and per-graph state
 * that turns opening and closing into busy time. */
typedef struct sweep_state {
    cp_metrics *m;
    /* devices_busy: devices with work in flight; graphs_busy:
     * graph-launched intervals in flight. */
    long devices_busy, graphs_busy;
    uint64_t prev; /* the time of the last event applied */
    size_t nlanes;
    sweep_device *dev;          /* per device, numbered 0.. in lane order */
    cp_device_metrics *dev_out; /* per device; handed to m at the finish */
    cp_lane *lanes;
    int32_t *lane_open;
    uint64_t *lane_since;
    uint32_t *lane_device; /* each lane's device, numbered 0.. in lane order */
    int32_t *device_open;  /* per device, its lanes with work open */
    cp_graph *graphs;      /* per graph (index + 1 in events; 0: none) */
    int32_t *graph_open;
    uint64_t *graph_since;
    struct coll_slot *coll; /* the communication kernels' slots (coll_rows.h); may be NULL */
    sweep_steps steps;      /* empty without windows */
} sweep_state;

/* Allocates the per-lane, per-device and per-graph state for nl lanes and
 * ng graphs (st->m, lanes and graphs are the caller's). Returns 0 or
 * CP_ENOMEM; cp__sweep_state_free frees what it allocated, either way. */
int cp__sweep_state_alloc(sweep_state *st, size_t nl, size_t ng);
void cp__sweep_state_free(sweep_state *st);

/* Readies the per-step sums for n windows (none: nothing), once the lanes,
 * their devices (st->lane_device) and st->m->devices are set and before
 * the first event. Returns 0 or CP_ENOMEM; the state's free releases it,
 * and cp__sweep_finish hands the parts to st->m (step_parts). */
int cp__sweep_steps_init(sweep_state *st, const cp_step_window *w, size_t n);

/* Applies one start or end at time t (not before the previous event's):
 * the segment since the previous event adds its length to whatever was in
 * flight, then the event changes what is. A zero-length interval's end may
 * come before its start: counts dip below zero for an instant in which no
 * time passes. `coll`: a communication kernel's slot + 1 in st->coll (0:
 * none), whose exposed time its start and end measure. */
void cp__sweep_apply(sweep_state *st, uint64_t t, uint32_t lane, uint32_t graph, bool is_start,
                     uint8_t kind, uint8_t dir, bool comm, bool pageable_async, uint32_t coll);

/* After the last event: each device's metrics, the program's as their
 * summary (sums of device time, the largest peak and gap, the largest
 * device's ideal time: DESIGN.md, "Devices"), span, ratios and the findings
 * (legacy_serialised: the count for default_stream_serialization, from
 * whichever analysis counted it). */
/* What the findings count beside the sweep, whatever the order in which
 * the records come: copies by kind, the host calls that waited on
 * events, and each asynchronous pageable copy matched with the API call
 * that issued it (the same process and correlation id) for the time the
 * host spent inside that call. Every copy is matched with its call, so
 * that neither stays: the match keeps only the copies and calls whose
 * other half has not come yet (open addressing on (process + 1,
 * correlation)), and its memory grows with those, not with the records. */
typedef struct copy_counts {
    uint32_t async_pageable, sync;
    uint32_t wait_event_calls; /* cudaStreamWaitEvent, cuStreamWaitEvent */
    uint32_t calls_matched;    /* async pageable copies whose call is in the trace */
    uint64_t calls_ns;         /* the host time inside those calls */
    struct call_slot {
        uint32_t process1, correlation; /* process + 1; 0: empty */
        uint8_t state;                  /* 1 a call waiting, 2 a copy waiting, 3 matched */
        bool pageable_async;            /* a waiting copy: from pageable memory, asynchronous */
        uint64_t call_ns;
    } *slots;
    size_t cap, used; /* used: slots not empty (matched ones included) */
} copy_counts;

/* A host record (an API call): counted for the findings when it waits on
 * an event or may issue a copy. Returns 0 or CP_ENOMEM. */
int cp__count_host(copy_counts *c, const cp_activity *a);
void cp__copy_counts_free(copy_counts *c);

/* The fields of a device activity the sweep needs besides its kind. */
bool cp__is_pageable_async(const cp_activity *a);

void cp__sweep_finish(sweep_state *st, uint64_t first, uint64_t last, uint32_t max_concurrent,
                      const copy_counts *copies, long legacy_serialised);

/* Counts device activity `a` (its end already no earlier than its start)
 * into its lane, its graph (NULL when not graph-launched) and the totals;
 * copies also into the counts the findings need. Returns 0 or CP_ENOMEM. */
int cp__count_activity(cp_metrics *m, cp_lane *l, cp_graph *g, const cp_activity *a, uint64_t end,
                       copy_counts *counted);

/* The distinct launches of graphs seen so far, keyed by the process, the
 * graph and the correlation id of the cudaGraphLaunch that ran the work:
 * memory grows with the launches, not with the records. */
typedef struct launch_set {
    uint32_t (*slots)[3]; /* process + 1 (0: empty), graph id, correlation */
    size_t cap, n;
} launch_set;

/* Adds the launch of graph-launched activity `a`: 1 when it is new, 0
 * when seen before, CP_ENOMEM. */
int cp__launch_set_add(launch_set *s, const cp_activity *a);
void cp__launch_set_free(launch_set *s);

/* The kernel breakdown as it grows (kernels.c): per distinct name, with
 * an open-addressing index (item + 1; 0 empty). */
typedef struct kernel_table {
    cp_kernel_stat *items;
    size_t n, cap;
    uint32_t *index;
    size_t index_cap;
} kernel_table;

/* Counts kernel `a` (other kinds are only classed; `end` no earlier than
 * its start) under its name, classed by o's pattern when the name is
 * new. Returns a's class (cp_work_class: the bit each analysis keeps with
 * its events is whether it is CP_CLASS_COMMUNICATION), or CP_ENOMEM. */
int cp__kernel_table_add(kernel_table *t, const cp_activity *a, uint64_t end,
                         const cp_timeline_opts *o);
/* Hands the table, sorted, to m (kernel_stats) and empties it. */
void cp__kernel_table_finish(kernel_table *t, cp_metrics *m);
void cp__kernel_table_free(kernel_table *t);

/* Orders cp_lane entries by (device, process, context, stream), as the
 * report lists them (qsort). */
int cp__lane_cmp(const void *a, const void *b);

/* The first of n lanes in that order not before a's key (n when all are),
 * and whether lane l is a's: how the whole-trace analysis files a record
 * under its lane and cp_metrics_lane_index finds it. */
size_t cp__lane_lower_bound(const cp_lane *lanes, size_t n, const cp_activity *a);
bool cp__lane_is(const cp_lane *l, const cp_activity *a);

/* Orders cp_graph entries by (process, graph_id) (qsort). */
int cp__graph_cmp(const void *a, const void *b);

#endif
