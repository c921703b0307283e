/* The array kernels of arrays.h (seed 004's CuPy broadcasting, indexing
 * and reductions), each with a launcher that refuses empty shapes; the
 * compaction is CUB's DeviceSelect::If. */
#include "arrays.h"

#include <cub/device/device_select.cuh>

extern "C" __global__ void broadcast_add_ker(const float *m, const float *v, float *out,
                                             int rows, int cols)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (long long)rows * cols)
        out[i] = m[i] + v[i % cols];
}

extern "C" __global__ void broadcast_mul3_ker(const float *t, const float *v, float *out,
                                              long long n, int d2)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = t[i] * v[i % d2];
}

extern "C" __global__ void gather2d_ker(const float *m, int cols, const int *ri, const int *ci,
                                        float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = m[(long long)ri[i] * cols + ci[i]];
}

extern "C" __global__ void slice2d_ker(const float *m, int cols, int r0, int c0, int h, int w,
                                       float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < h * w)
        out[i] = m[(long long)(r0 + i / w) * cols + c0 + i % w];
}

extern "C" __global__ void column_means_ker(const float *m, int rows, int cols, float *means)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols)
        return;
    float sum = 0.0f;
    for (int r = 0; r < rows; r++)
        sum = __fadd_rn(sum, m[(long long)r * cols + c]);
    means[c] = __fdiv_rn(sum, (float)rows);
}

extern "C" __global__ void centre_ker(const float *m, const float *means, float *out, int rows,
                                      int cols)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (long long)rows * cols)
        out[i] = m[i] - means[i % cols];
}

extern "C" __global__ void clamp_negative_ker(float *m, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && m[i] < 0)
        m[i] = 0.0f;
}

extern "C" __global__ void scale_ker(float *data, int n, float scale)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] *= scale;
}

static unsigned blocks_for(long long n)
{
    return (unsigned)((n + 255) / 256);
}

extern "C" cudaError_t cp_broadcast_add_launch(const float *m, const float *v, float *out,
                                               int rows, int cols, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaErrorInvalidValue;
    broadcast_add_ker<<<blocks_for((long long)rows * cols), 256, 0, stream>>>(m, v, out, rows,
                                                                              cols);
    return cudaGetLastError();
}

extern "C" cudaError_t cp_broadcast_mul3_launch(const float *t, const float *v, float *out,
                                                int d0, int d1, int d2, cudaStream_t stream)
{
    if (d0 <= 0 || d1 <= 0 || d2 <= 0)
        return cudaErrorInvalidValue;
    long long n = (long long)d0 * d1 * d2;
    broadcast_mul3_ker<<<blocks_for(n), 256, 0, stream>>>(t, v, out, n, d2);
    return cudaGetLastError();
}

extern "C" cudaError_t cp_gather2d_launch(const float *m, int cols, const int *rows_idx,
                                          const int *cols_idx, float *out, int n,
                                          cudaStream_t stream)
{
    if (n <= 0 || cols <= 0)
        return cudaErrorInvalidValue;
    gather2d_ker<<<blocks_for(n), 256, 0, stream>>>(m, cols, rows_idx, cols_idx, out, n);
    return cudaGetLastError();
}

extern "C" cudaError_t cp_slice2d_launch(const float *m, int cols, int r0, int r1, int c0,
                                         int c1, float *out, cudaStream_t stream)
{
    if (r1 <= r0 || c1 <= c0 || r0 < 0 || c0 < 0 || c1 > cols)
        return cudaErrorInvalidValue;
    int h = r1 - r0, w = c1 - c0;
    slice2d_ker<<<blocks_for((long long)h * w), 256, 0, stream>>>(m, cols, r0, c0, h, w, out);
    return cudaGetLastError();
}

extern "C" cudaError_t cp_column_means_launch(const float *m, int rows, int cols, float *means,
                                              cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaErrorInvalidValue;
    column_means_ker<<<blocks_for(cols), 256, 0, stream>>>(m, rows, cols, means);
    return cudaGetLastError();
}

extern "C" cudaError_t cp_centre_launch(const float *m, const float *means, float *out, int rows,
                                        int cols, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaErrorInvalidValue;
    centre_ker<<<blocks_for((long long)rows * cols), 256, 0, stream>>>(m, means, out, rows, cols);
    return cudaGetLastError();
}

extern "C" cudaError_t cp_clamp_negative_launch(float *m, int n, cudaStream_t stream)
{
    if (n <= 0)
        return cudaErrorInvalidValue;
    clamp_negative_ker<<<blocks_for(n), 256, 0, stream>>>(m, n);
    return cudaGetLastError();
}

extern "C" cudaError_t cp_scale_launch(float *data, int n, float scale, cudaStream_t stream)
{
    if (n <= 0)
        return cudaErrorInvalidValue;
    scale_ker<<<blocks_for(n), 256, 0, stream>>>(data, n, scale);
    return cudaGetLastError();
}

namespace {
struct above {
    float threshold;
    __host__ __device__ bool operator()(float x) const { return x > threshold; }
};
}

extern "C" cudaError_t cp_compact_launch(void *temp, size_t *temp_bytes, const float *in,
                                         float *out, int *count, int n, float threshold,
                                         cudaStream_t stream)
{
    if (n <= 0 || !temp_bytes)
        return cudaErrorInvalidValue;
    return cub::DeviceSelect::If(temp, *temp_bytes, in, out, count, n, above{threshold}, stream);
}
