/* Per-process trace files (cuproof.proc/1): what each record becomes,
 * markers paired and nested, truncated processes, malformed files named
 * by file and line, and several processes merged into one trace whose
 * lanes stay apart. */
#include <cuproof/error.h>
#include <cuproof/metrics.h>
#include <cuproof/internal/capture.h>
#include <cuproof/internal/proc.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM CUPROOF_FIXTURES "/exec/program"
#define PARENT PROGRAM "/gpu-1.4242.proc.jsonl"
#define TRUNCATED PROGRAM "/gpu-1.4251.proc.jsonl"

/* The parent's origin_ns: its offsets are added to it. */
static const uint64_t O0 = 1795335209664000000ull;

/* A header with origin 1000000, before the lines of each in-memory test. */
#define HEADER                                                                                    \
    "{\"schema\":\"cuproof.proc/1\",\"host\":\"h\",\"pid\":7,\"ppid\":1,\"command\":\"a.out\","  \
    "\"origin_ns\":\"1000000\"}\n"
#define END "{\"k\":\"end\",\"t\":99000,\"records\":0,\"dropped\":0,\"zero_timestamps\":0,\"why\":\"exit\"}\n"
#define KERNEL(s, e, str) \
    "{\"k\":\"kernel\",\"s\":" #s ",\"e\":" #e ",\"dev\":0,\"ctx\":1,\"str\":" #str ",\"cor\":1," \
    "\"grid\":[1,1,1],\"block\":[1,1,1],\"graph\":0,\"node\":0,\"name\":\"k\"}\n"
#define MARKER(t, id, phase, name) \
    "{\"k\":\"marker\",\"t\":" #t ",\"id\":" #id ",\"phase\":\"" phase "\",\"name\":\"" name     \
    "\",\"domain\":\"\"}\n"

static int parse(const char *text, cp_trace *t)
{
    return cp_proc_parse("mem.proc.jsonl", text, strlen(text), t);
}

/* The i-th record of kind k named `name` (NULL: any name), or NULL. */
static const cp_activity *find(const cp_trace *t, cp_act_kind k, const char *name, int i)
{
    for (size_t n = 0; n < t->n; n++)
        if (t->items[n].kind == k && (!name || (t->items[n].name &&
                                                strcmp(t->items[n].name, name) == 0)) &&
            i-- == 0)
            return &t->items[n];
    return NULL;
}

static size_t count(const cp_trace *t, cp_act_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->items[i].kind == k;
    return n;
}

/* A parse that must fail with `code`, its message holding `needle`, and
 * leave a trace that held one process as it was. */
static void expect_error(const char *text, int code, const char *needle)
{
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(parse(HEADER KERNEL(1, 2, 7) END, &t), 0, "%s", cp_last_error());
    t.dropped_records = 5;
    size_t n = t.n;
    int rc = parse(text, &t);
    cr_expect_eq(rc, code, "rc %d for: %s (%s)", rc, text, cp_last_error());
    cr_expect_not_null(strstr(cp_last_error(), needle), "error '%s' lacks '%s'", cp_last_error(),
                       needle);
    cr_expect_eq(t.n, n, "the records are rolled back");
    cr_expect_eq(t.nprocesses, 1, "the process is rolled back");
    cr_expect_eq(t.nstream_names, 0, "the stream names are rolled back");
    cr_expect_eq(t.dropped_records, 5);
    cp_trace_free(&t);
}

Test(proc, a_good_file)
{
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(PARENT, &t), 0, "%s", cp_last_error());
    cr_assert_eq(t.nprocesses, 1);
    const cp_process *p = &t.processes[0];
    cr_expect_eq(p->pid, 4242);
    cr_expect_eq(p->ppid, 4200);
    cr_expect_str_eq(p->host, "gpu-1");
    cr_expect_str_eq(p->command, "python3 train.py");
    cr_expect(p->ended);
    cr_expect_eq(p->last_ns, O0 + 12500);
    cr_expect_eq(p->dropped, 0);
    cr_expect_eq(count(&t, CP_ACT_KERNEL), 2);
    cr_expect_eq(count(&t, CP_ACT_MEMCPY), 1);
    cr_expect_eq(count(&t, CP_ACT_MEMSET), 1);
    cr_expect_eq(count(&t, CP_ACT_RUNTIME), 2, "runtime and driver calls alike");
    cr_expect_eq(count(&t, CP_ACT_RANGE), 4, "step, load, checkpoint and the profiler window");
    cr_expect_eq(t.n, 10, "sync, stream, context and device records are not kept");

    const cp_activity *k = find(&t, CP_ACT_KERNEL, "train_step", 0);
    cr_assert_not_null(k);
    cr_expect_eq(k->start, O0 + 2600, "offsets are added to origin_ns exactly");
    cr_expect_eq(k->end, O0 + 6600);
    cr_expect_eq(k->device, 0);
    cr_expect_eq(k->context, 1);
    cr_expect_eq(k->stream, 13);
    cr_expect_eq(k->correlation, 11);
    cr_expect_eq(k->process, 0);
    cr_expect_eq(k->grid[0], 64);
    cr_expect_eq(k->block[0], 256);
    cr_expect_eq(k->grid[2], 1);
    const cp_activity *g = find(&t, CP_ACT_KERNEL, "eval", 0);
    cr_assert_not_null(g);
    cr_expect_eq(g->graph_id, 3);
    cr_expect_eq(g->graph_node, 17);
    const cp_activity *c = find(&t, CP_ACT_MEMCPY, NULL, 0);
    cr_expect_eq(c->copy_dir, CP_COPY_HTOD);
    cr_expect_eq(c->src, CP_MEM_PINNED);
    cr_expect_eq(c->dst, CP_MEM_DEVICE);
    cr_expect(c->async);
    cr_expect_eq(c->bytes, 1048576);
    const cp_activity *m = find(&t, CP_ACT_MEMSET, NULL, 0);
    cr_expect_eq(m->stream, 7);
    cr_expect_eq(m->bytes, 4096);
    cr_expect_eq(m->dst, CP_MEM_DEVICE);
    const cp_activity *r = find(&t, CP_ACT_RUNTIME, "cuLaunchKernel", 0);
    cr_assert_not_null(r);
    cr_expect_eq(r->correlation, 11);
    cr_expect_eq(r->start, O0 + 2500);
    cr_expect_not_null(find(&t, CP_ACT_RUNTIME, "cudaMemcpyAsync", 0));
    cp_trace_free(&t);
}

