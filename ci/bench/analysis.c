/*
 * Analysis speed: N synthetic activity records (kernels and copies on 200
 * streams, as a large multi-stream run produces), analysed by
 * cp_timeline_analyse and written as a trace file, timed apart; and the
 * process's peak memory, to show it grows linearly with N.
 *
 *   analysis_bench N OUT.json [TRACE.json]
 *   (writes {"records", "analyse_s", "write_s", "max_rss_kb"}; the trace
 *   file is written to TRACE.json when given, else to /dev/null, and the
 *   browser test draws it)
 */
#include <cuproof/internal/tracefile.h>
#include <cuproof/case.h>
#include <cuproof/metrics.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: analysis_bench N OUT.json [TRACE.json]\n");
        return 2;
    }
    long n = strtol(argv[1], NULL, 10);
    if (n <= 0)
        return 2;
    cp_case_result *c = calloc(1, sizeof *c);
    if (!c)
        return 1;
    snprintf(c->name, sizeof c->name, "bench");
    cp_variant_result *v = cp_result_add_variant(c);
    if (!v)
        return 1;
    snprintf(v->name, sizeof v->name, "synthetic");
    v->ran = v->traced = true;
    cp_trace_init(&v->trace);
    uint32_t seed = 1;
    uint64_t t = 1000000;
    for (long i = 0; i < n; i++) {
        uint32_t r = cp_rand_next(&seed);
        cp_activity a = {.start = t, .end = t + 2000 + r % 50000, .device = 0, .context = 1,
                         .stream = 10 + r % 200, .correlation = (uint32_t)i};
        if (r % 3 == 0) {
            a.kind = CP_ACT_MEMCPY;
            a.copy_dir = r % 2 ? CP_COPY_HTOD : CP_COPY_DTOH;
            a.src = a.copy_dir == CP_COPY_HTOD ? CP_MEM_PINNED : CP_MEM_DEVICE;
            a.dst = a.copy_dir == CP_COPY_HTOD ? CP_MEM_DEVICE : CP_MEM_PINNED;
            a.bytes = 4 << 20;
            a.async = true;
            a.name = "memcpy";
        } else {
            a.kind = CP_ACT_KERNEL;
            a.name = "mult_ker";
        }
        if (cp_trace_add(&v->trace, &a) < 0)
            return 1;
        t += 500;
    }
    double t0 = now_s();
    if (cp_timeline_analyse(&v->trace, NULL, &v->metrics) < 0)
        return 1;
    double t1 = now_s();
    if (cp_trace_file_write(c, "synthetic", argc == 4 ? argv[3] : "/dev/null") < 0)
        return 1;
    double t2 = now_s();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    FILE *f = fopen(argv[2], "w");
    if (!f)
        return 1;
    fprintf(f, "{\"records\": %ld, \"analyse_s\": %.3f, \"write_s\": %.3f, \"max_rss_kb\": %ld}\n",
            n, t1 - t0, t2 - t1, ru.ru_maxrss);
    fclose(f);
    printf("%ld records: analysed in %.3f s, written in %.3f s, peak RSS %ld kB\n", n, t1 - t0,
           t2 - t1, ru.ru_maxrss);
    cp_case_result_free(c);
    free(c);
    return 0;
}
