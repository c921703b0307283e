#include "collect/tracer.h"

#include <cuproof/error.h>
#include <cuproof/check.h>

#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ALIGN_SIZE 8
#define POOL_MAX 32

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    /* Without it CUPTI ties no external id to a driver-API launch (seen on
     * the H100); its own records are not kept (cp_tracer_convert). */
    CUPTI_ACTIVITY_KIND_DRIVER,
    /* Links a launch to the name the harness pushed around it. */
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static struct {
    pthread_mutex_t lock;
    bool initialised, available;
    char reason[512];
    size_t buffer_size;
    /* Buffers handed to CUPTI so far, and the most it may have (0: no
     * limit). A limit makes CUPTI drop records: the test of that path. */
    size_t buffers_given, max_buffers;
    cp_trace *current; /* the open window, or NULL */
    uint64_t dropped;
    int error; /* first failure inside a callback */
    /* Activity buffers, touched once and recycled: a fresh buffer's page
     * faults would otherwise land inside the traced run. */
    uint8_t *pool[POOL_MAX];
    size_t npool;
    /* While priming, the memset's record tells the legacy stream's lane. */
    bool priming, saw_legacy;
    /* Records that began before the window opened belong to the priming. */
    uint64_t window_start;
    cp_activity legacy;
    /* Launch names pushed in the open window (external id k + 1 is
     * names[k]) and the launches CUPTI tied to them. */
    char **names;
    size_t nnames, names_cap;
    cp_launch_name *links;
    size_t nlinks, links_cap;
} tr = {.lock = PTHREAD_MUTEX_INITIALIZER, .buffer_size = 8u << 20};

/* Launch names this thread pushed and has not popped: CUPTI's external ids
 * are a stack per thread, and a pop must match a push that happened. */
static _Thread_local int pushed_here;

void cp_tracer_set_buffer_size(size_t bytes)
{
    tr.buffer_size = bytes < 1024 ? 1024 : bytes;
}

/* A buffer that has been written once, from the pool or new. */
static uint8_t *take_buffer(void)
{
    uint8_t *b = NULL;
    pthread_mutex_lock(&tr.lock);
    if (tr.npool > 0)
        b = tr.pool[--tr.npool];
    pthread_mutex_unlock(&tr.lock);
    if (!b && (b = aligned_alloc(ALIGN_SIZE, tr.buffer_size)))
        memset(b, 0, tr.buffer_size);
    return b;
}

static void give_buffer(uint8_t *b)
{
    pthread_mutex_lock(&tr.lock);
    if (tr.npool < POOL_MAX) {
        tr.pool[tr.npool++] = b;
        b = NULL;
    }
    pthread_mutex_unlock(&tr.lock);
    free(b);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    pthread_mutex_lock(&tr.lock);
    bool refuse = tr.max_buffers && tr.buffers_given >= tr.max_buffers;
    tr.buffers_given += !refuse;
    pthread_mutex_unlock(&tr.lock);
    /* A NULL buffer tells CUPTI to drop the records it has no room for. */
    *buffer = refuse ? NULL : take_buffer();
    *size = *buffer ? tr.buffer_size : 0;
    *max_records = 0;
}

static cp_copy_dir copy_dir_of(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
        return CP_COPY_HTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
        return CP_COPY_DTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
        return CP_COPY_DTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return CP_COPY_HTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return CP_COPY_PTOP;
    default:
        return CP_COPY_UNKNOWN;
    }
}

static cp_mem_kind mem_kind_of(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
        return CP_MEM_PAGEABLE;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
        return CP_MEM_PINNED;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
        return CP_MEM_DEVICE;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
        return CP_MEM_ARRAY;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
        return CP_MEM_MANAGED;
    default:
        return CP_MEM_UNKNOWN;
    }
}

