/*
 * graph_chain: kernels on two streams that never run at once because each
 * depends on the one before it, as in NVIDIA's simpleCudaGraphs, and the
 * same kernels made independent, for the serialized_streams finding: it
 * must not fire when the kernels' own dependencies ordered them, and must
 * fire when nothing but the launch did.
 *
 *   graph_chain [graph]     8 kernels alternating between two streams,
 *                           each waiting (cudaStreamWaitEvent) for the one
 *                           before, captured into a graph and launched 3
 *                           times: one chain, whatever streams the driver
 *                           runs its nodes on
 *   graph_chain events      the same chain run on the two streams directly
 *   graph_chain independent 4 kernels a stream, each stream on its own half
 *                           of the array and no wait between them: they run
 *                           side by side (peak 2), and one at a time under
 *                           CUDA_LAUNCH_BLOCKING=1, which is then the only
 *                           thing that serialised them
 *
 * Every kernel runs the FMA chain (exec_common.cuh) on 4 blocks, about
 * 0.6 ms on an H100: few enough blocks that two kernels fit at once. The
 * result is checked on the CPU, bit for bit; exits 0 when it is right.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "graph_chain"
#include "exec_common.cuh"

enum { KERNELS = 8, LAUNCHES = 3, BLOCKS = 4, THREADS = 256 };
static const size_t N = (size_t)1 << 17; /* floats */

typedef enum { MODE_GRAPH, MODE_EVENTS, MODE_INDEPENDENT } mode;

/* The chain: kernel k on stream k % 2, after an event wait for kernel
 * k - 1 on the other stream; s[0] ends waiting for the last kernel. */
static void issue_chain(float *dev, cudaStream_t s[2], cudaEvent_t done[KERNELS])
{
    for (int k = 0; k < KERNELS; k++) {
        cudaStream_t on = s[k % 2];
        if (k > 0)
            CHECK(cudaStreamWaitEvent(on, done[k - 1], 0));
        fma_chain<<<BLOCKS, THREADS, 0, on>>>(dev, N, ITERS);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(done[k], on));
    }
    CHECK(cudaStreamWaitEvent(s[0], done[KERNELS - 1], 0));
}

int main(int argc, char **argv)
{
    mode m = MODE_GRAPH;
    if (argc > 1 && strcmp(argv[1], "events") == 0)
        m = MODE_EVENTS;
    else if (argc > 1 && strcmp(argv[1], "independent") == 0)
        m = MODE_INDEPENDENT;
    else if (argc > 1 && strcmp(argv[1], "graph") != 0) {
        fprintf(stderr, "usage: graph_chain [graph|events|independent]\n");
        return 2;
    }
    float *host = (float *)malloc(N * sizeof(float)), *dev = NULL;
    if (!host) {
        fprintf(stderr, "graph_chain: out of host memory\n");
        return EXIT_FAILURE;
    }
    for (size_t i = 0; i < N; i++)
        host[i] = input_value(input_index(0, i));
    CHECK(cudaMalloc((void **)&dev, N * sizeof(float)));
    CHECK(cudaMemcpy(dev, host, N * sizeof(float), cudaMemcpyHostToDevice));

    cudaStream_t s[2];
    cudaEvent_t done[KERNELS];
    for (int i = 0; i < 2; i++)
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    for (int k = 0; k < KERNELS; k++)
        CHECK(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming));

    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    int passes = 0; /* FMA chains each element went through, per launch */
    if (m == MODE_GRAPH) {
        CHECK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeGlobal));
        issue_chain(dev, s, done);
        CHECK(cudaStreamEndCapture(s[0], &graph));
        CHECK(cudaGraphInstantiate(&exec, graph, 0));
        for (int l = 0; l < LAUNCHES; l++)
            CHECK(cudaGraphLaunch(exec, s[0]));
        passes = KERNELS;
    } else if (m == MODE_EVENTS) {
        for (int l = 0; l < LAUNCHES; l++)
            issue_chain(dev, s, done);
        passes = KERNELS;
    } else {
        for (int l = 0; l < LAUNCHES; l++)
            for (int k = 0; k < KERNELS; k++) {
                int h = k % 2; /* stream h works on half h */
                fma_chain<<<BLOCKS, THREADS, 0, s[h]>>>(dev + h * (N / 2), N / 2, ITERS);
                CHECK(cudaGetLastError());
            }
        passes = KERNELS / 2;
    }
    for (int i = 0; i < 2; i++)
        CHECK(cudaStreamSynchronize(s[i]));
    CHECK(cudaMemcpy(host, dev, N * sizeof(float), cudaMemcpyDeviceToHost));

    float expected[VALUES];
    for (unsigned v = 0; v < VALUES; v++)
        expected[v] = chain(input_value(v), ITERS * passes * LAUNCHES);
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < N; i++) {
        float want = expected[input_index(0, i)];
        if (memcmp(&want, &host[i], sizeof want) != 0 && wrong++ == 0)
            first = i;
    }

    if (exec)
        CHECK(cudaGraphExecDestroy(exec));
    if (graph)
        CHECK(cudaGraphDestroy(graph));
    for (int k = 0; k < KERNELS; k++)
        CHECK(cudaEventDestroy(done[k]));
    for (int i = 0; i < 2; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaFree(dev));
    free(host);
    if (wrong) {
        fprintf(stderr, "graph_chain: %zu of %zu elements wrong (first at %zu)\n", wrong, N, first);
        return EXIT_FAILURE;
    }
    printf("graph_chain %s: %d kernels on 2 streams, %d times, output right\n",
           m == MODE_GRAPH ? "graph" : m == MODE_EVENTS ? "events" : "independent", KERNELS,
           LAUNCHES);
    return EXIT_SUCCESS;
}
