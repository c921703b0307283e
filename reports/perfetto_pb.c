/*
 * Perfetto's native trace format, written packet by packet (perfetto_pb.h
 * says what a trace shows). The field numbers are those of Perfetto's
 * protos (protos/perfetto/trace/...), each named beside its definition;
 * the encoding is pb.c's.
 *
 * The file is one Trace message: `repeated TracePacket packet = 1`
 * (trace.proto), each packet a length-delimited field 1, so packets can
 * be appended one at a time. Every packet is on one sequence
 * (trusted_packet_sequence_id 1), which is what interning needs: the
 * first packet clears the sequence's incremental state
 * (SEQ_INCREMENTAL_STATE_CLEARED) and every later one says it needs it
 * (SEQ_NEEDS_INCREMENTAL_STATE).
 *
 * Time: CUPTI's timestamps are nanoseconds, written as the packets'
 * timestamps on Perfetto's default clock, BOOTTIME (CUPTI's clock counts
 * from 1970, not from boot, but a trace with one clock needs no other: the
 * times read in Perfetto are CUPTI's). They are near 2^61, nine bytes
 * as varints, so with an origin the packets carry nanoseconds after it
 * instead, on a clock of this sequence (id 64, the first of the
 * sequence-scoped ids 64..127) that the first packet makes the default
 * (TracePacketDefaults) and ties to BOOTTIME with a ClockSnapshot (64 at 0
 * = BOOTTIME at the origin): five bytes for a trace of seconds, the same
 * absolute times in Perfetto.
 */
#include <cuproof/internal/perfetto.h>
#include <cuproof/units.h>
#include "reports/perfetto_pb.h"

#include "reports/pb.h"
#include "reports/rows.h"

#include <cuproof/error.h>
#include <cuproof/internal/grow.h>


#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* trace.proto: message Trace { repeated TracePacket packet = 1; } */
#define TRACE_PACKET 1

/* trace_packet.proto, message TracePacket. */
#define PKT_CLOCK_SNAPSHOT 6   /* ClockSnapshot clock_snapshot = 6 */
#define PKT_TIMESTAMP 8        /* optional uint64 timestamp = 8 */
#define PKT_SEQUENCE_ID 10     /* uint32 trusted_packet_sequence_id = 10 */
#define PKT_TRACK_EVENT 11     /* TrackEvent track_event = 11 */
#define PKT_INTERNED_DATA 12   /* optional InternedData interned_data = 12 */
#define PKT_SEQUENCE_FLAGS 13  /* optional uint32 sequence_flags = 13 */
#define PKT_CLOCK_ID 58        /* optional uint32 timestamp_clock_id = 58 */
#define PKT_DEFAULTS 59        /* optional TracePacketDefaults trace_packet_defaults = 59 */
#define PKT_TRACK_DESCRIPTOR 60 /* TrackDescriptor track_descriptor = 60 */
/* enum SequenceFlags */
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE 2

/* trace_packet_defaults.proto: optional uint32 timestamp_clock_id = 58. */
#define DEFAULTS_CLOCK_ID 58

/* clock_snapshot.proto: ClockSnapshot { repeated Clock clocks = 1; },
 * Clock { optional uint32 clock_id = 1; optional uint64 timestamp = 2; }. */
#define SNAPSHOT_CLOCKS 1
#define CLOCK_ID 1
#define CLOCK_TIMESTAMP 2
#define CLOCK_BOOTTIME 6 /* builtin_clock.proto: BUILTIN_CLOCK_BOOTTIME = 6 */
#define CLOCK_OURS 64    /* the first sequence-scoped clock id */

/* track_descriptor.proto, message TrackDescriptor. */
#define TD_UUID 1        /* optional uint64 uuid = 1 */
#define TD_NAME 2        /* optional string name = 2 */
#define TD_PROCESS 3     /* optional ProcessDescriptor process = 3 */
#define TD_PARENT_UUID 5 /* optional uint64 parent_uuid = 5 */

