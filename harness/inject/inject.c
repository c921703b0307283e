/*
 * libcuproof_inject.so: what `cuproof exec` loads into an unmodified
 * program through CUDA_INJECTION64_PATH (the driver calls
 * InitializeInjection inside cuInit) and NVTX_INJECTION64_PATH (NVTX calls
 * InitializeInjectionNvtx2 at the program's first NVTX call). It sits on
 * the collect layer's CUPTI plumbing, issues no CUDA runtime call, and
 * streams every record to its process's own file in CUPROOF_EXEC_DIR as
 * CUPTI delivers buffers (the format is docs/formats.md's cuproof.proc/1),
 * so memory stays bounded however long the program runs:
 *
 *  - a writer thread flushes CUPTI every CUPROOF_EXEC_FLUSH_MS (500 ms by
 *    default) and writes a "flush" line, so that a process that dies
 *    loses at most that much;
 *  - before cudaDeviceReset and cuCtxDestroy the records so far are
 *    flushed (their contexts' records would be lost with them);
 *  - at normal exit, an "end" line with the dropped count closes the
 *    file: a file without it belongs to a process that died or left by
 *    _exit, which the launcher reports as truncated;
 *  - only the API calls an analysis reads are recorded (cp_api_kept),
 *    unless CUPROOF_EXEC_API=all (exec --api all): a recorded call costs
 *    the program time on the thread that made it.
 *
 * When CUPTI cannot be had (another tool subscribed first) the file gets
 * an "end" line whose `why` says so and nothing is traced.
 */
#define _GNU_SOURCE
#include "collect/cupti.h"
#include "collect/proc_writer.h"
#include "collect/rank.h"

#include <cuproof/check.h>
#include <cuproof/error.h>
#include <cuproof/internal/capture.h>
#include <cuproof/trace.h>

#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))


/* What exec traces, each kind with its name for CUPROOF_EXEC_KINDS: one
 * table, so that a name cannot drift from its kind. */
static const struct {
    int kind;
    const char *name;
} kinds[] = {
    /* Never CUPTI_ACTIVITY_KIND_KERNEL: it serialises kernels. */
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "memset"},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "runtime"},
    {CUPTI_ACTIVITY_KIND_DRIVER, "driver"},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "sync"},
    {CUPTI_ACTIVITY_KIND_STREAM, "stream"},
    {CUPTI_ACTIVITY_KIND_CONTEXT, "context"},
    {CUPTI_ACTIVITY_KIND_DEVICE, "device"},
    {CUPTI_ACTIVITY_KIND_MARKER, "marker"},
    /* Streams the program named through NVTX (this library makes CUPTI
     * NVTX's injection, InitializeInjectionNvtx2 below). */
    {CUPTI_ACTIVITY_KIND_NAME, "name"},
    /* CUPTI's own cost, summed into the file's tracing cost. */
    {CUPTI_ACTIVITY_KIND_OVERHEAD, "overhead"},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* CUPROOF_EXEC_MODE=timing (cuproof exec --repeat): the program's NVTX
 * ranges alone, so that the timed runs carry no cost of activity tracing. */
static const int timing_kinds[] = {CUPTI_ACTIVITY_KIND_MARKER};

static struct {
    pthread_mutex_t init_lock;
    bool initialised, tracing;
    cp_proc_writer w;   /* the file: written under the collect lock */
    unsigned flush_ms;
    pthread_t writer;
    bool writer_running;
    pthread_mutex_t stop_lock;
    pthread_cond_t stop;
    bool stopping;
    CUpti_SubscriberHandle subscriber;
    const int *kinds; /* what is enabled: timing_kinds, or chosen */
    size_t nkinds;
    int chosen[NKINDS]; /* `kinds`, or those CUPROOF_EXEC_KINDS names */
    enum { HOOKS_RUNTIME, HOOKS_DRIVER, HOOKS_NONE } hooks; /* CUPROOF_EXEC_HOOKS */
    /* Capture windows (CUPROOF_EXEC_CAPTURE): outside them the activity
     * kinds are off; `cap_lock` orders their opening and closing. */
    cp_capture cap;
    pthread_mutex_t cap_lock;
    bool cap_open, cap_warmup;
    bool cap_between;         /* open between two occurrences it takes */
    uint32_t cap_seen;        /* occurrences of the range so far */
    pthread_t cap_owner;      /* the thread whose push opened it */
    int cap_depth;            /* its depth of default-domain ranges inside the window's range */
    uint64_t cap_time_start;  /* after:S,for:D: when tracing began */
    bool marker_armed;        /* NVTX markers on ahead of the next window */
    /* After the last window CUPTI is detached (cp_cupti_detach, at the
     * exit of the first driver call after detach_pending is set): nothing
     * of it is called again. */
    bool detach_pending, detached;
} inj = {.cap_lock = PTHREAD_MUTEX_INITIALIZER,.init_lock = PTHREAD_MUTEX_INITIALIZER,
         .stop_lock = PTHREAD_MUTEX_INITIALIZER,
         .stop = PTHREAD_COND_INITIALIZER};

