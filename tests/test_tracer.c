/* The tracer's record conversion, fed hand-built CUPTI records, its
 * behaviour when no window is open, and the queue that hands completed
 * buffers to the collect layer's worker. Needs no GPU. */
#include <cuproof/error.h>
#include "collect/cupti.h"
#include "runner/window.h"

#include <criterion/criterion.h>
#include <cupti.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

Test(tracer, converts_concurrent_kernel)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 100;
    k.end = 250;
    k.deviceId = 1;
    k.contextId = 3;
    k.streamId = 17;
    k.correlationId = 99;
    k.name = "mult_ker";
    k.gridX = 4;
    k.gridY = 3;
    k.gridZ = 2;
    k.blockX = 32;
    k.blockY = 8;
    k.blockZ = 1;
    cp_activity a;
    cr_assert_eq(cp_cupti_convert(&k, &a), 1);
    cr_expect_eq(a.kind, CP_ACT_KERNEL);
    cr_expect_eq(a.start, 100);
    cr_expect_eq(a.end, 250);
    cr_expect_eq(a.device, 1);
    cr_expect_eq(a.context, 3);
    cr_expect_eq(a.stream, 17);
    cr_expect_eq(a.correlation, 99);
    cr_expect_str_eq(a.name, "mult_ker");
    cr_expect_eq(a.grid[0], 4);
    cr_expect_eq(a.grid[1], 3);
    cr_expect_eq(a.grid[2], 2);
    cr_expect_eq(a.block[0], 32);
    cr_expect_eq(a.block[1], 8);
    cr_expect_eq(a.block[2], 1);
}

Test(tracer, converts_memcpy_with_memory_kinds)
{
    CUpti_ActivityMemcpy6 c;
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    c.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    c.bytes = 4 << 20;
    c.start = 5;
    c.end = 9;
    c.streamId = 2;
    cp_activity a;
    cr_assert_eq(cp_cupti_convert(&c, &a), 1);
    cr_expect_eq(a.kind, CP_ACT_MEMCPY);
    cr_expect_eq(a.copy_dir, CP_COPY_HTOD);
    cr_expect_eq(a.src, CP_MEM_PAGEABLE);
    cr_expect_eq(a.dst, CP_MEM_DEVICE);
    cr_expect(a.async);
    cr_expect_eq(a.bytes, 4u << 20);

    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    c.flags = 0;
    cr_assert_eq(cp_cupti_convert(&c, &a), 1);
    cr_expect_eq(a.copy_dir, CP_COPY_DTOH);
    cr_expect_eq(a.dst, CP_MEM_PINNED);
    cr_expect_not(a.async);

    const struct {
        uint8_t cupti;
        cp_copy_dir dir;
    } dirs[] = {{CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CP_COPY_DTOD},
                {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, CP_COPY_HTOH},
                {CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, CP_COPY_PTOP},
                {CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, CP_COPY_HTOD},
                {CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, CP_COPY_DTOH},
                {CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, CP_COPY_UNKNOWN}};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        c.copyKind = dirs[i].cupti;
        cp_cupti_convert(&c, &a);
        cr_expect_eq(a.copy_dir, dirs[i].dir, "copy kind %u", dirs[i].cupti);
    }
    const struct {
        uint8_t cupti;
        cp_mem_kind kind;
    } mems[] = {{CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, CP_MEM_MANAGED},
                {CUPTI_ACTIVITY_MEMORY_KIND_ARRAY, CP_MEM_ARRAY},
                {CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC, CP_MEM_DEVICE},
                {CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN, CP_MEM_UNKNOWN}};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++) {
        c.srcKind = mems[i].cupti;
        cp_cupti_convert(&c, &a);
        cr_expect_eq(a.src, mems[i].kind, "memory kind %u", mems[i].cupti);
    }
}

