/*
 * The Perfetto protobuf export, read back by a protobuf decoder of its
 * own (below): it walks Trace -> TracePacket by field number, decodes
 * varints, fixed64 and length-delimited fields, and keeps what Perfetto's
 * trace processor would use: track descriptors, interned names, clocks and
 * track events. The slices are then rebuilt as the trace processor builds
 * them (events ordered by time and, at equal times, by their order in the
 * file; a begin opens a slice on its track, an end closes the innermost)
 * and compared with the records they came from. Checked on the trace
 * recorded on the H100 and on hand-made traces for the edge cases.
 */
#include <cuproof/units.h>
#include <cuproof/internal/proc.h>
#include "named_program.h"
#include <cuproof/internal/tracefile.h>
#include <cuproof/internal/perfetto.h>
#include "reports/pb.h"
#include "reports/perfetto_pb.h"

#include <cuproof/error.h>

#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the decoder ---- */

typedef struct reader {
    const uint8_t *p, *end;
} reader;

/* Reads a varint; false when it runs past the end or beyond 10 bytes. */
static bool read_varint(reader *r, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p == r->end)
            return false;
        uint8_t b = *r->p++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* One field: its number, wire type, and its value (varint, fixed) or
 * contents (length-delimited, in *sub). False for a malformed field or a
 * wire type the format does not use here (groups). */
static bool read_field(reader *r, uint32_t *field, int *wire, uint64_t *v, reader *sub)
{
    uint64_t tag;
    if (!read_varint(r, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
        return false;
    *field = (uint32_t)(tag >> 3);
    *wire = (int)(tag & 7);
    switch (*wire) {
    case CP_PB_VARINT:
        return read_varint(r, v);
    case CP_PB_FIXED64:
    case CP_PB_FIXED32: {
        int n = *wire == CP_PB_FIXED64 ? 8 : 4;
        if (r->end - r->p < n)
            return false;
        *v = 0;
        for (int i = 0; i < n; i++)
            *v |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        return true;
    }
    case CP_PB_LEN: {
        uint64_t n;
        if (!read_varint(r, &n) || n > (uint64_t)(r->end - r->p))
            return false;
        *sub = (reader){r->p, r->p + n};
        r->p += n;
        return true;
    }
    default:
        return false;
    }
}

#define MAX_TRACKS 512
#define MAX_ENTRIES 256

typedef struct track {
    uint64_t uuid, parent;
    char name[160];
    /* A row beside a track ("NAME (R)", R > 1) is the track it stands
     * beside, for what a slice should become: base is NAME, row R - 1. */
    char base[160];
    unsigned row;
    uint64_t pid; /* a process track's */
    bool process;
} track;

typedef struct entry {
    uint64_t iid;
    char s[1024]; /* CUB's kernel names run to hundreds of characters */
} entry;

/* The InternedData fields read: categories, names, annotation names,
 * annotation string values. */
enum { T_CATEGORY, T_NAME, T_ANNOTATION, T_STRING, T_COUNT };
static const uint32_t table_field[T_COUNT] = {1, 2, 3, 29};

typedef struct event {
    size_t order; /* place in the file */
    uint64_t ts;  /* absolute, on the trace's clock */
    int type;
    uint64_t track;
    const char *name, *category, *copy, *grid, *block;
    uint64_t flow;
    int nflows;
    bool has_bytes, has_graph;
    uint64_t bytes, graph_id, graph_node;
} event;

typedef struct decoded {
    size_t packets, size;
    int problems;
    char first_problem[512];
    uint64_t first_flags;
    size_t needs_state, other_sequence;
    bool snapshot;
    uint64_t origin;       /* BOOTTIME at our clock's zero */
    uint64_t default_clock; /* from TracePacketDefaults; 0: none */
    track tracks[MAX_TRACKS];
    size_t ntracks;
    entry tables[T_COUNT][MAX_ENTRIES];
    size_t ntables[T_COUNT];
    event *events;
    size_t nevents, events_cap;
} decoded;

static void problem(decoded *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(decoded *d, const char *fmt, ...)
{
    if (!d->problems++) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->first_problem, sizeof d->first_problem, fmt, ap);
        va_end(ap);
    }
}

/* One field of a message, as read_field reads it. */
typedef struct pb_field {
    uint32_t num;
    int wire;
    uint64_t v;
    reader sub;
} pb_field;

/* The next field of message `r` into *f: 1, or 0 at the message's end,
 * or -1 for a malformed field, reported as "packet N: malformed WHAT". */
static int next_field(decoded *d, reader *r, pb_field *f, size_t packet, const char *what)
{
    if (r->p >= r->end)
        return 0;
    if (read_field(r, &f->num, &f->wire, &f->v, &f->sub))
        return 1;
    problem(d, "packet %zu: malformed %s", packet, what);
    return -1;
}

static const track *find_track(const decoded *d, uint64_t uuid)
{
    for (size_t i = 0; i < d->ntracks; i++)
        if (d->tracks[i].uuid == uuid)
            return &d->tracks[i];
    return NULL;
}

/* The string an iid stands for in a table, or NULL (and a problem) when it
 * was not defined before. */
static const char *lookup(decoded *d, int table, uint64_t iid, size_t packet)
{
    for (size_t i = 0; i < d->ntables[table]; i++)
        if (d->tables[table][i].iid == iid)
            return d->tables[table][i].s;
    problem(d, "packet %zu uses iid %" PRIu64 " of InternedData field %u before defining it",
            packet, iid, table_field[table]);
    return NULL;
}

static void copy_bytes(char *out, size_t cap, reader r)
{
    size_t n = (size_t)(r.end - r.p);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, r.p, n);
    out[n] = '\0';
}

static void read_interned(decoded *d, reader r, size_t packet)
{
    pb_field f, g;
    int got, got2;
    while ((got = next_field(d, &r, &f, packet, "InternedData")) > 0) {
        int t = -1;
        for (int k = 0; k < T_COUNT; k++)
            if (table_field[k] == f.num)
                t = k;
        if (t < 0 || f.wire != CP_PB_LEN) {
            problem(d, "packet %zu: unexpected InternedData field %u", packet, f.num);
            continue;
        }
        entry e = {0};
        while ((got2 = next_field(d, &f.sub, &g, packet, "interned entry")) > 0) {
            if (g.num == 1 && g.wire == CP_PB_VARINT)
                e.iid = g.v;
            else if (g.num == 2 && g.wire == CP_PB_LEN)
                copy_bytes(e.s, sizeof e.s, g.sub);
        }
        if (got2 < 0)
            return;
        if (e.iid == 0)
            problem(d, "packet %zu: interned entry without an iid", packet);
        for (size_t i = 0; i < d->ntables[t]; i++)
            if (d->tables[t][i].iid == e.iid)
                problem(d, "packet %zu: iid %" PRIu64 " of field %u defined twice", packet, e.iid,
                        f.num);
        cr_assert_lt(d->ntables[t], MAX_ENTRIES);
        d->tables[t][d->ntables[t]++] = e;
    }
}

