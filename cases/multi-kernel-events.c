/*
 * multi-kernel-events (seed 000 §3.3.3, 001, 002: multi-kernel_events.py):
 * one stream per array, a start and an end event around each mult_ker
 * launch, and the mean and spread of the event times. Four variants:
 *
 *   source-order    as the source: every copy in, then for each stream its
 *                   start event and kernel, then every end event, then
 *                   every copy out (page-locked memory, so that the copies
 *                   are truly asynchronous);
 *   depth-first     each stream's copy in, start event, kernel, end event
 *                   and copy out together. Streams share
 *                   CUDA_DEVICE_MAX_CONNECTIONS in-order hardware queues (8
 *                   by default), and an end event blocks its queue until
 *                   its kernel ends, so no more kernels run at once than
 *                   there are queues. 001 records the end events in a
 *                   second loop to avoid exactly this;
 *   serialised      depth-first with each stream synchronised before the
 *                   next: nothing but the host's launch call can stand
 *                   between an event pair and its kernel, so every event
 *                   time must agree with CUPTI's up to that wait, which the
 *                   trace shows;
 *   one-big-kernel  the sources' reference point: one launch over a large
 *                   array between two events (000 §3.3.3's 749 ms).
 *
 * Every event time is paired with the CUPTI record of the same launch
 * (<cuproof/agreement.h>). None may be shorter than its kernel; longer ones
 * are waits, which the sources' standard deviation measured: the source's
 * 200 kernels exceed the 128 the device runs at once.
 */
#include <cuproof/agreement.h>
#include <cuproof/case.h>
#include <cuproof/nvtx.h>
#include <cuproof/units.h>
#include "../kernels/mult.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In the order of .variants below. */
enum { SOURCE_ORDER = 0, DEPTH_FIRST, SERIALISED, ONE_BIG, NVARIANTS };

typedef struct state {
    int arrays, len, block, big_len;
    int serial_arrays; /* the serialised variant's streams: every one in full, a subset in ci */
    int connections; /* hardware queues: CUDA_DEVICE_MAX_CONNECTIONS, 8 unless set */
    size_t elems; /* arrays * len, also enough for the big array */
    float *in, *out, *dev;
    cudaStream_t *streams;
    cudaEvent_t *start, *end;
    double *event_ms;
    uint64_t reference_mismatches;
    double issue_ms[NVARIANTS]; /* least host time until the last call returned */
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    for (int k = 0; k < s->arrays; k++) {
        if (s->streams && s->streams[k])
            cudaStreamDestroy(s->streams[k]);
        if (s->start && s->start[k])
            cudaEventDestroy(s->start[k]);
        if (s->end && s->end[k])
            cudaEventDestroy(s->end[k]);
    }
    free(s->streams);
    free(s->start);
    free(s->end);
    free(s->event_ms);
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
    /* Both profiles run the source's sizes, so that its claims are judged
     * in ci too: 200 arrays of 1M floats (about 30 ms a run) and one of 100M
     * (about 0.9 s, as event-timing's). The serialised variant only checks
     * that events agree with CUPTI when nothing else runs; one kernel at a
     * time it costs 10 ms per array, so ci serialises 16 of the arrays. */
    bool full = cp_ctx_profile(ctx) == CP_PROFILE_FULL;
    s->arrays = 200;
    s->len = 1 << 20;
    s->big_len = 100 * 1024 * 1024;
    s->serial_arrays = full ? s->arrays : 16;
    s->block = 64;
    const char *conn = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    s->connections = conn && atoi(conn) > 0 ? atoi(conn) : 8;
    s->elems = (size_t)s->arrays * (size_t)s->len;
    if ((size_t)s->big_len > s->elems)
        s->elems = (size_t)s->big_len;
    size_t bytes = s->elems * sizeof(float);

    s->streams = calloc((size_t)s->arrays, sizeof *s->streams);
    s->start = calloc((size_t)s->arrays, sizeof *s->start);
    s->end = calloc((size_t)s->arrays, sizeof *s->end);
    s->event_ms = calloc((size_t)s->arrays, sizeof *s->event_ms);
    if (!s->streams || !s->start || !s->end || !s->event_ms) {
        rc = CP_ENOMEM;
        goto out;
    }
    CP_CUDA(cudaMallocHost((void **)&s->in, bytes));
    CP_CUDA(cudaMallocHost((void **)&s->out, bytes));
    CP_CUDA(cudaMalloc((void **)&s->dev, bytes));
    s->reference_mismatches = cp_ref_mult_inputs(s->in, s->elems, 13, (size_t)s->len);
    for (int k = 0; k < s->arrays; k++) {
        CP_CUDA(cudaStreamCreate(&s->streams[k]));
        CP_CUDA(cudaEventCreate(&s->start[k]));
        CP_CUDA(cudaEventCreate(&s->end[k]));
        cp_nvtx_name_stream(s->streams[k], "multi-kernel-events stream %d", k);
    }
out:
    return rc;
}

