/*
 * multi-gpu (in the spirit of the CUDA samples' simpleMultiGPU): the work of
 * multi-kernel (many arrays, one mult_ker launch each, 1 block x 64
 * threads) split across every visible GPU, one stream per GPU:
 *
 *   one-gpu    every array on the case's own GPU, on its one stream: the
 *              baseline the speedup is measured against;
 *   all-gpus   the arrays split into one contiguous share per GPU, issued
 *              round by round so that every GPU starts at once;
 *   in-turn    the same shares, each GPU's synchronised before the next
 *              GPU's is issued: the negative control, which must show no
 *              time with work on two GPUs at once.
 *
 * The output must equal the input bit for bit (mult_ker doubles and halves),
 * the trace must show each GPU's lanes with its share of the kernels, and
 * all-gpus must keep the GPUs busy at the same time. With fewer than two
 * GPUs the case is skipped with the reason.
 */
#include <cuproof/case.h>
#include <cuproof/device.h>
#include <cuproof/nvtx.h>
#include "../kernels/mult.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In the order of .variants below. */
enum { ONE_GPU = 0, ALL_GPUS, IN_TURN };

typedef struct state {
    int ngpus;
    int device[CP_MAX_DEVICES]; /* the case's own GPU first */
    int arrays, len, block;
    size_t elems;
    float *in, *out; /* portable pinned host memory, usable from every GPU */
    float *dev[CP_MAX_DEVICES];
    cudaStream_t stream[CP_MAX_DEVICES];
    uint64_t reference_mismatches;
} state;

/* The GPU an array runs on in a variant, as an index into s->device. */
static int owner(const state *s, const cp_variant *v, int array)
{
    if (v->index == ONE_GPU)
        return 0;
    return (int)((long)array * s->ngpus / s->arrays);
}

/* The first array of GPU g's share (shares are contiguous). */
static int share_begin(const state *s, int g)
{
    return (int)(((long)g * s->arrays + s->ngpus - 1) / s->ngpus);
}

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    for (int g = 0; g < s->ngpus; g++) {
        if (cudaSetDevice(s->device[g]) != cudaSuccess)
            continue;
        if (s->stream[g])
            cudaStreamDestroy(s->stream[g]);
        cudaFree(s->dev[g]);
    }
    cudaSetDevice(cp_ctx_env(ctx)->device);
    cudaFreeHost(s->in);
    cudaFreeHost(s->out);
}

static int setup(cp_ctx *ctx)
{
    int rc = 0, count = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    /* One device's events cannot bracket work on several. */
    CP_TRY(cp_time_wall(ctx, -1, "its work spans devices, which one device's events cannot "
                                 "bracket"));
    CP_CUDA(cudaGetDeviceCount(&count));
    if (count < 2)
        return cp_skip(ctx, "needs 2 or more GPUs to split the work over; %d visible", count);
    if (count > CP_MAX_DEVICES)
        count = CP_MAX_DEVICES;
    s->device[s->ngpus++] = cp_ctx_env(ctx)->device;
    for (int d = 0; d < count; d++)
        if (d != cp_ctx_env(ctx)->device)
            s->device[s->ngpus++] = d;
    /* multi-kernel's sizes: full, the source's 200 arrays of 1M floats;
     * ci, 64 arrays of 256K. Each kernel is one block, so one GPU runs
     * them one after another on its stream and N GPUs can run N at once. */
    s->arrays = cp_ctx_profile(ctx) == CP_PROFILE_FULL ? 200 : 64;
    s->len = cp_ctx_profile(ctx) == CP_PROFILE_FULL ? 1 << 20 : 1 << 18;
    s->block = 64;
    s->elems = (size_t)s->arrays * (size_t)s->len;
    size_t bytes = s->elems * sizeof(float);
    CP_CUDA(cudaHostAlloc((void **)&s->in, bytes, cudaHostAllocPortable));
    CP_CUDA(cudaHostAlloc((void **)&s->out, bytes, cudaHostAllocPortable));
    s->reference_mismatches = cp_ref_mult_inputs(s->in, s->elems, 11, (size_t)s->len);
    for (int g = 0; g < s->ngpus; g++) {
        CP_CUDA(cudaSetDevice(s->device[g]));
        /* Room for every array: one-gpu puts them all on the first GPU,
         * and the same offsets serve the shares on the others. */
        CP_CUDA(cudaMalloc((void **)&s->dev[g], bytes));
        CP_CUDA(cudaStreamCreateWithFlags(&s->stream[g], cudaStreamNonBlocking));
        cp_nvtx_name_stream(s->stream[g], "multi-gpu GPU %d stream", s->device[g]);
    }
out:
    cudaSetDevice(cp_ctx_env(ctx)->device);
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    (void)v;
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    /* Poisoned, so that a copy or kernel that did not run shows. */
    memset(s->out, 0xFF, s->elems * sizeof(float));
    for (int g = 0; g < s->ngpus; g++) {
        CP_CUDA(cudaSetDevice(s->device[g]));
        CP_CUDA(cudaMemset(s->dev[g], 0xFF, s->elems * sizeof(float)));
        CP_CUDA(cudaDeviceSynchronize());
    }
out:
    cudaSetDevice(cp_ctx_env(ctx)->device);
    return rc;
}