int cp_tracer_convert(const void *record, cp_activity *out)
{
    const CUpti_Activity *r = record;
    memset(out, 0, sizeof *out);
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = record;
        *out = (cp_activity){.kind = CP_ACT_KERNEL, .start = k->start, .end = k->end,
                             .device = k->deviceId, .context = k->contextId,
                             .stream = k->streamId, .correlation = k->correlationId,
                             .grid = {(uint32_t)k->gridX, (uint32_t)k->gridY, (uint32_t)k->gridZ},
                             .block = {(uint32_t)k->blockX, (uint32_t)k->blockY,
                                       (uint32_t)k->blockZ},
                             .name = k->name};
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *c = record;
        *out = (cp_activity){.kind = CP_ACT_MEMCPY, .start = c->start, .end = c->end,
                             .device = c->deviceId, .context = c->contextId,
                             .stream = c->streamId, .correlation = c->correlationId,
                             .bytes = c->bytes, .copy_dir = copy_dir_of(c->copyKind),
                             .src = mem_kind_of(c->srcKind), .dst = mem_kind_of(c->dstKind),
                             .async = (c->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0,
                             .name = "memcpy"};
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *s = record;
        *out = (cp_activity){.kind = CP_ACT_MEMSET, .start = s->start, .end = s->end,
                             .device = s->deviceId, .context = s->contextId,
                             .stream = s->streamId, .correlation = s->correlationId,
                             .bytes = s->bytes, .dst = mem_kind_of((uint8_t)s->memoryKind),
                             .name = "memset"};
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
        const CUpti_ActivityAPI *a = record;
        const char *name = NULL;
        if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &name) != CUPTI_SUCCESS)
            name = "cudaUnknownCall";
        *out = (cp_activity){.kind = CP_ACT_RUNTIME, .start = a->start, .end = a->end,
                             .correlation = a->correlationId, .name = name};
        return 1;
    }
    default:
        return 0;
    }
}

/* Records that CUPTI tied launch `correlation` to pushed name `id` (its
 * push came first, so the name is there); the caller holds the lock.
 * Returns 0 or CP_ENOMEM. */
static int add_link(uint32_t correlation, uint64_t id)
{
    if (tr.nlinks == tr.links_cap) {
        size_t cap = tr.links_cap ? tr.links_cap * 2 : 64;
        cp_launch_name *p = realloc(tr.links, cap * sizeof *p);
        if (!p)
            return CP_ENOMEM;
        tr.links = p;
        tr.links_cap = cap;
    }
    const char *name = id >= 1 && id <= tr.nnames ? tr.names[id - 1] : NULL;
    tr.links[tr.nlinks++] = (cp_launch_name){correlation, name};
    return 0;
}

/* Forgets the window's launch names; the caller holds the lock. */
static void clear_launch_names(void)
{
    for (size_t i = 0; i < tr.nnames; i++)
        free(tr.names[i]);
    tr.nnames = 0;
    tr.nlinks = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    CUpti_Activity *record = NULL;
    size_t dropped = 0;
    pthread_mutex_lock(&tr.lock);
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
            const CUpti_ActivityExternalCorrelation *e = (const void *)record;
            if (tr.current && e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 &&
                add_link(e->correlationId, e->externalId) < 0 && !tr.error)
                tr.error = CP_ENOMEM;
            continue;
        }
        cp_activity a;
        if (!cp_tracer_convert(record, &a))
            continue;
        if (tr.priming && a.kind == CP_ACT_MEMSET) {
            tr.legacy = a;
            tr.saw_legacy = true;
        }
        if (tr.current && a.start >= tr.window_start && cp_trace_add(tr.current, &a) < 0 &&
            !tr.error)
            tr.error = CP_ENOMEM;
    }
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        tr.dropped += dropped;
    pthread_mutex_unlock(&tr.lock);
    (void)size;
    give_buffer(buffer);
}

static int set_kinds(bool enable)
{
    int rc = 0;
    for (size_t i = 0; i < NKINDS; i++) {
        if (enable)
            CP_CUPTI(cuptiActivityEnable(kinds[i]));
        else
            CP_CUPTI(cuptiActivityDisable(kinds[i]));
    }
out:
    return rc;
}

