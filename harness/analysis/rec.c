/* The streaming trace format cuproof.rec/1: see cuproof/internal/rec.h. */
#include <cuproof/internal/rec.h>
#include <cuproof/internal/proc.h>

#include <cuproof/error.h>
#include <cuproof/internal/grow.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The largest record either side accepts: a kernel name of a deeply
 * templated library runs to a few kilobytes, never to a megabyte. */
#define MAX_RECORD (1u << 20)
/* An activity's payload at most: 2 bytes and 22 varints of 10 bytes. */
#define MAX_ACTIVITY 256

enum { FLAG_ASYNC = 1, FLAG_SHAPE = 2, FLAG_GRAPH = 4, FLAG_COPY = 8, FLAG_THREAD = 16, FLAG_NCCL = 32 };

/* ---- Encoding ---- */

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* ---- Writer ---- */

typedef struct name_slot {
    char *s;
    uint32_t id;
    uint64_t hash;
} name_slot;

struct cp_rec_writer {
    FILE *f;
    char *path;
    int error; /* the first failure, kept until close */
    uint64_t activities, prev_start;
    uint32_t nprocesses;
    name_slot *names; /* open addressing, a power of two in size */
    size_t names_cap, nnames;
    uint8_t *scratch; /* strings and processes, which may be long */
    size_t scratch_cap;
};

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static int writer_fail(cp_rec_writer *w, int code, const char *what)
{
    if (!w->error)
        w->error = cp_failf(code, "%s %s: %s", what, w->path,
                            code == CP_EIO ? strerror(errno) : "out of memory");
    return w->error;
}

static int emit(cp_rec_writer *w, cp_rec_type type, const uint8_t *payload, size_t n)
{
    if (w->error)
        return w->error;
    uint8_t head[11];
    head[0] = (uint8_t)type;
    size_t h = 1 + put_varint(head + 1, n);
    if (fwrite(head, 1, h, w->f) != h || fwrite(payload, 1, n, w->f) != n)
        return writer_fail(w, CP_EIO, "cannot write");
    return 0;
}

static uint8_t *scratch(cp_rec_writer *w, size_t n)
{
    if (n > w->scratch_cap) {
        uint8_t *p = realloc(w->scratch, n);
        if (!p)
            return NULL;
        w->scratch = p;
        w->scratch_cap = n;
    }
    return w->scratch;
}

/* The id of `s`, writing its string record the first time. 0 for NULL. */
static int name_id(cp_rec_writer *w, const char *s, uint32_t *id)
{
    *id = 0;
    if (!s)
        return 0;
    if (2 * (w->nnames + 1) > w->names_cap) {
        size_t cap = w->names_cap ? 2 * w->names_cap : 64;
        name_slot *t = calloc(cap, sizeof *t);
        if (!t)
            return writer_fail(w, CP_ENOMEM, "writing");
        for (size_t i = 0; i < w->names_cap; i++) {
            if (!w->names[i].s)
                continue;
            size_t j = w->names[i].hash & (cap - 1);
            while (t[j].s)
                j = (j + 1) & (cap - 1);
            t[j] = w->names[i];
        }
        free(w->names);
        w->names = t;
        w->names_cap = cap;
    }
    uint64_t hash = fnv1a(s);
    size_t j = hash & (w->names_cap - 1);
    for (; w->names[j].s; j = (j + 1) & (w->names_cap - 1))
        if (w->names[j].hash == hash && strcmp(w->names[j].s, s) == 0) {
            *id = w->names[j].id;
            return 0;
        }
    size_t len = strlen(s);
    if (len + 20 > MAX_RECORD)
        len = MAX_RECORD - 20; /* a name that long is cut, not refused */
    uint8_t *p = scratch(w, len + 10);
    char *copy = strdup(s);
    if (!p || !copy) {
        free(copy);
        return writer_fail(w, CP_ENOMEM, "writing");
    }
    uint32_t next = (uint32_t)w->nnames + 1;
    size_t n = put_varint(p, next);
    memcpy(p + n, s, len);
    int rc = emit(w, CP_REC_STRING, p, n + len);
    if (rc < 0) {
        free(copy);
        return rc;
    }
    w->names[j] = (name_slot){copy, next, hash};
    w->nnames++;
    *id = next;
    return 0;
}

int cp_rec_writer_open(cp_rec_writer **out, const char *path)
{
    *out = NULL;
    cp_rec_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return cp_failf(CP_ENOMEM, "out of memory opening %s", path);
    }
    w->f = fopen(path, "wb");
    if (!w->f) {
        int rc = cp_failf(CP_EIO, "cannot write %s: %s", path, strerror(errno));
        free(w->path);
        free(w);
        return rc;
    }
    /* A large buffer: one write call per megabyte, not per record. */
    setvbuf(w->f, NULL, _IOFBF, 1 << 20);
    if (fwrite(CP_REC_MAGIC, 1, CP_REC_MAGIC_LEN, w->f) != CP_REC_MAGIC_LEN)
        writer_fail(w, CP_EIO, "cannot write");
    *out = w;
    return w->error;
}