/* process_descriptor.proto, message ProcessDescriptor. */
#define PD_PID 1          /* optional int32 pid = 1 */
#define PD_CMDLINE 2      /* repeated string cmdline = 2 */
#define PD_PROCESS_NAME 6 /* optional string process_name = 6 */

/* track_event.proto, message TrackEvent. */
#define TE_CATEGORY_IIDS 3      /* repeated uint64 category_iids = 3 */
#define TE_DEBUG_ANNOTATIONS 4  /* repeated DebugAnnotation debug_annotations = 4 */
#define TE_TYPE 9               /* optional Type type = 9 */
#define TE_NAME_IID 10          /* uint64 name_iid = 10 */
#define TE_TRACK_UUID 11        /* optional uint64 track_uuid = 11 */
#define TE_FLOW_IDS 47          /* repeated fixed64 flow_ids = 47 */
#define TYPE_SLICE_BEGIN 1
#define TYPE_SLICE_END 2

/* debug_annotation.proto, message DebugAnnotation. */
#define DA_NAME_IID 1         /* uint64 name_iid = 1 */
#define DA_UINT_VALUE 3       /* uint64 uint_value = 3 */
#define DA_STRING_VALUE_IID 17 /* uint64 string_value_iid = 17 */

/* interned_data.proto, message InternedData: each entry is {iid = 1,
 * name (or str) = 2}: EventCategory, EventName, DebugAnnotationName and
 * InternedString alike. */
#define ID_EVENT_CATEGORIES 1            /* repeated EventCategory event_categories = 1 */
#define ID_EVENT_NAMES 2                 /* repeated EventName event_names = 2 */
#define ID_DEBUG_ANNOTATION_NAMES 3      /* repeated DebugAnnotationName ... = 3 */
#define ID_DEBUG_ANNOTATION_STRINGS 29   /* repeated InternedString debug_annotation_string_values = 29 */
#define ENTRY_IID 1
#define ENTRY_NAME 2

#define SEQUENCE_ID 1

/* Packets are written out once this much is buffered: the writer's memory
 * stays bounded whatever the trace's length. */
#define FLUSH_BYTES (64 * 1024)

/* The interning tables: one per InternedData field, iids counted from 1. */
enum { NS_CATEGORY, NS_NAME, NS_ANNOTATION, NS_STRING, NS_COUNT };
static const uint32_t ns_field[NS_COUNT] = {ID_EVENT_CATEGORIES, ID_EVENT_NAMES,
                                            ID_DEBUG_ANNOTATION_NAMES,
                                            ID_DEBUG_ANNOTATION_STRINGS};

typedef struct str_slot {
    char *s; /* owned; NULL when the slot is free */
    uint64_t hash, iid;
} str_slot;

typedef struct str_map {
    str_slot *slots;
    size_t cap, n;
    uint64_t next_iid;
} str_map;

/* The tracks described so far, by what they stand for: a thread's calls
 * and its ranges have a track each (THREAD, THREAD_NVTX), as in Nsight
 * Systems, so that ranges, which a program's files give only when the
 * file ends, need not come in order with the calls. `row` is the row
 * beside the track (rows.h), 0 for the track itself. */
enum {
    TRACK_ROOT = 1,
    TRACK_API,
    TRACK_NVTX,
    TRACK_CONTEXT,
    TRACK_LANE,
    TRACK_THREAD,
    TRACK_THREAD_NVTX
};

typedef struct track_key {
    uint32_t kind, process, device, context, stream, row;
} track_key;

typedef struct track_slot {
    track_key key;
    uint64_t uuid; /* 0 when the slot is free */
    uint32_t held; /* the slices waiting on a track of slices: index + 1 in w->held; 0 for none */
} track_slot;

/*
 * Slices of one track wait here to be written in order of start, so that
 * they are dealt to rows in that order (rows.h) even when they come a
 * little out of it: a thread's calls come as they end, a call after the
 * calls it made, and a lane's work as CUPTI delivers it. The records stay
 * in their slots; `order` holds the slots sorted with the next to write
 * last, so that a record arriving in order costs a shift of a few bytes.
 * The depth bounds the writer's memory per track.
 */
