/*
 * Chrome trace event format (ui.perfetto.dev, chrome://tracing): one
 * process per (device, context) with a thread per stream, a "host" process
 * with the CUDA API calls and the harness's NVTX phases, "X" slices, and a
 * flow from each API call to the device work it launched (by CUPTI
 * correlation id). Times are microseconds from the trace's first record.
 * The text is written as it goes into one growing buffer, not built as a
 * cJSON tree: a traced program's trace has hundreds of thousands of
 * records, and a tree of them cost seconds of exec's post-processing.
 */
#include <cuproof/internal/file.h>
#include <cuproof/internal/perfetto.h>
#include <cuproof/units.h>
#include "reports/html_buf.h"
#include "reports/rows.h"

#include <cuproof/error.h>
#include <cuproof/internal/grow.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_PID 0
#define API_TID 1
#define NVTX_TID 2

typedef struct track {
    uint32_t process, device, context;
    int pid;
} track;

/* The pid of (process, device, context), made on first sight (1, 2, ...):
 * context ids repeat across the processes of a traced program. */
static int pid_of(track *tracks, size_t *n, size_t cap, const cp_activity *a)
{
    for (size_t i = 0; i < *n; i++)
        if (tracks[i].process == a->process && tracks[i].device == a->device &&
            tracks[i].context == a->context)
            return tracks[i].pid;
    if (*n == cap)
        return -1;
    tracks[*n] = (track){a->process, a->device, a->context, (int)*n + 1};
    return tracks[(*n)++].pid;
}

/* The trace's text: its events, comma-separated as they are added. */
typedef struct writer {
    html_buf b;
    bool first;
} writer;

static void metadata(writer *w, const char *what, int pid, long long tid, const char *name);

/* A host thread of a traced process: its rows hold that thread's API
 * calls, which nest there as they ran, and its NVTX ranges, as Nsight
 * Systems shows them. */
typedef struct host_thread {
    uint32_t process, thread;
} host_thread;

/* Rows of known threads start here, clear of the per-process rows: thread
 * i's calls on THREAD_TID_BASE + 2i, its ranges on the next. */
#define THREAD_TID_BASE (1 << 20)
/* Rows beside a row, where slices that partly overlap its own go
 * (rows.h), are numbered from here. */
#define EXTRA_TID_BASE (1 << 24)

/* The row of a host record: its thread's, when the trace knows the thread
 * (`threads` lists them in order of first sight), else its process's API
 * or NVTX row (process 0: the ones a case's trace has). */
static long long host_tid(const cp_activity *a, const host_thread *threads, size_t n)
{
    for (size_t i = 0; a->thread && i < n; i++)
        if (threads[i].process == a->process && threads[i].thread == a->thread)
            return THREAD_TID_BASE + 2 * (long long)i + (a->kind == CP_ACT_RANGE);
    return (a->kind == CP_ACT_RANGE ? NVTX_TID : API_TID) + 2 * (long long)a->process;
}

/* A named row: (pid, tid), and for a row beside another, which one. */
typedef struct named_row {
    int pid;
    long long tid, beside;
    uint32_t row;
    char name[CP_STREAM_LABEL_MAX + 16]; /* a stream's label whole, or a row's beside it */
} named_row;

typedef struct row_table {
    writer *w;
    named_row *rows;
    size_t n, cap;
    long long next_extra;
} row_table;

static named_row *find_row(const row_table *r, int pid, long long tid)
{
    for (size_t i = r->n; i-- > 0;)
        if (r->rows[i].pid == pid && r->rows[i].tid == tid)
            return &r->rows[i];
    return NULL;
}

/* Names row (pid, tid) and remembers it; false when out of memory. */
static bool name_row(row_table *r, int pid, long long tid, long long beside, uint32_t row,
                     const char *name)
{
    named_row *p = cp_grow(r->rows, &r->cap, r->n, sizeof *p, 64);
    if (!p)
        return false;
    r->rows = p;
    named_row *n = &r->rows[r->n++];
    *n = (named_row){pid, tid, beside, row, ""};
    snprintf(n->name, sizeof n->name, "%s", name);
    metadata(r->w, "thread_name", pid, tid, name);
    return true;
}

