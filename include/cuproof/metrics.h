/*
 * The metrics that DESIGN.md defines, computed from a trace by one
 * sort-and-sweep pass, and the findings derived from them.
 */
#ifndef CUPROOF_METRICS_H
#define CUPROOF_METRICS_H

#include "export.h"

#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every metric of a traced run, declared once: the name (the field of
 * cp_metrics, the key in report.json and the word expectations use), its
 * type, the label people read (the HTML pages), its unit and what it
 * means. The JSON writer, the expectation
 * lookup and docs/DESIGN.md's table (a test holds them equal) all come
 * from this list.
 */
#define CP_METRIC_MAP(XX)                                                                     \
    XX(span_ns, U64, "Span", "ns", "first activity start to last activity end")                     \
    XX(kernel_busy_ns, U64, "Kernel busy time", "ns", "per device, the length of the union of its kernel intervals; summed over devices")                \
    XX(copy_busy_ns, U64, "Copy busy time", "ns", "per device, the length of the union of its copy intervals; summed over devices")                    \
    XX(copy_kernel_overlap_ns, U64, "Copy and kernel overlap", "ns", "time with a copy and a kernel in flight on the same device, summed over devices") \
    XX(copy_kernel_overlap_ratio, DOUBLE, "Copy time overlapping kernels", "ratio",                                           \
       "copy_kernel_overlap_ns / copy_busy_ns (not measured without copies)")                           \
    XX(h2d_d2h_overlap_ns, U64, "Both copy directions at once", "ns",                                                        \
       "time with a host-to-device and a device-to-host copy in flight on the same device, summed over devices")                     \
    XX(devices, U32, "Devices", "devices", "devices with work in the trace")                            \
    XX(multi_device_ns, U64, "Time on several devices", "ns", "time with work on two or more devices at once")         \
    XX(peak_concurrent_kernels, U32, "Most kernels at once", "kernels", "most kernels in flight at once on one device")            \
    XX(mean_concurrent_kernels, DOUBLE, "Mean kernels at once", "kernels",                                           \
       "time-weighted mean of the kernels in flight on a device while any is, over every device")                               \
    XX(idle_ns, U64, "GPU idle time", "ns", "per device, the time inside its own span (its first start to its last end) with nothing in flight on it; summed over devices")                    \
    XX(largest_gap_ns, U64, "Longest idle gap", "ns", "the longest such idle time on any one device") \
    XX(kernels, U32, "Kernels", "kernels", "kernel records")                                            \
    XX(copies, U32, "Copies", "copies", "copy records")                                                \
    XX(memsets, U32, "Memsets", "memsets", "memset records")                                            \
    XX(pageable_copies, U32, "Copies from pageable memory", "copies", "copies whose host side was pageable memory")         \
    XX(pageable_copy_sum_ns, U64, "Pageable copy time", "ns",                                                      \
       "summed time of pageable copies: the CPU stages them, so it is the host's time")      \
    XX(h2d_sum_ns, U64, "Host-to-device copy time", "ns", "summed host-to-device copy time")                             \
    XX(d2h_sum_ns, U64, "Device-to-host copy time", "ns", "summed device-to-host copy time")                             \
    XX(kernel_sum_ns, U64, "Summed kernel time", "ns", "summed kernel time")                                       \
    XX(concurrency_limit, U32, "Concurrent-kernel limit", "kernels", "kernels the device runs at once at most")         \
    XX(ideal_ns, U64, "Ideal time", "ns",                                                                  \
       "per device the largest of its summed host-to-device copy time, device-to-host copy time and kernel time / concurrency_limit; the largest device's")        \
    XX(efficiency, DOUBLE, "Efficiency", "ratio", "ideal_ns / span_ns")                                    \
    XX(gap_threshold_ns, U64, "Idle gap threshold", "ns", "idle gaps longer than this count as gpu_gaps")          \
    XX(gaps_over_threshold, U32, "Long idle gaps", "gaps", "idle gaps on any device longer than gap_threshold_ns") \
    XX(graph_launches, U32, "Graph launches", "launches",                                           \
       "distinct CUDA graph launches that ran device work (graph id and launch correlation)")  \
    XX(graph_busy_ns, U64, "Graph busy time", "ns", "length of the union of graph-launched device intervals") \
    XX(comm_busy_ns, U64, "Communication busy time", "ns", "per device, the length of the union of its communication kernels (demangled name starting with the communication pattern, nccl by default); summed over devices") \
    XX(comm_compute_overlap_ns, U64, "Communication and compute overlap", "ns", "time with a communication and a compute kernel in flight on the same device, summed over devices") \
    XX(comm_compute_overlap_ratio, DOUBLE, "Communication time overlapping compute", "ratio", "comm_compute_overlap_ns / comm_busy_ns, as Holistic Trace Analysis defines it (not measured without communication)") \
    XX(exposed_comm_ns, U64, "Exposed communication time", "ns", "comm_busy_ns - comm_compute_overlap_ns: communication no compute kernel covered") \
    XX(exposed_comm_share, DOUBLE, "Exposed communication share", "ratio", "exposed_comm_ns over the devices' summed spans (exposed_comm_ns / span_ns on one device)") \
    XX(ranks, U32, "Ranks", "ranks", "distinct ranks among the program's processes (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK)") \
    XX(hosts, U32, "Hosts", "hosts", "distinct hosts among the program's processes") \
    XX(clock_residual_ns, U64, "Clock alignment residual", "ns", "the largest residual of a host's clock offset: the median distance of the collectives' ends from it (0 on one host)") \
    XX(collectives, U32, "Collectives", "collectives", "collectives two or more ranks ran, a point-to-point transfer (a send and its receive) one: the k-th call on each NCCL communicator where every kernel's call was recorded, else the k-th kernel of each rank's i-th communication stream, where the ranks' counts agree or one rank's trace ends first; on aligned clocks") \
    XX(collective_start_spread_ns, U64, "Collective arrival spread", "ns", "median over the collectives (point-to-point transfers apart) of the last rank's start minus the first's") \
    XX(straggler_lag_ns, U64, "Straggler lag", "ns", "the rank that arrived last at the most collectives (point-to-point transfers apart: a receive waits for its send by the program's order): its median lag there (its start minus the others' median start)")

