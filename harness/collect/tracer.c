/*
 * The activity tracer of `cuproof run` (collect/tracer.h has the
 * contract): one traced window at a time over CUPTI's process-wide
 * buffers, its priming (which finds the legacy default stream's lane and
 * leaves CUPTI's set-up cost out of the window), the harness's NVTX ranges
 * and stream names, and the launch names the runner pushes, tied to their
 * kernels by CUPTI's external correlation so that a reused kernel handle's
 * wrong name can be corrected. Everything the record callbacks share is
 * touched under the collect lock; no CUDA runtime call is made here.
 */
#include "collect/tracer.h"

#include "collect/cupti.h"

#include <cuproof/error.h>
#include <cuproof/check.h>
#include <cuproof/internal/grow.h>

#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const int kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    /* Without it CUPTI ties no external id to a driver-API launch (seen on
     * the H100); its own records are not kept (cp_cupti_convert). */
    CUPTI_ACTIVITY_KIND_DRIVER,
    /* Links a launch to the name the harness pushed around it. */
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    /* Streams named through NVTX, where CUPTI is NVTX's injection (the
     * user set NVTX_INJECTION64_PATH); the harness's own names come by
     * cp_tracer_name_stream, which needs no injection. */
    CUPTI_ACTIVITY_KIND_NAME,
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* The window's state. The record callbacks run under the collect lock
 * (cp_cupti_lock), so everything they share is touched under it too. */
static struct {
    bool initialised, available;
    char reason[512];
    cp_trace *current; /* the open window, or NULL */
    uint64_t dropped;
    int error; /* first failure inside a callback */
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
    /* The streams named so far (a trace used for its table only): kept
     * across windows, since streams are named once, before the first. */
    cp_trace named;
} tr;

/* Launch names this thread pushed and has not popped: CUPTI's external ids
 * are a stack per thread, and a pop must match a push that happened. */
static _Thread_local int pushed_here;

/* Records that CUPTI tied launch `correlation` to pushed name `id` (its
 * push came first, so the name is there); the caller holds the lock.
 * Returns 0 or CP_ENOMEM. */
static int add_link(uint32_t correlation, uint64_t id)
{
    cp_launch_name *p = cp_grow(tr.links, &tr.links_cap, tr.nlinks, sizeof *p, 64);
    if (!p)
        return CP_ENOMEM;
    tr.links = p;
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

/* Each record CUPTI delivers (the collect lock is held): launch-name links,
 * and the records of the open window; priming's memset names the legacy
 * default stream's lane. */
static void on_record(const void *r, void *arg)
{
    const CUpti_Activity *record = r;
    (void)arg;
    if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
        const CUpti_ActivityExternalCorrelation *e = r;
        if (tr.current && e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 &&
            add_link(e->correlationId, e->externalId) < 0 && !tr.error)
            tr.error = CP_ENOMEM;
        return;
    }
    cp_stream_name n;
    if (cp_cupti_stream_name(record, &n)) {
        if ((cp_trace_name_stream(&tr.named, &n) < 0 ||
             (tr.current && cp_trace_name_stream(tr.current, &n) < 0)) &&
            !tr.error)
            tr.error = CP_ENOMEM;
        return;
    }
    cp_activity a;
    if (!cp_cupti_convert(record, &a))
        return;
    if (tr.priming && a.kind == CP_ACT_MEMSET) {
        tr.legacy = a;
        tr.saw_legacy = true;
    }
    if (tr.current && a.start >= tr.window_start && cp_trace_add(tr.current, &a) < 0 && !tr.error)
        tr.error = CP_ENOMEM;
}

static void on_dropped(uint64_t dropped, void *arg)
{
    (void)arg;
    tr.dropped += dropped;
}

static int set_kinds(bool enable)
{
    return cp_cupti_enable(kinds, NKINDS, enable);
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
    /* Under cuproof exec the injection library holds CUPTI's callbacks;
     * registering ours would take its records away. */
    if (getenv("CUPROOF_EXEC_DIR")) {
        snprintf(tr.reason, sizeof tr.reason,
                 "this process runs under cuproof exec, which traces it from outside "
                 "(CUPROOF_EXEC_DIR is set)");
        return 0;
    }
    int rc = 0;
    CP_TRY(cp_cupti_register(on_record, on_dropped, NULL));
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
            cuptiActivityDisable((CUpti_ActivityKind)kinds[i]);
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
    cp_cupti_reserve(2);
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
    return cp_cupti_flush(true, NULL);
}

