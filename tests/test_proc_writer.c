/*
 * The injection library's writer against the reader: hand-built CUPTI
 * records written as a cuproof.proc/1 file (collect/proc_writer.c) and
 * read back (reports/proc.c) must give the same work, so that the two
 * cannot drift apart (they once spelled copy directions differently).
 */
#include <cuproof/error.h>
#include <cuproof/metrics.h>
#include <cuproof/units.h>
#include <cuproof/internal/capture.h>
#include <cuproof/internal/proc.h>
#include "collect/proc_writer.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <glob.h>
#include <unistd.h>
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ORIGIN 1795454802201045396ull

static char *text;
static size_t size;
static cp_proc_writer w;

static void open_writer(void)
{
    memset(&w, 0, sizeof w);
    w.out = open_memstream(&text, &size);
    cr_assert_not_null(w.out);
    w.origin = ORIGIN;
    cp_proc_writer_header(&w, "gpu \"1\"", 4242, 4200, "python3 train.py");
}

static void close_writer(void)
{
    free(text);
    text = NULL;
    free(w.warm);
}

TestSuite(proc_writer, .init = open_writer, .fini = close_writer);

static void kernel(uint64_t start, uint64_t end, uint32_t stream, uint32_t graph, const char *name)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = start;
    k.end = end;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = stream;
    k.correlationId = 7;
    k.gridX = k.gridY = k.gridZ = 2;
    k.blockX = 256;
    k.blockY = k.blockZ = 1;
    k.graphId = graph;
    k.graphNodeId = graph ? 1ull << 33 : 0;
    k.name = name;
    cp_proc_writer_record(&w, &k);
}

static void copy(uint64_t start, uint64_t end, uint32_t stream)
{
    CUpti_ActivityMemcpy6 c;
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    c.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    c.bytes = 4096;
    c.start = start;
    c.end = end;
    c.contextId = 1;
    c.streamId = stream;
    cp_proc_writer_record(&w, &c);
}

static void marker(uint64_t t, uint32_t id, CUpti_ActivityFlag flag, const char *name)
{
    CUpti_ActivityMarker2 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = flag;
    m.timestamp = t;
    m.id = id;
    m.name = name;
    m.domain = "";
    cp_proc_writer_record(&w, &m);
}

static void overhead(CUpti_ActivityOverheadKind kind, uint64_t start, uint64_t end)
{
    CUpti_ActivityOverhead3 o;
    memset(&o, 0, sizeof o);
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    o.overheadKind = kind;
    o.start = ORIGIN + start;
    o.end = ORIGIN + end;
    cp_proc_writer_record(&w, &o);
}

/* Every kind the file keeps, then the end line. */
static void write_program(void)
{
    marker(ORIGIN + 10, 1, CUPTI_ACTIVITY_FLAG_MARKER_START, "step");
    copy(ORIGIN + 20, ORIGIN + 120, 7);
    kernel(ORIGIN + 100, ORIGIN + 400, 8, 0, "mult_ker");
    kernel(ORIGIN + 150, ORIGIN + 300, 9, 3, "graph \"node\"");
    kernel(0, 0, 9, 0, "lost"); /* CUPTI left its timestamps at zero */
    marker(ORIGIN + 500, 1, CUPTI_ACTIVITY_FLAG_MARKER_END, "");

    CUpti_ActivityMemset4 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.start = ORIGIN + 600;
    s.end = ORIGIN + 610;
    s.bytes = 256;
    s.contextId = 1;
    s.streamId = 7;
    cp_proc_writer_record(&w, &s);

    CUpti_ActivityAPI api;
    memset(&api, 0, sizeof api);
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
    api.start = ORIGIN + 5;
    api.end = ORIGIN + 15;
    api.correlationId = 6;
    cp_proc_writer_record(&w, &api);
    api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    api.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
    cp_proc_writer_record(&w, &api);

    CUpti_ActivitySynchronization2 y;
    memset(&y, 0, sizeof y);
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    y.start = ORIGIN + 400;
    y.end = ORIGIN + 450;
    cp_proc_writer_record(&w, &y);

    CUpti_ActivityStream st;
    memset(&st, 0, sizeof st);
    st.kind = CUPTI_ACTIVITY_KIND_STREAM;
    st.streamId = 8;
    st.contextId = 1;
    st.flag = CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING;
    cp_proc_writer_record(&w, &st);

    CUpti_ActivityContext3 c;
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    c.contextId = 1;
    c.nullStreamId = 7;
    cp_proc_writer_record(&w, &c);

    CUpti_ActivityDevice5 d;
    memset(&d, 0, sizeof d);
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.name = "NVIDIA H100 80GB HBM3";
    d.computeCapabilityMajor = 9;
    d.numMultiprocessors = 132;
    cp_proc_writer_record(&w, &d);

    CUpti_Activity other = {.kind = CUPTI_ACTIVITY_KIND_FUNCTION};
    cp_proc_writer_record(&w, &other); /* a kind the file does not keep */
    /* CUPTI's overhead: summed into the cost, never written. */
    overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 1000, 1300);
    overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION, 2000, 2050);
    overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 3000, 3100);
    overhead((CUpti_ActivityOverheadKind)(99 << 16), 4000, 4007); /* a kind after CUDA 13.0 */

    marker(ORIGIN + 700, 2, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, "checkpoint");
    cp_proc_writer_profiler(&w, ORIGIN + 1, true);
    cp_proc_writer_profiler(&w, ORIGIN + 800, false);
    /* A capture window from the 7th occurrence of its range. */
    cp_proc_writer_capture(&w, ORIGIN + 850, true, 7, false);
    cp_proc_writer_capture(&w, ORIGIN + 870, false, 9, false);
    cp_proc_writer_mark(&w, ORIGIN + 900, NULL);
    w.dropped = 0;
    cp_proc_writer_mark(&w, ORIGIN + 1000, "exit");
    fflush(w.out);
}