/*
 * Every finding the analysis derives, named after the Nsight Systems
 * expert rule it mirrors: XX(name, label, meaning).
 */
#define CP_FINDING_MAP(XX)                                                                    \
    XX(cuda_memcpy_async, "Asynchronous copy from pageable memory", "asynchronous copies from pageable memory: the host waits inside each call until the driver has staged the data, so it cannot queue work ahead meanwhile (the copies may still overlap kernels queued before them)")   \
    XX(cuda_memcpy_sync, "Synchronous copies beside streams", "synchronous copies in a trace that also uses streams")              \
    XX(gpu_gaps, "GPU idle gaps", "idle gaps longer than gap_threshold_ns inside the span")                    \
    XX(default_stream_serialization, "Default-stream serialisation", "work on the legacy default stream serialised other streams") \
    XX(serialized_streams, "Serialised streams", "kernels on several streams, never more than one at once, with no order of their own in the trace (no graph edges, no event waits) to explain it") \
    XX(straggler, "Straggler", "one rank arrived last at most collectives (point-to-point transfers apart; at least 3, half of those it ran, 1.5 times chance) by a median lag of at least 0.4 ms: the others waited for it")

/* The metrics and findings measured across the ranks of the whole program
 * (cuproof/internal/ranks.h) rather than by the analysis of its records: a scope
 * has none of them, so an expectation on one takes no scope. */
#define CP_PROGRAM_WIDE_MAP(XX)                                                               \
    XX(ranks) XX(hosts) XX(clock_residual_ns) XX(collectives) XX(collective_start_spread_ns)    \
    XX(straggler_lag_ns) XX(straggler)

/* Whether metric or finding `name` is one of CP_PROGRAM_WIDE_MAP's. */
CP_API bool cp_metric_is_program_wide(const char *name);

