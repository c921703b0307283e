/*
 * broadcast (seed 004, CuPy broadcasting): a 512 x 128 matrix plus a 128
 * vector (matrix-row), and a 32 x 64 x 128 tensor times a 128 vector
 * (tensor-last-dim): the smaller operand is stretched along the leading
 * dimensions without being copied. Both must equal the CPU bit for bit.
 */
#include <cuproof/case.h>
#include "../kernels/arrays.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

enum { MATRIX_ROW = 0, TENSOR_LAST_DIM };

#define ROWS 512
#define COLS 128
#define D0 32
#define D1 64
#define D2 128

typedef struct state {
    float *matrix, *tensor, *vec, *expected[2], *out;
    float *dm, *dt, *dv, *dout;
} state;

static size_t elems(int v)
{
    return v == MATRIX_ROW ? (size_t)ROWS * COLS : (size_t)D0 * D1 * D2;
}

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    cudaFree(s->dm);
    cudaFree(s->dt);
    cudaFree(s->dv);
    cudaFree(s->dout);
    free(s->matrix);
    free(s->tensor);
    free(s->vec);
    free(s->expected[0]);
    free(s->expected[1]);
    free(s->out);
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    size_t big = elems(TENSOR_LAST_DIM);
    s->matrix = malloc(elems(MATRIX_ROW) * sizeof(float));
    s->tensor = malloc(big * sizeof(float));
    s->vec = malloc(COLS * sizeof(float));
    s->expected[0] = malloc(elems(MATRIX_ROW) * sizeof(float));
    s->expected[1] = malloc(big * sizeof(float));
    s->out = malloc(big * sizeof(float));
    if (!s->matrix || !s->tensor || !s->vec || !s->expected[0] || !s->expected[1] || !s->out) {
        rc = CP_ENOMEM;
        goto out;
    }
    uint32_t seed = 71;
    for (size_t i = 0; i < elems(MATRIX_ROW); i++)
        s->matrix[i] = cp_rand_float(&seed, 0.0f, 1.0f);
    for (size_t i = 0; i < big; i++)
        s->tensor[i] = cp_rand_float(&seed, 0.0f, 1.0f);
    /* The source's linspace(1, 2, 128) (and 0.1 .. 1.0 for the tensor:
     * one vector serves both, its values are what matter). */
    for (int i = 0; i < COLS; i++)
        s->vec[i] = 1.0f + (float)i / (float)(COLS - 1);
    cp_ref_broadcast_add(s->matrix, s->vec, s->expected[0], ROWS, COLS);
    cp_ref_broadcast_mul3(s->tensor, s->vec, s->expected[1], D0, D1, D2);
    CP_CUDA(cudaMalloc((void **)&s->dm, elems(MATRIX_ROW) * sizeof(float)));
    CP_CUDA(cudaMalloc((void **)&s->dt, big * sizeof(float)));
    CP_CUDA(cudaMalloc((void **)&s->dv, COLS * sizeof(float)));
    CP_CUDA(cudaMalloc((void **)&s->dout, big * sizeof(float)));
    CP_CUDA(cudaMemcpy(s->dm, s->matrix, elems(MATRIX_ROW) * sizeof(float),
                       cudaMemcpyHostToDevice));
    CP_CUDA(cudaMemcpy(s->dt, s->tensor, big * sizeof(float), cudaMemcpyHostToDevice));
    CP_CUDA(cudaMemcpy(s->dv, s->vec, COLS * sizeof(float), cudaMemcpyHostToDevice));
out:
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    CP_CUDA(cudaMemset(s->dout, 0xFF, elems(v->index) * sizeof(float)));
    memset(s->out, 0, elems(v->index) * sizeof(float));
out:
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    cp_phase_begin(ctx, "compute");
    if (v->index == MATRIX_ROW)
        CP_CUDA(cp_broadcast_add_launch(s->dm, s->dv, s->dout, ROWS, COLS, 0));
    else
        CP_CUDA(cp_broadcast_mul3_launch(s->dt, s->dv, s->dout, D0, D1, D2, 0));
    cp_phase_end(ctx);
    cp_phase_begin(ctx, "copy-out");
    CP_CUDA(cudaMemcpy(s->out, s->dout, elems(v->index) * sizeof(float), cudaMemcpyDeviceToHost));
    cp_phase_end(ctx);
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    *mismatches = cp_count_bit_mismatches(s->out, s->expected[v->index], elems(v->index));
    *elements = elems(v->index);
    return 0;
}

/* Each broadcast is one kernel, and the only copy in the traced run is
 * the result coming back: the vector is read where it lies on the device,
 * never expanded on the host and copied. */
static const char expectations[] =
    "kernels == 1\n";

/* "The vector is read in place": only the result is copied. */
static const char essentials[] = "copies == 1\n";

CUPROOF_CASE(broadcast,
    .title = "Broadcasting: matrix + row vector, tensor * last-dimension vector",
    .source = "seed 004 (CuPy broadcasting)",
    .variants = CP_VARIANTS("matrix-row", "tensor-last-dim"),
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .expect = expectations,
    .essential = essentials,
    .teardown = teardown);
