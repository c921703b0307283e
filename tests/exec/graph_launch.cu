/*
 * graph_launch: kernels launched from a CUDA graph. A sequence of 8 kernels
 * is captured on a non-default stream into a graph: the origin stream
 * records an event that 3 more streams wait for (the fork), each of the 4
 * streams runs 2 kernels on its own quarter of the array, and the origin
 * stream waits for an event from each of the other 3 (the join), all inside
 * the capture. The graph, 4 independent branches of 2 kernels each, is
 * instantiated once and launched 3 times; the result (every element put
 * through the FMA chain 6 times) is checked on the CPU, bit for bit.
 * Each kernel runs on 4 blocks for about 0.6 ms (H100), so the 4 branches
 * run side by side.
 *
 * Written for: `kernels == 24` (a record per kernel node per launch: 8 x 3)
 * and `peak_concurrent_kernels > 1`: `cuproof exec` exits 0.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "graph_launch"
#include "exec_common.cuh"

enum { BRANCHES = 4, PER_BRANCH = 2, LAUNCHES = 3, BLOCKS = 4, THREADS = 256 };
static const size_t QUARTER = (size_t)1 << 16; /* floats per branch */

int main(void)
{
    const size_t n = QUARTER * BRANCHES;
    float *host = (float *)malloc(n * sizeof(float)), *dev = NULL;
    if (!host) {
        fprintf(stderr, "graph_launch: out of host memory\n");
        return EXIT_FAILURE;
    }
    for (size_t i = 0; i < n; i++)
        host[i] = input_value(input_index(0, i));
    CHECK(cudaMalloc((void **)&dev, n * sizeof(float)));
    CHECK(cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice));

    cudaStream_t streams[BRANCHES]; /* streams[0] is the origin of the capture */
    cudaEvent_t fork, joins[BRANCHES];
    for (int b = 0; b < BRANCHES; b++) {
        CHECK(cudaStreamCreateWithFlags(&streams[b], cudaStreamNonBlocking));
        CHECK(cudaEventCreateWithFlags(&joins[b], cudaEventDisableTiming));
    }
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));

    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    CHECK(cudaStreamBeginCapture(streams[0], cudaStreamCaptureModeGlobal));
    CHECK(cudaEventRecord(fork, streams[0]));
    for (int b = 1; b < BRANCHES; b++)
        CHECK(cudaStreamWaitEvent(streams[b], fork, 0));
    for (int k = 0; k < BRANCHES * PER_BRANCH; k++) { /* 8 kernels, round robin */
        int b = k % BRANCHES;
        fma_chain<<<BLOCKS, THREADS, 0, streams[b]>>>(dev + b * QUARTER, QUARTER, ITERS);
        CHECK(cudaGetLastError());
    }
    for (int b = 1; b < BRANCHES; b++) {
        CHECK(cudaEventRecord(joins[b], streams[b]));
        CHECK(cudaStreamWaitEvent(streams[0], joins[b], 0));
    }
    CHECK(cudaStreamEndCapture(streams[0], &graph));
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(graph, NULL, &nodes));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int l = 0; l < LAUNCHES; l++)
        CHECK(cudaGraphLaunch(exec, streams[0]));
    CHECK(cudaStreamSynchronize(streams[0]));
    CHECK(cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost));

    float expected[VALUES];
    for (unsigned v = 0; v < VALUES; v++)
        expected[v] = chain(input_value(v), ITERS * PER_BRANCH * LAUNCHES);
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        float want = expected[input_index(0, i)];
        if (memcmp(&want, &host[i], sizeof want) != 0 && wrong++ == 0)
            first = i;
    }

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaEventDestroy(fork));
    for (int b = 0; b < BRANCHES; b++) {
        CHECK(cudaEventDestroy(joins[b]));
        CHECK(cudaStreamDestroy(streams[b]));
    }
    CHECK(cudaFree(dev));
    free(host);
    if (wrong) {
        fprintf(stderr, "graph_launch: %zu of %zu elements wrong (first at %zu)\n", wrong, n, first);
        return EXIT_FAILURE;
    }
    printf("graph_launch: a graph of %zu nodes (%d kernels) launched %d times, output right\n",
           nodes, BRANCHES * PER_BRANCH, LAUNCHES);
    return EXIT_SUCCESS;
}
