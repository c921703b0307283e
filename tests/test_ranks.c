/*
 * Ranks (docs/distributed.md): the launcher's variables read into a
 * process (collect/rank.c), carried through both file forms and both
 * readers, the scope rank(N) and the aggregate 'every rank' in the
 * whole-trace and the streaming evaluation (held equal), and the trust
 * rule's verdicts on files of another run, a rank claimed twice and a
 * truncated rank. Each check is shown failing on a planted wrong value.
 */
#include <cuproof/error.h>
#include <cuproof/exit.h>
#include <cuproof/expect.h>
#include <cuproof/internal/proc.h>
#include <cuproof/internal/rec.h>
#include <cuproof/trust.h>
#include "collect/proc_writer.h"
#include "collect/rank.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the launcher's environment ---- */

static cp_process from_env(char *const *env)
{
    cp_process p;
    memset(&p, 0x5a, sizeof p); /* every field must be set, whatever it held */
    cp_rank_from_env(env, &p);
    return p;
}

Test(env, the_first_variable_found_gives_each_figure)
{
    char *torch[] = {"PATH=/bin", "SLURM_PROCID=3", "RANK=1", "LOCAL_RANK=1", "WORLD_SIZE=4",
                     "SLURM_NTASKS=8", "CUPROOF_EXEC_RUN=gpu-1.42.1795", NULL};
    cp_process p = from_env(torch);
    cr_expect_eq(p.rank, 1, "RANK comes before SLURM_PROCID");
    cr_expect_str_eq(p.rank_var, "RANK");
    cr_expect_eq(p.local_rank, 1);
    cr_expect_eq(p.world_size, 4, "WORLD_SIZE comes before SLURM_NTASKS");
    cr_expect_str_eq(p.rank_why, "");
    cr_expect_str_eq(p.run, "gpu-1.42.1795");
    cr_expect_eq(cp_process_rank(&p), 1);

    char *slurm[] = {"SLURM_PROCID=7", "SLURM_LOCALID=3", "SLURM_NTASKS=16", NULL};
    p = from_env(slurm);
    cr_expect_eq(p.rank, 7);
    cr_expect_str_eq(p.rank_var, "SLURM_PROCID");
    cr_expect_eq(p.local_rank, 3);
    cr_expect_eq(p.world_size, 16);
    cr_expect_str_eq(p.run, "");

    char *mpi[] = {"PMIX_RANK=2", "OMPI_COMM_WORLD_RANK=5", "MPI_LOCALRANKID=0", "PMI_SIZE=6",
                   NULL};
    p = from_env(mpi);
    cr_expect_eq(p.rank, 5);
    cr_expect_str_eq(p.rank_var, "OMPI_COMM_WORLD_RANK");
    cr_expect_eq(p.local_rank, 0);
    cr_expect_eq(p.world_size, 6);

    char *pmix[] = {"PMIX_RANK= 2 ", "RANKS=9", "XRANK=9", NULL};
    p = from_env(pmix);
    cr_expect_eq(p.rank, 2, "blanks around the value are taken; RANKS and XRANK are no RANK");
    cr_expect_str_eq(p.rank_var, "PMIX_RANK");

    p = from_env(NULL);
    cr_expect(p.rank == -1 && p.local_rank == -1 && p.world_size == -1);
    cr_expect_str_eq(p.rank_var, "");
    cr_expect_eq(cp_process_rank(&p), -1);
}

