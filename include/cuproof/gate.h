/* gate_ker: holds a stream until the host opens a gate, so that work can be
 * queued behind it and then run at the GPU's pace rather than the host's
 * (the technique of nvbench's blocking kernel). */
#ifndef CUPROOF_KERNELS_GATE_H
#define CUPROOF_KERNELS_GATE_H

#include "export.h"

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launches one thread that spins until *flag is non-zero, or until
 * timeout_ns have passed on the GPU's clock, when it sets *timed_out: the
 * host may block while it queues work, and a gate that never opens must
 * not hang the device. `flag` and `timed_out` must be host memory mapped
 * into the device (cudaHostAllocMapped). Returns the launch's error. */
CP_API cudaError_t cp_gate_launch(volatile int *flag, unsigned long long timeout_ns, int *timed_out,
                           cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
