/*
 * What the exec test programs share: the checking macro, the FMA chain
 * kernel that keeps the GPU busy long enough for copies to overlap it, the
 * exact input values the CPU references tabulate, a counting kernel, and
 * the wait for the injection library's flush. Each program defines
 * PROGRAM, its name for messages, before including this file. They stay
 * plain CUDA programs: nothing here knows of cuproof.
 */
#ifndef CUPROOF_TESTS_EXEC_COMMON_CUH
#define CUPROOF_TESTS_EXEC_COMMON_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) {                                                         \
            fprintf(stderr, "%s: %s failed at %s:%d: %s (%s)\n", PROGRAM, #call, __FILE__, \
                    __LINE__, cudaGetErrorName(err_), cudaGetErrorString(err_));           \
            exit(EXIT_FAILURE);                                                            \
        }                                                                                  \
    } while (0)

#ifndef ITERS
#define ITERS 4096 /* FMAs per element */
#endif

/* x <- x * 0.999 + 0.001, ITERS times: a dependent chain the compiler
 * cannot shorten, correctly rounded on both sides (fmaf). */
__host__ __device__ static inline float chain(float x, int iters)
{
    for (int k = 0; k < iters; k++)
        x = fmaf(x, 0.999f, 0.001f);
    return x;
}

__global__ void fma_chain(float *x, size_t n, int iters)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        x[i] = chain(x[i], iters);
}

/* One of the exact input values (v / 256), so that the CPU reference is a
 * table of chains. */
static inline float input_value(unsigned v)
{
    return (float)v / 256.0f;
}

/* The streamed programs' work: nstreams slices of `slice` floats, each
 * one of VALUES exact inputs, put through the FMA chain on its own stream. */
enum { VALUES = 251 };

/* Input element i of slice s: one of VALUES exact values, so that the CPU
 * reference is a table of VALUES chains. */
static inline unsigned input_index(int s, size_t i)
{
    return (unsigned)((i * 7 + (size_t)s * 13) % VALUES);
}

/* Creates the non-blocking streams and fills host_in's slices. The kernel
 * is loaded now: with lazy loading (CUDA 12.2 onwards) its first launch
 * would load the module there, and the copies in would all be over before
 * any kernel could start. */
static inline void setup_slices(float *host_in, size_t slice, cudaStream_t *streams, int nstreams)
{
    cudaFuncAttributes attributes;
    CHECK(cudaFuncGetAttributes(&attributes, fma_chain));
    for (int s = 0; s < nstreams; s++) {
        CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
        for (size_t i = 0; i < slice; i++)
            host_in[s * slice + i] = input_value(input_index(s, i));
    }
}

/* Breadth-first, as the seeds issue it: every slice's copy in, then every
 * kernel, then every copy out; then the device is synchronised. */
static inline void run_slices(float *dev, const float *host_in, float *host_out, size_t slice,
                              cudaStream_t *streams, int nstreams, int blocks, int threads,
                              int alone)
{
    size_t bytes = slice * sizeof(float);
    for (int s = 0; s < nstreams; s++) {
        CHECK(cudaMemcpyAsync(dev + s * slice, host_in + s * slice, bytes,
                              cudaMemcpyHostToDevice, streams[s]));
        /* The first `alone` copies in end before anything else is
         * issued: no kernel runs under them (0: none). */
        if (s + 1 == alone)
            CHECK(cudaDeviceSynchronize());
    }
    for (int s = 0; s < nstreams; s++) {
        fma_chain<<<blocks, threads, 0, streams[s]>>>(dev + s * slice, slice, ITERS);
        CHECK(cudaGetLastError());
    }
    for (int s = 0; s < nstreams; s++)
        CHECK(cudaMemcpyAsync(host_out + s * slice, dev + s * slice, bytes,
                              cudaMemcpyDeviceToHost, streams[s]));
    CHECK(cudaDeviceSynchronize());
}

/* Output elements whose bits differ from the chain of their input;
 * *first gets the first one's index. */
static inline size_t wrong_slices(const float *host_out, size_t slice, int nstreams,
                                  size_t *first)
{
    float expected[VALUES];
    for (unsigned v = 0; v < VALUES; v++)
        expected[v] = chain(input_value(v), ITERS);
    size_t wrong = 0;
    for (int s = 0; s < nstreams; s++)
        for (size_t i = 0; i < slice; i++) {
            float want = expected[input_index(s, i)], got = host_out[s * slice + i];
            if (memcmp(&want, &got, sizeof got) != 0 && wrong++ == 0)
                *first = s * slice + i;
        }
    return wrong;
}

__global__ void add_one(int *x, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] += 1;
}

/* The work of the programs that end abnormally: `rounds` launches of
 * add_one over n ints, copied back and checked (each element == rounds).
 * Returns 0, or EXIT_FAILURE after saying what was wrong. */
static inline int add_rounds(int rounds, int n)
{
    int *dev = NULL, *host = (int *)calloc((size_t)n, sizeof(int));
    if (!host) {
        fprintf(stderr, "%s: out of host memory\n", PROGRAM);
        return EXIT_FAILURE;
    }
    CHECK(cudaMalloc((void **)&dev, (size_t)n * sizeof(int)));
    CHECK(cudaMemcpy(dev, host, (size_t)n * sizeof(int), cudaMemcpyHostToDevice));
    for (int r = 0; r < rounds; r++) {
        add_one<<<64, 256>>>(dev, n);
        CHECK(cudaGetLastError());
    }
    CHECK(cudaMemcpy(host, dev, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaDeviceSynchronize());
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += host[i] != rounds;
    CHECK(cudaFree(dev));
    free(host);
    if (wrong) {
        fprintf(stderr, "%s: %d of %d elements wrong\n", PROGRAM, wrong, n);
        return EXIT_FAILURE;
    }
    return 0;
}

/* Three periods of the injection's flush, so that one has surely passed. */
static inline void wait_for_flush(void)
{
    const char *s = getenv("CUPROOF_EXEC_FLUSH_MS");
    long ms = s && atol(s) > 0 ? atol(s) : 500;
    if (ms > 2000)
        ms = 2000;
    struct timespec t = {(3 * ms) / 1000, ((3 * ms) % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

#endif
