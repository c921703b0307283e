/*
 * zero-copy-interop (seed 004, PyCUDA and CuPy sharing device pointers):
 * memory allocated through one API used in place by a kernel reached
 * through the other.
 *
 *   runtime-to-driver  cudaMalloc'd memory scaled by a kernel that NVRTC
 *                      compiled and the driver API loaded and launched
 *                      (cuModuleLoadData, cuLaunchKernel);
 *   driver-to-runtime  cuMemAlloc'd memory scaled by a kernel compiled by
 *                      nvcc and launched through the runtime;
 *   copying            the control: the runtime's memory copied into a
 *                      driver allocation before the driver's kernel, as
 *                      code that does not share pointers would.
 *
 * Every result must equal the CPU (data * 2.5). The trace must show no
 * device-to-device copy in the sharing variants, and the control must show
 * one: the check can fail.
 */
#include <cuproof/case.h>
#include <cuproof/driver.h>
#include <cuproof/rtc.h>
#include "../kernels/arrays.h"
#include "references.h"

#include "cp_src_scale_unroll.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RUNTIME_TO_DRIVER = 0, DRIVER_TO_RUNTIME, COPYING, NVARIANTS };

#define SCALE 2.5f

typedef struct state {
    const cp_driver *cu;
    int n;
    float *data, *expected, *out;
    float *runtime_mem;     /* cudaMalloc */
    CUdeviceptr driver_mem; /* cuMemAlloc */
    CUmodule module;
    CUfunction scale;
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    if (s->cu && s->module)
        s->cu->ModuleUnload(s->module);
    if (s->cu && s->driver_mem)
        s->cu->MemFree(s->driver_mem);
    cudaFree(s->runtime_mem);
    free(s->data);
    free(s->expected);
    free(s->out);
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    s->cu = cp_driver_get();
    if (!s->cu)
        return CP_ENODEV;
    /* The source's 10,000 floats; full: a million. */
    s->n = cp_ctx_profile(ctx) == CP_PROFILE_FULL ? 1 << 20 : 10000;
    size_t bytes = (size_t)s->n * sizeof(float);
    s->data = malloc(bytes);
    s->expected = malloc(bytes);
    s->out = malloc(bytes);
    if (!s->data || !s->expected || !s->out) {
        rc = CP_ENOMEM;
        goto out;
    }
    for (int i = 0; i < s->n; i++)
        s->data[i] = (float)i; /* the source's arange */
    memcpy(s->expected, s->data, bytes);
    cp_ref_scale(s->expected, (size_t)s->n, SCALE);
    /* The runtime's context is current: the driver loads the module into it. */
    CP_CUDA(cudaFree(0));
    const char *opts[] = {"-DUNROLL=1"};
    const cp_rtc_program *p = NULL;
    bool hit = false;
    CP_TRY(cp_rtc_compile_cached(cp_src_scale_unroll, "scale_unroll.cu", cp_ctx_env(ctx)->cc_major,
                                 cp_ctx_env(ctx)->cc_minor, opts, 1, &p, &hit));
    CP_CU(s->cu->ModuleLoadData(&s->module, p->cubin));
    CP_CU(s->cu->ModuleGetFunction(&s->scale, s->module, "scale_unroll"));
    CP_CUDA(cudaMalloc((void **)&s->runtime_mem, bytes));
    CP_CU(s->cu->MemAlloc(&s->driver_mem, bytes));
out:
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    size_t bytes = (size_t)s->n * sizeof(float);
    memset(s->out, 0, bytes);
    if (v->index == DRIVER_TO_RUNTIME) {
        CP_CU(s->cu->MemcpyHtoD(s->driver_mem, s->data, bytes));
    } else {
        CP_CUDA(cudaMemcpy(s->runtime_mem, s->data, bytes, cudaMemcpyHostToDevice));
        CP_CU(s->cu->MemcpyHtoD(s->driver_mem, s->out, bytes)); /* zeros: no stale result */
    }
out:
    return rc;
}

