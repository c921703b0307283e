/*
 * libFuzzer target: any bytes as a per-process trace file (cuproof.proc/1).
 * The reader must accept them or reject them with an error that names the
 * file and leaves the trace as it was, never crash or leak; what it accepts
 * must keep the promises of cuproof/internal/proc.h and go through the analysis,
 * the scopes of a traced program and the Chrome export. The same bytes
 * pushed in pieces (a file still being written, as cuproof exec's
 * follower reads it) must read alike: the same records and processes, or
 * the same error.
 */
#include <cuproof/internal/perfetto.h>
#include "reports/perfetto_pb.h"

#include <cuproof/error.h>
#include <cuproof/expect.h>
#include <cuproof/metrics.h>
#include <cuproof/internal/proc.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char seed[] =
    "{\"schema\":\"cuproof.proc/1\",\"host\":\"h\",\"pid\":1,\"ppid\":0,\"command\":\"a\","
    "\"origin_ns\":\"1000\"}\n"
    "{\"k\":\"kernel\",\"s\":1,\"e\":2,\"dev\":0,\"ctx\":1,\"str\":1,\"cor\":1,\"grid\":[1,1,1],"
    "\"block\":[1,1,1],\"graph\":0,\"node\":0,\"name\":\"k\"}\n";

/* The new process's records: its own index, times within its last_ns,
 * ranges that do not end before they start, depths below their count. */
static void check_process(const cp_trace *t, size_t first)
{
    const cp_process *p = &t->processes[1];
    size_t ranges = 0;
    for (size_t i = first; i < t->n; i++)
        ranges += t->items[i].kind == CP_ACT_RANGE;
    for (size_t i = first; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (a->process != 1 || a->kind >= CP_ACT_KIND_COUNT)
            abort();
        if (a->start > p->last_ns || a->end > p->last_ns)
            abort();
        if (a->kind == CP_ACT_RANGE && (a->end < a->start || a->depth >= ranges))
            abort();
    }
    if (t->dropped_records != p->dropped)
        abort();
}

/* Every scope the new process offers: its first range, its pid, the
 * device of its first work; clipped work lies inside the range's reach. */
static void check_scopes(const cp_trace *t, size_t first)
{
    const char *range = NULL;
    uint64_t lo = UINT64_MAX, hi = 0;
    int device = -1;
    for (size_t i = first; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (a->kind == CP_ACT_RANGE && !range)
            range = a->name;
        if (device < 0 && cp_activity_is_device_work(a))
            device = (int)a->device;
    }
    for (size_t i = 0; range && i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (a->kind == CP_ACT_RANGE && strcmp(a->name, range) == 0) {
            lo = a->start < lo ? a->start : lo;
            hi = a->end > hi ? a->end : hi;
        }
    }
    char why[256], number[16];
    cp_trace out;
    cp_metrics m;
    if (range) {
        if (cp_trace_scope(t, "range", range, &out, why, sizeof why) != 0)
            abort();
        for (size_t i = 0; i < out.n; i++)
            if (cp_activity_is_device_work(&out.items[i]) &&
                (out.items[i].start < lo || out.items[i].end > hi))
                abort();
        if (cp_timeline_analyse(&out, NULL, &m) == 0)
            cp_metrics_free(&m);
        cp_trace_free(&out);
    }
    snprintf(number, sizeof number, "%u", t->processes[1].pid);
    if (cp_trace_scope(t, "process", number, &out, why, sizeof why) != 0)
        abort();
    cp_trace_free(&out);
    if (device >= 0) {
        snprintf(number, sizeof number, "%d", device);
        if (cp_trace_scope(t, "device", number, &out, why, sizeof why) != 0)
            abort();
        cp_trace_free(&out);
    }
}

/* The streaming protobuf writer, fed the records in the file's order:
 * whatever their order and times, it deals them to rows or counts them as
 * unordered, never more than it was given. */