/* A stream_name record names its stream in the file's process, whatever
 * its place among the records; a file without one (every file before
 * them) reads as before, with no names; a name record must be whole. */
Test(proc, stream_names)
{
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(parse(HEADER KERNEL(1, 2, 7)
                       "{\"k\":\"stream_name\",\"dev\":0,\"ctx\":1,\"str\":7,"
                       "\"name\":\"copy-in <\\\"a\\\">\"}\n" END,
                       &t),
                 0, "%s", cp_last_error());
    cr_expect_eq(t.nstream_names, 1);
    cr_expect_str_eq(cp_trace_stream_name(&t, 0, 0, 1, 7), "copy-in <\"a\">");
    cr_expect_null(cp_trace_stream_name(&t, 0, 0, 2, 7), "another context");
    cp_trace_free(&t);
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(PARENT, &t), 0, "%s", cp_last_error());
    cr_expect_eq(t.nstream_names, 0);
    cp_trace_free(&t);
    expect_error(HEADER "{\"k\":\"stream_name\",\"dev\":0,\"ctx\":1,\"str\":7}\n" END,
                 CP_EPARSE, "name");
    expect_error(HEADER "{\"k\":\"stream_name\",\"dev\":0,\"ctx\":1,\"str\":7,\"name\":\"s\"}\n"
                        "{oops}\n",
                 CP_EPARSE, "not valid JSON");
}

/* The fixture's parent: the profiler window holds step, step holds load,
 * and the instant checkpoint lies inside the profiler window only. */
Test(proc, markers_pair_and_nest)
{
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(PARENT, &t), 0, "%s", cp_last_error());
    const cp_activity *prof = find(&t, CP_ACT_RANGE, "cuProfilerStart", 0);
    const cp_activity *step = find(&t, CP_ACT_RANGE, "step", 0);
    const cp_activity *load = find(&t, CP_ACT_RANGE, "load", 0);
    const cp_activity *cp = find(&t, CP_ACT_RANGE, "checkpoint", 0);
    cr_assert(prof && step && load && cp);
    cr_expect_eq(step->start, O0 + 1000);
    cr_expect_eq(step->end, O0 + 8000, "paired by id, across other markers");
    cr_expect_eq(load->start, O0 + 1100);
    cr_expect_eq(load->end, O0 + 2500);
    cr_expect_eq(cp->start, O0 + 8100);
    cr_expect_eq(cp->end, cp->start, "an instant is a range of length zero");
    cr_expect_eq(prof->depth, 0);
    cr_expect_eq(step->depth, 1);
    cr_expect_eq(load->depth, 2);
    cr_expect_eq(cp->depth, 1);
    cp_trace_free(&t);

    /* Ranges of two threads that overlap without nesting, an end that
     * closes an earlier start than the last, a range that starts as
     * another ends (half-open: not inside it), equal starts (the longer
     * holds the shorter), and an end whose start came before tracing. */
    cp_trace_init(&t);
    cr_assert_eq(parse(HEADER MARKER(10, 1, "start", "a") MARKER(20, 2, "start", "b")
                       MARKER(30, 1, "end", "") MARKER(40, 2, "end", "")
                       MARKER(40, 3, "start", "c") MARKER(50, 3, "end", "")
                       MARKER(60, 4, "start", "short") MARKER(60, 5, "start", "long")
                       MARKER(70, 4, "end", "") MARKER(80, 5, "end", "")
                       MARKER(90, 77, "end", "") END,
                       &t),
                 0, "%s", cp_last_error());
    cr_assert_eq(t.n, 5, "the end without a start is skipped");
    const cp_activity *a = find(&t, CP_ACT_RANGE, "a", 0), *b = find(&t, CP_ACT_RANGE, "b", 0);
    const cp_activity *c = find(&t, CP_ACT_RANGE, "c", 0);
    const cp_activity *sh = find(&t, CP_ACT_RANGE, "short", 0);
    const cp_activity *lo = find(&t, CP_ACT_RANGE, "long", 0);
    cr_expect_eq(a->end, 1000000 + 30);
    cr_expect_eq(b->end, 1000000 + 40);
    cr_expect_eq(a->depth, 0);
    cr_expect_eq(b->depth, 1, "a is open when b starts");
    cr_expect_eq(c->depth, 0, "b ended as c started");
    cr_expect_eq(lo->depth, 0, "the longer of two ranges that start together holds the other");
    cr_expect_eq(sh->depth, 1);
    cr_expect_eq(a->process, 0);
    cp_trace_free(&t);

    expect_error(HEADER MARKER(10, 1, "start", "a") MARKER(20, 1, "start", "b"), CP_EPARSE,
                 "mem.proc.jsonl:3: marker record: marker 1 starts again while it is open");

    /* The thread: API calls always carry it, markers from later writers
     * (a range takes its start's); a marker without it has none. */
    cp_trace_init(&t);
    cr_assert_eq(parse(HEADER
                       "{\"k\":\"marker\",\"t\":10,\"id\":1,\"phase\":\"start\",\"name\":\"s\","
                       "\"domain\":\"\",\"tid\":4294967295}\n"
                       "{\"k\":\"marker\",\"t\":90,\"id\":1,\"phase\":\"end\",\"name\":\"\","
                       "\"domain\":\"\",\"tid\":4294967295}\n"
                       "{\"k\":\"runtime\",\"s\":20,\"e\":30,\"cor\":5,\"tid\":1714126848,"
                       "\"name\":\"cudaMalloc\"}\n"
                       MARKER(40, 2, "instant", "old") END,
                       &t),
                 0, "%s", cp_last_error());
    cr_expect_eq(find(&t, CP_ACT_RANGE, "s", 0)->thread, 4294967295u);
    cr_expect_eq(find(&t, CP_ACT_RUNTIME, "cudaMalloc", 0)->thread, 1714126848u);
    cr_expect_eq(find(&t, CP_ACT_RANGE, "old", 0)->thread, 0);
    cp_trace_free(&t);
    expect_error(HEADER "{\"k\":\"marker\",\"t\":10,\"id\":1,\"phase\":\"start\",\"name\":\"s\","
                        "\"domain\":\"\",\"tid\":-1}\n",
                 CP_EPARSE, "field 'tid' must be an integer");
    expect_error(HEADER MARKER(10, 1, "begin", "a"), CP_EPARSE, "field 'phase' is 'begin'");
}

