/*
 * Run-time compilation: CUDA C source compiled by NVRTC to a cubin for the
 * device in use, loaded through the runtime's library API (CUDA 12 and
 * later), so that nothing links the driver library and the binaries still
 * start on a machine with no driver. NVRTC itself needs no GPU: sources
 * are compiled, and their errors reported, on any machine.
 */
#ifndef CUPROOF_RTC_H
#define CUPROOF_RTC_H

#include "export.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct cp_rtc_program {
    char *log;        /* NVRTC's log, owned; "" when it said nothing */
    char *cubin;      /* owned */
    size_t cubin_size;
    double compile_ms; /* host time of nvrtcCompileProgram */
} cp_rtc_program;

/*
 * Compiles `src` (called `name` in messages) for sm_<major><minor>, with
 * `nopts` further NVRTC options. Returns 0; CP_ENVRTC when NVRTC fails,
 * with cp_last_error giving the call and, for a compile error, the first
 * error's source line and the log (which out->log holds in full);
 * CP_EINVAL or CP_ENOMEM. On failure `out` holds at most the log, and
 * cp_rtc_program_free releases it.
 */
CP_API int cp_rtc_compile(const char *src, const char *name, int cc_major, int cc_minor,
                   const char *const *opts, size_t nopts, cp_rtc_program *out);
CP_API void cp_rtc_program_free(cp_rtc_program *p);

/*
 * The same through a cache kept for the life of the process, keyed by the
 * source, the options and the architecture: a second request for the same
 * program is a lookup (*hit tells which; compile_ms is the first
 * compilation's). The program belongs to the cache: do not free it.
 * Failures are not cached. Thread-safe. Returns as cp_rtc_compile.
 */
CP_API int cp_rtc_compile_cached(const char *src, const char *name, int cc_major, int cc_minor,
                          const char *const *opts, size_t nopts, const cp_rtc_program **out,
                          bool *hit);

/* Empties the cache (programs handed out before become invalid). */
CP_API void cp_rtc_cache_clear(void);

typedef struct cp_rtc_kernel {
    cudaLibrary_t library;
    cudaKernel_t kernel; /* launched by cp_rtc_launch */
    char entry[128];     /* its extern "C" name */
    double load_ms;      /* host time of loading the library and finding the kernel */
} cp_rtc_kernel;

/* Loads a compiled program on the current device and finds the kernel
 * `entry` (an extern "C" name). Returns 0 or CP_ECUDA (the call and the
 * error in cp_last_error); `out` is then empty. */
CP_API int cp_rtc_load(const cp_rtc_program *p, const char *entry, cp_rtc_kernel *out);

/* Unloads a loaded kernel's library; accepts one that never loaded. */
CP_API void cp_rtc_unload(cp_rtc_kernel *k);

/* Launches a loaded kernel (cudaLaunchKernel, then the launch's error) and
 * names the launch for the tracer (cp_tracer_push_launch_name), so that
 * the trace shows this kernel's name even where CUPTI remembers another.
 * Returns 0, CP_ECUDA or CP_ECUPTI (the call in cp_last_error), or
 * CP_ENOMEM. */
CP_API int cp_rtc_launch(const cp_rtc_kernel *k, dim3 grid, dim3 block, void **args, size_t shmem,
                  cudaStream_t stream);

/*
 * The analogue of PyCUDA's ElementwiseKernel: the source of a kernel
 * `name`(params, long long n) that runs `body` once for every i in [0, n)
 * over a grid-stride loop, as PyCUDA's generated kernels do. `params` is a
 * C parameter list ("float *a, float *b, float *c"); `body` uses i.
 * Returns a malloc'd string, or NULL (CP_EINVAL or CP_ENOMEM in
 * cp_last_error) for a missing part or a name that is not an identifier.
 */
CP_API char *cp_rtc_elementwise(const char *name, const char *params, const char *body);

#endif
