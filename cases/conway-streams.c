/*
 * conway-streams (seed 000 §3.3.2, 001: conway_gpu_streams.py): N
 * independent Games of Life on 128 x 128 toroidal boards, one stream each.
 * Every generation, as the source's animation does for each board: one
 * conway_ker launch, an asynchronous copy of the new board to the host
 * (the source's get_async for the image) and a device-to-device copy of
 * the new board over the old (set_async). Nothing synchronises between
 * generations.
 *
 * streams-N issues that work from the host, as the source does, for N = 1,
 * 4, 8, 16 and 64 boards. On an H100 a generation of a 128 x 128 board
 * (16 blocks, a few microseconds) runs faster than the host issues its
 * three calls, so the streams' kernels rarely meet: the trace says whether
 * they overlapped, and the busy fraction shows the GPU waiting for the
 * host. queued-N is the same program with every stream held behind a gate
 * kernel while the host queues QUEUED_GENERATIONS generations, then
 * released at once (nvbench's blocking-kernel technique): the host no
 * longer paces the streams, so the kernels of different boards must
 * overlap (the control, queued-1, cannot).
 *
 * Every board must equal the CPU reference after the last generation. The
 * source's claim that raising N hardly raises the load is measured as time
 * per generation, per board and the fraction of the span a kernel ran.
 */
#include <cuproof/case.h>
#include <cuproof/nvtx.h>
#include <cuproof/units.h>
#include "../kernels/conway.h"
#include <cuproof/gate.h>
#include "references.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOARD 128     /* the source's N */
#define MAX_BOARDS 64 /* the largest variant */
/* Few enough that every call fits in the driver's queues while the gate
 * holds the streams (64 boards x 8 x 3 calls). */
#define QUEUED_GENERATIONS 8
#define GATE_TIMEOUT_NS 2000000000ull

/* In the order of .variants: host-issued streams, then queued ones. */
#define NSIZES 5
static const int boards_of[2 * NSIZES] = {1, 4, 8, 16, 64, 1, 4, 8, 16, 64};

static bool is_queued(int variant)
{
    return variant >= NSIZES;
}