Test(proc_writer, what_the_library_writes_the_reader_reads)
{
    write_program();
    fclose(w.out);
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_parse("written", text, size, &t), 0, "%s\n%s", cp_last_error(), text);
    cr_assert_eq(t.nprocesses, 1);
    const cp_process *p = &t.processes[0];
    cr_expect_eq(p->pid, 4242);
    cr_expect_eq(p->ppid, 4200);
    cr_expect_str_eq(p->host, "gpu \"1\"", "quotes survive the JSON");
    cr_expect_str_eq(p->command, "python3 train.py");
    cr_expect(p->ended);
    cr_expect_eq(p->zero_timestamps, 1, "the kernel with zero timestamps is counted, not kept");
    cr_expect_eq(p->last_ns, ORIGIN + 1000);

    cp_metrics m;
    cr_assert_eq(cp_timeline_analyse(&t, NULL, &m), 0);
    cr_expect_eq(m.kernels, 2);
    cr_expect_eq(m.copies, 1);
    cr_expect_eq(m.memsets, 1);
    cr_expect_eq(m.pageable_copies, 1);
    cr_expect_not_null(cp_metrics_finding(&m, "cuda_memcpy_async"));
    cr_expect_eq(m.peak_concurrent_kernels, 2);
    cr_expect_eq(m.span_ns, 590, "first copy at +20 to the memset's end at +610");

    size_t kernels = 0, ranges = 0, calls = 0, windows = 0;
    for (size_t i = 0; i < t.n; i++) {
        const cp_activity *a = &t.items[i];
        if (a->kind == CP_ACT_KERNEL) {
            kernels++;
            cr_expect_eq(a->grid[0], 2);
            cr_expect_eq(a->block[0], 256);
            if (a->graph_id) {
                cr_expect_eq(a->graph_id, 3);
                cr_expect_eq(a->graph_node, 1ull << 33);
                cr_expect_str_eq(a->name, "graph \"node\"");
            }
        } else if (a->kind == CP_ACT_MEMCPY) {
            cr_expect_eq(a->copy_dir, CP_COPY_HTOD, "the writer's HtoD is the reader's");
            cr_expect_eq(a->src, CP_MEM_PAGEABLE);
            cr_expect(a->async);
            cr_expect_eq(a->start, ORIGIN + 20, "times are exact");
        } else if (a->kind == CP_ACT_RANGE && a->name && strcmp(a->name, "step") == 0) {
            ranges++;
            cr_expect_eq(a->start, ORIGIN + 10);
            cr_expect_eq(a->end, ORIGIN + 500);
        } else if (a->kind == CP_ACT_RANGE && a->name &&
                   strcmp(a->name, CP_CAPTURE_RANGE_NAME) == 0) {
            windows++;
            cr_expect_eq(a->start, ORIGIN + 850);
            cr_expect_eq(a->end, ORIGIN + 870);
            cr_expect_eq(a->correlation, 7, "the window's first occurrence");
        } else if (a->kind == CP_ACT_RUNTIME) {
            calls++;
        }
    }
    cr_expect_eq(kernels, 2);
    cr_expect_eq(ranges, 1);
    cr_expect_eq(calls, 2, "a runtime and a driver call");
    cr_expect_eq(windows, 1);
    cp_metrics_free(&m);
    cp_trace_free(&t);
}

/* exec --capture steps:...'s warm-up windows: traced, and left out of the
 * file, so that no verdict rests on them; what starts before or after
 * them is written, and the window itself is there as a range of its own
 * name. */
Test(proc_writer, a_warm_up_windows_records_are_left_out)
{
    kernel(ORIGIN + 10, ORIGIN + 20, 7, 0, "before");
    cp_proc_writer_capture(&w, ORIGIN + 100, true, 3, true);
    kernel(ORIGIN + 110, ORIGIN + 150, 7, 0, "warm");
    cp_proc_writer_capture(&w, ORIGIN + 200, false, 3, true);
    cp_proc_writer_capture(&w, ORIGIN + 300, true, 4, false);
    kernel(ORIGIN + 310, ORIGIN + 350, 7, 0, "judged");
    /* Delivered late, as CUPTI's buffers come: still left out. */
    kernel(ORIGIN + 190, ORIGIN + 260, 7, 0, "warm, delivered late");
    cp_proc_writer_capture(&w, ORIGIN + 400, false, 4, false);
    cp_proc_writer_mark(&w, ORIGIN + 500, "exit");
    fclose(w.out);
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_parse("written", text, size, &t), 0, "%s\n%s", cp_last_error(), text);
    size_t kernels = 0, windows = 0, warm = 0;
    for (size_t i = 0; i < t.n; i++) {
        const cp_activity *a = &t.items[i];
        if (a->kind == CP_ACT_KERNEL) {
            kernels++;
            cr_expect(strcmp(a->name, "before") == 0 || strcmp(a->name, "judged") == 0, "%s",
                      a->name);
        } else if (a->kind == CP_ACT_RANGE) {
            windows += strcmp(a->name, CP_CAPTURE_RANGE_NAME) == 0;
            warm += strcmp(a->name, CP_WARMUP_RANGE_NAME) == 0;
        }
    }
    cr_expect_eq(kernels, 2);
    cr_expect_eq(windows, 1);
    cr_expect_eq(warm, 1);
    cp_trace_free(&t);
}

