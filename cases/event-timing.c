/*
 * event-timing (seed 000 §3.3.3, 001: simple_event_example.py): one long
 * mult_ker launch, one block of 64 threads over a large array, between two
 * events on the legacy default stream, as the source records them.
 *
 * The source queries the events only after synchronising, so its "Has the
 * kernel ended yet? True" proves nothing. Here the end event is queried
 * right after the launch, when the kernel has barely begun (the launch
 * runs for hundreds of milliseconds in `full`), and must not be ready; after
 * cudaEventSynchronize both must be. The event time must agree with the
 * duration CUPTI recorded for the same launch.
 *
 * Both profiles: the source's 100M floats, about 0.94 s a launch on an
 * H100. The ci profile once ran 4M floats, and the claim was "not
 * measured" there; a smaller array cannot stand in for it, as the
 * time is not proportional (4M floats took 26.6 ms, 1/35 of 100M's, not
 * 1/25: 16 MB stay in the H100's L2 cache, 400 MB do not).
 */
#include <cuproof/agreement.h>
#include <cuproof/case.h>
#include "../kernels/mult.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct state {
    int len, block;
    float *in, *out; /* page-locked: prepare refills the device quickly */
    float *dev;
    cudaEvent_t start, end;
    uint64_t reference_mismatches;
    /* Over every run: how often each query gave the expected answer. */
    int runs, end_busy_before_sync, both_ready_after_sync;
    double event_ms; /* the last run's */
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    if (s->start)
        cudaEventDestroy(s->start);
    if (s->end)
        cudaEventDestroy(s->end);
    cudaFree(s->dev);
    cudaFreeHost(s->in);
    cudaFreeHost(s->out);
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    s->len = 100 * 1024 * 1024;
    s->block = 64;
    size_t bytes = (size_t)s->len * sizeof(float);
    CP_CUDA(cudaMallocHost((void **)&s->in, bytes));
    CP_CUDA(cudaMallocHost((void **)&s->out, bytes));
    CP_CUDA(cudaMalloc((void **)&s->dev, bytes));
    CP_CUDA(cudaEventCreate(&s->start));
    CP_CUDA(cudaEventCreate(&s->end));
    s->reference_mismatches = cp_ref_mult_inputs(s->in, (size_t)s->len, 11, 1 << 20);
out:
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    size_t bytes = (size_t)s->len * sizeof(float);
    memset(s->out, 0xFF, bytes);
    CP_CUDA(cudaMemcpy(s->dev, s->in, bytes, cudaMemcpyHostToDevice));
out:
    return rc;
}

/* Asks whether `e` has completed. cudaErrorNotReady is an answer, not a
 * failure; the runtime may also keep it as the last error, which is
 * cleared here so that the launch checks that follow see only real ones. */
static int query(cudaEvent_t e, bool *ready)
{
    cudaError_t q = cudaEventQuery(e);
    *ready = q == cudaSuccess;
    if (q == cudaErrorNotReady) {
        cudaError_t last = cudaGetLastError();
        if (last != cudaSuccess && last != cudaErrorNotReady)
            return cp_check_cuda(last, __FILE__, __LINE__, "cudaGetLastError()");
        return 0;
    }
    return cp_check_cuda(q, __FILE__, __LINE__, "cudaEventQuery(event)");
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    bool end_ready = true, start_ready = false;
    cp_phase_begin(ctx, "compute");
    CP_CUDA(cudaEventRecord(s->start, 0));
    CP_CUDA(cp_mult_launch(s->dev, s->len, s->block, 0));
    CP_CUDA(cudaEventRecord(s->end, 0));
    cp_phase_end(ctx);
    CP_TRY(query(s->end, &end_ready));
    CP_CUDA(cudaEventSynchronize(s->end));
    s->runs++;
    s->end_busy_before_sync += !end_ready;
    CP_TRY(query(s->start, &start_ready));
    CP_TRY(query(s->end, &end_ready));
    s->both_ready_after_sync += start_ready && end_ready;
    float ms = 0;
    CP_CUDA(cudaEventElapsedTime(&ms, s->start, s->end));
    s->event_ms = ms;
    double value = ms;
    CP_TRY(cp_series_set(ctx, v, "event_ms", "ms", &value, 1));
    cp_phase_begin(ctx, "copy-out");
    CP_CUDA(cudaMemcpy(s->out, s->dev, (size_t)s->len * sizeof(float), cudaMemcpyDeviceToHost));
    cp_phase_end(ctx);
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    *mismatches = cp_count_bit_mismatches(s->out, s->in, (size_t)s->len);
    *elements = (uint64_t)s->len;
    return 0;
}

