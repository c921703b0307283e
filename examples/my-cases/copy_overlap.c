/*
 * copy-overlap: a case written outside cuproof, against its installed
 * package. N chunks of floats, each copied in from pinned host memory,
 * scaled by 2 on the GPU and copied back, issued breadth-first (every copy
 * in, then every kernel, then every copy out) two ways:
 *
 *   one-stream  every chunk on one stream: each step waits for the last,
 *               so nothing overlaps;
 *   streams     chunk k on stream k: while one chunk is scaled the next is
 *               copied in and the previous copied out.
 *
 * Multiplying by 2.0f is exact, so the output must equal the CPU reference
 * bit for bit. The trace must show the copies overlapping the kernels on
 * streams, and the claim that this makes the streamed version faster is
 * measured.
 */
#include <cuproof/case.h>
#include <cuproof/nvtx.h>
#include "scale.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In the order of .variants below. */
enum { ONE_STREAM = 0, STREAMS };

typedef struct state {
    int chunks, len, blocks;
    size_t elems;
    float *in, *out; /* pinned host memory: the only kind copies overlap with */
    float *ref;      /* the CPU's result */
    float *dev;
    cudaStream_t *streams;
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    for (int k = 0; s->streams && k < s->chunks; k++)
        if (s->streams[k])
            cudaStreamDestroy(s->streams[k]);
    free(s->streams);
    cudaFree(s->dev);
    cudaFreeHost(s->in);
    cudaFreeHost(s->out);
    free(s->ref);
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    bool full = cp_ctx_profile(ctx) == CP_PROFILE_FULL;
    s->chunks = full ? 16 : 8;
    s->len = full ? 1 << 22 : 1 << 20;
    /* Few blocks per chunk, so that a kernel takes about as long as its
     * chunk's copies and streams have copies to hide behind kernels. On an
     * H100 (ci) the streamed copies then overlap kernels for 0.78 of their
     * time and streams are 2.5x faster; from 32 blocks up the kernels are
     * too short to cover 0.3 of the copies, and the check fails. */
    s->blocks = 8;
    s->elems = (size_t)s->chunks * (size_t)s->len;
    size_t bytes = s->elems * sizeof(float);

    s->ref = malloc(bytes);
    s->streams = calloc((size_t)s->chunks, sizeof *s->streams);
    if (!s->ref || !s->streams) {
        rc = CP_ENOMEM;
        goto out;
    }
    CP_CUDA(cudaMallocHost((void **)&s->in, bytes));
    CP_CUDA(cudaMallocHost((void **)&s->out, bytes));
    CP_CUDA(cudaMalloc((void **)&s->dev, bytes));
    uint32_t seed = 42;
    for (size_t i = 0; i < s->elems; i++) {
        s->in[i] = cp_rand_float(&seed, -100.0f, 100.0f);
        s->ref[i] = s->in[i] * 2.0f;
    }
    for (int k = 0; k < s->chunks; k++) {
        /* Blocking streams: they wait for prepare's memset on the default
         * stream. */
        CP_CUDA(cudaStreamCreate(&s->streams[k]));
        cp_nvtx_name_stream(s->streams[k], "copy-overlap stream %d", k);
    }
out:
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    (void)v;
    /* Poison both sides: 0xFF bytes are a NaN that no scaling produces, so
     * a chunk that was not copied or scaled cannot match. */
    memset(s->out, 0xFF, s->elems * sizeof(float));
    CP_CUDA(cudaMemset(s->dev, 0xFF, s->elems * sizeof(float)));
out:
    return rc;
}

static cudaStream_t stream_of(const state *s, const cp_variant *v, int k)
{
    return s->streams[v->index == STREAMS ? k : 0];
}

/* Issues every chunk's work breadth-first; the runner waits for it. */
static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    size_t bytes = (size_t)s->len * sizeof(float);
    cp_phase_begin(ctx, "copy-in");
    for (int k = 0; k < s->chunks; k++) {
        size_t off = (size_t)k * (size_t)s->len;
        CP_CUDA(cudaMemcpyAsync(s->dev + off, s->in + off, bytes, cudaMemcpyHostToDevice,
                                stream_of(s, v, k)));
    }
    cp_phase_end(ctx);
    cp_phase_begin(ctx, "compute");
    for (int k = 0; k < s->chunks; k++) {
        size_t off = (size_t)k * (size_t)s->len;
        CP_CUDA(scale_launch(s->dev + off, 2.0f, s->len, s->blocks, stream_of(s, v, k)));
    }
    cp_phase_end(ctx);
    cp_phase_begin(ctx, "copy-out");
    for (int k = 0; k < s->chunks; k++) {
        size_t off = (size_t)k * (size_t)s->len;
        CP_CUDA(cudaMemcpyAsync(s->out + off, s->dev + off, bytes, cudaMemcpyDeviceToHost,
                                stream_of(s, v, k)));
    }
    cp_phase_end(ctx);
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    (void)v;
    *mismatches = cp_count_bit_mismatches(s->out, s->ref, s->elems);
    *elements = s->elems;
    return 0;
}

/* What the trace must show, in cuproof's expectation grammar: each line is
 * a check, recorded as skipped (never passed) when its variant ran
 * untraced. One stream keeps copies and kernels apart; a stream per chunk
 * overlaps them. */
static const char expectations[] =
    "one-stream: copy_kernel_overlap_ns == 0\n"
    "streams: copy_kernel_overlap_ratio > 0.3\n"
    "streams: no finding cuda_memcpy_async\n";

static int claims(cp_ctx *ctx)
{
    const char *text = "Streams overlap copies with kernels, so the streamed version is faster";
    const char *source = "examples/my-cases";
    const char *claimed = "faster (speedup > 1.2x)";
    state *s = cp_ctx_state(ctx);
    double t_one = cp_variant_median_ms(ctx, "one-stream");
    double t_str = cp_variant_median_ms(ctx, "streams");
    if (t_one <= 0 || t_str <= 0) {
        cp_claim_add(ctx, text, source, claimed, "not measured", CP_VERDICT_NOT_MEASURED,
                     "a variant did not run");
        return 0;
    }
    double speedup = t_one / t_str;
    char measured[32];
    snprintf(measured, sizeof measured, "%.2fx", speedup);
    cp_figure_add(ctx, "speedup", speedup, "x");
    cp_claim_add(ctx, text, source, claimed, measured,
                 speedup > 1.2 ? CP_VERDICT_CONFIRMED : CP_VERDICT_REFUTED,
                 "one-stream median %.3f ms, streams median %.3f ms over %d chunks of %d floats",
                 t_one, t_str, s->chunks, s->len);
    return 0;
}

CUPROOF_CASE(copy_overlap,
    .title = "Copies overlap kernels on streams",
    .source = "examples/my-cases",
    .variants = CP_VARIANTS("one-stream", "streams"),
    .baseline = "one-stream",
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .expect = expectations,
    .claims = claims,
    .teardown = teardown);