Test(tracer, converts_memset)
{
    CUpti_ActivityMemset4 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.bytes = 64;
    s.start = 1;
    s.end = 2;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    cp_activity a;
    cr_assert_eq(cp_cupti_convert(&s, &a), 1);
    cr_expect_eq(a.kind, CP_ACT_MEMSET);
    cr_expect_eq(a.bytes, 64);
    cr_expect_eq(a.dst, CP_MEM_DEVICE);
}

Test(tracer, converts_runtime_call_with_its_name)
{
    CUpti_ActivityAPI r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    r.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
    r.correlationId = 7;
    cp_activity a;
    cr_assert_eq(cp_cupti_convert(&r, &a), 1);
    cr_expect_eq(a.kind, CP_ACT_RUNTIME);
    cr_expect_eq(a.correlation, 7);
    cr_expect_not_null(strstr(a.name, "cudaMemcpyAsync"), "%s", a.name);
}

/* Driver-API records are enabled only so that driver launches carry
 * external ids: they are not kept, nor are other kinds. */
Test(tracer, ignores_other_kinds)
{
    CUpti_Activity other = {.kind = CUPTI_ACTIVITY_KIND_CONTEXT};
    cp_activity a;
    cr_expect_eq(cp_cupti_convert(&other, &a), 0);
    CUpti_ActivityAPI driver = {.kind = CUPTI_ACTIVITY_KIND_DRIVER, .correlationId = 3};
    cr_expect_eq(cp_cupti_convert(&driver, &a), 0);
}

/* A stream's NAME record (nvtxNameCudaStream under CUPTI) names that
 * stream, by the device, context and stream ids of its objectId; names of
 * other objects, and empty ones, are not stream names. */
Test(tracer, converts_a_stream_name)
{
    CUpti_ActivityName r = {.kind = CUPTI_ACTIVITY_KIND_NAME,
                            .objectKind = CUPTI_ACTIVITY_OBJECT_STREAM,
                            .objectId.dcs = {.deviceId = 1, .contextId = 2, .streamId = 13},
                            .name = "copy-in"};
    cp_stream_name n;
    cr_assert_eq(cp_cupti_stream_name(&r, &n), 1);
    cr_expect_eq(n.process, 0);
    cr_expect_eq(n.device, 1);
    cr_expect_eq(n.context, 2);
    cr_expect_eq(n.stream, 13);
    cr_expect_str_eq(n.name, "copy-in");
    cp_activity a;
    cr_expect_eq(cp_cupti_convert(&r, &a), 0, "not an activity");
    r.name = "";
    cr_expect_eq(cp_cupti_stream_name(&r, &n), 0);
    r.name = "ctx";
    r.objectKind = CUPTI_ACTIVITY_OBJECT_CONTEXT;
    cr_expect_eq(cp_cupti_stream_name(&r, &n), 0);
    CUpti_Activity other = {.kind = CUPTI_ACTIVITY_KIND_CONTEXT};
    cr_expect_eq(cp_cupti_stream_name(&other, &n), 0);
}

Test(tracer, window_rules_without_cupti)
{
    setenv("CUPROOF_NO_TRACE", "1", 1);
    cp_tracer_init();
    cr_expect_not(cp_tracer_available());
    cr_expect_not_null(strstr(cp_tracer_unavailable_reason(), "CUPROOF_NO_TRACE"));
    cp_trace t;
    cp_trace_init(&t);
    cr_expect_eq(cp_tracer_begin(&t), CP_EINVAL);
    cr_expect_eq(cp_tracer_end(), CP_EINVAL);
    /* A range with no window open goes nowhere, and timestamps still move. */
    cp_tracer_add_range("phase", 1, 2, 0);
    cr_expect_eq(t.n, 0);
    /* A stream named without CUPTI is left unnamed, quietly. */
    cr_expect_eq(cp_tracer_name_stream(NULL, NULL, "copy-in"), 0);
    /* So does a launch name, and its pop matches no push. */
    cr_expect_eq(cp_tracer_push_launch_name("mult_ker"), 0);
    cr_expect_eq(cp_tracer_pop_launch_name(), 0);
    cr_expect_eq(cp_tracer_pop_launch_name(), 0, "a pop with nothing pushed does nothing");
    uint64_t t0 = cp_tracer_timestamp();
    cr_expect_geq(cp_tracer_timestamp(), t0);
    cp_tracer_shutdown();
    cp_trace_free(&t);
}

