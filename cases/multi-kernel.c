/*
 * multi-kernel (seed 000 §3.3.1, 001, 002): many arrays, one mult_ker
 * launch each (1 block x 64 threads), run three ways:
 *
 *   sync              blocking copies and launches on the default stream,
 *                     as the source's multi-kernel.py;
 *   streams-pageable  one stream per array with asynchronous copies from
 *                     pageable host memory, as multi-kernel_streams.py does
 *                     (numpy arrays are pageable);
 *   streams-pinned    the same from page-locked memory, the only way the
 *                     copies can overlap kernels;
 *   depth-first       pinned, but each stream's copy in, kernel and copy out
 *                     issued together before the next stream's;
 *   legacy-default-stream      breadth-first pinned, with one small memset
 *                     on the legacy default stream between two halves of
 *                     the kernels: it waits for every blocking stream and
 *                     they wait for it;
 *   per-thread-default-stream  the same memset on cudaStreamPerThread,
 *                     which does not synchronise with other streams;
 *   serialised        depth-first with each stream synchronised before the
 *                     next is issued: the negative control, which must show
 *                     no concurrency at all;
 *   graph             streams-pinned's copies and launches captured once,
 *                     from its streams, into one CUDA graph (forked from and
 *                     joined to an origin stream by events), instantiated
 *                     in setup and launched once per run: every kernel and
 *                     copy must carry the graph's id, and the graph must
 *                     overlap and run kernels at once as the streams do.
 *
 * The source's variants issue work breadth-first: every copy in, then every
 * kernel, then every copy out. mult_ker leaves each element as it was, so
 * the output must equal the input bit for bit; the trace must show every
 * kernel, and the overlap (or its absence) that each variant implies.
 */
#include <cuproof/case.h>
#include <cuproof/nvtx.h>
#include <cuproof/units.h>
#include "../kernels/mult.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In the order of .variants below. */
enum { SYNC = 0, PAGEABLE, PINNED, DEPTH_FIRST, LEGACY, PER_THREAD, SERIALISED, GRAPH, NVARIANTS };

typedef struct state {
    int arrays, len, block;
    size_t elems;
    float *in, *out;         /* pageable host memory */
    float *pin_in, *pin_out; /* page-locked host memory */
    float *dev;
    float *scratch; /* the small buffer the default-stream variants memset */
    cudaStream_t *streams;
    /* The graph variant: the origin stream its capture forks from and
     * joins to, one event per stream for the fork and join, the graph and
     * its executable. */
    cudaStream_t origin;
    cudaEvent_t fork, *joins;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    size_t graph_nodes;
    uint64_t reference_mismatches; /* cp_ref_mult against the input, first array */
    /* Least host time over the runs until the last call returned: where
     * the sources stopped their clock. */
    double issue_ms[NVARIANTS];
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    if (s->exec)
        cudaGraphExecDestroy(s->exec);
    if (s->graph)
        cudaGraphDestroy(s->graph);
    for (int k = 0; s->joins && k < s->arrays; k++)
        if (s->joins[k])
            cudaEventDestroy(s->joins[k]);
    free(s->joins);
    if (s->fork)
        cudaEventDestroy(s->fork);
    if (s->origin)
        cudaStreamDestroy(s->origin);
    for (int k = 0; s->streams && k < s->arrays; k++)
        if (s->streams[k])
            cudaStreamDestroy(s->streams[k]);
    free(s->streams);
    cudaFree(s->dev);
    cudaFree(s->scratch);
    cudaFreeHost(s->pin_in);
    cudaFreeHost(s->pin_out);
    free(s->in);
    free(s->out);
}

static int issue_breadth_first(state *s, const float *src, float *dst, cp_ctx *ctx,
                               int variant);

/* The graph variant's graph: streams-pinned's work captured from the same
 * streams, each forked from the origin stream by an event and joined back
 * by its own, so that the graph keeps the streams' independence (one
 * branch per array: copy in, kernel, copy out). */