Test(proc, profiler_window)
{
    cp_trace t;
    cp_trace_init(&t);
    const char *text = HEADER
        "{\"k\":\"profiler\",\"t\":5,\"phase\":\"stop\"}\n"
        "{\"k\":\"profiler\",\"t\":10,\"phase\":\"start\"}\n"
        "{\"k\":\"profiler\",\"t\":15,\"phase\":\"start\"}\n"
        KERNEL(20, 30, 7)
        "{\"k\":\"profiler\",\"t\":40,\"phase\":\"stop\"}\n"
        "{\"k\":\"profiler\",\"t\":50,\"phase\":\"start\"}\n"
        KERNEL(60, 70, 7);
    cr_assert_eq(parse(text, &t), 0, "%s", cp_last_error());
    cr_assert_eq(count(&t, CP_ACT_RANGE), 2, "a stop while stopped and a second start change nothing");
    const cp_activity *w0 = find(&t, CP_ACT_RANGE, "cuProfilerStart", 0);
    const cp_activity *w1 = find(&t, CP_ACT_RANGE, "cuProfilerStart", 1);
    cr_expect_eq(w0->start, 1000010);
    cr_expect_eq(w0->end, 1000040);
    cr_expect_eq(w1->start, 1000050);
    cr_expect_eq(w1->end, 1000070, "a window still open runs to the last time of the file");
    cr_expect_not(t.processes[0].ended);
    cp_trace_free(&t);
    expect_error(HEADER "{\"k\":\"profiler\",\"t\":5,\"phase\":\"pause\"}\n", CP_EPARSE,
                 "mem.proc.jsonl:2: profiler record: field 'phase' is 'pause'");
}

/* exec --capture's windows (cuproof/internal/capture.h): each opening to
 * its closing a range CP_CAPTURE_RANGE_NAME (a warm-up's
 * CP_WARMUP_RANGE_NAME), a second opening while one is open changing
 * nothing, one still open at the end running to the file's last time. */
Test(proc, capture_windows)
{
    cp_trace t;
    cp_trace_init(&t);
    const char *text = HEADER
        "{\"k\":\"capture\",\"t\":10,\"phase\":\"open\",\"occurrence\":3,\"warmup\":false}\n"
        "{\"k\":\"capture\",\"t\":12,\"phase\":\"open\",\"occurrence\":4,\"warmup\":false}\n"
        KERNEL(20, 30, 7)
        "{\"k\":\"capture\",\"t\":40,\"phase\":\"close\",\"occurrence\":5,\"warmup\":false}\n"
        "{\"k\":\"capture\",\"t\":45,\"phase\":\"close\",\"occurrence\":5,\"warmup\":false}\n"
        "{\"k\":\"capture\",\"t\":50,\"phase\":\"open\",\"occurrence\":9,\"warmup\":true}\n"
        KERNEL(60, 70, 7);
    cr_assert_eq(parse(text, &t), 0, "%s", cp_last_error());
    cr_assert_eq(count(&t, CP_ACT_RANGE), 2);
    const cp_activity *w = find(&t, CP_ACT_RANGE, CP_CAPTURE_RANGE_NAME, 0);
    const cp_activity *u = find(&t, CP_ACT_RANGE, CP_WARMUP_RANGE_NAME, 0);
    cr_expect_eq(w->start, 1000010);
    cr_expect_eq(w->end, 1000040);
    cr_expect_eq(u->start, 1000050);
    cr_expect_eq(u->end, 1000070, "a window still open runs to the last time of the file");
    cp_trace_free(&t);
    expect_error(HEADER "{\"k\":\"capture\",\"t\":5,\"phase\":\"start\",\"occurrence\":1,"
                        "\"warmup\":false}\n",
                 CP_EPARSE, "mem.proc.jsonl:2: capture record: field 'phase' is 'start'");
    expect_error(HEADER "{\"k\":\"capture\",\"t\":5,\"phase\":\"open\",\"warmup\":false}\n",
                 CP_EPARSE, "occurrence");
}

