/* The example's kernel: x[i] *= a over n floats, and its launcher. */
#ifndef MY_CASES_SCALE_H
#define MY_CASES_SCALE_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launches scale(x, a, n) on `stream` as `blocks` blocks of 256 threads
 * that stride over the array. Returns cudaErrorInvalidValue for n or
 * blocks below 1, else the launch's error (cudaGetLastError()). */
cudaError_t scale_launch(float *x, float a, int n, int blocks, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