typedef struct state {
    int generations;
    size_t cells; /* BOARD * BOARD */
    int *initial; /* MAX_BOARDS boards */
    int *expected;        /* after `generations` */
    int *expected_queued; /* after QUEUED_GENERATIONS */
    int *gate;            /* mapped host memory: [0] opens the gate, [1] says it timed out */
    /* Per variant: runs whose gate timed out, and those of them in which
     * the host was still queueing when the timeout passed. */
    int gate_timeouts[2 * NSIZES];
    int late_queueing[2 * NSIZES];
    double slowest_queueing_ms;
    int *host_out; /* page-locked: the get_async target */
    int *dev_old, *dev_new;
    cudaStream_t streams[MAX_BOARDS];
    cudaStream_t origin; /* where the gate runs */
    cudaEvent_t opened;  /* recorded after the gate: the boards' streams wait on it */
    uint64_t live_cells; /* in the expected boards: a dead world proves little */
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    for (int k = 0; k < MAX_BOARDS; k++)
        if (s->streams[k])
            cudaStreamDestroy(s->streams[k]);
    if (s->opened)
        cudaEventDestroy(s->opened);
    if (s->origin)
        cudaStreamDestroy(s->origin);
    cudaFreeHost(s->gate);
    cudaFree(s->dev_old);
    cudaFree(s->dev_new);
    cudaFreeHost(s->host_out);
    free(s->initial);
    free(s->expected);
    free(s->expected_queued);
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    int *a = NULL, *b = NULL;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    s->generations = cp_ctx_profile(ctx) == CP_PROFILE_FULL ? 200 : 40;
    s->cells = (size_t)BOARD * BOARD;
    size_t all = s->cells * MAX_BOARDS, bytes = all * sizeof(int);
    s->initial = malloc(bytes);
    s->expected = malloc(bytes);
    s->expected_queued = malloc(bytes);
    a = malloc(s->cells * sizeof *a);
    b = malloc(s->cells * sizeof *b);
    if (!s->initial || !s->expected || !s->expected_queued || !a || !b) {
        rc = CP_ENOMEM;
        goto out;
    }
    /* The source seeds each cell alive with probability 0.25. */
    uint32_t seed = 17;
    for (size_t i = 0; i < all; i++)
        s->initial[i] = cp_rand_next(&seed) % 4 == 0;
    for (int k = 0; k < MAX_BOARDS; k++) {
        memcpy(a, s->initial + (size_t)k * s->cells, s->cells * sizeof *a);
        for (int g = 1; g <= s->generations; g++) {
            cp_ref_conway_step(b, a, BOARD);
            int *t = a;
            a = b;
            b = t;
            if (g == QUEUED_GENERATIONS)
                memcpy(s->expected_queued + (size_t)k * s->cells, a, s->cells * sizeof *a);
        }
        memcpy(s->expected + (size_t)k * s->cells, a, s->cells * sizeof *a);
    }
    for (size_t i = 0; i < all; i++)
        s->live_cells += (uint64_t)s->expected[i];
    CP_CUDA(cudaMallocHost((void **)&s->host_out, bytes));
    CP_CUDA(cudaMalloc((void **)&s->dev_old, bytes));
    CP_CUDA(cudaMalloc((void **)&s->dev_new, bytes));
    for (int k = 0; k < MAX_BOARDS; k++) {
        CP_CUDA(cudaStreamCreate(&s->streams[k]));
        cp_nvtx_name_stream(s->streams[k], "conway-streams board %d", k);
    }
    CP_CUDA(cudaStreamCreateWithFlags(&s->origin, cudaStreamNonBlocking));
    CP_CUDA(cudaEventCreateWithFlags(&s->opened, cudaEventDisableTiming));
    CP_CUDA(cudaHostAlloc((void **)&s->gate, 2 * sizeof(int), cudaHostAllocMapped));
    /* Bodies that only queue work are timed behind the runner's gate, so
     * that their GPU time is the boards' work at the GPU's pace; the
     * queued variants' own gate then opens (the host has queued) before
     * the runner's does, and its spin is left out of their time. A body of
     * more calls than a gate holds (streams-16 and -64: 1,920 and 7,680)
     * is judged on wall time: ungated, its boards overlap as fast as the
     * host queues them, so the GPU's time follows the host's pace (on the
     * H200 its busy time moved 11-17% with the VM's pace between passes,
     * samples/h200-gpu-time/streams-busy), a figure of the host's. */
    for (int v = 0; v < 2 * NSIZES; v++) {
        int calls = boards_of[v] * 3 * (is_queued(v) ? QUEUED_GENERATIONS : s->generations);
        if (calls <= CP_TIME_GATE_MAX_OPS)
            CP_TRY(cp_time_gated(ctx, v));
        else
            CP_TRY(cp_time_wall(ctx, v,
                                "ungated (more calls than a gate holds): the boards overlap at the "
                                "host's pace of queuing"));
    }
out:
    free(a);
    free(b);
    return rc;
}