static void read_descriptor(decoded *d, reader r, size_t packet)
{
    track t = {0};
    pb_field f, g;
    int got, got2 = 0;
    while (got2 >= 0 && (got = next_field(d, &r, &f, packet, "TrackDescriptor")) > 0) {
        if (f.num == 1 && f.wire == CP_PB_VARINT)
            t.uuid = f.v;
        else if (f.num == 5 && f.wire == CP_PB_VARINT)
            t.parent = f.v;
        else if (f.num == 2 && f.wire == CP_PB_LEN)
            copy_bytes(t.name, sizeof t.name, f.sub);
        else if (f.num == 3 && f.wire == CP_PB_LEN) {
            t.process = true;
            while ((got2 = next_field(d, &f.sub, &g, packet, "ProcessDescriptor")) > 0) {
                if (g.num == 1 && g.wire == CP_PB_VARINT)
                    t.pid = g.v;
                else if (g.num == 6 && g.wire == CP_PB_LEN)
                    copy_bytes(t.name, sizeof t.name, g.sub);
            }
        }
    }
    if (got < 0 || got2 < 0)
        return;
    if (t.uuid == 0)
        problem(d, "packet %zu: a track without a uuid", packet);
    if (find_track(d, t.uuid))
        problem(d, "packet %zu: track %" PRIu64 " described twice", packet, t.uuid);
    if (t.parent && !find_track(d, t.parent))
        problem(d, "packet %zu: track %" PRIu64 "'s parent %" PRIu64 " is not described", packet,
                t.uuid, t.parent);
    if (t.process && t.pid == 0)
        problem(d, "packet %zu: a process track without its pid", packet);
    snprintf(t.base, sizeof t.base, "%s", t.name);
    char *open = strrchr(t.base, '(');
    unsigned row;
    char close;
    if (open && open > t.base && open[-1] == ' ' && sscanf(open, "(%u%c", &row, &close) == 2 &&
        close == ')' && row > 1) {
        open[-1] = '\0';
        t.row = row - 1;
    }
    cr_assert_lt(d->ntracks, MAX_TRACKS);
    d->tracks[d->ntracks++] = t;
}

static void read_annotation(decoded *d, event *e, reader r, size_t packet)
{
    uint64_t name_iid = 0, uint_value = 0, string_iid = 0;
    bool has_uint = false;
    pb_field f;
    int got;
    while ((got = next_field(d, &r, &f, packet, "DebugAnnotation")) > 0) {
        if (f.num == 1 && f.wire == CP_PB_VARINT)
            name_iid = f.v;
        else if (f.num == 3 && f.wire == CP_PB_VARINT) {
            uint_value = f.v;
            has_uint = true;
        } else if (f.num == 17 && f.wire == CP_PB_VARINT)
            string_iid = f.v;
    }
    if (got < 0)
        return;
    const char *name = lookup(d, T_ANNOTATION, name_iid, packet);
    const char *value = string_iid ? lookup(d, T_STRING, string_iid, packet) : NULL;
    if (!name)
        return;
    if (strcmp(name, "bytes") == 0 && has_uint) {
        e->has_bytes = true;
        e->bytes = uint_value;
    } else if (strcmp(name, "graph_id") == 0 && has_uint) {
        e->has_graph = true;
        e->graph_id = uint_value;
    } else if (strcmp(name, "graph_node") == 0 && has_uint) {
        e->graph_node = uint_value;
    } else if (strcmp(name, "copy") == 0) {
        e->copy = value;
    } else if (strcmp(name, "grid") == 0) {
        e->grid = value;
    } else if (strcmp(name, "block") == 0) {
        e->block = value;
    } else {
        problem(d, "packet %zu: unknown annotation %s", packet, name);
    }
}

static void read_track_event(decoded *d, event *e, reader r, size_t packet)
{
    pb_field f;
    int got;
    while ((got = next_field(d, &r, &f, packet, "TrackEvent")) > 0) {
        if (f.num == 9 && f.wire == CP_PB_VARINT)
            e->type = (int)f.v;
        else if (f.num == 11 && f.wire == CP_PB_VARINT)
            e->track = f.v;
        else if (f.num == 10 && f.wire == CP_PB_VARINT)
            e->name = lookup(d, T_NAME, f.v, packet);
        else if (f.num == 3 && f.wire == CP_PB_VARINT)
            e->category = lookup(d, T_CATEGORY, f.v, packet);
        else if (f.num == 47 && f.wire == CP_PB_FIXED64) {
            e->flow = f.v;
            e->nflows++;
        } else if (f.num == 4 && f.wire == CP_PB_LEN)
            read_annotation(d, e, f.sub, packet);
        else
            problem(d, "packet %zu: unexpected TrackEvent field %u", packet, f.num);
    }
    if (got < 0)
        return;
    if (e->type != 1 && e->type != 2)
        problem(d, "packet %zu: track event of type %d", packet, e->type);
    if (!find_track(d, e->track))
        problem(d, "packet %zu: track %" PRIu64 " used before it is described", packet, e->track);
    if (e->type == 1 && !e->name)
        problem(d, "packet %zu: a slice without a name", packet);
}

static void read_snapshot(decoded *d, reader r, size_t packet)
{
    uint64_t boottime = 0, ours = 0;
    bool has_boottime = false, has_ours = false;
    pb_field f, g;
    int got;
    while ((got = next_field(d, &r, &f, packet, "ClockSnapshot")) != 0) {
        if (got < 0 || f.num != 1 || f.wire != CP_PB_LEN) {
            if (got > 0)
                problem(d, "packet %zu: malformed ClockSnapshot", packet);
            return;
        }
        uint64_t id = 0, ts = 0;
        int got2;
        while ((got2 = next_field(d, &f.sub, &g, packet, "clock")) > 0) {
            if (g.num == 1)
                id = g.v;
            else if (g.num == 2)
                ts = g.v;
        }
        if (got2 < 0)
            return;
        if (id == 6) {
            boottime = ts;
            has_boottime = true;
        } else if (id == 64) {
            ours = ts;
            has_ours = true;
        }
    }
    if (!has_boottime || !has_ours)
        problem(d, "packet %zu: a ClockSnapshot without BOOTTIME and clock 64", packet);
    d->snapshot = true;
    d->origin = boottime - ours;
}

static void read_packet(decoded *d, reader r, size_t packet)
{
    reader interned = {0}, descriptor = {0}, track_event = {0}, snapshot = {0}, defaults = {0};
    bool has_ts = false, has_clock = false, has_seq = false;
    uint64_t ts = 0, clock = 0, seq = 0, flags = 0;
    pb_field f;
    int got;
    while ((got = next_field(d, &r, &f, packet, "TracePacket")) > 0) {
        uint64_t v = f.v;
        reader sub = f.sub;
        switch (f.num) {
        case 8:
            has_ts = true;
            ts = v;
            break;
        case 58:
            has_clock = true;
            clock = v;
            break;
        case 10:
            has_seq = true;
            seq = v;
            break;
        case 13:
            flags = v;
            break;
        case 12:
            interned = sub;
            break;
        case 60:
            descriptor = sub;
            break;
        case 11:
            track_event = sub;
            break;
        case 6:
            snapshot = sub;
            break;
        case 59:
            defaults = sub;
            break;
        default:
            problem(d, "packet %zu: unexpected TracePacket field %u", packet, f.num);
        }
    }
    if (got < 0)
        return;
    if (!has_seq || seq != 1)
        d->other_sequence++;
    if (packet == 0)
        d->first_flags = flags;
    else
        d->needs_state += flags == 2;
    /* As the trace processor: defaults, then interned data, then the rest. */
    if (defaults.p) {
        while (next_field(d, &defaults, &f, packet, "TracePacketDefaults") > 0)
            if (f.num == 58)
                d->default_clock = f.v;
    }
    if (interned.p)
        read_interned(d, interned, packet);
    if (snapshot.p)
        read_snapshot(d, snapshot, packet);
    if (descriptor.p)
        read_descriptor(d, descriptor, packet);
    if (track_event.p) {
        if (!has_ts)
            problem(d, "packet %zu: a track event without a timestamp", packet);
        uint64_t id = has_clock ? clock : d->default_clock ? d->default_clock : 6;
        if (id == 64 && !d->snapshot)
            problem(d, "packet %zu: clock 64 before its snapshot", packet);
        else if (id != 64 && id != 6)
            problem(d, "packet %zu: unknown clock %" PRIu64, packet, id);
        if (d->nevents == d->events_cap) {
            d->events_cap = d->events_cap ? 2 * d->events_cap : 1024;
            d->events = realloc(d->events, d->events_cap * sizeof *d->events);
            cr_assert_not_null(d->events);
        }
        event *e = &d->events[d->nevents++];
        *e = (event){.order = d->nevents - 1, .ts = id == 64 ? d->origin + ts : ts};
        read_track_event(d, e, track_event, packet);
    }
}