static uint64_t now(void)
{
    uint64_t t = 0;
    /* CUPTI's clock is CLOCK_REALTIME's unless a timestamp callback says
     * otherwise (none here): once detached, the same clock without it. */
    if (!inj.detached && cuptiGetTimestamp(&t) == CUPTI_SUCCESS)
        return t;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Every record of a completed buffer (the collect lock is held). */
static void on_record(const void *r, void *arg)
{
    (void)arg;
    cp_proc_writer_record(&inj.w, r);
}

/* After each buffer: one more buffer in the cost, CUPTI's dropped count,
 * and the lines so far handed to the kernel, so that a process that dies
 * keeps them. */
static void on_dropped(uint64_t dropped, void *arg)
{
    (void)arg;
    inj.w.cost.buffers++;
    inj.w.dropped += dropped;
    if (inj.w.out)
        fflush(inj.w.out);
    else if (inj.w.rec)
        cp_rec_flush(inj.w.rec);
}

/* A "flush" line, or the "end" line when `why` is given; the caller holds
 * the collect lock. */
static void write_mark(const char *why, uint64_t global_dropped)
{
    inj.w.dropped += global_dropped;
    cp_proc_writer_mark(&inj.w, now(), why);
}

/* Delivers what CUPTI holds (forced: also incomplete records) and marks
 * the file. */
static void flush_now(bool forced, const char *why)
{
    uint64_t dropped = 0;
    if (!inj.detached)
        cp_cupti_flush(forced, &dropped);
    cp_cupti_lock();
    write_mark(why, dropped);
    cp_cupti_unlock();
}

/* ---- Capture windows ---- */

/* The ranges this thread has pushed on NVTX's default domain and not yet
 * popped: the window closes at the pop that brings its owner back below
 * the depth at which it opened. */
static __thread int nvtx_depth;

static const int marker_kind[] = {CUPTI_ACTIVITY_KIND_MARKER};

/* Opens a window at time t: the kinds on, the API filter again (enabling
 * RUNTIME and DRIVER records every call of theirs), and its mark, with the
 * kinds of call filtered in the cost. The caller holds cap_lock. */
static void window_open(uint64_t t, uint32_t occurrence, bool warmup)
{
    cp_cupti_enable(inj.kinds, inj.nkinds, true);
    inj.marker_armed = false;
    uint32_t filtered = 0;
    if (!inj.w.cost.api_all)
        cp_cupti_filter_api(true, NULL, NULL, &filtered);
    inj.cap_open = true;
    inj.cap_warmup = warmup;
    cp_cupti_lock();
    if (filtered)
        inj.w.cost.api_filtered = filtered;
    cp_proc_writer_capture(&inj.w, t, true, occurrence, warmup);
    cp_cupti_unlock();
}

/* Closes the open window at time t: its mark, then the kinds off, so that
 * nothing after the mark is recorded but what was in flight. */
static void window_close(uint64_t t, uint32_t occurrence)
{
    cp_cupti_lock();
    cp_proc_writer_capture(&inj.w, t, false, occurrence, inj.cap_warmup);
    cp_cupti_unlock();
    cp_cupti_enable(inj.kinds, inj.nkinds, false);
    inj.cap_open = false;
    /* No window can follow: CUPTI is detached, since its instrumentation
     * would tax every later launch. Where CUPTI asks it to be: at the exit
     * of the next driver call (a detach from another thread crashed 4 of
     * 6 CuPy runs on the H200), whose callbacks are turned on for it. */
    bool last = inj.cap.kind == CP_CAPTURE_TIME ||
                ((inj.cap.kind == CP_CAPTURE_RANGE || inj.cap.kind == CP_CAPTURE_STEPS) &&
                 !cp_capture_more_after(&inj.cap, occurrence));
    /* Only with every kind on: with CUPROOF_EXEC_KINDS's subsets (kernel
     * alone, runtime and driver alone) a detach crashed the CuPy loop on
     * the H200 in each of 3 tries, so those diagnostics stay attached. */
    bool all_kinds = inj.kinds == inj.chosen && inj.nkinds == NKINDS;
    if (last && all_kinds && inj.hooks != HOOKS_NONE &&
        cuptiEnableDomain(1, inj.subscriber, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS)
        __atomic_store_n(&inj.detach_pending, true, __ATOMIC_RELEASE);
}

/* At a driver call's exit, once the last window closed: what it recorded
 * delivered, then CUPTI detached (one thread does it). */
static void detach_now(void)
{
    if (!__atomic_exchange_n(&inj.detach_pending, false, __ATOMIC_ACQ_REL))
        return;
    flush_now(true, NULL);
    pthread_mutex_lock(&inj.cap_lock);
    if (cp_cupti_detach() < 0)
        fprintf(stderr, "cuproof inject: %s; CUPTI stays attached after the last window\n",
                cp_last_error());
    else
        inj.detached = true;
    pthread_mutex_unlock(&inj.cap_lock);
}

/* NVTX's markers on ahead of a window that the next push of the range
 * opens, so that the push itself is recorded (a kind enabled inside the
 * push's own callback misses it). */
static void arm_markers(void)
{
    if (inj.marker_armed || inj.cap_open || !cp_capture_takes(&inj.cap, inj.cap_seen + 1))
        return;
    cp_cupti_enable(marker_kind, 1, true);
    inj.marker_armed = true;
}

/* The message of a default-domain push, where it is text. */
static const char *pushed_name(CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
    if (cbid == CUPTI_CBID_NVTX_nvtxRangePushA)
        return ((const nvtxRangePushA_params *)d->functionParams)->message;
    const nvtxEventAttributes_t *a = ((const nvtxRangePushEx_params *)d->functionParams)->eventAttrib;
    return a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : NULL;
}

/* What CUPROOF_NCCL_DEBUG=1 prints at exit (stderr): each kind of push
 * on a program's domain that was or was not an NCCL payload, counted, so
 * that calls whose ranges come without a payload can be told apart (no
 * extended payload, a schema the decoder does not know, a communicator of
 * 0). At most 16 kinds; the rest are counted together. */
#define NCCL_DEBUG_KINDS 16
struct nccl_debug_kind {
    int32_t type;
    uint64_t sid, size;
    int outcome; /* 0 decoded, 1 not an extended payload, 2 not decoded, 3 not in the call's stack */
    unsigned long n;
};
static struct {
    bool on;
    pthread_mutex_t lock;
    struct nccl_debug_kind k[NCCL_DEBUG_KINDS];
    size_t nk;
    unsigned long more;
} nccl_debug = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void nccl_debug_count(int32_t type, uint64_t sid, uint64_t size, int outcome)
{
    if (!nccl_debug.on)
        return;
    pthread_mutex_lock(&nccl_debug.lock);
    size_t i = 0;
    while (i < nccl_debug.nk &&
           !(nccl_debug.k[i].type == type && nccl_debug.k[i].sid == sid &&
             nccl_debug.k[i].size == size && nccl_debug.k[i].outcome == outcome))
        i++;
    if (i < nccl_debug.nk)
        nccl_debug.k[i].n++;
    else if (i < NCCL_DEBUG_KINDS)
        nccl_debug.k[nccl_debug.nk++] = (struct nccl_debug_kind){type, sid, size, outcome, 1};
    else
        nccl_debug.more++;
    pthread_mutex_unlock(&nccl_debug.lock);
}

/* Where an entry that would not decode lay (CUPROOF_NCCL_DEBUG, the
 * first 8 of a process): the attributes' and the entry's addresses beside
 * this callback's own frame, the entry count and the range's name, to
 * tell a payload of the caller's live frames (above this frame) from one
 * left behind. */
static void nccl_debug_where(const CUpti_NvtxData *d, const nvtxEventAttributes_t *a,
                             const void *entry)
{
    static unsigned long shown;
    int here = 0;
    if (!nccl_debug.on || __atomic_fetch_add(&shown, 1, __ATOMIC_RELAXED) >= 8)
        return;
    fprintf(stderr,
            "cuproof: pid %ld: NCCL push not decoded: %s, attributes %p, entry %p, this frame %p, "
            "entries %d, message type %d\n",
            (long)getpid(), d->functionName ? d->functionName : "?", (const void *)a, entry,
            (void *)&here, a->reserved0, a->messageType);
}

static void nccl_debug_print(void)
{
    static const char *what[] = {"decoded", "no extended payload", "not decoded",
                                 "pointing outside the calling thread's live stack"};
    for (size_t i = 0; nccl_debug.on && i < nccl_debug.nk; i++)
        fprintf(stderr,
                "cuproof: pid %ld: NCCL domain pushes: %lu %s (payload type %#x, schema %llu, "
                "size %llu)\n",
                (long)getpid(), nccl_debug.k[i].n, what[nccl_debug.k[i].outcome],
                (unsigned)nccl_debug.k[i].type, (unsigned long long)nccl_debug.k[i].sid,
                (unsigned long long)nccl_debug.k[i].size);
    if (nccl_debug.on && nccl_debug.more)
        fprintf(stderr, "cuproof: pid %ld: NCCL domain pushes: %lu of other kinds\n",
                (long)getpid(), nccl_debug.more);
}

/* Whether [p, p + size) lies in this thread's stack above this frame:
 * where a payload that NCCL's call is still building must be (its
 * nvtx3_bpl__ and _payload are automatic variables of the NCCL function,
 * whose frame holds this callback's). On two H200s, DDP's and FSDP's
 * undecodable pushes (CUPROOF_NCCL_DEBUG) pointed just below this
 * callback's frame or into another thread's stack: memory the call no
 * longer owns, whose content may even pass for another call's payload.
 * The thread's stack bounds are read once (pthread_getattr_np). */
static bool in_live_stack(const void *p, size_t size)
{
    static __thread uintptr_t lo, hi;
    if (!hi) {
        /* Bounds that cannot be read are an empty stack, read no more. */
        pthread_attr_t attr;
        void *addr = NULL;
        size_t len = 0;
        bool ok = pthread_getattr_np(pthread_self(), &attr) == 0;
        if (ok) {
            ok = pthread_attr_getstack(&attr, &addr, &len) == 0;
            pthread_attr_destroy(&attr);
        }
        lo = ok ? (uintptr_t)addr : 1;
        hi = ok ? lo + len : 1;
    }
    uintptr_t a = (uintptr_t)p, frame = (uintptr_t)__builtin_frame_address(0);
    return a > frame && a >= lo && a < hi && size <= hi - a;
}

/* A push on a domain of the program's (NCCL's "NCCL"): an NCCL call's
 * payload (collect/nccl_payload.h), kept for its range's start marker.
 * The payload lives only during the call, so it is read here, and only
 * from the calling thread's live stack (in_live_stack); a push of any
 * other payload is left alone. The entries of the payload array are
 * tried in turn (nvToolsExtPayload.h lets a push carry several; reserved0
 * counts them; NCCL's nvtx3.hpp passes one), at most four, the first
 * NCCL call among them taken. */
static void nccl_payload(const CUpti_NvtxData *d)
{
    const nvtxDomainRangePushEx_params *p = d->functionParams;
    const nvtxEventAttributes_t *a = p ? p->core.eventAttrib : NULL;
    if (!a)
        return;
    if (a->payloadType != CP_NVTX_PAYLOAD_TYPE_EXT || a->reserved0 < 1 || !a->payload.ullValue) {
        nccl_debug_count(a->payloadType, 0, 0, 1);
        return;
    }
    /* nvToolsExtPayload.h's nvtxPayloadData_t: schema id, size, data. */
    const struct {
        uint64_t schema_id;
        size_t size;
        const void *data;
    } *pd = (const void *)(uintptr_t)a->payload.ullValue;
    cp_nccl_call call;
    for (int32_t i = 0; i < a->reserved0 && i < 4; i++) {
        /* The entry's own place first: its fields are read only there. */
        if (!in_live_stack(&pd[i], sizeof pd[i]) || !in_live_stack(pd[i].data, pd[i].size)) {
            nccl_debug_count(a->payloadType, 0, 0, 3);
            nccl_debug_where(d, a, &pd[i]);
            continue;
        }
        if (!cp_nccl_payload_decode(pd[i].schema_id, pd[i].data, pd[i].size, &call)) {
            nccl_debug_count(a->payloadType, pd[i].schema_id, pd[i].size, 2);
            nccl_debug_where(d, a, &pd[i]);
            continue;
        }
        nccl_debug_count(a->payloadType, pd[i].schema_id, pd[i].size, 0);
        uint64_t t = now();
        cp_cupti_lock();
        cp_proc_writer_nccl(&inj.w, t, &call);
        cp_cupti_unlock();
        return;
    }
}

/* A push or pop of NVTX's default domain, under a range capture. A
 * window opens at the push of an occurrence it takes; at the pop that ends
 * that occurrence it closes, or, when the next occurrence is taken the
 * same way, stays open between the two (cap_between) so that a run of
 * occurrences is one window. */
static void on_nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
    if (cbid == CUPTI_CBID_NVTX_nvtxDomainRangePushEx) {
        nccl_payload(d);
        return;
    }
    bool push = cbid == CUPTI_CBID_NVTX_nvtxRangePushA || cbid == CUPTI_CBID_NVTX_nvtxRangePushEx;
    if (!push && cbid != CUPTI_CBID_NVTX_nvtxRangePop)
        return;
    if (!push) {
        nvtx_depth--;
        pthread_mutex_lock(&inj.cap_lock);
        if (inj.cap_open && !inj.cap_between && pthread_equal(inj.cap_owner, pthread_self()) &&
            nvtx_depth < inj.cap_depth) {
            int next = cp_capture_takes(&inj.cap, inj.cap_seen + 1);
            if (next == 0 || (next == 2) != inj.cap_warmup)
                window_close(now(), inj.cap_seen);
            else
                inj.cap_between = true;
        }
        if (!inj.detach_pending)
            arm_markers();
        pthread_mutex_unlock(&inj.cap_lock);
        return;
    }
    nvtx_depth++;
    const char *name = pushed_name(cbid, d);
    if (!name || strcmp(name, inj.cap.name) != 0)
        return;
    pthread_mutex_lock(&inj.cap_lock);
    uint32_t k = ++inj.cap_seen;
    int takes = cp_capture_takes(&inj.cap, k);
    if (inj.cap_open && inj.cap_between) {
        /* The occurrence the window waited for (takes is as promised). */
        inj.cap_between = false;
        inj.cap_owner = pthread_self();
        inj.cap_depth = nvtx_depth;
    } else if (!inj.cap_open && takes) {
        inj.cap_owner = pthread_self();
        inj.cap_depth = nvtx_depth;
        inj.cap_between = false;
        window_open(now(), k, takes == 2);
    }
    pthread_mutex_unlock(&inj.cap_lock);
}

/* after:S,for:D, checked by the writer thread at each flush: the window
 * opens and closes within a flush period of its times. */
static void time_window_tick(void)
{
    if (inj.cap.kind != CP_CAPTURE_TIME)
        return;
    uint64_t t = now(), since = t - inj.cap_time_start;
    pthread_mutex_lock(&inj.cap_lock);
    if (!inj.cap_open && inj.cap_seen == 0 && since >= inj.cap.after_ns) {
        inj.cap_seen = 1;
        window_open(t, 0, false);
    } else if (inj.cap_open && since >= inj.cap.after_ns + inj.cap.for_ns) {
        window_close(t, 0);
    }
    pthread_mutex_unlock(&inj.cap_lock);
}

/* The writer thread: a flush every flush_ms until the process exits. */
static void *writer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&inj.stop_lock);
    while (!inj.stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += inj.flush_ms / 1000;
        until.tv_nsec += (long)(inj.flush_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&inj.stop, &inj.stop_lock, &until);
        if (inj.stopping)
            break;
        pthread_mutex_unlock(&inj.stop_lock);
        time_window_tick();
        /* Complete buffers only: a forced flush from here could cut
         * records that are still being filled. */
        flush_now(false, NULL);
        pthread_mutex_lock(&inj.stop_lock);
    }
    pthread_mutex_unlock(&inj.stop_lock);
    return NULL;
}