/* The tid of row `row` beside (pid, tid): the row itself for 0, else one
 * named after it with " (row + 1)", made on first use; -1 when out of
 * memory. */
static long long row_tid(row_table *r, int pid, long long tid, uint32_t row)
{
    if (row == 0)
        return tid;
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].pid == pid && r->rows[i].beside == tid && r->rows[i].row == row)
            return r->rows[i].tid;
    const named_row *base = find_row(r, pid, tid);
    char name[sizeof base->name];
    snprintf(name, sizeof name, "%.*s (%u)", CP_STREAM_LABEL_MAX, base ? base->name : "row",
             row + 1);
    long long extra = r->next_extra++;
    return name_row(r, pid, extra, tid, row, name) ? extra : -1;
}

/* Flows pair a launch with its work within one process: correlation ids
 * repeat across processes. */
static int by_process_and_correlation(const void *x, const void *y)
{
    const cp_activity *a = *(const cp_activity *const *)x, *b = *(const cp_activity *const *)y;
    if (a->process != b->process)
        return a->process < b->process ? -1 : 1;
    return cp_activity_ptr_cmp_correlation(x, y);
}

/* Appends v in decimal. */
static void put_int(html_buf *b, long long v)
{
    char tmp[24], *p = tmp + sizeof tmp;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *--p = '-';
    html_put(b, p, (size_t)(tmp + sizeof tmp - p));
}

/* Appends ns nanoseconds as microseconds, exactly: "12", "12.5", "12.345". */
static void put_us(html_buf *b, long long ns)
{
    if (ns < 0) {
        html_put(b, "-", 1);
        ns = -ns;
    }
    put_int(b, ns / 1000);
    int frac = (int)(ns % 1000);
    if (!frac)
        return;
    char d[4] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                 (char)('0' + frac % 10)};
    size_t n = 4;
    while (d[n - 1] == '0')
        n--;
    html_put(b, d, n);
}

/* Starts an event: {"ph":..,"name":..,"pid":..,"tid":..,"ts":.. with ts
 * given in nanoseconds from the trace's origin; the caller adds its other
 * fields and the closing brace. */
static void event(writer *w, const char *ph, const char *name, int pid, long long tid,
                  long long ts_ns)
{
    html_buf *b = &w->b;
    html_raw(b, w->first ? "{\"ph\":\"" : ",\n{\"ph\":\"");
    w->first = false;
    html_raw(b, ph);
    html_raw(b, "\",\"name\":");
    html_json_string(b, name ? name : "");
    html_raw(b, ",\"pid\":");
    put_int(b, pid);
    html_raw(b, ",\"tid\":");
    put_int(b, tid);
    html_raw(b, ",\"ts\":");
    put_us(b, ts_ns);
}

static void metadata(writer *w, const char *what, int pid, long long tid, const char *name)
{
    event(w, "M", what, pid, tid, 0);
    html_raw(&w->b, ",\"args\":{\"name\":");
    html_json_string(&w->b, name);
    html_raw(&w->b, "}}");
}

/* Whose a row is in a trace of several processes: "rank 1 (HOST, PID)"
 * for a rank, as cp_process_label begins, else "pid PID". */
static const char *whose(const cp_trace *t, uint32_t process, char *buf, size_t len)
{
    const cp_process *p = &t->processes[process];
    if (cp_process_rank(p) >= 0)
        snprintf(buf, len, "rank %d (%s%s%u)", (int)cp_process_rank(p), p->host,
                 p->host[0] ? ", " : "", p->pid);
    else
        snprintf(buf, len, "pid %u", p->pid);
    return buf;
}

/* A device's process (pid) of a traced program: named by its rank first,
 * "rank 1 (HOST, PID): GPU 1, context 1", and stacked by rank (Perfetto's
 * sort index: the ranks' in order, then the processes without a rank). */
