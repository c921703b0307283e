/*
 * pageable_twin: streams_overlap.cu's work exactly (16 streams, per stream
 * a copy in, an FMA-chain kernel and a copy out, issued breadth-first,
 * cudaMemcpyAsync throughout), but from pageable host memory (malloc)
 * instead of pinned memory. The driver stages a pageable copy through a
 * pinned buffer of its own: a copy in returns only once its data has been
 * staged and a copy out only once it has ended, so the host issues the
 * kernels after every copy in has (nearly) finished and the copies out
 * after every kernel has: copies and kernels hardly ever overlap, while the
 * kernels still run side by side. The output is checked on the CPU, bit for
 * bit, for every element.
 *
 * Written for two verdicts of `cuproof exec`:
 *   - with streams_overlap.expect: exit 1, because copy_kernel_overlap_ratio
 *     > 0.3 fails (0.01 on an H100, against 0.81 from pinned memory) and
 *     `no finding cuda_memcpy_async` fails (the finding is raised for all
 *     32 copies); peak_concurrent_kernels > 1 still holds (16);
 *   - with pageable_twin.expect (`finding cuda_memcpy_async`): exit 0.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "pageable_twin"
#include "exec_common.cuh"

enum { STREAMS = 16, BLOCKS = 8, THREADS = 256 };
static const size_t SLICE = (size_t)1 << 20; /* floats per stream: 4 MiB */

int main(void)
{
    float *host_in = NULL, *host_out = NULL, *dev = NULL;
    cudaStream_t streams[STREAMS];
    const size_t n = SLICE * STREAMS;

    host_in = (float *)malloc(n * sizeof(float)); /* pageable */
    host_out = (float *)malloc(n * sizeof(float));
    if (!host_in || !host_out) {
        fprintf(stderr, "pageable_twin: out of host memory (%zu bytes)\n", 2 * n * sizeof(float));
        free(host_in);
        free(host_out);
        return EXIT_FAILURE;
    }
    CHECK(cudaMalloc((void **)&dev, n * sizeof(float)));
    setup_slices(host_in, SLICE, streams, STREAMS);
    memset(host_out, 0xff, n * sizeof(float)); /* NaN until overwritten */
    run_slices(dev, host_in, host_out, SLICE, streams, STREAMS, BLOCKS, THREADS, 0);
    size_t first = 0, wrong = wrong_slices(host_out, SLICE, STREAMS, &first);

    for (int s = 0; s < STREAMS; s++)
        CHECK(cudaStreamDestroy(streams[s]));
    CHECK(cudaFree(dev));
    free(host_out);
    free(host_in);
    if (wrong) {
        fprintf(stderr, "pageable_twin: %zu of %zu elements wrong (first at %zu)\n", wrong, n,
                first);
        return EXIT_FAILURE;
    }
    printf("pageable_twin: %d streams x %zu floats, %d FMAs each, output right\n", STREAMS,
           SLICE, ITERS);
    return EXIT_SUCCESS;
}