/* Counts are CUPTI's so far: the largest flush or end value stands, and
 * dropped records add to the trace's total. */
Test(proc, zero_timestamps_and_dropped_counts)
{
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(PARENT, &t), 0, "%s", cp_last_error());
    cr_expect_eq(t.processes[0].zero_timestamps, 1);
    cr_expect_eq(t.dropped_records, 0);
    const char *text = HEADER
        "{\"k\":\"flush\",\"t\":10,\"records\":3,\"dropped\":2,\"zero_timestamps\":4}\n"
        "{\"k\":\"flush\",\"t\":20,\"records\":9,\"dropped\":7,\"zero_timestamps\":4}\n"
        "{\"k\":\"end\",\"t\":30,\"records\":9,\"dropped\":7,\"zero_timestamps\":6,\"why\":\"exit\"}\n";
    cr_assert_eq(parse(text, &t), 0, "%s", cp_last_error());
    cr_assert_eq(t.nprocesses, 2);
    cr_expect_eq(t.processes[1].dropped, 7);
    cr_expect_eq(t.processes[1].zero_timestamps, 6);
    cr_expect_eq(t.processes[1].last_ns, 1000030);
    cr_expect_eq(t.dropped_records, 7);
    cp_trace_free(&t);
}

Test(proc, truncated_without_end)
{
    cp_trace t;
    cp_trace_init(&t);
    /* The last flush is later than every record. */
    cr_assert_eq(parse(HEADER MARKER(5, 1, "start", "step") KERNEL(10, 20, 7)
                       "{\"k\":\"flush\",\"t\":500,\"records\":2,\"dropped\":0,\"zero_timestamps\":0}\n",
                       &t),
                 0, "%s", cp_last_error());
    cr_expect_not(t.processes[0].ended);
    cr_expect_eq(t.processes[0].last_ns, 1000500);
    cr_expect_eq(find(&t, CP_ACT_RANGE, "step", 0)->end, 1000500,
                 "a range left open runs to the last time the file accounts for");
    /* Records after the last flush: the last record's end. */
    cr_assert_eq(parse(HEADER "{\"k\":\"flush\",\"t\":5,\"records\":0,\"dropped\":0,"
                       "\"zero_timestamps\":0}\n" KERNEL(10, 900, 7),
                       &t),
                 0, "%s", cp_last_error());
    cr_expect_not(t.processes[1].ended);
    cr_expect_eq(t.processes[1].last_ns, 1000900);
    /* A file that holds its header alone. */
    cr_assert_eq(parse(HEADER, &t), 0, "%s", cp_last_error());
    cr_expect_eq(t.processes[2].last_ns, 1000000);
    cr_expect_not(t.processes[2].ended);
    cp_trace_free(&t);
}

Test(proc, truncated_last_line)
{
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(TRUNCATED, &t), 0, "%s", cp_last_error());
    const cp_process *p = &t.processes[0];
    cr_expect_eq(p->pid, 4251);
    cr_expect_not(p->ended);
    cr_expect_eq(p->last_ns, O0 + 500 + 9500, "the last complete record's end");
    cr_expect_eq(count(&t, CP_ACT_KERNEL), 2);
    cr_expect_eq(count(&t, CP_ACT_MEMCPY), 0, "the cut line is not read");
    cr_expect_eq(find(&t, CP_ACT_RANGE, "step", 0)->end, p->last_ns);
    cp_trace_free(&t);

    /* A last line without its newline that is whole is read as any other. */
    cp_trace_init(&t);
    const char *whole = HEADER KERNEL(1, 2, 7)
        "{\"k\":\"end\",\"t\":3,\"records\":1,\"dropped\":0,\"zero_timestamps\":0,\"why\":\"exit\"}";
    cr_assert_eq(parse(whole, &t), 0, "%s", cp_last_error());
    cr_expect(t.processes[0].ended);
    cp_trace_free(&t);
    /* But it must be a valid record, and only the last line may be cut. */
    expect_error(HEADER "{\"k\":\"kernel\",\"s\":1}", CP_EPARSE, "mem.proc.jsonl:2: kernel "
                 "record: missing field 'e'");
    expect_error(HEADER "{\"k\":\"kernel\",\"s\":1\n" KERNEL(1, 2, 7), CP_EPARSE,
                 "mem.proc.jsonl:2: not valid JSON");
}

