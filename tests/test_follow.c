/*
 * The follower (cp_follower, judge/follow.c): `cuproof exec` reads the
 * per-process files while the program writes them, and the judge then
 * reads only the rest. Every trace exec recorded on a GPU
 * (tests/fixtures/exec-*) is written as the per-process files of both
 * forms, then fed to a directory in chunks of random sizes (a chunk ending
 * inside a line or a record, a file appearing only after others have
 * grown) while the follower polls, as processes writing would; the
 * judgement fed by the follower must give exactly what today's reader
 * gives on the finished files: the metrics, lanes, findings, each
 * expectation's verdict and measured words in every scope the trace offers
 * (tests/trace_text.h, as the API filter's replay compares them), the
 * processes, and every file written (report.json, report.html, the merged
 * trace, the Perfetto file, the streamed rec file), with the records held
 * and past them (streamed: JSON lines spilled, rec read after). A control
 * shows the comparison can fail: a chunk dropped on the way. A file the
 * follower cannot serve (replaced, cut shorter, not parsing) is read by
 * today's reader after the program, and said.
 */
#define _GNU_SOURCE
#include "proc_lines.h"
#include "named_program.h"
#include "trace_text.h"

#include <cuproof/error.h>
#include <cuproof/expect.h>
#include <cuproof/program.h>
#include <cuproof/internal/ranks.h>
#include <cuproof/internal/proc.h>
#include <cuproof/internal/report.h>
#include <cuproof/internal/session.h>

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[64];

static void make_base(void)
{
    snprintf(base, sizeof base, "/tmp/cuproof-follow-test-XXXXXX");
    cr_assert_not_null(mkdtemp(base));
}

static void remove_base(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(follow, .init = make_base, .fini = remove_base, .timeout = 900);

static void sh(const char *fmt, const char *a, const char *b)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* ---- The recorded traces as per-process files ---- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

/* Fixture `path` as the per-process files of both forms, in jdir (JSON
 * lines) and rdir (rec): a per-process file of a form is copied as it was
 * recorded, the other form written from what it reads as; a trace of
 * several processes becomes one file per process. Returns the records. */
static size_t write_forms(const char *path, const char *jdir, const char *rdir)
{
    cp_trace t;
    tt_load(path, &t);
    const char *slash = strrchr(path, '/');
    char stem[256];
    snprintf(stem, sizeof stem, "%s", slash ? slash + 1 : path);
    bool jsonl = ends_with(stem, ".proc.jsonl"), rec = ends_with(stem, ".proc.cprec");
    if (jsonl || rec)
        stem[strlen(stem) - 11] = '\0';
    size_t nproc = t.nprocesses ? t.nprocesses : 1;
    for (uint32_t p = 0; p < nproc; p++) {
        char name[400], file[700];
        if (jsonl || rec)
            snprintf(name, sizeof name, "%s", stem);
        else
            snprintf(name, sizeof name, "%s.%u",
                     t.processes[p].host[0] ? t.processes[p].host : "host", t.processes[p].pid);
        snprintf(file, sizeof file, "%s/%s.proc.jsonl", jdir, name);
        if (jsonl)
            sh("cp '%s' '%s'", path, file);
        else
            cr_assert_eq(proc_lines_write(file, &t, p), 0, "%s", cp_last_error());
        snprintf(file, sizeof file, "%s/%s.proc.cprec", rdir, name);
        if (rec)
            sh("cp '%s' '%s'", path, file);
        else
            cr_assert_eq(proc_rec_write(file, &t, p), 0, "%s", cp_last_error());
    }
    size_t n = t.n;
    cp_trace_free(&t);
    return n;
}

/* The expectations asked of a trace: every scope it offers, each with a
 * count, a share and every finding (as the API filter's replay asks
 * them), those a program may be asked. */
static void expectations_of(const char *path, cp_expect_list *list)
{
    cp_trace t;
    cp_metrics m;
    tt_load(path, &t);
    cr_assert_eq(cp_timeline_analyse(&t, &tt_h100, &m), 0, "%s", cp_last_error());
    char scopes[32][96], text[4096];
    size_t ns = tt_scopes_of(&t, &m, scopes, 32);
    memset(list, 0, sizeof *list);
    for (size_t s = 0; s < ns; s++) {
        tt_scope_lines(scopes[s], text, sizeof text);
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
            cp_expect_list one = {0};
            if (cp_expect_parse(line, 1, &one) == 0 && cp_expect_validate_program(&one) == 0)
                cr_assert_eq(cp_expect_parse(line, 1, list), 0);
            cp_expect_list_free(&one);
        }
    }
    cp_metrics_free(&m);
    cp_trace_free(&t);
}