#define HELD_DEPTH 32

typedef struct held {
    track_key key; /* the track's row 0 */
    uint64_t uuid;
    cp_activity slots[HELD_DEPTH];
    uint8_t order[HELD_DEPTH];
    int n;
} held;

/* Interned entries a packet defines: new since the sequence began. */
typedef struct pending {
    struct {
        int ns;
        uint64_t iid;
        const char *s;
    } items[16]; /* an activity defines at most 11: its name, category, annotations */
    int n;
} pending;

struct cp_pb_writer {
    FILE *f;
    char *path;
    cp_pb out;
    uint64_t origin;
    int err;
    uint64_t next_uuid;
    track_slot *tracks;
    size_t tracks_cap, ntracks;
    str_map maps[NS_COUNT];
    held **held;
    size_t nheld, held_cap;
    cp_rows *rows;
    const cp_trace *streams; /* names the streams' tracks; may be NULL */
};

void cp_pb_name_streams(cp_pb_writer *w, const cp_trace *t)
{
    w->streams = t;
}

uint64_t cp_pb_flow_id(uint32_t process, uint32_t correlation)
{
    return ((uint64_t)process + 1) << 32 | correlation;
}

/* Records the writer's first error and returns it. */
static int fail(cp_pb_writer *w, int code)
{
    if (!w->err)
        w->err = code;
    return w->err;
}

static int out_of_memory(cp_pb_writer *w)
{
    if (!w->err)
        cp_failf(CP_ENOMEM, "out of memory writing %s", w->path);
    return fail(w, CP_ENOMEM);
}

/* FNV-1a over bytes, then over the key's fields for tracks. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 1099511628211ULL;
    }
    return h;
}

#define FNV_BASIS 14695981039346656037ULL

static uint64_t track_hash(const track_key *k)
{
    uint32_t v[6] = {k->kind, k->process, k->device, k->context, k->stream, k->row};
    return fnv(FNV_BASIS, v, sizeof v);
}

static bool same_track(const track_key *a, const track_key *b)
{
    return a->kind == b->kind && a->process == b->process && a->device == b->device &&
           a->context == b->context && a->stream == b->stream && a->row == b->row;
}

/* Open addressing with linear probing, kept at most half full. */
static track_slot *track_find(cp_pb_writer *w, const track_key *k)
{
    if (!w->tracks_cap)
        return NULL;
    size_t mask = w->tracks_cap - 1;
    for (size_t i = track_hash(k) & mask;; i = (i + 1) & mask) {
        track_slot *s = &w->tracks[i];
        if (!s->uuid || same_track(&s->key, k))
            return s;
    }
}

static bool tracks_grow(cp_pb_writer *w)
{
    size_t cap = w->tracks_cap ? 2 * w->tracks_cap : 64;
    track_slot *old = w->tracks, *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    size_t old_cap = w->tracks_cap;
    w->tracks = slots;
    w->tracks_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].uuid)
            *track_find(w, &old[i].key) = old[i];
    free(old);
    return true;
}

static str_slot *str_find(const str_map *m, const char *s, uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        str_slot *slot = &m->slots[i];
        if (!slot->s || (slot->hash == h && strcmp(slot->s, s) == 0))
            return slot;
    }
}

static bool str_grow(str_map *m)
{
    size_t cap = m->cap ? 2 * m->cap : 64;
    str_slot *old = m->slots, *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    size_t old_cap = m->cap;
    m->slots = slots;
    m->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].s)
            *str_find(m, old[i].s, old[i].hash) = old[i];
    free(old);
    return true;
}

/* The iid of `s` in table `ns`; a string met for the first time gets the
 * next iid and goes on `p`, to be defined in the packet that first uses
 * it. Returns 0 when out of memory (an iid is never 0). */