/* The driver's kernel on `mem`. */
static int driver_scale(state *s, CUdeviceptr mem)
{
    int rc = 0;
    float scale = SCALE;
    int n = s->n;
    void *args[] = {&mem, &scale, &n};
    CP_TRY(cp_cu_launch(s->cu, s->scale, "scale_unroll", (unsigned)((n + 255) / 256), 256, NULL,
                        args));
out:
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    size_t bytes = (size_t)s->n * sizeof(float);
    cp_phase_begin(ctx, "compute");
    if (v->index == RUNTIME_TO_DRIVER) {
        CP_TRY(driver_scale(s, (CUdeviceptr)(uintptr_t)s->runtime_mem));
    } else if (v->index == DRIVER_TO_RUNTIME) {
        CP_CUDA(cp_scale_launch((float *)(uintptr_t)s->driver_mem, s->n, SCALE, 0));
    } else {
        CP_CUDA(cudaMemcpy((void *)(uintptr_t)s->driver_mem, s->runtime_mem, bytes,
                           cudaMemcpyDeviceToDevice));
        CP_TRY(driver_scale(s, s->driver_mem));
    }
    CP_CUDA(cudaDeviceSynchronize());
    cp_phase_end(ctx);
    cp_phase_begin(ctx, "copy-out");
    const void *result = v->index == RUNTIME_TO_DRIVER ? (const void *)s->runtime_mem
                                                       : (const void *)(uintptr_t)s->driver_mem;
    CP_CUDA(cudaMemcpy(s->out, result, bytes, cudaMemcpyDeviceToHost));
    cp_phase_end(ctx);
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    *mismatches = cp_count_bit_mismatches(s->out, s->expected, (size_t)s->n);
    *elements = (uint64_t)s->n;
    return 0;
}

/* Device-to-device copies in a variant's trace. */
static int dtod_copies(const cp_variant_result *v)
{
    int n = 0;
    for (size_t i = 0; v && i < v->trace.n; i++)
        n += v->trace.items[i].kind == CP_ACT_MEMCPY && v->trace.items[i].copy_dir == CP_COPY_DTOD;
    return n;
}

static int checks(cp_ctx *ctx)
{
    for (int i = 0; i < NVARIANTS; i++) {
        const char *variant = cp_ctx_variant(ctx, i);
        const cp_variant_result *v = cp_variant_result_get(ctx, variant);
        int copies = dtod_copies(v);
        char name[128];
        if (i == COPYING) {
            snprintf(name, sizeof name, "%s: the trace shows the copy (negative control)",
                     variant);
            cp_check_trace(ctx, variant, name, copies == 1, "1 device-to-device copy",
                           "%d copies", copies);
        } else {
            /* Copies of one direction, which no metric counts; that the
             * variant ran its one kernel is an expectation. */
            snprintf(name, sizeof name, "%s: no data is copied between the APIs", variant);
            cp_check_trace(ctx, variant, name, copies == 0, "0 device-to-device copies",
                           "%d copies", copies);
            cp_essential(ctx, name); /* the claim is exactly this */
        }
    }
    return 0;
}

/* Each sharing variant is one kernel, reached through the other API, on
 * memory that was never copied (checks() above). */
static const char expectations[] =
    "runtime-to-driver: kernels == 1\n"
    "driver-to-runtime: kernels == 1\n";

static int claims(cp_ctx *ctx)
{
    const char *text = "PyCUDA and CuPy can share device memory through its pointer: no data "
                       "is copied";
    const char *source = "004";
    const cp_variant_result *a = cp_variant_result_get(ctx, "runtime-to-driver");
    const cp_variant_result *b = cp_variant_result_get(ctx, "driver-to-runtime");
    if (!a || !b || !a->traced || !b->traced) {
        cp_claim_add(ctx, text, source, "no copy", "not measured", CP_VERDICT_NOT_MEASURED,
                     "the sharing variants need a trace");
        return 0;
    }
    int copies = dtod_copies(a) + dtod_copies(b);
    char measured[64];
    snprintf(measured, sizeof measured, "%d device-to-device copies", copies);
    cp_claim_add(ctx, text, source, "no copy", measured,
                 copies == 0 ? CP_VERDICT_CONFIRMED : CP_VERDICT_REFUTED,
                 "memory from cudaMalloc was scaled in place by a driver-API kernel from an "
                 "NVRTC module, and memory from cuMemAlloc by a runtime kernel: both APIs share "
                 "one address space in one context, so a pointer is all that passes. The trace "
                 "of those runs holds %d device-to-device copies; the control, which copies, "
                 "shows its copy, so the check sees copies when there are some.",
                 copies);
    return 0;
}

CUPROOF_CASE(zero_copy_interop,
    .title = "Runtime and driver API sharing device memory by pointer",
    .source = "seed 004 (PyCUDA and CuPy interoperability)",
    .variants = CP_VARIANTS("runtime-to-driver", "driver-to-runtime", "copying"),
    .baseline = "copying",
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .expect = expectations,
    .checks = checks,
    .claims = claims,
    .teardown = teardown);