/* ---- Files written as processes write them ---- */

/* The bytes of `path` (any byte: rec files hold NULs), *size of them. */
static char *read_all(const char *path, size_t *size)
{
    char *bytes = NULL;
    FILE *in = fopen(path, "rb"), *mem = open_memstream(&bytes, size);
    cr_assert(in && mem, "%s", path);
    char block[65536];
    size_t got;
    while ((got = fread(block, 1, sizeof block, in)) > 0)
        fwrite(block, 1, got, mem);
    fclose(mem);
    fclose(in);
    return bytes;
}

typedef struct source {
    char name[256];
    char *bytes;
    size_t size, written;
    bool appeared;
} source;

static unsigned next_random(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) & 0x7fff;
}

/* Appends n bytes of s to its file in `dir`. */
static void append(const char *dir, source *s, size_t n)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, s->name);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    cr_assert_geq(fd, 0, "%s", path);
    cr_assert_eq(write(fd, s->bytes + s->written, n), (ssize_t)n);
    close(fd);
    s->written += n;
    s->appeared = true;
}

/* Where a file's first chunk ends: inside its second line, or inside its
 * first record after the rec header. */
static size_t first_cut(const source *s)
{
    if (ends_with(s->name, ".proc.cprec"))
        return s->size > 11 ? 11 : s->size;
    const char *nl = memchr(s->bytes, '\n', s->size);
    size_t at = nl ? (size_t)(nl - s->bytes) + 6 : s->size / 2;
    return at < s->size ? at : s->size;
}

/*
 * The files of `src` written into `live` chunk by chunk, the follower
 * polled between chunks: sizes from 1 byte to 64 KiB, each file's first
 * chunk cut inside a line or a record, the last file (in name order)
 * appearing only once half of the others' bytes are written. With `drop`,
 * one chunk of whole lines of the largest file is left out (the control).
 * After the last chunk the follower reads until it has read everything,
 * and is polled once more, as it would be while a program still runs.
 */
