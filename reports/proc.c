/* Per-process trace files (cuproof.proc/1) read line by line with cJSON
 * and merged into one trace: see cuproof/internal/proc.h for what each record
 * becomes. */
#include <cuproof/internal/capture.h>
#include <cuproof/internal/proc.h>

#include <cuproof/error.h>
#include <cuproof/internal/rec.h>
#include "analysis/json_put.h"

#include <cjson/cJSON.h>

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* JSON numbers are doubles: integers beyond 2^53 would not be exact. */
#define EXACT_LIMIT 9007199254740992.0

/* ---- Lines ---- */

/*
 * The lines of a file's bytes as they are handed over, one at a time, each
 * copied into a buffer that grows to CP_PROC_MAX_LINE and no further, so
 * that memory stays bounded whatever the file holds. A line whose newline
 * has not come yet waits in the buffer for the next bytes, until the
 * input is said to be complete (`more` false): then it is the file's last
 * line, without its newline.
 */
typedef struct line_reader {
    const char *chunk; /* the bytes handed over, not yet taken */
    size_t pos, end;
    bool more;           /* more bytes may follow these */
    char *line;          /* the current line, NUL-terminated */
    size_t len, cap;
    bool started;        /* the current line has begun (it may still be empty) */
    bool newline;        /* whether the current line ended with '\n' */
} line_reader;

enum { BLOCK_SIZE = 1 << 16 };

/* Appends n bytes to the current line. Returns 0, CP_ENOMEM, or 1 when the
 * line would exceed CP_PROC_MAX_LINE. */
static int line_append(line_reader *r, const char *p, size_t n)
{
    if (r->len + n > CP_PROC_MAX_LINE)
        return 1;
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->len + n + 1)
            cap *= 2;
        if (cap > CP_PROC_MAX_LINE + 1)
            cap = CP_PROC_MAX_LINE + 1;
        char *q = realloc(r->line, cap);
        if (!q)
            return CP_ENOMEM;
        r->line = q;
        r->cap = cap;
    }
    memcpy(r->line + r->len, p, n);
    r->len += n;
    r->line[r->len] = '\0';
    return 0;
}

/* Takes the next line. Returns 1 with a line, 0 at the end of the input,
 * 3 when the bytes so far end inside a line that more bytes may finish
 * (it waits in the buffer), 2 for a line longer than CP_PROC_MAX_LINE, or
 * CP_ENOMEM (the caller words the message). */
static int line_next(line_reader *r)
{
    if (!r->started) {
        r->len = 0;
        r->newline = false;
        if (r->line)
            r->line[0] = '\0';
    }
    for (;;) {
        if (r->pos == r->end) {
            if (r->more)
                return 3;
            bool any = r->started;
            r->started = false;
            return any ? 1 : 0;
        }
        const char *start = r->chunk + r->pos;
        const char *nl = memchr(start, '\n', r->end - r->pos);
        size_t take = nl ? (size_t)(nl - start) : r->end - r->pos;
        int rc = line_append(r, start, take);
        if (rc < 0)
            return rc;
        if (rc > 0)
            return 2;
        r->started = true;
        r->pos += take;
        if (nl) {
            r->pos++;
            r->newline = true;
            r->started = false;
            return 1;
        }
    }
}

/* ---- One file ---- */

/* A marker start waiting for its end: the range's index in the trace. */
typedef struct open_range {
    uint64_t id;
    size_t item;
} open_range;

typedef struct proc_state {
    const char *name; /* the file, for messages */
    size_t line;
    cp_trace *t;
    size_t first_item; /* this process's records start here in t */
    uint32_t process;  /* its index in t->processes */
    uint64_t origin;
    bool have_header, ended;
    size_t end_line;
    char why[160]; /* the end line's reason */
    uint64_t last_ns; /* the latest time the file holds */
    uint64_t dropped, zero_timestamps;
    cp_tracing_cost cost; /* the last flush's or end's; not recorded by earlier writers */
    open_range *open;
    size_t nopen, open_cap;
    bool profiling;
    size_t profiler_item;
    bool capturing; /* a capture window is open (cuproof/internal/capture.h) */
    size_t capture_item;
    const char *kind; /* the record under parse, for messages */
    /* Streaming (cp_proc_stream): activities go to emit as they are read,
     * except ranges, which wait in t for their ends and depths. */
    cp_proc_emit emit;
    void *emit_ctx;
} proc_state;

static int fail(const proc_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A parse error naming the file, the line and, when one is under parse,
 * the record's kind. */
static int fail(const proc_state *st, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (st->kind)
        return cp_failf(CP_EPARSE, "%s:%zu: %s record: %s", st->name, st->line, st->kind, msg);
    return cp_failf(CP_EPARSE, "%s:%zu: %s", st->name, st->line, msg);
}

static int no_memory(const proc_state *st)
{
    return cp_failf(CP_ENOMEM, "%s:%zu: out of memory", st->name, st->line);
}

static const cJSON *field(const proc_state *st, const cJSON *o, const char *k, int *rc)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v)
        *rc = fail(st, "missing field '%s'", k);
    return v;
}

/* An integer field in [lo, hi] (both within +-2^53). */
static int get_int(const proc_state *st, const cJSON *o, const char *k, double lo, double hi,
                   double *out)
{
    int rc = 0;
    const cJSON *v = field(st, o, k, &rc);
    if (!v)
        return rc;
    if (!cJSON_IsNumber(v))
        return fail(st, "field '%s' must be a number", k);
    double d = v->valuedouble;
    if (!(d >= lo && d <= hi) || d != (double)(int64_t)d)
        return fail(st, "field '%s' must be an integer from %.0f to %.0f, not %.17g", k, lo, hi,
                    d);
    *out = d;
    return 0;
}