/* Decodes a whole file; structural problems are counted in d->problems. */
static void decode(const char *path, decoded *d)
{
    memset(d, 0, sizeof *d);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
    cr_assert_not_null(data);
    cr_assert_eq(fread(data, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    d->size = (size_t)size;
    reader r = {data, data + size};
    uint32_t field;
    int wire;
    uint64_t v;
    reader sub;
    while (r.p < r.end) {
        if (!read_field(&r, &field, &wire, &v, &sub) || field != 1 || wire != CP_PB_LEN) {
            problem(d, "byte %td: not a Trace.packet field", r.p - data);
            break;
        }
        read_packet(d, sub, d->packets++);
    }
    free(data);
}

static void decoded_free(decoded *d)
{
    free(d->events);
    d->events = NULL;
}

/* ---- slices, as the trace processor builds them ---- */

typedef struct slice {
    uint64_t start, end;
    const char *root, *track, *name;
    const event *begin;
} slice;

static int by_time_then_file(const void *x, const void *y)
{
    const event *a = *(const event *const *)x, *b = *(const event *const *)y;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

/* The name of the track's root (its process, or a case's title). */
static const char *root_of(const decoded *d, uint64_t uuid)
{
    const track *t = find_track(d, uuid);
    while (t && t->parent)
        t = find_track(d, t->parent);
    return t ? t->name : "";
}

/* Rebuilds the slices; counts ends with nothing open and begins never
 * closed as problems. Returns a malloc'd array of *n slices. */
static slice *rebuild(decoded *d, size_t *n)
{
    const event **sorted = malloc((d->nevents ? d->nevents : 1) * sizeof *sorted);
    slice *out = malloc((d->nevents ? d->nevents : 1) * sizeof *out);
    cr_assert(sorted && out);
    for (size_t i = 0; i < d->nevents; i++)
        sorted[i] = &d->events[i];
    qsort(sorted, d->nevents, sizeof *sorted, by_time_then_file);
    enum { DEPTH = 64 };
    static size_t stack[MAX_TRACKS][DEPTH];
    size_t depth[MAX_TRACKS] = {0};
    *n = 0;
    for (size_t i = 0; i < d->nevents; i++) {
        const event *e = sorted[i];
        const track *t = find_track(d, e->track);
        if (!t)
            continue;
        size_t k = (size_t)(t - d->tracks);
        if (e->type == 1) {
            cr_assert_lt(depth[k], (size_t)DEPTH);
            out[*n] = (slice){e->ts, 0, root_of(d, t->uuid), t->base, e->name, e};
            stack[k][depth[k]++] = (*n)++;
        } else if (depth[k] == 0) {
            problem(d, "an end on track %s with no slice open", t->name);
        } else {
            out[stack[k][--depth[k]]].end = e->ts;
        }
    }
    for (size_t k = 0; k < d->ntracks; k++)
        if (depth[k])
            problem(d, "%zu slices left open on track %s", depth[k], d->tracks[k].name);
    free(sorted);
    return out;
}

static int by_fields(const void *x, const void *y)
{
    const slice *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    int c = strcmp(a->root, b->root);
    if (!c)
        c = strcmp(a->track, b->track);
    return c ? c : strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

/* What each record of `t` should become: its times (an end before the
 * start taken as no duration), its process's root, its track and name. */
static slice *expected(const cp_trace *t, const char *title, char (*tracks)[128])
{
    slice *out = malloc((t->n ? t->n : 1) * sizeof *out);
    cr_assert_not_null(out);
    for (size_t i = 0; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        /* A stream's track is named as every output names it (units.h):
         * the legacy default stream is "default stream". */
        bool legacy = t->has_legacy_stream && a->device == t->legacy_device &&
                      a->context == t->legacy_context && a->stream == t->legacy_stream;
        if (cp_activity_is_device_work(a) && legacy)
            snprintf(tracks[i], 64, "GPU %u ctx %u default stream", a->device, a->context);
        else if (cp_activity_is_device_work(a))
            snprintf(tracks[i], 64, "GPU %u ctx %u stream %u", a->device, a->context, a->stream);
        else if (a->thread)
            snprintf(tracks[i], 64, "thread %u%s", a->thread,
                     a->kind == CP_ACT_RANGE ? " NVTX" : "");
        else
            snprintf(tracks[i], 64, "%s", a->kind == CP_ACT_RANGE ? "NVTX" : "CUDA API");
        const char *root = t->nprocesses ? t->processes[a->process].command : title;
        /* Named as shown: an API call without CUPTI's "_v3020". */
        const char *name = cp_activity_label_str(a, tracks[i] + 64, 64);
        out[i] = (slice){a->start, a->end > a->start ? a->end : a->start, root, tracks[i], name,
                         NULL};
    }
    return out;
}

/* The records of `t` and the slices of `d` are the same, one for one. */
static void expect_same_slices(decoded *d, const cp_trace *t, const char *title)
{
    size_t n;
    slice *got = rebuild(d, &n);
    char(*names)[128] = malloc((t->n ? t->n : 1) * sizeof *names);
    cr_assert_not_null(names);
    slice *want = expected(t, title, names);
    cr_expect_eq(d->problems, 0, "%s", d->first_problem);
    cr_assert_eq(n, t->n, "%zu slices for %zu records", n, t->n);
    qsort(got, n, sizeof *got, by_fields);
    qsort(want, n, sizeof *want, by_fields);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(by_fields(&got[i], &want[i]), 0,
                     "slice %zu: got %s/%s/%s [%" PRIu64 ", %" PRIu64 "], want %s/%s/%s [%" PRIu64
                     ", %" PRIu64 "]",
                     i, got[i].root, got[i].track, got[i].name, got[i].start, got[i].end,
                     want[i].root, want[i].track, want[i].name, want[i].start, want[i].end);
    free(got);
    free(want);
    free(names);
}

/* ---- helpers ---- */

static char tmp[64];

static void make_tmp(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/cuproof-pb-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
}

static void remove_tmp(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    cr_expect_eq(system(cmd), 0);
}

static cp_trace_file fixture;

static void load_fixture(void)
{
    make_tmp();
    cr_assert_eq(cp_trace_file_read(CUPROOF_FIXTURES "/multi-kernel-h100.trace.json", &fixture), 0,
                 "%s", cp_last_error());
}

static void free_fixture(void)
{
    cp_trace_file_free(&fixture);
    remove_tmp();
}

static const cp_trace_variant *variant(const char *name)
{
    for (size_t i = 0; i < fixture.nvariants; i++)
        if (strcmp(fixture.variants[i].name, name) == 0)
            return &fixture.variants[i];
    cr_assert_fail("no variant %s in the fixture", name);
    return NULL;
}

/* Writes a variant of the fixture and decodes it. */
static void write_and_decode(const cp_trace_variant *v, decoded *d)
{
    cr_assert_eq(cp_perfetto_pb_write(tmp, fixture.case_name, v->name, &v->trace), 0, "%s",
                 cp_last_error());
    char path[256];
    snprintf(path, sizeof path, "%s/%s.%s.perfetto-trace", tmp, fixture.case_name, v->name);
    decode(path, d);
}

static bool is_lane(const track *t)
{
    unsigned dev, ctx, stream;
    int end = 0;
    /* The legacy default stream's lane is "GPU 0 ctx 1 default stream". */
    return sscanf(t->name, "GPU %u ctx %u stream %u", &dev, &ctx, &stream) == 3 ||
           (sscanf(t->name, "GPU %u ctx %u default stream%n", &dev, &ctx, &end) == 2 && end > 0);
}

static const char *title_of(const cp_trace_variant *v, char *buf, size_t len)
{
    snprintf(buf, len, "cuproof %s / %s", fixture.case_name, v->name);
    return buf;
}

/* Writes `t` as tmp/CASE.VARIANT.perfetto-trace and decodes it. */
static void write_then_decode(const cp_trace *t, const char *case_name, const char *variant,
                              decoded *d)
{
    cr_assert_eq(cp_perfetto_pb_write(tmp, case_name, variant, t), 0, "%s", cp_last_error());
    char path[256];
    snprintf(path, sizeof path, "%s/%s.%s.perfetto-trace", tmp, case_name, variant);
    decode(path, d);
}

/* The tracks of `d` that are rows beside another. */
static size_t rows_beside(const decoded *d)
{
    size_t n = 0;
    for (size_t i = 0; i < d->ntracks; i++)
        n += d->tracks[i].row > 0;
    return n;
}

/* ---- the tests ---- */

Test(perfetto_pb, encoder_writes_canonical_varints_and_long_messages)
{
    uint8_t out[10];
    cr_expect_eq(cp_pb_put_varint(out, 0), 1);
    cr_expect_eq(cp_pb_put_varint(out, 127), 1);
    cr_expect_eq(cp_pb_put_varint(out, 300), 2);
    cr_expect(out[0] == 0xac && out[1] == 0x02, "300 is ac 02");
    cr_expect_eq(cp_pb_varint_size(UINT64_MAX), 10);
    cr_expect_eq(cp_pb_put_varint(out, UINT64_MAX), 10);
    /* A nested message of 300 bytes inside one of more: each length takes
     * two bytes, and what follows them moves along intact. */
    cp_pb b;
    cp_pb_init(&b);
    char text[301];
    memset(text, 'x', 300);
    text[300] = '\0';
    cp_pb_begin(&b, 1);
    cp_pb_begin(&b, 2);
    cp_pb_string(&b, 3, text);
    cp_pb_end(&b);
    cp_pb_fixed64(&b, 4, 0x0102030405060708ULL);
    cp_pb_end(&b);
    cr_assert(!b.failed);
    reader r = {b.data, b.data + b.len}, outer, inner, s;
    uint32_t field;
    int wire;
    uint64_t v;
    cr_assert(read_field(&r, &field, &wire, &v, &outer) && field == 1 && r.p == r.end);
    cr_assert(read_field(&outer, &field, &wire, &v, &inner) && field == 2);
    cr_assert(read_field(&inner, &field, &wire, &v, &s) && field == 3 && s.end - s.p == 300);
    cr_expect(memcmp(s.p, text, 300) == 0);
    cr_assert(read_field(&outer, &field, &wire, &v, &s) && field == 4 && wire == CP_PB_FIXED64);
    cr_expect_eq(v, 0x0102030405060708ULL);
    cr_expect(outer.p == outer.end);
    cp_pb_free(&b);
}

/* The decoder the other tests rely on sees a malformed field at every
 * depth: a packet's, a track event's and a descriptor's. */
Test(perfetto_pb, the_decoder_reports_malformed_fields)
{
    make_tmp();
    static const struct {
        uint8_t bytes[16];
        size_t n;
        const char *want;
    } cases[] = {
        /* Trace.packet { timestamp: a varint cut short } */
        {{0x0a, 0x02, 0x40, 0xff}, 4, "packet 0: malformed TracePacket"},
        /* Trace.packet { timestamp: 1, track_event { type: cut short } } */
        {{0x0a, 0x06, 0x40, 0x01, 0x5a, 0x02, 0x48, 0xff}, 8, "packet 0: malformed TrackEvent"},
        /* Trace.packet { track_descriptor { process { pid: cut short } } } */
        {{0x0a, 0x06, 0xe2, 0x03, 0x03, 0x1a, 0x01, 0x08}, 8,
         "packet 0: malformed ProcessDescriptor"},
    };
    char path[256];
    snprintf(path, sizeof path, "%s/bad.perfetto-trace", tmp);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(cases[i].bytes, 1, cases[i].n, f), cases[i].n);
        fclose(f);
        decoded d;
        decode(path, &d);
        cr_expect_gt(d.problems, 0, "case %zu", i);
        cr_expect_str_eq(d.first_problem, cases[i].want, "case %zu", i);
        decoded_free(&d);
    }
    remove_tmp();
}

Test(perfetto_pb, packets_are_well_formed_and_on_one_sequence, .init = load_fixture,
     .fini = free_fixture)
{
    for (size_t i = 0; i < fixture.nvariants; i++) {
        decoded d;
        write_and_decode(&fixture.variants[i], &d);
        cr_expect_eq(d.problems, 0, "%s: %s", fixture.variants[i].name, d.first_problem);
        cr_expect_gt(d.packets, fixture.variants[i].trace.n);
        cr_expect_eq(d.other_sequence, 0, "every packet is on sequence 1");
        cr_expect_eq(d.first_flags, 1, "the first packet clears the incremental state");
        cr_expect_eq(d.needs_state, d.packets - 1, "every later packet needs it");
        cr_expect(d.snapshot && d.default_clock == 64, "timestamps after the origin, on clock 64");
        decoded_free(&d);
    }
}

Test(perfetto_pb, tracks_are_described_once_before_use, .init = load_fixture, .fini = free_fixture)
{
    const cp_trace_variant *v = variant("streams-pinned");
    decoded d;
    write_and_decode(v, &d);
    /* Uniqueness, parents before children and tracks before their events
     * are counted as problems by the decoder. */
    cr_expect_eq(d.problems, 0, "%s", d.first_problem);
    size_t lanes = 0, roots = 0, contexts = 0, api = 0, nvtx = 0;
    for (size_t i = 0; i < d.ntracks; i++) {
        const track *t = &d.tracks[i];
        roots += t->parent == 0;
        lanes += is_lane(t);
        contexts += strncmp(t->name, "GPU ", 4) == 0 && !is_lane(t);
        api += strcmp(t->name, "CUDA API") == 0;
        nvtx += strcmp(t->name, "NVTX") == 0;
        if (is_lane(t)) {
            const track *parent = find_track(&d, t->parent);
            cr_assert_not_null(parent);
            cr_expect_eq(strncmp(t->name, parent->name, strlen(parent->name)), 0,
                         "lane %s under %s", t->name, parent->name);
        }
    }
    /* The distinct (device, context, stream) of the device work. */
    const cp_trace *t = &v->trace;
    size_t distinct = 0;
    for (size_t i = 0; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (!cp_activity_is_device_work(a))
            continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = cp_activity_is_device_work(&t->items[j]) && t->items[j].device == a->device &&
                   t->items[j].context == a->context && t->items[j].stream == a->stream &&
                   t->items[j].process == a->process;
        distinct += !seen;
    }
    cr_expect_gt(distinct, 1, "the streams variant uses several streams");
    cr_expect_eq(lanes, distinct, "one lane per stream");
    cr_expect_eq(roots, 1, "one root: the case's trace");
    cr_expect_eq(contexts, 1);
    cr_expect_eq(api, 1);
    cr_expect_eq(nvtx, 1);
    char title[160];
    cr_expect_str_eq(root_of(&d, d.tracks[d.ntracks - 1].uuid), title_of(v, title, sizeof title));
    decoded_free(&d);
}

Test(perfetto_pb, slices_are_the_records_as_perfetto_nests_them, .init = load_fixture,
     .fini = free_fixture)
{
    for (size_t i = 0; i < fixture.nvariants; i++) {
        const cp_trace_variant *v = &fixture.variants[i];
        decoded d;
        write_and_decode(v, &d);
        char title[160];
        expect_same_slices(&d, &v->trace, title_of(v, title, sizeof title));
        /* Device slices: one per kernel, copy and memset. */
        size_t device_records = 0, device_slices = 0, begins = 0, ends = 0;
        for (size_t k = 0; k < v->trace.n; k++)
            device_records += cp_activity_is_device_work(&v->trace.items[k]);
        for (size_t k = 0; k < d.nevents; k++) {
            begins += d.events[k].type == 1;
            ends += d.events[k].type == 2;
            device_slices += d.events[k].type == 1 && is_lane(find_track(&d, d.events[k].track));
        }
        cr_expect_eq(begins, ends);
        cr_expect_eq(device_slices, device_records, "%s", v->name);
        decoded_free(&d);
    }
}

/* Streams `t` through the writer in the order it holds its records and
 * decodes the file; returns the writer's count of unordered slices. */
static uint64_t stream_then_decode(const cp_trace *t, const char *title, decoded *d)
{
    char out[256];
    snprintf(out, sizeof out, "%s/streamed.perfetto-trace", tmp);
    FILE *f = fopen(out, "wb");
    cr_assert_not_null(f);
    cp_pb_writer *w = cp_pb_open(f, out, 0);
    cr_assert_not_null(w);
    cp_pb_name_streams(w, t);
    if (t->nprocesses == 0)
        cr_assert_eq(cp_pb_add_process(w, 0, 0, title), 0);
    for (size_t k = 0; k < t->nprocesses; k++)
        cr_assert_eq(
            cp_pb_add_process(w, (uint32_t)k, t->processes[k].pid, t->processes[k].command), 0);
    for (size_t k = 0; k < t->n; k++)
        cr_assert_eq(cp_pb_add_activity(w, &t->items[k]), 0);
    uint64_t unordered = 99;
    cr_assert_eq(cp_pb_close(w, &unordered), 0, "%s", cp_last_error());
    cr_assert_eq(fclose(f), 0);
    decode(out, d);
    return unordered;
}

typedef struct recorded_tally {
    size_t files, rows, unordered_variants;
} recorded_tally;

/* Every trace file in `dir`, each variant written whole and streamed. */
static void check_recorded_traces(const char *dir_path, recorded_tally *tally)
{
    DIR *dir = opendir(dir_path);
    cr_assert_not_null(dir, "%s", dir_path);
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t len = strlen(e->d_name);
        if (len < 11 || strcmp(e->d_name + len - 11, ".trace.json") != 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
        cp_trace_file tf;
        cr_assert_eq(cp_trace_file_read(path, &tf), 0, "%s", cp_last_error());
        tally->files++;
        for (size_t i = 0; i < tf.nvariants; i++) {
            const cp_trace *t = &tf.variants[i].trace;
            char title[160];
            snprintf(title, sizeof title, "cuproof %s / %s", tf.case_name, tf.variants[i].name);
            decoded d;
            write_then_decode(t, tf.case_name, tf.variants[i].name, &d);
            expect_same_slices(&d, t, title);
            tally->rows += rows_beside(&d);
            decoded_free(&d);

            uint64_t unordered = stream_then_decode(t, title, &d);
            if (unordered) {
                /* Only where the calls of many unnamed threads interleave
                 * on one track, far out of order: said, not drawn wrong
                 * in silence. */
                cr_expect_str_eq(e->d_name, "host-threads-h100.trace.json", "%s: %" PRIu64,
                                 tf.variants[i].name, unordered);
                tally->unordered_variants++;
            } else {
                expect_same_slices(&d, t, title);
            }
            decoded_free(&d);
        }
        cp_trace_file_free(&tf);
    }
    closedir(dir);
}

/* Every trace recorded on a GPU keeps its slices, written whole (sorted)
 * or streamed: the host-threads fixture was recorded before threads were
 * kept, so the calls of up to 32 threads share one track and overlap there
 * (55 times in streams-32), and the programs' traces mix processes.
 * Streamed in the file's order they keep them too, except where
 * host-threads' calls of many threads come more than 32 out of order on
 * their one track: the writer counts those. */
Test(perfetto_pb, every_recorded_trace_keeps_its_slices)
{
    make_tmp();
    recorded_tally tally = {0};
    check_recorded_traces(CUPROOF_FIXTURES, &tally);
    check_recorded_traces(CUPROOF_FIXTURES "/exec-h100", &tally);
    cr_expect_geq(tally.files, 20, "the recorded traces");
    cr_expect_gt(tally.rows, 0, "some recorded trace needed rows beside its tracks");
    cr_expect_gt(tally.unordered_variants, 0, "host-threads' threads on one track, streamed");
    remove_tmp();
}

Test(perfetto_pb, interned_names_are_defined_before_use, .init = load_fixture,
     .fini = free_fixture)
{
    const cp_trace_variant *v = variant("streams-pinned");
    decoded d;
    write_and_decode(v, &d);
    cr_expect_eq(d.problems, 0, "%s", d.first_problem);
    /* Each distinct name is defined once, so names cost a varint each. */
    size_t named = 0, distinct = 0;
    for (size_t k = 0; k < d.nevents; k++)
        named += d.events[k].type == 1 && d.events[k].name != NULL;
    cr_expect_eq(named, v->trace.n);
    for (size_t k = 0; k < v->trace.n; k++) {
        const cp_activity *a = &v->trace.items[k];
        const char *name = a->kind == CP_ACT_MEMCPY ? cp_copy_dir_name(a->copy_dir) : a->name;
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++) {
            const cp_activity *b = &v->trace.items[j];
            seen = strcmp(name, b->kind == CP_ACT_MEMCPY ? cp_copy_dir_name(b->copy_dir)
                                                         : b->name) == 0;
        }
        distinct += !seen;
    }
    cr_expect_eq(d.ntables[T_NAME], distinct);
    /* Copies carry their bytes and memory, kernels their launch shape. */
    size_t copies = 0, kernels = 0;
    for (size_t k = 0; k < d.nevents; k++) {
        const event *e = &d.events[k];
        if (e->type != 1)
            continue;
        if (e->copy) {
            copies++;
            cr_expect(e->has_bytes && e->bytes > 0);
            cr_expect(strstr(e->copy, " -> ") != NULL, "%s", e->copy);
        }
        if (e->grid) {
            kernels++;
            cr_expect_not_null(e->block);
            cr_expect_eq(e->grid[0], '(');
        }
    }
    cr_expect_eq(copies, 400);
    cr_expect_eq(kernels, 200);
    decoded_free(&d);
}

/* The flow id of the slice that begins at `start` on a track named
 * `track`, 0 when none or when it has none. */
static uint64_t flow_at(const decoded *d, uint64_t start, bool device)
{
    for (size_t k = 0; k < d->nevents; k++) {
        const event *e = &d->events[k];
        if (e->type == 1 && e->ts == start && is_lane(find_track(d, e->track)) == device)
            return e->nflows ? e->flow : 0;
    }
    return 0;
}

Test(perfetto_pb, launches_share_a_flow_with_their_work, .init = load_fixture,
     .fini = free_fixture)
{
    const char *names[] = {"streams-pinned", "graph"};
    for (size_t n = 0; n < 2; n++) {
        const cp_trace_variant *v = variant(names[n]);
        const cp_trace *t = &v->trace;
        decoded d;
        write_and_decode(v, &d);
        cr_expect_eq(d.problems, 0, "%s", d.first_problem);
        size_t launched = 0;
        for (size_t i = 0; i < t->n; i++) {
            const cp_activity *w = &t->items[i];
            if (!cp_activity_is_device_work(w) || !w->correlation)
                continue;
            const cp_activity *call = NULL;
            for (size_t j = 0; j < t->n && !call; j++)
                if (t->items[j].kind == CP_ACT_RUNTIME &&
                    t->items[j].correlation == w->correlation &&
                    t->items[j].process == w->process)
                    call = &t->items[j];
            if (!call)
                continue;
            launched++;
            uint64_t from = flow_at(&d, call->start, false), to = flow_at(&d, w->start, true);
            cr_expect_neq(from, 0, "%s: the call at %" PRIu64 " has a flow", v->name, call->start);
            cr_expect_eq(from, to, "%s: %s and its launch share a flow", v->name, w->name);
        }
        cr_expect_gt(launched, 0, "%s launches work", v->name);
        /* Each slice carries at most one flow id. */
        for (size_t k = 0; k < d.nevents; k++)
            cr_expect_leq(d.events[k].nflows, 1);
        decoded_free(&d);
    }
    cr_expect_neq(cp_pb_flow_id(0, 7), cp_pb_flow_id(1, 7), "correlation ids repeat by process");
}

Test(perfetto_pb, graph_kernels_carry_their_graph, .init = load_fixture, .fini = free_fixture)
{
    const cp_trace_variant *v = variant("graph");
    decoded d;
    write_and_decode(v, &d);
    cr_expect_eq(d.problems, 0, "%s", d.first_problem);
    size_t kernels = 0;
    for (size_t k = 0; k < d.nevents; k++) {
        const event *e = &d.events[k];
        if (e->type != 1 || !e->grid)
            continue;
        kernels++;
        cr_expect(e->has_graph && e->graph_id > 0, "a graph's kernel carries graph_id");
        cr_expect_gt(e->graph_node, 0);
        char category[32];
        snprintf(category, sizeof category, "graph %" PRIu64, e->graph_id);
        cr_expect(e->category && strcmp(e->category, category) == 0, "category %s",
                  e->category ? e->category : "(none)");
    }
    cr_expect_eq(kernels, 200);
    decoded_free(&d);
    /* No graph, no annotation. */
    write_and_decode(variant("streams-pinned"), &d);
    for (size_t k = 0; k < d.nevents; k++)
        cr_expect(!d.events[k].has_graph && !d.events[k].category);
    decoded_free(&d);
}

/* A lane where one slice ends as the next begins, a zero-length record and
 * one whose end precedes its start; ranges nested with equal starts and
 * equal ends. */
static void edge_trace(cp_trace *t)
{
    cp_trace_init(t);
    const uint64_t base = 1000000000000ULL;
    cp_activity items[] = {
        {.kind = CP_ACT_KERNEL, .start = base + 10, .end = base + 20, .stream = 7, .name = "b"},
        {.kind = CP_ACT_KERNEL, .start = base + 0, .end = base + 10, .stream = 7, .name = "a"},
        {.kind = CP_ACT_KERNEL, .start = base + 20, .end = base + 20, .stream = 7, .name = "z"},
        {.kind = CP_ACT_KERNEL, .start = base + 20, .end = base + 30, .stream = 7, .name = "c"},
        {.kind = CP_ACT_MEMSET, .start = base + 40, .end = base + 35, .stream = 7, .name = "rev",
         .bytes = 8},
        {.kind = CP_ACT_RANGE, .start = base + 0, .end = base + 50, .name = "inner-same-start"},
        {.kind = CP_ACT_RANGE, .start = base + 0, .end = base + 100, .name = "outer"},
        {.kind = CP_ACT_RANGE, .start = base + 60, .end = base + 100, .name = "inner-same-end"},
        {.kind = CP_ACT_RANGE, .start = base + 50, .end = base + 60, .name = "between"},
    };
    for (size_t i = 0; i < sizeof items / sizeof *items; i++)
        cr_assert_eq(cp_trace_add(t, &items[i]), 0);
}

Test(perfetto_pb, touching_and_nested_slices_keep_their_bounds)
{
    make_tmp();
    cp_trace t;
    edge_trace(&t);
    cr_assert_eq(cp_perfetto_pb_write(tmp, "edge", "v", &t), 0, "%s", cp_last_error());
    char path[256];
    snprintf(path, sizeof path, "%s/edge.v.perfetto-trace", tmp);
    decoded d;
    decode(path, &d);
    expect_same_slices(&d, &t, "cuproof edge / v");
    decoded_free(&d);
    cp_trace_free(&t);
    remove_tmp();
}

/* Two threads whose API calls overlap without nesting (a runtime call
 * each, its driver call inside, a range around one). On a track per
 * thread every slice keeps its bounds; with no thread they share the
 * process's track, where the writer deals them to rows on which they nest
 * so that they keep their bounds too. */
static void two_threads(cp_trace *t, bool with_threads)
{
    cp_trace_init(t);
    cp_process p = {.pid = 77, .command = "threads"};
    cr_assert_eq(cp_trace_add_process(t, &p), 0);
    const uint32_t a = with_threads ? 1714126848u : 0, b = with_threads ? 1705734144u : 0;
    cp_activity items[] = {
        {.kind = CP_ACT_RANGE, .start = 50, .end = 350, .thread = a, .name = "step"},
        {.kind = CP_ACT_RUNTIME, .start = 100, .end = 300, .thread = a, .correlation = 1,
         .name = "cudaMemcpyAsync"},
        {.kind = CP_ACT_RUNTIME, .start = 120, .end = 280, .thread = a, .correlation = 1,
         .name = "cuMemcpyAsync"},
        {.kind = CP_ACT_RUNTIME, .start = 200, .end = 400, .thread = b, .correlation = 2,
         .name = "cudaLaunchKernel"},
        {.kind = CP_ACT_RUNTIME, .start = 210, .end = 390, .thread = b, .correlation = 2,
         .name = "cuLaunchKernel"},
    };
    for (size_t i = 0; i < sizeof items / sizeof *items; i++)
        cr_assert_eq(cp_trace_add(t, &items[i]), 0);
}

/* Slices of `got` whose end is not that of the record of `t` with their
 * start and name. */
static size_t wrong_ends(const slice *got, size_t n, const cp_trace *t)
{
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < t->n; k++)
            if (got[i].start == t->items[k].start && strcmp(got[i].name, t->items[k].name) == 0)
                wrong += got[i].end != t->items[k].end;
    return wrong;
}