Test(env, a_malformed_variable_is_unknown_with_why)
{
    const char *bad[] = {"abc", "-1", "", "1x", "0x10", "2147483648", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char var[64];
        snprintf(var, sizeof var, "RANK=%s", bad[i]);
        char *env[] = {var, "SLURM_PROCID=2", NULL};
        cp_process p = from_env(env);
        cr_expect_eq(p.rank, -1, "RANK=%s", bad[i]);
        cr_expect_str_eq(p.rank_var, "", "RANK=%s", bad[i]);
        cr_expect_eq(cp_process_rank(&p), -1, "no fall-back to SLURM_PROCID for RANK=%s", bad[i]);
        cr_expect_not_null(strstr(p.rank_why, "RANK=\""), "RANK=%s: %s", bad[i], p.rank_why);
        cr_expect_not_null(strstr(p.rank_why, "is not a rank"), "%s", p.rank_why);
    }
    char *size0[] = {"RANK=0", "LOCAL_RANK=x", "WORLD_SIZE=0", NULL};
    cp_process p = from_env(size0);
    cr_expect_eq(p.rank, 0);
    cr_expect_eq(p.local_rank, -1);
    cr_expect_eq(p.world_size, -1);
    cr_expect_not_null(strstr(p.rank_why, "LOCAL_RANK=\"x\" is not a local rank"), "%s",
                       p.rank_why);
    cr_expect_not_null(strstr(p.rank_why, "WORLD_SIZE=\"0\" is not a world size"), "%s",
                       p.rank_why);
    char *beyond[] = {"RANK=5", "WORLD_SIZE=4", NULL};
    p = from_env(beyond);
    cr_expect_eq(p.rank, 5, "kept, and said");
    cr_expect_str_eq(p.rank_why, "rank 5 is not below the world size 4");
    /* A value longer than the message shows is cut, never overflows. */
    char longv[4096];
    memset(longv, '7', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    memcpy(longv, "RANK=", 5);
    char *huge[] = {longv, NULL};
    p = from_env(huge);
    cr_expect_eq(p.rank, -1);
    cr_expect_lt(strlen(p.rank_why), sizeof p.rank_why);
}

/* ---- both file forms ---- */

#define ORIGIN 1795454802201045396ull

static cp_process ranked(int32_t rank, const char *var, const char *run)
{
    cp_process p = {.rank = rank, .local_rank = rank % 2, .world_size = 4};
    snprintf(p.rank_var, sizeof p.rank_var, "%s", var);
    snprintf(p.run, sizeof p.run, "%s", run);
    snprintf(p.rank_why, sizeof p.rank_why, "%s", "LOCAL_RANK=\"x\" is not a local rank");
    return p;
}

static void expect_ranks(const cp_process *q, const cp_process *want)
{
    cr_expect_eq(q->rank, want->rank);
    cr_expect_eq(q->local_rank, want->local_rank);
    cr_expect_eq(q->world_size, want->world_size);
    cr_expect_str_eq(q->rank_var, want->rank_var);
    cr_expect_str_eq(q->rank_why, want->rank_why);
    cr_expect_str_eq(q->run, want->run);
}

Test(files, the_json_lines_header_carries_the_rank)
{
    cp_process who = ranked(3, "SLURM_PROCID", "gpu-1.4200.1795454802201045396");
    char *text = NULL;
    size_t size = 0;
    cp_proc_writer w = {.origin = ORIGIN, .who = &who};
    w.out = open_memstream(&text, &size);
    cr_assert_not_null(w.out);
    cp_proc_writer_header(&w, "gpu-1", 4242, 4200, "python3 train.py");
    cp_proc_writer_mark(&w, ORIGIN + 10, "exit");
    fclose(w.out);
    cr_expect_not_null(strstr(text, "\"rank\":3,\"local_rank\":1,\"world_size\":4"), "%s", text);
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_parse("written", text, size, &t), 0, "%s", cp_last_error());
    cr_assert_eq(t.nprocesses, 1);
    expect_ranks(&t.processes[0], &who);
    cr_expect_eq(cp_process_rank(&t.processes[0]), 3);
    cp_trace_free(&t);
    free(text);

    /* Without w.who every figure is unknown. */
    text = NULL;
    w = (cp_proc_writer){.origin = ORIGIN};
    w.out = open_memstream(&text, &size);
    cr_assert_not_null(w.out);
    cp_proc_writer_header(&w, "gpu-1", 4242, 4200, "x");
    fclose(w.out);
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_parse("written", text, size, &t), 0, "%s", cp_last_error());
    cr_expect_eq(t.processes[0].rank, -1);
    cr_expect_eq(t.processes[0].world_size, -1);
    cr_expect_eq(cp_process_rank(&t.processes[0]), -1);
    cp_trace_free(&t);
    free(text);
}

static int parse_header(const char *extra, cp_trace *t)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"schema\":\"cuproof.proc/1\",\"host\":\"h\",\"pid\":1,\"ppid\":0,\"command\":\"c\","
             "\"origin_ns\":\"100\"%s}\n",
             extra);
    cp_trace_init(t);
    return cp_proc_parse("hand", text, strlen(text), t);
}

Test(files, old_headers_read_as_no_rank_and_bad_fields_are_errors)
{
    cp_trace t;
    cr_assert_eq(parse_header("", &t), 0, "%s", cp_last_error());
    cr_expect_eq(t.processes[0].rank, -1, "a writer before ranks");
    cr_expect_eq(t.processes[0].local_rank, -1);
    cr_expect_str_eq(t.processes[0].run, "");
    cp_trace_free(&t);
    cr_assert_eq(parse_header(",\"rank\":2", &t), 0, "%s", cp_last_error());
    cr_expect_eq(cp_process_rank(&t.processes[0]), -1, "a rank without its variable is none");
    cp_trace_free(&t);
    const char *bad[] = {",\"rank\":\"2\"", ",\"rank\":-2", ",\"world_size\":1.5",
                         ",\"rank\":2147483648", ",\"run\":7", ",\"rank_var\":null"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(parse_header(bad[i], &t), CP_EPARSE, "%s", bad[i]);
        cr_expect_not_null(strstr(cp_last_error(), "hand:1:"), "%s", cp_last_error());
        cp_trace_free(&t);
    }
    /* The recorded fixtures predate ranks. */
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(CUPROOF_FIXTURES "/exec/program/gpu-1.4242.proc.jsonl", &t), 0,
                 "%s", cp_last_error());
    cr_expect_eq(cp_process_rank(&t.processes[0]), -1);
    cp_trace_free(&t);
}

Test(files, the_rec_form_carries_the_rank_and_minor_1_reads_as_none)
{
    char dir[] = "/tmp/cuproof-ranks-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char file[128];
    snprintf(file, sizeof file, "%s/gpu-1.4242.proc.cprec", dir);
    cp_process who = ranked(2, "OMPI_COMM_WORLD_RANK", "gpu-1.4200.1795454802201045396");
    cp_proc_writer w = {.origin = ORIGIN, .who = &who};
    cr_assert_eq(cp_rec_writer_open(&w.rec, file), 0, "%s", cp_last_error());
    cp_proc_writer_header(&w, "gpu-1", 4242, 4200, "python3 train.py");
    cp_proc_writer_mark(&w, ORIGIN + 10, "exit");
    cr_expect_null(w.rec, "the end mark closes it");
    FILE *f = fopen(file, "rb");
    cr_assert_not_null(f);
    char magic[8];
    cr_assert_eq(fread(magic, 1, 8, f), 8);
    fclose(f);
    cr_expect_geq(magic[7], 2, "minor version 2 (the ranks) or later");
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(file, &t), 0, "%s", cp_last_error());
    cr_assert_eq(t.nprocesses, 1);
    expect_ranks(&t.processes[0], &who);
    cr_expect(t.processes[0].ended);
    cp_trace_free(&t);
    remove(file);
    rmdir(dir);

    /* A file of minor 1, recorded before ranks. */
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(CUPROOF_FIXTURES "/exec-h100-threads/nvtx-ranges.proc.cprec", &t), 0,
                 "%s", cp_last_error());
    cr_assert_geq(t.nprocesses, 1);
    cr_expect_eq(t.processes[0].rank, -1);
    cr_expect_eq(t.processes[0].world_size, -1);
    cr_expect_str_eq(t.processes[0].run, "");
    cp_trace_free(&t);
}