int cp_tracer_init(void)
{
    if (tr.initialised)
        return 0;
    tr.initialised = true;
    const char *off = getenv("CUPROOF_NO_TRACE");
    if (off && *off && strcmp(off, "0") != 0) {
        snprintf(tr.reason, sizeof tr.reason, "tracing turned off by CUPROOF_NO_TRACE");
        return 0;
    }
    /* Test settings: a buffer size and a limit on buffers, with which
     * CUPTI runs out of room and drops records (ci/ and test_gpu use them). */
    const char *kb = getenv("CUPROOF_CUPTI_BUFFER_KB");
    if (kb && *kb)
        cp_tracer_set_buffer_size((size_t)strtoul(kb, NULL, 10) * 1024);
    const char *most = getenv("CUPROOF_CUPTI_MAX_BUFFERS");
    if (most && *most)
        tr.max_buffers = (size_t)strtoul(most, NULL, 10);
    int rc = 0;
    CP_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    CP_TRY(set_kinds(true));
    CP_TRY(set_kinds(false));
    tr.available = true;
out:
    if (rc < 0) {
        snprintf(tr.reason, sizeof tr.reason,
                 "CUPTI cannot trace this process (another tool such as Nsight Systems may "
                 "hold it, or no driver is loaded): %s",
                 cp_last_error());
        cp_clear_last_error();
        /* Leave nothing half-enabled: the process runs untraced. */
        for (size_t i = 0; i < NKINDS; i++)
            cuptiActivityDisable(kinds[i]);
    }
    return 0;
}

bool cp_tracer_available(void)
{
    return tr.available;
}

const char *cp_tracer_unavailable_reason(void)
{
    return tr.available ? "" : tr.reason[0] ? tr.reason : "the tracer was not initialised";
}

int cp_tracer_enable(void)
{
    int rc = 0;
    if (!tr.available || tr.current)
        return cp_failf(CP_EINVAL, "cp_tracer_enable: %s",
                        tr.current ? "a traced window is already open" : "tracer unavailable");
    /* Keep two written buffers ready before anything is recorded. */
    uint8_t *ready[2] = {take_buffer(), take_buffer()};
    for (int i = 0; i < 2; i++)
        if (ready[i])
            give_buffer(ready[i]);
    tr.saw_legacy = false;
    tr.priming = true;
    CP_TRY(set_kinds(true));
out:
    if (rc < 0)
        cp_tracer_disable();
    return rc;
}

void cp_tracer_disable(void)
{
    tr.priming = false;
    set_kinds(false);
}

int cp_tracer_flush(void)
{
    int rc = 0;
    CP_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
out:
    return rc;
}

int cp_tracer_open(cp_trace *t)
{
    int rc = 0;
    uint64_t opened = 0;
    if (!tr.priming)
        return cp_failf(CP_EINVAL, "cp_tracer_open: the tracer was not enabled");
    CP_CUPTI(cuptiGetTimestamp(&opened));
    tr.priming = false;
    pthread_mutex_lock(&tr.lock);
    tr.window_start = opened;
    cp_trace_clear(t);
    t->has_legacy_stream = tr.saw_legacy;
    t->legacy_device = tr.legacy.device;
    t->legacy_context = tr.legacy.context;
    t->legacy_stream = tr.legacy.stream;
    tr.current = t;
    tr.dropped = 0;
    tr.error = 0;
    clear_launch_names();
    pthread_mutex_unlock(&tr.lock);
out:
    if (rc < 0)
        cp_tracer_disable();
    return rc;
}