Test(perfetto_pb, each_threads_calls_and_ranges_nest_on_its_own_track)
{
    make_tmp();
    cp_trace t;
    two_threads(&t, true);
    decoded d;
    write_then_decode(&t, "threads", "v", &d);
    expect_same_slices(&d, &t, "");
    size_t thread_tracks = 0, range_tracks = 0;
    for (size_t i = 0; i < d.ntracks; i++) {
        thread_tracks += strncmp(d.tracks[i].name, "thread ", 7) == 0;
        range_tracks += strstr(d.tracks[i].name, " NVTX") != NULL;
    }
    cr_expect_eq(thread_tracks, 3, "two threads' calls and one's ranges");
    cr_expect_eq(range_tracks, 1);
    cr_expect_eq(rows_beside(&d), 0, "nothing overlaps on a thread's track");
    decoded_free(&d);
    cp_trace_free(&t);

    /* No thread: one "CUDA API" track, which needs a second row. */
    two_threads(&t, false);
    write_then_decode(&t, "threads", "v", &d);
    expect_same_slices(&d, &t, "");
    cr_expect_eq(rows_beside(&d), 1);
    bool named = false;
    for (size_t i = 0; i < d.ntracks; i++)
        named |= strcmp(d.tracks[i].name, "CUDA API (2)") == 0;
    cr_expect(named, "the row beside CUDA API is CUDA API (2)");
    decoded_free(&d);
    cp_trace_free(&t);
    remove_tmp();
}

