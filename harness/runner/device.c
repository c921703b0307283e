/*
 * The machine a run describes (cuproof/device.h): the GPU and its
 * properties, the host, the settings that move timings (layout, CPU
 * affinity), NVML's clocks, and the device list and ctest resource spec.
 */
#define _GNU_SOURCE
#include <cuproof/device.h>
#include <cuproof/check.h>

#include <cuproof/error.h>
#include <cuproof/internal/layout.h>

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cp_parse_resource_gpus(const char *value, int *device)
{
    if (!value || !*value)
        return cp_failf(CP_EINVAL, "CTEST_RESOURCE_GROUP_0_GPUS is empty");
    /* ctest writes "id:<id>,slots:<n>"; several allocations are joined by
     * ';' and a case that needs one GPU takes the first. */
    const char *id = strstr(value, "id:");
    if (!id || (id != value && id[-1] != ',' && id[-1] != ';'))
        return cp_failf(CP_EINVAL, "CTEST_RESOURCE_GROUP_0_GPUS='%s' has no 'id:' field", value);
    id += 3;
    char *end = NULL;
    errno = 0;
    long v = strtol(id, &end, 10);
    if (end == id || errno || v < 0 || v > INT_MAX || (*end && *end != ',' && *end != ';'))
        return cp_failf(CP_EINVAL,
                        "CTEST_RESOURCE_GROUP_0_GPUS='%s': the id is not a non-negative integer",
                        value);
    *device = (int)v;
    return 0;
}

void cp_env_read_settings(cp_env *env)
{
    const char *shared = getenv("CUPROOF_SHARED_GPU");
    env->shared_gpu[0] = '\0';
    if (shared && *shared && strcmp(shared, "0") != 0)
        snprintf(env->shared_gpu, sizeof env->shared_gpu,
                 "CUPROOF_SHARED_GPU: other processes share the GPU, so its free memory does "
                 "not measure this case");
}

/* The host CPU's model name, from /proc/cpuinfo; "" when unknown. */
static void read_cpu_model(char *out, size_t len)
{
    char line[512];
    out[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(out, len, "%s", colon + 1 + (colon[1] == ' '));
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    }
    if (f)
        fclose(f);
}