static int by_kind_and_time(const void *x, const void *y)
{
    const cp_activity *a = x, *b = y;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->end > b->end) - (a->end < b->end);
}

/* The rec form (CUPROOF_EXEC_FORMAT=rec) of the same program reads back as
 * the JSON lines do: the same activities field by field (ranges paired and
 * nested alike, although the profiler's window reaches the writer after a
 * marker that starts later), the same process and how it ended. */
Test(proc_writer, the_rec_form_reads_back_as_the_json_lines_do)
{
    write_program();
    fclose(w.out);
    cp_trace lines, rec;
    cp_trace_init(&lines);
    cp_trace_init(&rec);
    cr_assert_eq(cp_proc_parse("written", text, size, &lines), 0, "%s", cp_last_error());

    char path[] = "/tmp/cuproof-proc-rec-XXXXXX";
    cr_assert_not_null(mkdtemp(path));
    char file[128];
    snprintf(file, sizeof file, "%s/gpu-1.4242.proc.cprec", path);
    memset(&w, 0, sizeof w);
    cr_assert_eq(cp_rec_writer_open(&w.rec, file), 0);
    w.origin = ORIGIN;
    cp_proc_writer_header(&w, "gpu \"1\"", 4242, 4200, "python3 train.py");
    write_program();
    cr_expect_null(w.rec, "the end mark closes the rec writer");
    size_t nfiles = 0;
    cr_assert_eq(cp_proc_read_dir(path, &rec, &nfiles), 0, "%s", cp_last_error());
    cr_expect_eq(nfiles, 1);

    cr_assert_eq(rec.n, lines.n);
    qsort(lines.items, lines.n, sizeof *lines.items, by_kind_and_time);
    qsort(rec.items, rec.n, sizeof *rec.items, by_kind_and_time);
    for (size_t i = 0; i < rec.n; i++) {
        const cp_activity *a = &lines.items[i], *b = &rec.items[i];
        cr_expect(a->kind == b->kind && a->start == b->start && a->end == b->end &&
                      a->device == b->device && a->context == b->context &&
                      a->stream == b->stream && a->correlation == b->correlation &&
                      a->graph_id == b->graph_id && a->graph_node == b->graph_node &&
                      a->bytes == b->bytes && a->copy_dir == b->copy_dir && a->src == b->src &&
                      a->dst == b->dst && a->async == b->async && a->depth == b->depth,
                  "activity %zu (%s at %llu) differs", i, cp_act_kind_name(a->kind),
                  (unsigned long long)(a->start - ORIGIN));
        cr_expect_str_eq(a->name ? a->name : "", b->name ? b->name : "", "activity %zu", i);
    }
    const cp_process *p = &lines.processes[0], *q = &rec.processes[0];
    cr_expect_eq(q->pid, p->pid);
    cr_expect_eq(q->ppid, p->ppid);
    cr_expect_str_eq(q->host, p->host);
    cr_expect_str_eq(q->command, p->command);
    cr_expect_eq(q->ended, p->ended);
    cr_expect_eq(q->last_ns, p->last_ns);
    cr_expect_eq(q->zero_timestamps, p->zero_timestamps);
    cr_expect_str_eq(q->why, p->why);
    remove(file);
    rmdir(path);
    cp_trace_free(&lines);
    cp_trace_free(&rec);
}

/* A CUPTI NAME record as nvtxNameCudaStream makes it. */
static void name_record(CUpti_ActivityObjectKind kind, uint32_t device, uint32_t context,
                        uint32_t stream, const char *name)
{
    CUpti_ActivityName n;
    memset(&n, 0, sizeof n);
    n.kind = CUPTI_ACTIVITY_KIND_NAME;
    n.objectKind = kind;
    n.objectId.dcs.deviceId = device;
    n.objectId.dcs.contextId = context;
    n.objectId.dcs.streamId = stream;
    n.name = name;
    cp_proc_writer_record(&w, &n);
}

/* The names the program gave streams, as CUPTI's NAME records, read back
 * from both forms into the trace's table for the file's process, by the
 * ids its kernels carry (its kernel's stream 8 of context 1 named, the
 * copy's stream 7 not); a NAME of another object is not kept, nor
 * counted as a record written. */