static void name_device_process(writer *w, const cp_trace *t, const cp_activity *a, int pid)
{
    char name[160], who[96];
    bool several = a->process < t->nprocesses && t->nprocesses > 1;
    int32_t rank = a->process < t->nprocesses ? cp_process_rank(&t->processes[a->process]) : -1;
    if (rank >= 0)
        snprintf(name, sizeof name, "%s: GPU %u, context %u",
                 whose(t, a->process, who, sizeof who), a->device, a->context);
    else if (several)
        snprintf(name, sizeof name, "GPU %u, context %u, pid %u", a->device, a->context,
                 t->processes[a->process].pid);
    else
        snprintf(name, sizeof name, "GPU %u, context %u", a->device, a->context);
    metadata(w, "process_name", pid, 0, name);
    if (!several)
        return;
    event(w, "M", "process_sort_index", pid, 0, 0);
    html_raw(&w->b, ",\"args\":{\"sort_index\":");
    put_int(&w->b, rank >= 0 ? rank : (1 << 30) + pid);
    html_raw(&w->b, "}}");
}

/* One trace's writing: its text, the rows named so far, and where each
 * record went, which the flows read after the slices. */
typedef struct chrome {
    const cp_trace *t;
    uint64_t origin; /* the first record's start: time 0 */
    writer w;
    track tracks[256];
    size_t ntracks;
    host_thread *threads;
    size_t nthreads, threads_cap;
    row_table names;
    cp_rows *rows;
    long long *placed; /* each record's tid, by its index; -1: left out */
} chrome;

/* The two rows of the host thread of `a`, first seen here: "thread T"
 * and "thread T NVTX", with ", pid P" (or the rank) after them when the
 * trace has several processes. False when out of memory. */
static bool add_host_thread(chrome *ch, const cp_activity *a)
{
    const cp_trace *t = ch->t;
    host_thread *p = cp_grow(ch->threads, &ch->threads_cap, ch->nthreads, sizeof *p, 16);
    if (!p)
        return false;
    ch->threads = p;
    ch->threads[ch->nthreads++] = (host_thread){a->process, a->thread};
    char pid[100] = "", name[112], who[96];
    if (a->process < t->nprocesses && t->nprocesses > 1)
        snprintf(pid, sizeof pid, ", %s", whose(t, a->process, who, sizeof who));
    long long tid = THREAD_TID_BASE + 2 * (long long)(ch->nthreads - 1);
    for (int ranges = 0; ranges < 2; ranges++) {
        snprintf(name, sizeof name, "thread %u%s%s", a->thread, ranges ? " NVTX" : "", pid);
        if (!name_row(&ch->names, HOST_PID, tid + ranges, 0, 0, name))
            return false;
    }
    return true;
}

/* The host process's rows, named before any slice: process 0's CUDA API
 * row, an API and an NVTX row for each further process, two rows per
 * host thread the trace knows (in order of first sight), and the
 * harness's NVTX phases. False when out of memory. */
static bool name_host_rows(chrome *ch)
{
    const cp_trace *t = ch->t;
    if (!name_row(&ch->names, HOST_PID, API_TID, 0, 0, "CUDA API"))
        return false;
    for (size_t k = 1; k < t->nprocesses; k++) {
        char name[112], who[96];
        cp_activity probe = {.kind = CP_ACT_RUNTIME, .process = (uint32_t)k};
        snprintf(name, sizeof name, "CUDA API, %s", whose(t, (uint32_t)k, who, sizeof who));
        if (!name_row(&ch->names, HOST_PID, host_tid(&probe, NULL, 0), 0, 0, name))
            return false;
        probe.kind = CP_ACT_RANGE;
        snprintf(name, sizeof name, "NVTX, %s", who);
        if (!name_row(&ch->names, HOST_PID, host_tid(&probe, NULL, 0), 0, 0, name))
            return false;
    }
    for (size_t i = 0; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (cp_activity_is_device_work(a) || !a->thread ||
            host_tid(a, ch->threads, ch->nthreads) >= THREAD_TID_BASE)
            continue;
        if (!add_host_thread(ch, a))
            return false;
    }
    return name_row(&ch->names, HOST_PID, NVTX_TID, 0, 0, "cuproof NVTX phases");
}

