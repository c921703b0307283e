/*
 * The trace container (cuproof/trace.h): a growable array of activities
 * whose names are interned in the trace, the processes of a traced
 * program, the names the program gave its streams, and the two questions about one activity that every reader of
 * a trace asks. It knows nothing of metrics: the trace model stands apart
 * from the analyses that read it (timeline.c, stream.c, scope.c), as the
 * tracer, the recorded formats and the tests build traces without them.
 */
#include <cuproof/trace.h>

#include <cuproof/error.h>
#include <cuproof/internal/grow.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cp_trace_init(cp_trace *t)
{
    memset(t, 0, sizeof *t);
}

void cp_trace_clear(cp_trace *t)
{
    t->n = 0;
    t->dropped_records = 0;
    t->renamed_kernels = 0;
    t->nprocesses = 0;
    t->nstream_names = 0;
}

void cp_trace_free(cp_trace *t)
{
    for (size_t i = 0; i < t->nnames; i++)
        free(t->names[i]);
    free(t->names);
    free(t->items);
    free(t->processes);
    free(t->stream_names);
    cp_trace_init(t);
}

long cp_trace_add_process(cp_trace *t, const cp_process *p)
{
    cp_process *q = cp_grow(t->processes, &t->processes_cap, t->nprocesses, sizeof *q, 4);
    if (!q)
        return cp_failf(CP_ENOMEM, "out of memory adding a process to a trace");
    t->processes = q;
    t->processes[t->nprocesses] = *p;
    return (long)t->nprocesses++;
}

static cp_stream_name *find_stream_name(const cp_trace *t, uint32_t process, uint32_t device,
                                        uint32_t context, uint32_t stream)
{
    if (!t)
        return NULL;
    for (size_t i = 0; i < t->nstream_names; i++) {
        cp_stream_name *n = &t->stream_names[i];
        if (n->process == process && n->device == device && n->context == context &&
            n->stream == stream)
            return n;
    }
    return NULL;
}

int cp_trace_name_stream(cp_trace *t, const cp_stream_name *n)
{
    if (!n->name || !n->name[0])
        return 0;
    const char *name = cp_trace_intern(t, n->name);
    if (!name)
        return cp_failf(CP_ENOMEM, "out of memory naming a stream");
    cp_stream_name *old = find_stream_name(t, n->process, n->device, n->context, n->stream);
    if (old) {
        old->name = name;
        return 0;
    }
    cp_stream_name *q =
        cp_grow(t->stream_names, &t->stream_names_cap, t->nstream_names, sizeof *q, 8);
    if (!q)
        return cp_failf(CP_ENOMEM, "out of memory naming a stream");
    t->stream_names = q;
    t->stream_names[t->nstream_names] = *n;
    t->stream_names[t->nstream_names++].name = name;
    return 0;
}

const char *cp_trace_stream_name(const cp_trace *t, uint32_t process, uint32_t device,
                                 uint32_t context, uint32_t stream)
{
    const cp_stream_name *n = find_stream_name(t, process, device, context, stream);
    return n ? n->name : NULL;
}