static size_t put_string(uint8_t *p, const char *s)
{
    size_t len = strlen(s), n = put_varint(p, len);
    memcpy(p + n, s, len);
    return n + len;
}

int cp_rec_put_process(cp_rec_writer *w, const cp_process *p)
{
    uint8_t *b = scratch(w, 6 * 10 + 5 * 10 + sizeof p->host + sizeof p->command +
                                sizeof p->rank_var + sizeof p->rank_why + sizeof p->run);
    if (!b)
        return writer_fail(w, CP_ENOMEM, "writing");
    char host[sizeof p->host + 1], command[sizeof p->command + 1];
    char rank_var[sizeof p->rank_var + 1], rank_why[sizeof p->rank_why + 1], run[sizeof p->run + 1];
    /* The fixed arrays may be full: bound them before measuring. */
    snprintf(host, sizeof host, "%.*s", (int)sizeof p->host, p->host);
    snprintf(command, sizeof command, "%.*s", (int)sizeof p->command, p->command);
    snprintf(rank_var, sizeof rank_var, "%.*s", (int)sizeof p->rank_var, p->rank_var);
    snprintf(rank_why, sizeof rank_why, "%.*s", (int)sizeof p->rank_why, p->rank_why);
    snprintf(run, sizeof run, "%.*s", (int)sizeof p->run, p->run);
    size_t n = put_varint(b, w->nprocesses);
    n += put_varint(b + n, p->pid);
    n += put_varint(b + n, p->ppid);
    n += put_string(b + n, host);
    n += put_string(b + n, command);
    /* Minor 2: the rank, local rank and world size (zigzag: -1 is
     * unknown), which variable gave the rank, why one was not taken, and
     * the exec run. A process zero-initialised has no rank_var, so its
     * rank is written as unknown, as cp_process_rank reads it. */
    bool ranked = rank_var[0] != '\0';
    n += put_varint(b + n, zigzag(ranked ? p->rank : -1));
    n += put_varint(b + n, zigzag(ranked ? p->local_rank : -1));
    n += put_varint(b + n, zigzag(ranked ? p->world_size : -1));
    n += put_string(b + n, rank_var);
    n += put_string(b + n, rank_why);
    n += put_string(b + n, run);
    int rc = emit(w, CP_REC_PROCESS, b, n);
    if (rc == 0)
        w->nprocesses++;
    return rc;
}

int cp_rec_put_process_end(cp_rec_writer *w, uint32_t index, const cp_process *p)
{
    uint8_t *b = scratch(w, 6 * 10 + sizeof p->why + 10);
    if (!b)
        return writer_fail(w, CP_ENOMEM, "writing");
    char why[sizeof p->why + 1];
    snprintf(why, sizeof why, "%.*s", (int)sizeof p->why, p->why);
    size_t n = put_varint(b, index);
    n += put_varint(b + n, p->ended);
    n += put_varint(b + n, p->last_ns);
    n += put_varint(b + n, p->dropped);
    n += put_varint(b + n, p->zero_timestamps);
    n += put_string(b + n, why);
    int rc = emit(w, CP_REC_PROCESS_END, b, n);
    if (rc == 0 && p->cost.recorded)
        rc = cp_rec_put_process_cost(w, index, p);
    return rc;
}

int cp_rec_put_process_cost(cp_rec_writer *w, uint32_t index, const cp_process *p)
{
    const cp_tracing_cost *c = &p->cost;
    uint8_t *b = scratch(w, (8 + CP_OVERHEAD_KIND_COUNT) * 10);
    if (!b)
        return writer_fail(w, CP_ENOMEM, "writing");
    size_t n = put_varint(b, index);
    n += put_varint(b + n, c->api_all ? 1 : 0);
    n += put_varint(b + n, c->records);
    n += put_varint(b + n, c->api_records);
    n += put_varint(b + n, c->api_filtered);
    n += put_varint(b + n, c->buffers);
    n += put_varint(b + n, c->overhead_records);
    n += put_varint(b + n, CP_OVERHEAD_KIND_COUNT);
    for (int k = 0; k < CP_OVERHEAD_KIND_COUNT; k++)
        n += put_varint(b + n, c->overhead_ns[k]);
    return emit(w, CP_REC_PROCESS_COST, b, n);
}

int cp_rec_put_stream_name(cp_rec_writer *w, const cp_stream_name *n)
{
    if (!n->name || !n->name[0])
        return 0;
    /* The reader refuses a name of a process it has not met (as an
     * activity's): refused here, without spoiling the file. */
    if (n->process > 0 && n->process >= w->nprocesses)
        return cp_failf(CP_EINVAL, "writing %s: a stream name of process %u, of %u written",
                        w->path, n->process, w->nprocesses);
    uint32_t name;
    int rc = name_id(w, n->name, &name);
    if (rc < 0)
        return rc;
    uint8_t b[5 * 10];
    size_t len = put_varint(b, n->process);
    len += put_varint(b + len, n->device);
    len += put_varint(b + len, n->context);
    len += put_varint(b + len, n->stream);
    len += put_varint(b + len, name);
    return emit(w, CP_REC_STREAM_NAME, b, len);
}

