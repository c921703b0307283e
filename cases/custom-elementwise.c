/*
 * custom-elementwise (seed 004, CuPy ElementwiseKernel and RawKernel):
 *
 *   leaky-relu       an element-wise kernel generated at run time from an
 *                    argument list and the expression
 *                    "y = x > 0 ? x : slope * x" (slope 0.1) over
 *                    linspace(-5, 5, 10000);
 *   piecewise-scale  the source's raw kernel (kernels/rtc/piecewise_scale.cu,
 *                    embedded at build time) over linspace(-2, 3, 100000).
 *
 * Both are compiled by NVRTC in setup (the compile time is a figure of its
 * own) and must equal the CPU bit for bit. A malformed expression must be
 * rejected with an error that names the kernel and carries the compiler's
 * log.
 */
#include <cuproof/case.h>
#include <cuproof/rtc.h>
#include "references.h"

#include "cp_src_piecewise_scale.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEAKY_RELU = 0, PIECEWISE, NVARIANTS };

#define SLOPE 0.1f

static const int sizes[NVARIANTS] = {10000, 100000};

typedef struct state {
    float *x[NVARIANTS], *expected[NVARIANTS], *y;
    float *dx, *dy;
    cp_rtc_kernel kernel[NVARIANTS];
    double compile_ms[NVARIANTS];
    bool malformed_rejected;
    char malformed_error[512];
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    for (int v = 0; v < NVARIANTS; v++) {
        cp_rtc_unload(&s->kernel[v]);
        free(s->x[v]);
        free(s->expected[v]);
    }
    free(s->y);
    cudaFree(s->dx);
    cudaFree(s->dy);
}

/* numpy's linspace: start + i * step in double, rounded to float. */
static void linspace(float *out, int n, double start, double stop)
{
    double step = (stop - start) / (double)(n - 1);
    for (int i = 0; i < n; i++)
        out[i] = (float)(start + (double)i * step);
}