static void at_exit(void)
{
    if (!inj.tracing)
        return;
    if (inj.writer_running) {
        pthread_mutex_lock(&inj.stop_lock);
        inj.stopping = true;
        pthread_cond_signal(&inj.stop);
        pthread_mutex_unlock(&inj.stop_lock);
        pthread_join(inj.writer, NULL);
        inj.writer_running = false;
    }
    /* A window still open ends with the program; no detach is left
     * pending, since the driver calls of CUDA's own teardown must not find
     * one. */
    pthread_mutex_lock(&inj.cap_lock);
    if (inj.cap_open)
        window_close(now(), inj.cap_seen);
    __atomic_store_n(&inj.detach_pending, false, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&inj.cap_lock);
    /* Kinds off first, then a forced flush: nothing new is recorded while
     * the last buffers are written (NVIDIA's injection sample does the same).
     * One at a time, so that one CUPTI refuses cannot keep the rest on.
     * Detached after the last window, CUPTI holds nothing more. */
    for (size_t i = 0; !inj.detached && i < inj.nkinds; i++)
        cp_cupti_enable(&inj.kinds[i], 1, false);
    flush_now(true, "exit");
    nccl_debug_print();
    inj.tracing = false;
    cp_cupti_lock();
    /* A rec writer was closed by the end mark; a JSON-lines file is closed here. */
    if (inj.w.out)
        fclose(inj.w.out);
    inj.w.out = NULL;
    cp_cupti_unlock();
}

