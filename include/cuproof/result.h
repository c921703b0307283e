/*
 * What a run measured: the model that the runner fills, checks and claims
 * read, and the report writers turn into JSON and HTML. Strings are owned
 * copies, so a result outlives the case that produced it.
 */
#ifndef CUPROOF_RESULT_H
#define CUPROOF_RESULT_H

#include "export.h"

#include "env.h"
#include "stats.h"
#include "metrics.h"
#include "summary.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cp_ranks; /* cuproof/internal/ranks.h */

/* Device memory a variant may keep between its first and last runs before
 * it counts as a leak: far above the noise (module loading happens before
 * the first run ends), far below a CUDA context. */
#define CP_LEAK_BYTES (8ll << 20)

/* A case's verdict. inconclusive: nothing failed, but a check its claim
 * rests on (an essential one) could not be made; skip_reason says which
 * and why. It is never a pass. */
typedef enum {
    CP_STATUS_PASSED = 0,
    CP_STATUS_FAILED,
    CP_STATUS_SKIPPED,
    CP_STATUS_INCONCLUSIVE
} cp_status;
typedef enum { CP_CHECK_PASSED = 0, CP_CHECK_FAILED, CP_CHECK_SKIPPED } cp_check_status;
/* A claim's verdict. With a window (cp_claim_window), by one rule
 * (cp_claim_judge): confirmed inside it, exceeded beyond it away from no
 * effect, fell short between no effect and it, refuted at no effect or
 * past it (the opposite holds). */
typedef enum {
    CP_VERDICT_CONFIRMED = 0,
    CP_VERDICT_REFUTED,
    CP_VERDICT_NOT_MEASURED,
    CP_VERDICT_EXCEEDED,
    CP_VERDICT_FELL_SHORT
} cp_verdict;

/* What a claim states, as numbers: the range [lo, hi] the claimed value
 * spans (the sources' figures, or "about X" given a tolerance), and
 * `none`, where the effect would be absent (a speedup's 1x), on the side
 * of the range the claim argues against; in `unit` ("x", "ms"). */
typedef struct cp_claim_window {
    double lo, hi, none;
    char unit[16];
} cp_claim_window;

typedef enum {
    CP_ORIGIN_LIVE = 0,
    CP_ORIGIN_RECOMPUTED,
    CP_ORIGIN_RECORDED
} cp_check_origin;

typedef struct cp_check_result {
    char name[128];
    cp_check_status status;
    char expected[256];
    char measured[256];
    char skip_reason[640];
    /* The case's claim rests on it: skipped, it makes the case
     * inconclusive rather than passed. */
    bool essential;
    /* Skipped because tracing was turned off on request (--no-trace): the
     * one way an essential check is skipped without an inconclusive case. */
    bool skipped_on_request;
    /* Where a replayed report's check comes from: recomputed from the
     * recorded trace, or as recorded (what needed the live run: outputs,
     * events, host timings). CP_ORIGIN_LIVE in a live run. */
    cp_check_origin origin;
} cp_check_result;

#define CP_CLAIM_MAX_PASSES 100 /* run --runs K takes K up to 100 */

typedef struct cp_claim_result {
    char text[256];
    char source[160];
    char claimed[128];
    char measured[128];
    cp_verdict verdict;
    char reason[1536];
    /* A claim judged by its window: the window and the measured value the
     * verdict follows from (cp_claim_judge); false for a claim judged in
     * words (an order, "no copy"), whose reason says why. */
    bool has_window;
    cp_claim_window window;
    double value;
    /* With `cuproof run --runs K`: the value each pass measured (this
     * claim's first; cp_case_result_add_pass adds the others), so that a
     * window tighter than the spread between runs can be warned about. */
    double pass_values[CP_CLAIM_MAX_PASSES];
    size_t npass_values;
} cp_claim_result;

typedef struct cp_figure {
    char name[64];
    double value;
    char unit[16];
} cp_figure;