/* Array k on its GPU's stream: copy in, mult_ker, copy out. */
static int issue_array(state *s, const cp_variant *v, int k)
{
    int rc = 0;
    int g = owner(s, v, k);
    size_t off = (size_t)k * (size_t)s->len, bytes = (size_t)s->len * sizeof(float);
    CP_CUDA(cudaSetDevice(s->device[g]));
    CP_CUDA(cudaMemcpyAsync(s->dev[g] + off, s->in + off, bytes, cudaMemcpyHostToDevice,
                            s->stream[g]));
    CP_CUDA(cp_mult_launch(s->dev[g] + off, s->len, s->block, s->stream[g]));
    CP_CUDA(cudaMemcpyAsync(s->out + off, s->dev[g] + off, bytes, cudaMemcpyDeviceToHost,
                            s->stream[g]));
out:
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    cp_phase_begin(ctx, "issue");
    if (v->index == ONE_GPU) {
        for (int k = 0; k < s->arrays; k++)
            CP_TRY(issue_array(s, v, k));
    } else if (v->index == ALL_GPUS) {
        /* Round by round: the j-th array of every share, so that each GPU
         * has work queued before the host moves on. */
        int most = share_begin(s, 1) - share_begin(s, 0);
        for (int j = 0; j < most; j++)
            for (int g = 0; g < s->ngpus; g++) {
                int k = share_begin(s, g) + j;
                if (k < share_begin(s, g + 1))
                    CP_TRY(issue_array(s, v, k));
            }
    } else {
        for (int g = 0; g < s->ngpus; g++) {
            for (int k = share_begin(s, g); k < share_begin(s, g + 1); k++)
                CP_TRY(issue_array(s, v, k));
            CP_CUDA(cudaStreamSynchronize(s->stream[g]));
        }
    }
    cp_phase_end(ctx);
    /* The runner waits for the case's own GPU only: wait for every one. */
    cp_phase_begin(ctx, "wait");
    for (int g = 0; g < s->ngpus; g++) {
        CP_CUDA(cudaSetDevice(s->device[g]));
        CP_CUDA(cudaStreamSynchronize(s->stream[g]));
    }
    cp_phase_end(ctx);
out:
    cudaSetDevice(cp_ctx_env(ctx)->device);
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    (void)v;
    state *s = cp_ctx_state(ctx);
    *mismatches = cp_count_bit_mismatches(s->out, s->in, s->elems);
    *elements = s->elems;
    return 0;
}

/* Kernels per GPU in a variant's trace, by CUPTI's device id, and how many
 * GPUs ran at least one. */