static uint64_t intern(cp_pb_writer *w, int ns, const char *s, pending *p)
{
    str_map *m = &w->maps[ns];
    if (2 * (m->n + 1) > m->cap && !str_grow(m)) {
        out_of_memory(w);
        return 0;
    }
    uint64_t h = fnv(FNV_BASIS, s, strlen(s));
    str_slot *slot = str_find(m, s, h);
    if (slot->s)
        return slot->iid;
    char *copy = strdup(s);
    if (!copy) {
        out_of_memory(w);
        return 0;
    }
    *slot = (str_slot){copy, h, ++m->next_iid};
    m->n++;
    int k = p->n++;
    p->items[k].ns = ns;
    p->items[k].iid = slot->iid;
    p->items[k].s = copy;
    return slot->iid;
}

/* Writes out what is buffered, checking the write. */
static int flush(cp_pb_writer *w)
{
    if (w->out.failed)
        return out_of_memory(w);
    if (w->out.len && fwrite(w->out.data, 1, w->out.len, w->f) != w->out.len) {
        if (!w->err)
            cp_failf(CP_EIO, "cannot write %s: %s", w->path, strerror(errno));
        return fail(w, CP_EIO);
    }
    cp_pb_reset(&w->out);
    return 0;
}

/* A packet's opening: Trace.packet, the sequence and its flags. */
static void packet_begin(cp_pb_writer *w, uint32_t flags)
{
    cp_pb_begin(&w->out, TRACE_PACKET);
    cp_pb_varint(&w->out, PKT_SEQUENCE_ID, SEQUENCE_ID);
    cp_pb_varint(&w->out, PKT_SEQUENCE_FLAGS, flags);
}

static void packet_time(cp_pb_writer *w, uint64_t t)
{
    if (w->origin && t >= w->origin) {
        cp_pb_varint(&w->out, PKT_TIMESTAMP, t - w->origin);
    } else {
        cp_pb_varint(&w->out, PKT_TIMESTAMP, t);
        if (w->origin)
            cp_pb_varint(&w->out, PKT_CLOCK_ID, CLOCK_BOOTTIME);
    }
}

/* The InternedData entries a packet defines. */
static void packet_interned(cp_pb_writer *w, const pending *p)
{
    if (!p->n)
        return;
    cp_pb_begin(&w->out, PKT_INTERNED_DATA);
    for (int i = 0; i < p->n; i++) {
        cp_pb_begin(&w->out, ns_field[p->items[i].ns]);
        cp_pb_varint(&w->out, ENTRY_IID, p->items[i].iid);
        cp_pb_string(&w->out, ENTRY_NAME, p->items[i].s);
        cp_pb_end(&w->out);
    }
    cp_pb_end(&w->out);
}

cp_pb_writer *cp_pb_open(FILE *f, const char *path, uint64_t origin_ns)
{
    cp_pb_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path ? path : "the trace"))) {
        free(w);
        cp_failf(CP_ENOMEM, "out of memory writing %s", path ? path : "a trace");
        return NULL;
    }
    if (!(w->rows = cp_rows_new())) {
        free(w->path);
        free(w);
        cp_failf(CP_ENOMEM, "out of memory writing %s", path ? path : "a trace");
        return NULL;
    }
    w->f = f;
    w->origin = origin_ns;
    w->next_uuid = 1;
    cp_pb_init(&w->out);
    packet_begin(w, SEQ_INCREMENTAL_STATE_CLEARED);
    if (origin_ns) {
        cp_pb_begin(&w->out, PKT_DEFAULTS);
        cp_pb_varint(&w->out, DEFAULTS_CLOCK_ID, CLOCK_OURS);
        cp_pb_end(&w->out);
        cp_pb_begin(&w->out, PKT_CLOCK_SNAPSHOT);
        cp_pb_begin(&w->out, SNAPSHOT_CLOCKS);
        cp_pb_varint(&w->out, CLOCK_ID, CLOCK_BOOTTIME);
        cp_pb_varint(&w->out, CLOCK_TIMESTAMP, origin_ns);
        cp_pb_end(&w->out);
        cp_pb_begin(&w->out, SNAPSHOT_CLOCKS);
        cp_pb_varint(&w->out, CLOCK_ID, CLOCK_OURS);
        cp_pb_varint(&w->out, CLOCK_TIMESTAMP, 0);
        cp_pb_end(&w->out);
        cp_pb_end(&w->out);
    }
    cp_pb_end(&w->out);
    return w;
}

