/*
 * queued_levels: where conway-streams' queued variants draw their level
 * per process (issue 40; samples/h200-gpu-time/queued-levels). A
 * stand-alone diagnostic, not part of the harness: it times, behind a
 * gate and between two events as the runner does, the queued variants'
 * work and its parts alone (the Game of Life kernel, the device-to-host
 * copy into pinned memory, the device-to-device copy), on 1 and 16
 * streams (the figures ending in "s": the gate and both events on the
 * work's one stream, no other stream's channel taking part), and prints each one's median per round. Before each round
 * after the first it makes anew what MODE names, so that a level that
 * moves between rounds of one process is that thing's draw:
 *   none     nothing (the rounds of a process should agree)
 *   streams  the streams
 *   device   the device buffers (behind a spacer of a new size)
 *   host     the pinned host buffer (likewise)
 *   all      streams, device and host buffers
 * Build: nvcc -O2 -arch=sm_90 -o queued_levels queued_levels.cu
 * Usage: queued_levels MODE ROUNDS SAMPLES   (stdout: one line a figure)
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                     \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));   \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

enum { BOARD = 128, GENS = 8, MAX_STREAMS = 16 };

/* The case's kernel (kernels/conway.cu), one thread a cell. */
__global__ void life(int *out, const int *in)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    int n = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            if (dx || dy)
                n += in[((y + dy + BOARD) % BOARD) * BOARD + (x + dx + BOARD) % BOARD];
    int c = in[y * BOARD + x];
    out[y * BOARD + x] = (c && (n == 2 || n == 3)) || (!c && n == 3);
}

/* One thread spinning until the host opens the gate (or 2 s pass). */
__global__ void gate(volatile int *flag)
{
    long long t0 = clock64();
    while (!*flag && clock64() - t0 < 4000000000LL) {
    }
}

struct bufs {
    int *dnew, *dold, *hout;
    void *dspacer, *hspacer;
};

static size_t board_bytes = (size_t)BOARD * BOARD * sizeof(int);

static void make_device(bufs *b, int round)
{
    /* A spacer of a new size moves where the next allocations land. */
    CK(cudaMalloc(&b->dspacer, (size_t)(round * 7 + 1) * (2u << 20) + 4096u * round));
    CK(cudaMalloc((void **)&b->dnew, board_bytes * MAX_STREAMS));
    CK(cudaMalloc((void **)&b->dold, board_bytes * MAX_STREAMS));
    CK(cudaMemset(b->dold, 0, board_bytes * MAX_STREAMS));
    CK(cudaMemset(b->dnew, 0, board_bytes * MAX_STREAMS));
}

static void make_host(bufs *b, int round)
{
    CK(cudaMallocHost(&b->hspacer, (size_t)(round * 5 + 1) * (1u << 20) + 4096u * round));
    CK(cudaMallocHost((void **)&b->hout, board_bytes * MAX_STREAMS));
}

/* The parts a figure queues each generation: 1 kernel, 2 D2H, 4 D2D. */
enum { KER = 1, D2H = 2, D2D = 4, ALL = 7 };

/* One sample: `parts` of GENS generations on `nstreams` streams, behind
 * the gate, between e0 and e1 on the legacy stream (the runner's
 * bracket), or with `self` the gate and both events on the work's one
 * stream, so that no other stream's channel takes part. */
