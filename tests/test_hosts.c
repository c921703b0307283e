/*
 * Hosts whose clocks disagree, simulated: the injection library's
 * test-only CUPROOF_TEST_HOST_SHIFT (its parser, and the writer moving
 * every time it writes), and synthetic ranks on two hosts written with a
 * known clock offset (tests/gen_ranks.h) whose offset must come back
 * within 50 us, through the ranks' builder alone and through
 * cp_program_analyse's ranks table; a host that runs no collective must be
 * "not aligned", and a rank planted late must be the straggler with the
 * lag planted.
 */
#include <cuproof/error.h>
#include <cuproof/program.h>
#include <cuproof/internal/ranks.h>
#include <cuproof/internal/proc.h>
#include "collect/proc_writer.h"
#include "collect/rank.h"

#include "gen_ranks.h"

#include <criterion/criterion.h>
#include <cupti.h>
#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- CUPROOF_TEST_HOST_SHIFT's parser ---- */

Test(host_shift, entries_apply_to_their_rank_only)
{
    char host[CP_HOST_SHIFT_NAME_MAX + 1] = "", why[256];
    int64_t off = 0;
    cr_expect_eq(cp_host_shift_parse(NULL, 1, host, &off, why, sizeof why), 0);
    cr_expect_eq(cp_host_shift_parse("", 1, host, &off, why, sizeof why), 0);
    cr_expect_eq(cp_host_shift_parse("1:sim-host-b:3000000", 1, host, &off, why, sizeof why), 1);
    cr_expect_str_eq(host, "sim-host-b");
    cr_expect_eq(off, 3000000);
    cr_expect_eq(cp_host_shift_parse("1:b:5", 0, host, &off, why, sizeof why), 0,
                 "rank 0 has no entry");
    cr_expect_eq(cp_host_shift_parse("1:b:5", -1, host, &off, why, sizeof why), 0,
                 "a process of no rank is never shifted");
    cr_expect_eq(
        cp_host_shift_parse("0:a:+12,3:far.example:-7000000", 3, host, &off, why, sizeof why), 1);
    cr_expect_str_eq(host, "far.example");
    cr_expect_eq(off, -7000000);
    cr_expect_eq(cp_host_shift_parse("0:a:+12,3:b:-7", 0, host, &off, why, sizeof why), 1);
    cr_expect_str_eq(host, "a");
    cr_expect_eq(off, 12);
    cr_expect_eq(cp_host_shift_parse("2:h:0", 2, host, &off, why, sizeof why), 1);
    cr_expect_eq(off, 0);
}

/* Each malformed value names the variable and the character where it
 * went wrong, and shifts nothing, even for a rank whose own entry is
 * well formed. */