/* Kernels of one stream that overlap (programmatic dependent launch lets
 * the next begin before the last ends) keep their bounds on two rows of
 * the lane, and the rows are reused: the third nests on the first. */
Test(perfetto_pb, overlapping_work_of_one_stream_keeps_its_bounds)
{
    make_tmp();
    cp_trace t;
    cp_trace_init(&t);
    cp_activity items[] = {
        {.kind = CP_ACT_KERNEL, .start = 1000, .end = 2000, .stream = 7, .name = "producer"},
        {.kind = CP_ACT_KERNEL, .start = 1800, .end = 2600, .stream = 7, .name = "consumer"},
        {.kind = CP_ACT_KERNEL, .start = 2100, .end = 2300, .stream = 7, .name = "third"},
        {.kind = CP_ACT_KERNEL, .start = 2600, .end = 2700, .stream = 7, .name = "fourth"},
    };
    for (size_t i = 0; i < sizeof items / sizeof *items; i++)
        cr_assert_eq(cp_trace_add(&t, &items[i]), 0);
    decoded d;
    write_then_decode(&t, "pdl", "v", &d);
    expect_same_slices(&d, &t, "cuproof pdl / v");
    cr_expect_eq(rows_beside(&d), 1, "one row beside the lane");
    decoded_free(&d);
    cp_trace_free(&t);
    remove_tmp();
}

