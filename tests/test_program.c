/*
 * cp_program_analyse: a program's per-process files judged with their
 * records held and streamed give the same metrics, the same verdicts and
 * measured values for every kind of scope (present and absent), the same
 * processes and the same timeline summary; the streamed files are
 * written, read back whole, and left behind by no failure.
 */
#include <cuproof/error.h>
#include <cuproof/program.h>
#include <cuproof/internal/proc.h>
#include <cuproof/internal/rec.h>

#include "stream_equal.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char out_dir[64];

static void make_out_dir(void)
{
    snprintf(out_dir, sizeof out_dir, "/tmp/cuproof-program-test-XXXXXX");
    cr_assert_not_null(mkdtemp(out_dir));
}

static void remove_out_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out_dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(program, .init = make_out_dir, .fini = remove_out_dir);

/* Expectations of every scope, present and absent, that a recorded
 * program's directory is judged by; PID is replaced by a real pid. */
static const char *const expectations[] = {
    "kernels >= 1",
    "copy_kernel_overlap_ratio > 0.1",
    "peak_concurrent_kernels >= 2",
    "no finding cuda_memcpy_async",
    "range(step): kernels >= 1",
    "range(step): peak_concurrent_kernels > 1",
    "range(step): kernel_busy_ns > 1000",
    "range(load): copies >= 1",
    "range(no-such-range): kernels >= 1",
    "process(PID): kernels >= 1",
    "process(4294967295): kernels >= 1",
    "device(0): copy_kernel_overlap_ratio > 0",
    "device(7): kernels >= 1",
    "per step: kernel_busy_ns > 0",
    "per step p95: step_ns < 1e10",
    "per step: copy_kernel_overlap_ratio > 0.1",
    "per step(no-such-range): step_ns > 0",
};
#define NEXPECT (sizeof expectations / sizeof expectations[0])

typedef struct judged {
    cp_variant_result v;
    cp_program_check checks[NEXPECT];
    cp_program_info info;
    int rc;
} judged;

static void judge(const char *dir, const cp_expect_list *list, uint64_t keep, judged *j)
{
    memset(j, 0, sizeof *j);
    cp_trace_init(&j->v.trace);
    cp_program_opts o = {.keep_records = keep, .out_dir = out_dir, .name = "prog"};
    j->rc = cp_program_analyse(dir, list, &o, &j->v, j->checks, &j->info);
}

static void judged_free(judged *j)
{
    cp_trace_free(&j->v.trace);
    cp_metrics_free(&j->v.metrics);
    cp_summary_free(j->v.summary);
    free(j->v.summary);
}

/* The list, with the first process's pid for PID. */
static void parse_list(const char *dir, cp_expect_list *list, char *text, size_t len)
{
    cp_trace t;
    cp_trace_init(&t);
    size_t n = 0;
    cr_assert_eq(cp_proc_read_dir(dir, &t, &n), 0, "%s", cp_last_error());
    cr_assert_gt(t.nprocesses, 0);
    size_t used = 0;
    for (size_t i = 0; i < NEXPECT; i++) {
        const char *e = expectations[i], *pid = strstr(e, "PID");
        if (pid)
            used += (size_t)snprintf(text + used, len - used, "%.*s%u%s\n", (int)(pid - e), e,
                                     t.processes[0].pid, pid + 3);
        else
            used += (size_t)snprintf(text + used, len - used, "%s\n", e);
    }
    cp_trace_free(&t);
    memset(list, 0, sizeof *list);
    cr_assert_eq(cp_expect_parse(text, 1, list), 0, "%s", cp_last_error());
    cr_assert_eq(list->n, NEXPECT);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_size > 0;
}

/* Held, streamed from the first record, and streamed from part way (the
 * held records handed on when the limit is passed): the same answers. */