/* ---- The completed buffers' queue ---- */

/* Records wait at a gate until the test opens it, as a slow writer
 * would make them wait. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t opened;
    bool open;
    uint32_t seen[64];
    size_t nseen, buffers;
} gate = {.lock = PTHREAD_MUTEX_INITIALIZER, .opened = PTHREAD_COND_INITIALIZER};

static void held_record(const void *record, void *arg)
{
    (void)arg;
    pthread_mutex_lock(&gate.lock);
    while (!gate.open)
        pthread_cond_wait(&gate.opened, &gate.lock);
    if (gate.nseen < 64)
        gate.seen[gate.nseen++] = ((const CUpti_ActivityAPI *)record)->correlationId;
    pthread_mutex_unlock(&gate.lock);
}

static void counted_buffer(uint64_t dropped, void *arg)
{
    (void)arg;
    (void)dropped;
    gate.buffers++;
}

/* A buffer of `n` runtime-call records numbered from `first`, laid out as
 * CUPTI lays them out (cuptiActivityGetNextRecord reads it without a GPU). */
static uint8_t *api_buffer(uint32_t first, size_t n, size_t *valid)
{
    uint8_t *b = aligned_alloc(8, cp_cupti_buffer_size());
    cr_assert_not_null(b);
    memset(b, 0, cp_cupti_buffer_size());
    for (size_t i = 0; i < n; i++) {
        CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)(b + i * sizeof *a);
        a->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
        a->correlationId = first + (uint32_t)i;
        a->start = 10 * (first + i);
        a->end = a->start + 5;
    }
    *valid = n * sizeof(CUpti_ActivityAPI);
    return b;
}

/* Completing a buffer only queues it: while its records are held (a slow
 * writer) the completing thread goes on, and so do the buffer pool's
 * users (buffer_requested, on the program's threads, takes that lock
 * alone). Once let through, every record arrives, buffer after buffer in
 * the order they were completed and each in CUPTI's order, and waiting
 * for them returns only then. A buffer handed on in its callback instead
 * would block this test until its timeout. */
Test(cupti_queue, completed_buffers_wait_for_the_worker_in_order, .timeout = 20)
{
    cr_assert_eq(cp_cupti_register(held_record, counted_buffer, NULL), 0, "%s",
                 cp_last_error());
    for (uint32_t k = 0; k < 3; k++) {
        size_t valid = 0;
        uint8_t *b = api_buffer(1 + 4 * k, 4, &valid);
        cp_cupti_deliver(b, valid);
    }
    size_t given = 0, limit = 0;
    cp_cupti_buffer_counts(&given, &limit); /* the pool's lock is free */
    cp_cupti_reserve(2);
    pthread_mutex_lock(&gate.lock);
    cr_expect_eq(gate.nseen, 0, "records went through a closed gate");
    gate.open = true;
    pthread_cond_broadcast(&gate.opened);
    pthread_mutex_unlock(&gate.lock);
    cp_cupti_wait_delivered();
    pthread_mutex_lock(&gate.lock);
    cr_expect_eq(gate.nseen, 12);
    for (size_t i = 0; i < gate.nseen; i++)
        cr_expect_eq(gate.seen[i], i + 1, "record %zu came out of order", i);
    cr_expect_eq(gate.buffers, 3, "each buffer's dropped count once");
    pthread_mutex_unlock(&gate.lock);
    cp_cupti_release();
}