/*
 * Work classes: what a device activity spends its time on, as Holistic
 * Trace Analysis splits kernels. A kernel whose demangled name starts
 * with the communication pattern (CP_COMM_PATTERN_DEFAULT, `nccl`:
 * ncclKernel... and ncclDevKernel...; case-sensitive, as HTA and Nsight's
 * nccl_gpu_overlap_trace match) is communication, any other kernel
 * compute; copies and memsets are memory; API calls (synchronisation and
 * waits among them) and ranges are host time, never compute.
 */
#define CP_COMM_PATTERN_DEFAULT "nccl"

/* The classes and their rules, declared once: XX(ENUM, name, rule).
 * `cuproof metrics`, the report and DESIGN.md print the rules from here. */
#define CP_WORK_CLASS_MAP(XX)                                                                \
    XX(HOST, "host", "API calls (synchronisation and waits among them) and NVTX ranges: host time, never compute") \
    XX(COMPUTE, "compute", "every kernel that is not communication")                       \
    XX(COMMUNICATION, "communication", "a kernel whose demangled name starts with the communication pattern, `nccl` unless --comm-pattern or an expectation file's `#! comm-pattern: NAME` says otherwise (case-sensitive, as HTA matches): ncclKernel... and ncclDevKernel...") \
    XX(MEMORY, "memory", "copies and memsets")

typedef enum {
#define CP_CLASS_ENUM(e, name, rule) CP_CLASS_##e,
    CP_WORK_CLASS_MAP(CP_CLASS_ENUM)
#undef CP_CLASS_ENUM
    CP_CLASS_COUNT
} cp_work_class;

/* The rule of class c, as CP_WORK_CLASS_MAP says it ("" when unknown). */
CP_API const char *cp_work_class_rule(cp_work_class c);

/* The class of `a` under communication pattern `pattern` (NULL: the
 * default). */
CP_API cp_work_class cp_activity_class(const cp_activity *a, const char *pattern);

/* "host", "compute", "communication", "memory". */
CP_API const char *cp_work_class_name(cp_work_class c);

/* Whether kernel name `name` (mangled or not) is communication under
 * `pattern` (NULL: the default). */
CP_API bool cp_name_is_comm(const char *name, const char *pattern);

/* Whether `pattern` can be a communication pattern: a non-empty
 * identifier ([A-Za-z0-9_]), since it is matched against the demangled
 * name's leading identifier. */
CP_API bool cp_comm_pattern_valid(const char *pattern);

/* The leading identifier of `name` once demangled (the longest run of
 * [A-Za-z0-9_] the demangled name starts with), read from the Itanium
 * mangling's prefix without demangling the rest: `*out` points into
 * `name` or at a constant ("void", "std"); returns its length (0 when
 * the demangled name starts with none, or the mangling is beyond the
 * reader). A name that is not mangled is read as it is. */
CP_API size_t cp_name_leading(const char *name, const char **out);

typedef enum { CP_METRIC_U64 = 0, CP_METRIC_U32, CP_METRIC_DOUBLE } cp_metric_type;

/* One row of CP_METRIC_MAP. */
typedef struct cp_metric_def {
    const char *name, *label, *unit, *meaning;
    cp_metric_type type;
    size_t offset; /* of the field in cp_metrics */
} cp_metric_def;

/* One row of CP_FINDING_MAP. */
typedef struct cp_finding_def {
    const char *name, *label, *meaning;
} cp_finding_def;

typedef struct cp_lane {
    /* Keyed by (device, process, context, stream): stream ids repeat across
     * contexts, and context ids across processes. */
    uint32_t device, process, context, stream;
    uint64_t busy_ns; /* union of this lane's device intervals */
    uint32_t kernels, copies, memsets;
    uint32_t graph_kernels; /* of its kernels, those a CUDA graph launched */
} cp_lane;

/* One CUDA graph of the trace: its launches and the device time its work
 * kept busy. */
typedef struct cp_graph {
    uint32_t process, graph_id;
    uint32_t launches; /* distinct launch correlations */
    uint32_t kernels, copies, memsets;
    uint64_t busy_ns; /* union of this graph's device intervals */
} cp_graph;