/* The writer takes a track's records a little out of order (a thread's
 * calls come as they end, the driver's call before the runtime call that
 * made it) and still nests them, without counting any as unordered; records
 * further out than it holds are written unchecked and counted, and then
 * the decoder sees slices with another's end: the check can fail. */
Test(perfetto_pb, records_out_of_order_are_held_back_or_counted)
{
    make_tmp();
    cp_trace t, reversed;
    two_threads(&t, false);
    cp_trace_init(&reversed);
    cr_assert_eq(cp_trace_add_process(&reversed, &t.processes[0]), 0);
    for (size_t i = t.n; i-- > 0;)
        cr_assert_eq(cp_trace_add(&reversed, &t.items[i]), 0);
    decoded d;
    cr_expect_eq(stream_then_decode(&reversed, "", &d), 0);
    expect_same_slices(&d, &t, "");
    decoded_free(&d);

    /* Two of the calls, then 40 short calls after them, then the runtime
     * calls that enclose the first two, far out of order: they cannot be
     * checked. */
    cp_trace late;
    cp_trace_init(&late);
    cr_assert_eq(cp_trace_add_process(&late, &t.processes[0]), 0);
    const size_t inner[] = {2, 4};
    for (size_t k = 0; k < 2; k++)
        cr_assert_eq(cp_trace_add(&late, &t.items[inner[k]]), 0);
    for (uint64_t i = 0; i < 40; i++) {
        cp_activity a = {.kind = CP_ACT_RUNTIME, .start = 1000 + 10 * i, .end = 1005 + 10 * i,
                         .name = "cudaGetLastError"};
        cr_assert_eq(cp_trace_add(&late, &a), 0);
    }
    const size_t outer[] = {1, 3};
    for (size_t k = 0; k < 2; k++)
        cr_assert_eq(cp_trace_add(&late, &t.items[outer[k]]), 0);
    cr_expect_eq(stream_then_decode(&late, "", &d), 2,
                 "the two runtime calls came after 40 later ones");
    size_t n;
    slice *got = rebuild(&d, &n);
    cr_assert_eq(n, late.n);
    cr_expect_gt(wrong_ends(got, n, &late), 0, "unchecked slices should have taken others' ends");
    free(got);
    decoded_free(&d);
    cp_trace_free(&late);
    cp_trace_free(&reversed);
    cp_trace_free(&t);
    remove_tmp();
}