int cp_env_discover(cp_env *env)
{
    int rc = 0;
    memset(env, 0, sizeof *env);
    cp_env_read_settings(env);
    if (gethostname(env->host, sizeof env->host - 1) != 0)
        snprintf(env->host, sizeof env->host, "unknown");
    read_cpu_model(env->cpu_model, sizeof env->cpu_model);
    snprintf(env->address_layout, sizeof env->address_layout, "%s", cp_layout_now());
    cp_env_cpu_affinity(env, false);
    const char *conn = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    snprintf(env->max_connections, sizeof env->max_connections, "%s",
             conn && *conn ? conn : "default (8)");
    snprintf(env->device_source, sizeof env->device_source, "default");
    cudaRuntimeGetVersion(&env->runtime_version);
    cudaDriverGetVersion(&env->driver_version);

    cudaError_t e = cudaGetDeviceCount(&env->device_count);
    if (e != cudaSuccess || env->device_count == 0) {
        snprintf(env->no_device_reason, sizeof env->no_device_reason,
                 "no CUDA device: cudaGetDeviceCount: %s: %s",
                 e != cudaSuccess ? cudaGetErrorName(e) : "cudaSuccess",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices visible");
        env->device_count = 0;
        cudaGetLastError(); /* the failed count is not sticky; clear it anyway */
        return 0;
    }

    const char *group = getenv("CTEST_RESOURCE_GROUP_0_GPUS");
    if (group) {
        CP_TRY(cp_parse_resource_gpus(group, &env->device));
        if (env->device >= env->device_count) {
            rc = cp_failf(CP_EINVAL,
                          "CTEST_RESOURCE_GROUP_0_GPUS names GPU %d but %d are visible",
                          env->device, env->device_count);
            goto out;
        }
        snprintf(env->device_source, sizeof env->device_source, "CTEST_RESOURCE_GROUP_0_GPUS");
    }

    rc = cp_env_use_device(env, env->device);
out:
    return rc;
}

int cp_env_use_device(cp_env *env, int device)
{
    int rc = 0;
    if (device < 0 || device >= env->device_count)
        return cp_failf(CP_EINVAL, "GPU %d does not exist: %d visible", device,
                        env->device_count);
    struct cudaDeviceProp prop;
    CP_CUDA(cudaGetDeviceProperties(&prop, device));
    env->device = device;
    snprintf(env->gpu_name, sizeof env->gpu_name, "%s", prop.name);
    env->cc_major = prop.major;
    env->cc_minor = prop.minor;
    env->sm_count = prop.multiProcessorCount;
    env->total_mem = prop.totalGlobalMem;
    const unsigned char *u = (const unsigned char *)prop.uuid.bytes;
    snprintf(env->gpu_uuid, sizeof env->gpu_uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
    CP_CUDA(cudaDeviceGetAttribute(&env->copy_engines, cudaDevAttrAsyncEngineCount, device));
    CP_CUDA(cudaDeviceGetAttribute(&env->concurrent_kernels_supported, cudaDevAttrConcurrentKernels,
                                   device));
    env->has_device = true;
out:
    return rc;
}

int cp_parse_device_list(const char *s, int count, int *ids, int max, int *n)
{
    *n = 0;
    if (!s || !*s)
        return cp_failf(CP_EINVAL, "--devices is empty: give GPU ids such as 0,1");
    const char *p = s;
    while (*p) {
        char *end = NULL;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 0 || v > INT_MAX || (*end && *end != ','))
            return cp_failf(CP_EINVAL, "--devices '%s': '%s' is not a GPU id", s, p);
        if (v >= count)
            return cp_failf(CP_EINVAL, "--devices '%s': GPU %ld does not exist (%d visible)", s,
                            v, count);
        for (int i = 0; i < *n; i++)
            if (ids[i] == (int)v)
                return cp_failf(CP_EINVAL, "--devices '%s': GPU %ld is listed twice", s, v);
        if (*n == max)
            return cp_failf(CP_EINVAL, "--devices '%s': more than %d GPUs", s, max);
        ids[(*n)++] = (int)v;
        p = *end == ',' ? end + 1 : end;
        if (*end == ',' && !*p)
            return cp_failf(CP_EINVAL, "--devices '%s' ends with a comma", s);
    }
    return 0;
}

char *cp_ctest_spec_json(int count, int slots)
{
    if (count < 0 || slots < 1) {
        cp_failf(CP_EINVAL, "a resource spec needs 0 or more GPUs and 1 or more slots each");
        return NULL;
    }
    /* "id":"N" is 17 characters at most with a comma and up to 10 digits. */
    size_t cap = 96 + (size_t)count * 48;
    char *out = malloc(cap);
    if (!out) {
        cp_failf(CP_ENOMEM, "out of memory for the resource spec");
        return NULL;
    }
    size_t len = (size_t)snprintf(out, cap, "{\"version\":{\"major\":1,\"minor\":0},"
                                            "\"local\":[{\"gpus\":[");
    for (int i = 0; i < count; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s{\"id\":\"%d\",\"slots\":%d}",
                                i ? "," : "", i, slots);
    snprintf(out + len, cap - len, "]}]}\n");
    return out;
}

bool cp_device_usable(void)
{
    void *probe = NULL;
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaMalloc(&probe, 256);
    if (e == cudaSuccess)
        e = cudaFree(probe);
    cudaGetLastError();
    return e == cudaSuccess;
}

/* NVML, reached through dlopen: the driver's library is not linked, so
 * the binaries still start where there is no driver. Its types are its
 * documented ABI: a device is an opaque pointer, results are ints (0 is
 * NVML_SUCCESS), clock type 1 is NVML_CLOCK_SM and 2 NVML_CLOCK_MEM. */
typedef void *nvml_device;
static struct {
    pthread_once_t once;
    bool ready;
    char reason[96];
    int (*get_by_pci)(const char *, nvml_device *);
    int (*clock)(nvml_device, int, unsigned *);
    int (*reasons)(nvml_device, unsigned long long *);
    int (*set_affinity)(nvml_device);
} nvml = {.once = PTHREAD_ONCE_INIT};

static void nvml_load(void)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    int (*init)(void) = lib ? (int (*)(void))dlsym(lib, "nvmlInit_v2") : NULL;
    if (!init || init() != 0) {
        snprintf(nvml.reason, sizeof nvml.reason, "NVML unavailable (%s)",
                 lib ? "nvmlInit_v2 failed" : "no libnvidia-ml.so.1");
        return;
    }
    nvml.get_by_pci = (int (*)(const char *, nvml_device *))dlsym(lib,
                                                                  "nvmlDeviceGetHandleByPciBusId_v2");
    nvml.clock = (int (*)(nvml_device, int, unsigned *))dlsym(lib, "nvmlDeviceGetClockInfo");
    nvml.reasons = (int (*)(nvml_device, unsigned long long *))dlsym(
        lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!nvml.reasons)
        nvml.reasons = (int (*)(nvml_device, unsigned long long *))dlsym(
            lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    nvml.set_affinity = (int (*)(nvml_device))dlsym(lib, "nvmlDeviceSetCpuAffinity");
    nvml.ready = nvml.get_by_pci && nvml.clock;
    if (!nvml.ready)
        snprintf(nvml.reason, sizeof nvml.reason, "NVML lacks the clock queries");
}

void cp_gpu_clocks(int device, cp_clocks *out)
{
    memset(out, 0, sizeof *out);
    pthread_once(&nvml.once, nvml_load);
    char bus[32];
    nvml_device d = NULL;
    if (!nvml.ready) {
        snprintf(out->reason, sizeof out->reason, "%s", nvml.reason);
    } else if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) {
        cudaGetLastError();
        snprintf(out->reason, sizeof out->reason, "no PCI bus id for GPU %d", device);
    } else if (nvml.get_by_pci(bus, &d) != 0 || nvml.clock(d, 1, &out->sm_mhz) != 0 ||
               nvml.clock(d, 2, &out->mem_mhz) != 0) {
        snprintf(out->reason, sizeof out->reason, "NVML did not answer for GPU %s", bus);
    } else {
        out->known = true;
        if (nvml.reasons)
            nvml.reasons(d, &out->throttle_reasons);
    }
}

/* The CPUs of `set` as ranges ("0-15,32-47"). */
static void cpu_list(const cpu_set_t *set, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && at < len; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        int w = last > c ? snprintf(out + at, len - at, "%s%d-%d", at ? "," : "", c, last)
                         : snprintf(out + at, len - at, "%s%d", at ? "," : "", c);
        at += w > 0 ? (size_t)w : 0;
        c = last;
    }
}