/* Runtime and driver API callbacks: flushes before a context goes, and
 * cuProfilerStart/Stop as window marks. Flushing is allowed here (API
 * callbacks, not buffer or resource callbacks). */
static void CUPTIAPI on_api(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                            const void *data)
{
    (void)userdata;
    if (domain == CUPTI_CB_DOMAIN_NVTX) {
        on_nvtx(cbid, data);
        return;
    }
    const CUpti_CallbackData *cb = data;
    if (cb->callbackSite == CUPTI_API_EXIT && domain == CUPTI_CB_DOMAIN_DRIVER_API &&
        __atomic_load_n(&inj.detach_pending, __ATOMIC_ACQUIRE)) {
        detach_now();
        return;
    }
    if (cb->callbackSite != CUPTI_API_ENTER)
        return;
    bool reset = (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
                  cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) ||
                 (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
                  cbid == CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2);
    bool destroy = domain == CUPTI_CB_DOMAIN_DRIVER_API &&
                   cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2;
    if (reset || destroy) {
        flush_now(true, NULL);
        return;
    }
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart ||
                                                 cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
        bool start = cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
        if (inj.cap.kind == CP_CAPTURE_PROFILER) {
            /* The profiler's calls open and close the window itself. */
            pthread_mutex_lock(&inj.cap_lock);
            if (start && !inj.cap_open)
                window_open(now(), ++inj.cap_seen, false);
            else if (!start && inj.cap_open)
                window_close(now(), inj.cap_seen);
            pthread_mutex_unlock(&inj.cap_lock);
            return;
        }
        cp_cupti_lock();
        cp_proc_writer_profiler(&inj.w, now(), start);
        cp_cupti_unlock();
    }
}