static int get_u32(const proc_state *st, const cJSON *o, const char *k, uint32_t *out)
{
    double d = 0;
    int rc = get_int(st, o, k, 0, 4294967295.0, &d);
    if (rc == 0)
        *out = (uint32_t)d;
    return rc;
}

static int get_u64(const proc_state *st, const cJSON *o, const char *k, uint64_t *out)
{
    double d = 0;
    int rc = get_int(st, o, k, 0, EXACT_LIMIT, &d);
    if (rc == 0)
        *out = (uint64_t)d;
    return rc;
}

/* A time: an offset from origin_ns, made absolute. */
static int get_time(proc_state *st, const cJSON *o, const char *k, uint64_t *out)
{
    double d = 0;
    int rc = get_int(st, o, k, -EXACT_LIMIT, EXACT_LIMIT, &d);
    if (rc < 0)
        return rc;
    int64_t off = (int64_t)d;
    if (off < 0 && (uint64_t)-off > st->origin)
        return fail(st, "field '%s' (%lld) lies before time 0", k, (long long)off);
    if (off > 0 && (uint64_t)off > UINT64_MAX - st->origin)
        return fail(st, "field '%s' (%lld) lies beyond the clock's range", k, (long long)off);
    *out = off < 0 ? st->origin - (uint64_t)-off : st->origin + (uint64_t)off;
    if (*out > st->last_ns)
        st->last_ns = *out;
    return 0;
}

static int get_str(const proc_state *st, const cJSON *o, const char *k, const char **out)
{
    int rc = 0;
    const cJSON *v = field(st, o, k, &rc);
    if (!v)
        return rc;
    if (!cJSON_IsString(v))
        return fail(st, "field '%s' must be a string", k);
    *out = v->valuestring;
    return 0;
}

/* An NCCL communicator (cp_json_comm_parse's form). */
static int get_comm(const proc_state *st, const cJSON *o, const char *k, uint64_t *out)
{
    const char *text = NULL;
    int rc = get_str(st, o, k, &text);
    if (rc == 0 && !cp_json_comm_parse(text, out))
        rc = fail(st, "field '%s' must be 16 lower-case hexadecimal digits, not 0, not '%.40s'", k,
                  text);
    return rc;
}

static int get_bool(const proc_state *st, const cJSON *o, const char *k, bool *out)
{
    int rc = 0;
    const cJSON *v = field(st, o, k, &rc);
    if (!v)
        return rc;
    if (!cJSON_IsBool(v))
        return fail(st, "field '%s' must be true or false", k);
    *out = cJSON_IsTrue(v);
    return 0;
}

/* A string field that must be one of the n names; *out gets its index. */
static int get_enum(const proc_state *st, const cJSON *o, const char *k,
                    const char *const *names, int n, int *out)
{
    const char *s = NULL;
    int rc = get_str(st, o, k, &s);
    if (rc < 0)
        return rc;
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char known[160];
    size_t used = 0;
    known[0] = '\0';
    for (int i = 0; i < n && used < sizeof known; i++) {
        int w = snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", names[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    return fail(st, "field '%s' is '%.40s', not one of %s", k, s, known);
}

static int get_dim3(const proc_state *st, const cJSON *o, const char *k, uint32_t dim[3])
{
    int rc = 0;
    const cJSON *v = field(st, o, k, &rc);
    if (!v)
        return rc;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 3)
        return fail(st, "field '%s' must be an array of 3 integers", k);
    for (int i = 0; i < 3; i++) {
        const cJSON *x = cJSON_GetArrayItem(v, i);
        if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0 && x->valuedouble <= 4294967295.0) ||
            x->valuedouble != (double)(uint32_t)x->valuedouble)
            return fail(st, "field '%s' must be an array of 3 integers", k);
        dim[i] = (uint32_t)x->valuedouble;
    }
    return 0;
}

static const char *const sync_names[] = {"event_synchronize", "stream_wait_event",
                                         "stream_synchronize", "context_synchronize", "unknown"};
static const char *const flag_names[] = {"default", "non_blocking", "null", "unknown"};
static const char *const phase_names[] = {"start", "end", "instant"};
static const char *const profiler_names[] = {"start", "stop"};
static const char *const capture_names[] = {"open", "close"};
enum { PHASE_START = 0, PHASE_END, PHASE_INSTANT };

#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

static int add(proc_state *st, const cp_activity *a)
{
    if (st->emit && a->kind != CP_ACT_RANGE) {
        int rc = st->emit(st->emit_ctx, a);
        return rc < 0 ? rc : 0;
    }
    return cp_trace_add(st->t, a) < 0 ? no_memory(st) : 0;
}

/* What kernels, copies and memsets share: times, where they ran, and the
 * graph that launched them. */
static int device_fields(proc_state *st, const cJSON *o, cp_activity *a)
{
    int rc = 0;
    CP_TRY(get_time(st, o, "s", &a->start));
    CP_TRY(get_time(st, o, "e", &a->end));
    CP_TRY(get_u32(st, o, "dev", &a->device));
    CP_TRY(get_u32(st, o, "ctx", &a->context));
    CP_TRY(get_u32(st, o, "str", &a->stream));
    CP_TRY(get_u32(st, o, "cor", &a->correlation));
    CP_TRY(get_u32(st, o, "graph", &a->graph_id));
    CP_TRY(get_u64(st, o, "node", &a->graph_node));
    a->process = st->process;
out:
    return rc;
}

static int parse_kernel(proc_state *st, const cJSON *o)
{
    int rc = 0;
    cp_activity a = {.kind = CP_ACT_KERNEL};
    CP_TRY(device_fields(st, o, &a));
    CP_TRY(get_dim3(st, o, "grid", a.grid));
    CP_TRY(get_dim3(st, o, "block", a.block));
    CP_TRY(get_str(st, o, "name", &a.name));
    rc = add(st, &a);
out:
    return rc;
}