/* The launches a variant times and the floats each covers. */
static int launches(const state *s, const cp_variant *v)
{
    return v->index == ONE_BIG ? 1 : v->index == SERIALISED ? s->serial_arrays : s->arrays;
}

static int launch_len(const state *s, const cp_variant *v)
{
    return v->index == ONE_BIG ? s->big_len : s->len;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    /* Poison the host output and the device copy: a copy or kernel that did
     * not happen cannot leave the right values behind. */
    size_t bytes = (size_t)launches(s, v) * (size_t)launch_len(s, v) * sizeof(float);
    memset(s->out, 0xFF, bytes);
    CP_CUDA(cudaMemset(s->dev, 0xFF, bytes));
out:
    return rc;
}

static int copy(state *s, int k, int len, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    int rc = 0;
    size_t off = (size_t)k * (size_t)len, bytes = (size_t)len * sizeof(float);
    if (kind == cudaMemcpyHostToDevice)
        CP_CUDA(cudaMemcpyAsync(s->dev + off, s->in + off, bytes, kind, stream));
    else
        CP_CUDA(cudaMemcpyAsync(s->out + off, s->dev + off, bytes, kind, stream));
out:
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    int n = launches(s, v), len = launch_len(s, v);
    double t0 = cp_now_ms();
    if (v->index == SOURCE_ORDER) {
        cp_phase_begin(ctx, "copy-in");
        for (int k = 0; k < n; k++)
            CP_TRY(copy(s, k, len, cudaMemcpyHostToDevice, s->streams[k]));
        cp_phase_end(ctx);
        cp_phase_begin(ctx, "compute");
        for (int k = 0; k < n; k++) {
            CP_CUDA(cudaEventRecord(s->start[k], s->streams[k]));
            CP_CUDA(cp_mult_launch(s->dev + (size_t)k * len, len, s->block, s->streams[k]));
        }
        for (int k = 0; k < n; k++)
            CP_CUDA(cudaEventRecord(s->end[k], s->streams[k]));
        cp_phase_end(ctx);
        cp_phase_begin(ctx, "copy-out");
        for (int k = 0; k < n; k++)
            CP_TRY(copy(s, k, len, cudaMemcpyDeviceToHost, s->streams[k]));
        cp_phase_end(ctx);
    } else {
        for (int k = 0; k < n; k++) {
            /* The big kernel runs on the legacy default stream, as the
             * source's simple_event_example.py does. */
            cudaStream_t st = v->index == ONE_BIG ? 0 : s->streams[k];
            cp_phase_begin(ctx, "stream");
            CP_TRY(copy(s, k, len, cudaMemcpyHostToDevice, st));
            CP_CUDA(cudaEventRecord(s->start[k], st));
            CP_CUDA(cp_mult_launch(s->dev + (size_t)k * len, len, s->block, st));
            CP_CUDA(cudaEventRecord(s->end[k], st));
            CP_TRY(copy(s, k, len, cudaMemcpyDeviceToHost, st));
            if (v->index == SERIALISED)
                CP_CUDA(cudaStreamSynchronize(st));
            cp_phase_end(ctx);
        }
    }
    /* Where the sources read their clock: everything issued, nothing
     * waited for. The least over the runs is an untraced run's. */
    cp_keep_least(&s->issue_ms[v->index], cp_now_ms() - t0);
    CP_CUDA(cudaDeviceSynchronize());
    for (int k = 0; k < n; k++) {
        float ms = 0;
        CP_CUDA(cudaEventElapsedTime(&ms, s->start[k], s->end[k]));
        s->event_ms[k] = ms;
    }
    CP_TRY(cp_series_set(ctx, v, "event_ms", "ms", s->event_ms, (size_t)n));
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    size_t n = (size_t)launches(s, v) * (size_t)launch_len(s, v);
    *mismatches = cp_count_bit_mismatches(s->out, s->in, n);
    *elements = n;
    return 0;
}