int cp_rec_put(cp_rec_writer *w, const cp_activity *a)
{
    uint32_t name;
    int rc = name_id(w, a->name, &name);
    if (rc < 0)
        return rc;
    uint8_t b[MAX_ACTIVITY];
    bool shape = a->kind == CP_ACT_KERNEL && (a->block[0] || a->grid[0]);
    bool graph = a->graph_id || a->graph_node;
    bool copy = a->bytes || a->copy_dir || a->src || a->dst;
    size_t n = 0;
    b[n++] = (uint8_t)a->kind;
    b[n++] = (uint8_t)((a->async ? FLAG_ASYNC : 0) | (shape ? FLAG_SHAPE : 0) |
                       (graph ? FLAG_GRAPH : 0) | (copy ? FLAG_COPY : 0) |
                       (a->thread ? FLAG_THREAD : 0) | (a->comm ? FLAG_NCCL : 0));
    n += put_varint(b + n, zigzag((int64_t)(a->start - w->prev_start)));
    n += put_varint(b + n, zigzag((int64_t)(a->end - a->start)));
    n += put_varint(b + n, a->device);
    n += put_varint(b + n, a->context);
    n += put_varint(b + n, a->stream);
    n += put_varint(b + n, a->process);
    n += put_varint(b + n, a->correlation);
    n += put_varint(b + n, name);
    if (shape)
        for (int i = 0; i < 3; i++) {
            n += put_varint(b + n, a->grid[i]);
            n += put_varint(b + n, a->block[i]);
        }
    if (graph) {
        n += put_varint(b + n, a->graph_id);
        n += put_varint(b + n, a->graph_node);
    }
    if (copy) {
        n += put_varint(b + n, a->bytes);
        n += put_varint(b + n, (uint64_t)a->copy_dir);
        n += put_varint(b + n, (uint64_t)a->src);
        n += put_varint(b + n, (uint64_t)a->dst);
    }
    if (a->kind == CP_ACT_RANGE)
        n += put_varint(b + n, a->depth);
    if (a->thread)
        n += put_varint(b + n, a->thread);
    if (a->comm) {
        n += put_varint(b + n, a->comm);
        n += put_varint(b + n, zigzag(a->peer));
    }
    rc = emit(w, CP_REC_ACTIVITY, b, n);
    if (rc == 0) {
        w->activities++;
        w->prev_start = a->start;
    }
    return rc;
}

int cp_rec_flush(cp_rec_writer *w)
{
    if (!w->error && fflush(w->f) != 0)
        writer_fail(w, CP_EIO, "cannot write");
    return w->error;
}

static void writer_free(cp_rec_writer *w)
{
    for (size_t i = 0; i < w->names_cap; i++)
        free(w->names[i].s);
    free(w->names);
    free(w->scratch);
    free(w->path);
    free(w);
}

void cp_rec_writer_abandon(cp_rec_writer *w)
{
    if (!w)
        return;
    if (w->f)
        fclose(w->f);
    writer_free(w);
}

int cp_rec_writer_close(cp_rec_writer *w, const cp_rec_end *end)
{
    if (!w)
        return 0;
    cp_rec_end e = end ? *end : (cp_rec_end){0};
    uint8_t b[8 * 10];
    size_t n = put_varint(b, w->activities);
    n += put_varint(b + n, e.dropped_records);
    n += put_varint(b + n, e.renamed_kernels);
    b[n++] = e.has_legacy_stream;
    n += put_varint(b + n, e.legacy_device);
    n += put_varint(b + n, e.legacy_context);
    n += put_varint(b + n, e.legacy_stream);
    emit(w, CP_REC_END, b, n);
    if (fclose(w->f) != 0)
        writer_fail(w, CP_EIO, "cannot write");
    w->f = NULL;
    int rc = w->error;
    writer_free(w);
    return rc;
}

int cp_rec_write_trace(const char *path, const cp_trace *t)
{
    cp_rec_writer *w;
    int rc = cp_rec_writer_open(&w, path);
    for (size_t i = 0; rc == 0 && i < t->nprocesses; i++)
        rc = cp_rec_put_process(w, &t->processes[i]);
    for (size_t i = 0; rc == 0 && i < t->nprocesses; i++)
        rc = cp_rec_put_process_end(w, (uint32_t)i, &t->processes[i]);
    for (size_t i = 0; rc == 0 && i < t->nstream_names; i++)
        rc = cp_rec_put_stream_name(w, &t->stream_names[i]);
    for (size_t i = 0; rc == 0 && i < t->n; i++)
        rc = cp_rec_put(w, &t->items[i]);
    cp_rec_end end = {.dropped_records = t->dropped_records,
                      .renamed_kernels = t->renamed_kernels,
                      .has_legacy_stream = t->has_legacy_stream,
                      .legacy_device = t->legacy_device,
                      .legacy_context = t->legacy_context,
                      .legacy_stream = t->legacy_stream};
    int closed = cp_rec_writer_close(w, &end);
    return rc < 0 ? rc : closed;
}

