/* A kernel that faults on purpose (a store to an unmapped address), for the
 * test that cuproof run survives a sticky CUDA error and reports it. */
#include <cuda_runtime_api.h>

extern "C" __global__ void cp_fault_ker(int *bad)
{
    *bad = 1;
}

extern "C" cudaError_t cp_test_fault_launch(void)
{
    cp_fault_ker<<<1, 1>>>((int *)0x10);
    return cudaGetLastError();
}