Test(host_shift, malformed_values_name_the_position_and_apply_nothing)
{
    static const struct {
        const char *value, *position, *what;
    } bad[] = {
        {"x:h:1", "at character 1:", "expected a rank"},
        {"1", "at character 2:", "expected ':' after the rank"},
        {"1::5", "at character 3:", "expected a host name"},
        {"1:h", "at character 4:", "expected ':' after the host name"},
        {"1:h:", "at character 5:", "expected an offset"},
        {"1:h:-", "at character 6:", "expected an offset"},
        {"1:h:5ms", "at character 6:", "expected ',' or the end"},
        {"1:h:5,", "at character 7:", "expected a rank"},
        {"1:h:5,1:g:6", "at character 7:", "given an entry before"},
        {"1:a b:5", "at character 4:", "expected ':' after the host name"},
        {"99999999999:h:1", "at character 1:", "above 2^31-1"},
        {"1:h:99999999999999999", "at character 5:", "beyond 10^15 ns"},
        {"1:0123456789012345678901234567890123456789012345678901234567890123:1",
         "at character 3:", "longer than 63"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char host[CP_HOST_SHIFT_NAME_MAX + 1] = "unchanged", why[256] = "";
        int64_t off = 42;
        cr_expect_eq(cp_host_shift_parse(bad[i].value, 1, host, &off, why, sizeof why), -1, "%s",
                     bad[i].value);
        cr_expect(strstr(why, CP_TEST_HOST_SHIFT_VAR) != NULL, "%s: %s", bad[i].value, why);
        cr_expect(strstr(why, bad[i].position) != NULL, "%s: %s", bad[i].value, why);
        cr_expect(strstr(why, bad[i].what) != NULL, "%s: %s", bad[i].value, why);
        cr_expect_str_eq(host, "unchanged", "%s", bad[i].value);
        cr_expect_eq(off, 42, "%s", bad[i].value);
    }
}

/* ---- The writer's shift ---- */

#define ORIGIN 1795454802201045396ull

static void write_shifted(cp_proc_writer *w)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = ORIGIN + 100;
    k.end = ORIGIN + 400;
    k.contextId = 1;
    k.streamId = 8;
    k.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
    cp_proc_writer_record(w, &k);
    CUpti_ActivityAPI api;
    memset(&api, 0, sizeof api);
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    api.start = ORIGIN + 5;
    api.end = ORIGIN + 15;
    cp_proc_writer_record(w, &api);
    CUpti_ActivityMarker2 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    m.timestamp = ORIGIN + 50;
    m.id = 1;
    m.name = "step";
    cp_proc_writer_record(w, &m);
    m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    m.timestamp = ORIGIN + 450;
    m.name = "";
    cp_proc_writer_record(w, &m);
    cp_proc_writer_profiler(w, ORIGIN + 20, true);
    cp_proc_writer_profiler(w, ORIGIN + 30, false);
    cp_proc_writer_mark(w, ORIGIN + 500, "exit");
}

/* The kernel, the launch, the range, the profiler window and the end all
 * move by the shift, in the JSON lines and in the rec form alike. */
static void expect_shifted(const cp_trace *t, int64_t shift)
{
    uint64_t at = (uint64_t)((int64_t)ORIGIN + shift);
    cr_assert_eq(t->nprocesses, 1);
    cr_expect_eq(t->processes[0].last_ns, at + 500);
    bool kernel = false, launch = false, range = false, profiler = false;
    for (size_t i = 0; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        const char *name = a->name ? a->name : "";
        if (a->kind == CP_ACT_KERNEL)
            kernel = a->start == at + 100 && a->end == at + 400;
        else if (a->kind == CP_ACT_RUNTIME)
            launch = a->start == at + 5 && a->end == at + 15;
        else if (a->kind == CP_ACT_RANGE && strcmp(name, "step") == 0)
            range = a->start == at + 50 && a->end == at + 450;
        else if (a->kind == CP_ACT_RANGE && strcmp(name, "cuProfilerStart") == 0)
            profiler = a->start == at + 20 && a->end == at + 30;
    }
    cr_expect(kernel && launch && range && profiler,
              "shift %lld: kernel %d, launch %d, range %d, profiler %d moved", (long long)shift,
              kernel, launch, range, profiler);
}

Test(host_shift, the_writer_moves_every_time_it_writes)
{
    const int64_t shifts[] = {3000000, -7000000, 0};
    for (size_t i = 0; i < 3; i++) {
        /* JSON lines: the origin moves, the offsets stay. */
        char *text = NULL;
        size_t size = 0;
        cp_proc_writer w;
        memset(&w, 0, sizeof w);
        w.out = open_memstream(&text, &size);
        cr_assert_not_null(w.out);
        w.origin = ORIGIN;
        w.shift_ns = shifts[i];
        cp_proc_writer_header(&w, "sim-host-b", 4242, 4200, "python3 train.py");
        write_shifted(&w);
        cr_assert_eq(fclose(w.out), 0);
        cp_trace t;
        cp_trace_init(&t);
        cr_assert_eq(cp_proc_parse("written", text, size, &t), 0, "%s", cp_last_error());
        expect_shifted(&t, shifts[i]);
        cp_trace_free(&t);
        free(text);

        /* The rec form: every absolute time moves. */
        char dir[] = "/tmp/cuproof-hosts-rec-XXXXXX", file[128];
        cr_assert_not_null(mkdtemp(dir));
        snprintf(file, sizeof file, "%s/sim-host-b.4242.proc.cprec", dir);
        memset(&w, 0, sizeof w);
        cr_assert_eq(cp_rec_writer_open(&w.rec, file), 0, "%s", cp_last_error());
        w.origin = ORIGIN;
        w.shift_ns = shifts[i];
        cp_proc_writer_header(&w, "sim-host-b", 4242, 4200, "python3 train.py");
        write_shifted(&w);
        cr_expect_null(w.rec, "the end mark closes the rec writer");
        cp_trace_init(&t);
        size_t nfiles = 0;
        cr_assert_eq(cp_proc_read_dir(dir, &t, &nfiles), 0, "%s", cp_last_error());
        cr_expect_eq(nfiles, 1);
        expect_shifted(&t, shifts[i]);
        cp_trace_free(&t);
        cr_expect_eq(remove(file), 0);
        cr_expect_eq(rmdir(dir), 0);
    }
}