#define CP_MAX_FINDINGS 8

typedef struct cp_finding {
    const char *name; /* named after the Nsight Systems expert rule it mirrors */
    uint32_t count;
    char message[512]; /* what was measured, and the advice that follows from it */
} cp_finding;

/* What the analysis needs to know beyond the trace. */
typedef struct cp_timeline_opts {
    /* The device's limit on concurrent kernels (128 on sm_70 to sm_90);
     * 0 when unknown: the measured peak stands in for it. */
    uint32_t max_concurrent_kernels;
    /* gpu_gaps: idle gaps longer than this inside the span; 0 means 1 ms. */
    uint64_t gap_threshold_ns;
    /* Kernels whose demangled name starts with it are communication
     * (cp_activity_class); NULL means CP_COMM_PATTERN_DEFAULT. The
     * caller's string, read while the analysis runs. */
    const char *comm_pattern;
    /* Per step (cuproof/internal/steps.h): windows of host time, each one
     * occurrence of a range in one process, over which the sweep measures
     * that process's devices alone; each window's sums land in
     * cp_metrics.step_parts, in this order. NULL: none. The caller's
     * array, read while the analysis runs (a streaming one's until it
     * finishes). */
    const struct cp_step_window *steps;
    size_t nsteps;
} cp_timeline_opts;

/* One occurrence of a step range: process `process`'s `index`-th (from 1)
 * range of that name, over [start, end) of host time. */
typedef struct cp_step_window {
    uint32_t process, index;
    uint64_t start, end;
} cp_step_window;

/* What the sweep measured inside one window, on the devices its process
 * ran work on (`devices` of them), summed over them: the time with a
 * kernel, a copy, both, a communication kernel, communication beside
 * compute, anything in flight; the kernels' time (each kernel its own,
 * clipped to the window) and the kernels that started in it. */
typedef struct cp_step_part {
    uint32_t devices;
    uint64_t kernel_busy_ns, copy_busy_ns, copy_kernel_overlap_ns;
    uint64_t comm_busy_ns, comm_compute_overlap_ns, busy_ns;
    uint64_t kernel_sum_ns, kernels;
} cp_step_part;

/* One device's own metrics: overlap, concurrency, idle time and gaps
 * happen on one device, so they are measured per device first; the
 * program's figures in cp_metrics are their summary (DESIGN.md,
 * "Devices"). The time is the device's own: from its first start to its
 * last end. */
typedef struct cp_device_metrics {
    uint32_t device;
    uint64_t span_ns; /* its first start to its last end */
    uint64_t kernel_busy_ns, copy_busy_ns;
    uint64_t copy_kernel_overlap_ns; /* a copy and a kernel in flight on it */
    double copy_kernel_overlap_ratio;
    uint64_t h2d_d2h_overlap_ns;
    uint32_t peak_concurrent_kernels;
    double mean_concurrent_kernels;
    uint64_t idle_ns, largest_gap_ns; /* nothing in flight on it, inside its span */
    uint32_t gaps_over_threshold;
    uint64_t kernel_sum_ns, h2d_sum_ns, d2h_sum_ns;
    uint64_t ideal_ns; /* as cp_metrics' ideal, over its own work */
    double efficiency; /* ideal_ns / span_ns */
    const char *bound;
    /* Communication kernels (cp_activity_class) and compute kernels in
     * flight on it at once; exposed = comm busy - overlap; its share is
     * over the device's span. */
    uint64_t comm_busy_ns, comm_compute_overlap_ns, exposed_comm_ns;
    double comm_compute_overlap_ratio, exposed_comm_share;
} cp_device_metrics;

/* The figures of cp_device_metrics that report.json writes per device
 * and that the two analyses are held equal on, declared once:
 * XX(name, type) with the field's name and CP_METRIC_ type. */
