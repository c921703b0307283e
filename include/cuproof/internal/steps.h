/*
 * Per step (issue 42; docs/distributed.md, "Per step"): a traced program's
 * figures over each occurrence of a step range alone, where the range(step)
 * scope measures the union of them all, in which one bad step is diluted.
 *
 * Steps. Each process's ranges called NAME, in the order they start, are
 * its steps 1, 2, ...: step k is the k-th range of every process that has
 * one (in a data-parallel job, the k-th iteration of every rank). A
 * process traced in capture windows (exec --capture) numbers the steps
 * inside each window from the window's first occurrence, so that step
 * 1001 of a window range:step@1001-1050 is the program's 1001st on every
 * rank; a step of it outside every window counts for none. Each
 * occurrence is a window of host time on its process's clock (aligned to
 * the reference host's for several hosts), over which the analysis's sweep
 * measures the devices that process ran work on, and nothing else
 * (cp_timeline_opts.steps, cp_step_part): a kernel that crosses a window's
 * edge counts its part inside, as range(NAME) clips it; a kernel counts
 * where it started.
 *
 * Step k's figures (CP_STEP_METRIC_MAP) sum its processes' parts: busy and
 * overlap times over their devices, idle time as each device's time in the
 * window with nothing in flight on it; step_ns is the longest of the
 * processes' k-th ranges (the job's step lasts as long as its slowest
 * rank's). Ratios of a step without copies or communication are not
 * measured (NaN), never 0. A part is a device's, not a process's own:
 * processes that share a GPU (ranks on one device) each count all of its
 * work in their window, so their sums count it once per process.
 *
 * Verdicts. `per step: METRIC OP N` holds when it holds on every step and
 * names the worst step with its index beside the median, p95 and max;
 * `per step pNN: ...` compares the NN-th percentile (nearest rank) of the
 * steps' values. A trace with no range NAME, or whose steps hold no device
 * work, fails with that reason: nothing passes for want of steps.
 *
 * Memory: a window (24 bytes) and a part (72 bytes) per occurrence, and a
 * row per step; the records themselves are never held (the streaming
 * analysis measures the windows in its one sweep).
 */
#ifndef CUPROOF_STEPS_H
#define CUPROOF_STEPS_H

#include "../export.h"
#include "../expect.h"
#include "../metrics.h"
#include "../trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The per-step metrics, declared once: XX(name, type, label, unit,
 * meaning). */
#define CP_STEP_METRIC_MAP(XX)                                                                    \
    XX(step_ns, U64, "Step time", "ns", "the step's range: the longest of its processes' (host time)") \
    XX(processes, U32, "Processes", "processes", "the processes (ranks) that ran the step: fewer than in the others' is a rank that missed it, or was traced in other steps") \
    XX(kernels, U32, "Kernels", "kernels", "kernels that started inside the step on its processes' devices") \
    XX(kernel_busy_ns, U64, "Kernel busy", "ns", "per device, the time inside the step with a kernel in flight; summed over devices") \
    XX(kernel_sum_ns, U64, "Kernel time", "ns", "the kernels' time inside the step, each its own (clipped to the step)") \
    XX(copy_busy_ns, U64, "Copy busy", "ns", "per device, the time inside the step with a copy in flight; summed") \
    XX(copy_kernel_overlap_ratio, DOUBLE, "Copy/kernel overlap", "ratio", "time with a copy and a kernel in flight / copy_busy_ns (not measured in a step without copies)") \
    XX(idle_ns, U64, "Idle", "ns", "per device, the time inside the step with nothing in flight on it; summed over devices") \
    XX(comm_busy_ns, U64, "Communication busy", "ns", "per device, the time inside the step with a communication kernel in flight; summed") \
    XX(comm_compute_overlap_ratio, DOUBLE, "Comm/compute overlap", "ratio", "time with communication and compute in flight / comm_busy_ns (not measured in a step without communication)") \
    XX(exposed_comm_ns, U64, "Exposed communication", "ns", "comm_busy_ns minus the part a compute kernel covered") \
    XX(exposed_comm_share, DOUBLE, "Exposed share", "ratio", "exposed_comm_ns over the step's device time (its window on each device; not measured without communication)") \
    XX(collectives, U32, "Collectives", "collectives", "collectives matched across the ranks that the step's first rank started inside it") \
    XX(straggler_lag_ns, U64, "Late rank's lag", "ns", "the rank that arrived last at most of the step's collectives: its median lag there (not measured without a matched collective)")

