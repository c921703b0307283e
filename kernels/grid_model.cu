/* grid_model_ker (grid_model.h): each thread of a 1D, 2D or 3D launch
 * writes its block and thread indices and its linear index into its
 * element, for the host to check the grid-block-thread model. */
#include "grid_model.h"

extern "C" __global__ void grid_model_ker(int *out, int nx, int ny, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    /* Edge blocks stick out of the array: their outside threads write nothing. */
    if (x >= nx || y >= ny || z >= nz)
        return;
    int index = x + nx * (y + ny * z);
    int *o = out + (size_t)index * CP_GRID_FIELDS;
    o[CP_GRID_BX] = blockIdx.x;
    o[CP_GRID_BY] = blockIdx.y;
    o[CP_GRID_BZ] = blockIdx.z;
    o[CP_GRID_TX] = threadIdx.x;
    o[CP_GRID_TY] = threadIdx.y;
    o[CP_GRID_TZ] = threadIdx.z;
    o[CP_GRID_INDEX] = index;
}

extern "C" cudaError_t cp_grid_model_launch(int *out, const int n[3], const int block[3],
                                            cudaStream_t stream)
{
    for (int d = 0; d < 3; d++)
        if (n[d] <= 0 || block[d] <= 0)
            return cudaErrorInvalidValue;
    dim3 b(block[0], block[1], block[2]);
    dim3 g((n[0] + block[0] - 1) / block[0], (n[1] + block[1] - 1) / block[1],
           (n[2] + block[2] - 1) / block[2]);
    grid_model_ker<<<g, b, 0, stream>>>(out, n[0], n[1], n[2]);
    return cudaGetLastError();
}
