/* The launcher of mult_ker (mult.h): one block, as the source launches
 * it; the kernel's text is kernels/rtc/mult_ker.cu, which the run-time
 * compiled copy is built from too. */
#include "mult.h"

/* The kernel itself is shared with the run-time compiled copy. */
#include "rtc/mult_ker.cu"

extern "C" cudaError_t cp_mult_launch(float *array, int len, int block, cudaStream_t stream)
{
    if (block <= 0 || len <= 0 || len % block != 0)
        return cudaErrorInvalidValue;
    mult_ker<<<1, block, 0, stream>>>(array, len);
    return cudaGetLastError();
}
