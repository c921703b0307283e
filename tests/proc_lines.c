/* A trace's process written as a per-process file in either form: see
 * proc_lines.h. */
#include "proc_lines.h"

#include "analysis/json_put.h"

#include <cuproof/error.h>
#include <cuproof/internal/rec.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The earliest time the process's records hold: the file's origin. */
static uint64_t origin_of(const cp_trace *t, uint32_t process)
{
    uint64_t o = UINT64_MAX;
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].process == process && t->items[i].start < o)
            o = t->items[i].start;
    if (t->nprocesses > process && t->processes[process].last_ns &&
        t->processes[process].last_ns < o)
        o = t->processes[process].last_ns;
    return o == UINT64_MAX ? 0 : o;
}

/* What kernels, copies and memsets share. */
static void device_fields(FILE *f, const cp_activity *a, uint64_t o)
{
    fprintf(f, "\"s\":%" PRId64 ",\"e\":%" PRId64 ",\"dev\":%u,\"ctx\":%u,\"str\":%u,\"cor\":%u",
            (int64_t)(a->start - o), (int64_t)(a->end - o), a->device, a->context, a->stream,
            a->correlation);
}

static void graph_fields(FILE *f, const cp_activity *a)
{
    fprintf(f, ",\"graph\":%u,\"node\":%" PRIu64, a->graph_id, a->graph_node);
}

static void put_record(FILE *f, const cp_activity *a, uint64_t o, uint64_t *marker)
{
    switch (a->kind) {
    case CP_ACT_KERNEL:
        fputs("{\"k\":\"kernel\",", f);
        device_fields(f, a, o);
        fprintf(f, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", a->grid[0], a->grid[1], a->grid[2],
                a->block[0], a->block[1], a->block[2]);
        graph_fields(f, a);
        fputs(",\"name\":", f);
        cp_json_put_string(f, a->name);
        break;
    case CP_ACT_MEMCPY:
        fputs("{\"k\":\"memcpy\",", f);
        device_fields(f, a, o);
        fprintf(f,
                ",\"bytes\":%" PRIu64 ",\"dir\":\"%s\",\"src\":\"%s\",\"dst\":\"%s\",\"async\":%s",
                a->bytes, cp_copy_dir_name(a->copy_dir), cp_mem_kind_name(a->src),
                cp_mem_kind_name(a->dst), a->async ? "true" : "false");
        graph_fields(f, a);
        break;
    case CP_ACT_MEMSET:
        fputs("{\"k\":\"memset\",", f);
        device_fields(f, a, o);
        fprintf(f, ",\"bytes\":%" PRIu64 ",\"dst\":\"%s\"", a->bytes, cp_mem_kind_name(a->dst));
        graph_fields(f, a);
        break;
    case CP_ACT_RUNTIME:
        fprintf(f,
                "{\"k\":\"runtime\",\"s\":%" PRId64 ",\"e\":%" PRId64 ",\"cor\":%u,\"tid\":%u,"
                "\"name\":",
                (int64_t)(a->start - o), (int64_t)(a->end - o), a->correlation, a->thread);
        cp_json_put_string(f, a->name);
        break;
    case CP_ACT_RANGE:
    default: {
        /* A range is a marker's start and its end, paired by id. */
        uint64_t id = ++*marker;
        fprintf(f,
                "{\"k\":\"marker\",\"t\":%" PRId64 ",\"id\":%" PRIu64 ",\"phase\":\"start\","
                "\"name\":",
                (int64_t)(a->start - o), id);
        cp_json_put_string(f, a->name);
        fprintf(f, ",\"domain\":\"\",\"tid\":%u}\n", a->thread);
        fprintf(f,
                "{\"k\":\"marker\",\"t\":%" PRId64 ",\"id\":%" PRIu64 ",\"phase\":\"end\","
                "\"name\":\"\",\"domain\":\"\",\"tid\":%u",
                (int64_t)(a->end - o), id, a->thread);
        break;
    }
    }
    fputs("}\n", f);
}