static int kernels_by_device(const cp_variant_result *v, uint32_t per[CP_MAX_DEVICES])
{
    int gpus = 0;
    memset(per, 0, CP_MAX_DEVICES * sizeof *per);
    for (size_t i = 0; v && i < v->metrics.nlanes; i++) {
        const cp_lane *l = &v->metrics.lanes[i];
        if (l->device < CP_MAX_DEVICES && l->kernels) {
            gpus += per[l->device] == 0;
            per[l->device] += l->kernels;
        }
    }
    return gpus;
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
        uint32_t per[CP_MAX_DEVICES];
        int gpus = kernels_by_device(v, per);
        int want = i == ONE_GPU ? 1 : s->ngpus;
        uint32_t kernels = v ? v->metrics.kernels : 0;
        char name[128], expected[96];
        snprintf(name, sizeof name, "%s: every array's kernel ran, on %s", variant,
                 i == ONE_GPU ? "one GPU" : "every GPU");
        snprintf(expected, sizeof expected, "%d kernels on %d GPU%s", s->arrays, want,
                 want > 1 ? "s" : "");
        cp_check_trace(ctx, variant, name, kernels == (uint32_t)s->arrays && gpus == want,
                       expected, "%u kernels on %d GPUs", kernels, gpus);
        if (i == ONE_GPU)
            continue;
        /* Each GPU ran its own share, no more and no less. */
        bool shares = true;
        char measured[256] = "";
        size_t len = 0;
        for (int g = 0; g < s->ngpus; g++) {
            uint32_t share = (uint32_t)(share_begin(s, g + 1) - share_begin(s, g));
            uint32_t got = s->device[g] < CP_MAX_DEVICES ? per[s->device[g]] : 0;
            shares = shares && got == share;
            if (len < sizeof measured)
                len += (size_t)snprintf(measured + len, sizeof measured - len, "%sGPU %d: %u",
                                        g ? ", " : "", s->device[g], got);
        }
        snprintf(name, sizeof name, "%s: each GPU ran its share of the kernels", variant);
        cp_check_trace(ctx, variant, name, shares, "the arrays split evenly, contiguous",
                       "%s", measured);
        static const cp_metrics none = {0};
        const cp_metrics *m = v ? &v->metrics : &none;
        double together = m->span_ns ? (double)m->multi_device_ns / (double)m->span_ns : 0;
        /* all-gpus must keep two GPUs busy for half its span, a fraction no
         * single metric holds, so it is checked here; in-turn's negative
         * control is one of the case's expectations. */
        if (i == ALL_GPUS) {
            cp_check_trace(ctx, variant, "all-gpus: the GPUs worked at the same time",
                           together >= 0.5, "work on 2 or more GPUs for at least half the span",
                           "%.3f of the span (%.2f ms of %.2f ms)", together,
                           (double)m->multi_device_ns / 1e6, (double)m->span_ns / 1e6);
            /* The speedup claim rests on it: untraced, the case has not
             * shown the GPUs working together. */
            cp_essential(ctx, "all-gpus: the GPUs worked at the same time");
            if (v && v->traced)
                cp_figure_add(ctx, "all-gpus time with 2+ GPUs busy", together, "of the span");
        }
    }
    return 0;
}

/* The negative control: the same shares, each GPU's synchronised before
 * the next GPU's is issued, never have work on two GPUs at once, so the
 * multi-device time that all-gpus must show (checks() above) comes from
 * issuing the GPUs' work together, not from having two GPUs. */
static const char expectations[] =
    "in-turn: multi_device_ns == 0\n";

static int claims(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    const char *text = "Splitting independent work over N GPUs, a stream each, runs it about "
                       "N times faster";
    const char *source = "CUDA samples, simpleMultiGPU";
    char claimed[32], measured[64];
    snprintf(claimed, sizeof claimed, "about %dx", s->ngpus);
    double one = cp_variant_median_ms(ctx, "one-gpu");
    double all = cp_variant_median_ms(ctx, "all-gpus");
    double turn = cp_variant_median_ms(ctx, "in-turn");
    if (one <= 0 || all <= 0) {
        cp_claim_add(ctx, text, source, claimed, "not measured", CP_VERDICT_NOT_MEASURED,
                     "a variant did not run");
        return 0;
    }
    double speedup = one / all;
    cp_figure_add(ctx, "speedup over one GPU", speedup, "x");
    snprintf(measured, sizeof measured, "%.2fx on %d GPUs", speedup, s->ngpus);
    /* Confirmed within 20%: the copies share the host's memory bandwidth
     * and the launches one host thread. */
    bool holds = speedup >= 0.8 * s->ngpus;
    cp_claim_add(ctx, text, source, claimed, measured,
                 holds ? CP_VERDICT_CONFIRMED : CP_VERDICT_REFUTED,
                 "median of the whole run: %.2f ms on GPU %d alone, %.2f ms split over %d GPUs "
                 "at once, %.2f ms split but one GPU after another (in-turn: no faster than "
                 "one GPU, since the GPUs never overlap). Each array is one single-block "
                 "kernel, so one GPU runs them in turn on its stream and N GPUs run N at once.",
                 one, s->device[0], all, s->ngpus, turn);
    return 0;
}

CUPROOF_CASE(multi_gpu,
    .title = "Many GPUs: the multi-kernel work split over every visible GPU, a stream each",
    .source = "CUDA samples simpleMultiGPU; the work of seed 000 §3.3.1",
    .variants = CP_VARIANTS("one-gpu", "all-gpus", "in-turn"),
    .baseline = "one-gpu",
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .expect = expectations,
    .checks = checks,
    .claims = claims,
    .teardown = teardown)
