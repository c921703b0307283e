/*
 * indexing (seed 004, CuPy advanced indexing) on a 1024 x 1024 matrix of
 * values in [0, 1):
 *
 *   gather         elements picked by row and column index arrays (the
 *                  source's (10, 5), (200, 100), (400, 800), then 100,000
 *                  random pairs);
 *   mask-select    the elements above 0.5, in order (stream compaction);
 *   mask-empty     the same with no element selected (above 2);
 *   mask-all       the same with every element selected (above -1);
 *   slice          rows 100:200, columns 50:90;
 *   centre         column means and the matrix minus them;
 *   masked-assign  the centred matrix with its negative values set to 0.
 *
 * Each must equal the CPU bit for bit; the compactions also their count.
 */
#include <cuproof/case.h>
#include "../kernels/arrays.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GATHER = 0, MASK_SELECT, MASK_EMPTY, MASK_ALL, SLICE, CENTRE, MASKED_ASSIGN, NVARIANTS };

#define SIDE 1024
#define PAIRS 100003 /* 3 from the source, then random ones */

static const float thresholds[] = {[MASK_SELECT] = 0.5f, [MASK_EMPTY] = 2.0f,
                                   [MASK_ALL] = -1.0f};

typedef struct state {
    size_t cells;
    float *matrix, *centred, *expected[NVARIANTS], *out;
    size_t expected_n[NVARIANTS];
    int *rows, *cols;
    float *dm, *dout;
    int *drows, *dcols, *dcount;
    void *dtemp;
    size_t temp_bytes;
    int count; /* the compaction's count, last run */
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    for (int v = 0; v < NVARIANTS; v++)
        free(s->expected[v]);
    free(s->matrix);
    free(s->centred);
    free(s->out);
    free(s->rows);
    free(s->cols);
    cudaFree(s->dm);
    cudaFree(s->dout);
    cudaFree(s->drows);
    cudaFree(s->dcols);
    cudaFree(s->dcount);
    cudaFree(s->dtemp);
}