static void write_protobuf(const cp_trace *t)
{
    FILE *f = fopen("/dev/null", "wb");
    if (!f)
        return;
    cp_pb_writer *w = cp_pb_open(f, "fuzz", 0);
    for (size_t k = 0; w && k < t->nprocesses; k++)
        cp_pb_add_process(w, (uint32_t)k, t->processes[k].pid, t->processes[k].command);
    for (size_t i = 0; w && i < t->n; i++)
        cp_pb_add_activity(w, &t->items[i]);
    uint64_t unordered = 0;
    int rc = cp_pb_close(w, &unordered);
    if (rc == 0 && unordered > t->n)
        abort();
    fclose(f);
}

/* The bytes pushed to a parser in pieces of 1 to 64 bytes (their sizes
 * taken from the data) read as `whole` did: its code `rc`, its error, its
 * records and processes. */
static void pieces_agree(const uint8_t *data, size_t size, int rc, const char *error,
                         const cp_trace *whole, size_t n0)
{
    cp_trace t;
    cp_trace_init(&t);
    cp_proc_parser *p = NULL;
    int got = cp_proc_parser_new(&p, "fuzz.proc.jsonl", &t, NULL, NULL);
    for (size_t at = 0; got == 0 && at < size;) {
        size_t piece = 1 + data[at] % 64;
        piece = piece < size - at ? piece : size - at;
        got = cp_proc_parser_push(p, data + at, piece);
        at += piece;
    }
    if (got == 0)
        got = cp_proc_parser_end(p);
    cp_proc_parser_free(p);
    if (got != CP_ENOMEM && rc != CP_ENOMEM) {
        if (got != rc || (rc < 0 && strcmp(cp_last_error(), error) != 0))
            abort();
        if (rc == 0 && (t.n != whole->n - n0 || t.nprocesses != 1 ||
                        t.dropped_records != whole->dropped_records))
            abort();
        for (size_t i = 0; rc == 0 && i < t.n; i++) {
            const cp_activity *a = &t.items[i], *b = &whole->items[n0 + i];
            if (a->kind != b->kind || a->start != b->start || a->end != b->end ||
                a->depth != b->depth || a->correlation != b->correlation ||
                strcmp(a->name ? a->name : "", b->name ? b->name : "") != 0)
                abort();
        }
        if (rc == 0) {
            const cp_process *x = &t.processes[0], *y = &whole->processes[1];
            if (x->pid != y->pid || x->ended != y->ended || x->last_ns != y->last_ns ||
                x->dropped != y->dropped || strcmp(x->why, y->why) != 0 ||
                x->cost.records != y->cost.records)
                abort();
        }
    }
    cp_trace_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_trace t;
    cp_trace_init(&t);
    /* One process read before, so that a failed read can be seen to leave
     * the trace as it was. */
    if (cp_proc_parse("seed.proc.jsonl", seed, sizeof seed - 1, &t) != 0 || t.nprocesses != 1)
        abort();
    size_t n0 = t.n;
    int rc = cp_proc_parse("fuzz.proc.jsonl", (const char *)data, size, &t);
    char error[512];
    snprintf(error, sizeof error, "%s", rc < 0 ? cp_last_error() : "");
    pieces_agree(data, size, rc, error, &t, n0);
    if (rc < 0) {
        if (t.n != n0 || t.nprocesses != 1 || t.dropped_records != 0)
            abort();
        if (rc != CP_ENOMEM && (rc != CP_EPARSE || !strstr(cp_last_error(), "fuzz.proc.jsonl:")))
            abort();
    } else {
        if (rc != 0 || t.nprocesses != 2)
            abort();
        check_process(&t, n0);
        check_scopes(&t, n0);
        cp_metrics m;
        if (cp_timeline_analyse(&t, NULL, &m) == 0) {
            if (m.nlanes > 0 && cp_metrics_lane_index(&m, &t.items[0]) < 0 &&
                cp_activity_is_device_work(&t.items[0]))
                abort();
            cp_metrics_free(&m);
        }
        free(cp_chrome_trace(&t, "fuzz"));
        write_protobuf(&t);
    }
    cp_trace_free(&t);
    return 0;
}
