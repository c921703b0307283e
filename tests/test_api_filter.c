/*
 * The API filter of `cuproof exec` against the analyses: every runtime
 * and driver call CUPTI can name is walked as the injection library walks
 * it (cp_cupti_filter_api, without applying it), and each one that an
 * analysis reads by name (analysis/api_calls.h's patterns, which the
 * analyses themselves call) must be kept. A pattern added to the analyses
 * is held to the filter by the same walk, with no list here to update.
 * The classes of calls the filter must keep are checked by name, so that
 * a rule that dropped launches or allocation fails even where no analysis
 * reads them yet, and so are calls that must go, so that a table keeping
 * everything fails too.
 */
#include "analysis/api_calls.h"
#include "collect/cupti.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a walk saw: the names, whether each is kept, and per pattern how
 * many names it matched. */
typedef struct walk {
    char **names;
    bool *kept;
    size_t n, cap;
    size_t matched[CP_API_USE_COUNT];
    size_t kept_runtime, kept_driver;
} walk;

static void seen(void *ctx, bool runtime, uint32_t cbid, const char *name, bool kept)
{
    walk *w = ctx;
    (void)cbid;
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 1024;
        w->names = realloc(w->names, w->cap * sizeof *w->names);
        w->kept = realloc(w->kept, w->cap * sizeof *w->kept);
        cr_assert(w->names && w->kept);
    }
    w->names[w->n] = strdup(name);
    w->kept[w->n++] = kept;
    *(runtime ? &w->kept_runtime : &w->kept_driver) += kept;
    for (int u = 0; u < CP_API_USE_COUNT; u++)
        w->matched[u] += cp_api_is(name, (cp_api_use)u);
}

static walk run_walk(uint32_t *filtered)
{
    walk w = {0};
    cr_assert_eq(cp_cupti_filter_api(false, seen, &w, filtered), 0);
    cr_assert_gt(w.n, 1000, "CUPTI named only %zu calls", w.n);
    return w;
}

static void walk_free(walk *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->names[i]);
    free(w->names);
    free(w->kept);
}

/* Whether the walk met `name`, and (when met) whether it was kept. */
static bool met(const walk *w, const char *name, bool *kept)
{
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->names[i], name) == 0) {
            *kept = w->kept[i];
            return true;
        }
    return false;
}

Test(api_filter, every_call_an_analysis_reads_is_kept)
{
    uint32_t filtered = 0;
    walk w = run_walk(&filtered);
    size_t np = 0;
    const cp_api_pattern *p = cp_api_patterns(&np);
    cr_assert_eq(np, CP_API_USE_COUNT, "one pattern per use");
    for (size_t i = 0; i < w.n; i++)
        for (size_t k = 0; k < np; k++)
            if (cp_api_is(w.names[i], p[k].use))
                cr_expect(w.kept[i], "%s is read by %s ('%s') but filtered", w.names[i],
                          p[k].reader, p[k].text);
    /* A pattern that matches no call CUPTI knows reads nothing: a typo. */
    for (size_t k = 0; k < np; k++)
        cr_expect_gt(w.matched[p[k].use], 0, "'%s' (%s) matches no CUPTI call", p[k].text,
                     p[k].reader);
    size_t kept = 0;
    for (size_t i = 0; i < w.n; i++)
        kept += w.kept[i];
    cr_expect_eq(kept + filtered, w.n);
    cr_expect_gt(w.kept_runtime, 0);
    cr_expect_gt(w.kept_driver, 0);
    walk_free(&w);
}

/* The classes of calls the filter must keep, by CUPTI's own names: every
 * one must be a name CUPTI has (a typo here would test nothing) and be
 * kept. */