/* Values a run measured itself, one per launch (CUDA event times, host
 * issue times), kept next to the trace of the same run so that the two can
 * be compared, in the report and on replay. */
typedef struct cp_series {
    char name[48];
    char unit[16];
    double *values; /* owned */
    size_t n;
} cp_series;

/* One pass of `cuproof run --runs K` over a variant (the run,
 * not the sample, is the unit a comparison rests on): that pass's own
 * timed samples and their median, the GPU's clocks around them, the
 * device time its traced run kept the GPU busy (kernel and copy busy time
 * summed; 0 when untraced), and that traced run's metrics and findings:
 * the scalars alone (lanes, graphs, devices and kernels NULL), so that
 * each pass is one run of every trace metric too. */
/* The most processes one pass of a case is timed in (cuproof run
 * --processes). */
#define CP_MAX_PROCESSES 8
/* The cases timed in more processes are those whose every variant's
 * median is under this: a short variant's level is what moves between
 * processes, and a long case would multiply the run's time. */
#define CP_PROCESS_SHORT_MS 50.0

typedef struct cp_run_value {
    double median_ms;
    double *samples_ms; /* owned */
    size_t nsamples;
    /* The GPU's time of the same timed runs (cp_variant_result's
     * gpu_samples_ms) and the pass's value on it: their median, or with
     * several processes the mean of the processes' (gpu_process_ms);
     * NULL, 0 and 0 without. */
    double gpu_median_ms;
    double *gpu_samples_ms; /* owned */
    size_t ngpu_samples;
    cp_clocks clocks_before, clocks_after;
    uint64_t device_busy_ns;
    bool traced;
    cp_metrics metrics;
    /* The process that ran the pass (0: not said, as in schema 1.8): each
     * pass of `cuproof run --runs K` after the first runs in its own. */
    int pid;
    /* With --processes P (P > 1): each process's median, the pass's own
     * first; median_ms is then their median, not the pooled samples'. */
    double process_ms[CP_MAX_PROCESSES];
    int nprocesses;
    /* The same for the GPU's time, of the processes that have it;
     * gpu_median_ms is then their mean (cp_case_result_add_process says
     * why). */
    double gpu_process_ms[CP_MAX_PROCESSES];
    int ngpu_processes;
} cp_run_value;

/* Which figure of a variant's timed runs is its work, the one compare,
 * ab and the stopping rule judge (the other is shown beside it):
 *   CP_WORK_GPU   the GPU's time of the run's body: CUDA events bracketing
 *                 its streams (the runner's default; for a gated variant, from the
 *                 gate's end, so the host's pace of queuing is not in it);
 *   CP_WORK_WALL  the host's wall time around the body and a device
 *                 synchronisation, for a variant whose subject is the host
 *                 (threads, processes, contexts) or whose work events
 *                 cannot bracket (several devices): judged at the host
 *                 threshold only. */
/* (Wall time is 0: a result the runner did not time, exec's ranges say,
 * has no GPU time.) */
typedef enum { CP_WORK_WALL = 0, CP_WORK_GPU } cp_work_figure;

/* Why a variant read from a report without GPU time is judged on wall
 * time (cp_variant_result.figure_why). */
#define CP_WALL_ONLY "wall time only: the report predates GPU time (schema 1.14)"