/* ---- scopes and 'every rank' ---- */

static void add(cp_trace *t, cp_act_kind k, uint64_t s, uint64_t e, uint32_t process,
                const char *name)
{
    cp_activity a = {.kind = k, .start = s, .end = e, .device = process, .context = 1,
                     .stream = 7, .process = process, .name = name};
    cr_assert_eq(cp_trace_add(t, &a), 0);
}

static void add_ranked(cp_trace *t, uint32_t pid, int32_t rank)
{
    cp_process p = {.pid = pid, .ended = true, .rank = rank, .local_rank = -1, .world_size = 3};
    if (rank >= 0)
        snprintf(p.rank_var, sizeof p.rank_var, "RANK");
    cr_assert_geq(cp_trace_add_process(t, &p), 0);
}

/* Ranks 0, 1 and 2 (pids 100..102) and a process of no rank (103), each
 * on a device of its own. Rank 0: one kernel inside its step [0, 1000).
 * Rank 1: its step is [2000, 3000); one kernel inside, one at [500, 900)
 * inside rank 0's step but not its own. Rank 2: three kernels in its
 * step [0, 3000). The process of no rank: one kernel. */
static void ranked_trace(cp_trace *t)
{
    cp_trace_init(t);
    add_ranked(t, 100, 0);
    add_ranked(t, 101, 1);
    add_ranked(t, 102, 2);
    add_ranked(t, 103, -1);
    add(t, CP_ACT_RANGE, 0, 1000, 0, "step");
    add(t, CP_ACT_RANGE, 2000, 3000, 1, "step");
    add(t, CP_ACT_RANGE, 0, 3000, 2, "step");
    add(t, CP_ACT_KERNEL, 100, 600, 0, "k");
    add(t, CP_ACT_KERNEL, 2100, 2400, 1, "k");
    add(t, CP_ACT_KERNEL, 500, 900, 1, "k");
    add(t, CP_ACT_KERNEL, 0, 100, 2, "k");
    add(t, CP_ACT_KERNEL, 200, 300, 2, "k");
    add(t, CP_ACT_KERNEL, 400, 500, 2, "k");
    add(t, CP_ACT_KERNEL, 0, 50, 3, "k");
}

/* Evaluates `line` on `t` both ways, expects both to agree, and returns
 * the verdict with its measured text. */
static bool judge(const cp_trace *t, const char *line, char *measured, size_t len)
{
    cp_expect_list list = {0};
    cr_assert_eq(cp_expect_parse(line, 1, &list), 0, "%s: %s", line, cp_last_error());
    cr_assert_eq(cp_expect_validate_program(&list), 0, "%s: %s", line, cp_last_error());
    const cp_expectation *e = &list.items[0];
    bool ok = false, streamed_ok = true;
    cr_assert_eq(cp_expect_eval_trace(e, t, NULL, &ok, measured, len), 0, "%s", cp_last_error());

    cp_metrics whole;
    cr_assert_eq(cp_timeline_analyse(t, NULL, &whole), 0);
    cp_expect_stream *x = NULL;
    cr_assert_eq(cp_expect_stream_new(&x, e, NULL), 0, "%s", cp_last_error());
    for (size_t i = 0; i < t->n; i++)
        cr_assert_eq(cp_expect_stream_learn(x, &t->items[i]), 0);
    cr_assert_eq(cp_expect_stream_ready(x, t), 0, "%s", cp_last_error());
    for (size_t i = 0; i < t->n; i++)
        cr_assert_eq(cp_expect_stream_add(x, &t->items[i]), 0);
    char streamed[512];
    cr_assert_eq(cp_expect_stream_finish(x, &whole, &streamed_ok, streamed, sizeof streamed), 0);
    cr_expect_eq(streamed_ok, ok, "%s: streamed and whole differ", line);
    cr_expect_str_eq(streamed, measured, "%s", line);
    cp_expect_stream_free(x);
    cp_metrics_free(&whole);
    cp_expect_list_free(&list);
    return ok;
}

