/*
 * The GPU tests of the harness itself: a sticky CUDA error, dropped
 * records, an untraced run, kernels loaded at run time. Each case's own
 * test is registered by cuproof_add_case (cases/CMakeLists.txt) and runs
 * `cuproof test CASE`. With no GPU each test here is skipped with the
 * reason, which test_main turns into ctest's skipped status;
 * CUPROOF_REQUIRE_GPU=1 (set by ci/gpu.sh) turns a missing GPU into a
 * failure, so a GPU machine whose driver is broken cannot pass by skipping.
 */
#include <cuproof/case.h>
#include "cli/cli.h"
#include <cuproof/device.h>
#include <cuproof/driver.h>
#include <cuproof/gate.h>
#include <cuproof/rtc.h>
#include <cuproof/internal/runner.h>
#include "runner/window.h"

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Starts a GPU test: CUPTI first (Criterion runs each test in its own
 * process, so it is set up before that process's first CUDA call, and a
 * sticky CUDA error cannot leak into another test), then the device. With
 * no GPU the test is skipped with the reason, or fails when
 * CUPROOF_REQUIRE_GPU=1. */
static void gpu_test_begin(cp_env *env)
{
    cp_tracer_init();
    cr_assert_eq(cp_env_discover(env), 0, "%s", cp_last_error());
    const char *require = getenv("CUPROOF_REQUIRE_GPU");
    if (!env->has_device && require && strcmp(require, "1") == 0)
        cr_assert_fail("CUPROOF_REQUIRE_GPU=1 but %s", env->no_device_reason);
    if (!env->has_device)
        cr_skip_test("%s", env->no_device_reason);
}

/* Runs case `name` with options `o`; the test fails when the case is not
 * registered or the result cannot be allocated. The runner's return code
 * is stored in *rc; the result is the caller's, for gpu_test_end. */
static cp_case_result *gpu_test_run(const char *name, const cp_env *env, const cp_run_opts *o,
                                    int *rc)
{
    const cp_case_def *def = cp_registry_find(name);
    cr_assert_not_null(def, "case %s is not registered", name);
    cp_case_result *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    *rc = cp_run_case(def, env, o, r);
    return r;
}

static void gpu_test_end(cp_case_result *r)
{
    cp_case_result_free(r);
    free(r);
    cp_tracer_shutdown();
}

/* ---- a sticky CUDA error in one case, under cuproof run ---- */

cudaError_t cp_test_fault_launch(void);

static int fault_run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    CP_CUDA(cp_test_fault_launch());
    CP_CUDA(cudaDeviceSynchronize());
out:
    return rc;
}

CUPROOF_CASE(selftest_sticky_fault, .title = "faults on purpose", .variants = CP_VARIANTS("a"),
             .run = fault_run);

/* The faulting case fails with the error's name; the GPU case after it is
 * reported as not run, with the reason; the command exits 1, not crashing. */
Test(gpu, sticky_error_is_survived_and_reported, .timeout = 300)
{
    cp_env env;
    gpu_test_begin(&env);
    char dir[] = "/tmp/cuproof-sticky-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *argv[] = {"cuproof", "run", "selftest-sticky-fault", "vector-add", "--out", dir,
                    "--repeat", "1", "--warmup", "0", NULL};
    cr_expect_eq(cp_cli_main(10, argv), 1, "a failed case makes the exit status 1");
    char path[128];
    snprintf(path, sizeof path, "%s/report.json", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "the report was written");
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    cr_expect_not_null(strstr(text, "cudaErrorIllegalAddress"), "the fault is named");
    cr_expect_not_null(strstr(text, "not run: an earlier case left the device unusable"),
                       "the later GPU case says why it did not run");
}

/* CUPTI starved of buffers drops records: by the trust rule the case is
 * inconclusive with the count and the buffers named, never passed, and not
 * failed either (nothing the GPU did was shown wrong). */
