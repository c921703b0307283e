/*
 * nvtx_ranges: expectations scoped to the program's own NVTX ranges. A
 * range "setup" around the allocations (pinned host memory, device memory,
 * streams, the input): no device work. Then 5 iterations, each inside a
 * range "step": streams_overlap.cu's work (16 streams, per stream a copy in
 * from pinned memory, an FMA-chain kernel and a copy out, issued
 * breadth-first), synchronised before the range ends so that the work of
 * the step lies inside it, and its output checked on the CPU after the
 * range ends, bit for bit.
 *
 * NVTX v3 is header-only (<nvtx3/nvToolsExt.h>, no library): without a tool
 * the calls do nothing; under `cuproof exec` NVTX_INJECTION64_PATH names the
 * injection, which records the ranges.
 *
 * Streams by name: after the steps, outside every range, a stream the
 * program created and named through NVTX (nvtxNameCudaStreamA,
 * NAMED_STREAM below) runs add_one NAMED_LAUNCHES times, and the legacy
 * default stream (stream 0, unnamed) runs it LEGACY_LAUNCHES times, so
 * that the trace holds one named stream with kernels of its own beside
 * unnamed ones. exec.nvtx_ranges.stream_names (stream_names.sh) checks
 * that the name reaches the trace file, the Perfetto file and
 * report.html for exactly the stream those kernels ran on: the name
 * comes through CUPTI's NAME record, whose stream ids must be the ids of
 * the kernel records for that to hold. The range expectations do not see
 * this work.
 *
 * Written for nvtx_ranges.expect (range(step): copy_kernel_overlap_ratio
 * > 0.3, range(step): peak_concurrent_kernels > 1, range(step): kernels
 * >= 5): `cuproof exec` exits 0. range(setup) holds no device work, and a
 * scope without device work fails by design, so no expectation names it.
 * nvtx_ranges_missing.expect (range(no-such-range): kernels >= 1) names a
 * range the program never opens: exit 1.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "nvtx_ranges"
#include "exec_common.cuh"

enum { STEPS = 5, STREAMS = 16, BLOCKS = 8, THREADS = 256 };
static const size_t SLICE = (size_t)1 << 20; /* floats per stream: 4 MiB */

/* The named stream's name (quotes and markup, so that every output's
 * escaping is on the path) and the kernels it and the legacy stream run;
 * the test's CMakeLists.txt gives stream_names.sh the same. */
#define NAMED_STREAM "named <&> \"1\""
enum { NAMED_LAUNCHES = 3, LEGACY_LAUNCHES = 2, COUNTERS = 4096 };

/* add_one NAMED_LAUNCHES times on a created stream named NAMED_STREAM,
 * then LEGACY_LAUNCHES times on the legacy default stream, over one
 * buffer of COUNTERS ints; each counter must end at the sum. Returns the
 * counters that did not. */
static int run_named_and_legacy(void)
{
    cudaStream_t named;
    int *dev = NULL, host[COUNTERS];
    CHECK(cudaStreamCreateWithFlags(&named, cudaStreamNonBlocking));
    nvtxNameCudaStreamA(named, NAMED_STREAM); /* returns nothing to check */
    CHECK(cudaMalloc((void **)&dev, sizeof host));
    CHECK(cudaMemsetAsync(dev, 0, sizeof host, named));
    for (int i = 0; i < NAMED_LAUNCHES; i++) {
        add_one<<<4, 256, 0, named>>>(dev, COUNTERS);
        CHECK(cudaGetLastError());
    }
    /* The legacy stream does not wait for a non-blocking stream. */
    CHECK(cudaStreamSynchronize(named));
    for (int i = 0; i < LEGACY_LAUNCHES; i++) {
        add_one<<<4, 256>>>(dev, COUNTERS);
        CHECK(cudaGetLastError());
    }
    CHECK(cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < COUNTERS; i++)
        wrong += host[i] != NAMED_LAUNCHES + LEGACY_LAUNCHES;
    CHECK(cudaFree(dev));
    CHECK(cudaStreamDestroy(named));
    return wrong;
}

int main(void)
{
    float *host_in = NULL, *host_out = NULL, *dev = NULL;
    cudaStream_t streams[STREAMS];
    const size_t n = SLICE * STREAMS;

    nvtxRangePushA("setup");
    CHECK(cudaMallocHost((void **)&host_in, n * sizeof(float)));
    CHECK(cudaMallocHost((void **)&host_out, n * sizeof(float)));
    CHECK(cudaMalloc((void **)&dev, n * sizeof(float)));
    setup_slices(host_in, SLICE, streams, STREAMS);
    nvtxRangePop();

    size_t wrong = 0;
    for (int step = 0; step < STEPS && wrong == 0; step++) {
        memset(host_out, 0xff, n * sizeof(float)); /* NaN until overwritten */
        nvtxRangePushA("step");
        run_slices(dev, host_in, host_out, SLICE, streams, STREAMS, BLOCKS, THREADS, 0);
        nvtxRangePop();
        size_t first = 0;
        wrong = wrong_slices(host_out, SLICE, STREAMS, &first);
        if (wrong)
            fprintf(stderr, "nvtx_ranges: step %d: first wrong element at %zu\n", step, first);
    }

    int uncounted = wrong ? 0 : run_named_and_legacy();
    if (uncounted)
        fprintf(stderr, "nvtx_ranges: %d of %d counters wrong on the named and legacy streams\n",
                uncounted, (int)COUNTERS);
    for (int s = 0; s < STREAMS; s++)
        CHECK(cudaStreamDestroy(streams[s]));
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(host_out));
    CHECK(cudaFreeHost(host_in));
    if (wrong) {
        fprintf(stderr, "nvtx_ranges: %zu elements wrong\n", wrong);
        return EXIT_FAILURE;
    }
    if (uncounted)
        return EXIT_FAILURE;
    printf("nvtx_ranges: %d steps of %d streams x %zu floats, output right\n", STEPS, STREAMS,
           SLICE);
    return EXIT_SUCCESS;
}