/* One generation of board k on `stream`: the source's three calls. */
static int generation(state *s, int k, cudaStream_t stream)
{
    int rc = 0;
    size_t off = (size_t)k * s->cells, bytes = s->cells * sizeof(int);
    CP_CUDA(cp_conway_launch(s->dev_new + off, s->dev_old + off, BOARD, stream));
    CP_CUDA(cudaMemcpyAsync(s->host_out + off, s->dev_new + off, bytes, cudaMemcpyDeviceToHost,
                            stream));
    CP_CUDA(cudaMemcpyAsync(s->dev_old + off, s->dev_new + off, bytes, cudaMemcpyDeviceToDevice,
                            stream));
out:
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    size_t bytes = s->cells * (size_t)boards_of[v->index] * sizeof(int);
    /* Fresh boards on the device; poisoned host copies and new boards, so
     * that a generation or copy that did not happen shows. */
    CP_CUDA(cudaMemcpy(s->dev_old, s->initial, bytes, cudaMemcpyHostToDevice));
    CP_CUDA(cudaMemset(s->dev_new, 0xFF, bytes));
    memset(s->host_out, 0xFF, bytes);
out:
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    int n = boards_of[v->index];
    bool queued = is_queued(v->index);
    bool held = false;
    double queue_start = 0;
    int generations = queued ? QUEUED_GENERATIONS : s->generations;
    if (queued) {
        volatile int *gate = s->gate;
        gate[0] = 0;
        gate[1] = 0;
        queue_start = cp_now_ms();
        CP_TRY(cp_gate_launch(gate, GATE_TIMEOUT_NS, s->gate + 1, s->origin));
        held = true;
        CP_CUDA(cudaEventRecord(s->opened, s->origin));
        for (int k = 0; k < n; k++)
            CP_CUDA(cudaStreamWaitEvent(s->streams[k], s->opened, 0));
    }
    for (int g = 0; g < generations; g++) {
        cp_phase_begin(ctx, "generation");
        for (int k = 0; k < n; k++)
            CP_TRY(generation(s, k, s->streams[k]));
        cp_phase_end(ctx);
    }
out:
    if (held) {
        /* Opens the gate on every path, so a failed call cannot leave the
         * device spinning until the timeout. */
        held = false;
        double queueing_ms = cp_now_ms() - queue_start;
        __atomic_store_n(&s->gate[0], 1, __ATOMIC_SEQ_CST);
        if (rc == 0) {
            CP_CUDA(cudaStreamSynchronize(s->origin));
            if (__atomic_load_n(&s->gate[1], __ATOMIC_SEQ_CST) != 0) {
                s->gate_timeouts[v->index]++;
                /* The gate cannot start before its launch call, and
                 * queue_start is taken before that call, so a timeout is
                 * only possible in time if the host took at least the
                 * timeout to queue: its launches blocked. A timeout with a
                 * quicker host is the gate's own failure. */
                s->late_queueing[v->index] += queueing_ms >= GATE_TIMEOUT_NS / 1e6;
            }
            if (queueing_ms > s->slowest_queueing_ms)
                s->slowest_queueing_ms = queueing_ms;
        }
    }
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    size_t n = s->cells * (size_t)boards_of[v->index];
    const int *want = is_queued(v->index) ? s->expected_queued : s->expected;
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += s->host_out[i] != want[i];
    *mismatches = bad;
    *elements = n;
    return 0;
}

/* The span of a variant's Game of Life work: its device activity without
 * the gate kernel, which spins while the host queues. 0 when untraced. */
static uint64_t work_span_ns(const cp_variant_result *v)
{
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; v && v->traced && i < v->trace.n; i++) {
        const cp_activity *a = &v->trace.items[i];
        if (!cp_activity_is_device_work(a) || (a->name && strcmp(a->name, CP_GATE_KERNEL) == 0))
            continue;
        first = a->start < first ? a->start : first;
        last = a->end > last ? a->end : last;
    }
    return last > first ? last - first : 0;
}

/* How long the gate kernel ran in a traced variant (0 when none). */
static uint64_t gate_ns(const cp_variant_result *v)
{
    for (size_t i = 0; v && v->traced && i < v->trace.n; i++) {
        const cp_activity *a = &v->trace.items[i];
        if (a->kind == CP_ACT_KERNEL && a->name && strcmp(a->name, CP_GATE_KERNEL) == 0)
            return a->end - a->start;
    }
    return 0;
}