Test(scope, rank_keeps_its_processes_and_its_own_ranges)
{
    cp_trace t;
    ranked_trace(&t);
    char m[512];
    cr_expect(judge(&t, "rank(1): kernels == 2", m, sizeof m), "%s", m);
    cr_expect_not(judge(&t, "rank(1): kernels == 3", m, sizeof m), "planted: %s", m);
    cr_expect_str_eq(m, "2 kernels");
    cr_expect(judge(&t, "rank(2): kernels == 3", m, sizeof m), "%s", m);
    /* Its own step alone: the kernel inside rank 0's step is not rank 1's. */
    cr_expect(judge(&t, "rank(1) range(step): kernels == 1", m, sizeof m), "%s", m);
    cr_expect_not(judge(&t, "rank(1) range(step): kernels == 2", m, sizeof m), "%s", m);
    cr_expect(judge(&t, "rank(1) range(step): kernel_busy_ns == 300", m, sizeof m), "%s", m);
    cr_expect(judge(&t, "range(step): kernels == 7", m, sizeof m), "unscoped by rank: %s", m);
    cr_expect(judge(&t, "rank(0) device(0): kernels == 1", m, sizeof m), "%s", m);
    cr_expect(judge(&t, "rank(2) process(102): kernels == 3", m, sizeof m), "%s", m);
    /* device(N) of no rank is fed on the first pass (one_pass), with the
     * same answers as the whole trace's scope. */
    cr_expect(judge(&t, "device(2): kernels == 3", m, sizeof m), "%s", m);
    cr_expect(judge(&t, "device(2): kernel_busy_ns == 300", m, sizeof m), "%s", m);
    cr_expect_not(judge(&t, "device(2): kernels == 4", m, sizeof m), "planted: %s", m);
    cr_expect_not(judge(&t, "device(9): kernels >= 0", m, sizeof m));
    cr_expect_str_eq(m, "no device 9 in the trace");

    /* Nothing passes vacuously. */
    cr_expect_not(judge(&t, "rank(5): kernels >= 0", m, sizeof m));
    cr_expect_str_eq(m, "no rank 5 in the trace (ranks: 0, 1, 2)");
    cr_expect_not(judge(&t, "rank(0) device(1): kernels >= 0", m, sizeof m));
    cr_expect_str_eq(m, "no device 1 in the trace of rank 0");
    cr_expect_not(judge(&t, "rank(0) process(101): kernels >= 0", m, sizeof m));
    cr_expect_str_eq(m, "no process 101 in rank 0");
    cr_expect_not(judge(&t, "rank(0) range(other): kernels >= 0", m, sizeof m));
    cr_expect_str_eq(m, "no range named 'other' in the trace of rank 0");
    cp_trace_free(&t);

    /* A step only another rank has. */
    ranked_trace(&t);
    add(&t, CP_ACT_RANGE, 0, 10, 2, "warmup");
    cr_expect_not(judge(&t, "rank(0) range(warmup): kernels >= 0", m, sizeof m));
    cr_expect_str_eq(m, "no range named 'warmup' in the trace of rank 0");
    cp_trace_free(&t);
}

Test(scope, every_rank_names_the_worst_rank)
{
    cp_trace t;
    ranked_trace(&t);
    char m[512];
    cr_expect(judge(&t, "every rank: kernels >= 1", m, sizeof m), "%s", m);
    cr_expect_str_eq(m, "worst rank 0: 1 kernel; ranks 0..2: 1, 2, 3");
    cr_expect_not(judge(&t, "every rank: kernels >= 2", m, sizeof m), "planted: %s", m);
    cr_expect_str_eq(m, "worst rank 0: 1 kernel; ranks 0..2: 1, 2, 3");
    cr_expect_not(judge(&t, "every rank: kernels < 3", m, sizeof m));
    cr_expect_str_eq(m, "worst rank 2: 3 kernels; ranks 0..2: 1, 2, 3");
    cr_expect_not(judge(&t, "every rank: range(step): kernels == 1", m, sizeof m));
    cr_expect_str_eq(m, "worst rank 2: 3 kernels; ranks 0..2: 1, 1, 3");
    cr_expect(judge(&t, "every rank: range(step): kernels <= 3", m, sizeof m), "%s", m);
    /* A rank without the range fails, and is the worst. */
    add(&t, CP_ACT_RANGE, 0, 10, 2, "warmup");
    add(&t, CP_ACT_RANGE, 100, 110, 0, "warmup");
    cr_expect_not(judge(&t, "every rank: range(warmup): kernels >= 0", m, sizeof m));
    cr_expect_str_eq(m, "worst rank 1: no range named 'warmup' in the trace of rank 1; ranks "
                        "0..2: 1, none, 1");
    /* With none measured anywhere, the first rank is the worst. */
    cr_expect_not(judge(&t, "every rank: range(nowhere): kernels >= 0", m, sizeof m));
    cr_expect_str_eq(m, "worst rank 0: no range named 'nowhere' in the trace of rank 0; ranks "
                        "0..2: none, none, none");
    cp_trace_free(&t);

    /* Ranks that are not contiguous are named one by one. */
    cp_trace_init(&t);
    add_ranked(&t, 100, 0);
    add_ranked(&t, 101, 4);
    add(&t, CP_ACT_KERNEL, 0, 10, 0, "k");
    add(&t, CP_ACT_KERNEL, 0, 30, 1, "k");
    cr_expect_not(judge(&t, "every rank: kernel_busy_ns < 20", m, sizeof m));
    cr_expect_str_eq(m, "worst rank 4: 30 ns; ranks 0: 10, 4: 30");
    cp_trace_free(&t);

    /* No rank recorded: it fails saying so. */
    cp_trace_init(&t);
    add_ranked(&t, 100, -1);
    add(&t, CP_ACT_KERNEL, 0, 10, 0, "k");
    cr_expect_not(judge(&t, "every rank: kernels >= 0", m, sizeof m));
    cr_expect_not_null(strstr(m, "no rank recorded in the trace"), "%s", m);
    cr_expect_not(judge(&t, "rank(0): kernels >= 0", m, sizeof m));
    cr_expect_str_eq(m, "no rank 0 in the trace (ranks: none)");
    cp_trace_free(&t);
}

