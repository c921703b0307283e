/* conway_ker (seed 000 §3.2.1, §3.3.2, 001): one generation of the Game of
 * Life on a toroidal square board of 0/1 ints, one thread per cell. */
#ifndef CUPROOF_KERNELS_CONWAY_H
#define CUPROOF_KERNELS_CONWAY_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launches conway_ker on an n x n board as the source does: blocks of
 * 32 x 32 threads, a grid of n/32 x n/32, reading `in` and writing `out`
 * (which must not alias). Returns cudaErrorInvalidValue when n is not a
 * positive multiple of 32, else the launch's error. */
cudaError_t cp_conway_launch(int *out, const int *in, int n, cudaStream_t stream);

/* The source's single-block kernels (§3.2.2, §3.2.3) on a 32 x 32 board:
 * `iters` generations inside one launch of one 32 x 32 block, on global
 * memory (shared = 0) or in shared memory (shared = 1), in place. Returns
 * cudaErrorInvalidValue for negative iters, else the launch's error. */
cudaError_t cp_conway_block_launch(int *board, int iters, int shared, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