/* Emits a TrackDescriptor and remembers it under `k`; returns its uuid, or
 * 0 when out of memory. A process track (pid non-zero) gets a
 * ProcessDescriptor, the others a name. */
static uint64_t describe(cp_pb_writer *w, const track_key *k, uint64_t parent, uint32_t pid,
                         const char *name)
{
    if (2 * (w->ntracks + 1) > w->tracks_cap && !tracks_grow(w)) {
        out_of_memory(w);
        return 0;
    }
    track_slot *slot = track_find(w, k);
    *slot = (track_slot){*k, w->next_uuid++, 0};
    w->ntracks++;
    packet_begin(w, SEQ_NEEDS_INCREMENTAL_STATE);
    cp_pb_begin(&w->out, PKT_TRACK_DESCRIPTOR);
    cp_pb_varint(&w->out, TD_UUID, slot->uuid);
    if (parent)
        cp_pb_varint(&w->out, TD_PARENT_UUID, parent);
    if (pid) {
        cp_pb_begin(&w->out, TD_PROCESS);
        cp_pb_varint(&w->out, PD_PID, pid);
        cp_pb_string(&w->out, PD_CMDLINE, name);
        cp_pb_string(&w->out, PD_PROCESS_NAME, name);
        cp_pb_end(&w->out);
    } else {
        cp_pb_string(&w->out, TD_NAME, name);
    }
    cp_pb_end(&w->out);
    cp_pb_end(&w->out);
    return slot->uuid;
}

int cp_pb_add_process(cp_pb_writer *w, uint32_t index, uint32_t pid, const char *name)
{
    if (w->err)
        return w->err;
    track_key k = {TRACK_ROOT, index, 0, 0, 0, 0};
    track_slot *slot = track_find(w, &k);
    if (slot && slot->uuid) {
        cp_failf(CP_EINVAL, "%s: process %" PRIu32 " described twice or after its first record",
                 w->path, index);
        return fail(w, CP_EINVAL);
    }
    if (!describe(w, &k, 0, pid, name && *name ? name : "process"))
        return w->err;
    return 0;
}

/* The uuid of the track `k`, described (with its parents) on first sight;
 * 0 when out of memory. */
static uint64_t track_of(cp_pb_writer *w, const track_key *k)
{
    track_slot *slot = track_find(w, k);
    if (slot && slot->uuid)
        return slot->uuid;
    char name[CP_STREAM_LABEL_MAX + 64]; /* room for a named stream's label */
    track_key parent_key = {TRACK_ROOT, k->process, 0, 0, 0, 0};
    switch (k->kind) {
    case TRACK_ROOT:
        snprintf(name, sizeof name, "process %" PRIu32, k->process);
        return describe(w, k, 0, 0, name);
    case TRACK_API:
        snprintf(name, sizeof name, "CUDA API");
        break;
    case TRACK_NVTX:
        snprintf(name, sizeof name, "NVTX");
        break;
    case TRACK_THREAD:
        snprintf(name, sizeof name, "thread %" PRIu32, k->stream);
        break;
    case TRACK_THREAD_NVTX:
        snprintf(name, sizeof name, "thread %" PRIu32 " NVTX", k->stream);
        break;
    case TRACK_CONTEXT:
        snprintf(name, sizeof name, "GPU %" PRIu32 " ctx %" PRIu32, k->device, k->context);
        break;
    default:
        parent_key = (track_key){TRACK_CONTEXT, k->process, k->device, k->context, 0, 0};
    {
        char stream[CP_STREAM_LABEL_MAX];
        snprintf(name, sizeof name, "GPU %" PRIu32 " ctx %" PRIu32 " %s", k->device, k->context,
                 cp_stream_label(w->streams, k->process, k->device, k->context, k->stream,
                                 stream, sizeof stream));
    }
        break;
    }
    if (k->row) {
        size_t len = strlen(name);
        snprintf(name + len, sizeof name - len, " (%" PRIu32 ")", k->row + 1);
    }
    uint64_t parent = track_of(w, &parent_key);
    return parent ? describe(w, k, parent, 0, name) : 0;
}