/* ---- Reader ---- */

struct cp_rec_reader {
    FILE *f; /* NULL: the bytes are pushed (cp_rec_reader_push) */
    char *path;
    uint8_t *buf;
    size_t pos, len, cap;
    uint64_t base; /* the file offset of buf[0] */
    bool eof;      /* no byte will come after buf's (pushed: cp_rec_reader_push_end) */
    bool header;   /* the header was checked */
    char **strings; /* strings[id - 1] */
    size_t nstrings, strings_cap;
    uint32_t nprocesses;
    uint64_t activities, prev_start;
    bool ended;
    cp_rec_end end;
    bool partial; /* the file ended inside a record */
    uint64_t partial_at;
};

/* HOST.PID.proc.jsonl or HOST.PID.proc.cprec: in the analysis layer, so
 * that the launcher (runner) and the readers (reports) share it. */
bool cp_proc_is_trace_file(const char *name)
{
    static const char *const suffixes[] = {".proc.jsonl", ".proc.cprec"};
    size_t n = strlen(name);
    for (size_t i = 0; i < 2; i++) {
        size_t k = strlen(suffixes[i]);
        if (n > k && strcmp(name + n - k, suffixes[i]) == 0)
            return true;
    }
    return false;
}

bool cp_rec_is_rec_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    char magic[CP_REC_MAGIC_LEN];
    bool is = fread(magic, 1, sizeof magic, f) == sizeof magic &&
              memcmp(magic, CP_REC_MAGIC, 6) == 0;
    fclose(f);
    return is;
}

static int reader_bad(const cp_rec_reader *r, uint64_t at, const char *what)
{
    return cp_failf(CP_EPARSE, "%s: byte %llu: %s", r->path, (unsigned long long)at, what);
}

/* Makes at least `want` bytes available from pos (fewer at the end of the
 * file). Returns 0 or CP_EIO / CP_ENOMEM. */
static int fill(cp_rec_reader *r, size_t want)
{
    if (r->len - r->pos >= want || r->eof || !r->f)
        return 0;
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->base += r->pos;
    r->len -= r->pos;
    r->pos = 0;
    if (want > r->cap) {
        uint8_t *p = realloc(r->buf, want);
        if (!p)
            return cp_failf(CP_ENOMEM, "out of memory reading %s", r->path);
        r->buf = p;
        r->cap = want;
    }
    while (r->len < want && !r->eof) {
        size_t got = fread(r->buf + r->len, 1, r->cap - r->len, r->f);
        r->len += got;
        if (got == 0) {
            if (ferror(r->f))
                return cp_failf(CP_EIO, "cannot read %s: %s", r->path, strerror(errno));
            r->eof = true;
        }
    }
    return 0;
}

int cp_rec_reader_open(cp_rec_reader **out, const char *path)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return cp_failf(CP_EIO, "cannot read %s: %s", path, strerror(errno));
    return cp_rec_reader_fopen(out, f, path);
}

/* A reader of no stream yet: `f` may be NULL (pushed bytes). */
static int reader_new(cp_rec_reader **out, FILE *f, const char *name)
{
    *out = NULL;
    cp_rec_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(name)) || !(r->buf = malloc(1 << 20))) {
        if (r)
            free(r->path);
        free(r);
        if (f)
            fclose(f);
        return cp_failf(CP_ENOMEM, "out of memory opening %s", name);
    }
    r->cap = 1 << 20;
    r->f = f;
    *out = r;
    return 0;
}

/* The 8-byte header, once it is whole (or the input ended before it). */
static int check_header(cp_rec_reader *r)
{
    if (r->len - r->pos < CP_REC_MAGIC_LEN || memcmp(r->buf + r->pos, CP_REC_MAGIC, 6) != 0)
        return cp_failf(CP_EPARSE, "%s: not a cuproof.rec file (no CUPREC header)", r->path);
    if (r->buf[r->pos + 6] != 1)
        return cp_failf(CP_EPARSE, "%s: cuproof.rec major version %u; this reader reads 1", r->path,
                        r->buf[r->pos + 6]);
    r->pos += CP_REC_MAGIC_LEN;
    r->header = true;
    return 0;
}