static void write_live(const char *src, const char *live, cp_follower *f, unsigned seed, bool drop)
{
    char **names = NULL;
    size_t n = 0;
    cr_assert_eq(cp_proc_list_dir(src, &names, &n), 0, "%s", cp_last_error());
    cr_assert_gt(n, 0);
    source *s = calloc(n, sizeof *s);
    size_t total = 0, largest = 0;
    for (size_t i = 0; i < n; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", src, names[i]);
        snprintf(s[i].name, sizeof s[i].name, "%s", names[i]);
        s[i].bytes = read_all(path, &s[i].size);
        total += s[i].size;
        largest = s[i].size > s[largest].size ? i : largest;
    }
    if (drop) {
        /* Lines 20 to 40 of the largest JSON-lines file: whole lines, so
         * that what is left still parses. */
        source *d = &s[largest];
        char *from = d->bytes;
        for (int k = 0; k < 20 && from; k++)
            from = memchr(from, '\n', d->size - (size_t)(from - d->bytes)) + 1;
        char *to = from;
        for (int k = 0; k < 20 && to; k++)
            to = memchr(to, '\n', d->size - (size_t)(to - d->bytes)) + 1;
        cr_assert(from && to && to > from, "%s has too few lines to drop some", d->name);
        memmove(from, to, d->size - (size_t)(to - d->bytes));
        d->size -= (size_t)(to - from);
    }
    /* The follower starts before any file is there. */
    cp_follower_poll(f);
    cp_follower_poll(f);
    size_t late = n - 1, done = 0;
    for (;;) {
        size_t open = 0, pick = 0, left = 0;
        for (size_t i = 0; i < n; i++) {
            bool may = i != late || n == 1 || done * 2 >= total - s[late].size;
            if (may && s[i].written < s[i].size) {
                open++;
                left += s[i].size - s[i].written;
            }
        }
        if (!open)
            break;
        /* The k-th of the files that may grow. */
        size_t k = next_random(&seed) % open;
        for (size_t i = 0; i < n; i++) {
            bool may = i != late || n == 1 || done * 2 >= total - s[late].size;
            if (may && s[i].written < s[i].size && k-- == 0) {
                pick = i;
                break;
            }
        }
        source *x = &s[pick];
        size_t size = x->written == 0 ? first_cut(x)
                                      : 1 + (size_t)next_random(&seed) * next_random(&seed) % 65536;
        if (size > x->size - x->written)
            size = x->size - x->written;
        if (size == 0)
            size = x->size - x->written;
        append(live, x, size);
        done += size;
        for (unsigned polls = next_random(&seed) % 3; polls > 0; polls--)
            cp_follower_poll(f);
    }
    while (cp_follower_poll(f))
        ;
    /* The launcher's next poll, after it saw the program still running:
     * what the last one read was read while it ran. */
    cp_follower_poll(f);
    for (size_t i = 0; i < n; i++)
        free(s[i].bytes);
    free(s);
    cp_proc_names_free(names, n);
}

/* ---- What a judgement gives, as text ---- */

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

/* Each file `dir` holds, by name: its size and a hash of its bytes. */
static void put_files(FILE *f, const char *dir)
{
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, alphasort);
    cr_assert_geq(n, 0, "%s", dir);
    for (int i = 0; i < n; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name);
        struct stat st;
        if (list[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            size_t size = 0;
            char *bytes = read_all(path, &size);
            fprintf(f, "file %s: %zu bytes, %016llx\n", list[i]->d_name, size,
                    (unsigned long long)fnv1a(bytes, size));
            free(bytes);
        }
        free(list[i]);
    }
    free(list);
}

/* The program's judgement on the files in `dir` (read by `follow` when
 * set, else after the fact) with `list` and at most `keep` records held,
 * its reports written into `out`: everything it gives, as text (the
 * caller frees it). *during gets the records read while "the program
 * ran", `why` why some were not. */
