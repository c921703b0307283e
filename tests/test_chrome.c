/*
 * The Chrome trace export, parsed back: tracks (a process per device and
 * context, a thread per stream, the host's API and NVTX threads), one "X"
 * slice per record, and a launch flow from each API call to the device
 * work it started. Checked on traces recorded on the H100.
 */
#include <cuproof/internal/tracefile.h>
#include <cuproof/internal/perfetto.h>
#include <cuproof/error.h>
#include <cuproof/internal/proc.h>
#include "named_program.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

typedef struct counts {
    int processes, threads, slices, starts, finishes, copies_with_rate, negative_times;
    int unmatched_flows;
} counts;

static counts count(const char *text)
{
    counts c = {0};
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "the export is JSON");
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    cr_assert(cJSON_IsArray(events));
    const cJSON *e;
    int ids[8192], nids = 0;
    cJSON_ArrayForEach(e, events)
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
        double ts = cJSON_GetObjectItem(e, "ts")->valuedouble;
        c.negative_times += ts < 0;
        if (strcmp(ph, "M") == 0) {
            c.processes += strcmp(name, "process_name") == 0;
            c.threads += strcmp(name, "thread_name") == 0;
        } else if (strcmp(ph, "X") == 0) {
            c.slices++;
            const cJSON *args = cJSON_GetObjectItem(e, "args");
            c.copies_with_rate += strcmp(cJSON_GetObjectItem(e, "cat")->valuestring, "memcpy") == 0 &&
                                  cJSON_GetObjectItem(args, "bytes") &&
                                  cJSON_GetObjectItem(args, "GB/s");
        } else if (strcmp(ph, "s") == 0) {
            c.starts++;
            if (nids < 8192)
                ids[nids++] = cJSON_GetObjectItem(e, "id")->valueint;
        } else if (strcmp(ph, "f") == 0) {
            c.finishes++;
            int id = cJSON_GetObjectItem(e, "id")->valueint;
            bool found = false;
            for (int i = 0; i < nids && !found; i++)
                found = ids[i] == id;
            c.unmatched_flows += !found;
        }
    }
    cJSON_Delete(root);
    return c;
}

static cp_trace_file f;

static const cp_trace *variant(const char *name)
{
    for (size_t i = 0; i < f.nvariants; i++)
        if (strcmp(f.variants[i].name, name) == 0)
            return &f.variants[i].trace;
    cr_assert_fail("no variant %s", name);
    return NULL;
}

/* The label of the row (thread_name) of Chrome process `pid`, thread
 * `tid`, or NULL. */
static const char *row_name(const cJSON *events, int pid, int tid)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        const cJSON *args = cJSON_GetObjectItem(e, "args");
        if (strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "thread_name") == 0 &&
            cJSON_GetObjectItem(e, "pid")->valueint == pid &&
            cJSON_GetObjectItem(e, "tid")->valueint == tid)
            return cJSON_GetObjectItem(args, "name")->valuestring;
    }
    return NULL;
}

/* The name of Chrome process `pid` (process_name), or NULL. */
static const char *process_name(const cJSON *events, int pid)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        if (strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "process_name") == 0 &&
            cJSON_GetObjectItem(e, "pid")->valueint == pid)
            return cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "name")->valuestring;
    }
    return NULL;
}

/*
 * A stream the program named is the row "NAME (stream N)" of its GPU and
 * context, the name as it was (JSON's escaping undone by the parser:
 * quotes and markup intact); every other stream 13 of the program (the
 * recorded program's three processes each ran work on one) keeps "stream
 * 13": 4250's on the same device and context, and 4251's on device 1,
 * although 4251 named a stream 13 of device 0, where it ran nothing.
 */