/* This process's command line, joined, as far as it fits. */
static void read_command(char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return;
    size_t n = fread(out, 1, len - 1, f);
    fclose(f);
    out[n] = '\0';
    for (size_t i = 0; i + 1 < n; i++)
        if (out[i] == '\0')
            out[i] = ' ';
}

/* Test only (docs/exec.md "Simulating hosts"): when CUPROOF_TEST_HOST_SHIFT
 * has an entry for this process's rank, its host name replaces `host` and
 * its offset goes into every time the file holds (the writer's shift_ns),
 * so that one machine simulates ranks on hosts whose clocks disagree. A
 * malformed value is said on stderr and shifts nothing: the traced
 * program must run on whatever the variable holds. */
static void apply_host_shift(const cp_process *who, char host[64])
{
    const char *value = getenv(CP_TEST_HOST_SHIFT_VAR);
    if (!value || !*value)
        return;
    char name[CP_HOST_SHIFT_NAME_MAX + 1], why[256];
    int64_t offset = 0;
    int32_t rank = who->rank_var[0] ? who->rank : -1;
    int rc = cp_host_shift_parse(value, rank, name, &offset, why, sizeof why);
    if (rc < 0) {
        fprintf(stderr, "cuproof inject: %s; no host shift is applied\n", why);
        return;
    }
    if (rc == 0)
        return;
    snprintf(host, 64, "%s", name);
    inj.w.shift_ns = offset;
    fprintf(stderr, "cuproof inject: test-only %s: rank %d writes host %s, clock %+lld ns\n",
            CP_TEST_HOST_SHIFT_VAR, (int)rank, name, (long long)offset);
}

