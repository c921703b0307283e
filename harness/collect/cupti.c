/* CUPTI plumbing shared by the tracer and the injection library: see
 * collect/cupti.h. */
#include "collect/cupti.h"

#include "analysis/api_calls.h"

#include <cuproof/check.h>
#include <cuproof/error.h>

#include <cupti.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN_SIZE 8
#define POOL_MAX 32
/* Completed buffers waiting for the worker: 512 MB of records at the
 * default size. Past it the completion waits for room (back pressure
 * rather than unbounded memory). */
#define QUEUE_MAX 64

/* A buffer CUPTI completed, as its callback saw it. */
typedef struct completed {
    uint8_t *buffer;
    size_t valid;   /* bytes of records in it */
    size_t dropped; /* CUPTI's dropped count for its context and stream */
} completed;

/*
 * Three locks, so that a program's thread never waits for records to be
 * written. CUPTI calls buffer_requested on the program's threads
 * whenever one needs a buffer, and buffer_completed on whichever thread
 * it likes, a program's among them; writing a buffer's records (8 MB of
 * them by default) takes milliseconds. So:
 *  - pool_lock guards the pool and the buffer counts, all that
 *    buffer_requested touches, each hold a few instructions;
 *  - queue_lock guards the queue of completed buffers, which
 *    buffer_completed only appends to;
 *  - record_lock (cp_cupti_lock) is held by the worker thread while it
 *    hands a buffer's records to the callbacks, one buffer at a time, in
 *    the order they were completed and each in CUPTI's order, and by the
 *    callbacks' users for the state they share with them.
 * cp_cupti_flush waits until the worker has handed on every buffer the
 * flush delivered, so that a caller reads everything after it as before.
 * Without the worker (it could not start, or in a child forked without
 * exec) a completed buffer is handed on in its callback, as it was.
 */
static struct {
    pthread_mutex_t pool_lock;
    size_t buffer_size;
    /* Buffers handed to CUPTI so far, and the most it may have (0: no
     * limit). A limit makes CUPTI drop records: the test of that path. */
    size_t buffers_given, max_buffers;
    /* Activity buffers, touched once and recycled: a fresh buffer's page
     * faults would otherwise land inside a traced run. */
    uint8_t *pool[POOL_MAX];
    size_t npool;

    pthread_mutex_t queue_lock;
    pthread_cond_t queued, handed; /* a buffer came; the worker handed one on */
    completed queue[QUEUE_MAX];
    size_t head, count;
    uint64_t enqueued, handed_on; /* buffers queued, and handed on, so far */
    bool worker_running, stopping;
    pthread_t worker;

    pthread_mutex_t record_lock;
    cp_record_fn on_record;
    cp_dropped_fn on_dropped;
    void *arg;
} cu = {.pool_lock = PTHREAD_MUTEX_INITIALIZER,
        .queue_lock = PTHREAD_MUTEX_INITIALIZER,
        .queued = PTHREAD_COND_INITIALIZER,
        .handed = PTHREAD_COND_INITIALIZER,
        .record_lock = PTHREAD_MUTEX_INITIALIZER,
        .buffer_size = 8u << 20};

void cp_cupti_lock(void)
{
    pthread_mutex_lock(&cu.record_lock);
}

void cp_cupti_unlock(void)
{
    pthread_mutex_unlock(&cu.record_lock);
}

void cp_cupti_set_buffer_size(size_t bytes)
{
    cu.buffer_size = bytes < 1024 ? 1024 : bytes;
}

size_t cp_cupti_buffer_size(void)
{
    return cu.buffer_size;
}

void cp_cupti_buffer_counts(size_t *given, size_t *limit)
{
    pthread_mutex_lock(&cu.pool_lock);
    *given = cu.buffers_given;
    *limit = cu.max_buffers;
    pthread_mutex_unlock(&cu.pool_lock);
}

/* A buffer that has been written once, from the pool or new. */
static uint8_t *take_buffer(void)
{
    uint8_t *b = NULL;
    pthread_mutex_lock(&cu.pool_lock);
    if (cu.npool > 0)
        b = cu.pool[--cu.npool];
    pthread_mutex_unlock(&cu.pool_lock);
    if (!b && (b = aligned_alloc(ALIGN_SIZE, cu.buffer_size)))
        memset(b, 0, cu.buffer_size);
    return b;
}

static void give_buffer(uint8_t *b)
{
    pthread_mutex_lock(&cu.pool_lock);
    if (cu.npool < POOL_MAX) {
        cu.pool[cu.npool++] = b;
        b = NULL;
    }
    pthread_mutex_unlock(&cu.pool_lock);
    free(b);
}

void cp_cupti_reserve(size_t n)
{
    uint8_t *ready[POOL_MAX];
    if (n > POOL_MAX)
        n = POOL_MAX;
    for (size_t i = 0; i < n; i++)
        ready[i] = take_buffer();
    for (size_t i = 0; i < n; i++)
        if (ready[i])
            give_buffer(ready[i]);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    pthread_mutex_lock(&cu.pool_lock);
    bool refuse = cu.max_buffers && cu.buffers_given >= cu.max_buffers;
    cu.buffers_given += !refuse;
    pthread_mutex_unlock(&cu.pool_lock);
    /* A NULL buffer tells CUPTI to drop the records it has no room for. */
    *buffer = refuse ? NULL : take_buffer();
    *size = *buffer ? cu.buffer_size : 0;
    *max_records = 0;
}

