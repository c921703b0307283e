/* Records of the per-process file (cuproof.proc/1, docs/formats.md), as
 * the injection library writes them: one JSON line per CUPTI record. */
#include "collect/proc_writer.h"

#include "collect/cupti.h"
#include "analysis/json_put.h"

#include <cuproof/internal/capture.h>

#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *api_name(const CUpti_ActivityAPI *api, bool runtime);

/* A CUPTI time relative to the file's origin, as the file keeps it. */
static long long rel(const cp_proc_writer *w, uint64_t t)
{
    return (long long)(t - w->origin);
}

/* A CUPTI time as the file states it: moved by the test-only shift (which
 * never takes a time below 1, since 0 means "no timestamp"). */
static uint64_t shifted(const cp_proc_writer *w, uint64_t t)
{
    if (w->shift_ns < 0 && (uint64_t)(-w->shift_ns) >= t)
        return 1;
    return t + (uint64_t)w->shift_ns;
}

/* cp_rec_put of an activity at shifted times. */
static void rec_put(cp_proc_writer *w, const cp_activity *a)
{
    cp_activity s = *a;
    s.start = shifted(w, a->start);
    s.end = shifted(w, a->end);
    cp_rec_put(w->rec, &s);
}

static const char *sync_type(CUpti_ActivitySynchronizationType t)
{
    switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
        return "event_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
        return "stream_wait_event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
        return "stream_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
        return "context_synchronize";
    default:
        return "unknown";
    }
}

static const char *stream_flag(CUpti_ActivityStreamFlag f)
{
    switch (f & CUPTI_ACTIVITY_STREAM_CREATE_MASK) {
    case CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT:
        return "default";
    case CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING:
        return "non_blocking";
    case CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL:
        return "null";
    default:
        return "unknown";
    }
}

/* Device work (kernels, copies, memsets) as cp_cupti_convert gives it. */
static void write_work(cp_proc_writer *w, const cp_activity *a)
{
    FILE *f = w->out;
    if (a->start == 0 || a->end == 0) {
        /* CUPTI leaves timestamps at zero when it had no device memory for
         * them: counted, never written as if the work took no time. */
        w->zero_timestamps++;
        return;
    }
    const char *kind = a->kind == CP_ACT_KERNEL ? "kernel" : a->kind == CP_ACT_MEMCPY ? "memcpy"
                                                                                        : "memset";
    fprintf(f, "{\"k\":\"%s\",\"s\":%lld,\"e\":%lld,\"dev\":%u,\"ctx\":%u,\"str\":%u,\"cor\":%u", kind,
            rel(w, a->start), rel(w, a->end), a->device, a->context, a->stream, a->correlation);
    if (a->kind == CP_ACT_KERNEL)
        fprintf(f, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", a->grid[0], a->grid[1], a->grid[2],
                a->block[0], a->block[1], a->block[2]);
    if (a->kind == CP_ACT_MEMCPY)
        fprintf(f, ",\"bytes\":%llu,\"dir\":\"%s\",\"src\":\"%s\",\"dst\":\"%s\",\"async\":%s",
                (unsigned long long)a->bytes, cp_copy_dir_name(a->copy_dir),
                cp_mem_kind_name(a->src), cp_mem_kind_name(a->dst), a->async ? "true" : "false");
    if (a->kind == CP_ACT_MEMSET)
        fprintf(f, ",\"bytes\":%llu,\"dst\":\"%s\"", (unsigned long long)a->bytes,
                cp_mem_kind_name(a->dst));
    fprintf(f, ",\"graph\":%u,\"node\":%llu", a->graph_id, (unsigned long long)a->graph_node);
    if (a->kind == CP_ACT_KERNEL) {
        fputs(",\"name\":", f);
        cp_json_put_string(f, a->name);
    }
    fputs("}\n", f);
}