/* The injection library in this process (no GPU here: it writes its
 * header and says why it cannot trace), its stderr into `err`. Returns
 * the one per-process file it wrote in `dir`, in `path`. */
static void remove_tree(const char *path)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    cr_expect_eq(system(cmd), 0);
}

static void inject(const char *dir, const char *shift, char *path, size_t len, char *err,
                   size_t err_len)
{
    setenv("CUPROOF_EXEC_DIR", dir, 1);
    setenv("RANK", "1", 1);
    setenv("WORLD_SIZE", "2", 1);
    setenv(CP_TEST_HOST_SHIFT_VAR, shift, 1);
    char log[256];
    snprintf(log, sizeof log, "%s/stderr.txt", dir);
    fflush(stderr);
    int saved = dup(2);
    cr_assert_geq(saved, 0);
    FILE *to = fopen(log, "w");
    cr_assert_not_null(to);
    cr_assert_geq(dup2(fileno(to), 2), 0);
    void *lib = dlopen(CUPROOF_INJECT, RTLD_NOW);
    cr_assert_not_null(lib, "%s", dlerror());
    int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
    cr_assert_not_null(init);
    cr_expect_eq(init(), 1);
    fflush(stderr);
    cr_assert_geq(dup2(saved, 2), 0);
    close(saved);
    fclose(to);
    FILE *f = fopen(log, "r");
    cr_assert_not_null(f);
    size_t n = fread(err, 1, err_len - 1, f);
    err[n] = '\0';
    fclose(f);
    char pattern[128];
    snprintf(pattern, sizeof pattern, "%s/*.proc.jsonl", dir);
    glob_t g;
    cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "no file in %s", dir);
    cr_assert_eq(g.gl_pathc, 1, "one file per process");
    snprintf(path, len, "%s", g.gl_pathv[0]);
    globfree(&g);
}

/* Rank 1 with an entry: its file and its header name the simulated host,
 * and the library says on stderr what it simulates. */
Test(host_shift, the_library_writes_the_simulated_host)
{
    char dir[] = "/tmp/cuproof-hosts-inject-XXXXXX", path[256], err[1024];
    cr_assert_not_null(mkdtemp(dir));
    inject(dir, "0:sim-host-a:0,1:sim-host-b:-5000", path, sizeof path, err, sizeof err);
    const char *base = strrchr(path, '/') + 1;
    char want[64];
    snprintf(want, sizeof want, "sim-host-b.%d.proc.jsonl", (int)getpid());
    cr_expect_str_eq(base, want);
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(path, &t), 0, "%s", cp_last_error());
    cr_assert_eq(t.nprocesses, 1);
    cr_expect_str_eq(t.processes[0].host, "sim-host-b");
    cr_expect_eq(cp_process_rank(&t.processes[0]), 1);
    cp_trace_free(&t);
    cr_expect(strstr(err, "test-only CUPROOF_TEST_HOST_SHIFT: rank 1 writes host sim-host-b, "
                          "clock -5000 ns") != NULL,
              "%s", err);
    remove_tree(dir);
}

