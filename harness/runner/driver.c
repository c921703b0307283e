/*
 * The CUDA driver API without linking libcuda (cuproof/driver.h): each
 * entry point resolved once through the runtime at the ABI version it was
 * written for, CP_CU's translation of a CUresult, and launches through
 * the driver named for the tracer. Where no driver exists, the binaries
 * still start and cp_driver_get says which symbol was missing.
 */
#include <cuproof/driver.h>

#include <cuproof/error.h>
#include "collect/tracer.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

static cp_driver table;
static int table_rc;
static char table_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* One entry point at the ABI of `version` (cudaGetDriverEntryPointByVersion
 * takes the CUDA version whose signature the caller was written for). */
static int resolve(const char *symbol, void **fn, unsigned int version)
{
    enum cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSuccess;
    cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, fn, version, cudaEnableDefault, &status);
    if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || !*fn) {
        snprintf(table_error, sizeof table_error,
                 "the driver does not provide %s (version %u): %s, query status %d", symbol,
                 version, cudaGetErrorName(e), (int)status);
        return CP_ENODEV;
    }
    return 0;
}

static void load(void)
{
    struct {
        const char *symbol;
        void **fn;
        unsigned int version;
    } entries[] = {
        {"cuGetErrorName", (void **)&table.GetErrorName, 12000},
        {"cuGetErrorString", (void **)&table.GetErrorString, 12000},
        {"cuDeviceGet", (void **)&table.DeviceGet, 12000},
        {"cuCtxCreate", (void **)&table.CtxCreate, 12050},
        {"cuCtxDestroy", (void **)&table.CtxDestroy, 12000},
        {"cuCtxPushCurrent", (void **)&table.CtxPushCurrent, 12000},
        {"cuCtxPopCurrent", (void **)&table.CtxPopCurrent, 12000},
        {"cuCtxGetCurrent", (void **)&table.CtxGetCurrent, 12000},
        {"cuCtxSynchronize", (void **)&table.CtxSynchronize, 12000},
        {"cuMemAlloc", (void **)&table.MemAlloc, 12000},
        {"cuMemFree", (void **)&table.MemFree, 12000},
        {"cuMemcpyHtoD", (void **)&table.MemcpyHtoD, 12000},
        {"cuMemcpyDtoH", (void **)&table.MemcpyDtoH, 12000},
        {"cuMemGetInfo", (void **)&table.MemGetInfo, 12000},
        {"cuModuleLoadData", (void **)&table.ModuleLoadData, 12000},
        {"cuModuleUnload", (void **)&table.ModuleUnload, 12000},
        {"cuModuleGetFunction", (void **)&table.ModuleGetFunction, 12000},
        {"cuLaunchKernel", (void **)&table.LaunchKernel, 12000},
    };
    for (size_t i = 0; i < sizeof entries / sizeof *entries; i++) {
        table_rc = resolve(entries[i].symbol, entries[i].fn, entries[i].version);
        if (table_rc < 0)
            return;
    }
}

const cp_driver *cp_driver_get(void)
{
    pthread_once(&once, load);
    if (table_rc < 0) {
        cp_failf(table_rc, "%s", table_error);
        return NULL;
    }
    return &table;
}

int cp_check_cu(int err, const char *file, int line, const char *call)
{
    if (err == CUDA_SUCCESS)
        return 0;
    const char *name = NULL, *text = NULL;
    char unknown[32];
    if (table.GetErrorName)
        table.GetErrorName((CUresult)err, &name);
    if (table.GetErrorString)
        table.GetErrorString((CUresult)err, &text);
    if (!name) {
        snprintf(unknown, sizeof unknown, "CUresult %d", err);
        name = unknown;
    }
    return cp_fail(CP_ECUDA, file, line, call, name, text ? text : "unknown driver error");
}

int cp_cu_launch(const cp_driver *cu, CUfunction fn, const char *name, unsigned grid_x,
                 unsigned block_x, CUstream stream, void **args)
{
    int rc = 0;
    bool named = false;
    if (!cu || !fn || !name)
        return cp_failf(CP_EINVAL, "cp_cu_launch: no driver table, kernel or name");
    CP_TRY(cp_tracer_push_launch_name(name));
    named = true;
    CP_CU(cu->LaunchKernel(fn, grid_x, 1, 1, block_x, 1, 1, 0, stream, args, NULL));
out:
    return cp_tracer_launch_named_end(named, rc);
}
