/*
 * conway-streams (seed 000 §3.3.2, 001: conway_gpu_streams.py): N
 * independent Games of Life on 128 x 128 toroidal boards, one stream each.
 * Every generation, as the source's animation does for each board: one
 * conway_ker launch, an asynchronous copy of the new board to the host
 * (the source's get_async for the image) and a device-to-device copy of
 * the new board over the old (set_async). Nothing synchronises between
 * generations.
 *
 * Variants streams-1 to streams-64 run the same program with N = 1, 4, 8,
 * 16 and 64 boards. Every board must equal the CPU reference after the
 * last generation; for N > 1, kernels of different streams must overlap in
 * the trace, and with N = 1 they cannot (the control). The source's claim
 * that raising N hardly raises the load is measured as time per
 * generation, per board and the fraction of the span a kernel ran.
 */
#include "../harness/case.h"
#include "../harness/nvtx.h"
#include "../kernels/conway.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOARD 128     /* the source's N */
#define MAX_BOARDS 64 /* the largest variant */

static const int boards_of[] = {1, 4, 8, 16, 64}; /* in the order of .variants */

typedef struct state {
    int generations;
    size_t cells; /* BOARD * BOARD */
    int *initial; /* MAX_BOARDS boards */
    int *expected;
    int *host_out; /* page-locked: the get_async target */
    int *dev_old, *dev_new;
    cudaStream_t streams[MAX_BOARDS];
    uint64_t live_cells; /* in the expected boards: a dead world proves little */
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = ctx->state;
    if (!s)
        return;
    for (int k = 0; k < MAX_BOARDS; k++)
        if (s->streams[k])
            cudaStreamDestroy(s->streams[k]);
    cudaFree(s->dev_old);
    cudaFree(s->dev_new);
    cudaFreeHost(s->host_out);
    free(s->initial);
    free(s->expected);
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    int *a = NULL, *b = NULL;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    s->generations = ctx->profile == CP_PROFILE_FULL ? 200 : 40;
    s->cells = (size_t)BOARD * BOARD;
    size_t all = s->cells * MAX_BOARDS, bytes = all * sizeof(int);
    s->initial = malloc(bytes);
    s->expected = malloc(bytes);
    a = malloc(s->cells * sizeof *a);
    b = malloc(s->cells * sizeof *b);
    if (!s->initial || !s->expected || !a || !b) {
        rc = CP_ENOMEM;
        goto out;
    }
    /* The source seeds each cell alive with probability 0.25. */
    uint32_t seed = 17;
    for (size_t i = 0; i < all; i++)
        s->initial[i] = cp_rand_next(&seed) % 4 == 0;
    for (int k = 0; k < MAX_BOARDS; k++) {
        memcpy(a, s->initial + (size_t)k * s->cells, s->cells * sizeof *a);
        for (int g = 0; g < s->generations; g++) {
            cp_ref_conway_step(b, a, BOARD);
            int *t = a;
            a = b;
            b = t;
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
out:
    free(a);
    free(b);
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = ctx->state;
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
    state *s = ctx->state;
    int n = boards_of[v->index];
    size_t bytes = s->cells * sizeof(int);
    for (int g = 0; g < s->generations; g++) {
        cp_phase_begin(ctx, "generation");
        for (int k = 0; k < n; k++) {
            size_t off = (size_t)k * s->cells;
            CP_CUDA(cp_conway_launch(s->dev_new + off, s->dev_old + off, BOARD, s->streams[k]));
            CP_CUDA(cudaMemcpyAsync(s->host_out + off, s->dev_new + off, bytes,
                                    cudaMemcpyDeviceToHost, s->streams[k]));
            CP_CUDA(cudaMemcpyAsync(s->dev_old + off, s->dev_new + off, bytes,
                                    cudaMemcpyDeviceToDevice, s->streams[k]));
        }
        cp_phase_end(ctx);
    }
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = ctx->state;
    size_t n = s->cells * (size_t)boards_of[v->index];
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += s->host_out[i] != s->expected[i];
    *mismatches = bad;
    *elements = n;
    return 0;
}

static int checks(cp_ctx *ctx)
{
    state *s = ctx->state;
    cp_check(ctx, "reference: the boards are still alive after the last generation",
             s->live_cells > 0, "live cells > 0", "%llu live cells",
             (unsigned long long)s->live_cells);
    for (int i = 0; i < CP_MAX_VARIANTS && ctx->def->variants[i]; i++) {
        const char *variant = ctx->def->variants[i];
        const cp_variant_result *v = cp_variant_result_get(ctx, variant);
        int n = boards_of[i];
        uint32_t want = (uint32_t)(n * s->generations);
        char name[128], expected[96];
        snprintf(name, sizeof name, "%s: every generation of every board ran as a kernel",
                 variant);
        snprintf(expected, sizeof expected, "%u kernels", want);
        cp_check_trace(ctx, variant, name, v && v->metrics.kernels == want, expected,
                       "%u kernels", v ? v->metrics.kernels : 0);
        uint32_t peak = v ? v->metrics.peak_concurrent_kernels : 0;
        if (n > 1) {
            snprintf(name, sizeof name, "%s: kernels of different streams overlap", variant);
            cp_check_trace(ctx, variant, name, peak > 1, "peak concurrent kernels > 1", "%u",
                           peak);
        } else {
            snprintf(name, sizeof name, "%s: one stream runs one kernel at a time", variant);
            cp_check_trace(ctx, variant, name, peak == 1, "peak concurrent kernels = 1", "%u",
                           peak);
        }
    }
    return 0;
}

static int claims(cp_ctx *ctx)
{
    state *s = ctx->state;
    const char *text = "Raising the number of concurrent games (4 to 8, 16, 100, 200) does not "
                       "raise the GPU load much";
    const char *source = "000 §3.3.2 (watched in nvidia-smi), 001";
    double per_gen[5] = {0};
    int held_to = 0;
    char measured[128] = "";
    size_t used = 0;
    for (int i = 0; i < 5; i++) {
        double median = cp_variant_median_ms(ctx, ctx->def->variants[i]);
        if (median <= 0) {
            cp_claim_add(ctx, text, source, "load nearly flat in N", "not measured",
                         CP_VERDICT_NOT_MEASURED, "variant %s did not run",
                         ctx->def->variants[i]);
            return 0;
        }
        per_gen[i] = median * 1e3 / s->generations;
        const cp_variant_result *v = cp_variant_result_get(ctx, ctx->def->variants[i]);
        double load = v->traced && v->metrics.span_ns
                          ? (double)v->metrics.kernel_busy_ns / (double)v->metrics.span_ns
                          : -1;
        char fig[64];
        snprintf(fig, sizeof fig, "N=%d us per generation", boards_of[i]);
        cp_figure_add(ctx, fig, per_gen[i], "us");
        if (load >= 0) {
            snprintf(fig, sizeof fig, "N=%d kernel busy fraction", boards_of[i]);
            cp_figure_add(ctx, fig, load, "ratio");
        }
        used += (size_t)snprintf(measured + used, sizeof measured - used, "%sN=%d: %.0f us",
                                 i ? ", " : "", boards_of[i], per_gen[i]);
        if (per_gen[i] <= 2.0 * per_gen[0])
            held_to = boards_of[i];
    }
    /* "Hardly raises": N boards cost at most twice one board's time per
     * generation. The source tried 4 to 16 and beyond. */
    bool holds = held_to >= 16;
    cp_claim_add(ctx, text, source, "load nearly flat in N", measured,
                 holds ? CP_VERDICT_CONFIRMED : CP_VERDICT_REFUTED,
                 "measured as time per generation of all N boards (medians over %d "
                 "generations); it stays within 2x of one board's up to N = %d. Per board "
                 "and generation: %.1f us at N = 1, %.1f us at N = 16, %.1f us at N = 64. A "
                 "128 x 128 board is 16 blocks of 1024 threads and the GPU holds %d SMs' "
                 "worth, so 16 boards fit at once; past that, or once the host's launches "
                 "and copies (three calls per board and generation) dominate, time grows "
                 "with N. The source watched nvidia-smi's utilisation, which counts time "
                 "with any kernel running, not how much of the GPU it uses: the kernel busy "
                 "fractions are in the figures.",
                 s->generations, held_to, per_gen[0], per_gen[3] / 16, per_gen[4] / 64,
                 ctx->env->sm_count);
    return 0;
}

CUPROOF_CASE(conway_streams,
    .title = "N Games of Life on N streams: kernels, get_async and set_async per generation",
    .source = "seed 000 §3.3.2, 001 (conway_gpu_streams.py)",
    .variants = {"streams-1", "streams-4", "streams-8", "streams-16", "streams-64"},
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .checks = checks,
    .claims = claims,
    .teardown = teardown);