/* Compiles `src` (cached) and loads `entry`; the compile time goes to *ms. */
static int build(cp_ctx *ctx, const char *src, const char *name, const char *entry,
                 cp_rtc_kernel *k, double *ms)
{
    int rc = 0;
    const cp_rtc_program *p = NULL;
    bool hit = false;
    CP_TRY(cp_rtc_compile_cached(src, name, cp_ctx_env(ctx)->cc_major, cp_ctx_env(ctx)->cc_minor, NULL, 0, &p,
                                 &hit));
    *ms = p->compile_ms;
    CP_TRY(cp_rtc_load(p, entry, k));
out:
    return rc;
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    char *leaky = NULL, *bad = NULL;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    for (int v = 0; v < NVARIANTS; v++) {
        s->x[v] = malloc((size_t)sizes[v] * sizeof(float));
        s->expected[v] = malloc((size_t)sizes[v] * sizeof(float));
        if (!s->x[v] || !s->expected[v]) {
            rc = CP_ENOMEM;
            goto out;
        }
    }
    s->y = malloc((size_t)sizes[PIECEWISE] * sizeof(float));
    if (!s->y) {
        rc = CP_ENOMEM;
        goto out;
    }
    linspace(s->x[LEAKY_RELU], sizes[LEAKY_RELU], -5.0, 5.0);
    linspace(s->x[PIECEWISE], sizes[PIECEWISE], -2.0, 3.0);
    for (int i = 0; i < sizes[LEAKY_RELU]; i++)
        s->expected[LEAKY_RELU][i] = cp_ref_leaky_relu(s->x[LEAKY_RELU][i], SLOPE);
    for (int i = 0; i < sizes[PIECEWISE]; i++)
        s->expected[PIECEWISE][i] = cp_ref_piecewise_scale(s->x[PIECEWISE][i]);

    leaky = cp_rtc_elementwise("leaky_relu", "const float *x, float slope, float *y",
                               "y[i] = x[i] > 0 ? x[i] : slope * x[i]");
    if (!leaky) {
        rc = CP_EINVAL;
        goto out;
    }
    CP_TRY(build(ctx, leaky, "leaky_relu.cu", "leaky_relu", &s->kernel[LEAKY_RELU],
                 &s->compile_ms[LEAKY_RELU]));
    CP_TRY(build(ctx, cp_src_piecewise_scale, "piecewise_scale.cu", "piecewise_scale",
                 &s->kernel[PIECEWISE], &s->compile_ms[PIECEWISE]));

    /* A malformed expression: the error must name the kernel and carry the log. */
    bad = cp_rtc_elementwise("leaky_relu_bad", "const float *x, float slope, float *y",
                             "y[i] = x[i] > 0 ? x[i] : slope *");
    cp_rtc_program p = {0};
    if (bad && cp_rtc_compile(bad, "leaky_relu_bad.cu", cp_ctx_env(ctx)->cc_major, cp_ctx_env(ctx)->cc_minor,
                              NULL, 0, &p) == CP_ENVRTC) {
        snprintf(s->malformed_error, sizeof s->malformed_error, "%s", cp_last_error());
        s->malformed_rejected = strstr(s->malformed_error, "leaky_relu_bad.cu") &&
                                strstr(s->malformed_error, "error");
    }
    cp_rtc_program_free(&p);
    cp_clear_last_error();

    CP_CUDA(cudaMalloc((void **)&s->dx, (size_t)sizes[PIECEWISE] * sizeof(float)));
    CP_CUDA(cudaMalloc((void **)&s->dy, (size_t)sizes[PIECEWISE] * sizeof(float)));
out:
    free(leaky);
    free(bad);
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    size_t bytes = (size_t)sizes[v->index] * sizeof(float);
    CP_CUDA(cudaMemcpy(s->dx, s->x[v->index], bytes, cudaMemcpyHostToDevice));
    CP_CUDA(cudaMemset(s->dy, 0xFF, bytes));
    memset(s->y, 0, bytes);
out:
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    int n = sizes[v->index];
    float slope = SLOPE;
    long long n64 = n;
    dim3 block = {256, 1, 1}, grid = {(unsigned)((n + 255) / 256), 1, 1};
    cp_phase_begin(ctx, "compute");
    if (v->index == LEAKY_RELU) {
        void *args[] = {&s->dx, &slope, &s->dy, &n64};
        CP_TRY(cp_rtc_launch(&s->kernel[LEAKY_RELU], grid, block, args, 0, 0));
    } else {
        void *args[] = {&s->dx, &s->dy, &n};
        CP_TRY(cp_rtc_launch(&s->kernel[PIECEWISE], grid, block, args, 0, 0));
    }
    cp_phase_end(ctx);
    cp_phase_begin(ctx, "copy-out");
    CP_CUDA(cudaMemcpy(s->y, s->dy, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost));
    cp_phase_end(ctx);
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    *mismatches = cp_count_bit_mismatches(s->y, s->expected[v->index], (size_t)sizes[v->index]);
    *elements = (uint64_t)sizes[v->index];
    return 0;
}

static int checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    cp_check(ctx, "a malformed expression is rejected with the compiler's log",
             s->malformed_rejected, "CP_ENVRTC naming leaky_relu_bad.cu, with the log",
             "%.200s", s->malformed_error[0] ? s->malformed_error : "accepted");
    for (int i = 0; i < NVARIANTS; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s compile ms", cp_ctx_variant(ctx, i));
        cp_figure_add(ctx, name, s->compile_ms[i], "ms");
        const cp_activity *k = cp_variant_last_kernel(ctx, cp_ctx_variant(ctx, i));
        const char *want = i == LEAKY_RELU ? "leaky_relu" : "piecewise_scale";
        snprintf(name, sizeof name, "%s: the generated kernel ran", cp_ctx_variant(ctx, i));
        cp_check_trace(ctx, cp_ctx_variant(ctx, i), name, k && k->name && strcmp(k->name, want) == 0,
                       want, "%s", k && k->name ? k->name : "no kernel");
    }
    return 0;
}

CUPROOF_CASE(custom_elementwise,
    .title = "Custom element-wise kernels: leaky ReLU from an expression, piecewise scale raw",
    .source = "seed 004 (CuPy ElementwiseKernel, RawKernel)",
    .variants = CP_VARIANTS("leaky-relu", "piecewise-scale"),
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .checks = checks,
    .teardown = teardown);