/* The file spells copy directions and memory kinds as the trace's enums
 * are named (cp_copy_dir_name, cp_mem_kind_name): the names come from
 * there, so that the two cannot drift apart. */
static void copy_dir_names(const char *names[CP_COPY_DIR_COUNT])
{
    for (int i = 0; i < CP_COPY_DIR_COUNT; i++)
        names[i] = cp_copy_dir_name((cp_copy_dir)i);
}

static void mem_kind_names(const char *names[CP_MEM_KIND_COUNT])
{
    for (int i = 0; i < CP_MEM_KIND_COUNT; i++)
        names[i] = cp_mem_kind_name((cp_mem_kind)i);
}

static int parse_memcpy(proc_state *st, const cJSON *o)
{
    int rc = 0, dir = 0, src = 0, dst = 0;
    const char *dirs[CP_COPY_DIR_COUNT], *kinds[CP_MEM_KIND_COUNT];
    copy_dir_names(dirs);
    mem_kind_names(kinds);
    cp_activity a = {.kind = CP_ACT_MEMCPY, .name = "memcpy"};
    CP_TRY(device_fields(st, o, &a));
    CP_TRY(get_u64(st, o, "bytes", &a.bytes));
    CP_TRY(get_enum(st, o, "dir", dirs, CP_COPY_DIR_COUNT, &dir));
    CP_TRY(get_enum(st, o, "src", kinds, CP_MEM_KIND_COUNT, &src));
    CP_TRY(get_enum(st, o, "dst", kinds, CP_MEM_KIND_COUNT, &dst));
    CP_TRY(get_bool(st, o, "async", &a.async));
    a.copy_dir = (cp_copy_dir)dir;
    a.src = (cp_mem_kind)src;
    a.dst = (cp_mem_kind)dst;
    rc = add(st, &a);
out:
    return rc;
}

static int parse_memset(proc_state *st, const cJSON *o)
{
    int rc = 0, dst = 0;
    const char *kinds[CP_MEM_KIND_COUNT];
    mem_kind_names(kinds);
    cp_activity a = {.kind = CP_ACT_MEMSET, .name = "memset"};
    CP_TRY(device_fields(st, o, &a));
    CP_TRY(get_u64(st, o, "bytes", &a.bytes));
    CP_TRY(get_enum(st, o, "dst", kinds, CP_MEM_KIND_COUNT, &dst));
    a.dst = (cp_mem_kind)dst;
    rc = add(st, &a);
out:
    return rc;
}

/* Runtime and driver API calls alike: the trace keeps them for launch
 * correlation, by name. */
static int parse_api(proc_state *st, const cJSON *o)
{
    int rc = 0;
    uint32_t tid = 0;
    cp_activity a = {.kind = CP_ACT_RUNTIME, .process = st->process};
    CP_TRY(get_time(st, o, "s", &a.start));
    CP_TRY(get_time(st, o, "e", &a.end));
    CP_TRY(get_u32(st, o, "cor", &a.correlation));
    CP_TRY(get_u32(st, o, "tid", &tid));
    CP_TRY(get_str(st, o, "name", &a.name));
    a.thread = tid;
    rc = add(st, &a);
out:
    return rc;
}

static int parse_sync(proc_state *st, const cJSON *o)
{
    int rc = 0, type = 0;
    uint64_t s = 0, e = 0;
    uint32_t ctx = 0, str = 0, cor = 0;
    CP_TRY(get_time(st, o, "s", &s));
    CP_TRY(get_time(st, o, "e", &e));
    CP_TRY(get_u32(st, o, "ctx", &ctx));
    CP_TRY(get_u32(st, o, "str", &str));
    CP_TRY(get_u32(st, o, "cor", &cor));
    CP_TRY(get_enum(st, o, "type", sync_names, COUNT(sync_names), &type));
out:
    return rc;
}

static int parse_stream(proc_state *st, const cJSON *o)
{
    int rc = 0, flag = 0;
    uint32_t dev = 0, ctx = 0, str = 0;
    CP_TRY(get_u32(st, o, "dev", &dev));
    CP_TRY(get_u32(st, o, "ctx", &ctx));
    CP_TRY(get_u32(st, o, "str", &str));
    CP_TRY(get_enum(st, o, "flag", flag_names, COUNT(flag_names), &flag));
out:
    return rc;
}

static int parse_context(proc_state *st, const cJSON *o)
{
    int rc = 0;
    uint32_t dev = 0, ctx = 0, null_stream = 0;
    CP_TRY(get_u32(st, o, "dev", &dev));
    CP_TRY(get_u32(st, o, "ctx", &ctx));
    CP_TRY(get_u32(st, o, "null_stream", &null_stream));
out:
    return rc;
}

static int parse_device(proc_state *st, const cJSON *o)
{
    int rc = 0;
    uint32_t dev = 0, sms = 0;
    const char *name = NULL, *cc = NULL;
    CP_TRY(get_u32(st, o, "dev", &dev));
    CP_TRY(get_str(st, o, "name", &name));
    CP_TRY(get_str(st, o, "cc", &cc));
    CP_TRY(get_u32(st, o, "sms", &sms));
out:
    return rc;
}

/* A stream the program named: a label for its lane, in this process. */
static int parse_stream_name(proc_state *st, const cJSON *o)
{
    int rc = 0;
    cp_stream_name n = {.process = st->process};
    CP_TRY(get_u32(st, o, "dev", &n.device));
    CP_TRY(get_u32(st, o, "ctx", &n.context));
    CP_TRY(get_u32(st, o, "str", &n.stream));
    CP_TRY(get_str(st, o, "name", &n.name));
    if (cp_trace_name_stream(st->t, &n) < 0)
        return no_memory(st);
out:
    return rc;
}

