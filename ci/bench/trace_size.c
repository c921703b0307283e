/*
 * Trace export size: N synthetic device records (kernels with their launch
 * shape and pinned asynchronous copies on 200 streams, as analysis.c
 * makes them) written as a Chrome trace (cp_perfetto_write) and in
 * Perfetto's protobuf format (cp_perfetto_pb_write) into a temporary
 * directory, each timed; the files' sizes per record. With --launches
 * every device record also gets the API call that launched it (a flow's
 * two ends), as a real trace has.
 *
 *   trace_size_bench N OUT.json [--launches]
 *     (writes {"records", "device_records", "launches", "json_bytes",
 *      "proto_bytes", "json_bytes_per_device_record",
 *      "proto_bytes_per_device_record", "json_write_s", "proto_write_s"})
 */
#include <cuproof/internal/perfetto.h>
#include <cuproof/case.h>
#include <cuproof/error.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long long size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

int main(int argc, char **argv)
{
    bool launches = argc == 4 && strcmp(argv[3], "--launches") == 0;
    if (argc != 3 && !launches) {
        fprintf(stderr, "usage: trace_size_bench N OUT.json [--launches]\n");
        return 2;
    }
    long n = strtol(argv[1], NULL, 10);
    if (n <= 0)
        return 2;
    cp_trace t;
    cp_trace_init(&t);
    uint32_t seed = 1;
    /* CUPTI's clock reads near 1.8e18 ns: absolute times as recorded. */
    uint64_t clock = 1795460503028750985ULL;
    for (long i = 0; i < n; i++) {
        uint32_t r = cp_rand_next(&seed);
        cp_activity a = {.start = clock, .end = clock + 2000 + r % 50000, .device = 0,
                         .context = 1, .stream = 10 + r % 200, .correlation = (uint32_t)i + 1};
        cp_activity call = {.kind = CP_ACT_RUNTIME, .start = clock - 1500, .end = clock - 200,
                            .correlation = a.correlation};
        if (r % 3 == 0) {
            a.kind = CP_ACT_MEMCPY;
            a.copy_dir = r % 2 ? CP_COPY_HTOD : CP_COPY_DTOH;
            a.src = a.copy_dir == CP_COPY_HTOD ? CP_MEM_PINNED : CP_MEM_DEVICE;
            a.dst = a.copy_dir == CP_COPY_HTOD ? CP_MEM_DEVICE : CP_MEM_PINNED;
            a.bytes = 4 << 20;
            a.async = true;
            a.name = "memcpy";
            call.name = "cudaMemcpyAsync_v3020";
        } else {
            a.kind = CP_ACT_KERNEL;
            a.name = "mult_ker";
            a.grid[0] = 1 + r % 4096;
            a.grid[1] = a.grid[2] = a.block[1] = a.block[2] = 1;
            a.block[0] = 256;
            call.name = "cudaLaunchKernel_v7000";
        }
        if ((launches && cp_trace_add(&t, &call) < 0) || cp_trace_add(&t, &a) < 0)
            return 1;
        clock += 500;
    }
    char dir[] = "/tmp/cuproof-trace-size-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char json[128], proto[128];
    snprintf(json, sizeof json, "%s/bench.synthetic.perfetto.json", dir);
    snprintf(proto, sizeof proto, "%s/bench.synthetic.perfetto-trace", dir);
    double t0 = now_s();
    if (cp_perfetto_write(dir, "bench", "synthetic", &t) < 0) {
        fprintf(stderr, "%s\n", cp_last_error());
        return 1;
    }
    double t1 = now_s();
    if (cp_perfetto_pb_write(dir, "bench", "synthetic", &t) < 0) {
        fprintf(stderr, "%s\n", cp_last_error());
        return 1;
    }
    double t2 = now_s();
    long long json_bytes = size_of(json), proto_bytes = size_of(proto);
    remove(json);
    remove(proto);
    rmdir(dir);
    double per_json = (double)json_bytes / (double)n, per_proto = (double)proto_bytes / (double)n;
    FILE *f = fopen(argv[2], "w");
    if (!f)
        return 1;
    fprintf(f,
            "{\"records\": %zu, \"device_records\": %ld, \"launches\": %s, \"json_bytes\": %lld, "
            "\"proto_bytes\": %lld, \"json_bytes_per_device_record\": %.1f, "
            "\"proto_bytes_per_device_record\": %.1f, \"json_write_s\": %.3f, "
            "\"proto_write_s\": %.3f}\n",
            t.n, n, launches ? "true" : "false", json_bytes, proto_bytes, per_json, per_proto,
            t1 - t0, t2 - t1);
    if (fclose(f) != 0)
        return 1;
    printf("%ld device records%s: Chrome JSON %lld bytes (%.1f a record) in %.3f s, "
           "Perfetto protobuf %lld bytes (%.1f a record) in %.3f s\n",
           n, launches ? " and their launches" : "", json_bytes, per_json, t1 - t0, proto_bytes,
           per_proto, t2 - t1);
    cp_trace_free(&t);
    return 0;
}