int cp_tracer_end(void)
{
    int rc = 0;
    if (!tr.current)
        return cp_failf(CP_EINVAL, "cp_tracer_end: no traced window is open");
    CP_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    size_t global_dropped = 0;
    CP_CUPTI(cuptiActivityGetNumDroppedRecords(NULL, 0, &global_dropped));
out:
    set_kinds(false);
    pthread_mutex_lock(&tr.lock);
    if (tr.current) {
        tr.current->dropped_records = tr.dropped + global_dropped;
        if (rc == 0 && tr.error)
            rc = tr.error;
        if (rc == 0) {
            int renamed = cp_trace_name_launches(tr.current, tr.links, tr.nlinks);
            rc = renamed < 0 ? renamed : 0;
        }
        clear_launch_names();
        if (rc == 0 && tr.current->dropped_records)
            rc = cp_failf(CP_EDROPPED,
                          "CUPTI dropped %llu activity records (buffers of %zu bytes, %zu "
                          "handed out%s): the trace is incomplete",
                          (unsigned long long)tr.current->dropped_records, tr.buffer_size,
                          tr.buffers_given, tr.max_buffers ? ", at the set limit" : "");
    }
    tr.current = NULL;
    pthread_mutex_unlock(&tr.lock);
    return rc;
}

uint64_t cp_tracer_timestamp(void)
{
    uint64_t ts = 0;
    if (tr.available && cuptiGetTimestamp(&ts) == CUPTI_SUCCESS)
        return ts;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

void cp_tracer_add_range(const char *name, uint64_t start, uint64_t end, uint32_t depth)
{
    pthread_mutex_lock(&tr.lock);
    if (tr.current) {
        cp_activity a = {.kind = CP_ACT_RANGE, .start = start, .end = end, .depth = depth,
                         .name = name};
        if (cp_trace_add(tr.current, &a) < 0 && !tr.error)
            tr.error = CP_ENOMEM;
    }
    pthread_mutex_unlock(&tr.lock);
}

int cp_tracer_push_launch_name(const char *name)
{
    int rc = 0;
    pthread_mutex_lock(&tr.lock);
    bool open = tr.current != NULL;
    if (open && tr.nnames == tr.names_cap) {
        size_t cap = tr.names_cap ? tr.names_cap * 2 : 16;
        char **p = realloc(tr.names, cap * sizeof *p);
        if (p) {
            tr.names = p;
            tr.names_cap = cap;
        }
    }
    char *copy = open && tr.nnames < tr.names_cap ? strdup(name) : NULL;
    uint64_t id = 0;
    if (copy) {
        tr.names[tr.nnames++] = copy;
        id = tr.nnames;
    }
    pthread_mutex_unlock(&tr.lock);
    if (!open)
        return 0;
    if (!copy)
        return cp_failf(CP_ENOMEM, "out of memory naming a launch");
    CP_CUPTI(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id));
    pushed_here++;
out:
    return rc;
}

int cp_tracer_pop_launch_name(void)
{
    int rc = 0;
    uint64_t id = 0;
    if (pushed_here == 0)
        return 0;
    pushed_here--;
    CP_CUPTI(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id));
out:
    return rc;
}

void cp_tracer_shutdown(void)
{
    if (!tr.available)
        return;
    /* Flush so that nothing CUPTI still holds is written into freed memory;
     * cuptiFinalize is not called because it can block at process exit. */
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (size_t i = 0; i < NKINDS; i++)
        cuptiActivityDisable(kinds[i]);
    pthread_mutex_lock(&tr.lock);
    while (tr.npool > 0)
        free(tr.pool[--tr.npool]);
    clear_launch_names();
    free(tr.names);
    free(tr.links);
    tr.names = NULL;
    tr.links = NULL;
    tr.names_cap = tr.links_cap = 0;
    pthread_mutex_unlock(&tr.lock);
    tr.available = false;
    snprintf(tr.reason, sizeof tr.reason, "the tracer was shut down");
}

int cp_check_cupti(int err, const char *file, int line, const char *call)
{
    if (err == CUPTI_SUCCESS)
        return 0;
    const char *name = NULL, *text = NULL;
    if (cuptiGetResultString((CUptiResult)err, &name) != CUPTI_SUCCESS)
        name = "CUPTI_ERROR_UNKNOWN";
    if (cuptiGetErrorMessage((CUptiResult)err, &text) != CUPTI_SUCCESS)
        text = "unrecognised CUPTI result";
    return cp_fail(CP_ECUPTI, file, line, call, name, text);
}
