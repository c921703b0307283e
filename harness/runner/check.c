/* CP_CUDA's translator: the runtime's own error name and string. */
#include <cuproof/check.h>

#include <cuda_runtime_api.h>

int cp_check_cuda(int err, const char *file, int line, const char *call)
{
    if (err == cudaSuccess)
        return 0;
    cudaError_t e = (cudaError_t)err;
    return cp_fail(CP_ECUDA, file, line, call, cudaGetErrorName(e), cudaGetErrorString(e));
}
