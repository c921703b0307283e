/* c = a + b, element-wise (seed 003 §6). */
#ifndef CUPROOF_KERNELS_VECTOR_ADD_H
#define CUPROOF_KERNELS_VECTOR_ADD_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launches add_kernel over n elements on `stream` with 256-thread blocks.
 * Returns the launch's error (cudaGetLastError), cudaSuccess when queued. */
cudaError_t cp_vector_add_launch(const float *a, const float *b, float *c, int n,
                                 cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