/* An API call's record (runtime or driver), named from its callback id. */
static void write_api(cp_proc_writer *w, const CUpti_ActivityAPI *api, bool runtime)
{
    FILE *f = w->out;
    const char *name = api_name(api, runtime);
    fprintf(f, "{\"k\":\"%s\",\"s\":%lld,\"e\":%lld,\"cor\":%u,\"tid\":%u,\"name\":",
            runtime ? "runtime" : "driver", rel(w, api->start), rel(w, api->end), api->correlationId,
            api->threadId);
    cp_json_put_string(f, name);
    fputs("}\n", f);
}

/* The thread a marker was emitted on, as CUPTI names API calls' threads;
 * 0 for a marker of another object (a device, a context). */
static uint32_t marker_thread(const CUpti_ActivityMarker2 *m)
{
    return m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
}

void cp_proc_writer_nccl(cp_proc_writer *w, uint64_t t, const cp_nccl_call *call)
{
    if (!w->nccl && !(w->nccl = malloc(CP_PROC_NCCL_PENDING * sizeof *w->nccl)))
        return; /* the range goes without its payload */
    size_t at = (w->nccl_head + w->nnccl) % CP_PROC_NCCL_PENDING;
    if (w->nnccl == CP_PROC_NCCL_PENDING)
        w->nccl_head = (w->nccl_head + 1) % CP_PROC_NCCL_PENDING; /* the oldest goes */
    else
        w->nnccl++;
    w->nccl[at] = (struct cp_proc_nccl){t, *call};
}

/* The payload waiting for a range `name` that starts at `start`: the
 * nearest in time within CP_PROC_NCCL_NEAR_NS, taken off the ring into
 * *out; false (out's comm 0) when none is. Only NCCL's names are looked
 * for: they begin "nccl". */
static bool take_nccl(cp_proc_writer *w, const char *name, uint64_t start, cp_nccl_call *out)
{
    out->comm = 0;
    if (!w->nnccl || !name || strncmp(name, "nccl", 4) != 0)
        return false;
    struct cp_proc_nccl *best = NULL;
    uint64_t best_gap = UINT64_MAX;
    for (size_t i = 0; i < w->nnccl; i++) {
        struct cp_proc_nccl *e = &w->nccl[(w->nccl_head + i) % CP_PROC_NCCL_PENDING];
        uint64_t gap = e->t > start ? e->t - start : start - e->t;
        if (e->call.name && gap < best_gap && strcmp(e->call.name, name) == 0) {
            best = e;
            best_gap = gap;
        }
    }
    if (!best || best_gap > CP_PROC_NCCL_NEAR_NS)
        return false;
    *out = best->call;
    best->call.name = NULL;
    /* Taken slots at the ring's start go with it. */
    while (w->nnccl && !w->nccl[w->nccl_head].call.name) {
        w->nccl_head = (w->nccl_head + 1) % CP_PROC_NCCL_PENDING;
        w->nnccl--;
    }
    return true;
}

static void write_marker(cp_proc_writer *w, const CUpti_ActivityMarker2 *m)
{
    FILE *f = w->out;
    const char *phase = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START)  ? "start"
                        : (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) ? "end"
                                                                       : "instant";
    fprintf(f, "{\"k\":\"marker\",\"t\":%lld,\"id\":%u,\"phase\":\"%s\",\"name\":", rel(w, m->timestamp),
            m->id, phase);
    cp_json_put_string(f, m->name);
    fputs(",\"domain\":", f);
    cp_json_put_string(f, m->domain);
    cp_nccl_call call;
    if ((m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) && take_nccl(w, m->name, m->timestamp, &call))
        cp_json_put_nccl(f, call.comm, call.bytes, call.peer);
    fprintf(f, ",\"tid\":%u}\n", marker_thread(m));
}

/* CUPTI's kind of overhead as the trace names it. */
static cp_overhead_kind overhead_kind_of(CUpti_ActivityOverheadKind k)
{
    switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
        return CP_OVERHEAD_COMPILER;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
        return CP_OVERHEAD_BUFFER_FLUSH;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
        return CP_OVERHEAD_INSTRUMENTATION;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
        return CP_OVERHEAD_RESOURCE;
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
        return CP_OVERHEAD_MODULE_LOADING;
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
        return CP_OVERHEAD_LAZY_LOADING;
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
        return CP_OVERHEAD_COMMAND_BUFFER_FULL;
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
        return CP_OVERHEAD_BUFFER_REQUEST;
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT:
        return CP_OVERHEAD_UVM_INIT;
    default:
        return CP_OVERHEAD_OTHER;
    }
}