Test(proc_writer, a_stream_name_reads_back_from_both_forms)
{
    name_record(CUPTI_ACTIVITY_OBJECT_STREAM, 0, 1, 8, "compute <\"k\">");
    name_record(CUPTI_ACTIVITY_OBJECT_CONTEXT, 0, 1, 0, "a context");
    kernel(ORIGIN + 100, ORIGIN + 400, 8, 0, "mult_ker");
    copy(ORIGIN + 20, ORIGIN + 120, 7);
    cp_proc_writer_mark(&w, ORIGIN + 1000, "exit");
    fclose(w.out);
    cr_expect_eq(w.cost.records, 3, "the stream's name, the kernel and the copy");
    cp_trace lines, rec;
    cp_trace_init(&lines);
    cp_trace_init(&rec);
    cr_assert_eq(cp_proc_parse("written", text, size, &lines), 0, "%s\n%s", cp_last_error(), text);

    char path[] = "/tmp/cuproof-proc-names-XXXXXX", file[128];
    cr_assert_not_null(mkdtemp(path));
    snprintf(file, sizeof file, "%s/gpu-1.4242.proc.cprec", path);
    memset(&w, 0, sizeof w);
    cr_assert_eq(cp_rec_writer_open(&w.rec, file), 0);
    w.origin = ORIGIN;
    cp_proc_writer_header(&w, "gpu-1", 4242, 4200, "python3 train.py");
    name_record(CUPTI_ACTIVITY_OBJECT_STREAM, 0, 1, 8, "compute <\"k\">");
    name_record(CUPTI_ACTIVITY_OBJECT_CONTEXT, 0, 1, 0, "a context");
    kernel(ORIGIN + 100, ORIGIN + 400, 8, 0, "mult_ker");
    copy(ORIGIN + 20, ORIGIN + 120, 7);
    cp_proc_writer_mark(&w, ORIGIN + 1000, "exit");
    cr_assert_eq(cp_proc_read(file, &rec), 0, "%s", cp_last_error());

    const cp_trace *both[2] = {&lines, &rec};
    for (int k = 0; k < 2; k++) {
        const cp_trace *t = both[k];
        const char *form = k ? "rec" : "JSON lines";
        cr_expect_eq(t->nstream_names, 1, "%s", form);
        const cp_activity *kern = NULL;
        for (size_t i = 0; i < t->n; i++)
            if (t->items[i].kind == CP_ACT_KERNEL)
                kern = &t->items[i];
        cr_assert_not_null(kern, "%s", form);
        char label[CP_STREAM_LABEL_MAX];
        cr_expect_str_eq(cp_stream_label(t, kern->process, kern->device, kern->context,
                                         kern->stream, label, sizeof label),
                         "compute <\"k\"> (stream 8)", "%s", form);
        cr_expect_str_eq(cp_stream_label(t, 0, 0, 1, 7, label, sizeof label), "stream 7", "%s",
                         form);
    }
    remove(file);
    rmdir(path);
    cp_trace_free(&lines);
    cp_trace_free(&rec);
}

/* NCCL's payloads (collect/nccl_payload.h) as NCCL lays them out
 * (src/include/nvtx_payload_schemas.h): the decoder reads each schema it
 * knows, and nothing from one it does not, a short payload or a call
 * without a communicator. */
Test(proc_writer, nccl_payloads_decode_by_schema)
{
    struct {
        uint64_t comm;
        size_t bytes;
        int op;
    } all_reduce = {0x5ee0c0ffee1234ull, 1 << 20, 0};
    struct {
        uint64_t comm;
        size_t bytes;
        int peer;
    } send = {0x77ull, 4096, 1};
    cp_nccl_call c;
    cr_assert(cp_nccl_payload_decode(CP_NVTX_SCHEMA_ID_STATIC_START + 5, &all_reduce,
                                     sizeof all_reduce, &c));
    cr_expect_str_eq(c.name, "ncclAllReduce");
    cr_expect_eq(c.comm, 0x5ee0c0ffee1234ull);
    cr_expect_eq(c.bytes, 1u << 20);
    cr_expect_eq(c.peer, -1, "an all-reduce has no peer; its op is not one");
    cr_assert(cp_nccl_payload_decode(CP_NVTX_SCHEMA_ID_STATIC_START + 9, &send, sizeof send, &c));
    cr_expect_str_eq(c.name, "ncclSend");
    cr_expect_eq(c.peer, 1);
    cr_assert(cp_nccl_payload_decode(CP_NVTX_SCHEMA_ID_STATIC_START + 10, &send, sizeof send, &c));
    cr_expect_str_eq(c.name, "ncclRecv");
    c.comm = 42;
    cr_expect_not(cp_nccl_payload_decode(CP_NVTX_SCHEMA_ID_STATIC_START + 0, &send, sizeof send, &c),
                  "ncclCommInitRank's schema: not a call of a collective");
    cr_expect_not(cp_nccl_payload_decode(CP_NVTX_SCHEMA_ID_STATIC_START + 99, &send, sizeof send, &c));
    cr_expect_not(cp_nccl_payload_decode(5, &send, sizeof send, &c), "a dynamic or foreign id");
    cr_expect_not(cp_nccl_payload_decode(CP_NVTX_SCHEMA_ID_STATIC_START + 5, &all_reduce, 12, &c),
                  "shorter than its schema");
    send.comm = 0;
    cr_expect_not(cp_nccl_payload_decode(CP_NVTX_SCHEMA_ID_STATIC_START + 9, &send, sizeof send, &c),
                  "no communicator");
    cr_expect_eq(c.comm, 42, "left untouched");
}