Test(chrome, a_named_stream_is_its_row_and_no_other)
{
    cp_trace t;
    named_program_read(&t);
    char *text = cp_chrome_trace(&t, "program");
    cr_assert_not_null(text);
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "the export is JSON");
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    int named = 0, numbered = 0, lanes = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "X") != 0 ||
            cJSON_GetObjectItem(e, "pid")->valueint == 0)
            continue;
        const cJSON *args = cJSON_GetObjectItem(e, "args");
        const cJSON *stream = cJSON_GetObjectItem(args, "stream");
        if (!stream || stream->valueint != 13)
            continue;
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        const char *row = row_name(events, pid, cJSON_GetObjectItem(e, "tid")->valueint);
        const char *proc = process_name(events, pid);
        cr_assert_not_null(row);
        cr_assert_not_null(proc);
        lanes++;
        if (strstr(proc, "pid 4242")) {
            cr_expect_str_eq(proc, "GPU 0, context 1, pid 4242");
            cr_expect_str_eq(row, "copy \"in\" <&> (stream 13)");
            named++;
        } else {
            cr_expect_str_eq(row, "stream 13", "%s", proc);
            numbered++;
        }
    }
    cr_expect_eq(lanes, named + numbered);
    cr_expect_geq(named, 1, "4242's work on its stream 13");
    cr_expect_geq(numbered, 3, "4250's one kernel and 4251's work on device 1");
    cr_expect_null(strstr(text, "not on GPU 1"));
    cJSON_Delete(root);
    free(text);
    cp_trace_free(&t);
}

Test(chrome, streams_become_threads_and_launches_flows)
{
    cr_assert_eq(cp_trace_file_read(CUPROOF_FIXTURES "/multi-kernel-h100.trace.json", &f), 0,
                 "%s", cp_last_error());
    const cp_trace *t = variant("streams-pinned");
    char *text = cp_chrome_trace(t, "multi-kernel / streams-pinned");
    cr_assert_not_null(text);
    counts c = count(text);
    free(text);
    size_t device = 0, copies = 0;
    for (size_t i = 0; i < t->n; i++) {
        cp_act_kind k = t->items[i].kind;
        device += k == CP_ACT_KERNEL || k == CP_ACT_MEMCPY || k == CP_ACT_MEMSET;
        copies += k == CP_ACT_MEMCPY;
    }
    cr_expect_eq(c.slices, (int)t->n, "one slice per record");
    cr_expect_eq(c.processes, 2, "the host and one GPU context");
    cr_expect_eq(c.threads, 2 + 200, "API, NVTX and one thread per stream");
    cr_expect_eq(c.starts, (int)device, "every launch, copy and memset has its API call");
    cr_expect_eq(c.finishes, c.starts);
    cr_expect_eq(c.unmatched_flows, 0);
    cr_expect_eq(c.copies_with_rate, (int)copies, "copies carry bytes and GB/s");
    cr_expect_eq(c.negative_times, 0);
    cp_trace_file_free(&f);
}

/* Each context is a process of its own. */
Test(chrome, contexts_become_processes)
{
    cr_assert_eq(cp_trace_file_read(CUPROOF_FIXTURES "/host-threads-h100.trace.json", &f), 0,
                 "%s", cp_last_error());
    char *text = cp_chrome_trace(variant("contexts-32"), "host-threads / contexts-32");
    cr_assert_not_null(text);
    counts c = count(text);
    free(text);
    cr_expect_eq(c.processes, 1 + 32);
    cr_expect_eq(c.unmatched_flows, 0);
    cp_trace_file_free(&f);
}

Test(chrome, an_empty_trace_is_a_valid_file)
{
    cp_trace t;
    cp_trace_init(&t);
    char *text = cp_chrome_trace(&t, NULL);
    cr_assert_not_null(text);
    counts c = count(text);
    cr_expect_eq(c.slices, 0);
    cr_expect_eq(c.processes, 1, "the host alone");
    free(text);
}

/* A traced program's processes: their contexts and correlation ids repeat,
 * yet each gets its own GPU track, its own host threads, and its launches
 * flow from its own API calls. */