/* A malformed setting: said, with the variable and the position, and the
 * process traced as itself, under its own host name. */
Test(host_shift, a_malformed_setting_leaves_the_process_as_it_is)
{
    char dir[] = "/tmp/cuproof-hosts-inject-XXXXXX", path[256], err[1024], host[64] = "";
    cr_assert_not_null(mkdtemp(dir));
    inject(dir, "1:sim-host-b:3ms", path, sizeof path, err, sizeof err);
    cr_assert_eq(gethostname(host, sizeof host - 1), 0);
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(path, &t), 0, "%s", cp_last_error());
    cr_assert_eq(t.nprocesses, 1);
    cr_expect_str_eq(t.processes[0].host, host);
    cp_trace_free(&t);
    cr_expect(strstr(err,
                     "CUPROOF_TEST_HOST_SHIFT=\"1:sim-host-b:3ms\": at character 15: "
                     "expected ',' or the end after the offset; no host shift is applied") != NULL,
              "%s", err);
    remove_tree(dir);
}

/* ---- Synthetic ranks on two hosts ---- */

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/cuproof-hosts-test-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    remove_tree(dir);
}

TestSuite(hosts, .init = make_dir, .fini = remove_dir);

/* Four ranks, two to a host, 100k records each (about 75 ms of run, 18
 * collectives 4 ms apart), written into a fresh subdirectory of `dir`. */
static void write_job(const char *sub, int64_t offset, int no_collectives_host, int delay_rank,
                      uint64_t delay_ns, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", dir, sub);
    cr_assert_eq(mkdir(path, 0700), 0);
    gen_ranks_opts o = GEN_RANKS_OPTS_INIT;
    o.records = 100000;
    o.ranks = 4;
    o.hosts = 2;
    o.clock_offset_ns = offset;
    o.no_collectives_host = no_collectives_host;
    o.delay_rank = delay_rank;
    o.delay_ns = delay_ns;
    cr_assert_eq(gen_ranks_write(path, &o), 0, "%s", cp_last_error());
}

/* ---- What the ranks' table must say, however it was built ---- */

/* Host 1's clock `offset` ahead: the offset applied to it is the clock's,
 * negated, within 50 us; the residual is the planted jitter's (a few us,
 * never 0); once aligned, each collective's ends coincide again. */
static void expect_offset(const cp_ranks *r, int64_t offset, const char *how)
{
    cr_expect_eq(r->nrows, 4, "%s", how);
    cr_assert_eq(r->nhosts, 2, "%s", how);
    cr_expect_str_eq(r->hosts[0].name, "sim-host-0", "%s", how);
    cr_expect_str_eq(r->hosts[1].name, "sim-host-1", "%s", how);
    cr_expect(r->hosts[0].aligned, "%s", how);
    cr_expect_eq(r->hosts[0].offset_ns, 0, "%s", how);
    cr_expect(r->hosts[1].aligned, "%s: clock %lld ahead", how, (long long)offset);
    cr_expect(r->all_aligned, "%s", how);
    int64_t err = r->hosts[1].offset_ns + offset;
    cr_expect(llabs(err) <= 50000, "%s: offset %lld for a clock %lld ahead", how,
              (long long)r->hosts[1].offset_ns, (long long)offset);
    cr_expect_geq(r->hosts[1].shared, 15, "%s: %u shared", how, r->hosts[1].shared);
    cr_expect_gt(r->hosts[1].residual_ns, 0, "%s", how);
    cr_expect_lt(r->hosts[1].residual_ns, 50000, "%s: residual %llu", how,
                 (unsigned long long)r->hosts[1].residual_ns);
    cr_expect_not(r->straggler, "%s: no rank was delayed", how);
    cr_expect_lt(r->median_end_spread_ns, 50000, "%s: end spread %llu", how,
                 (unsigned long long)r->median_end_spread_ns);
}

/* Host 1 ran no collective: "not aligned", never an offset that would
 * look like a measurement. */
