/* gate_ker's raw launcher (the runner's: cases and the runner's timer go
 * through cp_gate_launch in cuproof/gate.h, which names the launch for
 * the tracer). */
#ifndef CUPROOF_KERNELS_GATE_H
#define CUPROOF_KERNELS_GATE_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One thread of gate_ker on `stream` (cp_gate_launch's contract). Returns
 * the launch's error. */
cudaError_t cp_gate_kernel_launch(volatile int *flag, unsigned long long timeout_ns,
                                  int *timed_out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