/* Opens HOST.PID.proc.jsonl in `dir`, or HOST.PID.proc.cprec when the
 * launcher asks for the rec form (CUPROOF_EXEC_FORMAT=rec), and writes the
 * header; inj.w.out and inj.w.rec stay NULL when it cannot. */
static void open_file(const char *dir)
{
    char host[64] = "", path[4096], command[1024];
    gethostname(host, sizeof host - 1);
    /* The rank and the exec run, from the environment the launcher gave
     * (static: the header is written once, and cuInit is no place for
     * allocation that could fail). Read first: the test-only host shift
     * below depends on the rank, and changes the file's name. */
    static cp_process who;
    cp_rank_from_env(environ, &who);
    apply_host_shift(&who, host);
    const char *format = getenv("CUPROOF_EXEC_FORMAT");
    bool rec = format && strcmp(format, "rec") == 0;
    snprintf(path, sizeof path, "%s/%s.%d.proc.%s", dir, host, (int)getpid(),
             rec ? "cprec" : "jsonl");
    if (rec) {
        if (cp_rec_writer_open(&inj.w.rec, path) < 0) {
            fprintf(stderr, "cuproof inject: %s; this process is not traced\n", cp_last_error());
            cp_rec_writer_abandon(inj.w.rec);
            inj.w.rec = NULL;
            return;
        }
    } else {
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "cuproof inject: cannot write %s: %s; this process is not traced\n",
                    path, strerror(errno));
            return;
        }
        inj.w.out = f;
    }
    read_command(command, sizeof command);
    inj.w.who = &who;
    cp_proc_writer_header(&inj.w, host, (long)getpid(), (long)getppid(), command);
}

/* Subscribes for the API callbacks, then turns activity tracing on.
 * Returns 0, or a negative code with cp_last_error saying why. */