/* The agreement of a variant's events with its trace; false when the
 * variant was not traced or the pairing failed (`why` then says so). */
static bool agreement(const cp_ctx *ctx, const char *variant, cp_event_agreement *a,
                      char *why, size_t len)
{
    snprintf(why, len, "%s", "");
    if (cp_variant_events(ctx, variant, "mult_ker", a) < 0) {
        snprintf(why, len, ": %s", cp_last_error());
        return false;
    }
    return true;
}

static int checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    cp_check(ctx, "reference: mult_ker's arithmetic leaves these inputs unchanged",
             s->reference_mismatches == 0, "0 changed", "%llu changed",
             (unsigned long long)s->reference_mismatches);
    for (int i = 0; i < NVARIANTS; i++) {
        const char *variant = cp_ctx_variant(ctx, i);
        cp_variant vv = {.name = variant, .index = i};
        int n = launches(s, &vv);
        cp_event_agreement a;
        char why[512], name[128], want[96];
        bool ok = agreement(ctx, variant, &a, why, sizeof why);
        snprintf(name, sizeof name, "%s: every event pair matches a kernel in the trace",
                 variant);
        snprintf(want, sizeof want, "%d mult_ker kernels, one per event pair", n);
        cp_check_trace(ctx, variant, name, ok && a.launches == (size_t)n, want,
                       "%zu paired%s", a.launches, why);
        snprintf(name, sizeof name, "%s: no event time is shorter than its kernel", variant);
        cp_check_trace(ctx, variant, name, ok && a.too_short == 0,
                       "event >= CUPTI duration - (20 us + 0.5%)",
                       "%zu shorter; closest %+.4f ms", a.too_short, -a.worst_short_ms);
        char fig[64];
        snprintf(fig, sizeof fig, "%s events agreeing with CUPTI", variant);
        cp_figure_add(ctx, fig, (double)a.agreeing, "launches");
        if (i == SERIALISED || i == ONE_BIG) {
            /* Alone on the device, an event pair can hold no more than its
             * kernel and the host's launch call, which CUPTI sometimes
             * slows (up to 0.2 ms on the H100): the trace shows both. */
            snprintf(name, sizeof name, "%s: every event time agrees with CUPTI", variant);
            cp_check_trace(ctx, variant, name,
                           ok && a.launches > 0 && a.too_short == 0 &&
                               a.host_bounded == a.launches,
                           "kernel - t <= event <= kernel + its launch wait + t, t = 0.1 ms + "
                           "0.5%, for every launch",
                           "%zu of %zu within; %zu agree outright; largest event - kernel "
                           "%+.4f ms, largest launch wait %.4f ms",
                           a.host_bounded, a.launches, a.agreeing, a.max_excess_ms,
                           a.max_host_wait_ms);
        } else {
            snprintf(fig, sizeof fig, "%s mean event - kernel", variant);
            cp_figure_add(ctx, fig, a.mean_excess_ms, "ms");
        }
    }
    /* The bound is the run's CUDA_DEVICE_MAX_CONNECTIONS, so it is checked
     * here; that depth-first kernels run concurrently at all is one of the
     * case's expectations. */
    const cp_variant_result *df = cp_variant_result_get(ctx, "depth-first");
    uint32_t peak_df = df ? df->metrics.peak_concurrent_kernels : 0;
    char want[96];
    snprintf(want, sizeof want, "peak <= %d (the hardware queues)", s->connections);
    cp_check_trace(ctx, "depth-first",
                   "depth-first: each end event holds its hardware queue until its kernel ends",
                   peak_df <= (uint32_t)s->connections, want, "%u", peak_df);
    return 0;
}

/* In the source's order the kernels run concurrently, and so they do
 * depth-first, if no more at once than there are hardware queues (checks()
 * above); synchronised stream by stream, one at a time. */
static const char expectations[] =
    "depth-first: peak_concurrent_kernels > 1\n"
    "serialised: peak_concurrent_kernels == 1\n";

/* The claim that the events' spread is queueing rests on the kernels of
 * the source's order running at once. */
static const char essentials[] = "source-order: peak_concurrent_kernels > 1\n";

/* "Mean kernel duration ... standard deviation ...": the source-order
 * variant's event times against a source's figures. */