Test(gpu, dropped_records_make_the_case_inconclusive, .timeout = 300)
{
    setenv("CUPROOF_CUPTI_BUFFER_KB", "4", 1);
    setenv("CUPROOF_CUPTI_MAX_BUFFERS", "2", 1);
    cp_env env;
    gpu_test_begin(&env);
    cr_assert(cp_tracer_available(), "%s", cp_tracer_unavailable_reason());
    cp_run_opts o = {.profile = CP_PROFILE_CI, .repeat = 1, .warmup = 1, .trace = true};
    int rc = 0;
    cp_case_result *r = gpu_test_run("multi-kernel", &env, &o, &rc);
    cr_expect_eq(r->status, CP_STATUS_INCONCLUSIVE, "%s: %s", cp_status_name(r->status),
                 r->error);
    cr_expect_not_null(strstr(r->skip_reason, "the trace cannot be trusted: CUPTI dropped"), "%s",
                       r->skip_reason);
    cr_expect_not_null(strstr(r->skip_reason, "at the set limit"), "%s", r->skip_reason);
    cr_log_info("%s", r->skip_reason);
    gpu_test_end(r);
}

/* Untraced on a GPU (as when another tool holds CUPTI): the case runs, its
 * outputs are checked, and every check that reads a trace is skipped with
 * the reason, none passed; tracing was asked for, so the checks its claim
 * rests on were not made, and the case is inconclusive, not passed. */
Test(gpu, untraced_run_skips_trace_checks, .timeout = 300)
{
    setenv("CUPROOF_NO_TRACE", "1", 1);
    cp_env env;
    gpu_test_begin(&env);
    cr_assert_not(cp_tracer_available());
    cp_run_opts o = {.profile = CP_PROFILE_CI, .repeat = 1, .warmup = 1, .trace = true};
    int rc = 0;
    cp_case_result *r = gpu_test_run("multi-kernel", &env, &o, &rc);
    cr_assert_eq(rc, 0, "%s", r->error);
    cr_expect_eq(r->status, CP_STATUS_INCONCLUSIVE, "%s", cp_status_name(r->status));
    cr_expect_not_null(strstr(r->skip_reason, "essential check not made"), "%s", r->skip_reason);
    cr_expect_not_null(strstr(r->skip_reason, "CUPROOF_NO_TRACE"), "%s", r->skip_reason);
    size_t skipped = 0, passed = 0;
    for (size_t i = 0; i < r->nchecks; i++) {
        const cp_check_result *c = &r->checks[i];
        if (c->status == CP_CHECK_SKIPPED) {
            skipped++;
            cr_expect_not_null(strstr(c->skip_reason, "CUPROOF_NO_TRACE"), "%s: %s", c->name,
                               c->skip_reason);
        }
        passed += c->status == CP_CHECK_PASSED && strstr(c->name, "output equals");
    }
    cr_expect_gt(skipped, 10, "the trace checks are skipped (%zu)", skipped);
    cr_expect_eq(passed, r->nvariants, "every output is still checked");
    for (size_t v = 0; v < r->nvariants; v++)
        cr_expect_not(r->variants[v].traced);
    gpu_test_end(r);
}

/* One traced launch of a kernel loaded from `p`, then unloaded: the name
 * the trace gives it (NULL unless exactly one kernel ran), and how many
 * names the tracer corrected. Through cp_rtc_launch when `named`, else
 * through cudaLaunchKernel alone, as CUPTI sees it unaided. */
static const char *traced_name(const cp_rtc_program *p, const char *entry, bool named,
                               float *d, cp_trace *t, uint64_t *renamed)
{
    cp_rtc_kernel k;
    cr_assert_eq(cp_rtc_load(p, entry, &k), 0, "%s", cp_last_error());
    long long n = 1024;
    void *args[] = {&d, &n};
    dim3 grid = {4, 1, 1}, block = {256, 1, 1};
    cr_assert_eq(cp_tracer_begin(t), 0, "%s", cp_last_error());
    if (named)
        cr_assert_eq(cp_rtc_launch(&k, grid, block, args, 0, 0), 0, "%s", cp_last_error());
    else
        cr_assert_eq(cudaLaunchKernel((const void *)k.kernel, grid, block, args, 0, 0),
                     cudaSuccess);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    cr_assert_eq(cp_tracer_end(), 0, "%s", cp_last_error());
    cp_rtc_unload(&k);
    const char *name = NULL;
    int kernels = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].kind == CP_ACT_KERNEL) {
            kernels++;
            name = t->items[i].name;
        }
    *renamed += t->renamed_kernels;
    return kernels == 1 ? name : NULL;
}

