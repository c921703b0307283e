/*
 * The streaming trace format (cuproof.rec/1) and the streaming analysis:
 * every recorded fixture gives the same metrics through the whole-trace
 * path and through a rec file read in one pass; a round trip keeps every
 * field; cut, malformed and unknown input is refused or tolerated as
 * documented, naming the byte.
 */
#include <cuproof/internal/tracefile.h>
#include <cuproof/error.h>
#include <cuproof/internal/proc.h>
#include <cuproof/internal/rec.h>

#include "stream_equal.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/cuproof-rec-XXXXXX";

static void make_dir(void)
{
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.')
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

TestSuite(rec, .init = make_dir, .fini = remove_dir);

static const cp_timeline_opts h100 = {.max_concurrent_kernels = 128};

static void expect_same_activity(const cp_activity *a, const cp_activity *b, size_t i)
{
    cr_expect(a->kind == b->kind && a->start == b->start && a->end == b->end &&
                  a->device == b->device && a->context == b->context && a->stream == b->stream &&
                  a->process == b->process && a->correlation == b->correlation &&
                  a->graph_id == b->graph_id && a->graph_node == b->graph_node &&
                  a->bytes == b->bytes && a->copy_dir == b->copy_dir && a->src == b->src &&
                  a->dst == b->dst && a->async == b->async && a->depth == b->depth &&
                  a->thread == b->thread &&
                  memcmp(a->grid, b->grid, sizeof a->grid) == 0 &&
                  memcmp(a->block, b->block, sizeof a->block) == 0,
              "activity %zu differs", i);
    if (a->name && b->name)
        cr_expect_str_eq(a->name, b->name, "activity %zu", i);
    else
        cr_expect(a->name == b->name, "activity %zu: one name is missing", i);
}

/* The stream names of two traces: the same streams, the same names, in
 * the same order. */
static void expect_same_names(const cp_trace *a, const cp_trace *b)
{
    cr_assert_eq(a->nstream_names, b->nstream_names);
    for (size_t i = 0; i < a->nstream_names; i++) {
        const cp_stream_name *x = &a->stream_names[i], *y = &b->stream_names[i];
        cr_expect(x->process == y->process && x->device == y->device &&
                      x->context == y->context && x->stream == y->stream,
                  "stream name %zu: %u/%u/%u/%u against %u/%u/%u/%u", i, x->process, x->device,
                  x->context, x->stream, y->process, y->device, y->context, y->stream);
        cr_expect_str_eq(x->name, y->name, "stream name %zu", i);
    }
}

static void expect_same_trace(const cp_trace *a, const cp_trace *b)
{
    cr_assert_eq(a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        expect_same_activity(&a->items[i], &b->items[i], i);
    cr_expect_eq(a->dropped_records, b->dropped_records);
    cr_expect_eq(a->renamed_kernels, b->renamed_kernels);
    cr_expect_eq(a->has_legacy_stream, b->has_legacy_stream);
    cr_expect_eq(a->legacy_device, b->legacy_device);
    cr_expect_eq(a->legacy_context, b->legacy_context);
    cr_expect_eq(a->legacy_stream, b->legacy_stream);
    cr_assert_eq(a->nprocesses, b->nprocesses);
    for (size_t i = 0; i < a->nprocesses; i++) {
        const cp_process *p = &a->processes[i], *q = &b->processes[i];
        cr_expect(p->pid == q->pid && p->ppid == q->ppid && p->ended == q->ended &&
                      p->last_ns == q->last_ns && p->dropped == q->dropped &&
                      p->zero_timestamps == q->zero_timestamps,
                  "process %zu", i);
        cr_expect_str_eq(p->host, q->host);
        cr_expect_str_eq(p->command, q->command);
        cr_expect_str_eq(p->why, q->why);
    }
    expect_same_names(a, b);
}

/* One trace through both paths: written as a rec file, read back whole
 * (every field kept) and analysed in one pass with the default chunk and
 * with chunks small enough to spill (the same metrics). */
static void both_paths(const cp_trace *t, const char *label)
{
    char path[600];
    snprintf(path, sizeof path, "%s/t.cprec", dir);
    cr_assert_eq(cp_rec_write_trace(path, t), 0, "%s: %s", label, cp_last_error());
    cp_trace back;
    cp_trace_init(&back);
    bool truncated = true;
    cr_assert_eq(cp_rec_read_trace(path, &back, &truncated), 0, "%s: %s", label, cp_last_error());
    cr_expect_not(truncated, "%s", label);
    expect_same_trace(t, &back);
    cp_trace_free(&back);

    cp_metrics want;
    cr_assert_eq(cp_timeline_analyse(t, &h100, &want), 0);
    size_t chunks[] = {0, 1000};
    for (size_t c = 0; c < 2; c++) {
        cp_stream_opts o = {.timeline = h100, .chunk_records = chunks[c]};
        cp_metrics got;
        cp_trace meta;
        cp_trace_init(&meta);
        char why[256];
        cr_assert_eq(cp_rec_analyse(path, &o, &got, &meta, &truncated, why, sizeof why), 0,
                     "%s: %s", label, cp_last_error());
        cr_expect_not(truncated, "%s: %s", label, why);
        cr_expect_eq(meta.n, 0, "the activities are analysed, not kept");
        cr_expect_eq(meta.dropped_records, t->dropped_records);
        cr_expect_eq(meta.nprocesses, t->nprocesses);
        expect_same_names(t, &meta);
        char how[160];
        snprintf(how, sizeof how, "%s, chunks of %zu", label, chunks[c]);
        expect_same_metrics(&want, &got, how);
        cp_metrics_free(&got);
        cp_trace_free(&meta);
    }
    cp_metrics_free(&want);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Every fixture recorded on a GPU: case traces (each variant), exec'd
 * programs' merged traces and per-process files. */
Test(rec, every_fixture_analyses_the_same_through_both_paths)
{
    const char *dirs[] = {CUPROOF_FIXTURES, CUPROOF_FIXTURES "/exec-h100"};
    size_t traces = 0, activities = 0;
    for (size_t d = 0; d < 2; d++) {
        DIR *dp = opendir(dirs[d]);
        cr_assert_not_null(dp, "%s", dirs[d]);
        struct dirent *e;
        while ((e = readdir(dp))) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
            if (ends_with(e->d_name, ".trace.json")) {
                cp_trace_file f;
                cr_assert_eq(cp_trace_file_read(path, &f), 0, "%s: %s", path, cp_last_error());
                for (size_t i = 0; i < f.nvariants; i++) {
                    char label[1200];
                    snprintf(label, sizeof label, "%s %s", e->d_name, f.variants[i].name);
                    both_paths(&f.variants[i].trace, label);
                    traces++;
                    activities += f.variants[i].trace.n;
                }
                cp_trace_file_free(&f);
            } else if (ends_with(e->d_name, ".proc.jsonl")) {
                cp_trace t;
                cp_trace_init(&t);
                cr_assert_eq(cp_proc_read(path, &t), 0, "%s: %s", path, cp_last_error());
                both_paths(&t, e->d_name);
                traces++;
                activities += t.n;
                cp_trace_free(&t);
            }
        }
        closedir(dp);
    }
    /* Not vacuous: the fixtures hold over sixty traced variants and
     * programs and some forty-five thousand records. */
    cr_expect_geq(traces, 60, "%zu traces", traces);
    cr_expect_geq(activities, 40000, "%zu activities", activities);
}

/* A trace with every field set, and the edge values: no name, a reversed
 * record, a long name, the largest ids, processes with how they ended. */
static void rich_trace(cp_trace *t)
{
    cp_trace_init(t);
    cp_process p = {.pid = 4242, .ppid = 1, .ended = true, .last_ns = 99999999999ull,
                    .dropped = 3, .zero_timestamps = 1};
    snprintf(p.host, sizeof p.host, "gpu-host-1");
    snprintf(p.command, sizeof p.command, "python3 train.py --steps 10");
    snprintf(p.why, sizeof p.why, "exit");
    cp_trace_add_process(t, &p);
    p.pid = 4243;
    p.ended = false;
    p.why[0] = '\0';
    cp_trace_add_process(t, &p);
    static char long_name[5000];
    memset(long_name, 'k', sizeof long_name - 1);
    cp_activity k = {.kind = CP_ACT_KERNEL, .start = 1800000000000000000ull,
                     .end = 1800000000000005000ull, .device = 3, .context = UINT32_MAX,
                     .stream = 77, .process = 1, .correlation = UINT32_MAX, .graph_id = 9,
                     .graph_node = UINT64_MAX, .grid = {1024, 2, 3}, .block = {64, 1, 1},
                     .name = long_name};
    cp_trace_add(t, &k);
    cp_activity c = {.kind = CP_ACT_MEMCPY, .start = 1800000000000001000ull,
                     .end = 1800000000000000500ull, .device = 3, .context = 1, .stream = 78,
                     .bytes = UINT64_MAX, .copy_dir = CP_COPY_PTOP, .src = CP_MEM_MANAGED,
                     .dst = CP_MEM_ARRAY, .async = true, .name = "memcpy"};
    cp_trace_add(t, &c);
    cp_activity r = {.kind = CP_ACT_RANGE, .start = 1799999999999999000ull,
                     .end = 1800000000000009000ull, .depth = 4, .thread = 4294967295u,
                     .name = "step"};
    cp_trace_add(t, &r);
    cp_activity api = {.kind = CP_ACT_RUNTIME, .start = 5, .end = 6, .correlation = 1,
                       .thread = 1714126848u};
    cp_trace_add(t, &api);
    cp_activity ms = {.kind = CP_ACT_MEMSET, .start = 10, .end = 10, .bytes = 4096,
                      .name = "memset"};
    cp_trace_add(t, &ms);
    t->dropped_records = 12;
    t->renamed_kernels = 2;
    t->has_legacy_stream = true;
    t->legacy_device = 3;
    t->legacy_context = 1;
    t->legacy_stream = 7;
    /* Names (minor 4): the kernel's stream, with characters JSON and HTML
     * escape and the largest ids; the legacy stream; a stream of process
     * 0 with the kernel's stream number, which its name must not reach. */
    cp_trace_name_stream(t, &(cp_stream_name){1, 3, UINT32_MAX, 77, "copy \"in\" <&>"});
    cp_trace_name_stream(t, &(cp_stream_name){0, 3, 1, 7, "main"});
    cp_trace_name_stream(t, &(cp_stream_name){0, 3, 1, 77, "other process"});
}

Test(rec, a_round_trip_keeps_every_field)
{
    cp_trace t;
    rich_trace(&t);
    both_paths(&t, "rich");
    cp_trace_free(&t);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(*n + 1);
    cr_assert_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static void spit(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    fclose(f);
}

/* Cut at every byte: never a crash; past the header it reads as far as
 * whole records go and says it was truncated, where and after how many
 * activities; only the whole file is not truncated. */
Test(rec, a_file_cut_anywhere_is_read_as_truncated)
{
    cp_trace t;
    rich_trace(&t);
    char path[600], cut[600];
    snprintf(path, sizeof path, "%s/whole.cprec", dir);
    snprintf(cut, sizeof cut, "%s/cut.cprec", dir);
    cr_assert_eq(cp_rec_write_trace(path, &t), 0);
    size_t n;
    char *whole = slurp(path, &n);
    size_t truncated_count = 0;
    for (size_t len = 0; len <= n; len++) {
        spit(cut, whole, len);
        cp_trace back;
        cp_trace_init(&back);
        bool truncated = false;
        int rc = cp_rec_read_trace(cut, &back, &truncated);
        if (len < CP_REC_MAGIC_LEN) {
            cr_expect_eq(rc, CP_EPARSE, "length %zu", len);
            cr_expect(strstr(cp_last_error(), "not a cuproof.rec file"), "%s", cp_last_error());
        } else {
            cr_expect_eq(rc, 0, "length %zu: %s", len, cp_last_error());
            cr_expect_eq(truncated, len < n, "length %zu", len);
            cr_expect_leq(back.n, t.n);
            truncated_count += truncated;
        }
        cp_trace_free(&back);
    }
    cr_expect_eq(truncated_count, n - CP_REC_MAGIC_LEN);
    /* The reason names where: inside a record, or no end record. */
    spit(cut, whole, n - 3);
    cp_rec_reader *r;
    cr_assert_eq(cp_rec_reader_open(&r, cut), 0);
    cp_rec_item it;
    while (cp_rec_next(r, &it) > 0)
        ;
    char why[512];
    cr_expect(cp_rec_truncated(r, why, sizeof why));
    cr_expect(strstr(why, "ends inside a record at byte"), "%s", why);
    cp_rec_reader_close(r);
    free(whole);
    cp_trace_free(&t);
}

/* Writes the header and the given records (type, payload) to a file. */
static void write_records(const char *path, const uint8_t *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fwrite(CP_REC_MAGIC, 1, CP_REC_MAGIC_LEN, f);
    fwrite(bytes, 1, n, f);
    fclose(f);
}

static void expect_refused(const uint8_t *bytes, size_t n, const char *what, const char *byte)
{
    char path[600];
    snprintf(path, sizeof path, "%s/bad.cprec", dir);
    write_records(path, bytes, n);
    cp_trace t;
    cp_trace_init(&t);
    cr_expect_eq(cp_rec_read_trace(path, &t, NULL), CP_EPARSE, "%s", what);
    cr_expect(strstr(cp_last_error(), what), "%s: %s", what, cp_last_error());
    cr_expect(strstr(cp_last_error(), byte), "%s: %s", byte, cp_last_error());
    cp_trace_free(&t);
}

/* Each malformed record is refused with what is wrong and its offset. */
Test(rec, malformed_records_are_refused_naming_the_byte)
{
    /* An activity of kind 9. */
    const uint8_t kind[] = {3, 10, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_refused(kind, sizeof kind, "unknown kind", "byte 8");
    /* String 2 before string 1. */
    const uint8_t seq[] = {1, 2, 2, 'x'};
    expect_refused(seq, sizeof seq, "string record out of sequence", "byte 8");
    /* An activity named by string 5, never defined (after a good string). */
    const uint8_t name[] = {1, 2, 1, 'x', 3, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5};
    expect_refused(name, sizeof name, "string not yet defined", "byte 12");
    /* An activity of process 2 in a file that defined none. */
    const uint8_t proc[] = {3, 10, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0};
    expect_refused(proc, sizeof proc, "process not yet defined", "byte 8");
    /* An activity whose payload has a byte too many. */
    const uint8_t extra[] = {3, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_refused(extra, sizeof extra, "does not decode", "byte 8");
    /* A record claiming 2 MiB. */
    const uint8_t big[] = {3, 0x80, 0x80, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_refused(big, sizeof big, "longer than 1 MiB", "byte 8");
    /* A length of eleven continuation bytes. */
    const uint8_t varint[] = {3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1};
    expect_refused(varint, sizeof varint, "length does not decode", "byte 8");
    /* A start before time zero. */
    const uint8_t before[] = {3, 10, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};
    expect_refused(before, sizeof before, "start out of range", "byte 8");
    /* Anything after the end record. */
    const uint8_t after[] = {5, 7, 0, 0, 0, 0, 0, 0, 0, 3, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_refused(after, sizeof after, "after the end record", "byte 17");
    /* Not a rec file at all, and a major version from the future. */
    char path[600];
    snprintf(path, sizeof path, "%s/json.cprec", dir);
    spit(path, "{\"schema\":1}", 12);
    cr_expect_eq(cp_rec_reader_open(&(cp_rec_reader *){NULL}, path), CP_EPARSE);
    cr_expect(strstr(cp_last_error(), "not a cuproof.rec file"));
    cr_expect_not(cp_rec_is_rec_file(path));
    spit(path, "CUPREC\x02\x00", 8);
    cr_expect_eq(cp_rec_reader_open(&(cp_rec_reader *){NULL}, path), CP_EPARSE);
    cr_expect(strstr(cp_last_error(), "major version 2"), "%s", cp_last_error());
}

/* A stream name record (minor 4) that does not decode, names a process or
 * a string the file has not defined, is refused as other bad records
 * are, naming the byte; one cut short at the end of the file is the
 * file's truncation (a_file_cut_anywhere_is_read_as_truncated cuts the
 * rich trace's names at every byte too). */
Test(rec, a_bad_stream_name_record_is_refused_naming_the_byte)
{
    /* Process 2 in a file that defined none (after the string "x"). */
    const uint8_t proc[] = {1, 2, 1, 'x', 7, 5, 2, 0, 1, 13, 1};
    expect_refused(proc, sizeof proc, "stream name record does not decode or names no process",
                   "byte 12");
    /* Its name is string 5, never defined; string 0 is no name at all. */
    const uint8_t name[] = {1, 2, 1, 'x', 7, 5, 0, 0, 1, 13, 5};
    expect_refused(name, sizeof name, "names a string not yet defined", "byte 12");
    const uint8_t none[] = {7, 5, 0, 0, 1, 13, 0};
    expect_refused(none, sizeof none, "names a string not yet defined", "byte 8");
    /* A byte too many, and fields running past the payload's end. */
    const uint8_t extra[] = {1, 2, 1, 'x', 7, 6, 0, 0, 1, 13, 1, 0};
    expect_refused(extra, sizeof extra, "stream name record does not decode", "byte 12");
    const uint8_t shrt[] = {1, 2, 1, 'x', 7, 3, 0, 0, 1};
    expect_refused(shrt, sizeof shrt, "stream name record does not decode", "byte 12");
    /* A stream id past 32 bits. */
    const uint8_t wide[] = {1, 2, 1, 'x', 7, 9, 0, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x10, 1};
    expect_refused(wide, sizeof wide, "stream name record does not decode", "byte 12");
    /* Cut inside its payload at the end of the file: truncated, read as
     * far as it goes, no name. */
    char path[600];
    snprintf(path, sizeof path, "%s/cut-name.cprec", dir);
    const uint8_t cut[] = {1, 2, 1, 'x', 7, 5, 0, 0, 1};
    write_records(path, cut, sizeof cut);
    cp_trace t;
    cp_trace_init(&t);
    bool truncated = false;
    cr_assert_eq(cp_rec_read_trace(path, &t, &truncated), 0, "%s", cp_last_error());
    cr_expect(truncated);
    cr_expect_eq(t.nstream_names, 0);
    cp_trace_free(&t);
}

/* Names written with a trace read back into its table, each for its own
 * process, device, context and stream: a case's trace (no process record)
 * names process 0; a later name renames; a name of a process the file has
 * not described is refused by the writer, which goes on. */
Test(rec, stream_names_read_back_for_their_own_streams)
{
    cp_trace t;
    rich_trace(&t);
    char path[600];
    snprintf(path, sizeof path, "%s/names.cprec", dir);
    cr_assert_eq(cp_rec_write_trace(path, &t), 0, "%s", cp_last_error());
    size_t n;
    char *bytes = slurp(path, &n);
    cr_expect_eq(bytes[7], 5, "minor version 5");
    free(bytes);
    cp_trace back;
    cp_trace_init(&back);
    cr_assert_eq(cp_rec_read_trace(path, &back, NULL), 0, "%s", cp_last_error());
    cr_expect_str_eq(cp_trace_stream_name(&back, 1, 3, UINT32_MAX, 77), "copy \"in\" <&>");
    cr_expect_str_eq(cp_trace_stream_name(&back, 0, 3, 1, 77), "other process");
    cr_expect_null(cp_trace_stream_name(&back, 1, 3, 1, 77), "another context");
    cr_expect_null(cp_trace_stream_name(&back, 0, 3, UINT32_MAX, 77), "another process");
    /* The reader hands a name on as an item of its own, the process by
     * its index in the file. */
    cp_rec_reader *r;
    cr_assert_eq(cp_rec_reader_open(&r, path), 0);
    cp_rec_item it;
    size_t names = 0;
    while (cp_rec_next(r, &it) > 0)
        if (it.type == CP_REC_STREAM_NAME) {
            if (names++ == 0) {
                cr_expect_eq(it.process_index, 1);
                cr_expect_eq(it.stream_name.stream, 77);
                cr_expect_str_eq(it.stream_name.name, "copy \"in\" <&>");
            }
        }
    cr_expect_eq(names, 3);
    cp_rec_reader_close(r);
    cp_trace_free(&back);
    cp_trace_free(&t);

    /* A case's trace: no process, its streams process 0's; renamed. */
    cp_trace_init(&t);
    cp_activity k = {.kind = CP_ACT_KERNEL, .start = 1, .end = 2, .context = 1, .stream = 13,
                     .name = "k"};
    cr_assert_eq(cp_trace_add(&t, &k), 0);
    cp_rec_writer *w;
    cr_assert_eq(cp_rec_writer_open(&w, path), 0);
    cr_expect_eq(cp_rec_put_stream_name(w, &(cp_stream_name){0, 0, 1, 13, "first"}), 0);
    cr_expect_eq(cp_rec_put_stream_name(w, &(cp_stream_name){1, 0, 1, 13, "nobody's"}), CP_EINVAL);
    cr_expect(strstr(cp_last_error(), "process 1"), "%s", cp_last_error());
    cr_expect_eq(cp_rec_put_stream_name(w, &(cp_stream_name){0, 0, 1, 14, ""}), 0);
    cr_expect_eq(cp_rec_put(w, &k), 0);
    cr_expect_eq(cp_rec_put_stream_name(w, &(cp_stream_name){0, 0, 1, 13, "copy-in"}), 0);
    cr_assert_eq(cp_rec_writer_close(w, NULL), 0, "the refused name spoilt nothing: %s",
                 cp_last_error());
    cp_trace_init(&back);
    bool truncated = true;
    cr_assert_eq(cp_rec_read_trace(path, &back, &truncated), 0, "%s", cp_last_error());
    cr_expect_not(truncated);
    cr_expect_eq(back.nprocesses, 0);
    cr_expect_eq(back.n, 1);
    cr_expect_eq(back.nstream_names, 1, "the empty name names nothing");
    cr_expect_str_eq(cp_trace_stream_name(&back, 0, 0, 1, 13), "copy-in", "the last name holds");
    cp_trace_free(&back);
    cp_trace_free(&t);
}

/* A file of a writer before minor 4 has no name record: it reads as
 * before, every stream by its number (a minor-3 file written here, the
 * recorded minor-2 and minor-1 files). */
Test(rec, a_file_before_stream_names_reads_as_before)
{
    cp_trace t;
    rich_trace(&t);
    t.nstream_names = 0;
    char path[600];
    snprintf(path, sizeof path, "%s/minor3.cprec", dir);
    cr_assert_eq(cp_rec_write_trace(path, &t), 0, "%s", cp_last_error());
    size_t n;
    char *bytes = slurp(path, &n);
    bytes[7] = 3;
    spit(path, bytes, n);
    free(bytes);
    cp_trace back;
    cp_trace_init(&back);
    bool truncated = true;
    cr_assert_eq(cp_rec_read_trace(path, &back, &truncated), 0, "%s", cp_last_error());
    cr_expect_not(truncated);
    expect_same_trace(&t, &back);
    cr_expect_eq(back.nstream_names, 0);
    cp_trace_free(&back);
    cp_trace_free(&t);
    const char *old[] = {CUPROOF_FIXTURES "/exec-h100x2-ddp/overlap.cprec",
                         CUPROOF_FIXTURES "/exec-h100-threads/nvtx-ranges.proc.cprec"};
    for (size_t i = 0; i < 2; i++) {
        cp_trace_init(&back);
        cr_assert_eq(cp_rec_read_trace(old[i], &back, NULL), 0, "%s: %s", old[i],
                     cp_last_error());
        cr_expect_gt(back.n, 0, "%s", old[i]);
        cr_expect_eq(back.nstream_names, 0, "%s", old[i]);
        cp_trace_free(&back);
    }
}

/* A record type of a later minor version is skipped by its length; an end
 * record that counts other activities than the file holds says truncated. */
Test(rec, unknown_records_are_skipped_and_counts_are_checked)
{
    char path[600];
    snprintf(path, sizeof path, "%s/later.cprec", dir);
    /* type 42 with 3 bytes, one activity [0,0), an end record counting 2. */
    const uint8_t b[] = {42, 3, 1, 2, 3, 3, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                         5, 7, 2, 0, 0, 0, 0, 0, 0};
    write_records(path, b, sizeof b);
    cp_trace t;
    cp_trace_init(&t);
    bool truncated = false;
    cr_assert_eq(cp_rec_read_trace(path, &t, &truncated), 0, "%s", cp_last_error());
    cr_expect_eq(t.n, 1);
    cr_expect(truncated, "the end record counts 2, the file holds 1");
    cp_trace_free(&t);
}

Test(rec, an_unwritable_path_is_named)
{
    cp_rec_writer *w;
    cr_expect_eq(cp_rec_writer_open(&w, "/nonexistent-dir/x.cprec"), CP_EIO);
    cr_expect_null(w);
    cr_expect(strstr(cp_last_error(), "/nonexistent-dir/x.cprec"), "%s", cp_last_error());
}

/* A writer abandoned mid-trace (a process that died) leaves a file the
 * reader calls truncated, with every activity written before. */
Test(rec, an_abandoned_writer_leaves_a_truncated_file)
{
    char path[600];
    snprintf(path, sizeof path, "%s/died.cprec", dir);
    cp_rec_writer *w;
    cr_assert_eq(cp_rec_writer_open(&w, path), 0);
    for (uint64_t i = 0; i < 1000; i++) {
        cp_activity a = {.kind = CP_ACT_KERNEL, .start = 1000 * i, .end = 1000 * i + 500,
                         .stream = (uint32_t)i % 7, .name = i % 2 ? "a" : "b"};
        cr_assert_eq(cp_rec_put(w, &a), 0);
    }
    cp_rec_writer_abandon(w);
    cp_metrics m;
    bool truncated = false;
    char why[256];
    cr_assert_eq(cp_rec_analyse(path, NULL, &m, NULL, &truncated, why, sizeof why), 0);
    cr_expect(truncated);
    cr_expect(strstr(why, "without its end record after 1000 activities"), "%s", why);
    cr_expect_eq(m.kernels, 1000);
    cr_expect_eq(m.kernel_busy_ns, 500000);
    cp_metrics_free(&m);
}

/* Memory stays bounded: 200,000 activities through chunks of 4096 spill
 * 48 runs, and the merge gives the whole-trace answer. */
Test(rec, a_long_trace_spills_runs_and_merges_them)
{
    cp_trace t;
    cp_trace_init(&t);
    uint32_t seed = 7;
    for (uint64_t i = 0; i < 200000; i++) {
        seed = seed * 1103515245u + 12345u;
        cp_activity a = {.kind = seed % 3 ? CP_ACT_KERNEL : CP_ACT_MEMCPY,
                         .start = 100 * i + seed % 5000, .stream = seed % 40,
                         .copy_dir = seed % 2 ? CP_COPY_HTOD : CP_COPY_DTOH,
                         .src = CP_MEM_PINNED, .dst = CP_MEM_DEVICE, .async = true};
        a.end = a.start + 200 + seed % 20000;
        cr_assert_eq(cp_trace_add(&t, &a), 0);
    }
    cp_metrics want;
    cr_assert_eq(cp_timeline_analyse(&t, NULL, &want), 0);
    cp_stream *s;
    cp_stream_opts o = {.chunk_records = 4096};
    cr_assert_eq(cp_stream_new(&s, &o), 0);
    for (size_t i = 0; i < t.n; i++)
        cr_assert_eq(cp_stream_add(s, &t.items[i]), 0);
    cr_expect_eq(cp_stream_runs(s), 200000 / 4096);
    cp_metrics got;
    cr_assert_eq(cp_stream_finish(s, &got), 0);
    expect_same_metrics(&want, &got, "200,000 in chunks of 4096");
    cr_expect_gt(got.peak_concurrent_kernels, 10, "the trace does overlap");
    /* Finishing twice is refused, not a second answer. */
    cp_metrics again;
    cr_expect_eq(cp_stream_finish(s, &again), CP_EINVAL);
    cp_stream_free(s);
    cp_metrics_free(&want);
    cp_metrics_free(&got);
    cp_trace_free(&t);
}

static int collect(void *ctx, const cp_activity *a)
{
    return cp_trace_add(ctx, a);
}

static int activity_order(const void *x, const void *y)
{
    const cp_activity *a = x, *b = y;
#define CMP(f)                                                                                    \
    if (a->f != b->f)                                                                             \
        return a->f < b->f ? -1 : 1;
    CMP(process) CMP(start) CMP(end) CMP(kind) CMP(device) CMP(context) CMP(stream)
    CMP(correlation) CMP(depth)
#undef CMP
    return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

/* A program's per-process files streamed (cp_proc_stream_dir) hand out the
 * activities that reading them whole gives, ranges with their depths
 * included, and the same processes; the trace they fill keeps no activity.
 * Through a rec file, the same metrics. */
Test(rec, per_process_files_stream_what_reading_them_whole_gives)
{
    const char *dirs[] = {CUPROOF_FIXTURES "/exec/program", CUPROOF_FIXTURES "/exec-h100"};
    for (size_t d = 0; d < 2; d++) {
        cp_trace whole, meta, streamed;
        cp_trace_init(&whole);
        cp_trace_init(&meta);
        cp_trace_init(&streamed);
        size_t n1 = 0, n2 = 0;
        cr_assert_eq(cp_proc_read_dir(dirs[d], &whole, &n1), 0, "%s", cp_last_error());
        cr_assert_eq(cp_proc_stream_dir(dirs[d], &meta, &n2, collect, &streamed), 0, "%s",
                     cp_last_error());
        cr_expect_eq(n1, n2);
        cr_expect_gt(n1, 0);
        cr_expect_eq(meta.n, 0, "the streamed trace keeps no activity");
        cr_assert_eq(streamed.n, whole.n, "%s", dirs[d]);
        qsort(whole.items, whole.n, sizeof *whole.items, activity_order);
        qsort(streamed.items, streamed.n, sizeof *streamed.items, activity_order);
        for (size_t i = 0; i < whole.n; i++)
            expect_same_activity(&whole.items[i], &streamed.items[i], i);
        size_t ranges = 0;
        for (size_t i = 0; i < whole.n; i++)
            ranges += whole.items[i].kind == CP_ACT_RANGE;
        cr_expect_gt(ranges, 0, "%s: ranges are compared too", dirs[d]);
        cr_assert_eq(meta.nprocesses, whole.nprocesses);
        for (size_t i = 0; i < meta.nprocesses; i++) {
            cr_expect_eq(meta.processes[i].pid, whole.processes[i].pid);
            cr_expect_eq(meta.processes[i].ended, whole.processes[i].ended);
            cr_expect_eq(meta.processes[i].last_ns, whole.processes[i].last_ns);
        }
        cr_expect_eq(meta.dropped_records, whole.dropped_records);
        streamed.nprocesses = 0;
        for (size_t i = 0; i < meta.nprocesses; i++)
            cp_trace_add_process(&streamed, &meta.processes[i]);
        both_paths(&streamed, dirs[d]);
        cp_trace_free(&whole);
        cp_trace_free(&meta);
        cp_trace_free(&streamed);
    }
}