/* ---- the grammar ---- */

static int parse_error(const char *line, char *msg, size_t len)
{
    cp_expect_list list = {0};
    int rc = cp_expect_parse(line, 1, &list);
    snprintf(msg, len, "%s", rc < 0 ? cp_last_error() : "");
    cp_expect_list_free(&list);
    return rc;
}

Test(grammar, rank_and_every_rank_parse)
{
    cp_expect_list list = {0};
    cr_assert_eq(cp_expect_parse("rank(1) range(step): kernels > 0\n"
                                 "every rank: range(step): kernels > 0 # all\n"
                                 "rank( 12 ): finding cuda_memcpy_async\n"
                                 "every rank: span_ns < 5\n"
                                 "rank: kernels > 0\n",
                                 1, &list),
                 0, "%s", cp_last_error());
    cr_assert_eq(list.n, 5);
    const cp_expectation *e = list.items;
    cr_expect(e[0].has_rank && e[0].rank == 1 && !e[0].every_rank);
    cr_expect_str_eq(e[0].scope, "range");
    cr_expect_str_eq(e[0].scope_arg, "step");
    cr_expect_eq(e[0].rank_column, 1);
    cr_expect_eq(e[0].scope_column, 9);
    cr_expect_str_eq(e[0].text, "rank(1) range(step): kernels > 0");
    cr_expect(e[1].every_rank && !e[1].has_rank);
    cr_expect_str_eq(e[1].scope, "range");
    cr_expect_eq(e[1].name_column, 26);
    cr_expect(e[2].has_rank && e[2].rank == 12 && e[2].scope[0] == '\0');
    cr_expect_eq(e[2].kind, CP_EXPECT_FINDING);
    cr_expect(e[3].every_rank && e[3].scope[0] == '\0');
    cr_expect(!e[4].has_rank && !e[4].every_rank, "a variant called rank");
    cr_expect_str_eq(e[4].scope, "rank");
    /* --range keeps what a rank scope says. */
    cr_assert_eq(cp_expect_scope_range(&list, "fwd"), 0);
    cr_expect_str_eq(list.items[2].text, "rank( 12 ): finding cuda_memcpy_async");
    cr_expect_null(list.items[3].scope_arg);
    /* A case refuses both; a traced program takes them. */
    const char *variants[] = {"rank"};
    cp_expect_list one = {.items = &list.items[0], .n = 1, .cap = 1};
    cr_expect_eq(cp_expect_validate(&one, variants, 1), CP_EINVAL);
    cr_expect_not_null(strstr(cp_last_error(), "line 1, column 1: rank(N) is for traced"), "%s",
                       cp_last_error());
    one.items = &list.items[1];
    cr_expect_eq(cp_expect_validate(&one, variants, 1), CP_EINVAL);
    cr_expect_not_null(strstr(cp_last_error(), "'every rank' is for traced"), "%s",
                       cp_last_error());
    one.items = &list.items[0];
    cr_expect_eq(cp_expect_validate_program(&one), 0, "%s", cp_last_error());
    cp_expect_list_free(&list);
}

Test(grammar, errors_name_line_and_column)
{
    char msg[512];
    cr_expect_eq(parse_error("rank(x): kernels > 0", msg, sizeof msg), CP_EPARSE);
    cr_expect_str_eq(msg, "line 1, column 6: the rank in rank(N) must be a decimal integer from "
                          "0 to 2147483647, not 'x'");
    cr_expect_eq(parse_error("rank(-1): kernels > 0", msg, sizeof msg), CP_EPARSE);
    cr_expect_not_null(strstr(msg, "column 6"), "%s", msg);
    cr_expect_eq(parse_error("rank(2147483648): kernels > 0", msg, sizeof msg), CP_EPARSE);
    cr_expect_eq(parse_error("rank(1 kernels > 0", msg, sizeof msg), CP_EPARSE);
    cr_expect_str_eq(msg, "line 1, column 8: expected ')' after rank(N, found 'kernels'");
    cr_expect_eq(parse_error("every rank: rank(1): kernels > 0", msg, sizeof msg), CP_EPARSE);
    cr_expect_str_eq(msg, "line 1, column 13: 'every rank' already names the ranks: rank(N) "
                          "cannot follow it");
    cr_expect_eq(parse_error("every rank kernels > 0", msg, sizeof msg), CP_EPARSE);
    cr_expect_str_eq(msg, "line 1, column 12: expected ':' after 'every rank', found 'kernels'");
    cr_expect_eq(parse_error("rank(1) step: kernels > 0", msg, sizeof msg), CP_EPARSE);
    cr_expect_not_null(strstr(msg, "column 9: expected ':' or a scope such as range(NAME)"), "%s",
                       msg);
    cr_expect_eq(parse_error("rank(1): range(step): kernels > 0", msg, sizeof msg), CP_EPARSE);
    cr_expect_not_null(strstr(msg, "column 10: a scope combined with rank(N) stands before"),
                       "%s", msg);
    /* Validation names the second scope's column. */
    cp_expect_list list = {0};
    cr_assert_eq(cp_expect_parse("\n  rank(1) range2(x): kernels > 0", 1, &list), 0);
    cr_expect_eq(cp_expect_validate_program(&list), CP_EINVAL);
    cr_expect_not_null(strstr(cp_last_error(), "line 2, column 11: unknown scope 'range2(x)'"),
                       "%s", cp_last_error());
    cp_expect_list_free(&list);
}

/* ---- the trust rule ---- */

