/*
 * Device discovery: which GPU this process runs on, what it is, and why no
 * case can run when there is none.
 */
#ifndef CUPROOF_DEVICE_H
#define CUPROOF_DEVICE_H

#include "export.h"

#include "env.h"

#ifdef __cplusplus
extern "C" {
#endif


/*
 * Parses ctest's resource allocation for group 0, e.g. "id:1,slots:1", into
 * the GPU id. Returns 0, or CP_EINVAL (with cp_last_error naming the
 * problem) when the value is empty, misses "id:", or the id is not a
 * non-negative integer.
 */
CP_API int cp_parse_resource_gpus(const char *value, int *device);

/* Reads CUPROOF_SHARED_GPU into `env` (cp_env_discover calls it). */
CP_API void cp_env_read_settings(cp_env *env);

/*
 * Finds the device to use: CTEST_RESOURCE_GROUP_0_GPUS when ctest set it,
 * otherwise device 0 of those CUDA_VISIBLE_DEVICES leaves. Fills `env` with
 * its properties and the host's name. With no usable device it returns 0 and
 * sets has_device false with the reason (the runtime's error name and
 * string); CP_EINVAL for a malformed or out-of-range resource variable;
 * CP_ECUDA when a property query fails on a present device.
 */
CP_API int cp_env_discover(cp_env *env);

/*
 * Makes `device` the one `env` describes: its name, compute capability,
 * SMs, memory and copy engines (after cp_env_discover found devices).
 * Returns 0, CP_EINVAL when no such device is visible, or CP_ECUDA when a
 * property query fails.
 */
CP_API int cp_env_use_device(cp_env *env, int device);

/*
 * Parses a list of GPU ids such as "0,1,3" (cuproof run --devices) into
 * `ids` (room for `max`), each below `count`, the GPUs visible. Returns 0,
 * or CP_EINVAL with cp_last_error quoting the list for an empty list, a
 * value that is not a non-negative integer, an id not visible, an id given
 * twice, a trailing comma or more than `max` ids.
 */
CP_API int cp_parse_device_list(const char *s, int count, int *ids, int max, int *n);

/*
 * The ctest resource spec file for `count` GPUs with ids 0..count-1 and
 * `slots` slots each (ctest --resource-spec-file): a malloc'd JSON string,
 * or NULL with CP_EINVAL (count < 0 or slots < 1) or CP_ENOMEM in
 * cp_last_error.
 */
CP_API char *cp_ctest_spec_json(int count, int slots);

/* The clocks of GPU `device` (the runtime's ordinal) now, through NVML
 * (libnvidia-ml, loaded when first needed, so that nothing links the
 * driver's library). Never fails: out->known says whether they are. */
CP_API void cp_gpu_clocks(int device, cp_clocks *out);

/*
 * The CPUs this process may run on, into env->cpu_affinity and env->cpus
 * (cp_env_discover records "all" and the list). With `pin` (`run` under
 * CUPROOF_CPU_AFFINITY=gpu) it first binds the process to the CPUs local
 * to env's GPU (NVML's nvmlDeviceSetCpuAffinity, the GPU's NUMA node), so
 * that its launches and synchronisation never run on a far socket: then
 * "gpu-local". Threads and processes started later inherit it; the
 * launcher of `exec` never calls it, so a traced program keeps its own.
 * A refusal (no GPU, no NVML) leaves "all" with the reason in env->cpus.
 */
CP_API void cp_env_cpu_affinity(cp_env *env, bool pin);

/* After a case failed with a CUDA error: whether this process's context
 * still works. A sticky error, such as an illegal address, leaves every
 * later call failing until the process ends, so no further GPU case can
 * run in it. */
CP_API bool cp_device_usable(void);

#ifdef __cplusplus
}
#endif

#endif