Test(proc, malformed_lines_name_the_file_and_line)
{
    expect_error(HEADER KERNEL(1, 2, 7) "{\"k\":\"kernel\",}\n" END, CP_EPARSE,
                 "mem.proc.jsonl:3: not valid JSON (near column 1");
    expect_error(HEADER "\n" END, CP_EPARSE, "mem.proc.jsonl:2: not valid JSON");
    expect_error(HEADER "[1,2]\n", CP_EPARSE, "mem.proc.jsonl:2: not a JSON object");
    expect_error(HEADER "{\"k\":\"end\",\"t\":1,\"records\":0,\"dropped\":0,\"zero_timestamps\":0,"
                 "\"why\":\"exit\"} trailing\n",
                 CP_EPARSE, "mem.proc.jsonl:2: not valid JSON");
    static const char nul[] = HEADER "{\"k\":\"kernel\"}\0junk\n";
    cp_trace t;
    cp_trace_init(&t);
    cr_expect_eq(cp_proc_parse("mem.proc.jsonl", nul, sizeof nul - 1, &t), CP_EPARSE);
    cr_expect_not_null(strstr(cp_last_error(), "mem.proc.jsonl:2: a NUL byte"), "%s",
                       cp_last_error());
    cr_expect_eq(t.n, 0);
    cr_expect_eq(t.nprocesses, 0);
    cp_trace_free(&t);
    expect_error(HEADER END KERNEL(1, 2, 7), CP_EPARSE,
                 "mem.proc.jsonl:3: a record after the end record of line 2");
    expect_error(HEADER END "{\"k\":\"ker", CP_EPARSE, "mem.proc.jsonl:3: not valid JSON");

    /* A file on disk is named by its path. */
    char path[] = "/tmp/cuproof-proc-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char *text = HEADER KERNEL(1, 2, 7) "{oops}\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    cp_trace_init(&t);
    cr_expect_eq(cp_proc_read(path, &t), CP_EPARSE);
    char needle[64];
    snprintf(needle, sizeof needle, "%s:3: not valid JSON", path);
    cr_expect_not_null(strstr(cp_last_error(), needle), "%s", cp_last_error());
    cr_expect_eq(t.n, 0);
    remove(path);
    cr_expect_eq(cp_proc_read("/nonexistent/x.proc.jsonl", &t), CP_EIO);
    cr_expect_not_null(strstr(cp_last_error(), "/nonexistent/x.proc.jsonl"));
    cp_trace_free(&t);
}

