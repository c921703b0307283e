/* The example's kernel and launcher (scale.h): x[i] *= a over n floats,
 * in blocks of 256 threads that stride over the array. */
#include "scale.h"

/* Multiplies every element by a, striding by the grid's size: any grid
 * covers the array. One multiplication per element, so the result is the
 * CPU's bit for bit. */
__global__ void scale(float *x, float a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] *= a;
}

extern "C" cudaError_t scale_launch(float *x, float a, int n, int blocks, cudaStream_t stream)
{
    if (n < 1 || blocks < 1)
        return cudaErrorInvalidValue;
    scale<<<blocks, 256, 0, stream>>>(x, a, n);
    return cudaGetLastError();
}