static int capture_graph(state *s)
{
    int rc = 0;
    CP_CUDA(cudaStreamCreateWithFlags(&s->origin, cudaStreamNonBlocking));
    cp_nvtx_name_stream(s->origin, "multi-kernel graph origin");
    CP_CUDA(cudaEventCreateWithFlags(&s->fork, cudaEventDisableTiming));
    for (int k = 0; k < s->arrays; k++)
        CP_CUDA(cudaEventCreateWithFlags(&s->joins[k], cudaEventDisableTiming));
    CP_CUDA(cudaStreamBeginCapture(s->origin, cudaStreamCaptureModeThreadLocal));
    CP_CUDA(cudaEventRecord(s->fork, s->origin));
    for (int k = 0; k < s->arrays; k++)
        CP_CUDA(cudaStreamWaitEvent(s->streams[k], s->fork, 0));
    rc = issue_breadth_first(s, s->pin_in, s->pin_out, NULL, GRAPH);
    for (int k = 0; rc == 0 && k < s->arrays; k++) {
        CP_CUDA(cudaEventRecord(s->joins[k], s->streams[k]));
        CP_CUDA(cudaStreamWaitEvent(s->origin, s->joins[k], 0));
    }
out:;
    /* The capture ends whatever happened, or the streams stay capturing. */
    cudaGraph_t graph = NULL;
    cudaError_t end = cudaStreamEndCapture(s->origin, &graph);
    s->graph = graph;
    if (rc == 0 && end != cudaSuccess)
        rc = cp_check_cuda(end, __FILE__, __LINE__, "cudaStreamEndCapture(origin, &graph)");
    if (rc == 0) {
        rc = cp_check_cuda(cudaGraphGetNodes(s->graph, NULL, &s->graph_nodes), __FILE__,
                           __LINE__, "cudaGraphGetNodes(graph)");
        if (rc == 0)
            rc = cp_check_cuda(cudaGraphInstantiate(&s->exec, s->graph, 0), __FILE__, __LINE__,
                               "cudaGraphInstantiate(&exec, graph, 0)");
    }
    return rc;
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    /* full: the source's 200 arrays of 1M floats; ci: a quarter of the
     * work per kernel and 64 arrays, still enough streams to overlap. */
    bool full = cp_ctx_profile(ctx) == CP_PROFILE_FULL;
    long arrays = 0, len = 0;
    CP_TRY(cp_param_int(ctx, "arrays", full ? 200 : 64, 2, 4096, &arrays));
    CP_TRY(cp_param_int(ctx, "len", full ? 1 << 20 : 1 << 18, 64, 1 << 24, &len));
    s->arrays = (int)arrays;
    s->len = (int)len;
    s->block = 64;
    /* Each kernel is one block that strides over its array by the block. */
    if (len % s->block != 0)
        return cp_failf(CP_EINVAL, "parameter len: %ld is not a multiple of the block's %d "
                        "threads", len, s->block);
    s->elems = (size_t)s->arrays * (size_t)s->len;
    size_t bytes = s->elems * sizeof(float);

    s->in = malloc(bytes);
    s->out = malloc(bytes);
    s->streams = calloc((size_t)s->arrays, sizeof *s->streams);
    s->joins = calloc((size_t)s->arrays, sizeof *s->joins);
    if (!s->in || !s->out || !s->streams || !s->joins) {
        rc = CP_ENOMEM;
        goto out;
    }
    /* The source draws from a normal distribution; any finite values under
     * FLT_MAX / 2 survive the kernel's doubling unchanged. */
    s->reference_mismatches = cp_ref_mult_inputs(s->in, s->elems, 7, (size_t)s->len);

    CP_CUDA(cudaMallocHost((void **)&s->pin_in, bytes));
    CP_CUDA(cudaMallocHost((void **)&s->pin_out, bytes));
    memcpy(s->pin_in, s->in, bytes);
    CP_CUDA(cudaMalloc((void **)&s->dev, bytes));
    CP_CUDA(cudaMalloc((void **)&s->scratch, 256));
    for (int k = 0; k < s->arrays; k++) {
        /* Blocking streams (flags 0), as PyCUDA's drv.Stream() creates. */
        CP_CUDA(cudaStreamCreate(&s->streams[k]));
        cp_nvtx_name_stream(s->streams[k], "multi-kernel stream %d", k);
    }
    CP_TRY(capture_graph(s));
    /* The variants whose bodies only queue (page-locked copies, kernels,
     * the graph) are timed behind the runner's gate, so that their GPU
     * time is the work at the GPU's pace; the graph's origin stream is
     * non-blocking, so the events bracket it too. sync, streams-pageable
     * and serialised wait on their work inside the body. */
    CP_TRY(cp_time_streams(ctx, (void *const[]){s->origin}, 1));
    const int queue_only[] = {PINNED, DEPTH_FIRST, LEGACY, PER_THREAD, GRAPH};
    for (size_t i = 0; 3 * s->arrays <= CP_TIME_GATE_MAX_OPS && i < 5; i++)
        CP_TRY(cp_time_gated(ctx, queue_only[i]));
    /* streams-pageable's subject is the host: the CPU stages each
     * pageable copy, and the kernels wait on its pace (on the H200 its
     * events spread by 9% between passes, its kernels' summed time by
     * 0.3%). */
    CP_TRY(cp_time_wall(ctx, PAGEABLE,
                        "pageable copies: the CPU stages each one, the kernels wait on it"));
out:
    return rc;
}