static char *judged(const char *dir, cp_follower *follow, const cp_expect_list *list, uint64_t keep,
                    const char *out, uint64_t *records, uint64_t *during, char *why,
                    size_t why_size)
{
    char *const argv[] = {"prog", NULL};
    cp_judge_opts jo = {
        .expect = list,
        .argv = argv,
        .program = {.timeline = tt_h100, .keep_records = keep, .out_dir = out, .follow = follow}};
    cp_program_run run = {0};
    cp_case_result c;
    cp_judgement j;
    memset(&c, 0, sizeof c);
    cr_assert_eq(mkdir(out, 0755), 0, "%s", out);
    cr_assert_eq(cp_program_judge(dir, &jo, &run, NULL, &c, &j), 0, "%s", cp_last_error());
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    const cp_variant_result *v = &c.variants[0];
    fprintf(f, "exit %d trusted %d why %s\nfiles %zu records %llu streamed %d\n", j.exit,
            j.trust.trusted, j.trust.why, j.info.nfiles, (unsigned long long)j.info.records,
            j.info.streamed);
    tt_put_metrics(f, &v->metrics);
    for (size_t i = 0; i < v->trace.nprocesses; i++) {
        const cp_process *p = &v->trace.processes[i];
        fprintf(f, "process %u %s ended %d why %s last %llu dropped %llu zero %llu cost %d/%llu\n",
                p->pid, p->host, p->ended, p->why, (unsigned long long)p->last_ns,
                (unsigned long long)p->dropped, (unsigned long long)p->zero_timestamps,
                p->cost.recorded, (unsigned long long)p->cost.records);
    }
    fprintf(f, "dropped %llu renamed %llu held %zu\n", (unsigned long long)v->trace.dropped_records,
            (unsigned long long)v->trace.renamed_kernels, v->trace.n);
    for (size_t i = 0; i < v->trace.nstream_names; i++) {
        const cp_stream_name *n = &v->trace.stream_names[i];
        fprintf(f, "stream name %u %u %u %u %s\n", n->process, n->device, n->context, n->stream,
                n->name);
    }
    for (size_t i = 0; i < c.nchecks; i++)
        fprintf(f, "check %s: %s (%s)%s\n", c.checks[i].name,
                cp_check_status_name(c.checks[i].status), c.checks[i].measured,
                c.checks[i].skip_reason);
    if (v->ranks) {
        char *ranks = cp_ranks_text(v->ranks, "");
        fputs(ranks, f);
        free(ranks);
    }
    *records = j.info.records;
    *during = j.info.records_during_run;
    snprintf(why, why_size, "%s", j.info.follow_why);
    /* The files, as exec's session writes them. */
    cp_session *s = cp_session_new();
    cp_report *r = cp_session_report(s);
    snprintf(r->date, sizeof r->date, "2026-01-01T00:00:00Z");
    snprintf(r->profile, sizeof r->profile, "exec");
    cr_assert_eq(cp_session_add_sink(s, cp_sink_traces(out)), 0);
    cr_assert_eq(cp_session_add_sink(s, cp_sink_report(out)), 0);
    cr_assert_eq(cp_session_add_case(s, &c), 0, "%s", cp_last_error());
    cr_assert_eq(cp_session_close(s), 0, "%s", cp_last_error());
    cp_session_free(s);
    put_files(f, out);
    fclose(f);
    return text;
}

/* A fresh run's directories: the followed one, the reports' and the
 * follower's spill. */
typedef struct run_dirs {
    char live[260], out[260], spill[260];
} run_dirs;

static void new_run(run_dirs *d)
{
    static int runs;
    char dir[200];
    snprintf(dir, sizeof dir, "%s/run%d", base, runs++);
    snprintf(d->live, sizeof d->live, "%s/proc", dir);
    snprintf(d->out, sizeof d->out, "%s/out", dir);
    snprintf(d->spill, sizeof d->spill, "%s/spill", dir);
    cr_assert_eq(mkdir(dir, 0755), 0);
    cr_assert_eq(mkdir(d->live, 0755), 0);
    cr_assert_eq(mkdir(d->spill, 0755), 0);
}

/*
 * The judgement through follower `f` (freed here) on d->live, then today's
 * reader's on the same directory, after `restore` (when set) has its files
 * copied over the followed ones. Returns whether the two agree, the first
 * difference in `diff`; *records, *during and `why` as the follower's
 * judgement said.
 */
static bool compare(const run_dirs *d, cp_follower *f, const cp_expect_list *list, uint64_t keep,
                    const char *restore, uint64_t *records, uint64_t *during, char *why,
                    size_t why_size, char *diff, size_t diff_size)
{
    char *followed = judged(d->live, f, list, keep, d->out, records, during, why, why_size);
    cp_follower_free(f);
    sh("rm -rf '%s'%s", d->out, "");
    if (restore)
        sh("cp '%s'/* '%s'/", restore, d->live);
    uint64_t all = 0, none = 0;
    char no_why[16];
    char *after = judged(d->live, NULL, list, keep, d->out, &all, &none, no_why, sizeof no_why);
    bool same = strcmp(followed, after) == 0;
    if (!same)
        tt_first_difference(followed, after, diff, diff_size);
    free(followed);
    free(after);
    return same;
}

/*
 * One comparison: `src`'s files written into a fresh directory while a
 * follower follows it, judged through the follower, then by today's reader
 * on the same directory holding the whole files (the control's dropped
 * chunk put back first).
 */