static bool is_mask(int v)
{
    return v == MASK_SELECT || v == MASK_EMPTY || v == MASK_ALL;
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    s->cells = (size_t)SIDE * SIDE;
    size_t most = s->cells + SIDE; /* centre: the matrix and the means */
    s->matrix = malloc(s->cells * sizeof(float));
    s->centred = malloc(s->cells * sizeof(float));
    s->out = malloc(most * sizeof(float));
    s->rows = malloc(PAIRS * sizeof(int));
    s->cols = malloc(PAIRS * sizeof(int));
    for (int v = 0; v < NVARIANTS; v++)
        s->expected[v] = malloc(most * sizeof(float));
    for (int v = 0; v < NVARIANTS; v++)
        if (!s->expected[v])
            rc = CP_ENOMEM;
    if (rc < 0 || !s->matrix || !s->centred || !s->out || !s->rows || !s->cols) {
        rc = CP_ENOMEM;
        goto out;
    }
    uint32_t seed = 91;
    for (size_t i = 0; i < s->cells; i++)
        s->matrix[i] = cp_rand_float(&seed, 0.0f, 1.0f);
    const int r0[3] = {10, 200, 400}, c0[3] = {5, 100, 800};
    for (int i = 0; i < PAIRS; i++) {
        s->rows[i] = i < 3 ? r0[i] : (int)(cp_rand_next(&seed) % SIDE);
        s->cols[i] = i < 3 ? c0[i] : (int)(cp_rand_next(&seed) % SIDE);
    }
    /* The references. */
    for (int i = 0; i < PAIRS; i++)
        s->expected[GATHER][i] = s->matrix[(size_t)s->rows[i] * SIDE + s->cols[i]];
    s->expected_n[GATHER] = PAIRS;
    for (int v = MASK_SELECT; v <= MASK_ALL; v++)
        s->expected_n[v] = cp_ref_compact(s->matrix, s->cells, thresholds[v], s->expected[v]);
    cp_ref_slice2d(s->matrix, SIDE, 100, 200, 50, 90, s->expected[SLICE]);
    s->expected_n[SLICE] = 100 * 40;
    float *means = s->expected[CENTRE] + s->cells;
    cp_ref_column_means(s->matrix, SIDE, SIDE, means);
    cp_ref_centre(s->matrix, means, s->expected[CENTRE], SIDE, SIDE);
    s->expected_n[CENTRE] = s->cells + SIDE;
    memcpy(s->centred, s->expected[CENTRE], s->cells * sizeof(float));
    memcpy(s->expected[MASKED_ASSIGN], s->centred, s->cells * sizeof(float));
    cp_ref_clamp_negative(s->expected[MASKED_ASSIGN], s->cells);
    s->expected_n[MASKED_ASSIGN] = s->cells;

    CP_CUDA(cudaMalloc((void **)&s->dm, s->cells * sizeof(float)));
    CP_CUDA(cudaMalloc((void **)&s->dout, most * sizeof(float)));
    CP_CUDA(cudaMalloc((void **)&s->drows, PAIRS * sizeof(int)));
    CP_CUDA(cudaMalloc((void **)&s->dcols, PAIRS * sizeof(int)));
    CP_CUDA(cudaMalloc((void **)&s->dcount, sizeof(int)));
    CP_CUDA(cudaMemcpy(s->drows, s->rows, PAIRS * sizeof(int), cudaMemcpyHostToDevice));
    CP_CUDA(cudaMemcpy(s->dcols, s->cols, PAIRS * sizeof(int), cudaMemcpyHostToDevice));
    CP_CUDA(cp_compact_launch(NULL, &s->temp_bytes, s->dm, s->dout, s->dcount, (int)s->cells,
                              0.5f, 0));
    CP_CUDA(cudaMalloc(&s->dtemp, s->temp_bytes));
out:
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    const float *input = v->index == MASKED_ASSIGN ? s->centred : s->matrix;
    CP_CUDA(cudaMemcpy(s->dm, input, s->cells * sizeof(float), cudaMemcpyHostToDevice));
    CP_CUDA(cudaMemset(s->dout, 0xFF, (s->cells + SIDE) * sizeof(float)));
    CP_CUDA(cudaMemset(s->dcount, 0xFF, sizeof(int)));
    memset(s->out, 0, (s->cells + SIDE) * sizeof(float));
    s->count = -1;
out:
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    size_t n = s->expected_n[v->index];
    const float *result = s->dout;
    cp_phase_begin(ctx, "compute");
    switch (v->index) {
    case GATHER:
        CP_CUDA(cp_gather2d_launch(s->dm, SIDE, s->drows, s->dcols, s->dout, PAIRS, 0));
        break;
    case SLICE:
        CP_CUDA(cp_slice2d_launch(s->dm, SIDE, 100, 200, 50, 90, s->dout, 0));
        break;
    case CENTRE:
        CP_CUDA(cp_column_means_launch(s->dm, SIDE, SIDE, s->dout + s->cells, 0));
        CP_CUDA(cp_centre_launch(s->dm, s->dout + s->cells, s->dout, SIDE, SIDE, 0));
        break;
    case MASKED_ASSIGN:
        CP_CUDA(cp_clamp_negative_launch(s->dm, (int)s->cells, 0));
        result = s->dm;
        break;
    default: /* the masks */
        CP_CUDA(cp_compact_launch(s->dtemp, &s->temp_bytes, s->dm, s->dout, s->dcount,
                                  (int)s->cells, thresholds[v->index], 0));
        CP_CUDA(cudaMemcpy(&s->count, s->dcount, sizeof(int), cudaMemcpyDeviceToHost));
        n = s->count > 0 ? (size_t)s->count : 0;
        break;
    }
    cp_phase_end(ctx);
    cp_phase_begin(ctx, "copy-out");
    if (n)
        CP_CUDA(cudaMemcpy(s->out, result, n * sizeof(float), cudaMemcpyDeviceToHost));
    cp_phase_end(ctx);
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    size_t n = s->expected_n[v->index];
    uint64_t bad = cp_count_bit_mismatches(s->out, s->expected[v->index], n);
    /* A compaction with the wrong count is wrong as a whole. */
    if (is_mask(v->index) && (s->count < 0 || (size_t)s->count != n))
        bad = n ? n : 1;
    *mismatches = bad;
    *elements = n;
    return 0;
}

static int checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    cp_check(ctx, "reference: the masks select some, none and all",
             s->expected_n[MASK_SELECT] > 0 && s->expected_n[MASK_SELECT] < s->cells &&
                 s->expected_n[MASK_EMPTY] == 0 && s->expected_n[MASK_ALL] == s->cells,
             "0 < above 0.5 < all; none above 2; all above -1", "%zu, %zu, %zu",
             s->expected_n[MASK_SELECT], s->expected_n[MASK_EMPTY], s->expected_n[MASK_ALL]);
    cp_check(ctx, "reference: the source's three picks", s->expected[GATHER][0] ==
                 s->matrix[10 * SIDE + 5] && s->expected[GATHER][2] == s->matrix[400 * SIDE + 800],
             "matrix[10][5], matrix[200][100], matrix[400][800]", "%g, %g, %g",
             s->expected[GATHER][0], s->expected[GATHER][1], s->expected[GATHER][2]);
    return 0;
}

CUPROOF_CASE(indexing,
    .title = "Advanced indexing: gather, boolean masks, a slice, centring, masked assignment",
    .source = "seed 004 (CuPy advanced indexing)",
    .variants = CP_VARIANTS("gather", "mask-select", "mask-empty", "mask-all", "slice", "centre",
                 "masked-assign"),
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .checks = checks,
    .teardown = teardown);
