/*
 * rtc-unroll (seed 004, PyCUDA run-time compilation): the scale kernel
 * (kernels/rtc/scale_unroll.cu) compiled at run time with unroll factors 1,
 * 2, 4, 8 and 16 (-DUNROLL=k) and launched with the matching grid,
 * ceil(n / (256 * k)) blocks of 256 threads. Each must equal the CPU
 * (data * 2.5, bit for bit). Each factor's kernel time (events, the least
 * over the runs) is reported with the bandwidth it achieved, against the
 * device's own copy bandwidth measured in setup; the compile time of each
 * factor is a figure apart.
 *
 * ci: the source's 2,000,000 floats; full: 2^26, enough to measure
 * bandwidth rather than launch latency.
 */
#include <cuproof/case.h>
#include <cuproof/rtc.h>
#include "references.h"

#include "cp_src_scale_unroll.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NFACTORS 5
#define SCALE 2.5f
#define BLOCK 256

static const int factors[NFACTORS] = {1, 2, 4, 8, 16};

typedef struct state {
    int n;
    float *data, *expected, *out;
    float *dev, *dev_copy;
    cp_rtc_kernel kernel[NFACTORS];
    double compile_ms[NFACTORS], best_ms[NFACTORS];
    double copy_gbs; /* device-to-device copy: read plus write */
    cudaEvent_t start, end;
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    for (int i = 0; i < NFACTORS; i++)
        cp_rtc_unload(&s->kernel[i]);
    if (s->start)
        cudaEventDestroy(s->start);
    if (s->end)
        cudaEventDestroy(s->end);
    cudaFree(s->dev);
    cudaFree(s->dev_copy);
    free(s->data);
    free(s->expected);
    free(s->out);
}

/* The device's copy bandwidth: a device-to-device copy of the array, timed
 * by events after one untimed copy. */
static int measure_copy(state *s)
{
    int rc = 0;
    size_t bytes = (size_t)s->n * sizeof(float);
    float ms = 0;
    CP_CUDA(cudaMemcpy(s->dev_copy, s->dev, bytes, cudaMemcpyDeviceToDevice));
    CP_CUDA(cudaEventRecord(s->start, 0));
    CP_CUDA(cudaMemcpyAsync(s->dev_copy, s->dev, bytes, cudaMemcpyDeviceToDevice, 0));
    CP_CUDA(cudaEventRecord(s->end, 0));
    CP_CUDA(cudaEventSynchronize(s->end));
    CP_CUDA(cudaEventElapsedTime(&ms, s->start, s->end));
    s->copy_gbs = ms > 0 ? 2.0 * (double)bytes / (ms * 1e6) : 0;
out:
    return rc;
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    s->n = cp_ctx_profile(ctx) == CP_PROFILE_FULL ? 1 << 26 : 2000000;
    size_t bytes = (size_t)s->n * sizeof(float);
    s->data = malloc(bytes);
    s->expected = malloc(bytes);
    s->out = malloc(bytes);
    if (!s->data || !s->expected || !s->out) {
        rc = CP_ENOMEM;
        goto out;
    }
    uint32_t seed = 81;
    for (int i = 0; i < s->n; i++)
        s->data[i] = cp_rand_float(&seed, 0.0f, 1.0f);
    memcpy(s->expected, s->data, bytes);
    cp_ref_scale(s->expected, (size_t)s->n, SCALE);
    for (int i = 0; i < NFACTORS; i++) {
        char opt[32];
        snprintf(opt, sizeof opt, "-DUNROLL=%d", factors[i]);
        const char *opts[] = {opt};
        const cp_rtc_program *p = NULL;
        bool hit = false;
        CP_TRY(cp_rtc_compile_cached(cp_src_scale_unroll, "scale_unroll.cu", cp_ctx_env(ctx)->cc_major,
                                     cp_ctx_env(ctx)->cc_minor, opts, 1, &p, &hit));
        s->compile_ms[i] = p->compile_ms;
        CP_TRY(cp_rtc_load(p, "scale_unroll", &s->kernel[i]));
    }
    CP_CUDA(cudaMalloc((void **)&s->dev, bytes));
    CP_CUDA(cudaMalloc((void **)&s->dev_copy, bytes));
    CP_CUDA(cudaEventCreate(&s->start));
    CP_CUDA(cudaEventCreate(&s->end));
    CP_CUDA(cudaMemcpy(s->dev, s->data, bytes, cudaMemcpyHostToDevice));
    CP_TRY(measure_copy(s));
out:
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    size_t bytes = (size_t)s->n * sizeof(float);
    CP_CUDA(cudaMemcpy(s->dev, s->data, bytes, cudaMemcpyHostToDevice));
    memset(s->out, 0, bytes);
out:
    return rc;
}