Test(perfetto_pb, processes_get_their_pid_and_command)
{
    make_tmp();
    cp_trace t;
    cp_trace_init(&t);
    cp_process p = {.pid = 4242, .command = "python3 train.py"};
    cr_assert_eq(cp_trace_add_process(&t, &p), 0);
    p = (cp_process){.pid = 4343, .command = "worker --rank 1"};
    cr_assert_eq(cp_trace_add_process(&t, &p), 1);
    /* The same correlation id in both: two flows, not one. */
    for (uint32_t k = 0; k < 2; k++) {
        cp_activity call = {.kind = CP_ACT_RUNTIME, .start = 100 + k, .end = 200, .process = k,
                            .correlation = 9, .name = "cudaLaunchKernel"};
        cp_activity kernel = {.kind = CP_ACT_KERNEL, .start = 300 + k, .end = 400, .process = k,
                              .correlation = 9, .context = 1, .stream = 13, .name = "k"};
        cr_assert_eq(cp_trace_add(&t, &call), 0);
        cr_assert_eq(cp_trace_add(&t, &kernel), 0);
    }
    decoded d;
    write_then_decode(&t, "exec", "program", &d);
    expect_same_slices(&d, &t, "");
    size_t processes = 0;
    for (size_t i = 0; i < d.ntracks; i++) {
        const track *tr = &d.tracks[i];
        if (!tr->process)
            continue;
        processes++;
        cr_expect(tr->pid == 4242 || tr->pid == 4343);
        cr_expect_str_eq(tr->name, tr->pid == 4242 ? "python3 train.py" : "worker --rank 1");
    }
    cr_expect_eq(processes, 2);
    cr_expect_neq(flow_at(&d, 300, true), flow_at(&d, 301, true));
    cr_expect_eq(flow_at(&d, 100, false), flow_at(&d, 300, true));
    cr_expect_eq(flow_at(&d, 101, false), flow_at(&d, 301, true));
    decoded_free(&d);
    cp_trace_free(&t);
    remove_tmp();
}

/* The stream 13 lanes of `d`: how many, and that each is named as its
 * process's should be (4242's by its name, the others by their number). */
static void expect_stream_13_lanes(const decoded *d, const char *how)
{
    size_t named = 0, numbered = 0;
    for (size_t i = 0; i < d->ntracks; i++) {
        const track *tr = &d->tracks[i];
        if (!strstr(tr->name, "(stream 13)") && !strstr(tr->name, " stream 13"))
            continue;
        const char *root = root_of(d, tr->uuid);
        if (strcmp(root, "python3 train.py") == 0) {
            cr_expect_str_eq(tr->name, "GPU 0 ctx 1 copy \"in\" <&> (stream 13)", "%s", how);
            named++;
        } else if (strcmp(root, "python3 train.py --worker 1") == 0) {
            cr_expect_str_eq(tr->name, "GPU 0 ctx 1 stream 13", "%s: 4250's", how);
            numbered++;
        } else {
            cr_expect_str_eq(root, "python3 train.py --worker 2", "%s", how);
            cr_expect_str_eq(tr->name, "GPU 1 ctx 1 stream 13", "%s: 4251's", how);
            numbered++;
        }
        cr_expect_null(strstr(tr->name, "not on GPU 1"), "%s", how);
    }
    cr_expect_eq(named, 1, "%s", how);
    cr_expect_eq(numbered, 2, "%s", how);
}