static int checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    const char *variant = cp_ctx_variant(ctx, 0);
    cp_check(ctx, "reference: mult_ker's arithmetic leaves these inputs unchanged",
             s->reference_mismatches == 0, "0 changed", "%llu changed",
             (unsigned long long)s->reference_mismatches);
    cp_check(ctx, "the end event is not ready right after the launch",
             s->runs > 0 && s->end_busy_before_sync == s->runs,
             "cudaEventQuery(end) = cudaErrorNotReady in every run", "in %d of %d runs",
             s->end_busy_before_sync, s->runs);
    cp_check(ctx, "both events are ready after synchronising",
             s->runs > 0 && s->both_ready_after_sync == s->runs,
             "cudaEventQuery = cudaSuccess for both in every run", "in %d of %d runs",
             s->both_ready_after_sync, s->runs);

    cp_event_agreement a;
    int arc = cp_variant_events(ctx, variant, "mult_ker", &a);
    double kernel_ms = a.kernel_mean_ms;
    /* On an idle stream the start event fires when it is recorded, and the
     * kernel starts when the launch call is done: the event time is the
     * kernel plus that wait, which the trace shows. */
    cp_check_trace(ctx, variant, "the event time agrees with CUPTI's kernel duration",
                   arc == 0 && a.launches == 1 && a.too_short == 0 && a.host_bounded == 1,
                   "kernel - t <= event <= kernel + its launch wait + t, t = 0.1 ms + 0.5%",
                   "event %.3f ms, CUPTI kernel %.3f ms (difference %+.3f ms); the kernel "
                   "started %.3f ms after the start event's record call%s%s",
                   s->event_ms, kernel_ms, s->event_ms - kernel_ms, a.max_host_wait_ms,
                   arc ? ": " : "", arc ? cp_last_error() : "");
    /* The case's claim is that the event time is the kernel's time: only
     * the trace can say so. */
    cp_essential(ctx, "the event time agrees with CUPTI's kernel duration");
    cp_figure_add(ctx, "event time", s->event_ms, "ms");
    if (arc == 0)
        cp_figure_add(ctx, "CUPTI kernel time", kernel_ms, "ms");
    return 0;
}

static int claims(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    const char *text = "Kernel execution time in milliseconds: 749.370728 (100M floats, "
                       "1 block x 64 threads)";
    const char *source = "000 §3.3.3, 001";
    char measured[128];
    if (s->runs == 0) {
        cp_claim_add(ctx, text, source, "749 ms", "not measured", CP_VERDICT_NOT_MEASURED,
                     "the variant did not run");
        return 0;
    }
    snprintf(measured, sizeof measured, "%.1f ms (%d floats)", s->event_ms, s->len);
    /* One block of 64 threads occupies one SM, so the time depends on that
     * SM's memory latency and clock, not on the GPU's size, and those differ
     * between GPU generations by up to about twice: within a factor of two
     * is the same result. (A 25% window put the H100's 1.25x on its edge,
     * and identical runs flipped between confirmed and refuted.) */
    double ratio = s->event_ms / 749.370728;
    const cp_claim_window w = {.lo = 749.370728 / 2, .hi = 749.370728 * 2, .none = 0, .unit = "ms"};
    cp_claim_measure(ctx, text, source, "749 ms (375 to 1499 ms: within a factor of two)", &w,
                     s->event_ms, measured,
                     "the same kernel on the same 104857600 floats took %.1f ms between its "
                     "events here, %.2fx the source's time. One block of 64 threads runs on one "
                     "of the %d SMs, so the time follows one SM's memory latency and clock "
                     "rather than the GPU's size; within a factor of two counts as the same "
                     "result. The source's query() answers were printed after "
                     "end_event.synchronize(), so they could only be True; here the end event "
                     "was not ready right after the launch in %d of %d runs.",
                     s->event_ms, ratio, cp_ctx_env(ctx)->sm_count, s->end_busy_before_sync,
                     s->runs);
    return 0;
}

CUPROOF_CASE(event_timing,
    .title = "One long kernel timed by two events; cudaEventQuery before and after sync",
    .source = "seed 000 §3.3.3, 001 (simple_event_example.py)",
    .variants = CP_VARIANTS("default-stream"),
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .checks = checks,
    .claims = claims,
    .teardown = teardown);
