/*
 * The board that conway-block-sync and conway-shared share
 * (cases/conway-block.h): its set-up (a seeded board, 25% alive, and the
 * CPU's board after the case's generations: the source's ten million in
 * `full`, ten thousand in `ci`), one launch of either kernel with the
 * board copied back, the check against the CPU's board, and the checks of
 * the trace that both cases make. Not a case itself.
 */
#include "conway-block.h"

#include "../kernels/conway.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

int block_life_setup(cp_ctx *ctx)
{
    int rc = 0;
    block_life *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    /* full: the source's 10,000,000 generations; ci: ten thousand. */
    s->iterations = cp_ctx_profile(ctx) == CP_PROFILE_FULL ? 10000000 : 10000;
    uint32_t seed = 41;
    for (int i = 0; i < BLOCK_LIFE_CELLS; i++)
        s->initial[i] = cp_rand_next(&seed) % 4 == 0;
    memcpy(s->expected, s->initial, sizeof s->expected);
    CP_TRY(cp_ref_conway_run(s->expected, BLOCK_LIFE_SIDE, (uint64_t)s->iterations));
    for (int i = 0; i < BLOCK_LIFE_CELLS; i++)
        s->live += s->expected[i];
    CP_CUDA(cudaMalloc((void **)&s->dev, sizeof s->initial));
    CP_CUDA(cudaMallocHost((void **)&s->host, sizeof s->initial));
out:
    return rc;
}

int block_life_prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    block_life *s = cp_ctx_state(ctx);
    CP_CUDA(cudaMemcpy(s->dev, s->initial, sizeof s->initial, cudaMemcpyHostToDevice));
    memset(s->host, 0xFF, sizeof s->initial);
out:
    return rc;
}

int block_life_run(cp_ctx *ctx, int shared)
{
    int rc = 0;
    block_life *s = cp_ctx_state(ctx);
    cp_phase_begin(ctx, "compute");
    CP_CUDA(cp_conway_block_launch(s->dev, s->iterations, shared, 0));
    cp_phase_end(ctx);
    cp_phase_begin(ctx, "copy-out");
    CP_CUDA(cudaMemcpy(s->host, s->dev, sizeof s->initial, cudaMemcpyDeviceToHost));
    cp_phase_end(ctx);
out:
    return rc;
}

int block_life_verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches,
                      uint64_t *elements)
{
    block_life *s = cp_ctx_state(ctx);
    uint64_t bad = 0;
    for (int i = 0; i < BLOCK_LIFE_CELLS; i++)
        bad += s->host[i] != s->expected[i];
    *mismatches = bad;
    *elements = BLOCK_LIFE_CELLS;
    return 0;
}

void block_life_teardown(cp_ctx *ctx)
{
    block_life *s = cp_ctx_state(ctx);
    if (!s)
        return;
    cudaFree(s->dev);
    cudaFreeHost(s->host);
}

void block_life_checks(cp_ctx *ctx, const char *const *kernels)
{
    block_life *s = cp_ctx_state(ctx);
    cp_check(ctx, "reference: the board is alive after the last generation", s->live > 0,
             "live cells > 0", "%d live cells", s->live);
    for (int i = 0; cp_ctx_variant(ctx, i); i++) {
        const char *variant = cp_ctx_variant(ctx, i);
        const cp_activity *k = cp_variant_last_kernel(ctx, variant);
        char name[128], want[96];
        /* That it is the only launch is each case's expectation
         * "kernels == 1"; here, that it is the right kernel in one block. */
        snprintf(name, sizeof name, "%s: the launch is %s in one 32 x 32 block", variant,
                 kernels[i]);
        snprintf(want, sizeof want, "%s, grid (1, 1, 1) x block (32, 32, 1)", kernels[i]);
        bool ok = k && strcmp(k->name, kernels[i]) == 0 && k->grid[0] == 1 && k->grid[1] == 1 &&
                  k->grid[2] == 1 && k->block[0] == 32 && k->block[1] == 32 && k->block[2] == 1;
        cp_check_trace(ctx, variant, name, ok, want, "%s grid (%u, %u, %u) x block (%u, %u, %u)",
                       k ? k->name : "none", k ? k->grid[0] : 0, k ? k->grid[1] : 0,
                       k ? k->grid[2] : 0, k ? k->block[0] : 0, k ? k->block[1] : 0,
                       k ? k->block[2] : 0);
        double median = cp_variant_median_ms(ctx, variant);
        if (median > 0) {
            snprintf(name, sizeof name, "%s ns per generation", variant);
            cp_figure_add(ctx, name, median * 1e6 / s->iterations, "ns");
        }
    }
}