static void expect_not_aligned(const cp_ranks *r, const char *how)
{
    cr_assert_eq(r->nhosts, 2, "%s", how);
    cr_expect(r->hosts[0].aligned, "%s", how);
    cr_expect_not(r->hosts[1].aligned, "%s", how);
    cr_expect_eq(r->hosts[1].shared, 0, "%s", how);
    cr_expect_not(r->all_aligned, "%s", how);
}

/* Rank 3 (on host 1) `delay` late at every collective: the straggler,
 * last at each, its lags the delay give or take the 50 us of chance in
 * every rank's arrival; the others never last. */
static void expect_straggler(const cp_ranks *r, uint64_t delay, const char *how)
{
    cr_expect(r->all_aligned, "%s", how);
    cr_expect(r->straggler, "%s", how);
    cr_expect_eq(r->straggler_rank, 3, "%s", how);
    cr_expect(llabs((long long)r->straggler_median_lag_ns - (long long)delay) <=
                  GEN_RANKS_ARRIVAL_SPREAD_NS,
              "%s: median lag %llu", how, (unsigned long long)r->straggler_median_lag_ns);
    cr_expect(llabs((long long)r->straggler_mean_lag_ns - (long long)delay) <=
                  GEN_RANKS_ARRIVAL_SPREAD_NS,
              "%s: mean lag %llu", how, (unsigned long long)r->straggler_mean_lag_ns);
    cr_expect_leq(r->straggler_max_lag_ns, delay + GEN_RANKS_ARRIVAL_SPREAD_NS, "%s", how);
    const cp_rank_row *late = cp_ranks_row(r, 3);
    cr_assert_not_null(late, "%s", how);
    cr_expect_geq(late->collectives, 15, "%s", how);
    cr_expect_eq(late->arrived_last, late->collectives, "%s: last at %u of %u", how,
                 late->arrived_last, late->collectives);
    for (int32_t k = 0; k < 3; k++) {
        const cp_rank_row *row = cp_ranks_row(r, k);
        cr_assert_not_null(row, "%s", how);
        cr_expect_eq(row->arrived_last, 0, "%s: rank %d", how, (int)k);
    }
}

static const int64_t offsets[] = {3000000, -7000000, 0};
#define DELAY_NS 2000000ull

/* ---- The ranks' builder alone (what cp_program_analyse calls) ---- */

typedef struct feed {
    const cp_trace *meta;
    cp_ranks_builder *b;
} feed;

static int feed_record(void *ctx, const cp_activity *a)
{
    feed *f = ctx;
    return cp_ranks_builder_add(f->b, f->meta, a);
}

/* The ranks' table of the files in `path`, on each host's own clock. */
static cp_ranks *built(const char *path)
{
    cp_trace meta;
    cp_trace_init(&meta);
    feed f = {.meta = &meta};
    cr_assert_eq(cp_ranks_builder_new(&f.b, NULL), 0);
    size_t nfiles = 0;
    cr_assert_eq(cp_proc_stream_dir(path, &meta, &nfiles, feed_record, &f), 0, "%s",
                 cp_last_error());
    cr_assert_eq(nfiles, 4);
    cp_ranks *r = NULL;
    cr_assert_eq(cp_ranks_builder_finish(f.b, &meta, &r), 0, "%s", cp_last_error());
    cp_ranks_builder_free(f.b);
    cp_trace_free(&meta);
    cr_assert_not_null(r);
    return r;
}

/* The generator's files carry what the alignment needs, with no analysis
 * of the program around it: the offsets come back, a host without
 * collectives is not aligned, the planted straggler is found. */
Test(hosts, the_ranks_builder_aligns_the_generated_hosts)
{
    char path[128], sub[16];
    for (size_t i = 0; i < 3; i++) {
        snprintf(sub, sizeof sub, "b%zu", i);
        write_job(sub, offsets[i], -1, -1, 0, path, sizeof path);
        cp_ranks *r = built(path);
        expect_offset(r, offsets[i], sub);
        cp_ranks_free(r);
    }
    write_job("bnone", 3000000, 1, -1, 0, path, sizeof path);
    cp_ranks *r = built(path);
    expect_not_aligned(r, "bnone");
    cp_ranks_free(r);
    for (size_t i = 0; i < 2; i++) {
        snprintf(sub, sizeof sub, "bs%zu", i);
        write_job(sub, offsets[2 * i], -1, 3, DELAY_NS, path, sizeof path);
        r = built(path);
        expect_straggler(r, DELAY_NS, sub);
        cp_ranks_free(r);
    }
}