/* Opens a range at `start` that a later record closes (its end is the
 * start until then). */
static int open_range_at(proc_state *st, uint64_t start, const char *name, uint32_t thread,
                         size_t *item)
{
    cp_activity a = {.kind = CP_ACT_RANGE, .start = start, .end = start,
                     .process = st->process, .thread = thread, .name = name};
    *item = st->t->n;
    return add(st, &a);
}

static int parse_marker(proc_state *st, const cJSON *o)
{
    int rc = 0, phase = 0;
    uint64_t at = 0, id = 0;
    const char *name = NULL, *domain = NULL;
    CP_TRY(get_time(st, o, "t", &at));
    CP_TRY(get_u64(st, o, "id", &id));
    CP_TRY(get_enum(st, o, "phase", phase_names, COUNT(phase_names), &phase));
    CP_TRY(get_str(st, o, "name", &name));
    CP_TRY(get_str(st, o, "domain", &domain));
    /* The thread came with format 1's later writers: a file without it
     * has ranges of no known thread. */
    uint32_t thread = 0;
    if (cJSON_GetObjectItemCaseSensitive(o, "tid"))
        CP_TRY(get_u32(st, o, "tid", &thread));
    /* An NCCL call's payload, on its range's start (cuproof.proc/1's
     * later writers; cuproof/trace.h's comm, bytes and peer). */
    uint64_t comm = 0, bytes = 0;
    double peer = -1;
    if (phase == PHASE_START && cJSON_GetObjectItemCaseSensitive(o, "comm")) {
        CP_TRY(get_comm(st, o, "comm", &comm));
        CP_TRY(get_u64(st, o, "bytes", &bytes));
        CP_TRY(get_int(st, o, "peer", -1, 2147483647.0, &peer));
    }
    if (phase == PHASE_INSTANT) {
        size_t item = 0;
        rc = open_range_at(st, at, name, thread, &item);
        goto out;
    }
    /* Open ranges are few and usually closed last-opened first: search
     * from the end. */
    size_t i = st->nopen;
    while (i > 0 && st->open[i - 1].id != id)
        i--;
    if (phase == PHASE_START) {
        if (i > 0) {
            rc = fail(st, "marker %llu starts again while it is open", (unsigned long long)id);
            goto out;
        }
        if (st->nopen == st->open_cap) {
            size_t cap = st->open_cap ? st->open_cap * 2 : 16;
            open_range *p = realloc(st->open, cap * sizeof *p);
            if (!p) {
                rc = no_memory(st);
                goto out;
            }
            st->open = p;
            st->open_cap = cap;
        }
        st->open[st->nopen].id = id;
        CP_TRY(open_range_at(st, at, name, thread, &st->open[st->nopen].item));
        if (comm) {
            cp_activity *a = &st->t->items[st->open[st->nopen].item];
            a->comm = comm;
            a->bytes = bytes;
            a->peer = (int32_t)peer;
        }
        st->nopen++;
    } else if (i > 0) {
        st->t->items[st->open[i - 1].item].end = at;
        st->open[i - 1] = st->open[--st->nopen];
    }
    /* An end without its start: see cuproof/internal/proc.h, it is skipped. */
out:
    return rc;
}

static int parse_profiler(proc_state *st, const cJSON *o)
{
    int rc = 0, phase = 0;
    uint64_t at = 0;
    CP_TRY(get_time(st, o, "t", &at));
    CP_TRY(get_enum(st, o, "phase", profiler_names, COUNT(profiler_names), &phase));
    if (phase == 0 && !st->profiling) {
        CP_TRY(open_range_at(st, at, "cuProfilerStart", 0, &st->profiler_item));
        st->profiling = true;
    } else if (phase == 1 && st->profiling) {
        st->t->items[st->profiler_item].end = at;
        st->profiling = false;
    }
out:
    return rc;
}

/* A capture window's opening or closing: the window is a range named
 * CP_CAPTURE_RANGE_NAME (CP_WARMUP_RANGE_NAME for a warm-up's) from one
 * to the other, or to the file's last time when it never closed. */
static int parse_capture(proc_state *st, const cJSON *o)
{
    int rc = 0, phase = 0;
    uint64_t at = 0;
    bool warmup = false;
    uint32_t occurrence = 0;
    CP_TRY(get_time(st, o, "t", &at));
    CP_TRY(get_enum(st, o, "phase", capture_names, COUNT(capture_names), &phase));
    CP_TRY(get_u32(st, o, "occurrence", &occurrence));
    CP_TRY(get_bool(st, o, "warmup", &warmup));
    if (phase == 0 && !st->capturing) {
        CP_TRY(open_range_at(st, at, warmup ? CP_WARMUP_RANGE_NAME : CP_CAPTURE_RANGE_NAME, 0,
                             &st->capture_item));
        /* The window's first occurrence, which its steps count from. */
        st->t->items[st->capture_item].correlation = occurrence;
        st->capturing = true;
    } else if (phase == 1 && st->capturing) {
        st->t->items[st->capture_item].end = at;
        st->capturing = false;
    }
out:
    return rc;
}

/* An optional field: 1 when present, 0 when absent (a writer before it). */
static bool has_field(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k) != NULL;
}

/* The tracing cost of a flush or end line, which earlier writers left
 * out: with "buffers" the fields come together, and the cost so far
 * replaces the one before; without it nothing is recorded. An overhead
 * kind this reader does not know counts as "other". */