static bool pinned(const cp_variant *v)
{
    return v->index != SYNC && v->index != PAGEABLE;
}

static float *host_out(const state *s, const cp_variant *v)
{
    return pinned(v) ? s->pin_out : s->out;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    /* Poison the host output and the device arrays: a copy or kernel that
     * did not happen cannot leave the right values behind. */
    memset(host_out(s, v), 0xFF, s->elems * sizeof(float));
    CP_CUDA(cudaMemset(s->dev, 0xFF, s->elems * sizeof(float)));
out:
    return rc;
}

/* Depth-first: each stream's copy in, kernel and copy out together; the
 * serialised control also waits for the stream before the next. */
static int run_depth_first(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    size_t bytes = (size_t)s->len * sizeof(float);
    for (int k = 0; k < s->arrays; k++) {
        size_t off = (size_t)k * (size_t)s->len;
        cp_phase_begin(ctx, "copy-in");
        CP_CUDA(cudaMemcpyAsync(s->dev + off, s->pin_in + off, bytes, cudaMemcpyHostToDevice,
                                s->streams[k]));
        cp_phase_end(ctx);
        cp_phase_begin(ctx, "compute");
        CP_CUDA(cp_mult_launch(s->dev + off, s->len, s->block, s->streams[k]));
        cp_phase_end(ctx);
        cp_phase_begin(ctx, "copy-out");
        CP_CUDA(cudaMemcpyAsync(s->pin_out + off, s->dev + off, bytes, cudaMemcpyDeviceToHost,
                                s->streams[k]));
        if (v->index == SERIALISED)
            CP_CUDA(cudaStreamSynchronize(s->streams[k]));
        cp_phase_end(ctx);
    }
out:
    return rc;
}

static int issue(cp_ctx *ctx, const cp_variant *v);

static int run(cp_ctx *ctx, const cp_variant *v)
{
    state *s = cp_ctx_state(ctx);
    double t0 = cp_now_ms();
    int rc = issue(ctx, v);
    double issued = cp_now_ms() - t0;
    if (rc == 0)
        cp_keep_least(&s->issue_ms[v->index], issued);
    return rc;
}

/* Issues the variant's copies and launches; the runner waits for them. */
static int issue(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    const float *src = pinned(v) ? s->pin_in : s->in;
    float *dst = host_out(s, v);
    if (v->index == DEPTH_FIRST || v->index == SERIALISED)
        return run_depth_first(ctx, v);

    if (v->index == GRAPH) {
        /* The runner waits for the device, which the graph's launch on
         * the origin stream is part of. */
        CP_CUDA(cudaGraphLaunch(s->exec, s->origin));
        return 0;
    }
    return issue_breadth_first(s, src, dst, ctx, v->index);
out:
    return rc;
}

/* NVTX phases, none without a ctx (while the graph is captured: phases
 * are host events, not graph nodes). A phase left open by an error is
 * closed by the runner. */
static void phase_begin(cp_ctx *ctx, const char *name)
{
    if (ctx)
        cp_phase_begin(ctx, name);
}

static void phase_end(cp_ctx *ctx)
{
    if (ctx)
        cp_phase_end(ctx);
}

/* Breadth-first: every copy in, every kernel, every copy out, on the
 * variant's streams (the default stream for sync). `ctx` NULL while the
 * graph is captured: NVTX phases are host events, not graph nodes. */
