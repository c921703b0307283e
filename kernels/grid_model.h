/* grid_model_ker (seed 000 §3.1.3): every thread of a 1D, 2D or 3D launch
 * writes where it is, so the grid-block-thread model can be checked. */
#ifndef CUPROOF_KERNELS_GRID_MODEL_H
#define CUPROOF_KERNELS_GRID_MODEL_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fields each element holds, in this order. */
enum { CP_GRID_BX = 0, CP_GRID_BY, CP_GRID_BZ, CP_GRID_TX, CP_GRID_TY, CP_GRID_TZ,
       CP_GRID_INDEX, CP_GRID_FIELDS };

/* Launches enough blocks of block[0] x block[1] x block[2] threads to cover
 * an n[0] x n[1] x n[2] array (the last block of each dimension may stick
 * out); each thread inside writes CP_GRID_FIELDS ints at its element,
 * element (x, y, z) being x + n0 * (y + n1 * z). Returns
 * cudaErrorInvalidValue for a non-positive size, else the launch's error. */
cudaError_t cp_grid_model_launch(int *out, const int n[3], const int block[3],
                                 cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