/* ---- Through cp_program_analyse (needs v->ranks filled and the hosts'
 * records shifted before the analysis: the lead's program.c change) ---- */

typedef struct analysed {
    cp_variant_result v;
    cp_program_info info;
} analysed;

/* keep: records held at most (UINT64_MAX holds them all; a small number
 * streams them, into `dir`). */
static void analyse(const char *path, uint64_t keep, analysed *a)
{
    memset(a, 0, sizeof *a);
    cp_trace_init(&a->v.trace);
    cp_program_opts o = {.keep_records = keep, .out_dir = dir, .name = "hosts"};
    cr_assert_eq(cp_program_analyse(path, NULL, &o, &a->v, NULL, &a->info), 0, "%s",
                 cp_last_error());
    cr_assert_eq(a->info.nfiles, 4);
    cr_assert_not_null(a->v.ranks, "a program of ranks has its ranks' table");
}

static void analysed_free(analysed *a)
{
    cp_ranks_free(a->v.ranks);
    a->v.ranks = NULL;
    cp_trace_free(&a->v.trace);
    cp_metrics_free(&a->v.metrics);
    cp_summary_free(a->v.summary);
    free(a->v.summary);
}

/* Host 1's clock 3 ms ahead, 7 ms behind, or with host 0's, with the
 * records held and streamed alike. */
Test(hosts, each_host_offset_is_recovered_within_50_us)
{
    for (size_t i = 0; i < 3; i++) {
        char path[128], sub[16];
        snprintf(sub, sizeof sub, "p%zu", i);
        write_job(sub, offsets[i], -1, -1, 0, path, sizeof path);
        const uint64_t keeps[] = {UINT64_MAX, 1000};
        for (size_t k = 0; k < 2; k++) {
            analysed a;
            analyse(path, keeps[k], &a);
            char how[64];
            snprintf(how, sizeof how, "%s, %s", sub, k ? "streamed" : "held");
            expect_offset(a.v.ranks, offsets[i], how);
            analysed_free(&a);
        }
    }
}

Test(hosts, a_host_without_collectives_is_not_aligned)
{
    char path[128];
    write_job("none", 3000000, 1, -1, 0, path, sizeof path);
    analysed a;
    analyse(path, UINT64_MAX, &a);
    expect_not_aligned(a.v.ranks, "none");
    analysed_free(&a);
}

/* On clocks that agree and on a host 3 ms ahead alike, since the
 * arrivals are compared once aligned. */
Test(hosts, the_planted_straggler_is_found_with_its_lag)
{
    for (size_t i = 0; i < 2; i++) {
        char path[128], sub[16];
        snprintf(sub, sizeof sub, "s%zu", i);
        write_job(sub, offsets[2 * i], -1, 3, DELAY_NS, path, sizeof path);
        analysed a;
        analyse(path, UINT64_MAX, &a);
        expect_straggler(a.v.ranks, DELAY_NS, sub);
        analysed_free(&a);
    }
}

/* Two hosts simulated on two H200s (ci/device-hosts.sh, 2026-11-25): the
 * DDP program under torchrun with rank 1 writing host "sim-host-b" and a
 * clock 3 ms ahead (CUPROOF_TEST_HOST_SHIFT), exported as one rec file.
 * Host 0 is sim-host-b (its file name sorts first), so the real host's
 * clock is 3 ms behind it: +3 ms is applied to "vm", recovered there
 * within 50 us (3.019 ms, residual 1.2 us), and every rank's overlap is
 * then measured on its own devices, 0 and 1 of two hosts. */