Test(chrome, processes_stay_apart)
{
    cp_trace t;
    cp_trace_init(&t);
    for (uint32_t k = 0; k < 2; k++) {
        cp_process p = {.pid = 100 + 100 * k, .ended = true};
        cr_assert_eq(cp_trace_add_process(&t, &p), (long)k);
        cp_activity call = {.kind = CP_ACT_RUNTIME, .start = 10 + k, .end = 20 + k,
                            .correlation = 5, .process = k, .name = "cudaLaunchKernel"};
        cp_activity kernel = {.kind = CP_ACT_KERNEL, .start = 30 + 100 * k, .end = 90 + 100 * k,
                              .device = 0, .context = 1, .stream = 7, .correlation = 5,
                              .process = k, .name = "k"};
        cr_assert_eq(cp_trace_add(&t, &call), 0);
        cr_assert_eq(cp_trace_add(&t, &kernel), 0);
    }
    char *text = cp_chrome_trace(&t, "program");
    cr_assert_not_null(text);
    counts c = count(text);
    cr_expect_eq(c.processes, 1 + 2, "the host and a GPU track per process");
    cr_expect_eq(c.starts, 2);
    cr_expect_eq(c.finishes, 2);
    cr_expect_eq(c.unmatched_flows, 0);
    cr_expect_not_null(strstr(text, "GPU 0, context 1, pid 200"), "%s", text);
    cr_expect_not_null(strstr(text, "CUDA API, pid 200"));
    /* The second process's call starts its flow on its own host thread. */
    cJSON *root = cJSON_Parse(text);
    const cJSON *e;
    int second = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        if (strcmp(ph, "s") == 0 && cJSON_GetObjectItem(e, "tid")->valueint == 3)
            second++;
    }
    cr_expect_eq(second, 1, "one flow from process 1's API thread");
    cJSON_Delete(root);
    free(text);
    cp_trace_free(&t);
}

/* Host records of known threads: two rows per thread, named after it, one
 * for its calls, where they nest, and one for its ranges, as Nsight
 * Systems shows them; the launch's flow starts on its thread's row.
 * Records of no known thread keep the process's rows. */
Test(chrome, each_thread_gets_its_row)
{
    cp_trace t;
    cp_trace_init(&t);
    cp_activity items[] = {
        {.kind = CP_ACT_RANGE, .start = 5, .end = 60, .thread = 11, .name = "step"},
        {.kind = CP_ACT_RUNTIME, .start = 10, .end = 40, .thread = 11, .correlation = 1,
         .name = "cudaLaunchKernel"},
        {.kind = CP_ACT_RUNTIME, .start = 20, .end = 50, .thread = 22, .correlation = 2,
         .name = "cudaMemcpyAsync"},
        {.kind = CP_ACT_RUNTIME, .start = 70, .end = 80, .correlation = 3, .name = "cudaFree"},
        {.kind = CP_ACT_KERNEL, .start = 45, .end = 90, .context = 1, .stream = 7,
         .correlation = 1, .name = "k"},
    };
    for (size_t i = 0; i < sizeof items / sizeof *items; i++)
        cr_assert_eq(cp_trace_add(&t, &items[i]), 0);
    char *text = cp_chrome_trace(&t, "threads");
    cr_assert_not_null(text);
    cr_expect_not_null(strstr(text, "\"thread 11\""), "%s", text);
    cr_expect_not_null(strstr(text, "\"thread 22\""), "%s", text);
    cJSON *root = cJSON_Parse(text);
    const cJSON *e;
    long long tid_of[3] = {-1, -1, -1}, flow_tid = -1;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        const cJSON *name = cJSON_GetObjectItem(e, "name");
        long long tid = (long long)cJSON_GetObjectItem(e, "tid")->valuedouble;
        if (strcmp(ph, "X") == 0 && cJSON_IsString(name)) {
            if (strcmp(name->valuestring, "step") == 0)
                tid_of[0] = tid;
            if (strcmp(name->valuestring, "cudaLaunchKernel") == 0)
                tid_of[1] = tid;
            if (strcmp(name->valuestring, "cudaMemcpyAsync") == 0)
                tid_of[2] = tid;
        }
        if (strcmp(ph, "s") == 0)
            flow_tid = tid;
    }
    cr_expect_eq(tid_of[0], tid_of[1] + 1, "the range on the row after its thread's calls");
    cr_expect_not_null(strstr(text, "\"thread 11 NVTX\""), "%s", text);
    cr_expect_neq(tid_of[1], tid_of[2], "the other thread's call has its own");
    cr_expect_eq(flow_tid, tid_of[1], "the launch's flow starts on its thread's row");
    cr_expect_not_null(strstr(text, "\"CUDA API\""), "a call of no known thread keeps the row");
    cJSON_Delete(root);
    free(text);
    cp_trace_free(&t);
}

/* Slices of one row that partly overlap: Perfetto and chrome://tracing
 * draw a row as a stack, so an "X" event that crosses another's end is
 * cut or dropped. Counts them over every row of `text`, and the rows
 * named as rows beside another ("NAME (2)" and on). */