Test(api_filter, launches_copies_syncs_waits_records_and_allocation_are_kept)
{
    static const char *const keep[] = {
        /* kernel launches, runtime and driver, cooperative, Ex, graphs */
        "cudaLaunchKernel_v7000", "cudaLaunchKernel_ptsz_v7000", "__cudaLaunchKernel_v13000",
        "cudaLaunchCooperativeKernel_v9000", "cudaLaunchKernelExC_v11060",
        "cudaLaunchHostFunc_v10000", "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
        "cuLaunchCooperativeKernel", "cuLaunchGridAsync", "cudaGraphLaunch_v10000",
        "cudaGraphLaunch_ptsz_v10000", "cuGraphLaunch",
        /* copies and memsets */
        "cudaMemcpy_v3020", "cudaMemcpyAsync_v3020", "cudaMemcpyAsync_ptsz_v7000",
        "cudaMemcpy2DAsync_v3020", "cudaMemcpyPeerAsync_v4000", "cuMemcpyHtoD_v2",
        "cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyBatchAsync_v2", "cudaMemset_v3020",
        "cudaMemsetAsync_v3020", "cuMemsetD32Async",
        /* synchronising calls */
        "cudaDeviceSynchronize_v3020", "cudaThreadSynchronize_v3020",
        "cudaStreamSynchronize_v3020", "cudaStreamSynchronize_ptsz_v7000",
        "cudaEventSynchronize_v3020", "cuCtxSynchronize", "cuCtxSynchronize_v2",
        "cuStreamSynchronize", "cuEventSynchronize",
        /* event records and waits */
        "cudaEventRecord_v3020", "cudaEventRecordWithFlags_v11010", "cuEventRecord",
        "cudaStreamWaitEvent_v3020", "cuStreamWaitEvent", "cuStreamWaitEvent_ptsz",
        /* allocation and free: device, host, async, managed, host register */
        "cudaMalloc_v3020", "cudaFree_v3020", "cudaMallocHost_v3020", "cudaFreeHost_v3020",
        "cudaHostAlloc_v3020", "cudaMallocAsync_v11020", "cudaFreeAsync_v11020",
        "cudaMallocFromPoolAsync_v11020", "cudaMallocManaged_v6000", "cudaHostRegister_v4000",
        "cudaHostUnregister_v4000", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemAllocHost_v2",
        "cuMemFreeHost", "cuMemHostAlloc", "cuMemAllocAsync", "cuMemFreeAsync",
        "cuMemAllocManaged", "cuMemHostRegister_v2", "cuMemHostUnregister", "cuMemCreate",
        "cuMemRelease"};
    /* What a launch-bound loop calls around its launches, which no
     * analysis reads: these go. */
    static const char *const drop[] = {
        "cudaGetDevice_v3020", "cudaSetDevice_v3020", "cudaGetLastError_v3020",
        "cudaPeekAtLastError_v3020", "cudaStreamQuery_v3020", "cudaEventQuery_v3020",
        "cudaStreamGetCaptureInfo_v2_ptsz_v11030", "cudaEventCreateWithFlags_v3020",
        "cudaFuncGetAttributes_v3020", "cuDeviceGetAttribute", "cuCtxGetCurrent",
        "cuCtxSetCurrent", "cuKernelGetName", "cuModuleGetLoadingMode", "cuStreamQuery",
        "cuEventQuery", "cuPointerGetAttribute", "cuProfilerStart", "cuCtxDestroy_v2"};
    uint32_t filtered = 0;
    walk w = run_walk(&filtered);
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        bool kept = false;
        cr_expect(met(&w, keep[i], &kept), "CUPTI names no call %s", keep[i]);
        cr_expect(kept && cp_api_kept(keep[i]), "%s is filtered", keep[i]);
    }
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++) {
        bool kept = true;
        cr_expect(met(&w, drop[i], &kept), "CUPTI names no call %s", drop[i]);
        cr_expect(!kept && !cp_api_kept(drop[i]), "%s is kept", drop[i]);
    }
    /* Most of CUPTI's calls go (about 1000 of 1300 in CUDA 13.0). */
    cr_expect_gt(filtered, w.n / 2, "only %u of %zu filtered", filtered, w.n);
    walk_free(&w);
}

Test(api_filter, suffixes_come_off_in_any_order)
{
    static const char *const cases[][2] = {
        {"cudaMemcpyAsync_v3020", "cudaMemcpyAsync"},
        {"cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyHtoDAsync"},
        {"cudaStreamGetCaptureInfo_v2_ptsz_v11030", "cudaStreamGetCaptureInfo"},
        {"cuLaunchKernel", "cuLaunchKernel"},
        {"cuMemcpy_ptds", "cuMemcpy"},
        {"_v2", "_v2"}, /* nothing before the suffix: no call name to leave */
        {"", ""}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        size_t n = cp_api_base_name(cases[i][0], buf, sizeof buf);
        cr_expect_str_eq(buf, cases[i][1], "%s", cases[i][0]);
        cr_expect_eq(n, strlen(cases[i][1]));
    }
    cr_expect_not(cp_api_kept(NULL));
    cr_expect_not(cp_api_is(NULL, CP_API_COPY_CALL));
    cr_expect_not(cp_api_is("cudaMemcpy", CP_API_USE_COUNT));
}
