/* The Mandelbrot kernels of mandelbrot.h: mandelbrot_ker with contraction
 * allowed (nvcc may fuse into FMAs), mandelbrot_exact_ker rounded step by
 * step in the CPU reference's order, and the book's mandel_ker over a
 * lattice of points. */
#include "mandelbrot.h"

/* Contraction allowed: nvcc may fuse a multiply and an add into one FMA,
 * rounding once where the CPU rounds twice. */
extern "C" __global__ void mandelbrot_ker(float *out, cp_mandel_params p)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= p.width || y >= p.height)
        return;
    float cr = p.real_low + (float)x * ((p.real_high - p.real_low) / (float)(p.width - 1));
    float ci = p.imag_high - (float)y * ((p.imag_high - p.imag_low) / (float)(p.height - 1));
    float zr = 0.0f, zi = 0.0f;
    int escaped = p.max_iters;
    for (int j = 0; j < p.max_iters; j++) {
        float nr = zr * zr - zi * zi + cr;
        float ni = zr * zi + zi * zr + ci;
        zr = nr;
        zi = ni;
        if (sqrtf(zr * zr + zi * zi) > p.upper_bound) {
            escaped = j;
            break;
        }
    }
    out[x + (size_t)y * p.width] = (float)escaped;
}

/* Every operation rounded on its own, in the CPU reference's order. */
extern "C" __global__ void mandelbrot_exact_ker(float *out, cp_mandel_params p)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= p.width || y >= p.height)
        return;
    float cr = __fadd_rn(p.real_low, __fmul_rn((float)x, __fdiv_rn(__fsub_rn(p.real_high,
                                                  p.real_low), (float)(p.width - 1))));
    float ci = __fsub_rn(p.imag_high, __fmul_rn((float)y, __fdiv_rn(__fsub_rn(p.imag_high,
                                                   p.imag_low), (float)(p.height - 1))));
    float zr = 0.0f, zi = 0.0f;
    int escaped = p.max_iters;
    for (int j = 0; j < p.max_iters; j++) {
        float nr = __fadd_rn(__fsub_rn(__fmul_rn(zr, zr), __fmul_rn(zi, zi)), cr);
        float ni = __fadd_rn(__fadd_rn(__fmul_rn(zr, zi), __fmul_rn(zi, zr)), ci);
        zr = nr;
        zi = ni;
        if (__fsqrt_rn(__fadd_rn(__fmul_rn(zr, zr), __fmul_rn(zi, zi))) > p.upper_bound) {
            escaped = j;
            break;
        }
    }
    out[x + (size_t)y * p.width] = (float)escaped;
}

extern "C" cudaError_t cp_mandelbrot_launch(float *out, const cp_mandel_params *p, int exact,
                                            cudaStream_t stream)
{
    if (!p || p->width < 2 || p->height < 2 || p->max_iters < 1)
        return cudaErrorInvalidValue;
    dim3 block(16, 16, 1);
    dim3 grid((p->width + 15) / 16, (p->height + 15) / 16, 1);
    if (exact)
        mandelbrot_exact_ker<<<grid, block, 0, stream>>>(out, *p);
    else
        mandelbrot_ker<<<grid, block, 0, stream>>>(out, *p);
    return cudaGetLastError();
}

extern "C" __global__ void mandel_ker(const float2 *lattice, float *graph, int n, int max_iters,
                                      float upper_bound)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float cr = lattice[i].x, ci = lattice[i].y, zr = 0.0f, zi = 0.0f;
    graph[i] = 1.0f;
    for (int j = 0; j < max_iters; j++) {
        float nr = __fadd_rn(__fsub_rn(__fmul_rn(zr, zr), __fmul_rn(zi, zi)), cr);
        float ni = __fadd_rn(__fadd_rn(__fmul_rn(zr, zi), __fmul_rn(zi, zr)), ci);
        zr = nr;
        zi = ni;
        if (__fsqrt_rn(__fadd_rn(__fmul_rn(zr, zr), __fmul_rn(zi, zi))) > upper_bound) {
            graph[i] = 0.0f;
            break;
        }
    }
}

extern "C" cudaError_t cp_mandelbrot_lattice_launch(const float *lattice, float *out, int n,
                                                    int max_iters, float upper_bound,
                                                    cudaStream_t stream)
{
    if (n < 1 || max_iters < 1)
        return cudaErrorInvalidValue;
    mandel_ker<<<(n + 255) / 256, 256, 0, stream>>>((const float2 *)lattice, out, n, max_iters,
                                                     upper_bound);
    return cudaGetLastError();
}