#define CP_DEVICE_METRIC_MAP(XX)                                                          \
    XX(device, U32)                                                                       \
    XX(span_ns, U64)                                                                      \
    XX(kernel_busy_ns, U64)                                                               \
    XX(copy_busy_ns, U64)                                                                 \
    XX(copy_kernel_overlap_ns, U64)                                                       \
    XX(copy_kernel_overlap_ratio, DOUBLE)                                                 \
    XX(h2d_d2h_overlap_ns, U64)                                                           \
    XX(peak_concurrent_kernels, U32)                                                      \
    XX(mean_concurrent_kernels, DOUBLE)                                                   \
    XX(idle_ns, U64)                                                                      \
    XX(largest_gap_ns, U64)                                                               \
    XX(gaps_over_threshold, U32)                                                          \
    XX(ideal_ns, U64)                                                                     \
    XX(efficiency, DOUBLE)                                                                \
    XX(comm_busy_ns, U64)                                                                 \
    XX(comm_compute_overlap_ns, U64)                                                      \
    XX(comm_compute_overlap_ratio, DOUBLE)                                                \
    XX(exposed_comm_ns, U64)                                                              \
    XX(exposed_comm_share, DOUBLE)

/* One distinct kernel name of the trace (the breakdown): its class, its
 * launches and the device time they took, in all and least and most of
 * one launch. `name` is as the trace gave it (mangled; the reports show
 * it demangled); owned by the metrics. */
typedef struct cp_kernel_stat {
    char *name;
    cp_work_class cls; /* CP_CLASS_COMPUTE or CP_CLASS_COMMUNICATION */
    uint32_t count;
    uint64_t total_ns, min_ns, max_ns;
} cp_kernel_stat;

/* One row of the per-collective table: NCCL's communication kernels of
 * one operation, algorithm and protocol, as their names say
 * (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`: AllReduce, RING, LL; ""
 * where the name says none): how many ran, their device time in all and
 * the median of one, and the part of it during which no compute kernel
 * ran on the same device (exposed: summed kernel by kernel, so two
 * collectives in flight at once count twice). */
typedef struct cp_collective_row {
    char op[24], algo[24], proto[12];
    uint32_t count;
    uint64_t total_ns, median_ns, exposed_ns;
    /* What NCCL's own account adds (its calls' payloads, recorded by exec:
     * docs/distributed.md), where a kernel's call is known (each
     * process's calls of the operation on one communicator, its kernels
     * on one stream, as many of each): `sized` of the `count` kernels had
     * one, with `bytes` of messages in all; `bw_kernels` of those also
     * had their communicator's ranks (two or more of its processes in the
     * analysis), taking `bw_ns` of device time and moving `alg_bytes` of
     * data, `bus_bytes` over the bus, as nccl-tests reckons them. */
    uint32_t sized, bw_kernels;
    uint64_t bytes, bw_ns;
    double alg_bytes, bus_bytes;
    /* In cp_metrics.collective_size_rows: the bucket of its calls' message
     * size, [size_lo, size_hi) bytes, a power of two to the next (as
     * nccl-tests sweeps sizes); 0 in collective_rows. */
    uint64_t size_lo, size_hi;
} cp_collective_row;

/* What an expectation scoped by collective(OP) measures: the rows of
 * that operation (every algorithm and protocol) taken together. XX(name,
 * type, label, unit, meaning). */
#define CP_COLLECTIVE_METRIC_MAP(XX)                                                          \
    XX(kernels, U32, "Kernels of the operation", "kernels", "its communication kernels, on every device and rank")            \
    XX(total_ns, U64, "Their device time", "ns", "the sum of their durations")                 \
    XX(median_ns, U64, "Median kernel", "ns", "the median duration of one (of one algorithm and protocol: not measured when the operation ran with several)") \
    XX(exposed_ns, U64, "Exposed time", "ns", "the part of their time with no compute kernel on their device, summed kernel by kernel") \
    XX(exposed_share, DOUBLE, "Exposed share", "ratio", "exposed_ns / total_ns")                 \
    XX(bytes, U64, "Message bytes", "bytes", "the sum of NCCL's message sizes of its calls (NCCL's payloads, recorded by exec; not measured unless every kernel's call is known)") \
    XX(algbw_gbps, DOUBLE, "Algorithm bandwidth", "GB/s", "the data its calls moved over their kernels' time, as nccl-tests' algbw (not measured unless every kernel's call and its communicator's ranks are known)") \
    XX(busbw_gbps, DOUBLE, "Bus bandwidth", "GB/s", "algbw times nccl-tests' factor for the operation on its ranks (AllReduce 2(n-1)/n, AllGather and ReduceScatter (n-1)/n, Broadcast 1): comparable with the links' peak")