/* An NCCL call's range with its payload: the all-reduce's payload taken
 * 300 ns before its marker's start goes with it, in both forms; the send
 * whose payload was taken 2 ms from its marker, and a range of another
 * name, go without; a payload whose range never comes is let go at the
 * end. */
static void write_nccl_program(void)
{
    cp_nccl_call ar = {"ncclAllReduce", 0xabcdef0123456789ull, 1 << 20, -1};
    cp_nccl_call send = {"ncclSend", 0x77ull, 4096, 1};
    cp_nccl_call lost = {"ncclBroadcast", 0x77ull, 64, 0};
    cp_proc_writer_nccl(&w, ORIGIN + 1000, &ar);
    cp_proc_writer_nccl(&w, ORIGIN + 1000, &send);
    cp_proc_writer_nccl(&w, ORIGIN + 1000, &lost);
    marker(ORIGIN + 1300, 1, CUPTI_ACTIVITY_FLAG_MARKER_START, "ncclAllReduce");
    marker(ORIGIN + 9000, 1, CUPTI_ACTIVITY_FLAG_MARKER_END, NULL);
    marker(ORIGIN + 1000 + 2000000, 2, CUPTI_ACTIVITY_FLAG_MARKER_START, "ncclSend");
    marker(ORIGIN + 2009000, 2, CUPTI_ACTIVITY_FLAG_MARKER_END, NULL);
    marker(ORIGIN + 1100, 3, CUPTI_ACTIVITY_FLAG_MARKER_START, "step");
    marker(ORIGIN + 3000000, 3, CUPTI_ACTIVITY_FLAG_MARKER_END, NULL);
    cp_proc_writer_mark(&w, ORIGIN + 4000000, "exit");
    cr_expect_null(w.nccl, "the pending payloads are let go at the end");
}

/* The payloads' ring: when CP_PROC_NCCL_PENDING wait, the oldest goes
 * (its range then has none), the newest stays; taken ones leave it. */
Test(proc_writer, the_oldest_waiting_payload_goes_when_the_ring_is_full)
{
    cp_nccl_call call = {"ncclAllReduce", 0x77ull, 4096, -1};
    for (uint64_t i = 0; i <= CP_PROC_NCCL_PENDING; i++) {
        call.bytes = 4096 + i;
        cp_proc_writer_nccl(&w, ORIGIN + i * 10000000, &call);
    }
    cr_expect_eq(w.nnccl, CP_PROC_NCCL_PENDING);
    marker(ORIGIN, 1, CUPTI_ACTIVITY_FLAG_MARKER_START, "ncclAllReduce");
    marker(ORIGIN + (uint64_t)CP_PROC_NCCL_PENDING * 10000000, 2, CUPTI_ACTIVITY_FLAG_MARKER_START,
           "ncclAllReduce");
    marker(ORIGIN + 10000000, 3, CUPTI_ACTIVITY_FLAG_MARKER_START, "ncclAllReduce");
    /* The second, taken at the ring's start, left it; the newest, taken
     * at its end, stays a hole until those before it go. */
    cr_expect_eq(w.nnccl, CP_PROC_NCCL_PENDING - 1, "%zu", w.nnccl);
    cp_proc_writer_mark(&w, ORIGIN + 1, "exit");
    fclose(w.out);
    cr_expect_null(strstr(text, "\"bytes\":4096,"), "the first payload went: %s", text);
    char want[64];
    snprintf(want, sizeof want, "\"bytes\":%d,", 4096 + CP_PROC_NCCL_PENDING);
    cr_expect_not_null(strstr(text, want), "the newest stayed");
    cr_expect_not_null(strstr(text, "\"bytes\":4097,"), "the second stayed");
    cr_expect_null(w.nccl, "the end lets the ring go");
}