static bool agree(const char *src, const cp_expect_list *list, uint64_t keep, unsigned seed,
                  bool drop, uint64_t *records, uint64_t *during, char *why, size_t why_size,
                  char *diff, size_t diff_size)
{
    run_dirs d;
    new_run(&d);
    cp_follower *f = NULL;
    cr_assert_eq(cp_follower_new(&f, d.live, keep, d.spill), 0);
    write_live(src, d.live, f, seed, drop);
    return compare(&d, f, list, keep, src, records, during, why, why_size, diff, diff_size);
}

Test(follow, every_recorded_trace_read_while_written_gives_the_same)
{
    glob_t g = tt_recorded();
    cr_assert_geq(g.gl_pathc, 15, "the recorded exec traces are missing (%zu)", g.gl_pathc);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *path = g.gl_pathv[i];
        char jdir[200], rdir[200];
        snprintf(jdir, sizeof jdir, "%s/j%zu", base, i);
        snprintf(rdir, sizeof rdir, "%s/r%zu", base, i);
        cr_assert_eq(mkdir(jdir, 0755), 0);
        cr_assert_eq(mkdir(rdir, 0755), 0);
        size_t records = write_forms(path, jdir, rdir);
        cp_expect_list list;
        expectations_of(path, &list);
        /* Held (the default), and streamed past a third of the records. */
        uint64_t keeps[2] = {0, records / 3 + 1};
        for (int form = 0; form < 2; form++)
            for (int k = 0; k < 2; k++) {
                uint64_t read = 0, during = 0;
                char why[512] = "", diff[512] = "";
                bool same =
                    agree(form ? rdir : jdir, &list, keeps[k], (unsigned)(i * 4 + form * 2 + k),
                          false, &read, &during, why, sizeof why, diff, sizeof diff);
                cr_expect(same, "%s (%s, %s): %s", path, form ? "rec" : "JSON lines",
                          k ? "streamed" : "held", diff);
                /* Everything was read while "the program ran", but a rec
                 * file's records past those to hold, which are read after
                 * it, and said so. */
                if (form && k) {
                    cr_expect_eq(during, 0, "%s: %llu", path, (unsigned long long)during);
                    cr_expect_not_null(strstr(why, "past the "), "%s: %s", path, why);
                } else {
                    cr_expect_eq(during, read, "%s (%d, %d): %llu of %llu: %s", path, form, k,
                                 (unsigned long long)during, (unsigned long long)read, why);
                    cr_expect_str_eq(why, "", "%s", path);
                }
            }
        cp_expect_list_free(&list);
    }
    globfree(&g);
}

/* BASE/j and BASE/r, for a trace's files in each form. */
static void make_form_dirs(char *jdir, char *rdir, size_t size)
{
    snprintf(jdir, size, "%s/j", base);
    snprintf(rdir, size, "%s/r", base);
    cr_assert_eq(mkdir(jdir, 0755), 0);
    cr_assert_eq(mkdir(rdir, 0755), 0);
}

/* The control: a chunk lost on the way makes the follower's judgement
 * differ from the whole files', and the comparison says where. */
Test(follow, a_dropped_chunk_is_seen)
{
    char jdir[200], rdir[200];
    make_form_dirs(jdir, rdir, sizeof jdir);
    const char *path = CUPROOF_FIXTURES "/exec-h100/streams-graph-nvtx.proc.jsonl";
    write_forms(path, jdir, rdir);
    cp_expect_list list;
    expectations_of(path, &list);
    uint64_t read = 0, during = 0;
    char why[512] = "", diff[512] = "";
    cr_expect_not(
        agree(jdir, &list, 0, 7, true, &read, &during, why, sizeof why, diff, sizeof diff),
        "a dropped chunk went unseen");
    cr_expect_neq(diff[0], '\0');
    cp_expect_list_free(&list);
}