static int start_tracing(void)
{
    int rc = 0;
    if (inj.kinds == timing_kinds) {
        CP_TRY(cp_cupti_register(on_record, on_dropped, NULL));
        CP_TRY(cp_cupti_enable(inj.kinds, inj.nkinds, true));
        return 0;
    }
    /* CUPROOF_EXEC_HOOKS (a diagnostic, for ci/bench/launch-bound.sh):
     * whether a callback in the runtime domain makes every runtime call
     * pay CUPTI's dispatch. "driver" hooks the reset where cudaDeviceReset
     * does it (cuDevicePrimaryCtxReset) instead of in the runtime; "none"
     * subscribes to nothing (no flush before a reset, no profiler marks:
     * for measuring only). Unset, the hooks below. */
    bool runtime_hook = inj.hooks == HOOKS_RUNTIME;
    if (inj.hooks != HOOKS_NONE) {
        CP_TRY(cp_check_cupti(cuptiSubscribe(&inj.subscriber, on_api, NULL), __FILE__, __LINE__,
                              "cuptiSubscribe"));
        if (runtime_hook)
            CP_TRY(cp_check_cupti(
                cuptiEnableCallback(1, inj.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020),
                __FILE__, __LINE__, "cuptiEnableCallback(cudaDeviceReset)"));
        const CUpti_CallbackId driver[] = {CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2,
                                           CUPTI_DRIVER_TRACE_CBID_cuProfilerStart,
                                           CUPTI_DRIVER_TRACE_CBID_cuProfilerStop,
                                           CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2};
        size_t ndriver = sizeof driver / sizeof driver[0] - (runtime_hook ? 1 : 0);
        for (size_t i = 0; i < ndriver; i++)
            CP_TRY(cp_check_cupti(
                cuptiEnableCallback(1, inj.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, driver[i]),
                __FILE__, __LINE__, "cuptiEnableCallback(driver)"));
        /* A range's windows: the default domain's pushes and pops alone,
         * the only cost left outside them. */
        const CUpti_CallbackId nvtx[] = {CUPTI_CBID_NVTX_nvtxRangePushA,
                                         CUPTI_CBID_NVTX_nvtxRangePushEx,
                                         CUPTI_CBID_NVTX_nvtxRangePop};
        bool ranged = inj.cap.kind == CP_CAPTURE_RANGE || inj.cap.kind == CP_CAPTURE_STEPS;
        for (size_t i = 0; ranged && i < sizeof nvtx / sizeof nvtx[0]; i++)
            CP_TRY(cp_check_cupti(
                cuptiEnableCallback(1, inj.subscriber, CUPTI_CB_DOMAIN_NVTX, nvtx[i]),
                __FILE__, __LINE__, "cuptiEnableCallback(nvtx)"));
        /* NCCL's payloads: its pushes on its own domain (a program's other
         * domains' pushes pay the callback too; NCCL's come once a call). */
        CP_TRY(cp_check_cupti(cuptiEnableCallback(1, inj.subscriber, CUPTI_CB_DOMAIN_NVTX,
                                                  CUPTI_CBID_NVTX_nvtxDomainRangePushEx),
                              __FILE__, __LINE__, "cuptiEnableCallback(nvtxDomainRangePushEx)"));
    } else if (inj.cap.kind != CP_CAPTURE_NONE && inj.cap.kind != CP_CAPTURE_TIME) {
        CP_TRY(cp_failf(CP_EINVAL, "CUPROOF_EXEC_HOOKS=none subscribes to nothing: no window "
                                   "of a range or of the profiler can open"));
    }
    CP_TRY(cp_cupti_register(on_record, on_dropped, NULL));
    inj.cap_time_start = now();
    if (inj.cap.kind == CP_CAPTURE_RANGE || inj.cap.kind == CP_CAPTURE_STEPS)
        arm_markers(); /* the first occurrence may be taken */
    if (inj.cap.kind != CP_CAPTURE_NONE) {
        /* Nothing until a window opens. */
        cp_cupti_lock();
        inj.w.cost.recorded = true;
        cp_cupti_unlock();
        return 0;
    }
    CP_TRY(cp_cupti_enable(inj.kinds, inj.nkinds, true));
    /* After the kinds: enabling RUNTIME or DRIVER again would record
     * every call of it again. A call CUPTI would not turn off stays
     * recorded, which loses nothing, so the process is traced all the
     * same, and says so. (Turning the kept calls on alone instead, with
     * the two kinds off, cost the launch-bound loops no less: figures in
     * docs/performance.md.) */
    uint32_t filtered = 0;
    if (!inj.w.cost.api_all && cp_cupti_filter_api(true, NULL, NULL, &filtered) < 0)
        fprintf(stderr, "cuproof inject: %s; such calls stay recorded\n", cp_last_error());
    /* From here on every flush and end mark says what tracing cost. */
    cp_cupti_lock();
    inj.w.cost.api_filtered = filtered;
    inj.w.cost.recorded = true;
    cp_cupti_unlock();
out:
    return rc;
}

/* A child forked without exec shares the parent's file and cannot use
 * CUDA: it must neither write nor end the parent's trace. */
static void after_fork_in_child(void)
{
    inj.tracing = false;
    inj.writer_running = false;
    inj.w.out = NULL;
    inj.w.rec = NULL;
}

/* The kinds to trace into inj.chosen: all of `kinds`, or, when `list`
 * (CUPROOF_EXEC_KINDS, a diagnostic for ci/bench: what each kind costs)
 * is a comma-separated list of their names, those. A name not in the
 * table leaves `why` saying so (the process is then not traced). */
static void choose_kinds(const char *list, char *why, size_t size)
{
    bool want[NKINDS];
    for (size_t k = 0; k < NKINDS; k++)
        want[k] = !list || !*list;
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        size_t k = 0;
        while (k < NKINDS && !(strlen(kinds[k].name) == len && strncmp(p, kinds[k].name, len) == 0))
            k++;
        if (k == NKINDS) {
            int at = snprintf(why, size, CP_WHY_NOT_TRACED ": CUPROOF_EXEC_KINDS names '%.*s', not a kind (",
                              (int)(len < 40 ? len : 40), p);
            for (size_t i = 0; i < NKINDS && at > 0 && (size_t)at < size; i++)
                at += snprintf(why + at, size - (size_t)at, "%s%s", kinds[i].name,
                               i + 1 < NKINDS ? ", " : ")");
            return;
        }
        want[k] = true;
        p += len;
        if (*p == ',')
            p++;
    }
    inj.nkinds = 0;
    for (size_t k = 0; k < NKINDS; k++)
        if (want[k])
            inj.chosen[inj.nkinds++] = kinds[k].kind;
    inj.kinds = inj.chosen;
}