/* One step: its index (from 1) and its figures, the processes that ran
 * it among them. */
typedef struct cp_step_row {
    uint32_t index;
    uint32_t devices; /* summed over its processes */
#define CP_STEP_FIELD_U32(name) uint32_t name;
#define CP_STEP_FIELD_U64(name) uint64_t name;
#define CP_STEP_FIELD_DOUBLE(name) double name;
#define CP_STEP_FIELD_(name, type, label, unit, meaning) CP_STEP_FIELD_##type(name)
    CP_STEP_METRIC_MAP(CP_STEP_FIELD_)
#undef CP_STEP_FIELD_
#undef CP_STEP_FIELD_U32
#undef CP_STEP_FIELD_U64
#undef CP_STEP_FIELD_DOUBLE
    /* The ratios' numerators, and the step's device time: each process's
     * window times its devices, summed (exposed_comm_share's denominator). */
    uint64_t comm_compute_overlap_ns, copy_kernel_overlap_ns, device_ns;
    /* The straggler per step (cp_step_rows_put_arrivals): the rank that
     * arrived last at most of its collectives (-1: none matched) and how
     * often. */
    int32_t late_rank;
    uint32_t late_count;
} cp_step_row;

/* The per-step metrics in CP_STEP_METRIC_MAP's order (offsets into
 * cp_step_row), and the one named `name` (NULL for none). */
CP_API const cp_metric_def *cp_step_metric_defs(size_t *n);
CP_API const cp_metric_def *cp_step_metric_find(const char *name);
/* Why metric d of row r has no value ("not measured: no copy"), or NULL. */
CP_API const char *cp_step_unmeasured(const cp_step_row *r, const cp_metric_def *d);

/*
 * The windows of range `range` as they come one at a time: learn every
 * record (ranges of other names and other records are ignored), then
 * finish, which numbers each process's windows in the order they start.
 * The windows belong to the learner. learn and finish return 0 or
 * CP_ENOMEM.
 */
typedef struct cp_step_windows {
    char *range;
    cp_step_window *w; /* index 0 after finish: a captured process's step outside its windows */
    size_t n, cap;
    bool found; /* a range of that name was seen (of length zero too) */
    /* Capture windows (cuproof/internal/capture.h), `index` their first
     * occurrence: a process that has them numbers its steps from it. */
    cp_step_window *caps;
    size_t ncaps, caps_cap;
} cp_step_windows;

CP_API int cp_step_windows_init(cp_step_windows *s, const char *range);
CP_API int cp_step_windows_learn(cp_step_windows *s, const cp_activity *a);
CP_API void cp_step_windows_finish(cp_step_windows *s);
CP_API void cp_step_windows_free(cp_step_windows *s);

/*
 * The steps: the windows' parts (as the analysis measured them; NULL when
 * it measured none: a trace without device work) grouped by index into
 * rows, by index ascending, into *rows (freed by the caller). Returns the
 * number of rows, or CP_ENOMEM.
 */
CP_API long cp_step_rows(const cp_step_windows *s, const cp_step_part *parts, cp_step_row **rows);

/*
 * The straggler per step: each matched collective (cp_ranks.arrivals,
 * internal/collectives.h) goes to the step whose span (its processes'
 * k-th windows, from the earliest start to the latest end, on host 0's
 * clock as the aligned trace is) holds its first rank's start; per step,
 * the rank that arrived last at most of them (the lowest rank on a tie)
 * and its median lag there. Steps without one keep late_rank -1.
 */
