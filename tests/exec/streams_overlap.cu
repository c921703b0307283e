/*
 * streams_overlap: the textbook way to overlap copies with kernels, for
 * `cuproof exec` to measure. 16 streams, each with its own slice of pinned
 * host memory (cudaMallocHost): a host-to-device copy, a kernel and a
 * device-to-host copy per stream, issued breadth-first (every stream's
 * copy in, then every kernel, then every copy out). The copy engine moves
 * one slice at a time, so each kernel starts as soon as its own slice has
 * arrived and runs while the next slices are still being copied in (and
 * the earlier results copied out). Each kernel runs a chain of FMAs per
 * element (a few milliseconds on an H100, several times the 16 copies in a
 * row) on 8 blocks, so that the 16 kernels also fit on the GPU at once.
 * The output is checked on the CPU, bit for bit, for every element.
 *
 * Written for: streams_overlap.expect (copy_kernel_overlap_ratio > 0.3,
 * peak_concurrent_kernels > 1, no finding cuda_memcpy_async): `cuproof
 * exec` exits 0 (on an H100: ratio 0.81, 16 kernels at once, 5.2 ms per
 * kernel, 0.08 ms per copy). Under CUDA_LAUNCH_BLOCKING=1 each kernel
 * launch waits for its kernel to end, so one kernel runs at a time:
 * peak_concurrent_kernels > 1 fails and it exits 1. (The overlap
 * expectation may still hold there: the copies in stay asynchronous and
 * move while the first kernel runs; 0.41 on the H100.)
 * pageable_twin.cu is the same work from pageable memory.
 *
 * STREAMS_OVERLAP_ALONE=N (0 to 16; 0 when unset) copies the first N
 * slices in before anything else is issued, so that no kernel runs under
 * them: the program overlaps less while "> 0.3" may still hold (on an
 * H100, N = 8 took 0.91 to 0.33-0.45, too near the bound to rely on;
 * N = 4, which overlap_regression.sh uses, leaves more), the overlap
 * regression that cuproof compare must catch.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "streams_overlap"
#include "exec_common.cuh"

enum { STREAMS = 16, BLOCKS = 8, THREADS = 256 };
static const size_t SLICE = (size_t)1 << 20; /* floats per stream: 4 MiB */

int main(void)
{
    float *host_in = NULL, *host_out = NULL, *dev = NULL;
    cudaStream_t streams[STREAMS];
    const size_t n = SLICE * STREAMS;
    const char *env = getenv("STREAMS_OVERLAP_ALONE");
    char *end = NULL;
    long alone = env ? strtol(env, &end, 10) : 0;
    if (env && (end == env || *end || alone < 0 || alone > STREAMS)) {
        fprintf(stderr, "streams_overlap: STREAMS_OVERLAP_ALONE='%s': expected 0 to %d\n", env,
                STREAMS);
        return 2;
    }

    CHECK(cudaMallocHost((void **)&host_in, n * sizeof(float)));
    CHECK(cudaMallocHost((void **)&host_out, n * sizeof(float)));
    CHECK(cudaMalloc((void **)&dev, n * sizeof(float)));
    setup_slices(host_in, SLICE, streams, STREAMS);
    memset(host_out, 0xff, n * sizeof(float)); /* NaN until overwritten */
    run_slices(dev, host_in, host_out, SLICE, streams, STREAMS, BLOCKS, THREADS, (int)alone);
    size_t first = 0, wrong = wrong_slices(host_out, SLICE, STREAMS, &first);

    for (int s = 0; s < STREAMS; s++)
        CHECK(cudaStreamDestroy(streams[s]));
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(host_out));
    CHECK(cudaFreeHost(host_in));
    if (wrong) {
        fprintf(stderr, "streams_overlap: %zu of %zu elements wrong (first at %zu)\n", wrong, n,
                first);
        return EXIT_FAILURE;
    }
    printf("streams_overlap: %d streams x %zu floats, %d FMAs each, output right\n", STREAMS,
           SLICE, ITERS);
    return EXIT_SUCCESS;
}
