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

/* The book's form (001, gpu_mandelbrot): the points come in as a lattice
 * of n (re, im) pairs copied from the host, and each pixel gets 1 when its
 * point stays within upper_bound for max_iters iterations, else 0. Every
 * operation rounded on its own, as cp_ref_mandel_point. 256 threads per
 * block. Returns cudaErrorInvalidValue for n < 1, else the launch's error. */
cudaError_t cp_mandelbrot_lattice_launch(const float *lattice, float *out, int n,
                                         int max_iters, float upper_bound, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
