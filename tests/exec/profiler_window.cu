/*
 * profiler_window: a program that marks its own window of interest with
 * cudaProfilerStart and cudaProfilerStop, and runs long enough for a
 * window of time. ROUNDS rounds of one add_one kernel each, a round every
 * ROUND_MS milliseconds (the host sleeps between them): rounds FIRST to
 * LAST (inclusive) run between cudaProfilerStart and cudaProfilerStop,
 * synchronised before the stop so that their kernels end inside. The
 * output is checked on the CPU (every element ROUNDS).
 *
 * Written for the capture windows of `cuproof exec --capture`:
 * profiler-api traces the LAST - FIRST + 1 = 10 kernels of the window and
 * nothing else (`kernels == 10`); after:0.5,for:0.5 traces the rounds of
 * half a second from half a second into tracing, about 25 at 20 ms a
 * round (the window opens and closes within one flush period of its
 * times, 50 ms under the test's CUPROOF_EXEC_FLUSH_MS, so 20 to 30).
 */
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PROGRAM "profiler_window"
#include "exec_common.cuh"

enum { N = 1 << 16, ROUNDS = 100, FIRST = 40, LAST = 49, ROUND_MS = 20 };

int main(void)
{
    int *dev = NULL, *host = (int *)calloc(N, sizeof(int));
    if (!host)
        return EXIT_FAILURE;
    CHECK(cudaMalloc((void **)&dev, N * sizeof(int)));
    CHECK(cudaMemset(dev, 0, N * sizeof(int)));
    CHECK(cudaDeviceSynchronize());
    for (int r = 0; r < ROUNDS; r++) {
        if (r == FIRST)
            CHECK(cudaProfilerStart());
        add_one<<<64, 256>>>(dev, N);
        CHECK(cudaGetLastError());
        if (r == LAST) {
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaProfilerStop());
        }
        struct timespec t = {0, ROUND_MS * 1000000L};
        while (nanosleep(&t, &t) != 0) {
        }
    }
    CHECK(cudaMemcpy(host, dev, N * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += host[i] != ROUNDS;
    CHECK(cudaFree(dev));
    free(host);
    if (wrong) {
        fprintf(stderr, "%s: %d of %d elements wrong\n", PROGRAM, wrong, N);
        return EXIT_FAILURE;
    }
    printf("%s: %d rounds, %d to %d between cudaProfilerStart and cudaProfilerStop, output "
           "right\n",
           PROGRAM, ROUNDS, FIRST, LAST);
    return 0;
}
