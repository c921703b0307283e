/*
 * What conway-block-sync and conway-shared share: one 32 x 32 toroidal
 * board (the source's single block), iterated inside one kernel launch,
 * checked against the CPU after the same number of generations. The CPU
 * reference skips whole cycles (cp_ref_conway_run), so the source's ten
 * million generations cost it milliseconds.
 */
#ifndef CUPROOF_CASES_CONWAY_BLOCK_H
#define CUPROOF_CASES_CONWAY_BLOCK_H

#include <cuproof/case.h>

#include <stdint.h>

#define BLOCK_LIFE_SIDE 32
#define BLOCK_LIFE_CELLS (BLOCK_LIFE_SIDE * BLOCK_LIFE_SIDE)

typedef struct block_life {
    int iterations; /* generations per launch */
    int initial[BLOCK_LIFE_CELLS], expected[BLOCK_LIFE_CELLS];
    int live; /* in `expected`: an empty board would prove little */
    int *host, *dev;
} block_life;

/* The case's state: allocates it, draws the board (25% alive), computes
 * the expected board and allocates the device copy. Returns 0 or a code
 * from error.h. */
int block_life_setup(cp_ctx *ctx);

/* Fresh board on the device, poisoned host copy. */
int block_life_prepare(cp_ctx *ctx, const cp_variant *v);

/* One launch of the global-memory (shared = 0) or shared-memory kernel,
 * then the board back to the host. */
int block_life_run(cp_ctx *ctx, int shared);

int block_life_verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches,
                      uint64_t *elements);
void block_life_teardown(cp_ctx *ctx);

/* The common checks: a live expected board, and per variant a launch of
 * the named kernel in one 32 x 32 block in the trace (each case's .expect
 * holds that there is one kernel). */
void block_life_checks(cp_ctx *ctx, const char *const *kernels);

#endif