static float timed(int parts, int nstreams, bool self, cudaStream_t *s, const bufs *b,
                   int *flag_h, int *flag_d, cudaEvent_t e0, cudaEvent_t e1, cudaEvent_t opened)
{
    cudaStream_t outer = self ? s[0] : 0;
    *(volatile int *)flag_h = 0;
    gate<<<1, 1, 0, outer>>>(flag_d);
    CK(cudaGetLastError());
    CK(cudaEventRecord(e0, outer));
    for (int k = 0; k < nstreams && !self; k++)
        CK(cudaStreamWaitEvent(s[k], e0, 0));
    for (int g = 0; g < GENS; g++)
        for (int k = 0; k < nstreams; k++) {
            size_t off = (size_t)k * BOARD * BOARD;
            if (parts & KER) {
                life<<<dim3(BOARD / 32, BOARD / 32), dim3(32, 32), 0, s[k]>>>(b->dnew + off,
                                                                             b->dold + off);
                CK(cudaGetLastError());
            }
            if (parts & D2H)
                CK(cudaMemcpyAsync(b->hout + off, b->dnew + off, board_bytes,
                                   cudaMemcpyDeviceToHost, s[k]));
            if (parts & D2D)
                CK(cudaMemcpyAsync(b->dold + off, b->dnew + off, board_bytes,
                                   cudaMemcpyDeviceToDevice, s[k]));
        }
    for (int k = 0; k < nstreams && !self; k++) {
        CK(cudaEventRecord(opened, s[k]));
        CK(cudaStreamWaitEvent(0, opened, 0));
    }
    CK(cudaEventRecord(e1, outer));
    __atomic_store_n(flag_h, 1, __ATOMIC_SEQ_CST);
    CK(cudaDeviceSynchronize());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: queued_levels none|streams|device|host|all ROUNDS SAMPLES\n");
        return 2;
    }
    const char *mode = argv[1];
    int rounds = atoi(argv[2]), samples = atoi(argv[3]);
    bool new_streams = !strcmp(mode, "streams") || !strcmp(mode, "all");
    bool new_device = !strcmp(mode, "device") || !strcmp(mode, "all");
    bool new_host = !strcmp(mode, "host") || !strcmp(mode, "all");
    if (!new_streams && !new_device && !new_host && strcmp(mode, "none")) {
        fprintf(stderr, "queued_levels: unknown mode '%s'\n", mode);
        return 2;
    }
    int *flag_h, *flag_d;
    CK(cudaHostAlloc((void **)&flag_h, sizeof(int), cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void **)&flag_d, flag_h, 0));
    cudaEvent_t e0, e1, opened;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreateWithFlags(&opened, cudaEventDisableTiming));
    cudaStream_t s[MAX_STREAMS];
    bufs b = {};
    std::vector<void *> old_device, old_host;
    std::vector<cudaStream_t> old_streams;
    const struct {
        const char *name;
        int parts, n;
        bool self;
    } figs[] = {{"queued-1", ALL, 1, false},   {"kernel-1", KER, 1, false},
                {"d2h-1", D2H, 1, false},      {"d2d-1", D2D, 1, false},
                {"queued-16", ALL, 16, false}, {"kernel-16", KER, 16, false},
                {"d2h-16", D2H, 16, false},    {"d2d-16", D2D, 16, false},
                {"queued-1s", ALL, 1, true},   {"kernel-1s", KER, 1, true},
                {"d2d-1s", D2D, 1, true}};
    for (int r = 0; r < rounds; r++) {
        if (r == 0 || new_streams) {
            /* The old ones stay alive, so that a new stream is not the
             * old one's handle again. */
            for (int k = 0; k < MAX_STREAMS; k++) {
                if (r > 0)
                    old_streams.push_back(s[k]);
                CK(cudaStreamCreate(&s[k]));
            }
        }
        if (r == 0 || new_device) {
            if (r > 0) {
                old_device.push_back(b.dspacer);
                old_device.push_back(b.dnew);
                old_device.push_back(b.dold);
            }
            make_device(&b, r);
        }
        if (r == 0 || new_host) {
            if (r > 0) {
                old_host.push_back(b.hspacer);
                old_host.push_back(b.hout);
            }
            make_host(&b, r);
        }
        for (auto &f : figs) {
            std::vector<float> v;
            timed(f.parts, f.n, f.self, s, &b, flag_h, flag_d, e0, e1, opened); /* warm-up */
            for (int i = 0; i < samples; i++)
                v.push_back(timed(f.parts, f.n, f.self, s, &b, flag_h, flag_d, e0, e1, opened));
            std::sort(v.begin(), v.end());
            printf("%s %d %s %.5f %.5f %.5f\n", mode, r, f.name, v[v.size() / 2], v.front(),
                   v.back());
        }
        fflush(stdout);
    }
    for (void *p : old_device)
        CK(cudaFree(p));
    for (void *p : old_host)
        CK(cudaFreeHost(p));
    for (cudaStream_t x : old_streams)
        CK(cudaStreamDestroy(x));
    for (int k = 0; k < MAX_STREAMS; k++)
        CK(cudaStreamDestroy(s[k]));
    CK(cudaFree(b.dspacer));
    CK(cudaFree(b.dnew));
    CK(cudaFree(b.dold));
    CK(cudaFreeHost(b.hspacer));
    CK(cudaFreeHost(b.hout));
    CK(cudaFreeHost(flag_h));
    return 0;
}
