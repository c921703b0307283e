/*
 * vector-add (seed 003 §6): c = a + b on 1M floats: copy in, one kernel,
 * copy out. The GPU adds in float exactly as the CPU does, so the check is
 * bit-for-bit equality.
 */
#include <cuproof/case.h>
#include <cuproof/nvtx.h>
#include "../kernels/vector_add.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

typedef struct state {
    size_t n;
    float *a, *b, *c, *ref; /* host */
    float *da, *db, *dc;    /* device */
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    cudaFree(s->da);
    cudaFree(s->db);
    cudaFree(s->dc);
    free(s->a);
    free(s->b);
    free(s->c);
    free(s->ref);
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    s->n = (size_t)1 << 20; /* the source's size in both profiles: it is small */
    size_t bytes = s->n * sizeof(float);
    s->a = malloc(bytes);
    s->b = malloc(bytes);
    s->c = malloc(bytes);
    s->ref = malloc(bytes);
    if (!s->a || !s->b || !s->c || !s->ref) {
        rc = CP_ENOMEM;
        goto out;
    }
    uint32_t seed = 2024;
    for (size_t i = 0; i < s->n; i++) {
        s->a[i] = cp_rand_float(&seed, -100.0f, 100.0f);
        s->b[i] = cp_rand_float(&seed, -100.0f, 100.0f);
    }
    cp_ref_vector_add(s->a, s->b, s->ref, s->n);
    CP_CUDA(cudaMalloc((void **)&s->da, bytes));
    CP_CUDA(cudaMalloc((void **)&s->db, bytes));
    CP_CUDA(cudaMalloc((void **)&s->dc, bytes));
out:
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    (void)v;
    /* Poison both sides of the output: 0xFF bytes are a NaN that no sum
     * produces, so an element left unwritten cannot match. */
    memset(s->c, 0xFF, s->n * sizeof(float));
    CP_CUDA(cudaMemset(s->dc, 0xFF, s->n * sizeof(float)));
out:
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    size_t bytes = s->n * sizeof(float);
    (void)v;
    cp_phase_begin(ctx, "copy-in");
    CP_CUDA(cudaMemcpy(s->da, s->a, bytes, cudaMemcpyHostToDevice));
    CP_CUDA(cudaMemcpy(s->db, s->b, bytes, cudaMemcpyHostToDevice));
    cp_phase_end(ctx);
    cp_phase_begin(ctx, "compute");
    CP_CUDA(cp_vector_add_launch(s->da, s->db, s->dc, (int)s->n, 0));
    cp_phase_end(ctx);
    cp_phase_begin(ctx, "copy-out");
    CP_CUDA(cudaMemcpy(s->c, s->dc, bytes, cudaMemcpyDeviceToHost));
    cp_phase_end(ctx);
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    (void)v;
    *mismatches = cp_count_bit_mismatches(s->c, s->ref, s->n);
    *elements = s->n;
    return 0;
}

static int checks(cp_ctx *ctx)
{
    const cp_variant_result *v = cp_variant_result_get(ctx, "default");
    const cp_metrics *m = &v->metrics;
    if (v->traced) {
        cp_figure_add(ctx, "kernel busy time", (double)m->kernel_busy_ns / 1e6, "ms");
        cp_figure_add(ctx, "copy busy time", (double)m->copy_busy_ns / 1e6, "ms");
    }
    cp_figure_add(ctx, "median time", v->timing.median_ms, "ms");
    return 0;
}

/* Two copies in, one kernel, one copy out: the trace holds exactly the
 * work the program asks for. */
static const char expectations[] =
    "default: kernels == 1\n"
    "default: copies == 3\n";

CUPROOF_CASE(vector_add,
    .title = "c = a + b on 1M floats",
    .source = "seed 003 §6",
    .variants = CP_VARIANTS("default"),
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .expect = expectations,
    .checks = checks,
    .teardown = teardown);