/* CUPTI gave add_kernel the name of custom-elementwise's leaky_relu, a
 * library unloaded earlier in the same process (H100, CUDA 13.0). Two
 * libraries are loaded, launched and unloaded in turn: launched through
 * cp_rtc_launch, every kernel must carry its own name. The same through
 * cudaLaunchKernel alone counts how often CUPTI's names were wrong, which
 * is CUPTI's doing and only reported. */
Test(gpu, run_time_kernels_keep_their_names, .timeout = 300)
{
    cp_env env;
    gpu_test_begin(&env);
    cr_assert(cp_tracer_available(), "%s", cp_tracer_unavailable_reason());
    const char *entry[2] = {"alpha_ker", "beta_ker"};
    const char *body[2] = {"x[i] = x[i] + 1.0f", "x[i] = 2.0f * x[i]"};
    cp_rtc_program p[2] = {{0}};
    for (int i = 0; i < 2; i++) {
        char *src = cp_rtc_elementwise(entry[i], "float *x", body[i]);
        cr_assert_not_null(src, "%s", cp_last_error());
        cr_assert_eq(cp_rtc_compile(src, entry[i], env.cc_major, env.cc_minor, NULL, 0, &p[i]),
                     0, "%s", cp_last_error());
        free(src);
    }
    float *d = NULL;
    cr_assert_eq(cudaMalloc((void **)&d, 1024 * sizeof(float)), cudaSuccess);
    cp_trace t;
    cp_trace_init(&t);
    uint64_t renamed = 0, raw_renamed = 0;
    int wrong = 0, raw_wrong = 0;
    for (int round = 0; round < 20; round++) {
        int which = round % 2;
        const char *got = traced_name(&p[which], entry[which], true, d, &t, &renamed);
        wrong += !got || strcmp(got, entry[which]) != 0;
        cr_expect(got && strcmp(got, entry[which]) == 0, "round %d: launched %s, traced as %s",
                  round, entry[which], got ? got : "(not one kernel)");
        got = traced_name(&p[which], entry[which], false, d, &t, &raw_renamed);
        raw_wrong += !got || strcmp(got, entry[which]) != 0;
    }
    cr_expect_eq(raw_renamed, 0, "nothing is renamed without a launch name");

    /* Driver launches (host-threads, zero-copy-interop) go through
     * cp_cu_launch: a label unlike the kernel's own name must reach the
     * trace, which shows that CUPTI ties driver launches to the name too. */
    const cp_driver *cu = cp_driver_get();
    cr_assert_not_null(cu, "%s", cp_last_error());
    CUmodule module = NULL;
    CUfunction fn = NULL;
    cr_assert_eq(cu->ModuleLoadData(&module, p[0].cubin), CUDA_SUCCESS);
    cr_assert_eq(cu->ModuleGetFunction(&fn, module, entry[0]), CUDA_SUCCESS);
    long long n = 1024;
    void *args[] = {&d, &n};
    cr_assert_eq(cp_tracer_begin(&t), 0, "%s", cp_last_error());
    cr_assert_eq(cp_cu_launch(cu, fn, "labelled_ker", 4, 256, NULL, args), 0, "%s",
                 cp_last_error());
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    cr_assert_eq(cp_tracer_end(), 0, "%s", cp_last_error());
    cr_expect_eq(cu->ModuleUnload(module), CUDA_SUCCESS);
    const char *driver_name = NULL;
    for (size_t i = 0; i < t.n; i++)
        if (t.items[i].kind == CP_ACT_KERNEL)
            driver_name = t.items[i].name;
    cr_expect(driver_name && strcmp(driver_name, "labelled_ker") == 0,
              "a driver launch named labelled_ker is traced as %s",
              driver_name ? driver_name : "(no kernel)");
    cr_expect_eq(t.renamed_kernels, 1);
    fprintf(stderr,
            "cuproof-test: run-time kernels: %d of 20 named launches traced wrongly (%llu "
            "names corrected); CUPTI alone named %d of 20 wrongly\n",
            wrong, (unsigned long long)renamed, raw_wrong);
    cp_trace_free(&t);
    cudaFree(d);
    for (int i = 0; i < 2; i++)
        cp_rtc_program_free(&p[i]);
    cp_tracer_shutdown();
}