typedef struct cp_variant_result {
    char name[64];
    bool ran;
    cp_timing timing;
    /* Every timed run's value in ms, in run order (owned): what compare
     * tests, rather than the summary above. Wall time: the host's clock
     * around the body and a device synchronisation. */
    double *samples_ms;
    size_t nsamples;
    /* The GPU's time of each of the same timed runs (owned, in run order;
     * NULL and 0 where not measured: a CPU-only case, a variant judged on
     * wall time, a report older than schema 1.14) and its summary. */
    double *gpu_samples_ms;
    size_t ngpu_samples;
    cp_timing gpu_timing;
    /* The figure that is the variant's work, and why it is wall time
     * when it is ("" for the GPU's time); `gated`: the body was queued
     * behind a gate kernel and the GPU's time runs from the gate's end.
     * A report older than 1.14 reads as CP_WORK_WALL with figure_why
     * "wall time only: the report predates GPU time". */
    cp_work_figure figure;
    char figure_why[160];
    bool gated;
    /* What ended the timed runs: "fixed" (a set count), "noise" (the
     * median's relative standard error fell to the target), "max_samples"
     * or "max_time" (the noise had not); and that relative error. */
    char stopped_by[16];
    double noise;
    /* The GPU's clocks before the variant's first timed run and after its
     * last. */
    cp_clocks clocks_before, clocks_after;
    /* The passes of `cuproof run --runs K` (K of them; owned), in order:
     * `timing` and `samples_ms` above are every pass's samples together.
     * NULL and 0 for a single pass (a report of one run, or of an older
     * schema): a comparison then has one run of it. */
    cp_run_value *runs;
    size_t nruns;
    /* The pass's value with --processes P: each process's median (this
     * one's first; cp_case_result_add_process adds the others), of which
     * the median is the pass's value; 0 for a pass of one process. The
     * GPU's time likewise, of which the mean is the pass's value. */
    double process_ms[CP_MAX_PROCESSES];
    int nprocesses;
    double gpu_process_ms[CP_MAX_PROCESSES];
    int ngpu_processes;
    bool traced;
    char untraced_reason[512];
    char skip_reason[160]; /* why the variant did not run; "" when it ran */
    cp_trace trace;
    cp_metrics metrics;
    /* A traced program whose records were streamed through the analysis
     * instead of kept (cuproof exec past its record limit): `trace` holds
     * its processes and counts but no records, which are in the files the
     * run wrote (PROGRAM.cprec, and a Perfetto file in protobuf form
     * whatever its size), and this is the timeline drawn from them. NULL
     * when the records are in `trace`. Owned. */
    cp_summary *summary;
    /* A traced program whose processes carry ranks: the ranks' table, the
     * hosts' clocks and the straggler (cuproof/internal/ranks.h, declared
     * only, so that a case's author pulls in no distributed API); NULL
     * otherwise. Owned. */
    struct cp_ranks *ranks;
    /* Read from a report (cp_report_read): bit i set when the report held
     * no value of metric i of cp_metric_defs (a report of an older schema
     * than the metric); 0 for a live result. */
    uint64_t metrics_missing;
    uint64_t worst_mismatches; /* over every verified run */
    uint64_t elements;         /* compared per run */
    int verified_runs;
    /* Device memory: free bytes after the first run minus after the last;
     * more than CP_LEAK_BYTES is a leak. memory_checked is false where
     * the case runs on the CPU. */
    bool memory_checked;
    long long leaked_bytes;
    /* From the variant's last run: the traced one when it was traced. */
    cp_series *series;
    size_t nseries, series_cap;
} cp_variant_result;

typedef struct cp_case_result {
    char name[64];
    char title[128];
    char source[160];
    /* The variant the others are measured against (cp_case_def.baseline);
     * "" when the variants do different work. */
    char baseline[64];
    cp_status status;
    char skip_reason[512];
    char error[1024];
    /* The parameters the case read and the values it used, "name=value"
     * separated by spaces; an override given with --param is marked "*". */
    char params[512];
    int device;         /* the runtime's ordinal the case ran on */
    int pid;            /* the process that ran it; 0 when not said */
    char gpu_name[256]; /* its name; "" when no GPU was used */
    /* Each list grows as the case adds to it (cp_result_add_*). */
    cp_check_result *checks;
    size_t nchecks, checks_cap;
    cp_variant_result *variants;
    size_t nvariants, variants_cap;
    cp_claim_result *claims;
    size_t nclaims, claims_cap;
    cp_figure *figures;
    size_t nfigures, figures_cap;
} cp_case_result;