static void mean_std_claim(cp_ctx *ctx, const char *source, double mean, double std)
{
    char text[200], claimed[96], measured[192];
    snprintf(text, sizeof text,
             "Mean kernel duration %.6f ms, standard deviation %.6f ms: the standard "
             "deviation is low, kernel times are even",
             mean, std);
    /* The sources' GPUs are not named: the mean is judged within 25%; the
     * spread by where it comes from. */
    snprintf(claimed, sizeof claimed, "mean %.1f ms (%.1f to %.1f ms), std %.1f ms", mean,
             0.75 * mean, 1.25 * mean, std);
    cp_event_agreement a;
    char why[512];
    if (!agreement(ctx, "source-order", &a, why, sizeof why)) {
        cp_claim_add(ctx, text, source, claimed, "not measured", CP_VERDICT_NOT_MEASURED,
                     "the source-order variant has no traced event times%s", why);
        return;
    }
    /* Times through the units table: a spread of 0.06 ms is "60 µs". */
    char em[32], es[32], km[32], ks[32], excess[32];
    cp_fmt_ms(a.event_mean_ms, em, sizeof em);
    cp_fmt_ms(a.event_std_ms, es, sizeof es);
    cp_fmt_ms(a.kernel_mean_ms, km, sizeof km);
    cp_fmt_ms(a.kernel_std_ms, ks, sizeof ks);
    cp_fmt_ms(a.waited ? a.mean_excess_ms * (double)a.launches / (double)a.waited : 0.0, excess,
              sizeof excess);
    snprintf(measured, sizeof measured, "events: mean %s, std %s; CUPTI: mean %s, std %s", em, es,
             km, ks);
    const cp_claim_window w = {.lo = 0.75 * mean, .hi = 1.25 * mean, .none = 0, .unit = "ms"};
    cp_claim_measure(ctx, text, source, claimed, &w, a.event_mean_ms, measured,
                 "the mean event time is %s against the claimed %.1f ms, judged within 25%% "
                 "because the sources' GPUs are not named. CUPTI's durations of the same "
                 "launches vary by %s, while %zu of %zu event times are longer than their "
                 "kernel by more than the tolerance, by %s on average%s%u%s. The event "
                 "standard deviation of %s %s.",
                 em, mean, ks, a.waited, a.launches, excess,
                 a.waited ? ": the kernel waited for one of the device's " : " (the device has ",
                 cp_max_concurrent_kernels(cp_ctx_env(ctx)->cc_major, cp_ctx_env(ctx)->cc_minor),
                 a.waited ? " kernel slots, or its events for a hardware queue shared with other "
                            "streams"
                          : " kernel slots)",
                 es,
                 a.event_std_ms > 2 * a.kernel_std_ms
                     ? "is mostly that queueing, not uneven kernels: the kernels themselves are "
                       "even, the events are not"
                     : "is close to the kernels' own, so here the kernel times are even");
}

/* "About 70x faster": 749 ms for one 100M-float kernel against a mean of
 * 10.3 ms for 1M-float kernels. */