/* The "X" event of record `a` on row (pid, tid), with its kind, stream,
 * correlation id and, for a copy or set, its bytes and rate as args. The
 * name is the label the HTML timeline shows too (cuproof/units.h): an API
 * call without its "_v3020"; the trace JSON keeps the raw name. */
static void put_slice(chrome *ch, const cp_activity *a, int pid, long long tid)
{
    long long ts = (long long)(a->start - ch->origin), dur = (long long)(a->end - a->start);
    char label[256];
    const char *name = cp_activity_label_str(a, label, sizeof label);
    event(&ch->w, "X", name, pid, tid, ts);
    html_buf *b = &ch->w.b;
    html_raw(b, ",\"dur\":");
    put_us(b, dur);
    html_raw(b, ",\"cat\":\"");
    html_raw(b, cp_act_kind_name(a->kind));
    html_raw(b, "\",\"args\":{\"stream\":");
    put_int(b, a->stream);
    html_raw(b, ",\"correlation\":");
    put_int(b, a->correlation);
    if (a->kind == CP_ACT_MEMCPY || a->kind == CP_ACT_MEMSET) {
        html_raw(b, ",\"bytes\":");
        put_int(b, (long long)a->bytes);
        if (a->end > a->start)
            html_fmt(b, ",\"GB/s\":%.6g", (double)a->bytes / (double)(a->end - a->start));
    }
    if (a->kind == CP_ACT_RANGE && a->comm) {
        /* An NCCL call's payload: its communicator, message and peer. */
        html_fmt(b, ",\"communicator\":\"%016llx\",\"bytes\":%llu", (unsigned long long)a->comm,
                 (unsigned long long)a->bytes);
        if (a->peer >= 0)
            html_fmt(b, ",\"peer\":%d", (int)a->peer);
    }
    html_raw(b, "}}");
}

/* Record `a` as a slice: device work on its context's process (named on
 * first sight) and its stream's row (named on first use), a host record
 * on its thread's or process's row; a record that partly overlaps
 * another of its row goes on a row beside it (rows.h). The row is kept
 * in placed; device work past the tracks' 256 contexts is left out
 * (-1). False when out of memory. */
static bool add_slice(chrome *ch, const cp_activity *a)
{
    const cp_trace *t = ch->t;
    int pid = HOST_PID;
    long long tid = host_tid(a, ch->threads, ch->nthreads);
    if (cp_activity_is_device_work(a)) {
        size_t before = ch->ntracks;
        pid = pid_of(ch->tracks, &ch->ntracks, sizeof ch->tracks / sizeof *ch->tracks, a);
        if (pid < 0) {
            ch->placed[a - t->items] = -1;
            return true; /* more contexts than tracks: left out */
        }
        if (ch->ntracks > before)
            name_device_process(&ch->w, t, a, pid);
        tid = 1000 + (long long)a->stream; /* clear of the metadata's tid 0 */
        if (!find_row(&ch->names, pid, tid)) {
            char name[CP_STREAM_LABEL_MAX];
            cp_stream_label(t, a->process, a->device, a->context, a->stream, name, sizeof name);
            if (!name_row(&ch->names, pid, tid, 0, 0, name))
                return false;
        }
    }
    int64_t row = cp_rows_place(ch->rows, (uint64_t)pid << 40 | (uint64_t)tid, a->start, a->end);
    if (row < 0 || (tid = row_tid(&ch->names, pid, tid, (uint32_t)row)) < 0)
        return false;
    ch->placed[a - t->items] = tid;
    put_slice(ch, a, pid, tid);
    return !ch->w.b.oom;
}

/* The flow from API call `api` (on the host's rows) to the device work
 * `d` it launched, paired by correlation id. False when out of memory. */
static bool add_flow(chrome *ch, const cp_activity *api, const cp_activity *d)
{
    const cp_trace *t = ch->t;
    int pid = pid_of(ch->tracks, &ch->ntracks, sizeof ch->tracks / sizeof *ch->tracks, d);
    event(&ch->w, "s", "launch", HOST_PID, ch->placed[api - t->items],
          (long long)(api->start - ch->origin));
    html_raw(&ch->w.b, ",\"id\":");
    put_int(&ch->w.b, d->correlation);
    html_raw(&ch->w.b, ",\"cat\":\"flow\"}");
    event(&ch->w, "f", "launch", pid, ch->placed[d - t->items], (long long)(d->start - ch->origin));
    html_raw(&ch->w.b, ",\"id\":");
    put_int(&ch->w.b, d->correlation);
    html_raw(&ch->w.b, ",\"cat\":\"flow\",\"bp\":\"e\"}");
    return !ch->w.b.oom;
}

