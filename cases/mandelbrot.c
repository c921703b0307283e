/*
 * mandelbrot (seeds 000 §3.1, 001 gpu_mandelbrot): escape-time Mandelbrot
 * on a 2D grid in float32, the source's view (-2..2 on both axes, 256
 * iterations, escape when |z| > 2), at 512 x 512 as the source draws it.
 *
 *   contracted  compiled as nvcc compiles by default, so the compiler may
 *               fuse a multiply and an add into one FMA, which rounds once
 *               where the CPU rounds twice. Near the set's boundary that
 *               can change the iteration at which a point escapes: the
 *               pixels that differ are counted and reported, and the case
 *               fails above 0.5% of them;
 *   exact       every operation rounded on its own (__fmul_rn and kin), in
 *               the CPU reference's order: it must equal the CPU bit for
 *               bit, which shows that the differences above are the
 *               contraction and nothing else.
 */
#include <cuproof/case.h>
#include "../kernels/mandelbrot.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

enum { CONTRACTED = 0, EXACT };

#define ALLOWED_FRACTION 0.005

typedef struct state {
    cp_mandel_params p;
    size_t pixels;
    float *expected, *host, *dev;
    uint64_t differing, inside; /* contracted's last run; pixels inside the set */
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    cudaFree(s->dev);
    cudaFreeHost(s->host);
    free(s->expected);
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    int side = cp_ctx_profile(ctx) == CP_PROFILE_FULL ? 512 : 256;
    s->p = (cp_mandel_params){.real_low = -2.0f, .real_high = 2.0f, .imag_low = -2.0f,
                              .imag_high = 2.0f, .max_iters = 256, .upper_bound = 2.0f,
                              .width = side, .height = side};
    s->pixels = (size_t)side * side;
    s->expected = malloc(s->pixels * sizeof(float));
    if (!s->expected) {
        rc = CP_ENOMEM;
        goto out;
    }
    cp_ref_mandelbrot(s->expected, &s->p);
    for (size_t i = 0; i < s->pixels; i++)
        s->inside += s->expected[i] == (float)s->p.max_iters;
    CP_CUDA(cudaMalloc((void **)&s->dev, s->pixels * sizeof(float)));
    CP_CUDA(cudaMallocHost((void **)&s->host, s->pixels * sizeof(float)));
    CP_TRY(cp_allow_mismatches(ctx, CONTRACTED, ALLOWED_FRACTION,
                               "fused multiply-adds change the escape iteration of some "
                               "boundary points"));
out:
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    CP_CUDA(cudaMemset(s->dev, 0xFF, s->pixels * sizeof(float)));
    memset(s->host, 0, s->pixels * sizeof(float));
out:
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    cp_phase_begin(ctx, "compute");
    CP_CUDA(cp_mandelbrot_launch(s->dev, &s->p, v->index == EXACT, 0));
    cp_phase_end(ctx);
    cp_phase_begin(ctx, "copy-out");
    CP_CUDA(cudaMemcpy(s->host, s->dev, s->pixels * sizeof(float), cudaMemcpyDeviceToHost));
    cp_phase_end(ctx);
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    uint64_t bad = cp_count_bit_mismatches(s->host, s->expected, s->pixels);
    if (v->index == CONTRACTED)
        s->differing = bad;
    *mismatches = bad;
    *elements = s->pixels;
    return 0;
}

static int checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    /* A reference that put every pixel inside, or none, would make any
     * kernel look right. */
    cp_check(ctx, "reference: the view holds points inside and outside the set",
             s->inside > 0 && s->inside < s->pixels, "0 < inside < all pixels",
             "%llu of %zu pixels inside", (unsigned long long)s->inside, s->pixels);
    cp_figure_add(ctx, "contracted pixels differing", (double)s->differing, "pixels");
    cp_figure_add(ctx, "contracted fraction differing",
                  (double)s->differing / (double)s->pixels, "ratio");
    return 0;
}

/* Each variant draws the whole image in one launch: one kernel in its
 * trace. */
static const char expectations[] =
    "kernels == 1\n";

CUPROOF_CASE(mandelbrot,
    .title = "Escape-time Mandelbrot in float32: contracted and exactly rounded kernels",
    .source = "seed 000 §3.1, 001 (gpu_mandelbrot)",
    .variants = CP_VARIANTS("contracted", "exact"),
    .baseline = "exact",
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .expect = expectations,
    .checks = checks,
    .teardown = teardown);