static void seventy_claim(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    const char *text = "Running 200 arrays of 1M floats on streams cut the kernel time to "
                       "about 10 ms, about 70x faster than the one 100M-float kernel (749 ms)";
    const char *source = "000 §3.3.3";
    cp_event_agreement small, big;
    char why[512];
    const cp_variant_result *so = cp_variant_result_get(ctx, "source-order");
    if (!agreement(ctx, "source-order", &small, why, sizeof why) ||
        !agreement(ctx, "one-big-kernel", &big, why, sizeof why) || !so) {
        cp_claim_add(ctx, text, source, "about 70x", "not measured", CP_VERDICT_NOT_MEASURED,
                     "the source-order and one-big-kernel variants need traced event "
                     "times%s",
                     why);
        return;
    }
    double ratio = big.event_mean_ms / small.event_mean_ms;
    /* The comparable figure: floats per ms of each whole program, copies
     * included, from the medians of the timed runs (one traced run is a
     * single sample; its kernels' span is kept as a figure). */
    double so_ms = cp_variant_median_ms(ctx, "source-order");
    double big_ms = cp_variant_median_ms(ctx, "one-big-kernel");
    double throughput = so_ms > 0 && big_ms > 0 ? ((double)s->arrays * s->len / so_ms) /
                                                      ((double)s->big_len / big_ms)
                                                : 0;
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < so->trace.n; i++) {
        const cp_activity *x = &so->trace.items[i];
        if (x->kind != CP_ACT_KERNEL)
            continue;
        first = x->start < first ? x->start : first;
        last = x->end > last ? x->end : last;
    }
    if (last > first)
        cp_figure_add(ctx, "source-order traced kernel span", (double)(last - first) / 1e6, "ms");
    char measured[128];
    snprintf(measured, sizeof measured, "ratio of means %.1fx; throughput %.1fx", ratio,
             throughput);
    cp_figure_add(ctx, "big kernel / mean small kernel", ratio, "x");
    cp_figure_add(ctx, "streamed / big kernel throughput", throughput, "x");
    /* About 70x, within 30%: the window; no speed-up at 1x. */
    const cp_claim_window w = {.lo = 49, .hi = 91, .none = 1, .unit = "x"};
    cp_claim_measure(ctx, text, source, "about 70x (49x to 91x)", &w, throughput, measured,
                 "as the source divides them, the one kernel of %d floats took %.1f ms and "
                 "the kernels of %d floats %.2f ms on average: %.1fx. That compares kernels "
                 "with %dx different work and says nothing about speed. What is comparable "
                 "is work per time: the streamed program processed %d floats in %.1f ms, the "
                 "one-kernel program %d in %.1f ms (medians, copies included), a speed-up of "
                 "%.1fx, which is judged against the 70x (within 30%% counts). Per kernel, "
                 "the small ones are no faster: %.4f ms per 1000 floats against %.4f.",
                 s->big_len, big.event_mean_ms, s->len, small.event_mean_ms, ratio,
                 s->big_len / s->len, s->arrays * s->len, so_ms, s->big_len, big_ms, throughput,
                 small.kernel_mean_ms * 1000.0 / s->len, big.kernel_mean_ms * 1000.0 / s->big_len);
}

/* "Total time": the sources stop their clock after issuing the work and
 * before waiting for it. */
static void total_time_claim(cp_ctx *ctx, const char *source, double claimed_s)
{
    char text[160], claimed[32], measured[128];
    snprintf(text, sizeof text, "Total time: %.6f s (clock read after issuing, before any "
             "synchronisation)", claimed_s);
    snprintf(claimed, sizeof claimed, "%.0f ms", claimed_s * 1e3);
    state *s = cp_ctx_state(ctx);
    double done = cp_variant_median_ms(ctx, "source-order");
    if (done <= 0) {
        cp_claim_add(ctx, text, source, claimed, "not measured", CP_VERDICT_NOT_MEASURED,
                     "the source-order variant did not run");
        return;
    }
    double issued = s->issue_ms[SOURCE_ORDER];
    snprintf(measured, sizeof measured, "issued in %.1f ms, finished in %.1f ms", issued, done);
    /* The early clock matters when issuing ends well before the work. */
    bool early = issued < 0.9 * done;
    cp_claim_add(ctx, text, source, claimed, measured,
                 early ? CP_VERDICT_REFUTED : CP_VERDICT_CONFIRMED,
                 "the source's t_end is read when the last asynchronous call returns, not "
                 "when the work ends: timed that way this program takes %.1f ms, and its work "
                 "ends %.1f ms after it starts (median of the runs, each ended by "
                 "cudaDeviceSynchronize). %s",
                 issued, done,
                 early ? "The corrected figure is the second; the first measures only the "
                         "host's issuing."
                       : "Here issuing took nearly as long as the work, so the early clock "
                         "happened not to matter.");
}

static int claims(cp_ctx *ctx)
{
    mean_std_claim(ctx, "000 §3.3.3", 10.324401, 3.009410);
    mean_std_claim(ctx, "002", 13.582968, 3.784286);
    seventy_claim(ctx);
    total_time_claim(ctx, "000 §3.3.3 (multi-kernel_events.py)", 0.419365);
    total_time_claim(ctx, "002", 0.798797);
    return 0;
}

CUPROOF_CASE(multi_kernel_events,
    .title = "Per-stream events around each mult_ker launch, checked against CUPTI",
    .source = "seed 000 §3.3.3, 001, 002 (multi-kernel_events.py)",
    .variants = CP_VARIANTS("source-order", "depth-first", "serialised", "one-big-kernel"),
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .expect = expectations,
    .essential = essentials,
    .checks = checks,
    .claims = claims,
    .teardown = teardown);
