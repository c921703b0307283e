/*
 * proc_gen: a synthetic traced process's file in both forms, for the
 * launcher's post-processing bench (ci/bench/postprocess.sh): RECORDS
 * records shaped like ci/bench/long_exec.py's CuPy loop, each step an
 * NVTX range "step" in which each of 8 streams copies a batch in from
 * pinned memory, runs 10 small kernels and copies the result out, every
 * piece of device work with its launch call. Written through the tests'
 * writer of per-process files (tests/proc_lines.c), as
 * DIR/bench.2147483647.proc.jsonl and .proc.cprec (a pid no process has,
 * so that the launcher does not wait for it to close its file).
 *
 *   proc_gen RECORDS DIR
 */
#include "proc_lines.h"

#include <cuproof/error.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STREAMS = 8, KERNELS = 10 };

static void add(cp_trace *t, const cp_activity *a)
{
    if (cp_trace_add(t, a) < 0) {
        fprintf(stderr, "proc_gen: out of memory\n");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    long records = argc == 3 ? strtol(argv[1], NULL, 10) : 0;
    if (records <= 0) {
        fprintf(stderr, "usage: proc_gen RECORDS DIR\n");
        return 2;
    }
    cp_trace t;
    cp_trace_init(&t);
    cp_process p = {.pid = 2147483647,
                    .ppid = 4200,
                    .ended = true,
                    .rank = -1,
                    .local_rank = -1,
                    .world_size = -1};
    snprintf(p.host, sizeof p.host, "bench");
    snprintf(p.command, sizeof p.command, "python3 ci/bench/long_exec.py");
    snprintf(p.why, sizeof p.why, "exit");
    uint64_t now = 1795335209664318581ull, stream_free[STREAMS] = {0};
    uint32_t cor = 1;
    while ((long)t.n < records) {
        uint64_t step = now;
        for (int s = 0; s < STREAMS && (long)t.n < records; s++) {
            for (int k = 0; k < KERNELS + 2 && (long)t.n < records; k++) {
                bool copy = k == 0 || k == KERNELS + 1;
                cp_activity api = {.kind = CP_ACT_RUNTIME,
                                   .start = now,
                                   .end = now + 2500,
                                   .correlation = cor,
                                   .thread = 4242,
                                   .name = copy ? "cudaMemcpyAsync" : "cuLaunchKernel"};
                add(&t, &api);
                uint64_t start = stream_free[s] > now + 3000 ? stream_free[s] : now + 3000;
                cp_activity w = {.kind = copy ? CP_ACT_MEMCPY : CP_ACT_KERNEL,
                                 .start = start,
                                 .end = start + (copy ? 2000 : 4000),
                                 .device = 0,
                                 .context = 1,
                                 .stream = 13 + (uint32_t)s,
                                 .correlation = cor++,
                                 .grid = {4, 1, 1},
                                 .block = {1024, 1, 1},
                                 .name = copy ? "memcpy" : "cupy_multiply__float32_float_float32"};
                if (copy) {
                    w.bytes = 16384;
                    w.copy_dir = k == 0 ? CP_COPY_HTOD : CP_COPY_DTOH;
                    w.src = k == 0 ? CP_MEM_PINNED : CP_MEM_DEVICE;
                    w.dst = k == 0 ? CP_MEM_DEVICE : CP_MEM_PINNED;
                    w.async = true;
                    memset(w.grid, 0, sizeof w.grid);
                    memset(w.block, 0, sizeof w.block);
                }
                add(&t, &w);
                stream_free[s] = w.end;
                now += 3000;
            }
        }
        cp_activity range = {
            .kind = CP_ACT_RANGE, .start = step, .end = now, .thread = 4242, .name = "step"};
        add(&t, &range);
    }
    p.last_ns = now;
    uint64_t api = 0;
    for (size_t i = 0; i < t.n; i++)
        api += t.items[i].kind == CP_ACT_RUNTIME;
    p.cost = (cp_tracing_cost){
        .recorded = true, .records = t.n, .api_records = api, .buffers = t.n / 20000 + 1};
    if (cp_trace_add_process(&t, &p) < 0)
        return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/bench.2147483647.proc.jsonl", argv[2]);
    int rc = proc_lines_write(path, &t, 0);
    snprintf(path, sizeof path, "%s/bench.2147483647.proc.cprec", argv[2]);
    if (rc == 0)
        rc = proc_rec_write(path, &t, 0);
    if (rc < 0)
        fprintf(stderr, "proc_gen: %s\n", cp_last_error());
    else
        printf("proc_gen: %zu records in %s/bench.2147483647.proc.{jsonl,cprec}\n", t.n, argv[2]);
    cp_trace_free(&t);
    return rc < 0;
}