/* Flows: the API call that launched each piece of device work placed,
 * from the row of the call to the row of the work; work whose call the
 * trace lacks has none. False when out of memory. */
static bool add_flows(chrome *ch)
{
    const cp_trace *t = ch->t;
    const cp_activity **calls = malloc((t->n ? t->n : 1) * sizeof *calls); /* by correlation */
    if (!calls)
        return false;
    size_t ncalls = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].kind == CP_ACT_RUNTIME)
            calls[ncalls++] = &t->items[i];
    qsort(calls, ncalls, sizeof *calls, by_process_and_correlation);
    bool ok = true;
    for (size_t i = 0; ok && i < t->n; i++) {
        const cp_activity *d = &t->items[i];
        if (!cp_activity_is_device_work(d) || d->correlation == 0 || ch->placed[i] < 0)
            continue;
        cp_activity key = {.correlation = d->correlation, .process = d->process};
        const cp_activity *kp = &key;
        const cp_activity **found = ncalls ? bsearch(&kp, calls, ncalls, sizeof *calls,
                                                     by_process_and_correlation)
                                           : NULL;
        if (found)
            ok = add_flow(ch, *found, d);
    }
    free(calls);
    return ok;
}

char *cp_chrome_trace(const cp_trace *t, const char *title)
{
    chrome ch = {.t = t, .origin = UINT64_MAX, .w = {.first = true},
                 .names = {.next_extra = EXTRA_TID_BASE}};
    ch.names.w = &ch.w;
    const cp_activity **order = NULL; /* the records by start, the longer first */
    char *text = NULL;
    ch.rows = cp_rows_new();
    if (!ch.rows)
        goto out;
    html_raw(&ch.w.b, "{\"traceEvents\":[\n");
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].start < ch.origin)
            ch.origin = t->items[i].start;
    metadata(&ch.w, "process_name", HOST_PID, 0, title ? title : "host");
    if (!name_host_rows(&ch))
        goto out;
    /* Rows are dealt in order of start, so that a record that partly
     * overlaps another of its row goes on a row beside it (rows.h). */
    order = malloc((t->n ? t->n : 1) * sizeof *order);
    ch.placed = malloc((t->n ? t->n : 1) * sizeof *ch.placed);
    if (!order || !ch.placed)
        goto out;
    for (size_t i = 0; i < t->n; i++)
        order[i] = &t->items[i];
    qsort(order, t->n, sizeof *order, cp_rows_order_ptr);
    for (size_t i = 0; i < t->n; i++)
        if (!add_slice(&ch, order[i]))
            goto out;
    if (!add_flows(&ch))
        goto out;
    html_raw(&ch.w.b, "\n],\"displayTimeUnit\":\"ms\"}\n");
    if (!ch.w.b.oom) {
        text = ch.w.b.s;
        ch.w.b.s = NULL;
    }
out:
    free(order);
    free(ch.placed);
    free(ch.threads);
    free(ch.names.rows);
    cp_rows_free(ch.rows);
    free(ch.w.b.s);
    if (!text)
        cp_failf(CP_ENOMEM, "out of memory building a Chrome trace");
    return text;
}

int cp_perfetto_write(const char *dir, const char *case_name, const char *variant,
                      const cp_trace *t)
{
    char path[PATH_MAX + 256], title[160];
    snprintf(path, sizeof path, "%s/%s.%s.perfetto.json", dir, case_name, variant);
    snprintf(title, sizeof title, "cuproof %s / %s", case_name, variant);
    char *text = cp_chrome_trace(t, title);
    if (!text)
        return CP_ENOMEM;
    int rc = cp_write_file(path, text);
    free(text);
    return rc;
}