int cp_rec_reader_fopen(cp_rec_reader **out, FILE *f, const char *name)
{
    cp_rec_reader *r;
    int rc = reader_new(&r, f, name);
    if (rc == 0)
        rc = fill(r, CP_REC_MAGIC_LEN);
    if (rc == 0)
        rc = check_header(r);
    if (rc < 0) {
        cp_rec_reader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

int cp_rec_reader_pushed(cp_rec_reader **out, const char *name)
{
    return reader_new(out, NULL, name);
}

int cp_rec_reader_push(cp_rec_reader *r, const void *data, size_t n)
{
    /* What was taken goes first, so that the buffer holds what waits. */
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->base += r->pos;
    r->len -= r->pos;
    r->pos = 0;
    if (r->len + n > r->cap) {
        size_t cap = r->cap;
        while (cap < r->len + n)
            cap *= 2;
        uint8_t *p = realloc(r->buf, cap);
        if (!p)
            return cp_failf(CP_ENOMEM, "out of memory reading %s", r->path);
        r->buf = p;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, data, n);
    r->len += n;
    return 0;
}

void cp_rec_reader_push_end(cp_rec_reader *r)
{
    r->eof = true;
}

void cp_rec_reader_close(cp_rec_reader *r)
{
    if (!r)
        return;
    if (r->f)
        fclose(r->f);
    for (size_t i = 0; i < r->nstrings; i++)
        free(r->strings[i]);
    free(r->strings);
    free(r->buf);
    free(r->path);
    free(r);
}

/* A cursor over one record's payload. */
typedef struct cursor {
    const uint8_t *p, *end;
    bool bad;
} cursor;

static uint64_t get_varint(cursor *c)
{
    /* Most fields (ids, small deltas) take one byte. */
    if (c->p < c->end && *c->p < 0x80)
        return *c->p++;
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (c->p == c->end) {
            c->bad = true;
            return 0;
        }
        uint8_t byte = *c->p++;
        if (shift == 63 && byte > 1) {
            c->bad = true;
            return 0;
        }
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
    c->bad = true;
    return 0;
}

static uint32_t get_u32(cursor *c)
{
    uint64_t v = get_varint(c);
    if (v > UINT32_MAX)
        c->bad = true;
    return (uint32_t)v;
}

static uint8_t get_byte(cursor *c)
{
    if (c->p == c->end) {
        c->bad = true;
        return 0;
    }
    return *c->p++;
}

/* A length-prefixed string copied into dst (cut to fit). */
/* A zigzag value that must fit an int32_t (the rank fields, -1 unknown). */
static int32_t get_i32(cursor *c)
{
    int64_t v = unzigzag(get_varint(c));
    if (v < INT32_MIN || v > INT32_MAX) {
        c->bad = true;
        return -1;
    }
    return (int32_t)v;
}

static void get_string(cursor *c, char *dst, size_t size)
{
    uint64_t len = get_varint(c);
    if (c->bad || len > (uint64_t)(c->end - c->p)) {
        c->bad = true;
        dst[0] = '\0';
        return;
    }
    snprintf(dst, size, "%.*s", (int)(len < size ? len : size - 1), (const char *)c->p);
    c->p += len;
}

static int read_string(cp_rec_reader *r, cursor *c, uint64_t at)
{
    uint64_t id = get_varint(c);
    if (c->bad || id != r->nstrings + 1)
        return reader_bad(r, at, "string record out of sequence");
    char **p = cp_grow(r->strings, &r->strings_cap, r->nstrings, sizeof *p, 64);
    if (!p)
        return cp_failf(CP_ENOMEM, "out of memory reading %s", r->path);
    r->strings = p;
    size_t len = (size_t)(c->end - c->p);
    char *s = malloc(len + 1);
    if (!s)
        return cp_failf(CP_ENOMEM, "out of memory reading %s", r->path);
    memcpy(s, c->p, len);
    s[len] = '\0';
    r->strings[r->nstrings++] = s;
    return 0;
}

static int read_activity(cp_rec_reader *r, cursor *c, uint64_t at, cp_activity *a)
{
    memset(a, 0, sizeof *a);
    uint8_t kind = get_byte(c), flags = get_byte(c);
    if (kind >= CP_ACT_KIND_COUNT)
        return reader_bad(r, at, "activity of an unknown kind");
    a->kind = (cp_act_kind)kind;
    a->async = flags & FLAG_ASYNC;
    int64_t delta = unzigzag(get_varint(c)), length = unzigzag(get_varint(c));
    if ((delta < 0 && (uint64_t)-delta > r->prev_start) ||
        (delta > 0 && (uint64_t)delta > UINT64_MAX - r->prev_start))
        return reader_bad(r, at, "activity start out of range");
    a->start = r->prev_start + (uint64_t)delta;
    if ((length < 0 && (uint64_t)-length > a->start) ||
        (length > 0 && (uint64_t)length > UINT64_MAX - a->start))
        return reader_bad(r, at, "activity end out of range");
    a->end = a->start + (uint64_t)length;
    a->device = get_u32(c);
    a->context = get_u32(c);
    a->stream = get_u32(c);
    a->process = get_u32(c);
    a->correlation = get_u32(c);
    uint64_t name = get_varint(c);
    if (flags & FLAG_SHAPE)
        for (int i = 0; i < 3; i++) {
            a->grid[i] = get_u32(c);
            a->block[i] = get_u32(c);
        }
    if (flags & FLAG_GRAPH) {
        a->graph_id = get_u32(c);
        a->graph_node = get_varint(c);
    }
    if (flags & FLAG_COPY) {
        a->bytes = get_varint(c);
        uint64_t dir = get_varint(c), src = get_varint(c), dst = get_varint(c);
        if (dir >= CP_COPY_DIR_COUNT || src >= CP_MEM_KIND_COUNT || dst >= CP_MEM_KIND_COUNT)
            return reader_bad(r, at, "copy of an unknown direction or memory kind");
        a->copy_dir = (cp_copy_dir)dir;
        a->src = (cp_mem_kind)src;
        a->dst = (cp_mem_kind)dst;
    }
    if (a->kind == CP_ACT_RANGE)
        a->depth = get_u32(c);
    if (flags & FLAG_THREAD)
        a->thread = get_u32(c);
    if (flags & FLAG_NCCL) {
        a->comm = get_varint(c);
        int64_t peer = unzigzag(get_varint(c));
        if (peer < INT32_MIN || peer > INT32_MAX)
            return reader_bad(r, at, "NCCL peer out of range");
        a->peer = (int32_t)peer;
    }
    if (flags & ~(FLAG_ASYNC | FLAG_SHAPE | FLAG_GRAPH | FLAG_COPY | FLAG_THREAD | FLAG_NCCL))
        return reader_bad(r, at, "activity with a flag this reader does not know");
    if (c->bad || c->p != c->end)
        return reader_bad(r, at, "activity record does not decode");
    if (name > r->nstrings)
        return reader_bad(r, at, "activity names a string not yet defined");
    a->name = name ? r->strings[name - 1] : NULL;
    if (a->process > 0 && a->process >= r->nprocesses)
        return reader_bad(r, at, "activity of a process not yet defined");
    r->prev_start = a->start;
    r->activities++;
    return 0;
}

/* The next whole record framed: its type, its payload in *c and the file
 * offset of its first byte in *at, with pos moved past it. Returns 1 for
 * a record, 0 when none is whole yet (pushed bytes wait for the next
 * push) or the input ends, a record cut short there being the file's
 * truncation (partial), or CP_EPARSE / CP_EIO / CP_ENOMEM. */
static int next_record(cp_rec_reader *r, uint8_t *type, cursor *c, uint64_t *at)
{
    int rc = fill(r, 11);
    if (rc < 0)
        return rc;
    if (r->pos == r->len)
        return 0;
    *at = r->base + r->pos;
    if (r->ended)
        return reader_bad(r, *at, "records after the end record");
    *c = (cursor){r->buf + r->pos + 1, r->buf + r->len, false};
    *type = r->buf[r->pos];
    uint64_t len = get_varint(c);
    if (c->bad && !r->eof && r->len - r->pos < 11)
        return 0;
    /* A process killed while writing leaves its last record cut short:
     * the file is truncated there, which is no error by itself. */
    if (c->bad && r->eof && r->len - r->pos < 11) {
        r->partial = true;
        r->partial_at = *at;
        r->pos = r->len;
        return 0;
    }
    if (c->bad)
        return reader_bad(r, *at, "record length does not decode");
    if (len > MAX_RECORD)
        return reader_bad(r, *at, "record longer than 1 MiB");
    size_t head = (size_t)(c->p - (r->buf + r->pos));
    if ((rc = fill(r, head + (size_t)len)) < 0)
        return rc;
    if (r->len - r->pos < head + len && !r->eof)
        return 0;
    if (r->len - r->pos < head + len) {
        r->partial = true;
        r->partial_at = *at;
        r->pos = r->len;
        return 0;
    }
    *c = (cursor){r->buf + r->pos + head, r->buf + r->pos + head + len, false};
    r->pos += head + (size_t)len;
    return 1;
}

/* A process record into it->process, numbered in the order read. Minor 2
 * adds the rank fields; a file of minor 1 has none, and its process reads
 * as of no rank. Returns 1 or CP_EPARSE. */
static int read_process(cp_rec_reader *r, cursor *c, uint64_t at, cp_rec_item *it)
{
    memset(&it->process, 0, sizeof it->process);
    uint64_t index = get_varint(c);
    it->process.pid = get_u32(c);
    it->process.ppid = get_u32(c);
    get_string(c, it->process.host, sizeof it->process.host);
    get_string(c, it->process.command, sizeof it->process.command);
    it->process.rank = it->process.local_rank = it->process.world_size = -1;
    if (!c->bad && c->p < c->end) {
        it->process.rank = get_i32(c);
        it->process.local_rank = get_i32(c);
        it->process.world_size = get_i32(c);
        get_string(c, it->process.rank_var, sizeof it->process.rank_var);
        get_string(c, it->process.rank_why, sizeof it->process.rank_why);
        get_string(c, it->process.run, sizeof it->process.run);
    }
    if (c->bad || c->p != c->end || index != r->nprocesses)
        return reader_bad(r, at, "process record does not decode or is out of sequence");
    it->process_index = r->nprocesses++;
    return 1;
}

/* How a process already read ended. Returns 1 or CP_EPARSE. */
static int read_process_end(cp_rec_reader *r, cursor *c, uint64_t at, cp_rec_item *it)
{
    memset(&it->process, 0, sizeof it->process);
    it->process_index = get_u32(c);
    it->process.ended = get_varint(c) != 0;
    it->process.last_ns = get_varint(c);
    it->process.dropped = get_varint(c);
    it->process.zero_timestamps = get_varint(c);
    get_string(c, it->process.why, sizeof it->process.why);
    if (c->bad || c->p != c->end || it->process_index >= r->nprocesses)
        return reader_bad(r, at, "process end record does not decode or names no process");
    return 1;
}

/* What tracing cost a process already read (minor 3). Overhead kinds
 * this reader does not know are summed as other, so that a later
 * writer's file still reads. Returns 1 or CP_EPARSE. */
static int read_process_cost(cp_rec_reader *r, cursor *c, uint64_t at, cp_rec_item *it)
{
    memset(&it->process, 0, sizeof it->process);
    cp_tracing_cost *cost = &it->process.cost;
    it->process_index = get_u32(c);
    uint64_t flags = get_varint(c);
    cost->recorded = true;
    cost->api_all = flags & 1;
    cost->records = get_varint(c);
    cost->api_records = get_varint(c);
    cost->api_filtered = get_varint(c);
    cost->buffers = get_varint(c);
    cost->overhead_records = get_varint(c);
    uint64_t kinds = get_varint(c);
    for (uint64_t k = 0; k < kinds && !c->bad; k++)
        cost->overhead_ns[k < CP_OVERHEAD_KIND_COUNT ? k : CP_OVERHEAD_OTHER] += get_varint(c);
    if (c->bad || c->p != c->end || it->process_index >= r->nprocesses)
        return reader_bad(r, at, "process cost record does not decode or names no process");
    return 1;
}

/* Minor 4: a stream the program named, in the file's numbering (its
 * process an index into the file's), its name a string already read.
 * Returns 1 or CP_EPARSE. */
static int read_stream_name(cp_rec_reader *r, cursor *c, uint64_t at, cp_rec_item *it)
{
    cp_stream_name *n = &it->stream_name;
    n->process = get_u32(c);
    n->device = get_u32(c);
    n->context = get_u32(c);
    n->stream = get_u32(c);
    uint64_t name = get_varint(c);
    if (c->bad || c->p != c->end || (n->process > 0 && n->process >= r->nprocesses))
        return reader_bad(r, at, "stream name record does not decode or names no process");
    if (name == 0 || name > r->nstrings)
        return reader_bad(r, at, "stream name record names a string not yet defined");
    n->name = r->strings[name - 1];
    it->process_index = n->process;
    return 1;
}

/* The end record, kept so that cp_rec_truncated can compare its count of
 * activities with those read; no record may follow it. Returns 1 or
 * CP_EPARSE. */
static int read_end(cp_rec_reader *r, cursor *c, uint64_t at, cp_rec_item *it)
{
    cp_rec_end *e = &it->end;
    memset(e, 0, sizeof *e);
    e->activities = get_varint(c);
    e->dropped_records = get_varint(c);
    e->renamed_kernels = get_varint(c);
    e->has_legacy_stream = get_byte(c) != 0;
    e->legacy_device = get_u32(c);
    e->legacy_context = get_u32(c);
    e->legacy_stream = get_u32(c);
    if (c->bad || c->p != c->end)
        return reader_bad(r, at, "end record does not decode");
    r->ended = true;
    r->end = *e;
    return 1;
}

int cp_rec_next(cp_rec_reader *r, cp_rec_item *it)
{
    /* Pushed bytes: what is not whole yet waits for the next push (fill
     * reads a stream until it has what it wants or the stream ends, so
     * there a short read is always the end). */
    if (!r->header) {
        if (r->len - r->pos < CP_REC_MAGIC_LEN && !r->eof)
            return 0;
        int rc = check_header(r);
        if (rc < 0)
            return rc;
    }
    for (;;) {
        uint8_t type = 0;
        cursor c;
        uint64_t at = 0;
        int rc = next_record(r, &type, &c, &at);
        if (rc <= 0)
            return rc;
        /* Only the members of the record's type are set: an activity
         * record is most of a file, and clearing the whole item (the
         * process's strings with it) cost more than decoding it. */
        it->type = (cp_rec_type)type;
        it->process_index = 0;
        switch (type) {
        case CP_REC_STRING:
            if ((rc = read_string(r, &c, at)) < 0)
                return rc;
            continue;
        case CP_REC_ACTIVITY:
            if ((rc = read_activity(r, &c, at, &it->activity)) < 0)
                return rc;
            return 1;
        case CP_REC_PROCESS:
            return read_process(r, &c, at, it);
        case CP_REC_PROCESS_END:
            return read_process_end(r, &c, at, it);
        case CP_REC_PROCESS_COST:
            return read_process_cost(r, &c, at, it);
        case CP_REC_STREAM_NAME:
            return read_stream_name(r, &c, at, it);
        case CP_REC_END:
            return read_end(r, &c, at, it);
        default:
            /* A record of a later minor version: its length says how far to skip. */
            continue;
        }
    }
}

bool cp_rec_truncated(const cp_rec_reader *r, char *why, size_t size)
{
    if (r->partial) {
        snprintf(why, size, "%s ends inside a record at byte %llu, after %llu activities",
                 r->path, (unsigned long long)r->partial_at, (unsigned long long)r->activities);
        return true;
    }
    if (!r->ended) {
        snprintf(why, size, "%s ends without its end record after %llu activities", r->path,
                 (unsigned long long)r->activities);
        return true;
    }
    if (r->end.activities != r->activities) {
        snprintf(why, size, "%s: the end record counts %llu activities, the file holds %llu",
                 r->path, (unsigned long long)r->end.activities,
                 (unsigned long long)r->activities);
        return true;
    }
    if (size)
        why[0] = '\0';
    return false;
}

uint64_t cp_rec_activities_read(const cp_rec_reader *r)
{
    return r->activities;
}

uint64_t cp_rec_offset(const cp_rec_reader *r)
{
    return r->base + r->pos;
}

int cp_rec_apply_meta(cp_trace *t, const cp_rec_item *it, uint32_t base)
{
    if (it->type == CP_REC_PROCESS) {
        long k = cp_trace_add_process(t, &it->process);
        return k < 0 ? (int)k : 0;
    }
    if (it->type == CP_REC_PROCESS_END) {
        cp_process *p = &t->processes[base + it->process_index];
        p->ended = it->process.ended;
        p->last_ns = it->process.last_ns;
        p->dropped = it->process.dropped;
        p->zero_timestamps = it->process.zero_timestamps;
        memcpy(p->why, it->process.why, sizeof p->why);
    } else if (it->type == CP_REC_PROCESS_COST) {
        t->processes[base + it->process_index].cost = it->process.cost;
    } else if (it->type == CP_REC_STREAM_NAME) {
        cp_stream_name n = it->stream_name;
        n.process = base + it->process_index;
        return cp_trace_name_stream(t, &n);
    } else if (it->type == CP_REC_END) {
        t->dropped_records += it->end.dropped_records;
        t->renamed_kernels += it->end.renamed_kernels;
        if (it->end.has_legacy_stream) {
            t->has_legacy_stream = true;
            t->legacy_device = it->end.legacy_device;
            t->legacy_context = it->end.legacy_context;
            t->legacy_stream = it->end.legacy_stream;
        }
    }
    return 0;
}

int cp_rec_stream(const char *path, cp_trace *meta, cp_activity_fn each, void *ctx,
                  bool *truncated, char *why, size_t why_size)
{
    cp_rec_reader *r;
    int rc = cp_rec_reader_open(&r, path);
    if (rc < 0)
        return rc;
    cp_rec_item it;
    while ((rc = cp_rec_next(r, &it)) > 0) {
        rc = it.type == CP_REC_ACTIVITY ? each(ctx, &it.activity)
             : meta                     ? cp_rec_apply_meta(meta, &it, 0)
                                        : 0;
        if (rc < 0)
            break;
    }
    if (rc == 0) {
        char because[512];
        bool cut = cp_rec_truncated(r, because, sizeof because);
        if (truncated)
            *truncated = cut;
        if (why && why_size)
            snprintf(why, why_size, "%s", cut ? because : "");
    }
    cp_rec_reader_close(r);
    return rc;
}

static int add_to_trace(void *ctx, const cp_activity *a)
{
    return cp_trace_add(ctx, a) < 0 ? CP_ENOMEM : 0;
}

int cp_rec_read_trace(const char *path, cp_trace *t, bool *truncated)
{
    cp_trace_clear(t);
    int rc = cp_rec_stream(path, t, add_to_trace, t, truncated, NULL, 0);
    return rc == CP_ENOMEM ? cp_failf(CP_ENOMEM, "out of memory reading %s", path) : rc;
}

static int to_stream(void *ctx, const cp_activity *a)
{
    return cp_stream_add(ctx, a);
}

int cp_rec_analyse(const char *path, const cp_stream_opts *opts, cp_metrics *m, cp_trace *meta,
                   bool *truncated, char *why, size_t why_size)
{
    memset(m, 0, sizeof *m);
    /* The end record's legacy stream reaches the analysis through the
     * meta trace, the caller's or this one. */
    cp_trace own;
    cp_trace_init(&own);
    cp_trace *into = meta ? meta : &own;
    cp_trace_clear(into);
    cp_stream *s = NULL;
    int rc = cp_stream_new(&s, opts);
    if (rc == 0)
        rc = cp_rec_stream(path, into, to_stream, s, truncated, why, why_size);
    if (rc == 0) {
        if (into->has_legacy_stream)
            cp_stream_set_legacy(s, into->legacy_device, into->legacy_context,
                                 into->legacy_stream);
        rc = cp_stream_finish(s, m);
    }
    cp_stream_free(s);
    cp_trace_free(&own);
    return rc;
}