typedef struct cp_collective_figures {
#define CP_COLLECTIVE_FIELD_U32(name) uint32_t name;
#define CP_COLLECTIVE_FIELD_U64(name) uint64_t name;
#define CP_COLLECTIVE_FIELD_DOUBLE(name) double name;
#define CP_COLLECTIVE_FIELD_(name, type, label, unit, meaning) CP_COLLECTIVE_FIELD_##type(name)
    CP_COLLECTIVE_METRIC_MAP(CP_COLLECTIVE_FIELD_)
#undef CP_COLLECTIVE_FIELD_
#undef CP_COLLECTIVE_FIELD_U32
#undef CP_COLLECTIVE_FIELD_U64
#undef CP_COLLECTIVE_FIELD_DOUBLE
    /* Of `kernels`, how many had their call's size, and how many also
     * their communicator's ranks: bytes, algbw_gbps and busbw_gbps are
     * measured only when every kernel had (cp_collective_unmeasured). */
    uint32_t sized, bw_kernels;
} cp_collective_figures;

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
    uint64_t pageable_copy_sum_ns;
    /* cuda_memcpy_async's evidence: the time an asynchronous copy from
     * pageable memory was in flight, summed over devices, and the part of
     * it a kernel of the same device was too; of those copies, the number
     * whose API call is in the trace and the host time inside those calls
     * (the driver returns only once it has staged the data). */
    uint64_t pageable_async_ns, pageable_async_overlap_ns;
    uint32_t pageable_async_calls;
    uint64_t pageable_async_call_ns;
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
    uint32_t graph_launches;
    uint64_t graph_busy_ns;
    /* Summaries of the devices' (DESIGN.md, "Devices"). */
    uint64_t comm_busy_ns, comm_compute_overlap_ns;
    double comm_compute_overlap_ratio;
    uint64_t exposed_comm_ns;
    double exposed_comm_share;
    /* Across the ranks (cuproof/internal/ranks.h; 0 without ranks). */
    uint32_t ranks, hosts;
    uint64_t clock_residual_ns;
    uint32_t collectives;
    uint64_t collective_start_spread_ns, straggler_lag_ns;
    cp_lane *lanes; /* sorted by (device, process, context, stream); owned */
    size_t nlanes;
    cp_graph *graphs; /* sorted by (process, graph_id); owned */
    size_t ngraphs;
    /* One entry per device with work (`devices` of them), in device order;
     * owned; NULL when there is none. */
    cp_device_metrics *device_metrics;
    /* Every distinct kernel name, the most device time first (ties by
     * name); owned; NULL when there is none. */
    cp_kernel_stat *kernel_stats;
    size_t nkernel_stats;
    /* The per-collective table, the most device time first (ties by
     * operation, algorithm, protocol); owned; NULL without communication. */
    cp_collective_row *collective_rows;
    size_t ncollective_rows;
    /* The same kernels by operation, algorithm, protocol and message-size
     * bucket (size_lo, size_hi), those whose call's size is known alone
     * (a row of collective_rows says how many had, `sized`): by class as
     * collective_rows, then by size ascending; owned; NULL without. */
    cp_collective_row *collective_size_rows;
    size_t ncollective_size_rows;
    /* One entry per window of cp_timeline_opts.steps, in its order; owned;
     * NULL when the analysis was given none. */
    cp_step_part *step_parts;
    size_t nstep_parts;
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
CP_API int cp_timeline_analyse(const cp_trace *t, const cp_timeline_opts *opts, cp_metrics *m);