/* One debug annotation: an unsigned value, or an interned string's iid. */
typedef struct annotation {
    uint64_t name_iid, value;
    bool string;
} annotation;

static void annotate(cp_pb_writer *w, pending *p, annotation *list, int *n, const char *name,
                     uint64_t value)
{
    list[*n] = (annotation){intern(w, NS_ANNOTATION, name, p), value, false};
    (*n)++;
}

static void annotate_string(cp_pb_writer *w, pending *p, annotation *list, int *n,
                            const char *name, const char *value)
{
    uint64_t name_iid = intern(w, NS_ANNOTATION, name, p);
    list[*n] = (annotation){name_iid, intern(w, NS_STRING, value, p), true};
    (*n)++;
}

/* Writes the slice of `a`, whose track's row 0 is `base` (uuid
 * `base_uuid`), on the row where it nests. */
static int write_slice(cp_pb_writer *w, const track_key *base, uint64_t base_uuid,
                       const cp_activity *a)
{
    int64_t row = cp_rows_place(w->rows, base_uuid, a->start, a->end);
    if (row < 0)
        return out_of_memory(w);
    track_key k = *base;
    k.row = (uint32_t)row;
    uint64_t track = row ? track_of(w, &k) : base_uuid;
    if (!track)
        return w->err;
    bool device = cp_activity_is_device_work(a);

    /* Copies are named by their direction, as in the Chrome export. */
    pending p = {.n = 0};
    /* The label the HTML timeline shows too (cuproof/units.h): an API
     * call without its "_v3020"; the trace JSON keeps the raw name. */
    char label[256];
    const char *name = cp_activity_label_str(a, label, sizeof label);
    if (!*name)
        name = cp_act_kind_name(a->kind);
    uint64_t name_iid = intern(w, NS_NAME, name, &p), category_iid = 0;
    annotation notes[6];
    int nnotes = 0;
    char text[96];
    if (a->kind == CP_ACT_MEMCPY || a->kind == CP_ACT_MEMSET || (a->kind == CP_ACT_RANGE && a->comm))
        annotate(w, &p, notes, &nnotes, "bytes", a->bytes);
    if (a->kind == CP_ACT_RANGE && a->comm) {
        /* An NCCL call's payload: its communicator (and peer, below). */
        snprintf(text, sizeof text, "%016llx", (unsigned long long)a->comm);
        annotate_string(w, &p, notes, &nnotes, "communicator", text);
        if (a->peer >= 0)
            annotate(w, &p, notes, &nnotes, "peer", (uint64_t)a->peer);
    }
    if (a->kind == CP_ACT_MEMCPY) {
        snprintf(text, sizeof text, "%s -> %s%s", cp_mem_kind_name(a->src),
                 cp_mem_kind_name(a->dst), a->async ? ", async" : "");
        annotate_string(w, &p, notes, &nnotes, "copy", text);
    }
    if (a->kind == CP_ACT_KERNEL && a->grid[0]) {
        snprintf(text, sizeof text, "(%" PRIu32 ", %" PRIu32 ", %" PRIu32 ")", a->grid[0],
                 a->grid[1], a->grid[2]);
        annotate_string(w, &p, notes, &nnotes, "grid", text);
        snprintf(text, sizeof text, "(%" PRIu32 ", %" PRIu32 ", %" PRIu32 ")", a->block[0],
                 a->block[1], a->block[2]);
        annotate_string(w, &p, notes, &nnotes, "block", text);
    }
    if (device && a->graph_id) {
        annotate(w, &p, notes, &nnotes, "graph_id", a->graph_id);
        annotate(w, &p, notes, &nnotes, "graph_node", a->graph_node);
        snprintf(text, sizeof text, "graph %" PRIu32, a->graph_id);
        category_iid = intern(w, NS_CATEGORY, text, &p);
    }
    if (w->err)
        return w->err;

    uint64_t end = a->end > a->start ? a->end : a->start;
    packet_begin(w, SEQ_NEEDS_INCREMENTAL_STATE);
    packet_time(w, a->start);
    packet_interned(w, &p);
    cp_pb_begin(&w->out, PKT_TRACK_EVENT);
    cp_pb_varint(&w->out, TE_TYPE, TYPE_SLICE_BEGIN);
    cp_pb_varint(&w->out, TE_TRACK_UUID, track);
    cp_pb_varint(&w->out, TE_NAME_IID, name_iid);
    if (category_iid)
        cp_pb_varint(&w->out, TE_CATEGORY_IIDS, category_iid);
    if (a->correlation && a->kind != CP_ACT_RANGE)
        cp_pb_fixed64(&w->out, TE_FLOW_IDS, cp_pb_flow_id(a->process, a->correlation));
    for (int i = 0; i < nnotes; i++) {
        cp_pb_begin(&w->out, TE_DEBUG_ANNOTATIONS);
        cp_pb_varint(&w->out, DA_NAME_IID, notes[i].name_iid);
        cp_pb_varint(&w->out, notes[i].string ? DA_STRING_VALUE_IID : DA_UINT_VALUE,
                     notes[i].value);
        cp_pb_end(&w->out);
    }
    cp_pb_end(&w->out);
    cp_pb_end(&w->out);

    /* The end event repeats nothing of the begin: Perfetto closes the
     * innermost open slice of the track, so ends at one time are
     * interchangeable. */
    packet_begin(w, SEQ_NEEDS_INCREMENTAL_STATE);
    packet_time(w, end);
    cp_pb_begin(&w->out, PKT_TRACK_EVENT);
    cp_pb_varint(&w->out, TE_TYPE, TYPE_SLICE_END);
    cp_pb_varint(&w->out, TE_TRACK_UUID, track);
    cp_pb_end(&w->out);
    cp_pb_end(&w->out);
    return w->out.len >= FLUSH_BYTES || w->out.failed ? flush(w) : 0;
}

