/* The kernels of add.h: add_ker, one thread per element over as many
 * blocks as it takes, and the source's add_source_ker, which indexes by
 * threadIdx.x alone; each launcher returns cudaErrorInvalidValue for
 * sizes its kernel cannot take. */
#include "add.h"

extern "C" __global__ void add_ker(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

/* As the source wrote it: the index ignores blockIdx. */
extern "C" __global__ void add_source_ker(float *a, float *b, float *c)
{
    int idx = threadIdx.x;
    c[idx] = a[idx] + b[idx];
}

extern "C" cudaError_t cp_add_launch(const float *a, const float *b, float *c, int n, int block,
                                     cudaStream_t stream)
{
    if (n <= 0 || block <= 0)
        return cudaErrorInvalidValue;
    add_ker<<<(n + block - 1) / block, block, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}

extern "C" cudaError_t cp_add_source_launch(const float *a, const float *b, float *c, int n,
                                            int block, cudaStream_t stream)
{
    if (n <= 0 || block <= 0 || block > n)
        return cudaErrorInvalidValue;
    add_source_ker<<<(n + block - 1) / block, block, 0, stream>>>((float *)a, (float *)b, c);
    return cudaGetLastError();
}
