/*
 * The timeline model: activity records as the tracer (or a recorded trace)
 * delivers them, and the metrics that DESIGN.md defines, computed by one
 * sort-and-sweep pass. Nothing here touches CUDA, so the analysis is tested
 * on hand-built intervals and on traces recorded on real GPUs.
 */
#ifndef CUPROOF_TIMELINE_H
#define CUPROOF_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    CP_ACT_KERNEL = 0,
    CP_ACT_MEMCPY,
    CP_ACT_MEMSET,
    CP_ACT_RUNTIME, /* a host-side runtime API call, kept for launch correlation */
    CP_ACT_RANGE,   /* one of the harness's own NVTX phases, stamped on CUPTI's clock */
    CP_ACT_KIND_COUNT
} cp_act_kind;

typedef enum {
    CP_COPY_UNKNOWN = 0,
    CP_COPY_HTOD,
    CP_COPY_DTOH,
    CP_COPY_DTOD,
    CP_COPY_HTOH,
    CP_COPY_PTOP,
    CP_COPY_DIR_COUNT
} cp_copy_dir;

typedef enum {
    CP_MEM_UNKNOWN = 0,
    CP_MEM_PAGEABLE,
    CP_MEM_PINNED,
    CP_MEM_DEVICE,
    CP_MEM_ARRAY,
    CP_MEM_MANAGED,
    CP_MEM_KIND_COUNT
} cp_mem_kind;

typedef struct cp_activity {
    cp_act_kind kind;
    uint64_t start, end; /* ns, CUPTI's clock */
    uint32_t device, context, stream;
    uint32_t correlation;
    uint64_t bytes;          /* copies and memsets */
    cp_copy_dir copy_dir;    /* copies */
    cp_mem_kind src, dst;    /* copies: the memory on each side */
    bool async;              /* copies: issued by an asynchronous call */
    uint32_t depth;          /* ranges: nesting level, 0 outermost */
    const char *name;        /* kernel, API or range name; interned in the trace */
} cp_activity;

typedef struct cp_trace {
    cp_activity *items;
    size_t n, cap;
    char **names; /* interned strings, owned */
    size_t nnames, names_cap;
    uint64_t dropped_records;
} cp_trace;

void cp_trace_init(cp_trace *t);
void cp_trace_free(cp_trace *t);
void cp_trace_clear(cp_trace *t);

/* Appends a copy of `a`, interning its name. Returns 0 or CP_ENOMEM. */
int cp_trace_add(cp_trace *t, const cp_activity *a);

/* Returns the interned copy of `s` (NULL for NULL), or NULL when out of memory. */
const char *cp_trace_intern(cp_trace *t, const char *s);

/* Names for the enums, as written to JSON; *_from_name return -1 if unknown. */
const char *cp_act_kind_name(cp_act_kind k);
const char *cp_copy_dir_name(cp_copy_dir d);
const char *cp_mem_kind_name(cp_mem_kind m);
int cp_act_kind_from_name(const char *s);
int cp_copy_dir_from_name(const char *s);
int cp_mem_kind_from_name(const char *s);

typedef struct cp_lane {
    uint32_t device, context, stream;
    uint64_t busy_ns; /* union of this lane's device intervals */
    uint32_t kernels, copies, memsets;
} cp_lane;

#define CP_MAX_FINDINGS 8

typedef struct cp_finding {
    const char *name; /* named after the Nsight Systems expert rule it mirrors */
    uint32_t count;
    char message[256];
} cp_finding;

typedef struct cp_metrics {
    uint64_t span_ns;
    uint64_t kernel_busy_ns, copy_busy_ns;
    uint64_t copy_kernel_overlap_ns;
    double copy_kernel_overlap_ratio;
    uint64_t h2d_d2h_overlap_ns;
    uint32_t peak_concurrent_kernels;
    double mean_concurrent_kernels;
    uint64_t idle_ns, largest_gap_ns;
    uint32_t kernels, copies, memsets;
    uint32_t pageable_copies;
    cp_lane *lanes; /* sorted by (device, context, stream); owned */
    size_t nlanes;
    cp_finding findings[CP_MAX_FINDINGS];
    size_t nfindings;
} cp_metrics;

/*
 * Computes every metric of DESIGN.md's table over the device activities of
 * `t` (kernels, copies, memsets; runtime calls and ranges are not device
 * work) in O(n log n): one sort of start/end events and one sweep. Intervals
 * are half-open, so touching intervals do not overlap and zero-length ones
 * add no busy time and no concurrency. Findings are derived afterwards.
 * Returns 0, or CP_ENOMEM (then `m` holds no allocation).
 */
int cp_timeline_analyse(const cp_trace *t, cp_metrics *m);
void cp_metrics_free(cp_metrics *m);

/* Returns the finding called `name`, or NULL. */
const cp_finding *cp_metrics_finding(const cp_metrics *m, const char *name);

#endif