/* The slices waiting on the track of `slot`, made on first use. */
static held *held_of(cp_pb_writer *w, track_slot *slot)
{
    if (slot->held)
        return w->held[slot->held - 1];
    held **p = cp_grow(w->held, &w->held_cap, w->nheld, sizeof *p, 16);
    if (!p)
        return NULL;
    w->held = p;
    held *h = malloc(sizeof *h);
    if (!h)
        return NULL;
    h->key = slot->key;
    h->uuid = slot->uuid;
    h->n = 0;
    w->held[w->nheld++] = h;
    slot->held = (uint32_t)w->nheld;
    return h;
}

int cp_pb_add_activity(cp_pb_writer *w, const cp_activity *a)
{
    if (w->err)
        return w->err;
    /* A host record of a known thread goes on its thread's tracks, one for
     * its API calls and one for its ranges (calls of two threads overlap
     * without nesting, which one track cannot show); the thread is held in
     * the key's stream. */
    track_key k = {a->kind == CP_ACT_RANGE ? TRACK_NVTX : TRACK_API, a->process, 0, 0, 0, 0};
    if (cp_activity_is_device_work(a))
        k = (track_key){TRACK_LANE, a->process, a->device, a->context, a->stream, 0};
    else if (a->thread)
        k = (track_key){a->kind == CP_ACT_RANGE ? TRACK_THREAD_NVTX : TRACK_THREAD, a->process,
                        0, 0, a->thread, 0};
    /* One look-up for a track already described, the usual case. */
    track_slot *slot = track_find(w, &k);
    if ((!slot || !slot->uuid) && (!track_of(w, &k) || !(slot = track_find(w, &k))))
        return w->err ? w->err : out_of_memory(w);
    held *h = held_of(w, slot);
    if (!h)
        return out_of_memory(w);
    /* When the track's slices are all held, the first in order goes out
     * (`a` itself when it precedes them all) and leaves its slot. */
    cp_activity first;
    int free_slot = h->n;
    bool out = h->n == HELD_DEPTH;
    if (out && cp_rows_order(a, &h->slots[h->order[h->n - 1]]) < 0)
        return write_slice(w, &h->key, h->uuid, a);
    if (out) {
        free_slot = h->order[--h->n];
        first = h->slots[free_slot];
    }
    /* In at its place: below it those written after it, above it those
     * written before it or with it but come earlier. */
    int i = 0;
    while (i < h->n && cp_rows_order(a, &h->slots[h->order[i]]) < 0)
        i++;
    memmove(&h->order[i + 1], &h->order[i], (size_t)(h->n - i));
    h->order[i] = (uint8_t)free_slot;
    h->slots[free_slot] = *a;
    h->n++;
    return out ? write_slice(w, &h->key, h->uuid, &first) : 0;
}