static int parse_cost(proc_state *st, const cJSON *o, uint64_t records)
{
    int rc = 0, api = 0;
    static const char *const api_names[] = {"filtered", "all"};
    if (!has_field(o, "buffers"))
        return 0;
    cp_tracing_cost c = {.recorded = true, .records = records};
    CP_TRY(get_enum(st, o, "api", api_names, 2, &api));
    CP_TRY(get_u64(st, o, "api_records", &c.api_records));
    CP_TRY(get_u64(st, o, "api_filtered", &c.api_filtered));
    CP_TRY(get_u64(st, o, "buffers", &c.buffers));
    CP_TRY(get_u64(st, o, "overhead_records", &c.overhead_records));
    const cJSON *overhead = field(st, o, "overhead_ns", &rc);
    if (!overhead)
        goto out;
    if (!cJSON_IsObject(overhead)) {
        rc = fail(st, "field 'overhead_ns' must be an object");
        goto out;
    }
    for (const cJSON *k = overhead->child; k; k = k->next) {
        uint64_t ns = 0;
        CP_TRY(get_u64(st, overhead, k->string, &ns));
        int kind = cp_overhead_kind_from_name(k->string);
        c.overhead_ns[kind < 0 ? CP_OVERHEAD_OTHER : kind] += ns;
    }
    c.api_all = api == 1;
    st->cost = c;
out:
    return rc;
}

/* flush and end: the counts so far (only ever growing), and the time. */
static int parse_counts(proc_state *st, const cJSON *o, bool is_end)
{
    int rc = 0;
    uint64_t at = 0, records = 0, dropped = 0, zero = 0;
    const char *why = NULL;
    CP_TRY(get_time(st, o, "t", &at));
    CP_TRY(get_u64(st, o, "records", &records));
    CP_TRY(get_u64(st, o, "dropped", &dropped));
    CP_TRY(get_u64(st, o, "zero_timestamps", &zero));
    CP_TRY(parse_cost(st, o, records));
    if (is_end)
        CP_TRY(get_str(st, o, "why", &why));
    if (dropped > st->dropped)
        st->dropped = dropped;
    if (zero > st->zero_timestamps)
        st->zero_timestamps = zero;
    if (is_end) {
        st->ended = true;
        st->end_line = st->line;
        snprintf(st->why, sizeof st->why, "%s", why ? why : "");
    }
out:
    return rc;
}

/* Copies at most cap - 1 bytes of s, NUL-terminated. */
static void copy_field(char *dst, size_t cap, const char *s)
{
    snprintf(dst, cap, "%s", s);
}

/* The header's rank fields (docs/distributed.md, "What each process records"), optional so that
 * files of writers before them read as processes of no rank: rank,
 * local_rank and world_size integers from -1 (unknown) to 2^31-1, the
 * strings rank_var, rank_why and run. A rank without rank_var is taken as
 * unknown, as cp_process_rank does. */
static int parse_rank(proc_state *st, const cJSON *o, cp_process *p)
{
    int rc = 0;
    const char *k[3] = {"rank", "local_rank", "world_size"};
    int32_t *dst[3] = {&p->rank, &p->local_rank, &p->world_size};
    for (int i = 0; i < 3; i++) {
        double d = -1;
        if (has_field(o, k[i]))
            CP_TRY(get_int(st, o, k[i], -1, 2147483647.0, &d));
        *dst[i] = (int32_t)d;
    }
    const char *s[3] = {"rank_var", "rank_why", "run"};
    char *into[3] = {p->rank_var, p->rank_why, p->run};
    size_t cap[3] = {sizeof p->rank_var, sizeof p->rank_why, sizeof p->run};
    for (int i = 0; i < 3; i++) {
        const char *v = "";
        if (has_field(o, s[i]))
            CP_TRY(get_str(st, o, s[i], &v));
        copy_field(into[i], cap[i], v);
    }
    if (!p->rank_var[0])
        p->rank = -1;
out:
    return rc;
}

static int parse_header(proc_state *st, const cJSON *o)
{
    int rc = 0;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(o, "schema");
    if (!schema)
        return fail(st, "the first line is not a %s header (no 'schema')", CP_PROC_SCHEMA);
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, CP_PROC_SCHEMA) != 0)
        return fail(st, "the schema is not \"%s\"", CP_PROC_SCHEMA);
    cp_process p;
    memset(&p, 0, sizeof p);
    const char *host = NULL, *command = NULL, *origin = NULL;
    CP_TRY(get_str(st, o, "host", &host));
    CP_TRY(get_u32(st, o, "pid", &p.pid));
    CP_TRY(get_u32(st, o, "ppid", &p.ppid));
    CP_TRY(get_str(st, o, "command", &command));
    CP_TRY(get_str(st, o, "origin_ns", &origin));
    /* A decimal string, digits only: strtoull would take signs and blanks. */
    uint64_t v = 0;
    size_t digits = strspn(origin, "0123456789");
    bool ok = digits > 0 && origin[digits] == '\0';
    for (size_t i = 0; ok && i < digits; i++) {
        unsigned d = (unsigned)(origin[i] - '0');
        ok = v <= (UINT64_MAX - d) / 10;
        v = v * 10 + d;
    }
    if (!ok)
        return fail(st, "field 'origin_ns' must be a decimal string of a 64-bit count of ns");
    copy_field(p.host, sizeof p.host, host);
    copy_field(p.command, sizeof p.command, command);
    CP_TRY(parse_rank(st, o, &p));
    st->origin = v;
    st->last_ns = v;
    long index = cp_trace_add_process(st->t, &p);
    if (index < 0)
        return no_memory(st);
    st->process = (uint32_t)index;
    st->first_item = st->t->n;
    st->have_header = true;
out:
    return rc;
}

typedef int (*record_parser)(proc_state *st, const cJSON *o);

static int parse_flush(proc_state *st, const cJSON *o)
{
    return parse_counts(st, o, false);
}

static int parse_end(proc_state *st, const cJSON *o)
{
    return parse_counts(st, o, true);
}