/* An overhead record: its time added to its kind's, never written. Its
 * overheadData (command-buffer details) is left alone: cupti_activity.h
 * says the client frees it, but NVIDIA's own samples never do, and a
 * free that CUPTI does not expect would crash the traced program, where
 * leaving it costs 12 bytes a record. */
static void add_overhead(cp_proc_writer *w, const CUpti_ActivityOverhead3 *o)
{
    w->cost.overhead_records++;
    if (o->end > o->start)
        w->cost.overhead_ns[overhead_kind_of(o->overheadKind)] += o->end - o->start;
}

/* The cost's fields of a flush or end line (after its counts). */
static void write_cost(cp_proc_writer *w)
{
    const cp_tracing_cost *c = &w->cost;
    fprintf(w->out, ",\"api\":\"%s\",\"api_records\":%llu,\"api_filtered\":%llu,\"buffers\":%llu,"
                    "\"overhead_records\":%llu,\"overhead_ns\":{",
            c->api_all ? "all" : "filtered", (unsigned long long)c->api_records,
            (unsigned long long)c->api_filtered, (unsigned long long)c->buffers,
            (unsigned long long)c->overhead_records);
    const char *sep = "";
    for (int k = 0; k < CP_OVERHEAD_KIND_COUNT; k++)
        if (c->overhead_ns[k]) {
            fprintf(w->out, "%s\"%s\":%llu", sep, cp_overhead_kind_name((cp_overhead_kind)k),
                    (unsigned long long)c->overhead_ns[k]);
            sep = ",";
        }
    fputc('}', w->out);
}

/* ---- The rec form ---- */

/* An API call's name from its callback id. */
static const char *api_name(const CUpti_ActivityAPI *api, bool runtime)
{
    const char *name = NULL;
    CUpti_CallbackDomain domain = runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    if (cuptiGetCallbackName(domain, api->cbid, &name) != CUPTI_SUCCESS || !name)
        name = runtime ? "cudaUnknownCall" : "cuUnknownCall";
    return name;
}

/* Opens a range (marker `id`, or the profiler's with id 0) at `start`;
 * one that cannot be kept (out of memory) is left out. */
static void open_range(cp_proc_writer *w, uint64_t id, uint64_t start, const char *name,
                       uint32_t thread)
{
    if (w->nopen == w->open_cap) {
        size_t cap = w->open_cap ? 2 * w->open_cap : 16;
        cp_proc_open_range *p = realloc(w->open, cap * sizeof *p);
        if (!p)
            return;
        w->open = p;
        w->open_cap = cap;
    }
    char *copy = strdup(name ? name : "");
    if (!copy)
        return;
    w->open[w->nopen] = (cp_proc_open_range){id, start, copy, (uint32_t)w->nopen, thread, 0, {0}};
    take_nccl(w, name, start, &w->open[w->nopen].nccl);
    w->nopen++;
}

/* Closes open range k at `end` and writes it. */
static void close_range(cp_proc_writer *w, size_t k, uint64_t end)
{
    cp_proc_open_range *o = &w->open[k];
    cp_activity a = {.kind = CP_ACT_RANGE, .start = o->start, .end = end < o->start ? o->start : end,
                     .depth = o->depth, .thread = o->thread, .name = o->name,
                     .correlation = o->correlation};
    if (o->nccl.comm) {
        a.comm = o->nccl.comm;
        a.bytes = o->nccl.bytes;
        a.peer = o->nccl.peer;
    }
    rec_put(w, &a);
    free(o->name);
    memmove(o, o + 1, (w->nopen - k - 1) * sizeof *o);
    w->nopen--;
}