/* The three processes of exec/program (each with work on stream 13 of
 * context 1: pids 4242 and 4250 on device 0, 4251 on device 1), with
 * names as NAME records would give them: 4242 names its stream 13, 4251
 * names a stream 13 of device 0, where it has no work. Written in both
 * forms into jdir and rdir. */
static void write_named_program(const char *jdir, const char *rdir)
{
    cp_trace t;
    named_program_read(&t);
    for (uint32_t p = 0; p < 3; p++) {
        char file[700];
        snprintf(file, sizeof file, "%s/gpu-1.%u.proc.jsonl", jdir, t.processes[p].pid);
        cr_assert_eq(proc_lines_write(file, &t, p), 0, "%s", cp_last_error());
        snprintf(file, sizeof file, "%s/gpu-1.%u.proc.cprec", rdir, t.processes[p].pid);
        cr_assert_eq(proc_rec_write(file, &t, p), 0, "%s", cp_last_error());
    }
    cp_trace_free(&t);
}

/*
 * The names a program gave its streams reach the judgement through the
 * follower as through today's reader, in both forms, held and streamed:
 * the same table (each name under its process's index among all the
 * files), the same lane labels in report.html and the Perfetto file. And
 * not by accident: the followed judgement holds 4242's name for its own
 * stream, and 4251's name for a stream of device 0 only.
 */
Test(follow, stream_names_reach_the_judgement)
{
    char jdir[200], rdir[200];
    make_form_dirs(jdir, rdir, sizeof jdir);
    write_named_program(jdir, rdir);
    cp_expect_list list = {0};
    cr_assert_eq(cp_expect_parse("kernels >= 1", 1, &list), 0);
    for (int form = 0; form < 2; form++)
        for (uint64_t keep = 0; keep < 5; keep += 4) {
            uint64_t read = 0, during = 0;
            char why[512] = "", diff[512] = "";
            cr_expect(agree(form ? rdir : jdir, &list, keep, (unsigned)(form * 2 + keep), false,
                            &read, &during, why, sizeof why, diff, sizeof diff),
                      "%s, keep %llu: %s", form ? "rec" : "JSON lines", (unsigned long long)keep,
                      diff);
        }
    /* One followed judgement, looked at. */
    run_dirs d;
    new_run(&d);
    cp_follower *f = NULL;
    cr_assert_eq(cp_follower_new(&f, d.live, 0, d.spill), 0);
    write_live(jdir, d.live, f, 11, false);
    uint64_t records = 0, during = 0;
    char why[512];
    char *text = judged(d.live, f, &list, 0, d.out, &records, &during, why, sizeof why);
    cp_follower_free(f);
    cr_expect_not_null(strstr(text, "stream name 0 0 1 13 copy \"in\" <&>\n"), "%s", text);
    cr_expect_not_null(strstr(text, "stream name 2 0 1 13 not on GPU 1\n"), "%s", text);
    cr_expect_null(strstr(text, "stream name 1 "), "4250 named nothing: %s", text);
    free(text);
    cp_expect_list_free(&list);
}

/* `path`'s bytes into `to` (created), and from byte `from` on after
 * `insert` when it is set. */
static void copy_file(const char *path, const char *to, const char *insert, size_t from)
{
    FILE *in = fopen(path, "rb"), *out = fopen(to, "wb");
    cr_assert(in && out, "%s, %s", path, to);
    char block[65536];
    size_t got, at = 0;
    while ((got = fread(block, 1, sizeof block, in)) > 0) {
        for (size_t i = 0; i < got; i++, at++) {
            if (insert && at == from)
                fputs(insert, out);
            fputc(block[i], out);
        }
    }
    fclose(in);
    cr_assert_eq(fclose(out), 0);
}

/* The byte after line `n` of `path` (counting from 1). */
static size_t after_line(const char *path, int n)
{
    FILE *in = fopen(path, "rb");
    cr_assert_not_null(in);
    size_t at = 0;
    int c;
    while (n > 0 && (c = fgetc(in)) != EOF) {
        at++;
        n -= c == '\n';
    }
    fclose(in);
    return at;
}