static const struct {
    const char *kind;
    record_parser parse;
} parsers[] = {
    {"kernel", parse_kernel},   {"memcpy", parse_memcpy},     {"memset", parse_memset},
    {"runtime", parse_api},     {"driver", parse_api},        {"sync", parse_sync},
    {"stream", parse_stream},   {"context", parse_context},   {"device", parse_device},
    {"marker", parse_marker},   {"profiler", parse_profiler}, {"capture", parse_capture},
    {"flush", parse_flush},
    {"end", parse_end},         {"stream_name", parse_stream_name},
};

static int parse_record(proc_state *st, const cJSON *o)
{
    int rc = 0;
    const cJSON *k = field(st, o, "k", &rc);
    if (!k)
        return rc;
    if (!cJSON_IsString(k))
        return fail(st, "field 'k' must be a string");
    if (st->ended)
        return fail(st, "a record after the end record of line %zu", st->end_line);
    for (size_t i = 0; i < sizeof parsers / sizeof parsers[0]; i++)
        if (strcmp(k->valuestring, parsers[i].kind) == 0) {
            st->kind = parsers[i].kind;
            rc = parsers[i].parse(st, o);
            st->kind = NULL;
            return rc;
        }
    return fail(st, "unknown record kind '%.40s'", k->valuestring);
}

/* One line: 1 when it was an incomplete last line that is taken as the
 * file's truncation, 0 when parsed, or an error. */
static int parse_line(proc_state *st, const line_reader *r)
{
    if (memchr(r->line, '\0', r->len))
        return fail(st, "a NUL byte in the line");
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(r->line, r->len + 1, &end, 1);
    if (!o) {
        /* A process killed while writing leaves its last line cut; after
         * its end record it writes nothing at all. */
        if (!r->newline && !st->ended)
            return 1;
        size_t column = end && end >= r->line && end <= r->line + r->len
                            ? (size_t)(end - r->line) + 1 : 1;
        return fail(st, "not valid JSON (near column %zu)", column);
    }
    int rc = 0;
    if (!cJSON_IsObject(o))
        rc = fail(st, "not a JSON object");
    else if (!st->have_header)
        rc = parse_header(st, o);
    else
        rc = parse_record(st, o);
    cJSON_Delete(o);
    return rc;
}

/* A min-heap of times, for the depths below. */
static void heap_push(uint64_t *h, size_t *n, uint64_t v)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static void heap_pop(uint64_t *h, size_t *n)
{
    uint64_t v = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (h[c] >= v)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = v;
}

/* A range as the depth sweep sorts it. */
typedef struct range_key {
    uint64_t start, end;
    size_t item;
} range_key;

/* Ranges by start, the longer first, then in the order of the file. */
static int range_cmp(const void *a, const void *b)
{
    const range_key *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    return x->item < y->item ? -1 : (x->item > y->item);
}

/*
 * Each range's depth: the ranges of the process open at its start. A sweep
 * in start order keeps the ends of the ranges started so far in a heap;
 * those ended by a range's start leave it, and what remains is its depth.
 * O(n log n) however the ranges of several threads interleave.
 */
static int set_depths(proc_state *st)
{
    cp_trace *t = st->t;
    size_t n = 0;
    for (size_t i = st->first_item; i < t->n; i++)
        n += t->items[i].kind == CP_ACT_RANGE;
    if (n == 0)
        return 0;
    range_key *order = malloc(n * sizeof *order);
    uint64_t *heap = malloc(n * sizeof *heap);
    int rc = 0;
    if (!order || !heap) {
        rc = cp_failf(CP_ENOMEM, "%s: out of memory nesting its ranges", st->name);
        goto out;
    }
    n = 0;
    for (size_t i = st->first_item; i < t->n; i++) {
        cp_activity *a = &t->items[i];
        if (a->kind != CP_ACT_RANGE)
            continue;
        if (a->end < a->start) /* an end stamped before its start: empty */
            a->end = a->start;
        order[n++] = (range_key){.start = a->start, .end = a->end, .item = i};
    }
    qsort(order, n, sizeof *order, range_cmp);
    size_t nh = 0;
    for (size_t k = 0; k < n; k++) {
        while (nh > 0 && heap[0] <= order[k].start)
            heap_pop(heap, &nh);
        t->items[order[k].item].depth = (uint32_t)nh;
        heap_push(heap, &nh, order[k].end);
    }
out:
    free(order);
    free(heap);
    return rc;
}

/* After the last line: ranges still open close at last_ns, the process
 * gets its totals, and the ranges their depths. */
static int finish(proc_state *st)
{
    if (!st->have_header)
        return cp_failf(CP_EPARSE, "%s:1: no %s header (the file is empty or its first line is "
                        "cut)", st->name, CP_PROC_SCHEMA);
    for (size_t i = 0; i < st->nopen; i++)
        st->t->items[st->open[i].item].end = st->last_ns;
    if (st->profiling)
        st->t->items[st->profiler_item].end = st->last_ns;
    if (st->capturing)
        st->t->items[st->capture_item].end = st->last_ns;
    int rc = set_depths(st);
    if (rc < 0)
        return rc;
    /* Streaming: the ranges, now complete, go out too and leave the trace. */
    for (size_t i = st->first_item; st->emit && i < st->t->n; i++)
        if ((rc = st->emit(st->emit_ctx, &st->t->items[i])) < 0)
            return rc;
    if (st->emit)
        st->t->n = st->first_item;
    cp_process *p = &st->t->processes[st->process];
    p->ended = st->ended;
    snprintf(p->why, sizeof p->why, "%s", st->why);
    p->last_ns = st->last_ns;
    p->dropped = st->dropped;
    p->zero_timestamps = st->zero_timestamps;
    p->cost = st->cost;
    st->t->dropped_records += st->dropped;
    return 0;
}

/* ---- One file, as its bytes arrive ---- */