Test(proc, wrong_schema_and_header)
{
    expect_error("", CP_EPARSE, "mem.proc.jsonl:1: no cuproof.proc/1 header");
    expect_error("{\"schema\":\"cuproof.pr", CP_EPARSE, "no cuproof.proc/1 header");
    expect_error(KERNEL(1, 2, 7), CP_EPARSE, "mem.proc.jsonl:1: the first line is not a "
                 "cuproof.proc/1 header");
    expect_error("{\"schema\":\"cuproof.proc/2\",\"host\":\"h\",\"pid\":7,\"ppid\":1,"
                 "\"command\":\"a\",\"origin_ns\":\"1\"}\n",
                 CP_EPARSE, "mem.proc.jsonl:1: the schema is not \"cuproof.proc/1\"");
    expect_error("{\"schema\":\"cuproof.proc/1\",\"host\":\"h\",\"ppid\":1,\"command\":\"a\","
                 "\"origin_ns\":\"1\"}\n",
                 CP_EPARSE, "mem.proc.jsonl:1: missing field 'pid'");
    const char *origins[] = {"\"12x\"", "\"-1\"", "\" 1\"", "\"\"", "\"18446744073709551616\"",
                             "12"};
    for (size_t i = 0; i < sizeof origins / sizeof *origins; i++) {
        char text[256];
        snprintf(text, sizeof text, "{\"schema\":\"cuproof.proc/1\",\"host\":\"h\",\"pid\":7,"
                 "\"ppid\":1,\"command\":\"a\",\"origin_ns\":%s}\n", origins[i]);
        expect_error(text, CP_EPARSE, "origin_ns");
    }
    /* The largest origin is taken exactly, and long fields are cut. */
    cp_trace t;
    cp_trace_init(&t);
    char text[1024], host[200];
    memset(host, 'x', sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(text, sizeof text, "{\"schema\":\"cuproof.proc/1\",\"host\":\"%s\",\"pid\":4294967295,"
             "\"ppid\":0,\"command\":\"a\",\"origin_ns\":\"18446744073709551000\"}\n"
             "{\"k\":\"marker\",\"t\":615,\"id\":1,\"phase\":\"instant\",\"name\":\"\",\"domain\":\"\"}\n",
             host);
    cr_assert_eq(parse(text, &t), 0, "%s", cp_last_error());
    cr_expect_eq(t.processes[0].pid, 4294967295u);
    cr_expect_eq(strlen(t.processes[0].host), sizeof t.processes[0].host - 1);
    cr_expect_eq(t.items[0].start, UINT64_MAX);
    cp_trace_free(&t);
    expect_error("{\"schema\":\"cuproof.proc/1\",\"host\":\"h\",\"pid\":7,\"ppid\":1,\"command\":\"a\","
                 "\"origin_ns\":\"18446744073709551000\"}\n" KERNEL(616, 700, 7),
                 CP_EPARSE, "field 's' (616) lies beyond the clock's range");
}

Test(proc, unknown_kinds_and_wrong_fields)
{
    expect_error(HEADER "{\"k\":\"warp\"}\n", CP_EPARSE,
                 "mem.proc.jsonl:2: unknown record kind 'warp'");
    expect_error(HEADER "{\"s\":1}\n", CP_EPARSE, "mem.proc.jsonl:2: missing field 'k'");
    expect_error(HEADER "{\"k\":3}\n", CP_EPARSE, "field 'k' must be a string");
    expect_error(HEADER "{\"k\":\"kernel\",\"s\":\"1\",\"e\":2}\n", CP_EPARSE,
                 "kernel record: field 's' must be a number");
    expect_error(HEADER "{\"k\":\"runtime\",\"s\":1.5,\"e\":2,\"cor\":1,\"tid\":1,\"name\":\"x\"}\n",
                 CP_EPARSE, "runtime record: field 's' must be an integer");
    expect_error(HEADER "{\"k\":\"runtime\",\"s\":1,\"e\":2,\"cor\":-1,\"tid\":1,\"name\":\"x\"}\n",
                 CP_EPARSE, "field 'cor' must be an integer from 0 to 4294967295");
    expect_error(HEADER "{\"k\":\"driver\",\"s\":1,\"e\":2,\"cor\":1,\"tid\":1,\"name\":7}\n",
                 CP_EPARSE, "driver record: field 'name' must be a string");
    expect_error(HEADER "{\"k\":\"runtime\",\"s\":1e300,\"e\":2,\"cor\":1,\"tid\":1,\"name\":\"x\"}\n",
                 CP_EPARSE, "field 's' must be an integer");
    expect_error(HEADER "{\"k\":\"runtime\",\"s\":-1000001,\"e\":2,\"cor\":1,\"tid\":1,\"name\":\"x\"}\n",
                 CP_EPARSE, "field 's' (-1000001) lies before time 0");
    expect_error(HEADER "{\"k\":\"memcpy\",\"s\":1,\"e\":2,\"dev\":0,\"ctx\":1,\"str\":1,\"cor\":1,"
                 "\"bytes\":1,\"dir\":\"htod\",\"src\":\"pinned\",\"dst\":\"device\",\"async\":true,"
                 "\"graph\":0,\"node\":0}\n",
                 CP_EPARSE, "field 'dir' is 'htod', not one of unknown, HtoD, DtoH, DtoD");
    expect_error(HEADER "{\"k\":\"memcpy\",\"s\":1,\"e\":2,\"dev\":0,\"ctx\":1,\"str\":1,\"cor\":1,"
                 "\"bytes\":1,\"dir\":\"HtoD\",\"src\":\"pinned\",\"dst\":\"device\",\"async\":1,"
                 "\"graph\":0,\"node\":0}\n",
                 CP_EPARSE, "field 'async' must be true or false");
    expect_error(HEADER "{\"k\":\"memset\",\"s\":1,\"e\":2,\"dev\":0,\"ctx\":1,\"str\":1,\"cor\":1,"
                 "\"bytes\":1,\"graph\":0,\"node\":0}\n",
                 CP_EPARSE, "memset record: missing field 'dst'");
    expect_error(HEADER "{\"k\":\"kernel\",\"s\":1,\"e\":2,\"dev\":0,\"ctx\":1,\"str\":1,\"cor\":1,"
                 "\"grid\":[1,1],\"block\":[1,1,1],\"graph\":0,\"node\":0,\"name\":\"k\"}\n",
                 CP_EPARSE, "field 'grid' must be an array of 3 integers");
    expect_error(HEADER "{\"k\":\"sync\",\"s\":1,\"e\":2,\"ctx\":1,\"str\":1,\"cor\":1,"
                 "\"type\":\"device_synchronize\"}\n",
                 CP_EPARSE, "sync record: field 'type' is 'device_synchronize'");
    expect_error(HEADER "{\"k\":\"stream\",\"dev\":0,\"ctx\":1,\"str\":1,\"flag\":\"fast\"}\n",
                 CP_EPARSE, "stream record: field 'flag' is 'fast'");
    expect_error(HEADER "{\"k\":\"context\",\"dev\":0,\"ctx\":1}\n", CP_EPARSE,
                 "context record: missing field 'null_stream'");
    expect_error(HEADER "{\"k\":\"device\",\"dev\":0,\"name\":\"H100\",\"cc\":9.0,\"sms\":132}\n",
                 CP_EPARSE, "device record: field 'cc' must be a string");
    expect_error(HEADER "{\"k\":\"flush\",\"t\":1,\"records\":0,\"dropped\":0}\n", CP_EPARSE,
                 "flush record: missing field 'zero_timestamps'");
    expect_error(HEADER "{\"k\":\"end\",\"t\":1,\"records\":0,\"dropped\":0,\"zero_timestamps\":0}\n",
                 CP_EPARSE, "end record: missing field 'why'");
    /* Fields the format does not name are left alone. */
    cp_trace t;
    cp_trace_init(&t);
    cr_expect_eq(parse(HEADER "{\"k\":\"device\",\"dev\":0,\"name\":\"H100\",\"cc\":\"9.0\","
                       "\"sms\":132,\"uuid\":\"GPU-1\"}\n",
                       &t),
                 0, "%s", cp_last_error());
    cp_trace_free(&t);
}

/* Lines up to CP_PROC_MAX_LINE bytes are read (a kernel's name can be
 * long); a longer one is refused with the limit. */
Test(proc, long_lines)
{
    size_t name_len = CP_PROC_MAX_LINE - 200;
    const char *head = "{\"k\":\"kernel\",\"s\":1,\"e\":2,\"dev\":0,\"ctx\":1,\"str\":1,\"cor\":1,"
                       "\"grid\":[1,1,1],\"block\":[1,1,1],\"graph\":0,\"node\":0,\"name\":\"";
    size_t cap = strlen(HEADER) + strlen(head) + name_len + 400;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    size_t n = (size_t)sprintf(text, "%s%s", HEADER, head);
    memset(text + n, 'n', name_len);
    n += name_len;
    n += (size_t)sprintf(text + n, "\"}\n");
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_parse("long.proc.jsonl", text, n, &t), 0, "%s", cp_last_error());
    cr_expect_eq(strlen(t.items[0].name), name_len);
    cp_trace_free(&t);

    /* The same through a file, whose reads split the line. */
    char path[] = "/tmp/cuproof-long-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, n), (ssize_t)n);
    close(fd);
    cp_trace_init(&t);
    cr_expect_eq(cp_proc_read(path, &t), 0, "%s", cp_last_error());
    cr_expect_eq(t.n, 1);
    cp_trace_free(&t);
    remove(path);

    n = strlen(HEADER);
    memset(text + n, ' ', CP_PROC_MAX_LINE + 1);
    n += CP_PROC_MAX_LINE + 1;
    text[n++] = '\n';
    cp_trace_init(&t);
    cr_expect_eq(cp_proc_parse("long.proc.jsonl", text, n, &t), CP_EPARSE);
    cr_expect_not_null(strstr(cp_last_error(), "long.proc.jsonl:2: the line is longer than 1048576 "
                                               "bytes"),
                       "%s", cp_last_error());
    cr_expect_eq(t.nprocesses, 0);
    cp_trace_free(&t);
    free(text);
}