static cp_trust trust_of(const cp_trace *t, const char *run)
{
    cp_trust_in in = {.what = "the program's trace", .traced_files = t->nprocesses,
                      .processes = t, .device_work = 4, .run = run};
    cp_trust out;
    cp_trust_judge(&in, &out);
    return out;
}

static void add_process(cp_trace *t, uint32_t pid, int32_t rank, const char *run, bool ended)
{
    cp_process p = ranked(rank, rank >= 0 ? "RANK" : "", run);
    p.pid = pid;
    p.ended = ended;
    snprintf(p.host, sizeof p.host, "gpu-1");
    cr_assert_geq(cp_trace_add_process(t, &p), 0);
}

Test(trust, files_of_another_run_are_not_trusted)
{
    cp_trace t;
    cp_trace_init(&t);
    add_process(&t, 10, 0, "gpu-1.9.100", true);
    add_process(&t, 11, 1, "gpu-1.9.100", true);
    cp_trust r = trust_of(&t, "gpu-1.9.100");
    cr_expect(r.trusted, "one run: %s", r.why);
    r = trust_of(&t, NULL);
    cr_expect(r.trusted, "compared among themselves: %s", r.why);
    r = trust_of(&t, "gpu-1.9.200");
    cr_expect_not(r.trusted, "planted: the launcher's id differs");
    add_process(&t, 12, 2, "gpu-1.7.50", true);
    r = trust_of(&t, NULL);
    cr_expect_not(r.trusted);
    cr_expect_eq(r.exit, CP_EXIT_INCONCLUSIVE);
    cr_expect_str_eq(r.why, "the trace of process 12 on gpu-1 (file gpu-1.12.proc.*) belongs to "
                            "another run: its run id is gpu-1.7.50, the first file's is "
                            "gpu-1.9.100; files of two runs in one directory cannot be judged "
                            "as one program");
    r = trust_of(&t, "gpu-1.9.100");
    cr_expect_not_null(strstr(r.why, "this run's is gpu-1.9.100"), "%s", r.why);
    cp_trace_free(&t);

    /* A file naming no run (a writer before run ids) is compared with nothing. */
    cp_trace_init(&t);
    add_process(&t, 10, 0, "gpu-1.9.100", true);
    add_process(&t, 11, 1, "", true);
    r = trust_of(&t, "gpu-1.9.100");
    cr_expect(r.trusted, "%s", r.why);
    cp_trace_free(&t);
}

/* Files that name no run (writers before run ids), judged with no
 * launcher: one tree of processes is one program; two processes whose
 * parents were not traced are two programs (issue 41: two separate runs'
 * files in tests/fixtures/exec-h100 were judged as one), unless they are
 * ranks, which a launcher without CUDA starts. */
Test(trust, separate_programs_without_run_ids_are_not_trusted)
{
    cp_trace t;
    cp_trace_init(&t);
    add_process(&t, 10, -1, "", true);
    add_process(&t, 11, -1, "", true);
    t.processes[1].ppid = 10; /* a child of the first: one tree */
    cp_trust r = trust_of(&t, NULL);
    cr_expect(r.trusted, "one tree: %s", r.why);
    add_process(&t, 20, -1, "", true);
    snprintf(t.processes[2].command, sizeof t.processes[2].command, "%s", "./other");
    r = trust_of(&t, NULL);
    cr_expect_not(r.trusted, "planted: a second program's file");
    cr_expect_eq(r.exit, CP_EXIT_INCONCLUSIVE);
    cr_expect_str_eq(r.why, "the files hold 2 separate programs, not one: process 10 on gpu-1 "
                            "(), process 20 on gpu-1 (./other) have no traced parent and no run "
                            "id says they are one run (files written before run ids); judge one "
                            "program's files at a time");
    /* The same parent pid on another host is not a parent. */
    t.processes[2].ppid = 10;
    r = trust_of(&t, NULL);
    cr_expect(r.trusted, "%s", r.why);
    snprintf(t.processes[2].host, sizeof t.processes[2].host, "gpu-2");
    r = trust_of(&t, NULL);
    cr_expect_not(r.trusted);
    /* A launcher's run id, or a run id in the files: rule 2's other half. */
    r = trust_of(&t, "gpu-1.9.100");
    cr_expect(r.trusted, "%s", r.why);
    cp_trace_free(&t);

    /* Ranks started by an untraced launcher: one job. */
    cp_trace_init(&t);
    add_process(&t, 10, 0, "", true);
    add_process(&t, 11, 1, "", true);
    r = trust_of(&t, NULL);
    cr_expect(r.trusted, "ranks: %s", r.why);
    cp_trace_free(&t);
}

Test(trust, a_rank_claimed_twice_is_not_trusted)
{
    cp_trace t;
    cp_trace_init(&t);
    add_process(&t, 10, 0, "r", true);
    add_process(&t, 11, 1, "r", true);
    add_process(&t, 12, -1, "r", true);
    add_process(&t, 13, -1, "r", true);
    cp_trust r = trust_of(&t, "r");
    cr_expect(r.trusted, "processes of no rank share none: %s", r.why);
    add_process(&t, 14, 1, "r", true);
    r = trust_of(&t, "r");
    cr_expect_not(r.trusted, "planted: rank 1 twice");
    cr_expect_eq(r.exit, CP_EXIT_INCONCLUSIVE);
    cr_expect_str_eq(r.why, "two processes claim rank 1: process 11 on gpu-1 (RANK) and process "
                            "14 on gpu-1 (RANK); a rank's figures would mix them");
    cp_trace_free(&t);
}