static void rec_marker(cp_proc_writer *w, const CUpti_ActivityMarker2 *m)
{
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        open_range(w, (uint64_t)m->id + 1, m->timestamp, m->name, marker_thread(m));
        return;
    }
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        /* The most recent range of that id: ranges close last-opened first. */
        for (size_t k = w->nopen; k-- > 0;)
            if (w->open[k].id == (uint64_t)m->id + 1) {
                close_range(w, k, m->timestamp);
                return;
            }
        return; /* an end without its start is left out, as the reader does */
    }
    cp_activity a = {.kind = CP_ACT_RANGE, .start = m->timestamp, .end = m->timestamp,
                     .depth = (uint32_t)w->nopen, .thread = marker_thread(m), .name = m->name};
    rec_put(w, &a);
}

static void rec_record(cp_proc_writer *w, const CUpti_Activity *record)
{
    w->cost.records++;
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        cp_activity a;
        if (!cp_cupti_convert(record, &a))
            break;
        if (a.start == 0 || a.end == 0) {
            w->zero_timestamps++;
            break;
        }
        a.process = 0;
        rec_put(w, &a);
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *api = (const CUpti_ActivityAPI *)record;
        w->cost.api_records++;
        cp_activity a = {.kind = CP_ACT_RUNTIME, .start = api->start, .end = api->end,
                         .correlation = api->correlationId, .thread = api->threadId,
                         .name = api_name(api, record->kind == CUPTI_ACTIVITY_KIND_RUNTIME)};
        rec_put(w, &a);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
        rec_marker(w, (const CUpti_ActivityMarker2 *)record);
        break;
    case CUPTI_ACTIVITY_KIND_NAME: {
        /* A stream the program named, for its lane's label (minor 4);
         * the file's one process is index 0. Names of other objects are
         * not kept. */
        cp_stream_name n;
        if (!cp_cupti_stream_name(record, &n)) {
            w->cost.records--;
            break;
        }
        cp_rec_put_stream_name(w->rec, &n);
        break;
    }
    default:
        w->cost.records--; /* kinds the rec form does not keep */
        break;
    }
}

/* Record r's start (a marker's time), where its kind has one the
 * analyses read. */
static bool record_start(const CUpti_Activity *r, uint64_t *t)
{
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        cp_activity a;
        if (!cp_cupti_convert(r, &a))
            return false;
        *t = a.start;
        return true;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        *t = ((const CUpti_ActivityAPI *)r)->start;
        return true;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        *t = ((const CUpti_ActivitySynchronization2 *)r)->start;
        return true;
    case CUPTI_ACTIVITY_KIND_MARKER:
        *t = ((const CUpti_ActivityMarker2 *)r)->timestamp;
        return true;
    default:
        return false;
    }
}

/* Whether record r started inside a warm-up window. */
static bool in_warmup(const cp_proc_writer *w, const CUpti_Activity *r)
{
    uint64_t t;
    if ((!w->nwarm && !w->warm_open) || !record_start(r, &t))
        return false;
    if (w->warm_open && t >= w->warm_since)
        return true;
    for (size_t i = 0; i < w->nwarm; i++)
        if (t >= w->warm[i].start && t < w->warm[i].end)
            return true;
    return false;
}