/* Three processes of one program: the parent and a child share context 1
 * and stream 13 on device 0, yet keep a lane each; the truncated child
 * worked on device 1. */
Test(proc, merged_processes_keep_their_lanes)
{
    cp_trace t;
    cp_trace_init(&t);
    size_t nfiles = 0;
    cr_assert_eq(cp_proc_read_dir(PROGRAM, &t, &nfiles), 0, "%s", cp_last_error());
    cr_assert_eq(nfiles, 3);
    cr_assert_eq(t.nprocesses, 3);
    cr_expect_eq(t.processes[0].pid, 4242);
    cr_expect_eq(t.processes[1].pid, 4250);
    cr_expect_eq(t.processes[1].ppid, 4242);
    cr_expect_eq(t.processes[2].pid, 4251);
    cr_expect(t.processes[0].ended);
    cr_expect(t.processes[1].ended);
    cr_expect_not(t.processes[2].ended);
    const cp_activity *child = find(&t, CP_ACT_KERNEL, "train_step", 1);
    cr_assert_not_null(child);
    cr_expect_eq(child->process, 1);
    cr_expect_eq(child->start, O0 + 200 + 2800, "each file has its own origin");
    cp_metrics m;
    cr_assert_eq(cp_timeline_analyse(&t, NULL, &m), 0);
    cr_expect_eq(m.nlanes, 4, "(device, process, context, stream) keys");
    cr_expect_eq(m.devices, 2);
    cr_expect_eq(m.kernels, 5);
    /* Three processes ran kernels at once, but on two devices: device 0
     * ran two at once (processes 0 and 1), device 1 one. Concurrency is
     * per device, and the program's peak is the largest device's. */
    cr_expect_eq(m.peak_concurrent_kernels, 2, "the largest per-device peak, not 3 across devices");
    cr_assert_not_null(m.device_metrics);
    cr_expect_eq(m.device_metrics[0].device, 0);
    cr_expect_eq(m.device_metrics[0].peak_concurrent_kernels, 2);
    cr_expect_eq(m.device_metrics[1].device, 1);
    cr_expect_eq(m.device_metrics[1].peak_concurrent_kernels, 1);
    size_t shared = 0;
    for (size_t i = 0; i < m.nlanes; i++)
        shared += m.lanes[i].device == 0 && m.lanes[i].context == 1 && m.lanes[i].stream == 13;
    cr_expect_eq(shared, 2, "the same context and stream ids in two processes: two lanes");
    cp_metrics_free(&m);
    cp_trace_free(&t);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

#define HEADER_PID(pid)                                                                           \
    "{\"schema\":\"cuproof.proc/1\",\"host\":\"h\",\"pid\":" #pid ",\"ppid\":1,\"command\":\"a\"," \
    "\"origin_ns\":\"1000\"}\n"

Test(proc, read_dir_order_and_errors)
{
    char dir[] = "/tmp/cuproof-procdir-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cp_trace t;
    cp_trace_init(&t);
    size_t nfiles = 99;
    cr_expect_eq(cp_proc_read_dir(dir, &t, &nfiles), 0, "an empty directory is no error here");
    cr_expect_eq(nfiles, 0);
    /* Written out of order; other files are not read. */
    write_file(dir, "h.30.proc.jsonl", HEADER_PID(30) KERNEL(1, 2, 7));
    write_file(dir, "h.100.proc.jsonl", HEADER_PID(100) KERNEL(1, 2, 7));
    write_file(dir, "g.5.proc.jsonl", HEADER_PID(5) KERNEL(1, 2, 7));
    write_file(dir, "notes.txt", "not a trace");
    write_file(dir, "h.1.proc.jsonl.tmp", "not a trace");
    cr_assert_eq(cp_proc_read_dir(dir, &t, &nfiles), 0, "%s", cp_last_error());
    cr_assert_eq(nfiles, 3);
    cr_expect_eq(t.processes[0].pid, 5);
    cr_expect_eq(t.processes[1].pid, 100, "byte order of the names: h.100 before h.30");
    cr_expect_eq(t.processes[2].pid, 30);
    for (size_t i = 0; i < t.n; i++)
        cr_expect_eq(t.processes[t.items[i].process].pid,
                     i == 0 ? 5u : i == 1 ? 100u : 30u);
    /* One bad file: nothing of the directory is kept. */
    write_file(dir, "z.9.proc.jsonl", HEADER_PID(9) "{\"k\":\"warp\"}\n");
    size_t n = t.n, np = t.nprocesses;
    cr_expect_eq(cp_proc_read_dir(dir, &t, &nfiles), CP_EPARSE);
    cr_expect_not_null(strstr(cp_last_error(), "z.9.proc.jsonl:2: unknown record kind 'warp'"),
                       "%s", cp_last_error());
    cr_expect_eq(nfiles, 0);
    cr_expect_eq(t.n, n);
    cr_expect_eq(t.nprocesses, np);
    cr_expect_eq(cp_proc_read_dir("/nonexistent-cuproof-dir", &t, &nfiles), CP_EIO);
    cr_expect_not_null(strstr(cp_last_error(), "/nonexistent-cuproof-dir"));
    cp_trace_free(&t);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* What the injection library wrote on an H100 (tests/fixtures/exec-h100):
 * the whole run of a program with streams, NVTX steps inside a profiler
 * window and a CUDA graph, and the same program cut short by _exit. */
Test(proc, recorded_on_an_h100)
{
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(CUPROOF_FIXTURES "/exec-h100/streams-graph-nvtx.proc.jsonl", &t), 0,
                 "%s", cp_last_error());
    cr_assert_eq(cp_proc_read(CUPROOF_FIXTURES "/exec-h100/exit-early.proc.jsonl", &t), 0, "%s",
                 cp_last_error());
    cr_assert_eq(t.nprocesses, 2);
    const cp_process *whole = &t.processes[0], *cut = &t.processes[1];
    cr_expect_eq(whole->pid, 1331);
    cr_expect(whole->ended);
    cr_expect_eq(whole->last_ns, 1795454802201045396ull + 414785627, "the end record's time");
    cr_expect_eq(whole->dropped, 0);
    cr_expect_eq(cut->pid, 1367);
    cr_expect_not(cut->ended, "left by _exit: no end record");
    cr_expect_eq(cut->last_ns, 1795454802704538978ull + 201403487, "its last flush");
    size_t work_of_cut = 0;
    for (size_t i = 0; i < t.n; i++)
        work_of_cut += t.items[i].process == 1 && cp_activity_is_device_work(&t.items[i]);
    cr_expect_eq(work_of_cut, 0, "its last flush came before its device work");
    cr_expect_eq(count(&t, CP_ACT_KERNEL), 32);
    cr_expect_eq(count(&t, CP_ACT_MEMCPY), 48);
    /* Three steps, each inside the profiler window. */
    for (int i = 0; i < 3; i++) {
        const cp_activity *step = find(&t, CP_ACT_RANGE, "step", i);
        cr_assert_not_null(step);
        cr_expect_eq(step->depth, 1);
        cr_expect_gt(step->end, step->start);
    }
    cr_expect_null(find(&t, CP_ACT_RANGE, "step", 3));
    cr_expect_eq(find(&t, CP_ACT_RANGE, "cuProfilerStart", 0)->depth, 0);
    /* The graph's kernels keep its id and their nodes' (beyond 2^32). */
    size_t graphed = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.items[i].kind == CP_ACT_KERNEL && t.items[i].graph_id == 2) {
            graphed++;
            cr_expect_geq(t.items[i].graph_node, 8589934592ull);
        }
    cr_expect_eq(graphed, 8, "4 kernels launched twice");
    cp_metrics m;
    cr_assert_eq(cp_timeline_analyse(&t, NULL, &m), 0);
    cr_expect_eq(m.copies, 48);
    cr_expect_eq(m.pageable_copies, 0);
    cr_expect_gt(m.copy_kernel_overlap_ns, 0);
    cp_metrics_free(&m);
    cp_trace_free(&t);
}