typedef struct cp_report {
    char tool_version[32];
    char date[32]; /* ISO 8601, UTC */
    char profile[8];
    int repeat; /* timed runs per variant; 0: the stopping rule below */
    int min_samples, max_samples;
    double max_noise, min_time_s, max_time_s;
    cp_env env;
    bool traced;
    char untraced_reason[512];
    cp_case_result *cases;
    size_t ncases;
    /* A replay (cuproof replay): the recording's directory and the date it
     * was made; both "" for a live run. The environment is the
     * recording's. */
    char replayed_from[512];
    char recorded_date[32];
    /* cuproof exec: report.json's tracing_cost, from the
     * processes' own costs (cp_process.cost, in the first case's variant's
     * trace) and the launcher's post-processing: the time from the
     * program's last exit until the report was handed to be written (the
     * analysis, the checks and the trace files; writing the report
     * itself is not in it). False and 0 elsewhere. */
    bool has_tracing_cost;
    double postprocess_ms;
    /* 1.12: of the records the launcher read, those read while the program
     * ran (cp_follower, program.h) and those read after it, and the first
     * reason a file's records were read after it ("" when none was). */
    uint64_t records_read_during_run, records_read_after_exit;
    char read_after_exit_why[512];
    /* 1.15: exec --capture (has_capture): its SPEC as written, the windows
     * the processes traced and their summed time, and the program's wall
     * time, so that the report says what was traced and what was not. */
    bool has_capture;
    char capture[160];
    uint32_t capture_windows;
    double capture_window_ms, capture_program_ms;
    /* The first of them (at most 16): its process's pid, the range's first
     * occurrence in it (0: no range), its start after the trace's first
     * record and its length. */
    struct cp_report_window {
        uint32_t pid, first;
        double start_ms, length_ms;
    } capture_list[16];
    size_t ncapture_list;
} cp_report;

CP_API const char *cp_status_name(cp_status s);
CP_API const char *cp_check_status_name(cp_check_status s);
CP_API const char *cp_verdict_name(cp_verdict v);
CP_API int cp_status_from_name(const char *s);
CP_API int cp_verdict_from_name(const char *s);

/* The series called `name` among `n`, or NULL. */
CP_API const cp_series *cp_series_find(const cp_series *series, size_t n, const char *name);

/* Stores a copy of `values` as the series `name` of the list *list
 * (holding *n, with room for *cap, grown as needed), replacing an earlier
 * one of that name. Returns 0, CP_EINVAL when the name is empty, or
 * CP_ENOMEM. */
CP_API int cp_series_store(cp_series **list, size_t *n, size_t *cap, const char *name,
                           const char *unit, const double *values, size_t count);

/* Frees the values of n series and the list itself. */
CP_API void cp_series_free(cp_series *list, size_t n);

/* Appends a zeroed entry to a result's list, growing it. Each returns the
 * entry, or NULL when out of memory (CP_ENOMEM in cp_last_error). */
CP_API cp_check_result *cp_result_add_check(cp_case_result *r);
CP_API cp_variant_result *cp_result_add_variant(cp_case_result *r);
/* The variant of case `c` called `name`, or NULL (also for c NULL). */
CP_API const cp_variant_result *cp_case_variant(const cp_case_result *c, const char *name);
/* The case of report `r` called `name`, or NULL (also for r NULL). */
CP_API const cp_case_result *cp_report_case(const cp_report *r, const char *name);
CP_API cp_claim_result *cp_result_add_claim(cp_case_result *r);

/* The verdict of `value` against window w (cp_verdict's rule): confirmed
 * within [lo, hi]; beyond the range on the side away from `none`,
 * exceeded; between `none` and the range, fell short; at `none` or past
 * it, refuted. A value that is not finite: not measured. */
CP_API cp_verdict cp_claim_judge(const cp_claim_window *w, double value);

