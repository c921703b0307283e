/* add_kernel (vector_add.h): c = a + b, one thread per element in blocks
 * of 256. */
#include "vector_add.h"

/* extern "C" keeps the name unmangled, so the trace shows "add_kernel". */
extern "C" __global__ void add_kernel(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

extern "C" cudaError_t cp_vector_add_launch(const float *a, const float *b, float *c, int n,
                                            cudaStream_t stream)
{
    const int block = 256;
    int grid = (n + block - 1) / block;
    add_kernel<<<grid, block, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
