/* c = a + b (seed 000 §3.1.2): a correct hand-written kernel and the
 * source's own, which indexes by threadIdx.x alone. */
#ifndef CUPROOF_KERNELS_ADD_H
#define CUPROOF_KERNELS_ADD_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hand-written: one thread per element over ceil(n / block) blocks.
 * Returns cudaErrorInvalidValue for non-positive sizes, else the launch's
 * error. */
cudaError_t cp_add_launch(const float *a, const float *b, float *c, int n, int block,
                          cudaStream_t stream);

/* The source's kernel, launched as the source does (ceil(n / block)
 * blocks): every block writes c[0 .. block-1] and nothing else. */
cudaError_t cp_add_source_launch(const float *a, const float *b, float *c, int n, int block,
                                 cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