int cp_pb_close(cp_pb_writer *w, uint64_t *unordered)
{
    if (unordered)
        *unordered = 0;
    if (!w)
        return 0;
    /* What the tracks still hold goes out, each track's in order. */
    for (size_t k = 0; k < w->nheld; k++) {
        held *h = w->held[k];
        while (!w->err && h->n > 0)
            write_slice(w, &h->key, h->uuid, &h->slots[h->order[--h->n]]);
        free(h);
    }
    free(w->held);
    if (unordered)
        *unordered = cp_rows_unordered(w->rows);
    cp_rows_free(w->rows);
    if (!w->err && flush(w) == 0 && fflush(w->f) != 0) {
        cp_failf(CP_EIO, "cannot write %s: %s", w->path, strerror(errno));
        fail(w, CP_EIO);
    }
    int rc = w->err;
    for (int ns = 0; ns < NS_COUNT; ns++) {
        for (size_t i = 0; i < w->maps[ns].cap; i++)
            free(w->maps[ns].slots[i].s);
        free(w->maps[ns].slots);
    }
    free(w->tracks);
    cp_pb_free(&w->out);
    free(w->path);
    free(w);
    return rc;
}

int cp_perfetto_pb_write(const char *dir, const char *case_name, const char *variant,
                         const cp_trace *t)
{
    char path[PATH_MAX + 256], title[160];
    snprintf(path, sizeof path, "%s/%s.%s.perfetto-trace", dir, case_name, variant);
    snprintf(title, sizeof title, "cuproof %s / %s", case_name, variant);
    const cp_activity **order = malloc((t->n ? t->n : 1) * sizeof *order);
    if (!order)
        return cp_failf(CP_ENOMEM, "out of memory writing %s", path);
    uint64_t origin = 0;
    for (size_t i = 0; i < t->n; i++) {
        order[i] = &t->items[i];
        if (i == 0 || t->items[i].start < origin)
            origin = t->items[i].start;
    }
    /* Perfetto's order at equal times is the file's: in the rows' order,
     * a slice that ends where the next begins on its lane closes before
     * that one opens, and of two that begin together the outer opens
     * first. */
    qsort(order, t->n, sizeof *order, cp_rows_order_ptr);
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(order);
        return cp_failf(CP_EIO, "cannot write %s: %s", path, strerror(errno));
    }
    cp_pb_writer *w = cp_pb_open(f, path, origin);
    int rc = w ? 0 : CP_ENOMEM;
    if (w)
        cp_pb_name_streams(w, t);
    if (w && t->nprocesses == 0)
        rc = cp_pb_add_process(w, 0, 0, title);
    /* A job's processes are named by rank too, as the user launched them. */
    char label[300];
    for (size_t k = 0; w && k < t->nprocesses && rc == 0; k++)
        rc = cp_pb_add_process(w, (uint32_t)k, t->processes[k].pid,
                               cp_process_label(&t->processes[k], label, sizeof label));
    for (size_t i = 0; w && i < t->n && rc == 0; i++)
        rc = cp_pb_add_activity(w, order[i]);
    int closed = cp_pb_close(w, NULL);
    if (rc == 0)
        rc = closed;
    if (fclose(f) != 0 && rc == 0)
        rc = cp_failf(CP_EIO, "cannot write %s: %s", path, strerror(errno));
    free(order);
    return rc;
}