Test(trust, a_truncated_rank_is_a_warning_naming_it)
{
    cp_trace t;
    cp_trace_init(&t);
    add_process(&t, 10, 0, "r", true);
    add_process(&t, 11, 1, "r", false);
    add_process(&t, 12, -1, "r", false);
    cp_trust r = trust_of(&t, "r");
    cr_expect(r.trusted, "%s", r.why);
    cr_expect_str_eq(r.warning, "2 processes truncated (no end record): work after its last "
                                "flush is missing (rank 1: process 11)");
    t.processes[1].ended = true;
    t.processes[2].ended = true;
    r = trust_of(&t, "r");
    cr_expect_str_eq(r.warning, "", "planted: every process ended");
    cp_trace_free(&t);
}

/* ---- end to end: cuproof check on hand-written per-process files ---- */

/* Writes rank `rank`'s file (pid 500 + rank) into `dir`: a step range
 * [0, 1000) holding one kernel of `busy` ns, run id `run`; without its
 * end record when `cut`. */
static void write_rank_file(const char *dir, int rank, int pid, unsigned busy, const char *run,
                            bool cut)
{
    char path[256];
    snprintf(path, sizeof path, "%s/gpu-1.%d.proc.jsonl", dir, pid);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "{\"schema\":\"cuproof.proc/1\",\"host\":\"gpu-1\",\"pid\":%d,\"ppid\":1,"
            "\"command\":\"python3 train.py\",\"origin_ns\":\"1000000\",\"rank\":%d,"
            "\"local_rank\":%d,\"world_size\":2,\"rank_var\":\"RANK\",\"rank_why\":\"\","
            "\"run\":\"%s\"}\n",
            pid, rank, rank, run);
    fprintf(f, "{\"k\":\"marker\",\"t\":0,\"id\":1,\"phase\":\"start\",\"name\":\"step\","
               "\"domain\":\"\",\"tid\":1}\n");
    fprintf(f,
            "{\"k\":\"kernel\",\"s\":10,\"e\":%u,\"dev\":0,\"ctx\":1,\"str\":7,\"cor\":1,"
            "\"grid\":[1,1,1],\"block\":[1,1,1],\"graph\":0,\"node\":0,\"name\":\"k\"}\n",
            10 + busy);
    fprintf(f, "{\"k\":\"marker\",\"t\":1000,\"id\":1,\"phase\":\"end\",\"name\":\"\","
               "\"domain\":\"\",\"tid\":1}\n");
    if (!cut)
        fprintf(f, "{\"k\":\"end\",\"t\":1000,\"records\":3,\"dropped\":0,"
                   "\"zero_timestamps\":0,\"why\":\"exit\"}\n");
    fclose(f);
}

/* Runs `cuproof check DIR --expect EXPECT`; returns its exit status and
 * its output (stdout and stderr) in `out`. */