EXPORT int InitializeInjection(void)
{
    pthread_mutex_lock(&inj.init_lock);
    if (inj.initialised) {
        pthread_mutex_unlock(&inj.init_lock);
        return 1;
    }
    inj.initialised = true;
    const char *dir = getenv("CUPROOF_EXEC_DIR");
    if (!dir || !*dir) {
        fprintf(stderr, "cuproof inject: CUPROOF_EXEC_DIR is not set; not tracing "
                        "(run the program under cuproof exec)\n");
        pthread_mutex_unlock(&inj.init_lock);
        return 1;
    }
    const char *mode = getenv("CUPROOF_EXEC_MODE");
    bool timing = mode && strcmp(mode, "timing") == 0;
    char not_traced[300] = "";
    inj.kinds = timing_kinds;
    inj.nkinds = sizeof timing_kinds / sizeof timing_kinds[0];
    if (!timing)
        choose_kinds(getenv("CUPROOF_EXEC_KINDS"), not_traced, sizeof not_traced);
    const char *hooks = getenv("CUPROOF_EXEC_HOOKS");
    if (hooks && strcmp(hooks, "driver") == 0)
        inj.hooks = HOOKS_DRIVER;
    else if (hooks && strcmp(hooks, "none") == 0)
        inj.hooks = HOOKS_NONE;
    else if (hooks && *hooks && !not_traced[0])
        snprintf(not_traced, sizeof not_traced,
                 CP_WHY_NOT_TRACED ": CUPROOF_EXEC_HOOKS is '%.40s', not driver or none", hooks);
    const char *capture = getenv(CP_CAPTURE_VAR);
    if (capture && *capture && !timing && !not_traced[0]) {
        char why[240];
        if (cp_capture_parse(capture, &inj.cap, why, sizeof why) < 0)
            snprintf(not_traced, sizeof not_traced, CP_WHY_NOT_TRACED ": %s", why);
    }
    const char *api = getenv("CUPROOF_EXEC_API");
    inj.w.cost.api_all = api && strcmp(api, "all") == 0;
    const char *debug = getenv("CUPROOF_NCCL_DEBUG");
    nccl_debug.on = debug && strcmp(debug, "1") == 0;
    const char *ms = getenv("CUPROOF_EXEC_FLUSH_MS");
    inj.flush_ms = ms && *ms ? (unsigned)strtoul(ms, NULL, 10) : 500;
    if (inj.flush_ms < 10)
        inj.flush_ms = 10;
    inj.w.origin = now();
    open_file(dir);
    if ((inj.w.out || inj.w.rec) && not_traced[0]) {
        /* A kind or hook the benchmark misnamed: no trace, and the file
         * says why (no verdict), rather than a trace of other than asked. */
        write_mark(not_traced, 0);
        if (inj.w.out)
            fclose(inj.w.out);
        inj.w.out = NULL;
    } else if (inj.w.out || inj.w.rec) {
        if (start_tracing() < 0) {
            /* Another tool holds CUPTI, or the driver refused: say so in the
             * file, which the trust rule turns into no verdict (3). */
            char why[600];
            snprintf(why, sizeof why, CP_WHY_CUPTI_UNAVAILABLE ": %s", cp_last_error());
            cp_cupti_enable(inj.kinds, inj.nkinds, false);
            write_mark(why, 0);
            if (inj.w.out)
                fclose(inj.w.out);
            inj.w.out = NULL;
        } else {
            inj.tracing = true;
            atexit(at_exit);
            pthread_atfork(NULL, NULL, after_fork_in_child);
            inj.writer_running = pthread_create(&inj.writer, NULL, writer, NULL) == 0;
        }
    }
    pthread_mutex_unlock(&inj.init_lock);
    return 1;
}

/* NVTX's injection entry: CUPTI's own, which turns the program's NVTX
 * calls into MARKER records. Calling cuptiNvtxInitialize2 from here
 * crashed on the H100 (CUDA 13.0) when the program's first NVTX call came
 * before cuInit; libcupti's exported entry point, looked up in the copy
 * this library already loaded, does what NVIDIA's injection sample gets
 * by naming libcupti.so itself. */
typedef int (*nvtx_init_fn)(void *);

EXPORT int InitializeInjectionNvtx2(void *getExportTable)
{
    Dl_info info;
    void *lib = NULL;
    if (dladdr((void *)cuptiGetTimestamp, &info) && info.dli_fname)
        lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    nvtx_init_fn init = lib ? (nvtx_init_fn)dlsym(lib, "InitializeInjectionNvtx2") : NULL;
    if (!init) {
        fprintf(stderr, "cuproof inject: libcupti's InitializeInjectionNvtx2 was not found; "
                        "the program's NVTX ranges are not traced\n");
        return 0;
    }
    return init(getExportTable);
}