/*
 * The reading of one per-process file, in either form, from its bytes as
 * they are handed over (cp_proc_parser_push): a whole file read at once
 * and a file followed while its process writes it go through the same
 * code, so that they read alike however the bytes were cut.
 */
struct cp_proc_parser {
    char *name; /* the file, for messages */
    bool rec;
    cp_trace *t;
    cp_proc_emit emit;
    void *emit_ctx;
    /* What t held before: restored after an error. Stream names go back
     * by count too: a file's are of its own processes, new in t, so they
     * were appended, never put in place of another's. */
    size_t n0, np0, nsn0;
    uint64_t dropped0;
    int error; /* the first error; the parser reads nothing after it */
    /* JSON lines */
    proc_state st;
    line_reader lines;
    bool cut; /* the cut last line of a truncated file was met */
    /* rec */
    cp_rec_reader *rr;
    uint32_t base; /* the file's first process in t */
    uint64_t last; /* the latest end among its activities */
};

/* An error ends the reading: `t` goes back to what it held. */
static int parser_fail(cp_proc_parser *p, int rc)
{
    if (rc >= 0)
        return 0;
    p->t->n = p->n0;
    p->t->nprocesses = p->np0;
    p->t->nstream_names = p->nsn0;
    p->t->dropped_records = p->dropped0;
    p->error = rc;
    return rc;
}

/* Parses the lines that are whole. Returns 0 when the bytes so far are
 * taken (a line without its newline waits), 1 at the end of the input or
 * after the cut last line of a truncated file, or an error. */
static int take_lines(cp_proc_parser *p)
{
    proc_state *st = &p->st;
    for (;;) {
        int got = line_next(&p->lines);
        if (got == 3)
            return 0;
        st->line++;
        if (got == 0)
            return 1;
        if (got == 2)
            return cp_failf(CP_EPARSE, "%s:%zu: the line is longer than %zu bytes", p->name,
                            st->line, CP_PROC_MAX_LINE);
        if (got < 0)
            return cp_failf(CP_ENOMEM, "%s:%zu: out of memory", p->name, st->line);
        got = parse_line(st, &p->lines);
        if (got < 0)
            return got;
        if (got == 1) { /* the cut last line of a truncated file */
            p->cut = true;
            return 1;
        }
    }
}

/* A rec file's records that are whole: its processes, process ends and
 * counts into t, its activities to emit (or into t), ranges into t until
 * the file ends, as a JSON-lines file's. */
static int take_records(cp_proc_parser *p)
{
    cp_rec_item it;
    int rc;
    while ((rc = cp_rec_next(p->rr, &it)) > 0) {
        rc = 0;
        if (it.type != CP_REC_ACTIVITY) {
            rc = cp_rec_apply_meta(p->t, &it, p->base);
        } else {
            cp_activity a = it.activity;
            a.process += p->base;
            p->last = a.end > p->last ? a.end : p->last;
            /* Ranges stay until the file ends: their depths are the
             * reader's to set, as for a JSON-lines file, since markers and
             * the profiler's window reach the writer out of time order. */
            bool keep = !p->emit || a.kind == CP_ACT_RANGE;
            rc = keep ? cp_trace_add(p->t, &a) : p->emit(p->emit_ctx, &a);
            if (rc == CP_ENOMEM && keep)
                rc = cp_failf(CP_ENOMEM, "out of memory reading %s", p->name);
        }
        if (rc < 0)
            return rc;
    }
    return rc;
}

/* A rec file's end: its ranges with their depths, and a truncated
 * process's last time the latest its file holds. */
static int finish_records(cp_proc_parser *p)
{
    cp_trace *t = p->t;
    if (t->nprocesses == p->base)
        return cp_failf(CP_EPARSE, "%s: no process record: not a process's trace", p->name);
    proc_state st = {.name = p->name, .t = t, .first_item = p->n0};
    int rc = set_depths(&st);
    for (size_t i = p->n0; rc == 0 && p->emit && i < t->n; i++)
        rc = p->emit(p->emit_ctx, &t->items[i]);
    if (rc == 0 && p->emit)
        t->n = p->n0;
    for (size_t i = p->base; rc == 0 && i < t->nprocesses; i++)
        if (!t->processes[i].ended && t->processes[i].last_ns < p->last)
            t->processes[i].last_ns = p->last;
    return rc;
}

static bool has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && strcmp(name + n - k, suffix) == 0;
}