/* Recorded on the H100 with the thread on markers (tests/fixtures/
 * exec-h100-threads): in both forms every API call and every range of the
 * one-threaded program carries the same non-zero thread. */
Test(proc, threads_recorded_on_an_h100)
{
    const char *files[] = {CUPROOF_FIXTURES "/exec-h100-threads/nvtx-ranges.proc.jsonl",
                           CUPROOF_FIXTURES "/exec-h100-threads/nvtx-ranges.proc.cprec"};
    for (int f = 0; f < 2; f++) {
        cp_trace t;
        cp_trace_init(&t);
        cr_assert_eq(cp_proc_read(files[f], &t), 0, "%s", cp_last_error());
        uint32_t thread = 0;
        size_t api = 0, ranges = 0;
        for (size_t i = 0; i < t.n; i++) {
            const cp_activity *a = &t.items[i];
            if (a->kind != CP_ACT_RUNTIME && a->kind != CP_ACT_RANGE)
                continue;
            if (a->kind == CP_ACT_RANGE && strcmp(a->name, "cuProfilerStart") == 0)
                continue; /* the profiler's window belongs to no thread */
            api += a->kind == CP_ACT_RUNTIME;
            ranges += a->kind == CP_ACT_RANGE;
            if (!thread)
                thread = a->thread;
            cr_expect_neq(a->thread, 0, "%s: %s has no thread", files[f], a->name);
            cr_expect_eq(a->thread, thread, "%s: %s", files[f], a->name);
        }
        cr_expect_gt(api, 100, "%s", files[f]);
        cr_expect_gt(ranges, 0, "%s", files[f]);
        cp_trace_free(&t);
    }
}