Test(program, held_and_streamed_records_give_the_same_verdicts)
{
    const char *dirs[] = {CUPROOF_FIXTURES "/exec/program", CUPROOF_FIXTURES "/exec-h100"};
    for (size_t d = 0; d < 2; d++) {
        static char text[4096];
        cp_expect_list list;
        parse_list(dirs[d], &list, text, sizeof text);
        static judged held, streamed;
        judge(dirs[d], &list, UINT64_MAX, &held);
        cr_assert_eq(held.rc, 0, "%s", cp_last_error());
        cr_expect(!held.info.streamed);
        cr_expect_null(held.v.summary);
        cr_expect_eq(held.info.rec_path[0], '\0');
        cr_expect_eq(held.v.trace.n, held.info.records, "held records are in the trace");
        size_t passed = 0, failed = 0;
        uint64_t keeps[] = {1, held.info.records / 2};
        for (size_t k = 0; k < 2; k++) {
            char how[256];
            snprintf(how, sizeof how, "%s, streamed past %llu", dirs[d],
                     (unsigned long long)keeps[k]);
            judge(dirs[d], &list, keeps[k], &streamed);
            cr_assert_eq(streamed.rc, 0, "%s: %s", how, cp_last_error());
            cr_expect(streamed.info.streamed, "%s", how);
            cr_expect_eq(streamed.v.trace.n, 0, "%s: no record is held", how);
            cr_expect_eq(streamed.info.records, held.info.records, "%s", how);
            cr_expect_eq(streamed.info.first_ns, held.info.first_ns, "%s", how);
            cr_expect_eq(streamed.info.nfiles, held.info.nfiles, "%s", how);
            /* Recorded programs' files come in order per track: every
             * slice of the Perfetto file was checked for nesting. */
            cr_expect_eq(streamed.info.perfetto_unordered, 0, "%s", how);
            expect_same_metrics(&held.v.metrics, &streamed.v.metrics, how);
            for (size_t i = 0; i < NEXPECT; i++) {
                cr_expect_eq(streamed.checks[i].ok, held.checks[i].ok, "%s: %s", how,
                             list.items[i].text);
                cr_expect_str_eq(streamed.checks[i].measured, held.checks[i].measured, "%s: %s",
                                 how, list.items[i].text);
                passed += held.checks[i].ok;
                failed += !held.checks[i].ok;
            }
            cr_assert_eq(streamed.v.trace.nprocesses, held.v.trace.nprocesses, "%s", how);
            for (size_t i = 0; i < held.v.trace.nprocesses; i++) {
                const cp_process *a = &held.v.trace.processes[i], *b = &streamed.v.trace.processes[i];
                cr_expect_eq(a->pid, b->pid, "%s", how);
                cr_expect_eq(a->ended, b->ended, "%s", how);
                cr_expect_eq(a->last_ns, b->last_ns, "%s", how);
                cr_expect_eq(a->dropped, b->dropped, "%s", how);
            }
            /* The summary drawn from the second reading is the one the
             * held records draw. */
            cr_assert_not_null(streamed.v.summary, "%s", how);
            cp_summary_span sp = CP_SUMMARY_SPAN_INIT;
            for (size_t i = 0; i < held.v.trace.n; i++)
                cp_summary_span_add(&sp, &held.v.trace.items[i]);
            cp_summary own;
            cr_assert_eq(cp_summary_init(&own, &held.v.metrics, &sp, CP_SUMMARY_BINS), 0);
            for (size_t i = 0; i < held.v.trace.n; i++)
                cp_summary_add(&own, &held.v.metrics, &held.v.trace.items[i]);
            const cp_summary *s = streamed.v.summary;
            cr_expect_eq(s->records, own.records, "%s", how);
            cr_expect_eq(s->all, held.v.trace.n, "%s", how);
            cr_expect_eq(s->origin, own.origin, "%s", how);
            cr_expect_eq(s->end, own.end, "%s", how);
            cr_assert_eq(s->nlanes, own.nlanes, "%s", how);
            size_t cells = (size_t)s->nlanes * s->nbins, drawn = 0;
            cr_expect(memcmp(s->count, own.count, cells * sizeof *s->count) == 0, "%s", how);
            cr_expect(memcmp(s->busy, own.busy, cells * CP_SUMMARY_KINDS * sizeof *s->busy) == 0,
                      "%s", how);
            for (size_t c = 0; c < cells; c++)
                drawn += s->count[c] > 0;
            cr_expect_gt(drawn, 0, "%s: the summary has columns", how);
            cp_summary_free(&own);
            /* The rec file holds every record and the processes; the
             * Perfetto file was written. */
            cr_expect(exists(streamed.info.rec_path), "%s", streamed.info.rec_path);
            cr_expect(exists(streamed.info.perfetto_path), "%s", streamed.info.perfetto_path);
            cp_trace back;
            cp_trace_init(&back);
            bool truncated = true;
            cr_assert_eq(cp_rec_read_trace(streamed.info.rec_path, &back, &truncated), 0, "%s",
                         cp_last_error());
            cr_expect(!truncated);
            cr_expect_eq(back.n, held.v.trace.n, "%s", how);
            cr_expect_eq(back.nprocesses, held.v.trace.nprocesses, "%s", how);
            cp_metrics m;
            cr_assert_eq(cp_timeline_analyse(&back, NULL, &m), 0);
            cp_metrics hm;
            cr_assert_eq(cp_timeline_analyse(&held.v.trace, NULL, &hm), 0);
            expect_same_metrics(&hm, &m, "the rec file read back");
            cp_metrics_free(&m);
            cp_metrics_free(&hm);
            cp_trace_free(&back);
            judged_free(&streamed);
        }
        /* The list exercises both verdicts, so that a path answering
         * everything one way would differ. */
        cr_expect_gt(passed, 0, "%s", dirs[d]);
        cr_expect_gt(failed, 0, "%s", dirs[d]);
        judged_free(&held);
        cp_expect_list_free(&list);
    }
}

/* The streamed files cannot be written: the error names the file and
 * nothing is left; a directory without per-process files is no error,
 * and nothing was read. */
Test(program, an_unwritable_output_is_named_and_an_empty_directory_reads_nothing)
{
    cp_variant_result v;
    memset(&v, 0, sizeof v);
    cp_trace_init(&v.trace);
    cp_program_opts o = {.keep_records = 1, .out_dir = "/nonexistent/cuproof", .name = "prog"};
    cp_program_info info;
    int rc = cp_program_analyse(CUPROOF_FIXTURES "/exec-h100", NULL, &o, &v, NULL, &info);
    cr_expect_eq(rc, CP_EIO);
    cr_expect_not_null(strstr(cp_last_error(), "/nonexistent/cuproof/prog.cprec"), "%s",
                       cp_last_error());
    cr_expect_eq(info.rec_path[0], '\0');
    cr_expect_null(v.summary);
    cp_trace_free(&v.trace);
    cp_metrics_free(&v.metrics);

    memset(&v, 0, sizeof v);
    cp_trace_init(&v.trace);
    o.out_dir = out_dir;
    cr_expect_eq(cp_program_analyse(out_dir, NULL, &o, &v, NULL, &info), 0, "%s",
                 cp_last_error());
    cr_expect_eq(info.nfiles, 0);
    cr_expect_eq(info.records, 0);
    cr_expect(!info.streamed);
    cr_expect_eq(v.metrics.kernels, 0);
    char path[160];
    snprintf(path, sizeof path, "%s/prog.cprec", out_dir);
    cr_expect(access(path, F_OK) != 0, "nothing streamed, no file");
    cp_trace_free(&v.trace);
    cp_metrics_free(&v.metrics);
}
