/* gate_ker: holds a stream until the host opens a gate, so that work can be
 * queued behind it and then run at the GPU's pace rather than the host's
 * (the technique of nvbench's blocking kernel). */
#ifndef CUPROOF_GATE_H
#define CUPROOF_GATE_H

#include "export.h"

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The gate's kernel name in every trace: what the runner and a case leave
 * out of a run's work by. */
#define CP_GATE_KERNEL "gate_ker"

/* Launches one thread that spins until *flag is non-zero, or until
 * timeout_ns have passed on the GPU's clock, when it sets *timed_out: the
 * host may block while it queues work, and a gate that never opens must
 * not hang the device. `flag` and `timed_out` must be host memory mapped
 * into the device (cudaHostAllocMapped). In an open traced window the
 * launch is named CP_GATE_KERNEL whatever CUPTI calls it (CUPTI can hand
 * gate_ker the name of an unloaded kernel whose handle it reused: seen on
 * the H200 as scale_unroll, an NVRTC kernel of a case earlier in the same
 * process). Returns 0, CP_ECUDA (the launch's error), CP_ENOMEM or
 * CP_ECUPTI (naming it), with cp_last_error saying which. */
CP_API int cp_gate_launch(volatile int *flag, unsigned long long timeout_ns, int *timed_out,
                          cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