static unsigned grid_of(int n, int unroll)
{
    return (unsigned)(((long long)n + (long long)BLOCK * unroll - 1) / ((long long)BLOCK * unroll));
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    float scale = SCALE, ms = 0;
    int n = s->n;
    void *args[] = {&s->dev, &scale, &n};
    dim3 grid = {grid_of(n, factors[v->index]), 1, 1}, block = {BLOCK, 1, 1};
    cp_phase_begin(ctx, "compute");
    CP_CUDA(cudaEventRecord(s->start, 0));
    CP_TRY(cp_rtc_launch(&s->kernel[v->index], grid, block, args, 0, 0));
    CP_CUDA(cudaEventRecord(s->end, 0));
    CP_CUDA(cudaEventSynchronize(s->end));
    CP_CUDA(cudaEventElapsedTime(&ms, s->start, s->end));
    cp_phase_end(ctx);
    cp_keep_least(&s->best_ms[v->index], ms);
    cp_phase_begin(ctx, "copy-out");
    CP_CUDA(cudaMemcpy(s->out, s->dev, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost));
    cp_phase_end(ctx);
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    *mismatches = cp_count_bit_mismatches(s->out, s->expected, (size_t)s->n);
    *elements = (uint64_t)s->n;
    return 0;
}

static int checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    int best = -1;
    cp_figure_add(ctx, "device copy GB/s", s->copy_gbs, "GB/s");
    for (int i = 0; i < NFACTORS; i++) {
        const char *variant = cp_ctx_variant(ctx, i);
        const cp_activity *k = cp_variant_last_kernel(ctx, variant);
        unsigned g = grid_of(s->n, factors[i]);
        char name[128], want[64], fig[64];
        snprintf(name, sizeof name, "%s: launched with the matching grid", variant);
        snprintf(want, sizeof want, "scale_unroll, grid (%u, 1, 1) x block (256, 1, 1)", g);
        cp_check_trace(ctx, variant, name,
                       k && k->name && strcmp(k->name, "scale_unroll") == 0 && k->grid[0] == g &&
                           k->block[0] == BLOCK,
                       want, "%s grid (%u) block (%u)", k && k->name ? k->name : "none",
                       k ? k->grid[0] : 0, k ? k->block[0] : 0);
        double gbs = s->best_ms[i] > 0 ? 8.0 * s->n / (s->best_ms[i] * 1e6) : 0;
        snprintf(fig, sizeof fig, "%s us", variant);
        cp_figure_add(ctx, fig, s->best_ms[i] * 1e3, "us");
        snprintf(fig, sizeof fig, "%s GB/s", variant);
        cp_figure_add(ctx, fig, gbs, "GB/s");
        snprintf(fig, sizeof fig, "%s compile ms", variant);
        cp_figure_add(ctx, fig, s->compile_ms[i], "ms");
        if (s->best_ms[i] > 0 && (best < 0 || s->best_ms[i] < s->best_ms[best]))
            best = i;
    }
    if (best >= 0) {
        cp_figure_add(ctx, "best unroll factor", factors[best], "");
        cp_figure_add(ctx, "best / device copy bandwidth",
                      s->copy_gbs > 0 ? 8.0 * s->n / (s->best_ms[best] * 1e6) / s->copy_gbs : 0,
                      "ratio");
    }
    return 0;
}

CUPROOF_CASE(rtc_unroll,
    .title = "Run-time compiled scale kernel with unroll factors 1 to 16",
    .source = "seed 004 (PyCUDA SourceModule with a generated unroll factor)",
    .variants = CP_VARIANTS("unroll-1", "unroll-2", "unroll-4", "unroll-8", "unroll-16"),
    .baseline = "unroll-1",
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .checks = checks,
    .teardown = teardown);