struct cp_collective_arrival;
CP_API int cp_step_rows_put_arrivals(cp_step_row *rows, size_t n, const cp_step_windows *s,
                                     const struct cp_collective_arrival *a, size_t na);

/* A metric over the steps: how many have a value, their median, 95th
 * percentile, largest and smallest (nearest rank), and the steps holding
 * the largest and the smallest. */
typedef struct cp_step_summary {
    size_t measured;
    double p50, p95, max, min;
    uint32_t max_step, min_step;
} cp_step_summary;

CP_API void cp_step_summarise(const cp_step_row *rows, size_t n, const cp_metric_def *d,
                              cp_step_summary *out);

/* The straggler over the steps: the rank late in most of them (the lowest
 * on a tie), in how many, of how many steps had a late rank at all, and
 * its median lag over its steps (the lower middle). False, rank -1, when
 * no step matched a collective (or memory ran out). */
typedef struct cp_step_late {
    int32_t rank;
    size_t steps, with;
    uint64_t median_lag_ns;
} cp_step_late;

CP_API bool cp_step_late_rank(const cp_step_row *rows, size_t n, cp_step_late *out);

/* The steps of range `range` of a trace held in memory: its windows
 * (into *s, which the caller frees with cp_step_windows_free either way)
 * found, the trace analysed with them (`opts` may be NULL) and grouped
 * into *rows (freed by the caller). Returns the number of rows, or
 * CP_ENOMEM. */
CP_API long cp_step_rows_of_trace(const cp_trace *t, const char *range,
                                  const cp_timeline_opts *opts, cp_step_windows *s,
                                  cp_step_row **rows);

/* A 'per step' expectation streamed (cp_expect_stream, after its second
 * pass), and the k-th of a judge's: its steps' rows, instead of a verdict
 * (*rows freed by the caller), or why there are none ("no range named
 * 'step' in the trace"; *n 0). Returns 0, CP_EINVAL for an expectation
 * that is not 'per step', or the analysis' error. */
CP_API int cp_expect_stream_steps(cp_expect_stream *x, cp_step_row **rows, size_t *n, char *why,
                                  size_t len);
CP_API int cp_expect_judge_steps(cp_expect_judge *j, size_t k, cp_step_row **rows, size_t *n,
                                 char *why, size_t len);

/*
 * Judges a 'per step' expectation on a trace held in memory: its windows
 * found, the trace analysed with them (`opts` may be NULL), the rows
 * judged (cp_step_judge). Returns 0 when it was judged, or CP_ENOMEM.
 */
CP_API int cp_step_eval_trace(const cp_expectation *e, const cp_trace *t,
                              const cp_timeline_opts *opts, bool *ok, char *measured, size_t len);
/* The same with the ranks' arrivals (NULL, 0: none), for the straggler per
 * step. */
CP_API int cp_step_eval_trace_arrivals(const cp_expectation *e, const cp_trace *t,
                                       const cp_timeline_opts *opts,
                                       const struct cp_collective_arrival *a, size_t na, bool *ok,
                                       char *measured, size_t len);
/* A streamed 'per step' expectation's arrivals, before it finishes (the
 * array must outlive it); others ignore it. */
CP_API void cp_expect_stream_set_arrivals(cp_expect_stream *x,
                                          const struct cp_collective_arrival *a, size_t na);

/*
 * The verdict of 'per step' expectation e on the steps of windows `s`
 * and their rows: whether it holds, and what was measured ("worst step 17:
 * 23.1 ms; median 12.0 ms, p95 12.9 ms, max 23.1 ms over 3000 steps"), or
 * why nothing was (no range, no device work in any step, the metric not
 * measured in any step).
 */
CP_API bool cp_step_judge(const cp_expectation *e, const cp_step_windows *s,
                          const cp_step_row *rows, size_t n, char *measured, size_t len);

#ifdef __cplusplus
}
#endif

#endif