/* The figure check on the H200 (issue 40) found gate_ker traced as
 * scale_unroll, rtc-unroll's NVRTC kernel, unloaded earlier in the same
 * process before the gate's module was first loaded: the runner then kept
 * the gate's spin in a run's work. The same order here, in a process of
 * its own (Criterion's): run-time kernels loaded, launched and unloaded,
 * then the first gate: cp_gate_launch must be traced as CP_GATE_KERNEL
 * whatever CUPTI calls it (how often CUPTI was wrong is printed). */
Test(gpu, the_gate_keeps_its_name_after_unloaded_kernels, .timeout = 300)
{
    cp_env env;
    gpu_test_begin(&env);
    cr_assert(cp_tracer_available(), "%s", cp_tracer_unavailable_reason());
    char *src = cp_rtc_elementwise("scale_unroll", "float *x", "x[i] = 2.0f * x[i]");
    cr_assert_not_null(src, "%s", cp_last_error());
    cp_rtc_program p = {0};
    cr_assert_eq(cp_rtc_compile(src, "scale_unroll", env.cc_major, env.cc_minor, NULL, 0, &p), 0,
                 "%s", cp_last_error());
    free(src);
    float *d = NULL;
    cr_assert_eq(cudaMalloc((void **)&d, 1024 * sizeof(float)), cudaSuccess);
    cp_trace t;
    cp_trace_init(&t);
    uint64_t renamed = 0;
    for (int i = 0; i < 4; i++)
        traced_name(&p, "scale_unroll", true, d, &t, &renamed);
    int *gate = NULL, *flag = NULL;
    cr_assert_eq(cudaHostAlloc((void **)&gate, 2 * sizeof *gate, cudaHostAllocMapped), cudaSuccess);
    cr_assert_eq(cudaHostGetDevicePointer((void **)&flag, gate, 0), cudaSuccess);
    gate[0] = 1; /* open already: the gate ends at once */
    gate[1] = 0;
    cr_assert_eq(cp_tracer_begin(&t), 0, "%s", cp_last_error());
    cr_assert_eq(cp_gate_launch(flag, 1000000000ull, flag + 1, 0), 0, "%s", cp_last_error());
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    cr_assert_eq(cp_tracer_end(), 0, "%s", cp_last_error());
    const char *name = NULL;
    int kernels = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.items[i].kind == CP_ACT_KERNEL) {
            kernels++;
            name = t.items[i].name;
        }
    cr_expect_eq(kernels, 1);
    cr_expect(name && strcmp(name, CP_GATE_KERNEL) == 0, "the gate is traced as %s",
              name ? name : "(no kernel)");
    cr_expect_eq(gate[1], 0, "the open gate did not time out");
    fprintf(stderr, "cuproof-test: the gate after unloaded run-time kernels: CUPTI named it "
                    "%s (%llu corrected)\n",
            t.renamed_kernels ? "wrongly" : "rightly", (unsigned long long)t.renamed_kernels);
    cp_trace_free(&t);
    cudaFreeHost(gate);
    cudaFree(d);
    cp_rtc_program_free(&p);
    cp_tracer_shutdown();
}

/* ---- the GPU's time of a timed run: events, the gate ---- */

/* A body of two small copies on a non-blocking stream 20 ms of host time
 * apart: the host paces it. Variant "ungated" is timed by events alone,
 * "gated" behind the runner's gate, "waits" is gated but synchronises its
 * stream between the copies (which the gate must catch). */