void cp_env_cpu_affinity(cp_env *env, bool pin)
{
    char why[96] = "";
    bool pinned = false;
    if (pin) {
        pthread_once(&nvml.once, nvml_load);
        char bus[32];
        nvml_device d = NULL;
        if (!env->has_device)
            snprintf(why, sizeof why, "no GPU to pin to");
        else if (!nvml.ready || !nvml.set_affinity)
            snprintf(why, sizeof why, "%s", nvml.ready ? "NVML lacks nvmlDeviceSetCpuAffinity"
                                                       : nvml.reason);
        else if (cudaDeviceGetPCIBusId(bus, sizeof bus, env->device) != cudaSuccess) {
            cudaGetLastError();
            snprintf(why, sizeof why, "no PCI bus id for GPU %d", env->device);
        } else if (nvml.get_by_pci(bus, &d) != 0 || nvml.set_affinity(d) != 0)
            snprintf(why, sizeof why, "NVML refused to set the CPU affinity of GPU %s", bus);
        else
            pinned = true;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    char list[128] = "unknown";
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cpu_list(&set, list, sizeof list);
    snprintf(env->cpu_affinity, sizeof env->cpu_affinity, "%s", pinned ? "gpu-local" : "all");
    if (why[0])
        snprintf(env->cpus, sizeof env->cpus, "%s (not pinned: %s)", list, why);
    else
        snprintf(env->cpus, sizeof env->cpus, "%s", list);
}