static int issue_breadth_first(state *s, const float *src, float *dst, cp_ctx *ctx,
                               int variant)
{
    int rc = 0;
    size_t bytes = (size_t)s->len * sizeof(float);
    phase_begin(ctx, "copy-in");
    for (int k = 0; k < s->arrays; k++) {
        float *d = s->dev + (size_t)k * (size_t)s->len;
        if (variant == SYNC)
            CP_CUDA(cudaMemcpy(d, src + (size_t)k * s->len, bytes, cudaMemcpyHostToDevice));
        else
            CP_CUDA(cudaMemcpyAsync(d, src + (size_t)k * s->len, bytes, cudaMemcpyHostToDevice,
                                    s->streams[k]));
    }
    phase_end(ctx);
    phase_begin(ctx, "compute");
    for (int k = 0; k < s->arrays; k++) {
        /* Halfway, the default-stream variants put a memset on a default
         * stream: the legacy one serialises, the per-thread one does not. */
        if (k == s->arrays / 2 && (variant == LEGACY || variant == PER_THREAD))
            CP_CUDA(cudaMemsetAsync(s->scratch, 0, 256,
                                    variant == LEGACY ? cudaStreamLegacy : cudaStreamPerThread));
        CP_CUDA(cp_mult_launch(s->dev + (size_t)k * s->len, s->len, s->block,
                               variant == SYNC ? 0 : s->streams[k]));
    }
    phase_end(ctx);
    phase_begin(ctx, "copy-out");
    for (int k = 0; k < s->arrays; k++) {
        const float *d = s->dev + (size_t)k * (size_t)s->len;
        if (variant == SYNC)
            CP_CUDA(cudaMemcpy(dst + (size_t)k * s->len, d, bytes, cudaMemcpyDeviceToHost));
        else
            CP_CUDA(cudaMemcpyAsync(dst + (size_t)k * s->len, d, bytes, cudaMemcpyDeviceToHost,
                                    s->streams[k]));
    }
    phase_end(ctx);
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    *mismatches = cp_count_bit_mismatches(host_out(s, v), s->in, s->elems);
    *elements = s->elems;
    return 0;
}

/* Every kernel and copy of the graph variant's run carries one graph's id
 * (a node each), and no other variant's work carries any. */
/* The host's time to submit a traced variant's work: from the first
 * submitting call's start to the last one's end (kernel launches,
 * asynchronous copies, graph launches; not the synchronisation after them
 * or the error queries), in ms; 0 when the trace holds none. This is what
 * a graph is meant to cut: 600 calls against one. */
static double submit_ms(const cp_variant_result *v)
{
    static const char *const submitting[] = {"cudaLaunchKernel", "cudaMemcpyAsync",
                                              "cudaGraphLaunch"};
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; v && v->traced && i < v->trace.n; i++) {
        const cp_activity *a = &v->trace.items[i];
        bool submits = false;
        for (size_t k = 0; a->kind == CP_ACT_RUNTIME && a->name && k < 3; k++)
            submits |= strncmp(a->name, submitting[k], strlen(submitting[k])) == 0;
        if (!submits)
            continue;
        first = a->start < first ? a->start : first;
        last = a->end > last ? a->end : last;
    }
    return last > first ? (double)(last - first) / 1e6 : 0;
}

static void graph_checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    const cp_variant_result *g = cp_variant_result_get(ctx, "graph");
    uint32_t tagged = 0, work = 0, id = 0;
    bool several = false;
    for (size_t i = 0; g && i < g->trace.n; i++) {
        const cp_activity *a = &g->trace.items[i];
        if (a->kind != CP_ACT_KERNEL && a->kind != CP_ACT_MEMCPY)
            continue;
        work++;
        if (!a->graph_id)
            continue;
        tagged++;
        several |= id && a->graph_id != id;
        id = id ? id : a->graph_id;
    }
    uint32_t want = 3u * (uint32_t)s->arrays;
    char expected[96];
    snprintf(expected, sizeof expected, "%u kernels and copies, all with one graph id", want);
    cp_check_trace(ctx, "graph", "graph: every kernel and copy carries the graph's id",
                   work == want && tagged == want && id && !several, expected,
                   "%u of %u records tagged, %s", tagged, work,
                   several ? "several graph ids" : id ? "one graph id" : "no graph id");
    cp_figure_add(ctx, "graph nodes", (double)s->graph_nodes, "nodes");
    /* What the graph changes against the same work on streams: the host's
     * submission (600 calls or one) and the device's span. */
    const cp_variant_result *pin = cp_variant_result_get(ctx, "streams-pinned");
    double submit_streams = submit_ms(pin), submit_graph = submit_ms(g);
    if (submit_streams > 0 && submit_graph > 0) {
        cp_figure_add(ctx, "host submit time, streams-pinned", submit_streams, "ms");
        cp_figure_add(ctx, "host submit time, graph", submit_graph, "ms");
    }
    if (pin && pin->traced && g->traced && pin->metrics.span_ns)
        cp_figure_add(ctx, "graph span / streams-pinned span",
                      (double)g->metrics.span_ns / (double)pin->metrics.span_ns, "ratio");
    uint32_t stray = 0;
    for (int v = 0; cp_ctx_variant(ctx, v); v++) {
        const cp_variant_result *r = cp_variant_result_get(ctx, cp_ctx_variant(ctx, v));
        for (size_t i = 0; v != GRAPH && r && i < r->trace.n; i++)
            stray += r->trace.items[i].graph_id != 0;
    }
    cp_check(ctx, "no variant but graph launches work from a graph", stray == 0,
             "0 graph-launched records elsewhere", "%u", stray);
}