static size_t partial_overlaps(const char *text, size_t *rows_beside)
{
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root);
    typedef struct x {
        double pid, tid, ts, end;
    } x;
    size_t n = 0, cap = 1024;
    x *xs = malloc(cap * sizeof *xs);
    cr_assert_not_null(xs);
    *rows_beside = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        if (strcmp(ph, "M") == 0) {
            const cJSON *args = cJSON_GetObjectItem(e, "args");
            const char *name = cJSON_GetObjectItem(args, "name")->valuestring;
            *rows_beside += strstr(name, " (2)") != NULL;
            continue;
        }
        if (strcmp(ph, "X") != 0)
            continue;
        if (n == cap) {
            cap *= 2;
            xs = realloc(xs, cap * sizeof *xs);
            cr_assert_not_null(xs);
        }
        double ts = cJSON_GetObjectItem(e, "ts")->valuedouble;
        xs[n++] = (x){cJSON_GetObjectItem(e, "pid")->valuedouble,
                      cJSON_GetObjectItem(e, "tid")->valuedouble, ts,
                      ts + cJSON_GetObjectItem(e, "dur")->valuedouble};
    }
    cJSON_Delete(root);
    /* Per row, by start, the longer first: a slice must end within the
     * innermost slice still open at its start. */
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n; k++) {
            if (i == k || xs[i].pid != xs[k].pid || xs[i].tid != xs[k].tid)
                continue;
            bad += xs[k].ts > xs[i].ts && xs[k].ts < xs[i].end && xs[k].end > xs[i].end;
        }
    free(xs);
    return bad;
}

/* The host-threads fixture was recorded before threads were kept: the
 * calls of up to 32 threads share the CUDA API row and overlap there (55
 * times in streams-32). They go on rows beside it where they nest; the
 * same records on one row would overlap, which the count sees. */
Test(chrome, overlapping_slices_go_on_rows_beside)
{
    cr_assert_eq(cp_trace_file_read(CUPROOF_FIXTURES "/host-threads-h100.trace.json", &f), 0,
                 "%s", cp_last_error());
    size_t rows = 0, overlapping_records = 0;
    for (size_t i = 0; i < f.nvariants; i++) {
        const cp_trace *t = &f.variants[i].trace;
        char *text = cp_chrome_trace(t, f.variants[i].name);
        cr_assert_not_null(text);
        size_t beside;
        cr_expect_eq(partial_overlaps(text, &beside), 0, "%s", f.variants[i].name);
        rows += beside;
        free(text);
        /* The check itself: the records' own intervals on their rows as
         * they would be without rows beside. */
        for (size_t a = 0; a < t->n; a++)
            for (size_t b = 0; b < t->n; b++) {
                const cp_activity *x = &t->items[a], *y = &t->items[b];
                overlapping_records += !cp_activity_is_device_work(x) &&
                                       !cp_activity_is_device_work(y) && x->kind == y->kind &&
                                       y->start > x->start && y->start < x->end && y->end > x->end;
            }
    }
    cr_expect_gt(overlapping_records, 55, "the recorded calls do overlap on one row");
    cr_expect_gt(rows, 0, "rows beside the CUDA API row");
    cp_trace_file_free(&f);
}

/* With several processes a thread's rows say whose they are. */
Test(chrome, threads_of_several_processes_name_their_pid)
{
    cp_trace t;
    cp_trace_init(&t);
    cp_process p = {.pid = 4242, .command = "parent"};
    cr_assert_eq(cp_trace_add_process(&t, &p), 0);
    p = (cp_process){.pid = 4343, .command = "child"};
    cr_assert_eq(cp_trace_add_process(&t, &p), 1);
    cp_activity items[] = {
        {.kind = CP_ACT_RANGE, .start = 5, .end = 60, .thread = 11, .process = 1, .name = "step"},
        {.kind = CP_ACT_RUNTIME, .start = 10, .end = 40, .thread = 11, .process = 1,
         .correlation = 1, .name = "cudaLaunchKernel"},
    };
    for (size_t i = 0; i < sizeof items / sizeof *items; i++)
        cr_assert_eq(cp_trace_add(&t, &items[i]), 0);
    char *text = cp_chrome_trace(&t, "processes");
    cr_assert_not_null(text);
    cr_expect_not_null(strstr(text, "\"thread 11, pid 4343\""), "%s", text);
    cr_expect_not_null(strstr(text, "\"thread 11 NVTX, pid 4343\""), "%s", text);
    free(text);
    cp_trace_free(&t);
}
