/*
 * The streaming path at production scale: synthetic traces shaped like a
 * traced training job (several processes, two GPUs each, 48 streams per
 * context, kernels that overlap each other and pinned copies in both
 * directions, memsets, a launch call per piece of device work, NVTX step
 * ranges, graph-launched bursts), written as cuproof.rec files in the
 * order CUPTI delivers them (each process's buffers in completion order,
 * so starts arrive out of order), then analysed in one pass in a fresh
 * process so that its peak memory is the analysis' own.
 *
 *   stream_bench gen N PATH            writes N activity records
 *   stream_bench analyse PATH OUT.json analyses, writes the figures
 *   stream_bench gen-ranks N R DIR [--hosts H] [--clock-offset-ns X]
 *                [--no-collectives-host K] [--delay-rank R:NS]
 *                                      writes R ranks' per-process files
 *                                      (DIR/HOST.PID.proc.cprec), N
 *                                      activity records each, for the
 *                                      merge of a distributed job
 *                                      (tests/gen_ranks.h says what they
 *                                      hold and what the options do)
 */
#include <cuproof/error.h>
#include <cuproof/internal/rec.h>

#include "gen_ranks.h"

#include <errno.h>
#include <inttypes.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint32_t next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

enum { PROCESSES = 4, DEVICES = 2, STREAMS = 48, PENDING = 512 };

/* Device work waits in a small pool until it "completes", then is written
 * (with the pool's order, which is the order of completion): records
 * leave out of start order, as CUPTI's buffers deliver them. */
typedef struct pool {
    cp_activity a[PENDING];
    size_t n;
} pool;

static int flush_done(cp_rec_writer *w, pool *p, uint64_t now, long *written, long limit)
{
    for (size_t i = 0; i < p->n && *written < limit;) {
        if (p->a[i].end > now) {
            i++;
            continue;
        }
        if (cp_rec_put(w, &p->a[i]) < 0)
            return -1;
        ++*written;
        p->a[i] = p->a[--p->n];
    }
    return 0;
}

static int generate(long n, const char *path)
{
    cp_rec_writer *w;
    if (cp_rec_writer_open(&w, path) < 0)
        return -1;
    static const char *kernels[] = {"ampere_sgemm_128x64_nn", "vectorized_elementwise_kernel",
                                    "reduce_kernel", "softmax_warp_forward",
                                    "cunn_SoftMaxBackward", "multi_tensor_apply_kernel"};
    for (uint32_t p = 0; p < PROCESSES; p++) {
        cp_process proc = {.pid = 1000 + p, .ppid = 999, .ended = true};
        snprintf(proc.host, sizeof proc.host, "bench-host");
        snprintf(proc.command, sizeof proc.command, "python3 train.py --rank %u", p);
        if (cp_rec_put_process(w, &proc) < 0)
            return -1;
    }
    static pool pools[PROCESSES];
    uint64_t clock[PROCESSES];
    for (uint32_t p = 0; p < PROCESSES; p++)
        clock[p] = 1700000000000000000ull + p * 1000;
    uint32_t seed = 12345, correlation = 1;
    long written = 0, step = 0;
    while (written < n) {
        uint32_t p = next(&seed) % PROCESSES;
        uint64_t t = clock[p];
        uint32_t r = next(&seed);
        /* A step range every few thousand records, on the host. */
        if (r % 4096 == 0) {
            cp_activity range = {.kind = CP_ACT_RANGE, .start = t, .end = t + 2000000,
                                 .process = p, .name = "step", .depth = 0};
            if (cp_rec_put(w, &range) < 0)
                return -1;
            written++;
            step++;
            continue;
        }
        uint32_t device = r % DEVICES, stream = 7 + (r >> 8) % STREAMS;
        cp_activity launch = {.kind = CP_ACT_RUNTIME, .start = t, .end = t + 3000 + r % 2000,
                              .process = p, .correlation = correlation,
                              .name = "cudaLaunchKernel"};
        cp_activity a = {.device = device, .context = 1 + device, .stream = stream,
                         .process = p, .correlation = correlation};
        a.start = t + 5000 + r % 20000;
        uint32_t what = r % 100;
        if (what < 70) {
            a.kind = CP_ACT_KERNEL;
            a.end = a.start + 2000 + next(&seed) % 80000;
            a.name = kernels[r % 6];
            a.grid[0] = 1 + r % 4096;
            a.grid[1] = a.grid[2] = 1;
            a.block[0] = 256;
            a.block[1] = a.block[2] = 1;
            /* Bursts of graph-launched work: one launch per 64 correlations. */
            if (r % 7 == 0) {
                a.graph_id = 1 + p;
                a.graph_node = r % 200;
                a.correlation = correlation & ~63u;
            }
        } else if (what < 92) {
            a.kind = CP_ACT_MEMCPY;
            a.copy_dir = what % 2 ? CP_COPY_HTOD : CP_COPY_DTOH;
            a.src = a.copy_dir == CP_COPY_HTOD ? CP_MEM_PINNED : CP_MEM_DEVICE;
            a.dst = a.copy_dir == CP_COPY_HTOD ? CP_MEM_DEVICE : CP_MEM_PINNED;
            a.bytes = (uint64_t)(1 + r % 64) << 16;
            a.async = true;
            a.end = a.start + a.bytes / 25; /* about 25 GB/s */
            launch.name = "cudaMemcpyAsync";
        } else {
            a.kind = CP_ACT_MEMSET;
            a.bytes = 1 << 20;
            a.end = a.start + 1500;
            launch.name = "cudaMemsetAsync";
        }
        correlation++;
        if (cp_rec_put(w, &launch) < 0)
            return -1;
        written++;
        pool *pl = &pools[p];
        if (pl->n == PENDING && flush_done(w, pl, UINT64_MAX, &written, n) < 0)
            return -1;
        if (written < n)
            pl->a[pl->n++] = a;
        clock[p] = t + 1500 + r % 3000;
        if (flush_done(w, pl, clock[p], &written, n) < 0)
            return -1;
    }
    for (uint32_t p = 0; p < PROCESSES; p++) {
        cp_process proc = {.ended = true, .last_ns = clock[p]};
        snprintf(proc.why, sizeof proc.why, "exit");
        if (cp_rec_put_process_end(w, p, &proc) < 0)
            return -1;
    }
    cp_rec_end end = {0};
    if (cp_rec_writer_close(w, &end) < 0)
        return -1;
    printf("%ld records (%ld step ranges) in %s\n", written, step, path);
    return 0;
}