Test(proc_writer, an_nccl_calls_payload_goes_with_its_range_in_both_forms)
{
    write_nccl_program();
    fclose(w.out);
    cp_trace lines, rec;
    cp_trace_init(&lines);
    cp_trace_init(&rec);
    cr_assert_eq(cp_proc_parse("written", text, size, &lines), 0, "%s\n%s", cp_last_error(), text);
    cr_expect_not_null(strstr(text, "\"comm\":\"abcdef0123456789\",\"bytes\":1048576,\"peer\":-1"),
                       "%s", text);

    char path[] = "/tmp/cuproof-proc-nccl-XXXXXX", file[128];
    cr_assert_not_null(mkdtemp(path));
    snprintf(file, sizeof file, "%s/gpu-1.4242.proc.cprec", path);
    memset(&w, 0, sizeof w);
    cr_assert_eq(cp_rec_writer_open(&w.rec, file), 0);
    w.origin = ORIGIN;
    cp_proc_writer_header(&w, "gpu-1", 4242, 4200, "python3 train.py");
    write_nccl_program();
    cr_assert_eq(cp_proc_read(file, &rec), 0, "%s", cp_last_error());

    const cp_trace *both[2] = {&lines, &rec};
    for (int k = 0; k < 2; k++) {
        const cp_trace *t = both[k];
        const char *form = k ? "rec" : "JSON lines";
        int ranges = 0;
        for (size_t i = 0; i < t->n; i++) {
            const cp_activity *a = &t->items[i];
            if (a->kind != CP_ACT_RANGE)
                continue;
            ranges++;
            if (strcmp(a->name, "ncclAllReduce") == 0) {
                cr_expect_eq(a->comm, 0xabcdef0123456789ull, "%s", form);
                cr_expect_eq(a->bytes, 1u << 20, "%s", form);
                cr_expect_eq(a->peer, -1, "%s", form);
                cr_expect_eq(a->end - a->start, 7700, "%s", form);
            } else {
                cr_expect_eq(a->comm, 0, "%s: %s has no payload of its own", form, a->name);
                cr_expect_eq(a->bytes, 0, "%s: %s", form, a->name);
            }
        }
        cr_expect_eq(ranges, 3, "%s", form);
    }
    remove(file);
    rmdir(path);
    cp_trace_free(&lines);
    cp_trace_free(&rec);
}

static void expect_cost_eq(const cp_tracing_cost *got, const cp_tracing_cost *want,
                           const char *form)
{
    cr_expect_eq(got->recorded, want->recorded, "%s", form);
    cr_expect_eq(got->api_all, want->api_all, "%s", form);
    cr_expect_eq(got->records, want->records, "%s: records", form);
    cr_expect_eq(got->api_records, want->api_records, "%s: API records", form);
    cr_expect_eq(got->api_filtered, want->api_filtered, "%s", form);
    cr_expect_eq(got->buffers, want->buffers, "%s", form);
    cr_expect_eq(got->overhead_records, want->overhead_records, "%s", form);
    for (int k = 0; k < CP_OVERHEAD_KIND_COUNT; k++)
        cr_expect_eq(got->overhead_ns[k], want->overhead_ns[k], "%s: overhead %s", form,
                     cp_overhead_kind_name((cp_overhead_kind)k));
}

/* What tracing cost reads back from both forms as the writer counted it:
 * the records it wrote, the API calls among them, CUPTI's overhead by
 * kind (one of a later CUDA's kinds as "other"), and what the library set
 * (the filter, the buffers). */
Test(proc_writer, the_tracing_cost_reads_back_from_both_forms)
{
    w.cost = (cp_tracing_cost){.recorded = true, .api_filtered = 1006, .buffers = 37};
    write_program();
    fclose(w.out);
    cp_tracing_cost lines_cost = w.cost;
    cr_expect_eq(lines_cost.api_records, 2);
    cr_expect_eq(lines_cost.overhead_records, 4);
    cr_expect_eq(lines_cost.overhead_ns[CP_OVERHEAD_BUFFER_FLUSH], 400);
    cr_expect_eq(lines_cost.overhead_ns[CP_OVERHEAD_INSTRUMENTATION], 50);
    cr_expect_eq(lines_cost.overhead_ns[CP_OVERHEAD_OTHER], 7);
    cr_expect_eq(lines_cost.records, 14, "the overhead records are not written");
    cp_trace lines, rec;
    cp_trace_init(&lines);
    cp_trace_init(&rec);
    cr_assert_eq(cp_proc_parse("written", text, size, &lines), 0, "%s", cp_last_error());
    expect_cost_eq(&lines.processes[0].cost, &lines_cost, "JSON lines");

    char path[] = "/tmp/cuproof-proc-cost-XXXXXX", file[128];
    cr_assert_not_null(mkdtemp(path));
    snprintf(file, sizeof file, "%s/gpu-1.4242.proc.cprec", path);
    memset(&w, 0, sizeof w);
    cr_assert_eq(cp_rec_writer_open(&w.rec, file), 0);
    w.origin = ORIGIN;
    w.cost = (cp_tracing_cost){.recorded = true, .api_all = true, .buffers = 5};
    cp_proc_writer_header(&w, "gpu-1", 4242, 4200, "python3 train.py");
    write_program();
    cr_assert_eq(cp_proc_read(file, &rec), 0, "%s", cp_last_error());
    expect_cost_eq(&rec.processes[0].cost, &w.cost, "rec");
    cr_expect(rec.processes[0].cost.api_all);
    cr_expect_eq(rec.processes[0].cost.records, 10, "markers paired, no sync/stream/device");

    /* Two processes' costs: summed, the filter the largest, api_all only
     * when every one recorded every call. */
    cr_assert_geq(cp_trace_add_process(&rec, &lines.processes[0]), 0);
    cp_tracing_cost sum;
    cr_expect_eq(cp_trace_tracing_cost(&rec, &sum), 2);
    cr_expect(sum.recorded);
    cr_expect_not(sum.api_all);
    cr_expect_eq(sum.buffers, 42);
    cr_expect_eq(sum.api_filtered, 1006);
    cr_expect_eq(sum.records, 24);
    cr_expect_eq(cp_tracing_overhead_ns(&sum), 2 * 457);
    remove(file);
    rmdir(path);
    cp_trace_free(&lines);
    cp_trace_free(&rec);
}

