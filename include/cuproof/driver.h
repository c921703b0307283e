/*
 * The CUDA driver API, reached without linking libcuda: the runtime hands
 * out the driver's entry points (cudaGetDriverEntryPointByVersion), so the
 * binaries still start, and report "no device", where no driver exists.
 * Cases that create contexts or load modules by hand use this table.
 */
#ifndef CUPROOF_DRIVER_H
#define CUPROOF_DRIVER_H

#include "export.h"

#include "check.h"

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_driver {
    CUresult(CUDAAPI *GetErrorName)(CUresult, const char **);
    CUresult(CUDAAPI *GetErrorString)(CUresult, const char **);
    CUresult(CUDAAPI *DeviceGet)(CUdevice *, int);
    CUresult(CUDAAPI *CtxCreate)(CUcontext *, CUctxCreateParams *, unsigned int, CUdevice);
    CUresult(CUDAAPI *CtxDestroy)(CUcontext);
    CUresult(CUDAAPI *CtxPushCurrent)(CUcontext);
    CUresult(CUDAAPI *CtxPopCurrent)(CUcontext *);
    CUresult(CUDAAPI *CtxGetCurrent)(CUcontext *);
    CUresult(CUDAAPI *CtxSynchronize)(void);
    CUresult(CUDAAPI *MemAlloc)(CUdeviceptr *, size_t);
    CUresult(CUDAAPI *MemFree)(CUdeviceptr);
    CUresult(CUDAAPI *MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult(CUDAAPI *MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult(CUDAAPI *MemGetInfo)(size_t *, size_t *);
    CUresult(CUDAAPI *ModuleLoadData)(CUmodule *, const void *);
    CUresult(CUDAAPI *ModuleUnload)(CUmodule);
    CUresult(CUDAAPI *ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult(CUDAAPI *LaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int,
                                    unsigned int, unsigned int, unsigned int, unsigned int,
                                    CUstream, void **, void **);
} cp_driver;

/* The driver's functions, resolved once. Returns the table, or NULL with
 * cp_last_error naming the symbol the runtime could not provide (no
 * driver, or one too old). Thread-safe. */
CP_API const cp_driver *cp_driver_get(void);

/* CP_CALL's translator for CUresult: the driver's own error name and
 * string. */
CP_API int cp_check_cu(int err, const char *file, int line, const char *call);

#define CP_CU(call) CP_CALL(cu, call)

/* Launches `fn`, a kernel called `name`, through the driver on the current
 * context (grid_x blocks of block_x threads, no dynamic shared memory) and
 * names the launch for the tracer, as cp_rtc_launch does: CUPTI can give a
 * kernel of a module loaded at run time an unloaded kernel's name. Returns
 * 0, CP_ECUDA (the driver's error), CP_ECUPTI or CP_ENOMEM. */
CP_API int cp_cu_launch(const cp_driver *cu, CUfunction fn, const char *name, unsigned grid_x,
                 unsigned block_x, CUstream stream, void **args);

#ifdef __cplusplus
}
#endif

#endif