int cp_trace_copy_stream_names(cp_trace *to, const cp_trace *from)
{
    for (size_t i = 0; i < from->nstream_names; i++) {
        int rc = cp_trace_name_stream(to, &from->stream_names[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int32_t cp_process_rank(const cp_process *p)
{
    return p->rank_var[0] && p->rank >= 0 ? p->rank : -1;
}

size_t cp_trace_tracing_cost(const cp_trace *t, cp_tracing_cost *sum)
{
    size_t n = 0;
    memset(sum, 0, sizeof *sum);
    sum->api_all = true;
    for (size_t i = 0; i < t->nprocesses; i++) {
        const cp_tracing_cost *c = &t->processes[i].cost;
        if (!c->recorded)
            continue;
        n++;
        sum->api_all = sum->api_all && c->api_all;
        sum->records += c->records;
        sum->api_records += c->api_records;
        /* The same calls in every process: the largest, not a sum. */
        if (c->api_filtered > sum->api_filtered)
            sum->api_filtered = c->api_filtered;
        sum->buffers += c->buffers;
        sum->overhead_records += c->overhead_records;
        for (int k = 0; k < CP_OVERHEAD_KIND_COUNT; k++)
            sum->overhead_ns[k] += c->overhead_ns[k];
    }
    sum->recorded = n > 0;
    sum->api_all = sum->api_all && n > 0;
    return n;
}

uint64_t cp_tracing_overhead_ns(const cp_tracing_cost *c)
{
    uint64_t ns = 0;
    for (int k = 0; k < CP_OVERHEAD_KIND_COUNT; k++)
        ns += c->overhead_ns[k];
    return ns;
}

/* A rank's host and pid go in its name: ranks on several hosts have the
 * same pids and ranks of one job the same command, and the viewer lists
 * them by name. */
const char *cp_process_label(const cp_process *p, char *buf, size_t len)
{
    if (cp_process_rank(p) >= 0 && p->host[0])
        snprintf(buf, len, "rank %d (%.*s, %u): %.*s", (int)cp_process_rank(p),
                 (int)sizeof p->host, p->host, p->pid, (int)sizeof p->command, p->command);
    else if (cp_process_rank(p) >= 0)
        snprintf(buf, len, "rank %d (%u): %.*s", (int)cp_process_rank(p), p->pid,
                 (int)sizeof p->command, p->command);
    else
        snprintf(buf, len, "%.*s", (int)sizeof p->command, p->command);
    return buf;
}

static int rank_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

long cp_trace_ranks(const cp_trace *t, int32_t **out)
{
    *out = NULL;
    size_t n = 0;
    for (size_t i = 0; i < t->nprocesses; i++)
        n += cp_process_rank(&t->processes[i]) >= 0;
    if (n == 0)
        return 0;
    int32_t *r = malloc(n * sizeof *r);
    if (!r)
        return cp_failf(CP_ENOMEM, "out of memory listing the trace's ranks");
    size_t k = 0;
    for (size_t i = 0; i < t->nprocesses; i++)
        if (cp_process_rank(&t->processes[i]) >= 0)
            r[k++] = cp_process_rank(&t->processes[i]);
    qsort(r, k, sizeof *r, rank_cmp);
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (m == 0 || r[i] != r[m - 1])
            r[m++] = r[i];
    *out = r;
    return (long)m;
}

const char *cp_trace_intern(cp_trace *t, const char *s)
{
    if (!s)
        return NULL;
    /* Traces hold few distinct names (kernels, API calls, phases), so a
     * linear search from the most recent name is cheap and keeps no index. */
    for (size_t i = t->nnames; i-- > 0;)
        if (strcmp(t->names[i], s) == 0)
            return t->names[i];
    char **p = cp_grow(t->names, &t->names_cap, t->nnames, sizeof *p, 16);
    if (!p)
        return NULL;
    t->names = p;
    char *copy = strdup(s);
    if (!copy)
        return NULL;
    t->names[t->nnames++] = copy;
    return copy;
}

int cp_trace_add(cp_trace *t, const cp_activity *a)
{
    cp_activity *p = cp_grow(t->items, &t->cap, t->n, sizeof *p, 256);
    if (!p)
        return CP_ENOMEM;
    t->items = p;
    cp_activity *dst = &t->items[t->n];
    *dst = *a;
    if (a->name && !(dst->name = cp_trace_intern(t, a->name)))
        return CP_ENOMEM;
    t->n++;
    return 0;
}

int cp_trace_name_launches(cp_trace *t, const cp_launch_name *launches, size_t n)
{
    int renamed = 0;
    for (size_t i = 0; i < t->n; i++) {
        cp_activity *a = &t->items[i];
        if (a->kind != CP_ACT_KERNEL)
            continue;
        for (size_t k = 0; k < n; k++) {
            if (launches[k].correlation != a->correlation || !launches[k].name)
                continue;
            if (a->name && strcmp(a->name, launches[k].name) == 0)
                break;
            const char *name = cp_trace_intern(t, launches[k].name);
            if (!name)
                return CP_ENOMEM;
            a->name = name;
            renamed++;
            break;
        }
    }
    t->renamed_kernels += (uint64_t)renamed;
    return renamed;
}

bool cp_activity_is_device_work(const cp_activity *a)
{
    return a->kind == CP_ACT_KERNEL || a->kind == CP_ACT_MEMCPY || a->kind == CP_ACT_MEMSET;
}

int cp_activity_ptr_cmp_correlation(const void *a, const void *b)
{
    const cp_activity *x = *(const cp_activity *const *)a, *y = *(const cp_activity *const *)b;
    return (x->correlation > y->correlation) - (x->correlation < y->correlation);
}

uint32_t cp_trace_host_index(const cp_trace *meta, uint32_t process)
{
    if (process >= meta->nprocesses)
        return 0;
    const char *host = meta->processes[process].host;
    uint32_t index = 0;
    /* The hosts before this process's first appearance, counted once each. */
    for (uint32_t i = 0; i < process; i++) {
        bool first = true;
        for (uint32_t j = 0; j < i && first; j++)
            first = strcmp(meta->processes[j].host, meta->processes[i].host) != 0;
        if (!first)
            continue;
        if (strcmp(meta->processes[i].host, host) == 0)
            return index;
        index++;
    }
    return index;
}

uint32_t cp_trace_hosts(const cp_trace *meta)
{
    uint32_t n = 0;
    for (size_t i = 0; i < meta->nprocesses; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(meta->processes[j].host, meta->processes[i].host) != 0;
        n += first;
    }
    return n;
}