/* A trace from a writer before the cost (the recorded fixtures, both
 * forms) has no cost recorded: unknown, not zero. A process that dies
 * keeps the cost of its last flush. */
Test(proc_writer, a_trace_from_before_the_cost_has_none_recorded)
{
    fclose(w.out);
    static const char *const old[] = {CUPROOF_FIXTURES "/exec-h100/streams-graph-nvtx.proc.jsonl",
                                      CUPROOF_FIXTURES "/exec-h100-threads/nvtx-ranges.proc.cprec"};
    for (size_t i = 0; i < 2; i++) {
        cp_trace t;
        cp_trace_init(&t);
        cr_assert_eq(cp_proc_read(old[i], &t), 0, "%s", cp_last_error());
        cr_expect_not(t.processes[0].cost.recorded, "%s", old[i]);
        cp_tracing_cost sum;
        cr_expect_eq(cp_trace_tracing_cost(&t, &sum), 0);
        cr_expect_not(sum.recorded);
        cp_trace_free(&t);
    }
    free(text);
    open_writer();
    w.cost = (cp_tracing_cost){.recorded = true, .buffers = 3};
    kernel(ORIGIN + 100, ORIGIN + 400, 8, 0, "mult_ker");
    cp_proc_writer_mark(&w, ORIGIN + 500, NULL);
    w.cost.buffers = 4; /* after the last flush: lost with the process */
    fclose(w.out);
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_parse("cut", text, size, &t), 0, "%s", cp_last_error());
    cr_expect_not(t.processes[0].ended);
    cr_expect(t.processes[0].cost.recorded);
    cr_expect_eq(t.processes[0].cost.buffers, 3);
    cr_expect_eq(t.processes[0].cost.records, 1);
    cp_trace_free(&t);
}

/* A rec file whose process died (no end mark) reads as a truncated
 * process, its last time the latest its records hold. */
Test(proc_writer, a_rec_file_without_its_end_is_a_truncated_process)
{
    fclose(w.out);
    char path[] = "/tmp/cuproof-proc-rec-XXXXXX";
    cr_assert_not_null(mkdtemp(path));
    char file[128];
    snprintf(file, sizeof file, "%s/gpu-1.4243.proc.cprec", path);
    memset(&w, 0, sizeof w);
    cr_assert_eq(cp_rec_writer_open(&w.rec, file), 0);
    cp_proc_writer_header(&w, "gpu-1", 4243, 4200, "python3 worker.py");
    kernel(ORIGIN + 100, ORIGIN + 400, 8, 0, "mult_ker");
    cp_proc_writer_mark(&w, ORIGIN + 500, NULL); /* a flush: the file stays open */
    cr_expect_not_null(w.rec);
    cp_rec_writer_abandon(w.rec); /* the process dies */
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(file, &t), 0, "%s", cp_last_error());
    cr_assert_eq(t.nprocesses, 1);
    cr_expect_not(t.processes[0].ended);
    cr_expect_eq(t.processes[0].last_ns, ORIGIN + 400);
    cr_expect_eq(t.n, 1);
    remove(file);
    rmdir(path);
    cp_trace_free(&t);
}

/* Without its end line (the process left by _exit), the file is read as
 * truncated, with what it held up to its last flush. */
Test(proc_writer, a_file_without_its_end_is_truncated)
{
    kernel(ORIGIN + 100, ORIGIN + 400, 8, 0, "mult_ker");
    cp_proc_writer_mark(&w, ORIGIN + 500, NULL);
    kernel(ORIGIN + 600, ORIGIN + 700, 8, 0, "mult_ker");
    fclose(w.out);
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_parse("cut", text, size, &t), 0, "%s", cp_last_error());
    cr_expect_not(t.processes[0].ended);
    cr_expect_geq(t.processes[0].last_ns, ORIGIN + 500);
    cp_trace_free(&t);
}

/* A writer with no file writes nothing and does not crash: the library
 * keeps one when it could not open its file. */
Test(proc_writer, no_file_writes_nothing)
{
    fclose(w.out);
    cp_proc_writer none = {0};
    cp_proc_writer_record(&none, &(CUpti_Activity){.kind = CUPTI_ACTIVITY_KIND_MEMCPY});
    cp_proc_writer_mark(&none, 5, "exit");
    cp_proc_writer_profiler(&none, 5, true);
    cr_expect_eq(none.cost.records, 0);
}

/* Loads the injection library as the driver does and calls its entry
 * point once, with CUPROOF_EXEC_DIR a new directory (the other settings
 * are the caller's); `file` gets the one file it wrote there, *.EXT.
 * Returns the library. */
static void *inject_once(const char *ext, char *file, size_t len)
{
    char dir[] = "/tmp/cuproof-inject-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    setenv("CUPROOF_EXEC_DIR", dir, 1);
    void *lib = dlopen(CUPROOF_INJECT, RTLD_NOW);
    cr_assert_not_null(lib, "%s", dlerror());
    int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
    cr_assert_not_null(init);
    cr_expect_eq(init(), 1);
    char path[128];
    snprintf(path, sizeof path, "%s/*.%s", dir, ext);
    glob_t g;
    cr_assert_eq(glob(path, 0, NULL, &g), 0, "no %s file in %s", ext, dir);
    cr_expect_eq(g.gl_pathc, 1, "one file per process");
    snprintf(file, len, "%s", g.gl_pathv[0]);
    globfree(&g);
    return lib;
}

