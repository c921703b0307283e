/*
 * Device discovery: which GPU this process runs on, what it is, and why no
 * case can run when there is none.
 */
#ifndef CUPROOF_DEVICE_H
#define CUPROOF_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

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
    char host[256];
} cp_env;

/*
 * Parses ctest's resource allocation for group 0, e.g. "id:1,slots:1", into
 * the GPU id. Returns 0, or CP_EINVAL (with cp_last_error naming the
 * problem) when the value is empty, misses "id:", or the id is not a
 * non-negative integer.
 */
int cp_parse_resource_gpus(const char *value, int *device);

/*
 * Finds the device to use: CTEST_RESOURCE_GROUP_0_GPUS when ctest set it,
 * otherwise device 0 of those CUDA_VISIBLE_DEVICES leaves. Fills `env` with
 * its properties and the host's name. With no usable device it returns 0 and
 * sets has_device false with the reason (the runtime's error name and
 * string); CP_EINVAL for a malformed or out-of-range resource variable;
 * CP_ECUDA when a property query fails on a present device.
 */
int cp_env_discover(cp_env *env);

#endif