static int check(const char *dir, const char *expect, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' check '%s' --expect '%s' 2>&1", CUPROOF_BIN, dir, expect);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void clear_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -f '%s'/*.proc.jsonl", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(check, every_rank_and_the_bad_inputs_end_to_end)
{
    char dir[] = "/tmp/cuproof-ranks-check-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    static char out[16384];
    write_rank_file(dir, 0, 500, 100, "gpu-1.1.5", false);
    write_rank_file(dir, 1, 501, 300, "gpu-1.1.5", false);
    cr_expect_eq(check(dir, "every rank: range(step): kernel_busy_ns < 400", out, sizeof out), 0,
                 "%s", out);
    cr_expect_not_null(strstr(out, "worst rank 1: 300 ns; ranks 0..1: 100, 300"), "%s", out);
    cr_expect_eq(check(dir, "every rank: range(step): kernel_busy_ns < 200", out, sizeof out), 1,
                 "planted: rank 1 is 300 ns: %s", out);
    cr_expect_not_null(strstr(out, "worst rank 1: 300 ns"), "%s", out);
    cr_expect_eq(check(dir, "rank(0) range(step): kernel_busy_ns == 100", out, sizeof out), 0,
                 "%s", out);
    cr_expect_eq(check(dir, "rank(2): kernels >= 0", out, sizeof out), 1, "%s", out);
    cr_expect_not_null(strstr(out, "no rank 2 in the trace (ranks: 0, 1)"), "%s", out);

    /* A file of another run in the directory. */
    write_rank_file(dir, 1, 501, 300, "gpu-1.1.9", false);
    cr_expect_eq(check(dir, "kernels >= 1", out, sizeof out), 3, "%s", out);
    cr_expect_not_null(strstr(out, "its run id is gpu-1.1.9, the first file's is gpu-1.1.5"),
                       "%s", out);
    cr_expect_not_null(strstr(out, "gpu-1.501.proc"), "names the file: %s", out);

    /* Two processes claiming rank 0. */
    clear_dir(dir);
    write_rank_file(dir, 0, 500, 100, "gpu-1.1.5", false);
    write_rank_file(dir, 0, 502, 300, "gpu-1.1.5", false);
    cr_expect_eq(check(dir, "kernels >= 1", out, sizeof out), 3, "%s", out);
    cr_expect_not_null(strstr(out, "two processes claim rank 0: process 500"), "%s", out);

    /* A rank without its end record: a warning naming it. */
    clear_dir(dir);
    write_rank_file(dir, 0, 500, 100, "gpu-1.1.5", false);
    write_rank_file(dir, 1, 501, 300, "gpu-1.1.5", true);
    cr_expect_eq(check(dir, "every rank: kernels == 1", out, sizeof out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "process 501 (rank 1) on gpu-1"), "%s", out);
    cr_expect_not_null(strstr(out, "(rank 1: process 501)"), "%s", out);
    clear_dir(dir);
    rmdir(dir);
}

/* ---- 'rank spread' ---- */

Test(scope, rank_spread_is_the_largest_minus_the_smallest)
{
    cp_trace t;
    ranked_trace(&t);
    char m[512];
    /* Kernel busy time per rank: 500, 700 and 300 ns. */
    cr_expect(judge(&t, "rank spread: kernel_busy_ns <= 400", m, sizeof m), "%s", m);
    cr_expect_str_eq(m, "spread 400 ns (largest rank 1: 700, smallest rank 2: 300); ranks 0..2: "
                        "500, 700, 300");
    cr_expect_not(judge(&t, "rank spread: kernel_busy_ns < 400", m, sizeof m), "planted: %s", m);
    /* In their own steps: 500, 300, 300. */
    cr_expect(judge(&t, "rank spread: range(step): kernel_busy_ns == 200", m, sizeof m), "%s", m);
    /* A rank with nothing measured fails it, named. */
    cr_expect_not(judge(&t, "rank spread: range(nowhere): kernels >= 0", m, sizeof m));
    cr_expect_str_eq(m, "rank 0: no range named 'nowhere' in the trace of rank 0");
    cp_trace_free(&t);

    cp_trace_init(&t);
    add_ranked(&t, 100, -1);
    add(&t, CP_ACT_KERNEL, 0, 10, 0, "k");
    cr_expect_not(judge(&t, "rank spread: kernels >= 0", m, sizeof m));
    cr_expect_not_null(strstr(m, "no rank recorded in the trace: 'rank spread' needs"), "%s", m);
    cp_trace_free(&t);

    /* A finding has no spread; rank(N) cannot follow it. */
    cp_expect_list list = {0};
    cr_assert_eq(cp_expect_parse("rank spread: finding cuda_memcpy_async", 1, &list), 0);
    cr_expect(list.items[0].spread_ranks && list.items[0].every_rank);
    cr_expect_eq(cp_expect_validate_program(&list), CP_EINVAL);
    cr_expect_not_null(strstr(cp_last_error(), "line 1, column 22: 'rank spread' compares"), "%s",
                       cp_last_error());
    cp_expect_list_free(&list);
    char msg[256];
    cr_expect_eq(parse_error("rank spread: rank(1): kernels > 0", msg, sizeof msg), CP_EPARSE);
    cr_expect_str_eq(msg, "line 1, column 14: 'rank spread' already names the ranks: rank(N) "
                          "cannot follow it");
    cr_expect_eq(parse_error("rank spread kernels > 0", msg, sizeof msg), CP_EPARSE);
    cr_expect_not_null(strstr(msg, "expected ':' after 'rank spread'"), "%s", msg);
}

/* A program's files exported as one cuproof.rec file keep their ranks:
 * check judges the rec file as it judges the directory. */
Test(check, a_rec_export_keeps_the_ranks)
{
    char dir[] = "/tmp/cuproof-ranks-rec-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cmd[1024], rec[256];
    snprintf(cmd, sizeof cmd, "'%s' export '%s/exec/ranks' '%s/out' --format rec >/dev/null",
             CUPROOF_BIN, CUPROOF_FIXTURES, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(rec, sizeof rec, "%s/out/program.cprec", dir);
    static char out[16384];
    cr_expect_eq(check(rec, "every rank: range(step): copy_kernel_overlap_ratio > 0.5", out,
                       sizeof out),
                 1, "%s", out);
    cr_expect_not_null(strstr(out, "worst rank 1: 0.275 (27.5%); ranks 0..1: 1, 0.275"), "%s", out);
    cr_expect_eq(check(rec, "rank(0) range(step): copy_kernel_overlap_ratio > 0.5", out,
                       sizeof out),
                 0, "%s", out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A viewer names a job's process by its rank: the label, and Perfetto's
 * process track of an exported program. */
Test(files, a_viewer_names_a_process_by_rank)
{
    char buf[300];
    cp_process p = ranked(1, "RANK", "r");
    snprintf(p.command, sizeof p.command, "python3 train.py");
    snprintf(p.host, sizeof p.host, "node-a");
    p.pid = 4242;
    cr_expect_str_eq(cp_process_label(&p, buf, sizeof buf),
                     "rank 1 (node-a, 4242): python3 train.py");
    p.host[0] = '\0';
    cr_expect_str_eq(cp_process_label(&p, buf, sizeof buf), "rank 1 (4242): python3 train.py",
                     "no host: the pid alone");
    p.rank_var[0] = '\0';
    cr_expect_str_eq(cp_process_label(&p, buf, sizeof buf), "python3 train.py", "planted: no rank");
    char small[8];
    cr_expect_str_eq(cp_process_label(&(cp_process){.rank = 3, .rank_var = "RANK"}, small,
                                      sizeof small),
                     "rank 3 ");

    char dir[] = "/tmp/cuproof-ranks-pb-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "'%s' export '%s/exec/ranks' '%s/out' --format proto >/dev/null && "
             "grep -c 'rank 1 (gpu-1, 4102): python3 train.py' "
             "'%s/out/program.trace.perfetto-trace' >/dev/null",
             CUPROOF_BIN, CUPROOF_FIXTURES, dir, dir);
    cr_expect_eq(system(cmd), 0, "the track names rank 1");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}