/* Hands one completed buffer's records to the callbacks, then its dropped
 * count, and returns the buffer to the pool. */
static void hand_on(const completed *c)
{
    CUpti_Activity *record = NULL;
    pthread_mutex_lock(&cu.record_lock);
    while (c->valid > 0 && cuptiActivityGetNextRecord(c->buffer, c->valid, &record) == CUPTI_SUCCESS)
        if (cu.on_record)
            cu.on_record(record, cu.arg);
    if (cu.on_dropped)
        cu.on_dropped(c->dropped, cu.arg);
    pthread_mutex_unlock(&cu.record_lock);
    give_buffer(c->buffer);
}

/* The worker: hands on the queued buffers, oldest first, until stopped
 * with the queue empty. */
static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&cu.queue_lock);
    for (;;) {
        while (cu.count == 0 && !cu.stopping)
            pthread_cond_wait(&cu.queued, &cu.queue_lock);
        if (cu.count == 0)
            break;
        completed c = cu.queue[cu.head];
        cu.head = (cu.head + 1) % QUEUE_MAX;
        cu.count--;
        pthread_mutex_unlock(&cu.queue_lock);
        hand_on(&c);
        pthread_mutex_lock(&cu.queue_lock);
        cu.handed_on++;
        pthread_cond_broadcast(&cu.handed);
    }
    pthread_mutex_unlock(&cu.queue_lock);
    return NULL;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    completed c = {.buffer = buffer, .valid = valid};
    (void)size;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &c.dropped) != CUPTI_SUCCESS)
        c.dropped = 0;
    pthread_mutex_lock(&cu.queue_lock);
    while (cu.worker_running && cu.count == QUEUE_MAX)
        pthread_cond_wait(&cu.handed, &cu.queue_lock);
    bool queue = cu.worker_running;
    if (queue) {
        cu.queue[(cu.head + cu.count) % QUEUE_MAX] = c;
        cu.count++;
        cu.enqueued++;
        pthread_cond_signal(&cu.queued);
    }
    pthread_mutex_unlock(&cu.queue_lock);
    if (!queue)
        hand_on(&c);
}

/* In a child forked without exec the worker does not exist (fork copies
 * the calling thread alone) and its locks may have been held by threads
 * that are gone: the child starts them afresh and hands buffers on in
 * their callbacks. It cannot use CUDA, so CUPTI should give it none. */
static void after_fork_in_child(void)
{
    cu.pool_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    cu.queue_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    cu.record_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    cu.queued = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    cu.handed = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    cu.worker_running = false;
    cu.count = 0;
}

static void register_fork_handler(void)
{
    pthread_atfork(NULL, NULL, after_fork_in_child);
}

/* Starts the worker with every signal blocked, so that the program's
 * signals go to its own threads; without it buffers are handed on in
 * their callbacks. */
static void start_worker(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_mutex_lock(&cu.queue_lock);
    cu.stopping = false;
    cu.worker_running = pthread_create(&cu.worker, NULL, worker, NULL) == 0;
    pthread_mutex_unlock(&cu.queue_lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Stops the worker once it has handed on every queued buffer. */
static void stop_worker(void)
{
    pthread_mutex_lock(&cu.queue_lock);
    bool running = cu.worker_running;
    cu.stopping = true;
    pthread_cond_signal(&cu.queued);
    pthread_mutex_unlock(&cu.queue_lock);
    if (running)
        pthread_join(cu.worker, NULL);
    pthread_mutex_lock(&cu.queue_lock);
    cu.worker_running = false;
    pthread_cond_broadcast(&cu.handed);
    pthread_mutex_unlock(&cu.queue_lock);
}

/* Waits until the worker has handed on every buffer queued so far. */
static void wait_handed_on(void)
{
    pthread_mutex_lock(&cu.queue_lock);
    uint64_t target = cu.enqueued;
    while (cu.worker_running && cu.handed_on < target)
        pthread_cond_wait(&cu.handed, &cu.queue_lock);
    pthread_mutex_unlock(&cu.queue_lock);
}

void cp_cupti_deliver(uint8_t *buffer, size_t valid)
{
    buffer_completed(NULL, 0, buffer, cu.buffer_size, valid);
}

void cp_cupti_wait_delivered(void)
{
    wait_handed_on();
}

int cp_cupti_register(cp_record_fn on_record, cp_dropped_fn on_dropped, void *arg)
{
    int rc = 0;
    static pthread_once_t fork_handler = PTHREAD_ONCE_INIT;
    const char *kb = getenv("CUPROOF_CUPTI_BUFFER_KB");
    if (kb && *kb)
        cp_cupti_set_buffer_size((size_t)strtoul(kb, NULL, 10) * 1024);
    const char *most = getenv("CUPROOF_CUPTI_MAX_BUFFERS");
    if (most && *most)
        cu.max_buffers = (size_t)strtoul(most, NULL, 10);
    pthread_mutex_lock(&cu.record_lock);
    cu.on_record = on_record;
    cu.on_dropped = on_dropped;
    cu.arg = arg;
    pthread_mutex_unlock(&cu.record_lock);
    CP_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    pthread_once(&fork_handler, register_fork_handler);
    if (!cu.worker_running)
        start_worker();
out:
    return rc;
}

int cp_cupti_enable(const int *kinds, size_t n, bool enable)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (enable)
            CP_CUPTI(cuptiActivityEnable((CUpti_ActivityKind)kinds[i]));
        else
            CP_CUPTI(cuptiActivityDisable((CUpti_ActivityKind)kinds[i]));
    }
out:
    return rc;
}