/* A windowed claim measured in two passes or more: the mean and sample
 * deviation of its values, the window's bound (lo, hi or none) nearest the
 * mean, where its verdict changes, and how many deviations away it lies
 * (INFINITY with no spread). False without two values. */
CP_API bool cp_claim_spread(const cp_claim_result *c, double *mean, double *sd, double *bound,
                            double *spreads);

/* The rule of window w in one line, as reports show it beside the
 * verdict: "confirmed within 3 to 4.5x; exceeded above 4.5x; fell short
 * from 1x to 3x; refuted at 1x or below". */
CP_API void cp_claim_rule(const cp_claim_window *w, char *out, size_t len);
CP_API cp_figure *cp_result_add_figure(cp_case_result *r);

/* Frees the lists, traces, metrics and series a case result owns (not
 * the result itself) and leaves it empty. */
/*
 * `cuproof run --runs K`: pass `pass` of a case (the same case run again,
 * later) folded into `into`, the first pass's result. Each variant of the
 * pass with timed samples becomes one more of into's runs (cp_run_value:
 * its samples and median, clocks and traced device time), the first pass
 * becoming run 0 when it has none yet; into's samples and timing become
 * every run's together; the rest (trace, checks, claims) stays the first
 * pass's, except that a pass that failed or was inconclusive makes `into`
 * so too, its error or reason prefixed "pass N: " and each of its failed
 * checks added, so that no pass's failure is lost. `pass` is left as it
 * was; its owner frees it. Returns 0 or CP_ENOMEM.
 */
CP_API int cp_case_result_add_pass(cp_case_result *into, const cp_case_result *pass, int number);

/*
 * `cuproof run --processes P`: the same pass of a case timed again in
 * another process (`proc`, run untraced) folded into `into`, that pass's
 * result, before the pass joins the others (cp_case_result_add_pass).
 * Why: on an H100 a short variant's time sits on a level each process
 * draws (its halves within one process agree within 1-2%, processes
 * differ by 8-14%; samples/h100-layout), so a pass of one process is one
 * draw of that level, and a pass's median over P processes is steadier.
 * Each variant of proc with timed samples adds its median to into's
 * process_ms (into's own median first) and its samples after into's;
 * into's timing becomes theirs, and a later cp_case_result_add_pass
 * takes the median of process_ms as the pass's value. The GPU's time,
 * where both have it, goes likewise into gpu_process_ms, and the pass's
 * GPU value is their *mean*: a process's GPU level is a draw of the
 * hardware channels its context was given, and on the H200 a short
 * chain of kernels and copies on one stream runs at one of two levels
 * 7-10% apart by its channel (samples/h200-gpu-time/queued-levels), so
 * the median of a few processes is one of the two, where the mean
 * estimates the level a program meets on average. Each process's level
 * is itself a median of its samples, so a stray sample does not move
 * it. Wall time keeps the median: a host-bound process can stray by a
 * whole level (a busy neighbour, a layout), the GPU's only by what its
 * channels allow. A proc that failed
 * makes `into` fail, its error prefixed "process N: ", and its failed
 * checks are added likewise; its skipped and inconclusive checks are not
 * (it ran untraced on purpose). Returns 0, CP_EINVAL when into already
 * holds CP_MAX_PROCESSES processes, or CP_ENOMEM.
 */
CP_API int cp_case_result_add_process(cp_case_result *into, const cp_case_result *proc,
                                      int number);

/* The between-run spread of a variant's passes (cp_run_value) on the
 * figure compare judges it on, named in *figure ("GPU time", "GPU own
 * busy time (traced)" or "wall time"): the relative standard deviation of
 * the passes' values (sample sd over mean) and the largest over the
 * smallest. Returns false (both 0) with fewer than two passes. */
CP_API bool cp_variant_run_spread(const cp_variant_result *v, double *rel_sd, double *max_over_min,
                                  const char **figure);

CP_API void cp_case_result_free(cp_case_result *r);

#ifdef __cplusplus
}
#endif

#endif