static struct {
    cudaStream_t stream;
    void *dev;
} paced;

static void host_spin_ms(double ms)
{
    double until = cp_now_ms() + ms;
    while (cp_now_ms() < until)
        ;
}

static int paced_setup(cp_ctx *ctx)
{
    int rc = 0;
    CP_CUDA(cudaStreamCreateWithFlags(&paced.stream, cudaStreamNonBlocking));
    CP_CUDA(cudaMalloc(&paced.dev, 1 << 20));
    CP_TRY(cp_time_streams(ctx, (void *const[]){paced.stream}, 1));
    CP_TRY(cp_time_gated(ctx, 1));
    CP_TRY(cp_time_gated(ctx, 2));
out:
    return rc;
}

static int paced_run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    CP_CUDA(cudaMemsetAsync(paced.dev, 1, 1 << 20, paced.stream));
    if (v->index == 2)
        CP_CUDA(cudaStreamSynchronize(paced.stream));
    host_spin_ms(20);
    CP_CUDA(cudaMemsetAsync(paced.dev, 2, 1 << 20, paced.stream));
out:
    return rc;
}

static int paced_checks(cp_ctx *ctx)
{
    cp_check(ctx, "ran", true, "the variants ran", "they did");
    return 0;
}

static void paced_teardown(cp_ctx *ctx)
{
    cudaFree(paced.dev);
    if (paced.stream)
        cudaStreamDestroy(paced.stream);
    memset(&paced, 0, sizeof paced);
}

CUPROOF_CASE(selftest_paced, .title = "two copies 20 ms of host time apart",
             .variants = CP_VARIANTS("ungated", "gated", "waits"), .setup = paced_setup,
             .run = paced_run, .checks = paced_checks, .teardown = paced_teardown);

/* Ungated, the events span the host's 20 ms (the second copy is on the
 * declared non-blocking stream, after it); gated, the copies run back to
 * back and the GPU's time is well under a millisecond; the wall time is
 * the host's 20 ms either way. A gated body that waits on its own work is
 * caught by the gate's timeout and fails, saying why, and the device is
 * usable after it. */
Test(gpu, the_gate_leaves_the_hosts_pace_out_of_the_gpu_time, .timeout = 300)
{
    cp_env env;
    gpu_test_begin(&env);
    cp_run_opts o = {.profile = CP_PROFILE_CI, .repeat = 3, .warmup = 1, .trace = false};
    int rc = 0;
    cp_case_result *r = gpu_test_run("selftest-paced", &env, &o, &rc);
    cr_assert_eq(r->nvariants, 3u);
    const cp_variant_result *ungated = &r->variants[0], *gated = &r->variants[1];
    cr_assert_eq(ungated->ngpu_samples, 3u);
    cr_assert_eq(gated->ngpu_samples, 3u);
    cr_expect_eq(ungated->figure, CP_WORK_GPU);
    cr_expect(gated->gated);
    cr_expect_geq(ungated->gpu_timing.median_ms, 19.5, "ungated GPU time %.3f ms",
                  ungated->gpu_timing.median_ms);
    cr_expect_lt(gated->gpu_timing.median_ms, 1.0, "gated GPU time %.3f ms",
                 gated->gpu_timing.median_ms);
    cr_expect_geq(gated->timing.median_ms, 19.5, "gated wall time %.3f ms",
                  gated->timing.median_ms);
    cr_expect_eq(r->status, CP_STATUS_FAILED);
    cr_expect_not_null(strstr(r->error, "variant waits"), "%s", r->error);
    cr_expect_not_null(strstr(r->error, "the timing gate gave up"), "%s", r->error);
    cr_log_info("GPU time ungated %.3f ms, gated %.4f ms; wall %.3f / %.3f ms; %s",
                ungated->gpu_timing.median_ms, gated->gpu_timing.median_ms,
                ungated->timing.median_ms, gated->timing.median_ms, r->error);
    cr_expect_eq(cudaDeviceSynchronize(), cudaSuccess);
    gpu_test_end(r);
}