int cp_cupti_filter_api(bool apply, cp_api_seen_fn each, void *ctx, uint32_t *filtered)
{
    int rc = 0;
    *filtered = 0;
    static const struct {
        CUpti_CallbackDomain domain;
        uint32_t size;
    } domains[] = {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},
                   {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE}};
    for (size_t d = 0; d < sizeof domains / sizeof domains[0]; d++) {
        bool runtime = domains[d].domain == CUPTI_CB_DOMAIN_RUNTIME_API;
        /* Id 0 is CUPTI's "invalid" in both domains. */
        for (uint32_t cbid = 1; cbid < domains[d].size; cbid++) {
            const char *name = NULL;
            /* An id CUPTI cannot name stays recorded: nothing is lost for
             * want of a name. */
            if (cuptiGetCallbackName(domains[d].domain, cbid, &name) != CUPTI_SUCCESS || !name)
                continue;
            bool kept = cp_api_kept(name);
            if (each)
                each(ctx, runtime, cbid, name, kept);
            if (kept)
                continue;
            CUptiResult err = !apply  ? CUPTI_SUCCESS
                              : runtime ? cuptiActivityEnableRuntimeApi(cbid, 0)
                                        : cuptiActivityEnableDriverApi(cbid, 0);
            /* An id CUPTI refuses to turn off stays recorded, which loses
             * nothing: the walk goes on, and the first refusal is said. */
            if (err == CUPTI_SUCCESS)
                (*filtered)++;
            else if (rc == 0)
                rc = cp_check_cupti(err, __FILE__, __LINE__,
                                    runtime ? "cuptiActivityEnableRuntimeApi(cbid, 0)"
                                            : "cuptiActivityEnableDriverApi(cbid, 0)");
        }
    }
    return rc;
}

int cp_cupti_flush(bool forced, uint64_t *dropped)
{
    int rc = 0;
    size_t global = 0;
    CP_CUPTI(cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0));
    wait_handed_on();
    if (dropped) {
        CP_CUPTI(cuptiActivityGetNumDroppedRecords(NULL, 0, &global));
        *dropped = global;
    }
out:
    return rc;
}

int cp_cupti_detach(void)
{
    int rc = 0;
    CP_CUPTI(cuptiFinalize());
out:
    return rc;
}

void cp_cupti_release(void)
{
    stop_worker();
    pthread_mutex_lock(&cu.pool_lock);
    while (cu.npool > 0)
        free(cu.pool[--cu.npool]);
    pthread_mutex_unlock(&cu.pool_lock);
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

int cp_cupti_stream_name(const void *record, cp_stream_name *out)
{
    const CUpti_Activity *r = record;
    if (r->kind != CUPTI_ACTIVITY_KIND_NAME)
        return 0;
    const CUpti_ActivityName *n = record;
    if (n->objectKind != CUPTI_ACTIVITY_OBJECT_STREAM || !n->name || !n->name[0])
        return 0;
    *out = (cp_stream_name){.device = n->objectId.dcs.deviceId,
                            .context = n->objectId.dcs.contextId,
                            .stream = n->objectId.dcs.streamId,
                            .name = n->name};
    return 1;
}

int cp_cupti_convert(const void *record, cp_activity *out)
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
                             .graph_id = k->graphId, .graph_node = k->graphNodeId,
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
                             .graph_id = c->graphId, .graph_node = c->graphNodeId,
                             .name = "memcpy"};
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *s = record;
        *out = (cp_activity){.kind = CP_ACT_MEMSET, .start = s->start, .end = s->end,
                             .device = s->deviceId, .context = s->contextId,
                             .stream = s->streamId, .correlation = s->correlationId,
                             .bytes = s->bytes, .dst = mem_kind_of((uint8_t)s->memoryKind),
                             .graph_id = s->graphId, .graph_node = s->graphNodeId,
                             .name = "memset"};
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
        const CUpti_ActivityAPI *a = record;
        const char *name = NULL;
        if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &name) != CUPTI_SUCCESS)
            name = "cudaUnknownCall";
        *out = (cp_activity){.kind = CP_ACT_RUNTIME, .start = a->start, .end = a->end,
                             .correlation = a->correlationId, .thread = a->threadId,
                             .name = name};
        return 1;
    }
    default:
        return 0;
    }
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