static int analyse(const char *path, const char *out)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    double t0 = now_s();
    cp_metrics m;
    cp_trace meta;
    cp_trace_init(&meta);
    bool truncated = false;
    char why[256];
    cp_stream_opts o = {.timeline = {.max_concurrent_kernels = 128}};
    if (cp_rec_analyse(path, &o, &m, &meta, &truncated, why, sizeof why) < 0)
        return -1;
    double t1 = now_s();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    unsigned long long records = (unsigned long long)m.kernels + m.copies + m.memsets;
    /* Every activity record, device work or not, counted in a second pass
     * that the timing leaves out. */
    unsigned long long all = 0;
    cp_rec_reader *r;
    if (cp_rec_reader_open(&r, path) < 0)
        return -1;
    cp_rec_item it;
    while (cp_rec_next(r, &it) > 0)
        all += it.type == CP_REC_ACTIVITY;
    cp_rec_reader_close(r);
    FILE *f = fopen(out, "w");
    if (!f)
        return -1;
    fprintf(f,
            "{\"file\": \"%s\", \"file_bytes\": %lld, \"records\": %llu, \"device_records\": %llu, "
            "\"analyse_s\": %.3f, \"max_rss_kb\": %ld, \"truncated\": %s, "
            "\"kernels\": %u, \"copies\": %u, \"memsets\": %u, \"lanes\": %zu, "
            "\"peak_concurrent_kernels\": %u, \"copy_kernel_overlap_ratio\": %.4f, "
            "\"graph_launches\": %u, \"processes\": %zu}\n",
            path, (long long)st.st_size, all, records, t1 - t0, ru.ru_maxrss,
            truncated ? "true" : "false", m.kernels, m.copies, m.memsets, m.nlanes,
            m.peak_concurrent_kernels, m.copy_kernel_overlap_ratio, m.graph_launches,
            meta.nprocesses);
    fclose(f);
    printf("%s: %llu records (%llu device) of %lld bytes analysed in %.3f s, peak RSS %ld kB (%zu "
           "lanes, peak %u kernels at once, overlap %.3f, %u graph launches)\n",
           path, all, records, (long long)st.st_size, t1 - t0, ru.ru_maxrss, m.nlanes,
           m.peak_concurrent_kernels, m.copy_kernel_overlap_ratio, m.graph_launches);
    cp_metrics_free(&m);
    cp_trace_free(&meta);
    return 0;
}

