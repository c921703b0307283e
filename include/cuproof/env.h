/*
 * What a run knows about its machine: the GPU in use, its properties and
 * the settings that change how cases measure. Plain data, filled by
 * cp_env_discover (device.h) and written into every report.
 */
#ifndef CUPROOF_ENV_H
#define CUPROOF_ENV_H

#include "export.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most GPUs cuproof run --devices takes. */
#define CP_MAX_DEVICES 64

typedef struct cp_env {
    bool has_device;
    char no_device_reason[256];
    int device;             /* the runtime's ordinal in use */
    int device_count;
    char device_source[64]; /* "default", "CTEST_RESOURCE_GROUP_0_GPUS" */
    char gpu_name[256];
    int cc_major, cc_minor;
    int sm_count;
    int copy_engines;       /* cudaDevAttrAsyncEngineCount */
    int concurrent_kernels_supported; /* cudaDevAttrConcurrentKernels: 0 or 1 */
    size_t total_mem;
    int driver_version, runtime_version;
    char max_connections[32]; /* CUDA_DEVICE_MAX_CONNECTIONS as set, or "default (8)" */
    /* CUPROOF_SHARED_GPU: other processes use the GPU (sanitizers side by
     * side), so device-wide free memory does not measure a case; "" when
     * not set, else the reason checks that read free memory are skipped. */
    char shared_gpu[160];
    char host[256];
    char gpu_uuid[48]; /* "GPU-xxxxxxxx-...", as nvidia-smi prints it; "" without a GPU */
    char cpu_model[128]; /* the host CPU, from /proc/cpuinfo; "" when unknown */
    /* The timing process's address-space layout: "fixed" (randomisation
     * off, as `run` sets it), "random" (CUPROOF_ASLR=1, or the kernel
     * refused), "" unknown (reports before schema 1.10). */
    char address_layout[8];
    /* The CPUs the timing process may run on: "all" (as the system
     * schedules it), "gpu-local" (CUPROOF_CPU_AFFINITY=gpu: the CPUs NVML
     * names as the GPU's, cp_env_pin_gpu_cpus), "" unknown (reports
     * before schema 1.12); `cpus` lists them ("0-15,32-47"), and for
     * "all" after a refused pinning says why. */
    char cpu_affinity[16];
    char cpus[160];
} cp_env;

/* A GPU's clocks at one moment, as NVML reports them (what compare needs
 * to tell a slower run from a slower clock). known is false when NVML
 * could not be had or did not answer; `reason` then says why. */
typedef struct cp_clocks {
    bool known;
    unsigned sm_mhz, mem_mhz;
    /* NVML's clocks-event (throttle) reasons bitmask; 0 when none. */
    unsigned long long throttle_reasons;
    char reason[96];
} cp_clocks;

#ifdef __cplusplus
}
#endif

#endif