static int checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    cp_check(ctx, "reference: the boards are still alive after the last generation",
             s->live_cells > 0, "live cells > 0", "%llu live cells",
             (unsigned long long)s->live_cells);
    /* A timeout while the host queued for less than the timeout means the
     * gate failed to hold: a failure. A timeout while the host was still
     * queueing means the launches blocked (compute-sanitizer's initcheck
     * runs each launch to completion, say): the queued premise did not
     * hold, so the checks that rest on it are skipped with the reason. */
    int timeouts = 0, late = 0;
    for (int i = NSIZES; i < 2 * NSIZES; i++) {
        timeouts += s->gate_timeouts[i];
        late += s->late_queueing[i];
    }
    char premise[256], slowest[32], timeout[32];
    cp_fmt_ms(s->slowest_queueing_ms, slowest, sizeof slowest);
    cp_fmt_ms(GATE_TIMEOUT_NS / 1e6, timeout, sizeof timeout);
    snprintf(premise, sizeof premise,
             "the host took up to %s to queue one run, longer than the gate's %s "
             "timeout, in %d of %d timed-out runs: its launches blocked, so the work was "
             "not queued ahead",
             slowest, timeout, late, timeouts);
    cp_figure_add(ctx, "queued: the host's slowest queueing of one run", s->slowest_queueing_ms,
                  "ms");
    const char *gate_check = "queued: the gate opened before its timeout in every run";
    const char *gate_expected = "0 timeouts (the host queued everything in time)";
    if (timeouts > 0 && late == timeouts)
        cp_check_skip(ctx, gate_check, gate_expected, premise);
    else
        cp_check(ctx, gate_check, timeouts == 0, gate_expected,
                 "%d timeouts, %d of them with the host still queueing (slowest %s)",
                 timeouts, late, slowest);
    /* The queued overlap rests on the gate: without it the case has shown
     * nothing about concurrency (CUDA_LAUNCH_BLOCKING=1 blocks every launch
     * and skips it), so it is inconclusive, not passed. */
    cp_essential(ctx, gate_check);
    for (int i = 0; i < 2 * NSIZES; i++) {
        const char *variant = cp_ctx_variant(ctx, i);
        const cp_variant_result *v = cp_variant_result_get(ctx, variant);
        int n = boards_of[i];
        bool queued = is_queued(i);
        /* The gate is one more kernel. */
        uint32_t want = (uint32_t)(n * (queued ? QUEUED_GENERATIONS : s->generations)) + queued;
        char name[128], expected[96];
        snprintf(name, sizeof name, "%s: every generation of every board ran as a kernel",
                 variant);
        snprintf(expected, sizeof expected, "%u kernels", want);
        cp_check_trace(ctx, variant, name, v && v->metrics.kernels == want, expected,
                       "%u kernels", v ? v->metrics.kernels : 0);
        uint32_t peak = v ? v->metrics.peak_concurrent_kernels : 0;
        if (!queued && n > 1) {
            /* Whether the host keeps up is the GPU's and host's speed, not
             * a property of the program: reported, not asserted. */
            snprintf(name, sizeof name, "%s peak concurrent kernels", variant);
            if (v && v->traced)
                cp_figure_add(ctx, name, peak, "kernels");
        } else if (n > 1) {
            /* Not an expectation: it rests on the queued premise, which
             * only this run can say held. */
            snprintf(name, sizeof name, "%s: kernels of different streams overlap", variant);
            if (s->late_queueing[i] > 0)
                cp_check_skip(ctx, name, "peak concurrent kernels > 1", premise);
            else
                cp_check_trace(ctx, variant, name, peak > 1, "peak concurrent kernels > 1",
                               "%u", peak);
            cp_essential(ctx, name);
        }
    }
    return 0;
}

/* One board is one stream, which runs one kernel at a time, whether the
 * host paces it or a gate held its work queued (its stream waits for the
 * gate to end): the control for the queued boards' overlap, which checks()
 * asserts. */
static const char expectations[] =
    "streams-1: peak_concurrent_kernels == 1\n"
    "queued-1: peak_concurrent_kernels == 1\n";

