/*
 * conway-block-sync (seed 000 §3.2.2): one block of 32 x 32 threads runs
 * the Game of Life on a 32 x 32 torus for ten million generations inside
 * one launch, on global memory, with __syncthreads() between reading a
 * generation and writing the next. The board must equal the CPU's after
 * the same number of generations (cases/conway-block.h).
 */
#include "conway-block.h"

static int run(cp_ctx *ctx, const cp_variant *v)
{
    return block_life_run(ctx, 0);
}

static int checks(cp_ctx *ctx)
{
    static const char *const kernels[] = {"conway_sync_ker"};
    block_life_checks(ctx, kernels);
    return 0;
}

/* Every generation runs inside one launch: a single kernel in the trace
 * (block_life_checks checks that it is conway_sync_ker, in one 32 x 32
 * block). */
static const char expectations[] =
    "kernels == 1\n";

CUPROOF_CASE(conway_block_sync,
    .title = "Game of Life iterated inside one 32 x 32 block with __syncthreads()",
    .source = "seed 000 §3.2.2",
    .variants = CP_VARIANTS("global"),
    .setup = block_life_setup,
    .prepare = block_life_prepare,
    .run = run,
    .verify = block_life_verify,
    .expect = expectations,
    .checks = checks,
    .teardown = block_life_teardown);