static int checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    cp_check(ctx, "reference: mult_ker's arithmetic leaves these inputs unchanged",
             s->reference_mismatches == 0, "0 of the first array's elements changed",
             "%llu changed", (unsigned long long)s->reference_mismatches);

    for (int i = 0; cp_ctx_variant(ctx, i); i++) {
        const char *variant = cp_ctx_variant(ctx, i);
        const cp_variant_result *v = cp_variant_result_get(ctx, variant);
        char name[128], want[64];
        snprintf(name, sizeof name, "%s: every launch ran as a kernel", variant);
        snprintf(want, sizeof want, "%d kernels", s->arrays);
        cp_check_trace(ctx, variant, name, v && v->metrics.kernels == (uint32_t)s->arrays, want,
                       "%u kernels", v ? v->metrics.kernels : 0);
    }

    graph_checks(ctx);
    const cp_variant_result *pin = cp_variant_result_get(ctx, "streams-pinned");
    const cp_variant_result *df = cp_variant_result_get(ctx, "depth-first");
    const cp_metrics *mp = pin ? &pin->metrics : NULL;
    const cp_metrics *md = df ? &df->metrics : NULL;
    if (df && pin && df->traced && pin->traced && mp->span_ns)
        cp_figure_add(ctx, "depth-first span / breadth-first span",
                      (double)md->span_ns / (double)mp->span_ns, "ratio");
    if (pin && pin->traced && pin->timing.median_ms > 0)
        cp_figure_add(ctx, "streams-pinned traced span / timed median",
                      (double)mp->span_ns / 1e6 / pin->timing.median_ms, "ratio");
    return 0;
}

/* What each variant must show in its trace. The serialised control is
 * the negative one: the same pinned streams, synchronised one by one, must
 * fail what streams-pinned passes (tests/test_fixtures.c replays it). */
static const char expectations[] =
    "sync: copy_kernel_overlap_ns == 0\n"
    "sync: peak_concurrent_kernels == 1\n"
    "streams-pinned: no finding cuda_memcpy_async\n"
    "# numpy arrays are pageable: the source's streams cannot overlap copies\n"
    "streams-pageable: finding cuda_memcpy_async\n"
    "depth-first: peak_concurrent_kernels > 1\n"
    "legacy-default-stream: finding default_stream_serialization\n"
    "per-thread-default-stream: no finding default_stream_serialization\n"
    "serialised: peak_concurrent_kernels == 1\n"
    "serialised: copy_kernel_overlap_ns == 0\n"
    "serialised: finding serialized_streams\n"
    "# The graph keeps the streams' independence: it overlaps as they do.\n"
    "graph: no finding cuda_memcpy_async\n"
    "graph: peak_concurrent_kernels > 1\n"
    "graph: copy_kernel_overlap_ratio > 0.3\n";

/* What the claim rests on: pinned streams overlap copies with kernels and
 * run kernels at once. Untraced when tracing was asked for, the case is
 * inconclusive, not passed. The bound respects the spread between runs:
 * 15 passes of five ci runs on the H100 gave 0.50 to 0.71 (mean 0.65, sd
 * 0.05), so "> 0.5" held by 0.004 once and run --runs 3 warned of it;
 * 0.4 is 5 sd below the mean and still fails the negative control
 * (CUDA_LAUNCH_BLOCKING=1: 0.34), as pageable memory (0.01) does. */