/* A decimal integer for option `name` (signed when `sign`), whole and in
 * range, or a message naming the option. */
static bool parse_i64(const char *name, const char *v, bool sign, int64_t lo, int64_t hi,
                      int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || (!sign && (*v == '-' || *v == '+')) || x < lo || x > hi) {
        fprintf(stderr, "stream_bench: %s \"%s\" is not a decimal integer from %" PRId64
                        " to %" PRId64 "\n", name, v, lo, hi);
        return false;
    }
    *out = x;
    return true;
}

/* gen-ranks N R DIR and its options (argv from N on); 0, or 2 for bad
 * usage (said), or 1 for a failed write. */
static int gen_ranks(int argc, char **argv)
{
    gen_ranks_opts o = GEN_RANKS_OPTS_INIT;
    int64_t v;
    if (!parse_i64("N", argv[0], false, 1, INT64_MAX / 4, &v))
        return 2;
    o.records = (long)v;
    if (!parse_i64("R", argv[1], false, 1, 1024, &v))
        return 2;
    o.ranks = (uint32_t)v;
    const char *dir = argv[2];
    for (int i = 3; i < argc; i += 2) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!val) {
            fprintf(stderr, "stream_bench: %s needs a value\n", opt);
            return 2;
        }
        if (strcmp(opt, "--hosts") == 0 && parse_i64(opt, val, false, 1, o.ranks, &v)) {
            o.hosts = (uint32_t)v;
        } else if (strcmp(opt, "--clock-offset-ns") == 0 &&
                   parse_i64(opt, val, true, -1000000000000ll, 1000000000000ll, &v)) {
            o.clock_offset_ns = v;
        } else if (strcmp(opt, "--no-collectives-host") == 0 &&
                   parse_i64(opt, val, false, 0, 1023, &v)) {
            o.no_collectives_host = (int32_t)v;
        } else if (strcmp(opt, "--delay-rank") == 0) {
            /* R:NS */
            char rank[32];
            const char *colon = strchr(val, ':');
            int64_t ns;
            if (!colon || (size_t)(colon - val) >= sizeof rank) {
                fprintf(stderr, "stream_bench: --delay-rank \"%s\" is not RANK:NS\n", val);
                return 2;
            }
            memcpy(rank, val, (size_t)(colon - val));
            rank[colon - val] = '\0';
            if (!parse_i64("--delay-rank's RANK", rank, false, 0, o.ranks - 1, &v) ||
                !parse_i64("--delay-rank's NS", colon + 1, false, 0, 1000000000000ll, &ns))
                return 2;
            o.delay_rank = (int32_t)v;
            o.delay_ns = (uint64_t)ns;
        } else {
            /* A known option's bad value was said by parse_i64. */
            if (strcmp(opt, "--hosts") != 0 && strcmp(opt, "--clock-offset-ns") != 0 &&
                strcmp(opt, "--no-collectives-host") != 0)
                fprintf(stderr, "stream_bench: gen-ranks: unknown option \"%s\"\n", opt);
            return 2;
        }
    }
    if (o.no_collectives_host >= 0 &&
        (uint32_t)o.no_collectives_host >= (o.hosts ? o.hosts : (o.ranks + 3) / 4)) {
        fprintf(stderr, "stream_bench: --no-collectives-host %d: there is no such host\n",
                (int)o.no_collectives_host);
        return 2;
    }
    if (gen_ranks_write(dir, &o) < 0)
        return 1;
    printf("%u ranks of %ld records in %s\n", o.ranks, o.records, dir);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "gen") == 0) {
        long n = strtol(argv[2], NULL, 10);
        if (n > 0 && generate(n, argv[3]) == 0)
            return 0;
    } else if (argc >= 5 && strcmp(argv[1], "gen-ranks") == 0) {
        int rc = gen_ranks(argc - 2, argv + 2);
        if (rc != 1)
            return rc;
    } else if (argc == 4 && strcmp(argv[1], "analyse") == 0) {
        if (analyse(argv[2], argv[3]) == 0)
            return 0;
    } else {
        fprintf(stderr, "usage: stream_bench gen N PATH | analyse PATH OUT.json | gen-ranks N R DIR "
                        "[--hosts H] [--clock-offset-ns X] [--no-collectives-host K] "
                        "[--delay-rank R:NS]\n");
        return 2;
    }
    fprintf(stderr, "stream_bench: %s\n", cp_last_error());
    return 1;
}