void cp_proc_writer_record(cp_proc_writer *w, const void *r)
{
    const CUpti_Activity *record = r;
    if (record->kind == CUPTI_ACTIVITY_KIND_OVERHEAD) {
        add_overhead(w, r);
        return;
    }
    if (in_warmup(w, record))
        return;
    if (w->rec) {
        rec_record(w, record);
        return;
    }
    FILE *f = w->out;
    if (!f)
        return;
    w->cost.records++;
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        cp_activity a;
        if (cp_cupti_convert(record, &a))
            write_work(w, &a);
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        w->cost.api_records++;
        write_api(w, r, record->kind == CUPTI_ACTIVITY_KIND_RUNTIME);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *s = r;
        if (s->start == 0 || s->end == 0) {
            w->zero_timestamps++;
            break;
        }
        fprintf(f,
                "{\"k\":\"sync\",\"s\":%lld,\"e\":%lld,\"ctx\":%u,\"str\":%u,\"cor\":%u,"
                "\"type\":\"%s\"}\n",
                rel(w, s->start), rel(w, s->end), s->contextId, s->streamId, s->correlationId,
                sync_type(s->type));
        break;
    }
    case CUPTI_ACTIVITY_KIND_STREAM: {
        const CUpti_ActivityStream *s = r;
        fprintf(f, "{\"k\":\"stream\",\"dev\":0,\"ctx\":%u,\"str\":%u,\"flag\":\"%s\"}\n",
                s->contextId, s->streamId, stream_flag(s->flag));
        break;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
        const CUpti_ActivityContext3 *c = r;
        fprintf(f, "{\"k\":\"context\",\"dev\":%u,\"ctx\":%u,\"null_stream\":%u}\n", c->deviceId,
                c->contextId, (unsigned)c->nullStreamId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
        const CUpti_ActivityDevice5 *d = r;
        fprintf(f, "{\"k\":\"device\",\"dev\":%u,\"name\":", d->id);
        cp_json_put_string(f, d->name);
        fprintf(f, ",\"cc\":\"%u.%u\",\"sms\":%u}\n", d->computeCapabilityMajor,
                d->computeCapabilityMinor, d->numMultiprocessors);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
        write_marker(w, r);
        break;
    case CUPTI_ACTIVITY_KIND_NAME: {
        /* A stream the program named (nvtxNameCudaStream); names of other
         * objects are not kept. */
        cp_stream_name n;
        if (!cp_cupti_stream_name(record, &n)) {
            w->cost.records--;
            break;
        }
        fprintf(f, "{\"k\":\"stream_name\",\"dev\":%u,\"ctx\":%u,\"str\":%u,\"name\":",
                n.device, n.context, n.stream);
        cp_json_put_string(f, n.name);
        fputs("}\n", f);
        break;
    }
    default:
        w->cost.records--; /* kinds this file does not keep */
        break;
    }
}

void cp_proc_writer_mark(cp_proc_writer *w, uint64_t t, const char *why)
{
    if (why) {
        free(w->nccl); /* payloads whose range never came */
        w->nccl = NULL;
        w->nccl_head = w->nnccl = 0;
    }
    if (w->rec && !why) {
        if (w->cost.recorded) {
            cp_process p = {.cost = w->cost};
            cp_rec_put_process_cost(w->rec, 0, &p);
        }
        cp_rec_flush(w->rec);
        return;
    }
    if (w->rec) {
        /* The end: ranges still open close now, then the process's end
         * and the file's. */
        while (w->nopen)
            close_range(w, w->nopen - 1, t);
        free(w->open);
        w->open = NULL;
        w->open_cap = 0;
        cp_process p = {.ended = true, .last_ns = shifted(w, t), .dropped = w->dropped,
                        .zero_timestamps = w->zero_timestamps, .cost = w->cost};
        snprintf(p.why, sizeof p.why, "%s", why);
        cp_rec_put_process_end(w->rec, 0, &p);
        cp_rec_end end = {.dropped_records = w->dropped};
        cp_rec_writer_close(w->rec, &end);
        w->rec = NULL;
        return;
    }
    if (!w->out)
        return;
    fprintf(w->out, "{\"k\":\"%s\",\"t\":%lld,\"records\":%llu,\"dropped\":%llu,"
                    "\"zero_timestamps\":%llu",
            why ? "end" : "flush", rel(w, t), (unsigned long long)w->cost.records,
            (unsigned long long)w->dropped, (unsigned long long)w->zero_timestamps);
    if (w->cost.recorded)
        write_cost(w);
    if (why) {
        fputs(",\"why\":", w->out);
        cp_json_put_string(w->out, why);
    }
    fputs("}\n", w->out);
    fflush(w->out);
}

void cp_proc_writer_profiler(cp_proc_writer *w, uint64_t t, bool start)
{
    if (w->rec) {
        /* The profiler's window is the range of id 0 (markers count from 1). */
        size_t k = w->nopen;
        while (k > 0 && w->open[k - 1].id != 0)
            k--;
        if (start && k == 0)
            open_range(w, 0, t, "cuProfilerStart", 0);
        else if (!start && k > 0)
            close_range(w, k - 1, t);
        return;
    }
    if (w->out)
        fprintf(w->out, "{\"k\":\"profiler\",\"t\":%lld,\"phase\":\"%s\"}\n", rel(w, t),
                start ? "start" : "stop");
}

