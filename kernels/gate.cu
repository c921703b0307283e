/* gate_ker (cuproof/gate.h): one thread spins on a flag the host sets,
 * reading the GPU's %globaltimer, and gives up after the timeout, saying
 * so, so that a gate the host never opens cannot hang the device; and its
 * raw launcher (gate.h). */
#include "gate.h"

__device__ static unsigned long long global_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __global__ void gate_ker(volatile int *flag, unsigned long long timeout_ns,
                                    int *timed_out)
{
    unsigned long long start = global_ns();
    while (*flag == 0) {
        if (global_ns() - start > timeout_ns) {
            *timed_out = 1;
            return;
        }
    }
}

extern "C" cudaError_t cp_gate_kernel_launch(volatile int *flag, unsigned long long timeout_ns,
                                             int *timed_out, cudaStream_t stream)
{
    gate_ker<<<1, 1, 0, stream>>>(flag, timeout_ns, timed_out);
    return cudaGetLastError();
}