/*
 * The streaming analysis: the metrics and findings of cp_timeline_analyse
 * for device activities fed one at a time, in any order, in memory that
 * stays bounded however many there are. Each activity is counted at once
 * into its lane and graph and kept as 24 bytes in a chunk of
 * `chunk_records`; a full chunk is sorted by start and written to a
 * temporary file (TMPDIR) as a run. At the end the runs are merged by start
 * and swept with the ends of what is in flight in a heap, through the same
 * sweep step as the whole-trace analysis (the test suite holds the two
 * equal on every hand-built trace and on the recorded fixtures). Memory:
 * two chunks (the sort's and its scratch), a read buffer per run, and
 * tables that grow with the lanes, the graphs, the graph launches and
 * the pageable copies whose API call has not come yet (or calls whose
 * copy has not), not with the records; disk: 24 bytes per device activity.
 */
typedef struct cp_stream_opts {
    cp_timeline_opts timeline;
    /* Activities sorted in memory at a time; 0 means 1 << 21 (48 MiB). */
    size_t chunk_records;
} cp_stream_opts;

typedef struct cp_stream cp_stream;

/* Returns 0 or CP_ENOMEM; `opts` may be NULL (defaults). */
CP_API int cp_stream_new(cp_stream **out, const cp_stream_opts *opts);

/* Feeds one activity (host records count only for the findings, as in
 * the whole-trace analysis: event waits, and the calls that issued
 * pageable copies). Returns 0, CP_ENOMEM, or CP_EIO when a run
 * cannot be written (naming the temporary directory), CP_EINVAL past
 * 2^24 lanes. */
CP_API int cp_stream_add(cp_stream *s, const cp_activity *a);

/* The lane of the legacy default stream (cp_trace.has_legacy_stream), for
 * default_stream_serialization; may come at any time before finishing. */
CP_API void cp_stream_set_legacy(cp_stream *s, uint32_t device, uint32_t context,
                                 uint32_t stream);

/* Merges, sweeps and fills `m` (as cp_timeline_analyse does). Returns 0,
 * CP_ENOMEM or CP_EIO; the stream is spent either way. */
CP_API int cp_stream_finish(cp_stream *s, cp_metrics *m);

/* Runs written to disk so far (0 while everything fits in one chunk). */
CP_API size_t cp_stream_runs(const cp_stream *s);

CP_API void cp_stream_free(cp_stream *s);

/* The concurrent-kernel limit of a compute capability (CUDA programming
 * guide, "maximum number of resident grids per device"). */
CP_API uint32_t cp_max_concurrent_kernels(int cc_major, int cc_minor);
CP_API void cp_metrics_free(cp_metrics *m);

/* The index in m->lanes of a's (device, process, context, stream), or -1. */
CP_API long cp_metrics_lane_index(const cp_metrics *m, const cp_activity *a);

/* The metric table (CP_METRIC_MAP) in its order; *n gets its length. */
CP_API const cp_metric_def *cp_metric_defs(size_t *n);

/* The metric called `name`, or NULL when there is none. */
CP_API const cp_metric_def *cp_metric_find(const char *name);

/* Metric d's value v as every output shows it: a share as a fraction and
 * a percentage ("0.8235 (82.3%)"), a count whole with its unit agreeing
 * ("1 kernel", "200 kernels"), a time whole in ns, a mean to 6 digits.
 * d NULL: the number alone. */
CP_API void cp_metric_format(const cp_metric_def *d, double v, char *out, size_t len);

/* The value of metric `d` in `m`, as a double (exact below 2^53 ns, about
 * 104 days). */
CP_API double cp_metric_value(const cp_metrics *m, const cp_metric_def *d);

/* Why metric or finding `name` has no value in `m`, or NULL when it has
 * one: a ratio or share of communication with no communication kernel, a
 * collective's figure or the straggler with no collective matched. An
 * expectation on it then fails as "not measured" instead of passing on a
 * 0 or on a finding that could not have been raised. */
CP_API const char *cp_metric_unmeasured(const cp_metrics *m, const char *name);