/*
 * Records count as read while the program ran only once a later poll
 * shows it ran past them: a file that appears whole and is read by the
 * last poll (a program's last act, read as it exits) counts as read after
 * it; polled again (the program still ran), as read during it.
 */
Test(follow, what_the_last_poll_read_counts_as_after_the_program)
{
    const char *a = CUPROOF_FIXTURES "/exec-h100/streams-graph-nvtx.proc.jsonl";
    cp_expect_list list;
    expectations_of(a, &list);
    for (int again = 0; again < 2; again++) {
        run_dirs d;
        new_run(&d);
        cp_follower *f = NULL;
        cr_assert_eq(cp_follower_new(&f, d.live, 0, d.spill), 0);
        cp_follower_poll(f);
        char file[400];
        snprintf(file, sizeof file, "%s/vm.1331.proc.jsonl", d.live);
        copy_file(a, file, NULL, 0);
        while (cp_follower_poll(f))
            ;
        if (again)
            cp_follower_poll(f);
        uint64_t records = 0, during = 0;
        char why[512] = "", diff[512] = "";
        cr_expect(
            compare(&d, f, &list, 0, NULL, &records, &during, why, sizeof why, diff, sizeof diff),
            "%s", diff);
        cr_expect_gt(records, 100);
        cr_expect_eq(during, again ? records : 0, "polled %s: %llu of %llu", again ? "again" : "once",
                     (unsigned long long)during, (unsigned long long)records);
    }
    cp_expect_list_free(&list);
}

/*
 * A file the follower cannot serve is read after the program by today's
 * reader, in its place: one replaced while the program ran (another file
 * renamed over it), one cut shorter than what was read of it, one with a
 * line that does not parse (today's error then, naming the file and the
 * line). The judgement is today's each time, and the report says why.
 */
Test(follow, a_file_it_cannot_follow_is_read_after_the_program)
{
    const char *a = CUPROOF_FIXTURES "/exec-h100/streams-graph-nvtx.proc.jsonl";
    const char *b = CUPROOF_FIXTURES "/exec-h100/exit-early.proc.jsonl";
    cp_expect_list list;
    expectations_of(a, &list);
    static const char *const why_words[] = {"replaced while the program ran",
                                            "shorter than what was read", "not valid JSON"};
    for (int k = 0; k < 3; k++) {
        run_dirs d;
        new_run(&d);
        cp_follower *f = NULL;
        cr_assert_eq(cp_follower_new(&f, d.live, 0, d.spill), 0);
        char file[400], other[400];
        snprintf(file, sizeof file, "%s/vm.1331.proc.jsonl", d.live);
        snprintf(other, sizeof other, "%s/next.tmp", d.live);
        if (k == 2) /* a bad line after the 40th */
            copy_file(a, file, "{\"k\":\"kernel\",broken}\n", after_line(a, 40));
        else
            copy_file(a, file, NULL, 0);
        while (cp_follower_poll(f))
            ;
        cp_follower_poll(f);
        if (k == 0) { /* both files exist at once: another inode */
            copy_file(b, other, NULL, 0);
            cr_assert_eq(rename(other, file), 0);
        } else if (k == 1) {
            struct stat st;
            cr_assert_eq(stat(file, &st), 0);
            cr_assert_eq(truncate(file, st.st_size / 2), 0);
        }
        uint64_t records = 0, during = 0;
        char why[512] = "", diff[512] = "";
        cr_expect(
            compare(&d, f, &list, 0, NULL, &records, &during, why, sizeof why, diff, sizeof diff),
            "%s: %s", why_words[k], diff);
        cr_expect_not_null(strstr(why, why_words[k]), "%s: %s", why_words[k], why);
        cr_expect_not_null(strstr(why, "vm.1331.proc.jsonl"), "%s: %s", why_words[k], why);
        cr_expect_eq(during, 0, "%s: %llu", why_words[k], (unsigned long long)during);
    }
    cp_expect_list_free(&list);
}