static int claims(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    const char *text = "Raising the number of concurrent games (4 to 8, 16, 100, 200) does not "
                       "raise the GPU load much";
    const char *source = "000 §3.3.2 (watched in nvidia-smi), 001";
    double per_gen[2 * NSIZES] = {0}, load[2 * NSIZES] = {0};
    int held_to = 0;
    char measured[128] = "";
    size_t used = 0;
    for (int i = 0; i < 2 * NSIZES; i++) {
        const char *variant = cp_ctx_variant(ctx, i);
        double median = cp_variant_median_ms(ctx, variant);
        if (median <= 0) {
            cp_claim_add(ctx, text, source, "load nearly flat in N", "not measured",
                         CP_VERDICT_NOT_MEASURED, "variant %s did not run", variant);
            return 0;
        }
        const cp_variant_result *v = cp_variant_result_get(ctx, variant);
        /* Queued runs include the host's queueing behind the gate: their
         * pace is the traced span of the work alone. */
        if (is_queued(i) && !v->traced)
            continue;
        per_gen[i] = is_queued(i) ? (double)work_span_ns(v) / 1e3 / QUEUED_GENERATIONS
                                  : median * 1e3 / s->generations;
        uint64_t span = is_queued(i) ? work_span_ns(v) : v->metrics.span_ns;
        load[i] = v->traced && span ? (double)(v->metrics.kernel_busy_ns - gate_ns(v)) / (double)span
                                    : -1;
        char fig[64];
        snprintf(fig, sizeof fig, "%s us per generation", variant);
        cp_figure_add(ctx, fig, per_gen[i], "us");
        if (load[i] >= 0) {
            snprintf(fig, sizeof fig, "%s kernel busy fraction", variant);
            cp_figure_add(ctx, fig, load[i], "ratio");
        }
        if (i >= NSIZES)
            continue;
        used += (size_t)snprintf(measured + used, sizeof measured - used, "%sN=%d: %.0f µs",
                                 i ? ", " : "", boards_of[i], per_gen[i]);
        if (per_gen[i] <= 2.0 * per_gen[0])
            held_to = boards_of[i];
    }
    /* "Hardly raises": N boards cost at most twice one board's time per
     * generation, judged on the source's own way of issuing the work. */
    bool holds = held_to >= 16;
    cp_claim_add(ctx, text, source, "load nearly flat in N", measured,
                 holds ? CP_VERDICT_CONFIRMED : CP_VERDICT_REFUTED,
                 "measured as time per generation of all N boards issued as the source does "
                 "(medians over %d generations): it stays within 2x of one board's up to N = "
                 "%d. Per board and generation that is %.1f µs at N = 1, %.1f at N = 16 and "
                 "%.1f at N = 64: the host's three calls per board and generation set the "
                 "pace, and a kernel ran during %.0f%% of the span at N = 64. What nvidia-smi "
                 "showed as a flat load was the GPU waiting for the host. Queued behind a "
                 "gate and released at once, the same work runs at the GPU's pace: %.1f µs "
                 "per generation at N = 1, %.1f at N = 16 and %.1f at N = 64 (a kernel busy "
                 "%.0f%% of the span at N = 64, %.0f%% at N = 1): %s (%d SMs; a board is 16 "
                 "blocks). Queued figures are 0 when those variants were not traced.",
                 s->generations, held_to, per_gen[0], per_gen[3] / 16, per_gen[4] / 64,
                 100 * load[4], per_gen[5], per_gen[8], per_gen[9], 100 * load[9],
                 100 * load[5],
                 load[9] > 1.5 * load[5] ? "once the host no longer paces it, the load does "
                                           "rise with N as the boards fill the GPU"
                                         : "even then the load stays nearly flat",
                 cp_ctx_env(ctx)->sm_count);
    return 0;
}

CUPROOF_CASE(conway_streams,
    .title = "N Games of Life on N streams: kernels, get_async and set_async per generation",
    .source = "seed 000 §3.3.2, 001 (conway_gpu_streams.py)",
    .variants = CP_VARIANTS("streams-1", "streams-4", "streams-8", "streams-16", "streams-64",
                 "queued-1", "queued-4", "queued-8", "queued-16", "queued-64"),
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .expect = expectations,
    .checks = checks,
    .claims = claims,
    .teardown = teardown);
