/*
 * cp_gate_launch (cuproof/gate.h): gate_ker's launch, named for the
 * tracer, since the runner and cases recognise the gate in a trace by its
 * name and CUPTI's own name for it can be another kernel's.
 */
#include <cuproof/gate.h>

#include <cuproof/check.h>
#include <cuproof/error.h>

#include "../../kernels/gate.h"
#include "collect/tracer.h"

int cp_gate_launch(volatile int *flag, unsigned long long timeout_ns, int *timed_out,
                   cudaStream_t stream)
{
    int rc = 0;
    bool named = false;
    CP_TRY(cp_tracer_push_launch_name(CP_GATE_KERNEL));
    named = true;
    CP_CUDA(cp_gate_kernel_launch(flag, timeout_ns, timed_out, stream));
out:
    return cp_tracer_launch_named_end(named, rc);
}