/* The capture window's range id in the rec form (markers count from 1,
 * the profiler's is 0). */
#define CAPTURE_ID UINT64_MAX

void cp_proc_writer_capture(cp_proc_writer *w, uint64_t t, bool open, uint32_t occurrence,
                            bool warmup)
{
    if (warmup && open && !w->warm_open) {
        w->warm_open = true;
        w->warm_since = t;
    } else if (warmup && !open && w->warm_open) {
        w->warm_open = false;
        if (w->nwarm == w->warm_cap) {
            size_t cap = w->warm_cap ? 2 * w->warm_cap : 8;
            struct cp_proc_span *p = realloc(w->warm, cap * sizeof *p);
            if (p) {
                w->warm = p;
                w->warm_cap = cap;
            }
        }
        /* Out of memory, the window's later records are written after all:
         * never a record lost for want of room. */
        if (w->nwarm < w->warm_cap)
            w->warm[w->nwarm++] = (struct cp_proc_span){w->warm_since, t};
    }
    if (w->rec) {
        size_t k = w->nopen;
        while (k > 0 && w->open[k - 1].id != CAPTURE_ID)
            k--;
        if (open && k == 0) {
            size_t at = w->nopen;
            open_range(w, CAPTURE_ID, t, warmup ? CP_WARMUP_RANGE_NAME : CP_CAPTURE_RANGE_NAME, 0);
            if (w->nopen > at)
                w->open[at].correlation = occurrence;
        }
        else if (!open && k > 0)
            close_range(w, k - 1, t);
        return;
    }
    if (w->out)
        fprintf(w->out, "{\"k\":\"capture\",\"t\":%lld,\"phase\":\"%s\",\"occurrence\":%u,"
                        "\"warmup\":%s}\n",
                rel(w, t), open ? "open" : "close", occurrence, warmup ? "true" : "false");
}

void cp_proc_writer_header(cp_proc_writer *w, const char *host, long pid, long ppid,
                           const char *command)
{
    /* The rank fields come from w->who (the launcher's environment, read
     * by cp_rank_from_env); without it every one is unknown. */
    cp_process p = {.pid = (uint32_t)pid, .ppid = (uint32_t)ppid, .rank = -1, .local_rank = -1,
                    .world_size = -1};
    if (w->who) {
        p.rank = w->who->rank;
        p.local_rank = w->who->local_rank;
        p.world_size = w->who->world_size;
        snprintf(p.rank_var, sizeof p.rank_var, "%s", w->who->rank_var);
        snprintf(p.rank_why, sizeof p.rank_why, "%s", w->who->rank_why);
        snprintf(p.run, sizeof p.run, "%s", w->who->run);
    }
    if (!p.rank_var[0])
        p.rank = -1;
    if (w->rec) {
        snprintf(p.host, sizeof p.host, "%s", host);
        snprintf(p.command, sizeof p.command, "%s", command);
        cp_rec_put_process(w->rec, &p);
        cp_rec_flush(w->rec);
        return;
    }
    fprintf(w->out, "{\"schema\":\"cuproof.proc/1\",\"host\":");
    cp_json_put_string(w->out, host);
    fprintf(w->out, ",\"pid\":%ld,\"ppid\":%ld,\"command\":", pid, ppid);
    cp_json_put_string(w->out, command);
    fprintf(w->out, ",\"origin_ns\":\"%llu\",\"rank\":%d,\"local_rank\":%d,\"world_size\":%d,"
                    "\"rank_var\":",
            (unsigned long long)shifted(w, w->origin), (int)p.rank, (int)p.local_rank, (int)p.world_size);
    cp_json_put_string(w->out, p.rank_var);
    fputs(",\"rank_why\":", w->out);
    cp_json_put_string(w->out, p.rank_why);
    fputs(",\"run\":", w->out);
    cp_json_put_string(w->out, p.run);
    fputs("}\n", w->out);
    fflush(w->out);
}
