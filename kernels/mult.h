/* mult_ker (seed 000 §3.3.1, 001, 002): each element multiplied by 2.0 and
 * divided by 2.0, 50 times, by a grid that strides over the array. */
#ifndef CUPROOF_KERNELS_MULT_H
#define CUPROOF_KERNELS_MULT_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launches mult_ker on `array` of `len` floats as one block of `block`
 * threads, as the source does (1 x 64): its indexing is only right for one
 * block. Returns cudaErrorInvalidValue when len is not a positive multiple
 * of block, else the launch's error. */
cudaError_t cp_mult_launch(float *array, int len, int block, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