Test(hosts, the_recorded_two_host_simulation_is_aligned)
{
    const char *path = CUPROOF_FIXTURES "/exec-h200x2-hosts/two-hosts.cprec";
    cp_expect_list list = {0};
    cr_assert_eq(cp_expect_parse("every rank: range(step): comm_compute_overlap_ratio > 0.15\n"
                                 "devices == 2\n",
                                 1, &list),
                 0, "%s", cp_last_error());
    cp_program_stream ps;
    cr_assert_eq(cp_program_stream_judge(&path, 1, true, &list, NULL, &ps), 0, "%s",
                 cp_last_error());
    const cp_ranks *r = ps.ranks;
    cr_assert_not_null(r);
    cr_assert_eq(r->nhosts, 2);
    cr_expect_str_eq(r->hosts[0].name, "sim-host-b");
    cr_expect_str_eq(r->hosts[1].name, "vm");
    cr_expect(r->all_aligned);
    cr_expect(llabs(r->hosts[1].offset_ns - 3000000) <= 50000, "offset %lld",
              (long long)r->hosts[1].offset_ns);
    cr_expect_lt(r->hosts[1].residual_ns, 50000);
    cr_expect_geq(r->collectives, 70, "%u collectives", r->collectives);
    /* Rank 0 (on "vm", host 1) has its GPU numbered from host 1's stride. */
    const cp_rank_row *r0 = cp_ranks_row(r, 0);
    cr_assert_not_null(r0);
    cr_expect_eq(r0->devices[0], CP_HOST_DEVICE_STRIDE + 0);
    for (size_t k = 0; k < list.n; k++) {
        cp_program_check v;
        cr_assert_eq(cp_program_stream_verdict(&ps, &list, k, &v), 0);
        cr_expect(v.ok && !v.undecided, "%s: %s", list.items[k].text, v.measured);
    }
    cp_program_stream_free(&ps);
    cp_expect_list_free(&list);
}

/* A rank with more devices than its row lists (10 against
 * CP_RANK_MAX_DEVICES) counts each once however many records each has,
 * and lists the first it saw; two ranks on two hosts keep apart. */
Test(hosts, a_rank_counts_every_device_once)
{
    cp_trace meta;
    cp_trace_init(&meta);
    for (int k = 0; k < 2; k++) {
        cp_process p = {.pid = 100 + (uint32_t)k, .rank = k, .local_rank = 0, .world_size = 2};
        snprintf(p.host, sizeof p.host, "%s", k ? "node-b" : "node-a");
        snprintf(p.rank_var, sizeof p.rank_var, "RANK");
        cr_assert_geq(cp_trace_add_process(&meta, &p), 0);
    }
    cp_ranks_builder *b;
    cr_assert_eq(cp_ranks_builder_new(&b, NULL), 0);
    for (int rec = 0; rec < 100; rec++)
        for (uint32_t proc = 0; proc < 2; proc++) {
            cp_activity a = {.kind = CP_ACT_KERNEL,
                             .start = 1000 + 10 * (uint64_t)rec,
                             .end = 1005 + 10 * (uint64_t)rec,
                             .device = proc == 0 ? (uint32_t)rec % 10 : CP_HOST_DEVICE_STRIDE,
                             .stream = 7,
                             .process = proc,
                             .name = "k"};
            cr_assert_eq(cp_ranks_builder_add(b, &meta, &a), 0, "%s", cp_last_error());
        }
    cp_ranks *r = NULL;
    cr_assert_eq(cp_ranks_builder_finish(b, &meta, &r), 0, "%s", cp_last_error());
    cp_ranks_builder_free(b);
    cr_assert_not_null(r);
    cr_assert_eq(r->nrows, 2);
    cr_expect_eq(r->rows[0].ndevices, 10);
    for (uint32_t d = 0; d < CP_RANK_MAX_DEVICES; d++)
        cr_expect_eq(r->rows[0].devices[d], d);
    cr_expect_eq(r->rows[1].ndevices, 1);
    cr_expect_eq(r->rows[1].host, 1);
    cr_expect_str_eq(r->hosts[1].name, "node-b");
    cp_ranks_free(r);
    cp_trace_free(&meta);
}