static const char essentials[] =
    "streams-pinned: copy_kernel_overlap_ratio > 0.4\n"
    "streams-pinned: peak_concurrent_kernels > 1\n";

/* One claim: the sources' "streams make it about 4x faster", measured as
 * the ratio of medians between the sync variant and a streamed one. */
static void speedup_claim(cp_ctx *ctx, int index, const char *how)
{
    const char *variant = cp_ctx_variant(ctx, index);
    state *s = cp_ctx_state(ctx);
    double t_sync = cp_variant_median_ms(ctx, "sync");
    double t_str = cp_variant_median_ms(ctx, variant);
    const cp_variant_result *v = cp_variant_result_get(ctx, variant);
    char text[256], measured[128];
    snprintf(text, sizeof text, "Streams make the program about 4x faster (%s)", how);
    const char *source = "000 §3.3.1: 1.93 s -> 0.43 s; 002: 2.45 s -> 0.79 s; 001: three times";
    if (t_sync <= 0 || t_str <= 0) {
        cp_claim_add(ctx, text, source, "about 4x", "not measured", CP_VERDICT_NOT_MEASURED,
                     "a variant did not run");
        return;
    }
    double speedup = t_sync / t_str;
    /* One figure that names what it compares, with the times it comes
     * from: "sync → streams-pinned 43.0× (185 ms against 4.30 ms)", the
     * ratio recomputable from the times shown. */
    char x[32], a[32], b[32];
    cp_fmt_ratio_of(t_sync, t_str, x, sizeof x, a, b, sizeof a);
    snprintf(measured, sizeof measured, "sync → %s %s (%s against %s)", variant, x, a, b);
    char figure[96];
    snprintf(figure, sizeof figure, "speedup sync → %s", variant);
    cp_figure_add(ctx, figure, speedup, "x");
    char peak[64] = "not traced";
    if (v->traced)
        snprintf(peak, sizeof peak, "%u", v->metrics.peak_concurrent_kernels);
    /* The sources' own figures range from 3x (001) to 4.5x (000): the
     * window; no effect at 1x. */
    const cp_claim_window w = {.lo = 3.0, .hi = 4.5, .none = 1.0, .unit = "x"};
    cp_verdict verdict = cp_claim_judge(&w, speedup);
    cp_claim_measure(ctx, text, source, "about 4x (3x to 4.5x)", &w, speedup, measured,
                     "sync median %.1f ms, %s median %.2f ms over %d arrays of %d floats. Each "
                     "kernel is one block of %d threads, so alone it uses one of the %d SMs; "
                     "streams let independent kernels share the GPU (peak %s at once), so the "
                     "gain grows with the SM count and %s the sources' 3x to 4.5x on this GPU. "
                     "The sources timed allocation too; here setup is outside the timed region. "
                     "Their streamed time stopped the clock once the last asynchronous call "
                     "returned, before the work ended: timed that way, %s takes %.2f ms here "
                     "against %.2f ms to completion (the figure used above).",
                     t_sync, variant, t_str, s->arrays, s->len, s->block,
                     cp_ctx_env(ctx)->sm_count, peak,
                     verdict == CP_VERDICT_EXCEEDED    ? "exceeds"
                     : verdict == CP_VERDICT_CONFIRMED ? "matches"
                     : verdict == CP_VERDICT_FELL_SHORT ? "falls short of"
                                                        : "reverses",
                     variant, s->issue_ms[index], t_str);
}

static int claims(cp_ctx *ctx)
{
    speedup_claim(ctx, PAGEABLE,
                  "as the source ran it: async copies from pageable numpy arrays");
    speedup_claim(ctx, PINNED, "with page-locked host memory");
    return 0;
}

CUPROOF_CASE(multi_kernel,
    .title = "Many mult_ker kernels: default stream vs one stream per array",
    .source = "seed 000 §3.3.1, 001 (streams), 002",
    .variants = CP_VARIANTS("sync", "streams-pageable", "streams-pinned", "depth-first",
                 "legacy-default-stream", "per-thread-default-stream", "serialised", "graph"),
    .baseline = "sync",
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .expect = expectations,
    .essential = essentials,
    .checks = checks,
    .claims = claims,
    .teardown = teardown,
    .params = CP_PARAMS({"arrays", 2, 4096}, {"len", 64, 1 << 24}));
