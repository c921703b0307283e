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
    uint32_t grid[3], block[3]; /* kernels: the launch shape (x, y, z); 0 when unknown */
    const char *name;        /* kernel, API or range name; interned in the trace */
} cp_activity;

typedef struct cp_trace {
    cp_activity *items;
    size_t n, cap;
    char **names; /* interned strings, owned */
    size_t nnames, names_cap;
    uint64_t dropped_records;
    /* Kernels whose name CUPTI gave wrongly, corrected from the name the
     * harness recorded at their launch (cp_trace_name_launches). */
    uint64_t renamed_kernels;
    /* The lane of the legacy default stream in the traced context, when the
     * tracer learnt it (it primes CUPTI with a memset on that stream). */
    bool has_legacy_stream;
    uint32_t legacy_device, legacy_context, legacy_stream;
} cp_trace;

void cp_trace_init(cp_trace *t);
void cp_trace_free(cp_trace *t);
void cp_trace_clear(cp_trace *t);

/* Appends a copy of `a`, interning its name. Returns 0 or CP_ENOMEM. */
int cp_trace_add(cp_trace *t, const cp_activity *a);

/* A kernel's name as the harness knew it when it launched the kernel, by
 * the launch's correlation id. */
typedef struct cp_launch_name {
    uint32_t correlation;
    const char *name;
} cp_launch_name;

/* Gives every kernel of `t` whose correlation id is among the n `launches`
 * that launch's name, and adds the kernels whose name changed to
 * t->renamed_kernels. CUPTI can name a kernel of a library loaded at run
 * time after an unloaded kernel whose handle was reused; the harness's own
 * record of the launch is the authority. Returns the number renamed, or
 * CP_ENOMEM. */
int cp_trace_name_launches(cp_trace *t, const cp_launch_name *launches, size_t n);

/* Returns the interned copy of `s` (NULL for NULL), or NULL when out of memory. */
const char *cp_trace_intern(cp_trace *t, const char *s);

/* Work on the device: kernels, copies and memsets (not API calls or ranges). */
bool cp_activity_is_device_work(const cp_activity *a);

/* qsort/bsearch order of `const cp_activity *` elements by correlation id. */
int cp_activity_ptr_cmp_correlation(const void *a, const void *b);

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

/* What the analysis needs to know beyond the trace. */
typedef struct cp_timeline_opts {
    /* The device's limit on concurrent kernels (128 on sm_70 to sm_90);
     * 0 when unknown: the measured peak stands in for it. */
    uint32_t max_concurrent_kernels;
    /* gpu_gaps: idle gaps longer than this inside the span; 0 means 1 ms. */
    uint64_t gap_threshold_ns;
} cp_timeline_opts;

typedef struct cp_metrics {
    uint64_t span_ns;
    uint64_t kernel_busy_ns, copy_busy_ns;
    uint64_t copy_kernel_overlap_ns;
    double copy_kernel_overlap_ratio;
    uint64_t h2d_d2h_overlap_ns;
    uint32_t peak_concurrent_kernels;
    double mean_concurrent_kernels;
    uint64_t idle_ns, largest_gap_ns;
    /* Devices with work in the trace, and the time during which more than
     * one of them had work at once. */
    uint32_t devices;
    uint64_t multi_device_ns;
    uint32_t kernels, copies, memsets;
    uint32_t pageable_copies;
    /* The ideal time: a lower bound on the span from the trace, the largest
     * of the summed host-to-device copy time, the summed device-to-host
     * copy time and the summed kernel time over the concurrency the device
     * allows. `bound` names the largest ("h2d copies", "d2h copies",
     * "kernels"); efficiency = ideal / span. */
    uint64_t h2d_sum_ns, d2h_sum_ns, kernel_sum_ns;
    uint32_t concurrency_limit;
    uint64_t ideal_ns;
    double efficiency;
    const char *bound;
    uint64_t gap_threshold_ns;
    uint32_t gaps_over_threshold;
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
 * add no busy time and no concurrency. Findings are derived afterwards:
 * cuda_memcpy_async, cuda_memcpy_sync, serialized_streams, gpu_gaps and
 * default_stream_serialization. `opts` may be NULL (defaults).
 * Returns 0, or CP_ENOMEM (then `m` holds no allocation).
 */
int cp_timeline_analyse(const cp_trace *t, const cp_timeline_opts *opts, cp_metrics *m);

/* The concurrent-kernel limit of a compute capability (CUDA programming
 * guide, "maximum number of resident grids per device"). */
uint32_t cp_max_concurrent_kernels(int cc_major, int cc_minor);
void cp_metrics_free(cp_metrics *m);

/* The index in m->lanes of a's (device, context, stream), or -1. */
long cp_metrics_lane_index(const cp_metrics *m, const cp_activity *a);

/* Returns the finding called `name`, or NULL. */
const cp_finding *cp_metrics_finding(const cp_metrics *m, const char *name);

#endif
