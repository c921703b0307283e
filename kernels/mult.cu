#include "mult.h"

/*
 * The source's kernel, kept as written: 2.0 is a double, so every step
 * converts to double and back, which is part of the load the source
 * measured. Its indexing is only right for a single block (thd is global
 * but the stride is blockDim.x), which is how the source launches it.
 */
extern "C" __global__ void mult_ker(float *array, int array_len)
{
    int thd = blockIdx.x * blockDim.x + threadIdx.x;
    int num_iters = array_len / blockDim.x;

    for (int j = 0; j < num_iters; j++) {
        int i = j * blockDim.x + thd;

        for (int k = 0; k < 50; k++) {
            array[i] *= 2.0;
            array[i] /= 2.0;
        }
    }
}

extern "C" cudaError_t cp_mult_launch(float *array, int len, int block, cudaStream_t stream)
{
    if (block <= 0 || len <= 0 || len % block != 0)
        return cudaErrorInvalidValue;
    mult_ker<<<1, block, 0, stream>>>(array, len);
    return cudaGetLastError();
}