int cp_tracer_open(cp_trace *t)
{
    int rc = 0;
    uint64_t opened = 0;
    if (!tr.priming)
        return cp_failf(CP_EINVAL, "cp_tracer_open: the tracer was not enabled");
    CP_CUPTI(cuptiGetTimestamp(&opened));
    tr.priming = false;
    cp_cupti_lock();
    tr.window_start = opened;
    cp_trace_clear(t);
    t->has_legacy_stream = tr.saw_legacy;
    t->legacy_device = tr.legacy.device;
    t->legacy_context = tr.legacy.context;
    t->legacy_stream = tr.legacy.stream;
    rc = cp_trace_copy_stream_names(t, &tr.named);
    if (rc < 0) {
        cp_cupti_unlock();
        goto out;
    }
    tr.current = t;
    tr.dropped = 0;
    tr.error = 0;
    clear_launch_names();
    cp_cupti_unlock();
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
    uint64_t global_dropped = 0;
    CP_TRY(cp_cupti_flush(true, &global_dropped));
out:
    set_kinds(false);
    cp_cupti_lock();
    if (tr.current) {
        tr.current->dropped_records = tr.dropped + global_dropped;
        if (rc == 0 && tr.error)
            rc = tr.error;
        if (rc == 0) {
            int renamed = cp_trace_name_launches(tr.current, tr.links, tr.nlinks);
            rc = renamed < 0 ? renamed : 0;
        }
        clear_launch_names();
        size_t given = 0, limit = 0;
        cp_cupti_buffer_counts(&given, &limit);
        if (rc == 0 && tr.current->dropped_records)
            rc = cp_failf(CP_EDROPPED,
                          "CUPTI dropped %llu activity records (buffers of %zu bytes, %zu "
                          "handed out%s): the trace is incomplete",
                          (unsigned long long)tr.current->dropped_records, cp_cupti_buffer_size(),
                          given, limit ? ", at the set limit" : "");
    }
    tr.current = NULL;
    cp_cupti_unlock();
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

int cp_tracer_name_stream(void *context, void *stream, const char *name)
{
    int rc = 0;
    if (!tr.available)
        return 0;
    cp_stream_name n = {.name = name};
    CP_CUPTI(cuptiGetContextId((CUcontext)context, &n.context));
    CP_CUPTI(cuptiGetDeviceId((CUcontext)context, &n.device));
    /* perThreadStream 0: the harness is not built for per-thread default
     * streams, so a null stream is the legacy one. */
    CP_CUPTI(cuptiGetStreamIdEx((CUcontext)context, (CUstream)stream, 0, &n.stream));
    cp_cupti_lock();
    rc = cp_trace_name_stream(&tr.named, &n);
    if (rc == 0 && tr.current)
        rc = cp_trace_name_stream(tr.current, &n);
    cp_cupti_unlock();
out:
    return rc;
}

void cp_tracer_add_range(const char *name, uint64_t start, uint64_t end, uint32_t depth)
{
    cp_cupti_lock();
    if (tr.current) {
        cp_activity a = {.kind = CP_ACT_RANGE, .start = start, .end = end, .depth = depth,
                         .name = name};
        if (cp_trace_add(tr.current, &a) < 0 && !tr.error)
            tr.error = CP_ENOMEM;
    }
    cp_cupti_unlock();
}

int cp_tracer_push_launch_name(const char *name)
{
    int rc = 0;
    cp_cupti_lock();
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
    cp_cupti_unlock();
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

int cp_tracer_launch_named_end(bool pushed, int rc)
{
    if (!pushed)
        return rc;
    int pop_rc = cp_tracer_pop_launch_name();
    return rc == 0 ? pop_rc : rc;
}

void cp_tracer_shutdown(void)
{
    if (!tr.available)
        return;
    /* Flush so that nothing CUPTI still holds is written into freed memory;
     * cuptiFinalize is not called because it can block at process exit. */
    cp_cupti_flush(true, NULL);
    set_kinds(false);
    cp_cupti_release();
    cp_cupti_lock();
    clear_launch_names();
    free(tr.names);
    free(tr.links);
    tr.names = NULL;
    tr.links = NULL;
    tr.names_cap = tr.links_cap = 0;
    cp_cupti_unlock();
    tr.available = false;
    snprintf(tr.reason, sizeof tr.reason, "the tracer was shut down");
}