/* The injection library itself, loaded as the driver loads it: it writes
 * its process's file into CUPROOF_EXEC_DIR and initialises once however
 * often it is called. Without a driver CUPTI refuses, and the file says
 * why in its end line (which the launcher reports); with one, tracing
 * starts and the end line comes at exit. */
Test(inject, the_library_writes_its_file_and_says_why_it_cannot_trace)
{
    /* The launcher's rank and the exec run reach the header. */
    setenv("RANK", "3", 1);
    setenv("WORLD_SIZE", "4", 1);
    setenv("LOCAL_RANK", "one", 1);
    setenv("CUPROOF_EXEC_RUN", "gpu-1.77.123", 1);
    char file[256], line[2048];
    void *lib = inject_once("proc.jsonl", file, sizeof file);
    int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
    cr_expect_eq(init(), 1, "a second call does nothing more");
    cr_expect_null(dlsym(lib, "cp_proc_writer_record"), "only the entry points are exported");
    FILE *f = fopen(file, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_expect_not_null(strstr(line, "\"schema\":\"cuproof.proc/1\""), "%s", line);
    char pid[32];
    snprintf(pid, sizeof pid, "\"pid\":%d,", (int)getpid());
    cr_expect_not_null(strstr(line, pid), "%s", line);
    cr_expect_not_null(strstr(line, "\"rank\":3,\"local_rank\":-1,\"world_size\":4,"
                                    "\"rank_var\":\"RANK\",\"rank_why\":\"LOCAL_RANK=\\\"one\\\" "
                                    "is not a local rank"),
                       "%s", line);
    cr_expect_not_null(strstr(line, "\"run\":\"gpu-1.77.123\""), "%s", line);
    if (fgets(line, sizeof line, f) && strstr(line, "\"k\":\"end\""))
        cr_expect_not_null(strstr(line, "cupti unavailable"), "%s", line);
    fclose(f);
}

/* Under CUPROOF_EXEC_FORMAT=rec the library writes HOST.PID.proc.cprec,
 * which the reader takes as this process; without a driver its end says
 * why nothing was traced. */
Test(inject, the_rec_form_names_its_process_and_why)
{
    setenv("CUPROOF_EXEC_FORMAT", "rec", 1);
    setenv("SLURM_PROCID", "5", 1);
    setenv("CUPROOF_EXEC_RUN", "gpu-1.77.124", 1);
    char file[256];
    inject_once("proc.cprec", file, sizeof file);
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(file, &t), 0, "%s", cp_last_error());
    cr_assert_eq(t.nprocesses, 1);
    cr_expect_eq(t.processes[0].pid, (uint32_t)getpid());
    cr_expect_eq(cp_process_rank(&t.processes[0]), 5);
    cr_expect_str_eq(t.processes[0].rank_var, "SLURM_PROCID");
    cr_expect_str_eq(t.processes[0].run, "gpu-1.77.124");
    if (t.processes[0].ended)
        cr_expect_not_null(strstr(t.processes[0].why, "cupti unavailable"), "%s",
                           t.processes[0].why);
    cp_trace_free(&t);
}

/* The library's file when `variable` asks it to trace what it has no
 * name for (the benchmark's CUPROOF_EXEC_KINDS or CUPROOF_EXEC_HOOKS): the
 * process is not traced and its end record says why (`why`), which the
 * trust rule turns into no verdict. */
static void untraced_why(const char *variable, const char *value, char *why, size_t len)
{
    setenv(variable, value, 1);
    char file[256];
    inject_once("proc.jsonl", file, sizeof file);
    cp_trace t;
    cp_trace_init(&t);
    cr_assert_eq(cp_proc_read(file, &t), 0, "%s", cp_last_error());
    cr_assert_eq(t.nprocesses, 1);
    cr_expect(t.processes[0].ended, "the not-traced process closes its file");
    snprintf(why, len, "%s", t.processes[0].why);
    cp_trace_free(&t);
}

/* A name no kind has (it once read past the end of a list of names one
 * shorter than the kinds, and crashed), with the whole list in the why,
 * "name" among it. */
Test(inject, a_misnamed_kind_traces_nothing_and_says_why)
{
    char why[512];
    untraced_why("CUPROOF_EXEC_KINDS", "kernel,kernal", why, sizeof why);
    cr_expect_str_eq(why, CP_WHY_NOT_TRACED ": CUPROOF_EXEC_KINDS names 'kernal', not a kind "
                          "(kernel, memcpy, memset, runtime, driver, sync, stream, context, device, "
                          "marker, name, overhead)");
}

Test(inject, a_misnamed_hook_traces_nothing_and_says_why)
{
    char why[512];
    untraced_why("CUPROOF_EXEC_HOOKS", "runtime", why, sizeof why);
    cr_expect_str_eq(why, CP_WHY_NOT_TRACED ": CUPROOF_EXEC_HOOKS is 'runtime', not driver or none");
}