/* A flush or end line's counts and, when recorded, the tracing cost. */
static void put_counts(FILE *f, const cp_process *p, uint64_t records)
{
    fprintf(f, ",\"records\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"zero_timestamps\":%" PRIu64,
            records, p->dropped, p->zero_timestamps);
    const cp_tracing_cost *c = &p->cost;
    if (!c->recorded)
        return;
    fprintf(f,
            ",\"api\":\"%s\",\"api_records\":%" PRIu64 ",\"api_filtered\":%" PRIu64
            ",\"buffers\":%" PRIu64 ",\"overhead_records\":%" PRIu64 ",\"overhead_ns\":{",
            c->api_all ? "all" : "filtered", c->api_records, c->api_filtered, c->buffers,
            c->overhead_records);
    bool first = true;
    for (int k = 0; k < CP_OVERHEAD_KIND_COUNT; k++)
        if (c->overhead_ns[k]) {
            fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",",
                    cp_overhead_kind_name((cp_overhead_kind)k), c->overhead_ns[k]);
            first = false;
        }
    fputs("}", f);
}

int proc_lines_write(const char *path, const cp_trace *t, uint32_t process)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return cp_failf(CP_EIO, "cannot write %s: %s", path, strerror(errno));
    static const cp_process none = {.pid = 1, .rank = -1, .local_rank = -1, .world_size = -1};
    const cp_process *p = process < t->nprocesses ? &t->processes[process] : &none;
    uint64_t o = origin_of(t, process), records = 0, marker = 0;
    fprintf(f, "{\"schema\":\"cuproof.proc/1\",\"host\":");
    cp_json_put_string(f, p->host);
    fprintf(f, ",\"pid\":%u,\"ppid\":%u,\"command\":", p->pid, p->ppid);
    cp_json_put_string(f, p->command);
    fprintf(f,
            ",\"origin_ns\":\"%" PRIu64 "\",\"rank\":%d,\"local_rank\":%d,\"world_size\":%d,"
            "\"rank_var\":",
            o, p->rank_var[0] ? p->rank : -1, p->local_rank, p->world_size);
    cp_json_put_string(f, p->rank_var);
    fputs(",\"rank_why\":", f);
    cp_json_put_string(f, p->rank_why);
    fputs(",\"run\":", f);
    cp_json_put_string(f, p->run);
    fputs("}\n", f);
    /* The names the process gave its streams, as the library writes them
     * when CUPTI delivers them (before the work, in these files). */
    for (size_t i = 0; i < t->nstream_names; i++) {
        const cp_stream_name *n = &t->stream_names[i];
        if (n->process != process)
            continue;
        fprintf(f, "{\"k\":\"stream_name\",\"dev\":%u,\"ctx\":%u,\"str\":%u,\"name\":", n->device,
                n->context, n->stream);
        cp_json_put_string(f, n->name);
        fputs("}\n", f);
        records++;
    }
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].process == process) {
            put_record(f, &t->items[i], o, &marker);
            records++;
        }
    if (p->ended) {
        uint64_t end = p->last_ns > o ? p->last_ns : o;
        fprintf(f, "{\"k\":\"end\",\"t\":%" PRIu64, end - o);
        put_counts(f, p, records);
        fputs(",\"why\":", f);
        cp_json_put_string(f, p->why[0] ? p->why : "exit");
        fputs("}\n", f);
    }
    if (fclose(f) != 0)
        return cp_failf(CP_EIO, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

int proc_rec_write(const char *path, const cp_trace *t, uint32_t process)
{
    static const cp_process none = {.pid = 1, .rank = -1, .local_rank = -1, .world_size = -1};
    const cp_process *p = process < t->nprocesses ? &t->processes[process] : &none;
    cp_rec_writer *w;
    int rc = cp_rec_writer_open(&w, path);
    if (rc == 0)
        rc = cp_rec_put_process(w, p);
    for (size_t i = 0; rc == 0 && i < t->nstream_names; i++)
        if (t->stream_names[i].process == process) {
            cp_stream_name n = t->stream_names[i];
            n.process = 0;
            rc = cp_rec_put_stream_name(w, &n);
        }
    for (size_t i = 0; rc == 0 && i < t->n; i++)
        if (t->items[i].process == process) {
            cp_activity a = t->items[i];
            a.process = 0;
            rc = cp_rec_put(w, &a);
        }
    if (rc == 0 && p->ended)
        rc = cp_rec_put_process_end(w, 0, p);
    cp_rec_end end = {.dropped_records = p->dropped};
    if (!p->ended) { /* a process that did not end leaves no end record */
        cp_rec_writer_abandon(w);
        return rc;
    }
    int closed = cp_rec_writer_close(w, &end);
    return rc < 0 ? rc : closed;
}
