/* mandelbrot_ker (seeds 000, 001): escape-time Mandelbrot in float32. */
#ifndef CUPROOF_KERNELS_MANDELBROT_H
#define CUPROOF_KERNELS_MANDELBROT_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_mandel_params {
    float real_low, real_high, imag_low, imag_high;
    int max_iters;
    float upper_bound;
    int width, height;
} cp_mandel_params;

/* Writes, per pixel (x, y) of width x height, the iteration at which
 * |z| first exceeded upper_bound, or max_iters when it never did. The
 * point is c = (real_low + x * (real_high - real_low) / (width - 1),
 * imag_high - y * (imag_high - imag_low) / (height - 1)); z = z * z + c
 * from z = 0. `exact` selects the kernel that rounds every operation on
 * its own (no fused multiply-add), which must equal the CPU bit for bit;
 * otherwise the compiler may contract. 16 x 16 blocks. Returns
 * cudaErrorInvalidValue for sizes under 2, else the launch's error. */
cudaError_t cp_mandelbrot_launch(float *out, const cp_mandel_params *p, int exact,
                                 cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