/* A parser of the form `rec` says (JSON lines otherwise). */
static int parser_new(cp_proc_parser **out, const char *name, bool rec, cp_trace *t,
                      cp_proc_emit emit, void *ctx)
{
    *out = NULL;
    cp_proc_parser *p = calloc(1, sizeof *p);
    if (!p || !(p->name = strdup(name))) {
        free(p);
        return cp_failf(CP_ENOMEM, "out of memory reading %s", name);
    }
    p->rec = rec;
    p->t = t;
    p->emit = emit;
    p->emit_ctx = ctx;
    p->n0 = t->n;
    p->np0 = t->nprocesses;
    p->nsn0 = t->nstream_names;
    p->dropped0 = t->dropped_records;
    p->base = (uint32_t)t->nprocesses;
    p->st = (proc_state){.name = p->name, .t = t, .emit = emit, .emit_ctx = ctx};
    int rc = rec ? cp_rec_reader_pushed(&p->rr, name) : 0;
    if (rc < 0) {
        cp_proc_parser_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int cp_proc_parser_new(cp_proc_parser **out, const char *path, cp_trace *t, cp_proc_emit emit,
                       void *ctx)
{
    return parser_new(out, path, has_suffix(path, ".proc.cprec"), t, emit, ctx);
}

int cp_proc_parser_push(cp_proc_parser *p, const void *data, size_t n)
{
    if (p->error)
        return p->error;
    int rc = 0;
    if (p->rec) {
        rc = cp_rec_reader_push(p->rr, data, n);
        if (rc == 0)
            rc = take_records(p);
    } else if (!p->cut) {
        p->lines.chunk = data;
        p->lines.pos = 0;
        p->lines.end = n;
        p->lines.more = true;
        rc = take_lines(p);
        p->lines.chunk = NULL;
        p->lines.pos = p->lines.end = 0;
    }
    return parser_fail(p, rc < 0 ? rc : 0);
}

int cp_proc_parser_end(cp_proc_parser *p)
{
    if (p->error)
        return p->error;
    int rc = 0;
    if (p->rec) {
        cp_rec_reader_push_end(p->rr);
        rc = take_records(p);
        if (rc == 0)
            rc = finish_records(p);
    } else {
        p->lines.more = false;
        rc = p->cut ? 0 : take_lines(p);
        if (rc >= 0)
            rc = finish(&p->st);
    }
    return parser_fail(p, rc);
}

void cp_proc_parser_free(cp_proc_parser *p)
{
    if (!p)
        return;
    free(p->st.open);
    free(p->lines.line);
    cp_rec_reader_close(p->rr);
    free(p->name);
    free(p);
}

int cp_proc_parse(const char *name, const char *data, size_t size, cp_trace *t)
{
    cp_proc_parser *p;
    int rc = parser_new(&p, name, false, t, NULL, NULL);
    if (rc == 0)
        rc = cp_proc_parser_push(p, data, size);
    if (rc == 0)
        rc = cp_proc_parser_end(p);
    cp_proc_parser_free(p);
    return rc;
}

/* A whole file, pushed block by block: a process's file in either form
 * (HOST.PID.proc.cprec is the rec form, which the injection library writes
 * under CUPROOF_EXEC_FORMAT=rec): its process becomes one more of t's,
 * its activities carry that index; a file cut short is a truncated
 * process. */
static int read_file(const char *path, cp_trace *t, cp_proc_emit emit, void *ctx)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cp_failf(CP_EIO, "cannot read %s: %s", path, strerror(errno));
    cp_proc_parser *p = NULL;
    char *block = malloc(BLOCK_SIZE);
    int rc = block ? cp_proc_parser_new(&p, path, t, emit, ctx)
                   : cp_failf(CP_ENOMEM, "out of memory reading %s", path);
    while (rc == 0) {
        size_t got = fread(block, 1, BLOCK_SIZE, f);
        if (got == 0) {
            if (ferror(f))
                rc = parser_fail(p, cp_failf(CP_EIO, "cannot read %s: %s", path, strerror(errno)));
            break;
        }
        rc = cp_proc_parser_push(p, block, got);
    }
    if (rc == 0)
        rc = cp_proc_parser_end(p);
    cp_proc_parser_free(p);
    free(block);
    fclose(f);
    return rc;
}

int cp_proc_read(const char *path, cp_trace *t)
{
    return read_file(path, t, NULL, NULL);
}

int cp_proc_stream(const char *path, cp_trace *t, cp_proc_emit emit, void *ctx)
{
    return read_file(path, t, emit, ctx);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void cp_proc_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int cp_proc_list_dir(const char *dir, char ***out, size_t *nout)
{
    int rc = 0;
    char **names = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    *nout = 0;
    DIR *d = opendir(dir);
    if (!d)
        return cp_failf(CP_EIO, "cannot list %s: %s", dir, strerror(errno));
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno)
                rc = cp_failf(CP_EIO, "cannot list %s: %s", dir, strerror(errno));
            break;
        }
        if (!cp_proc_is_trace_file(e->d_name))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) {
                rc = cp_failf(CP_ENOMEM, "out of memory listing %s", dir);
                break;
            }
            names = p;
        }
        if (!(names[n] = strdup(e->d_name))) {
            rc = cp_failf(CP_ENOMEM, "out of memory listing %s", dir);
            break;
        }
        n++;
    }
    closedir(d);
    if (rc < 0) {
        cp_proc_names_free(names, n);
        return rc;
    }
    if (n) /* qsort takes no NULL array, even an empty one */
        qsort(names, n, sizeof *names, name_cmp);
    *out = names;
    *nout = n;
    return 0;
}

static int read_dir(const char *dir, cp_trace *t, size_t *nfiles, cp_proc_emit emit, void *ctx)
{
    size_t n0 = t->n, np0 = t->nprocesses, nsn0 = t->nstream_names;
    uint64_t dropped0 = t->dropped_records;
    char **names = NULL, *path = NULL;
    size_t n = 0;
    *nfiles = 0;
    int rc = cp_proc_list_dir(dir, &names, &n);
    size_t dlen = strlen(dir);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        free(path);
        path = malloc(dlen + strlen(names[i]) + 2);
        if (!path) {
            rc = cp_failf(CP_ENOMEM, "out of memory listing %s", dir);
            break;
        }
        snprintf(path, dlen + strlen(names[i]) + 2, "%s/%s", dir, names[i]);
        rc = read_file(path, t, emit, ctx);
    }
    if (rc == 0)
        *nfiles = n;
    if (rc < 0) {
        t->n = n0;
        t->nprocesses = np0;
        t->nstream_names = nsn0;
        t->dropped_records = dropped0;
    }
    cp_proc_names_free(names, n);
    free(path);
    return rc;
}

int cp_proc_read_dir(const char *dir, cp_trace *t, size_t *nfiles)
{
    return read_dir(dir, t, nfiles, NULL, NULL);
}

int cp_proc_stream_dir(const char *dir, cp_trace *t, size_t *nfiles, cp_proc_emit emit,
                       void *ctx)
{
    return read_dir(dir, t, nfiles, emit, ctx);
}