/* The rule behind it, for any table whose rows carry the same counts
 * (per step's, cuproof/internal/steps.h): the words for metric `name`
 * when its count is 0, and the count's name in *count; NULL for a metric
 * that needs none. */
CP_API const char *cp_metric_needs(const char *name, const char **count);

/* The definition named `name` among n (NULL: none), for each table of
 * definitions (the program's, collective(OP)'s, per step's). */
CP_API const cp_metric_def *cp_metric_def_in(const cp_metric_def *defs, size_t n,
                                            const char *name);

/* The per-device table (CP_DEVICE_METRIC_MAP) in its order, as
 * cp_metric_defs is (label, unit and meaning NULL), and the value of one
 * of its figures in `dm`. */
CP_API const cp_metric_def *cp_device_metric_defs(size_t *n);

/* The metrics of collective(OP) (CP_COLLECTIVE_METRIC_MAP) in its order,
 * and the one named `name` (NULL for none). */
CP_API const cp_metric_def *cp_collective_metric_defs(size_t *n);
CP_API const cp_metric_def *cp_collective_metric_find(const char *name);

/* The figures of operation `op` (cp_collective_row.op) in m's
 * per-collective table into *out: false, with why in `why`, when no row
 * is of that operation; a median of several rows is not measured
 * (median_ns 0, *several true). */
CP_API bool cp_collective_figures_of(const cp_metrics *m, const char *op,
                                     cp_collective_figures *out, bool *several, char *why,
                                     size_t len);

/* Each operation of m's per-collective table once, in the table's order:
 * from *row on, the next row whose operation no earlier row had, into
 * *op with its figures (cp_collective_figures_of), *row moved past it.
 * Returns false when none is left. */
CP_API bool cp_collective_next(const cp_metrics *m, size_t *row, const char **op,
                               cp_collective_figures *out, bool *several);

/* Why collective metric `name` is not measured for an operation with
 * figures `f` that said `several` (rows of several algorithms or
 * protocols: one median each; a size or bandwidth some kernel of which
 * has no known call), or NULL when it is. */
CP_API const char *cp_collective_unmeasured(const cp_collective_figures *f, const char *name,
                                            bool several);

/* One row's share of NCCL's own account (cp_collective_row): its
 * messages where every kernel of it had its call (true, *bytes), and its
 * algorithm and bus bandwidth in GB/s where every kernel also had its
 * communicator's ranks (true, *algbw and *busbw); false where not, so
 * that no page or file shows a figure of part of the row. */
CP_API bool cp_collective_row_bytes(const cp_collective_row *r, uint64_t *bytes);
CP_API bool cp_collective_row_bandwidth(const cp_collective_row *r, double *algbw, double *busbw);

/* "AllReduce RING LL": an operation with what of its algorithm and
 * protocol is known, as the terminal and the page show it. */
CP_API void cp_collective_label(const char *op, const char *algo, const char *proto, char *out,
                                size_t len);
CP_API double cp_device_metric_value(const cp_device_metrics *dm, const cp_metric_def *d);

/* A field of any record that a cp_metric_def describes (cp_metrics,
 * cp_device_metrics, cuproof/internal/ranks.h's cp_rank_row), read as a double or
 * set from one (as cp_metric_set) through its offset. */
CP_API double cp_field_value(const void *record, const cp_metric_def *d);
CP_API void cp_field_set(void *record, const cp_metric_def *d, double v);

/* Sets metric `d` of `m` from a double (as a report keeps it), rounded to
 * the field's type; a negative or non-finite value sets 0 where the field
 * is an integer. */
CP_API void cp_metric_set(cp_metrics *m, const cp_metric_def *d, double v);

/* The finding table (CP_FINDING_MAP); *n gets its length. */
CP_API const cp_finding_def *cp_finding_defs(size_t *n);

/* Whether the analysis can raise a finding called `name`. */
CP_API bool cp_finding_known(const char *name);

/* Returns the finding called `name`, or NULL. */
CP_API const cp_finding *cp_metrics_finding(const cp_metrics *m, const char *name);

#ifdef __cplusplus
}
#endif

#endif