/*
 * A stream the program named is the track "GPU G ctx C NAME (stream N)"
 * under its process, written whole and streamed (the writer the streamed
 * program uses, naming its streams from the reader's trace); the other
 * processes' stream 13 keep their number: 4250's on the same device and
 * context, 4251's on device 1 although 4251 named a stream 13 of device
 * 0, where it ran nothing.
 */
Test(perfetto_pb, a_named_stream_is_its_track_and_no_other)
{
    make_tmp();
    cp_trace t;
    named_program_read(&t);
    decoded d;
    write_then_decode(&t, "exec", "program", &d);
    cr_expect_eq(d.problems, 0, "%s", d.first_problem);
    expect_stream_13_lanes(&d, "whole");
    decoded_free(&d);
    stream_then_decode(&t, "program", &d);
    cr_expect_eq(d.problems, 0, "%s", d.first_problem);
    expect_stream_13_lanes(&d, "streamed");
    decoded_free(&d);
    cp_trace_free(&t);
    remove_tmp();
}

Test(perfetto_pb, the_writer_streams_through_a_bounded_buffer)
{
    make_tmp();
    char path[256];
    snprintf(path, sizeof path, "%s/stream.perfetto-trace", tmp);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    /* No stdio buffer of its own: what reaches the file is what the
     * writer wrote out. */
    setvbuf(f, NULL, _IONBF, 0);
    const uint64_t origin = 1795460503028750985ULL;
    cp_pb_writer *w = cp_pb_open(f, path, origin);
    cr_assert_not_null(w);
    cr_assert_eq(cp_pb_add_process(w, 0, 0, "streamed"), 0);
    long before = 0;
    for (uint32_t i = 0; i < 100000; i++) {
        cp_activity a = {.kind = CP_ACT_KERNEL, .start = origin + 500ULL * i,
                         .end = origin + 500ULL * i + 400, .context = 1, .stream = 10 + i % 4,
                         .correlation = i + 1, .name = "k"};
        cr_assert_eq(cp_pb_add_activity(w, &a), 0);
        if (i % 5000 == 4999) {
            /* 5000 kernels take over 64 KiB: the file has grown since. */
            long written = ftell(f);
            cr_expect_gt(written, before, "written while streaming, at record %u", i + 1);
            before = written;
        }
    }
    long streamed = ftell(f);
    cr_assert_eq(cp_pb_close(w, NULL), 0, "%s", cp_last_error());
    long size = ftell(f);
    cr_assert_eq(fclose(f), 0);
    /* At most one buffer, and the slices each lane holds to write them in
     * order: 32 per lane of 4, under 100 bytes each. */
    cr_expect_lt(size - streamed, 64 * 1024 + 256 + 4 * 32 * 100,
                 "at most one buffer and the lanes' held slices (%ld bytes) held back",
                 size - streamed);
    decoded d;
    decode(path, &d);
    cr_expect_eq(d.problems, 0, "%s", d.first_problem);
    cr_expect_eq(d.nevents, 200000);
    decoded_free(&d);
    remove_tmp();
}

Test(perfetto_pb, activities_in_any_order_and_before_the_origin)
{
    make_tmp();
    /* No two events at one time on a track, so any order nests the same. */
    const uint64_t base = 1000000000000ULL;
    cp_trace t;
    cp_trace_init(&t);
    cp_activity items[] = {
        {.kind = CP_ACT_KERNEL, .start = base + 0, .end = base + 10, .stream = 7, .name = "a",
         .correlation = 2},
        {.kind = CP_ACT_KERNEL, .start = base + 15, .end = base + 25, .stream = 7, .name = "b",
         .correlation = 3},
        {.kind = CP_ACT_MEMCPY, .start = base + 5, .end = base + 30, .stream = 8,
         .copy_dir = CP_COPY_HTOD, .bytes = 64, .correlation = 4},
        {.kind = CP_ACT_RUNTIME, .start = base - 20, .end = base - 2, .name = "launch",
         .correlation = 2},
        {.kind = CP_ACT_RUNTIME, .start = base + 1, .end = base + 3, .name = "launch",
         .correlation = 3},
        {.kind = CP_ACT_RANGE, .start = base - 50, .end = base + 100, .name = "outer"},
        {.kind = CP_ACT_RANGE, .start = base + 10, .end = base + 40, .name = "inner"},
    };
    for (size_t i = 0; i < sizeof items / sizeof *items; i++)
        cr_assert_eq(cp_trace_add(&t, &items[i]), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/any.perfetto-trace", tmp);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    /* An origin after some starts: those are written with absolute times. */
    cp_pb_writer *w = cp_pb_open(f, path, base);
    cr_assert_not_null(w);
    cr_assert_eq(cp_pb_add_process(w, 0, 0, "any order"), 0);
    for (size_t i = t.n; i-- > 0;)
        cr_assert_eq(cp_pb_add_activity(w, &t.items[i]), 0);
    cr_assert_eq(cp_pb_close(w, NULL), 0, "%s", cp_last_error());
    cr_assert_eq(fclose(f), 0);
    decoded d;
    decode(path, &d);
    expect_same_slices(&d, &t, "any order");
    cr_expect_eq(flow_at(&d, base - 20, false), flow_at(&d, base, true));
    decoded_free(&d);
    /* A process described after its first record is refused. */
    f = fopen(path, "wb");
    cr_assert_not_null(f);
    w = cp_pb_open(f, path, 0);
    cr_assert_not_null(w);
    cr_assert_eq(cp_pb_add_activity(w, &t.items[0]), 0);
    cr_expect_eq(cp_pb_add_process(w, 0, 1, "late"), CP_EINVAL);
    cr_expect_eq(cp_pb_close(w, NULL), CP_EINVAL);
    fclose(f);
    cp_trace_free(&t);
    remove_tmp();
}

Test(perfetto_pb, an_unwritable_directory_names_the_file)
{
    cp_trace t;
    edge_trace(&t);
    cr_expect_eq(cp_perfetto_pb_write("/nonexistent/cuproof", "edge", "v", &t), CP_EIO);
    cr_expect_not_null(strstr(cp_last_error(), "/nonexistent/cuproof/edge.v.perfetto-trace"), "%s",
                       cp_last_error());
    cp_trace_free(&t);
}

Test(perfetto_pb, a_full_disk_is_an_io_error)
{
    FILE *f = fopen("/dev/full", "wb");
    if (!f)
        cr_skip_test("no /dev/full here");
    cp_pb_writer *w = cp_pb_open(f, "/dev/full", 1);
    cr_assert_not_null(w);
    int rc = 0;
    for (uint32_t i = 0; i < 10000 && rc == 0; i++) {
        cp_activity a = {.kind = CP_ACT_KERNEL, .start = 10 + i, .end = 20 + i, .name = "k"};
        rc = cp_pb_add_activity(w, &a);
    }
    int closed = cp_pb_close(w, NULL);
    cr_expect(rc == CP_EIO || closed == CP_EIO, "add %d, close %d", rc, closed);
    cr_expect_not_null(strstr(cp_last_error(), "/dev/full"), "%s", cp_last_error());
    fclose(f);
}

/* run and exec write the protobuf past 200000 records, the Chrome trace up
 * to it, and the report links the one written. */
Test(perfetto_pb, run_and_exec_pick_the_format_by_size)
{
    cp_trace t;
    cp_trace_init(&t);
    t.n = CP_PERFETTO_PROTO_RECORDS;
    cr_expect_str_eq(cp_perfetto_suffix(&t), "perfetto.json");
    t.n = CP_PERFETTO_PROTO_RECORDS + 1;
    cr_expect_str_eq(cp_perfetto_suffix(&t), "perfetto-trace");
}
