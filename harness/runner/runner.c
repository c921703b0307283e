/*
 * The runner (cuproof/internal/runner.h): one case through the contract of
 * cuproof/case.h. Its set-up, then per variant the warm-ups, the timed runs
 * (untraced, until the stopping rule ends them, or lent by the case's
 * untraced pass) and one traced run, each prepared, run and verified with
 * only the run inside the timed region and the traced window; then the
 * output, leak and expectation checks, the case's own checks and claims,
 * and the verdict. Also the process's tracing switch (cp_tracing_init and
 * the rest), over the collect layer's tracer.
 */
#include <cuproof/expect.h>
#include <cuproof/internal/compare_stats.h>
#include <cuproof/internal/run_stats.h>
#include <cuproof/internal/runner.h>
#include <cuproof/device.h>

#include "runner/ctx.h"
#include <cuproof/check.h>

#include <cuproof/nvtx.h>
#include "runner/gpu_time.h"
#include <cuproof/gate.h>
#include "runner/window.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Waits for the device, so that a timed run ends when its work ends. */
static int device_sync(const cp_ctx *ctx)
{
    int rc = 0;
    if (!ctx->def->cpu_only) {
        CP_CUDA(cudaDeviceSynchronize());
        CP_CUDA(cudaGetLastError());
    }
out:
    return rc;
}

/* One repetition: prepare (untimed) -> run (timed when `ms` is given;
 * traced into `trace` when it is given) -> verify (untimed). The traced
 * window holds the run alone, as the timed region does. With `gpu` (a
 * timed run of a variant judged on the GPU's time), the GPU's time of the
 * body too, into *gpu_ms, bracketed by events and behind the gate where
 * the variant is gated (runner/gpu_time.h). */
static int one_run(cp_ctx *ctx, const cp_variant *v, cp_variant_result *vr, double *ms,
                   cp_trace *trace, cp_gpu_timer *gpu, double *gpu_ms)
{
    int rc = 0;
    bool tracing = false, timing_gpu = false;
    if (ctx->def->prepare)
        CP_TRY(ctx->def->prepare(ctx, v));
    CP_TRY(device_sync(ctx));
    if (trace) {
        CP_TRY(cp_tracer_begin(trace));
        tracing = true;
    }
    if (gpu) {
        timing_gpu = true;
        CP_TRY(cp_gpu_timer_begin(gpu, ctx->env->device, ctx->settings[v->index].gated,
                                  ctx->streams, ctx->nstreams));
    }
    double t0 = cp_now_ms();
    rc = ctx->def->run(ctx, v);
    while (ctx->open_phases > 0)
        cp_phase_end(ctx);
    if (gpu) {
        timing_gpu = false;
        int end = cp_gpu_timer_end(gpu, ctx->streams, ctx->nstreams);
        rc = rc < 0 ? rc : end;
    }
    CP_TRY(rc);
    CP_TRY(device_sync(ctx));
    double t1 = cp_now_ms();
    if (ms)
        *ms = t1 - t0;
    if (gpu)
        CP_TRY(cp_gpu_timer_read(gpu, gpu_ms));
    if (trace) {
        tracing = false;
        CP_TRY(cp_tracer_end());
    }
    if (ctx->def->verify) {
        uint64_t bad = 0, elements = 0;
        cp_nvtx_push("verify");
        rc = ctx->def->verify(ctx, v, &bad, &elements);
        cp_nvtx_pop();
        CP_TRY(rc);
        vr->verified_runs++;
        vr->elements = elements;
        if (bad > vr->worst_mismatches)
            vr->worst_mismatches = bad;
    }
out:
    if (timing_gpu)
        cp_gpu_timer_end(gpu, ctx->streams, ctx->nstreams); /* opens the gate */
    if (tracing)
        cp_tracer_end(); /* close the window; the run's own error is reported */
    return rc;
}

/* Free device memory now (0 for a CPU-only case). */
static int free_memory(const cp_ctx *ctx, size_t *bytes)
{
    int rc = 0;
    size_t total = 0;
    *bytes = 0;
    if (!ctx->def->cpu_only)
        CP_CUDA(cudaMemGetInfo(bytes, &total));
out:
    return rc;
}

static int traced_run(cp_ctx *ctx, const cp_variant *v, cp_variant_result *vr)
{
    int rc = 0;
    CP_TRY(one_run(ctx, v, vr, NULL, &vr->trace, NULL, NULL));
    cp_timeline_opts to = {
        .max_concurrent_kernels = cp_max_concurrent_kernels(ctx->env->cc_major, ctx->env->cc_minor)};
    CP_TRY(cp_timeline_analyse(&vr->trace, &to, &vr->metrics));
    vr->traced = true;
out:
    return rc;
}

void cp_run_opts_stopping_rule(cp_run_opts *o, cp_profile profile)
{
    bool full = profile == CP_PROFILE_FULL;
    o->repeat = 0;
    /* Five runs at least, as many as the full profile had; the time limit
     * keeps a variant of two seconds a run (multi-kernel's sync) at five. */
    o->min_samples = 5;
    o->max_samples = full ? 100 : 50;
    o->max_noise = full ? 0.01 : 0.02;
    o->min_time_s = 0;
    o->max_time_s = full ? 5 : 1;
}

int cp_run_opts_stopping_rule_given(cp_run_opts *o, cp_profile profile, const cp_run_opts *given)
{
    cp_run_opts_stopping_rule(o, profile);
    if (given->min_samples)
        o->min_samples = given->min_samples;
    if (given->max_samples)
        o->max_samples = given->max_samples;
    if (given->max_noise > 0)
        o->max_noise = given->max_noise;
    if (given->min_time_s > 0)
        o->min_time_s = given->min_time_s;
    if (given->max_time_s > 0)
        o->max_time_s = given->max_time_s;
    if (o->max_samples < o->min_samples)
        return cp_failf(CP_EINVAL, "--max-samples is below --min-samples");
    if (o->max_time_s < o->min_time_s)
        return cp_failf(CP_EINVAL, "--max-time is below --min-time");
    return 0;
}

/* The relative standard error of the median of n samples: about 1.2533
 * standard errors of the mean for a normal distribution, over the median. */
static double median_noise(const cp_timing *t)
{
    if (t->runs < 2 || !(t->median_ms > 0))
        return INFINITY;
    return 1.2533 * t->stddev_ms / sqrt((double)t->runs) / t->median_ms;
}

/* Whether the timed runs may stop after n of them, elapsed_s in; sets
 * vr's stopped_by when they may. */
static bool enough_runs(const cp_run_opts *o, size_t n, const double *samples, double elapsed_s,
                        cp_variant_result *vr)
{
    if (o->repeat > 0) {
        if ((int)n < o->repeat)
            return false;
        snprintf(vr->stopped_by, sizeof vr->stopped_by, "fixed");
        return true;
    }
    if ((int)n < o->min_samples || elapsed_s < o->min_time_s)
        return false;
    cp_timing t;
    if (cp_timing_compute(samples, n, &t) < 0)
        return false;
    vr->noise = median_noise(&t);
    const char *why = vr->noise <= o->max_noise        ? "noise"
                      : (int)n >= o->max_samples       ? "max_samples"
                      : elapsed_s >= o->max_time_s     ? "max_time"
                                                       : NULL;
    if (why)
        snprintf(vr->stopped_by, sizeof vr->stopped_by, "%s", why);
    return why != NULL;
}

/* Tells the caller's hook, when there is one, which run of `v` comes next
 * (or, with phase "done" and its result, that the variant is done);
 * `started` is cp_now_ms at the variant's first run. */
static void announce(const cp_ctx *ctx, const cp_variant *v, const char *phase, int run,
                     int max_runs, double started, const cp_variant_result *result)
{
    const cp_run_opts *o = ctx->opts;
    if (!o->on_run)
        return;
    cp_run_progress p = {.case_name = ctx->result->name, .variant = v->name,
                         .variant_index = v->index, .nvariants = ctx->nvariants,
                         .phase = phase, .run = run, .max_runs = max_runs,
                         .elapsed_s = (cp_now_ms() - started) / 1e3, .result = result};
    o->on_run(o->on_run_user, &p);
}

/* The variant `name` of cp_run_opts.timed, when it has timed runs. */
static const cp_variant_result *timed_before(const cp_run_opts *o, const char *name)
{
    for (size_t i = 0; o->timed && i < o->timed->nvariants; i++) {
        const cp_variant_result *v = &o->timed->variants[i];
        if (strcmp(v->name, name) == 0)
            return v->ran && v->nsamples > 0 ? v : NULL;
    }
    return NULL;
}

/* A traced window's GPU work in ms, the gate kernels left out (the
 * runner's and a case's own: neither is the body's work), which are
 * dropped from *t and counted into *gates: its span, from the first
 * kernel, copy or memset's start to the last one's end, into *span_ms;
 * its own busy time (cp_metrics_own_ns: what compare judges a variant
 * whose events hold waits on) into *own_ms. Each 0 when it holds none. */
static int work_of(const cp_ctx *ctx, cp_trace *t, double *span_ms, double *own_ms,
                   double *gates)
{
    uint64_t first = UINT64_MAX, last = 0;
    size_t kept = 0;
    *gates = 0;
    for (size_t i = 0; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (a->kind == CP_ACT_KERNEL && a->name && strcmp(a->name, CP_GATE_KERNEL) == 0) {
            ++*gates;
            continue;
        }
        t->items[kept++] = *a;
        if (a->kind != CP_ACT_KERNEL && a->kind != CP_ACT_MEMCPY && a->kind != CP_ACT_MEMSET)
            continue;
        first = a->start < first ? a->start : first;
        last = a->end > last ? a->end : last;
    }
    t->n = kept;
    *span_ms = last > first ? (double)(last - first) / 1e6 : 0;
    cp_timeline_opts to = {
        .max_concurrent_kernels = cp_max_concurrent_kernels(ctx->env->cc_major, ctx->env->cc_minor)};
    cp_metrics m;
    int rc = cp_timeline_analyse(t, &to, &m);
    *own_ms = rc == 0 ? (double)cp_metrics_own_ns(&m) / 1e6 : 0;
    if (rc == 0)
        cp_metrics_free(&m);
    return rc;
}

/* CUPROOF_CHECK_GPU_TIME=1 (a check of the figure, never for a report
 * that is compared): each timed run judged on the GPU's time is traced
 * as well, so that its events can be held against CUPTI's account of the
 * same run's work: the series "timed_gpu_ms", "timed_cupti_span_ms",
 * "timed_cupti_own_ms" and "timed_cupti_gates" (the gate kernels left
 * out of each) (ci/gpu-figure.py). */
static bool checking_gpu_time(const cp_ctx *ctx, bool on_gpu)
{
    const char *e = getenv("CUPROOF_CHECK_GPU_TIME");
    return on_gpu && e && strcmp(e, "1") == 0 && cp_tracer_available() && !ctx->def->cpu_only;
}

/* Under CUPROOF_CHECK_GPU_TIME, where a figure and CUPTI's account of the
 * same work differ by more than 5% and 0.5 us (ci/gpu-figure.py's
 * bounds): the activities of the run (or runs) behind it on stderr, from
 * the window's first, so that the reason (a gate not recognised, work
 * not held behind it, kernels slower in one run than another) is there
 * to be read, which the report's figures alone cannot give. */
static bool off_by_more(double a, double b)
{
    double off = fabs(a - b);
    return off > 0.0005 && off > 0.05 * fmax(a, b);
}

static void list_trace(const char *title, const cp_trace *t)
{
    uint64_t t0 = UINT64_MAX;
    for (size_t i = 0; i < t->n; i++)
        t0 = t->items[i].start < t0 ? t->items[i].start : t0;
    fprintf(stderr, "  %s, %zu activities (us from the first):\n", title, t->n);
    for (size_t i = 0; i < t->n && i < 48; i++) {
        const cp_activity *a = &t->items[i];
        fprintf(stderr, "    %-8s %10.3f %10.3f  stream %u  grid %u block %u  %s\n",
                cp_act_kind_name(a->kind), (double)(a->start - t0) / 1e3,
                (double)(a->end - a->start) / 1e3, a->stream, a->grid[0], a->block[0],
                a->name ? a->name : "(no name)");
    }
}

/* A gated variant's first timed run whose span of the work (t, its gates
 * left out and counted in `gates`) is off its events. */
static void list_if_span_off(const cp_ctx *ctx, const cp_variant *v, const cp_trace *t,
                             double events_ms, double span_ms, double gates, bool *listed)
{
    if (*listed || !ctx->settings[v->index].gated || !off_by_more(span_ms, events_ms))
        return;
    *listed = true;
    fprintf(stderr,
            "cuproof: %s %s: CUPTI's span of a timed run's work %.4f ms, its events %.4f ms, "
            "%.0f gate kernel(s) left out\n",
            ctx->def->id, v->name, span_ms, events_ms, gates);
    list_trace("the timed run, its gates left out", t);
}

/* An ungated variant whose traced run's own busy time (what compare
 * judges where its events hold waits) is off the timed runs' median own
 * busy time: the traced run and the last timed run. */
static void list_if_own_off(const cp_variant *v, const cp_variant_result *vr,
                            const double *timed_own, size_t n, const cp_trace *last_timed)
{
    if (vr->gated || !vr->traced || n == 0)
        return;
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return;
    memcpy(sorted, timed_own, n * sizeof *sorted);
    double median = cp_median_inplace(sorted, n);
    free(sorted);
    double own = (double)cp_variant_own_ns(vr) / 1e6;
    if (!off_by_more(own, median))
        return;
    fprintf(stderr,
            "cuproof: %s: the traced run's own busy time %.4f ms, the timed runs' median %.4f ms\n",
            v->name, own, median);
    list_trace("the traced run", &vr->trace);
    list_trace("the last timed run", last_timed);
}

/* The variant's figure and how its GPU time is taken, into vr. */
static void set_figure(const cp_ctx *ctx, const cp_variant *v, cp_variant_result *vr)
{
    const cp_variant_setting *st = &ctx->settings[v->index];
    vr->figure = ctx->def->cpu_only || st->figure_why[0] ? CP_WORK_WALL : CP_WORK_GPU;
    vr->gated = vr->figure == CP_WORK_GPU && st->gated;
    snprintf(vr->figure_why, sizeof vr->figure_why, "%s",
             ctx->def->cpu_only ? "the case runs on the CPU"
             : vr->figure == CP_WORK_WALL ? st->figure_why
                                          : "");
}

static int run_variant(cp_ctx *ctx, const cp_variant *v, const cp_run_opts *o,
                       cp_variant_result *vr)
{
    int rc = 0;
    double variant_started = cp_now_ms();
    size_t cap = (size_t)(o->repeat > 0 ? o->repeat : o->max_samples);
    double *samples = calloc(cap ? cap : 1, sizeof *samples);
    double *gpu_samples = calloc(cap ? cap : 1, sizeof *gpu_samples);
    /* CUPROOF_CHECK_GPU_TIME */
    double *cupti_span = NULL, *cupti_own = NULL, *cupti_gates = NULL;
    bool listed = false;
    cp_trace last_checked;
    cp_trace_init(&last_checked);
    cp_gpu_timer timer = {0};
    if (!samples || !gpu_samples) {
        free(samples);
        free(gpu_samples);
        return CP_ENOMEM;
    }
    set_figure(ctx, v, vr);
    bool on_gpu = vr->figure == CP_WORK_GPU;
    /* Warm-up runs are traced when the measured run will be, and their
     * records dropped: CUPTI instruments each kernel on its first traced
     * launch (about 1 ms on an H100), which must not land in the trace
     * that checks read. */
    bool trace_warmup = o->trace && !ctx->def->cpu_only && cp_tracer_available();
    bool check = checking_gpu_time(ctx, on_gpu);
    size_t first_free = 0;
    long long timed_leak = 0;
    const cp_variant_result *lent = timed_before(o, v->name);
    size_t n = 0, ngpu = 0;
    if (lent) {
        /* Timed before any tracing (cp_run_opts.timed): its runs stand
         * for this variant's; one traced warm-up before the traced run. */
        double *room = realloc(samples, lent->nsamples * sizeof *samples);
        if (!room)
            CP_TRY(CP_ENOMEM);
        samples = room;
        memcpy(samples, lent->samples_ms, lent->nsamples * sizeof *samples);
        n = lent->nsamples;
        if (lent->ngpu_samples) {
            if (!(room = realloc(gpu_samples, lent->ngpu_samples * sizeof *gpu_samples)))
                CP_TRY(CP_ENOMEM);
            gpu_samples = room;
            memcpy(gpu_samples, lent->gpu_samples_ms, lent->ngpu_samples * sizeof *gpu_samples);
            ngpu = lent->ngpu_samples;
        }
        snprintf(vr->stopped_by, sizeof vr->stopped_by, "%s", lent->stopped_by);
        vr->clocks_before = lent->clocks_before;
        vr->clocks_after = lent->clocks_after;
        vr->worst_mismatches = lent->worst_mismatches;
        vr->verified_runs = lent->verified_runs;
        vr->elements = lent->elements;
        timed_leak = lent->memory_checked ? lent->leaked_bytes : 0;
        /* The check of the figure (CUPROOF_CHECK_GPU_TIME) came with them. */
        for (size_t i = 0; i < lent->nseries; i++)
            if (strncmp(lent->series[i].name, "timed_", 6) == 0)
                CP_TRY(cp_series_set(ctx, v, lent->series[i].name, lent->series[i].unit,
                                     lent->series[i].values, lent->series[i].n));
        if (o->warmup > 0) {
            cp_trace scratch;
            cp_trace_init(&scratch);
            announce(ctx, v, "warm-up", 1, 1, variant_started, NULL);
            rc = one_run(ctx, v, vr, NULL, trace_warmup ? &scratch : NULL, NULL, NULL);
            cp_trace_free(&scratch);
            CP_TRY(rc);
        }
        CP_TRY(free_memory(ctx, &first_free));
        goto timed;
    }
    for (int i = 0; i < o->warmup; i++) {
        cp_trace scratch;
        cp_trace_init(&scratch);
        announce(ctx, v, "warm-up", i + 1, o->warmup, variant_started, NULL);
        rc = one_run(ctx, v, vr, NULL, trace_warmup ? &scratch : NULL, NULL, NULL);
        cp_trace_free(&scratch);
        CP_TRY(rc);
        if (i == 0)
            CP_TRY(free_memory(ctx, &first_free));
    }
    /* Timed runs are untraced: tracing must not inflate what is reported.
     * The stopping rule reads the figure the variant is judged on. */
    if (!ctx->def->cpu_only)
        cp_gpu_clocks(ctx->env->device, &vr->clocks_before);
    double started = cp_now_ms();
    if (check && (!(cupti_span = calloc(cap ? cap : 1, sizeof *cupti_span)) ||
                  !(cupti_own = calloc(cap ? cap : 1, sizeof *cupti_own)) ||
                  !(cupti_gates = calloc(cap ? cap : 1, sizeof *cupti_gates))))
        CP_TRY(CP_ENOMEM);
    do {
        announce(ctx, v, "timed", (int)n + 1, (int)cap, variant_started, NULL);
        cp_trace checked;
        cp_trace_init(&checked);
        rc = one_run(ctx, v, vr, &samples[n], check ? &checked : NULL, on_gpu ? &timer : NULL,
                     &gpu_samples[n]);
        if (check && rc == 0) {
            rc = work_of(ctx, &checked, &cupti_span[n], &cupti_own[n], &cupti_gates[n]);
            list_if_span_off(ctx, v, &checked, gpu_samples[n], cupti_span[n], cupti_gates[n],
                             &listed);
        }
        cp_trace_free(&last_checked);
        last_checked = checked; /* kept for list_if_own_off */
        CP_TRY(rc);
        if (n == 0 && o->warmup == 0)
            CP_TRY(free_memory(ctx, &first_free));
        n++;
        ngpu = on_gpu ? n : 0;
    } while (n < cap && !enough_runs(o, n, on_gpu ? gpu_samples : samples,
                                     (cp_now_ms() - started) / 1e3, vr));
    if (!vr->stopped_by[0])
        snprintf(vr->stopped_by, sizeof vr->stopped_by, o->repeat > 0 ? "fixed" : "max_samples");
    if (!ctx->def->cpu_only)
        cp_gpu_clocks(ctx->env->device, &vr->clocks_after);
    if (check) {
        CP_TRY(cp_series_set(ctx, v, "timed_gpu_ms", "ms", gpu_samples, n));
        CP_TRY(cp_series_set(ctx, v, "timed_cupti_span_ms", "ms", cupti_span, n));
        CP_TRY(cp_series_set(ctx, v, "timed_cupti_own_ms", "ms", cupti_own, n));
        CP_TRY(cp_series_set(ctx, v, "timed_cupti_gates", "count", cupti_gates, n));
    }
timed:
    CP_TRY(cp_timing_compute(samples, n, &vr->timing));
    vr->noise = median_noise(&vr->timing);
    if (ngpu) {
        CP_TRY(cp_timing_compute(gpu_samples, ngpu, &vr->gpu_timing));
        vr->noise = median_noise(&vr->gpu_timing);
        vr->gpu_samples_ms = gpu_samples;
        vr->ngpu_samples = ngpu;
        gpu_samples = NULL;
    }
    vr->samples_ms = samples;
    vr->nsamples = n;
    samples = NULL;
    vr->ran = true;
    if (ctx->def->cpu_only)
        snprintf(vr->untraced_reason, sizeof vr->untraced_reason, "the case runs on the CPU");
    else if (!o->trace)
        snprintf(vr->untraced_reason, sizeof vr->untraced_reason, "tracing was not requested");
    else if (!cp_tracer_available())
        snprintf(vr->untraced_reason, sizeof vr->untraced_reason, "%s",
                 cp_tracer_unavailable_reason());
    else {
        announce(ctx, v, "traced", 1, 1, variant_started, NULL);
        CP_TRY(traced_run(ctx, v, vr));
        if (cupti_own) /* checked here, not lent */
            list_if_own_off(v, vr, cupti_own, n, &last_checked);
    }
    /* Free memory is device-wide: with other processes on the GPU (the
     * sanitizer runs side by side, say) it measures them too, so it is not
     * read, and add_leak_check says why. */
    if (!ctx->def->cpu_only && !ctx->env->shared_gpu[0]) {
        size_t last_free = 0;
        CP_TRY(free_memory(ctx, &last_free));
        vr->memory_checked = true;
        vr->leaked_bytes = timed_leak + (long long)first_free - (long long)last_free;
    }
    /* A variant timed before (cp_run_opts.timed) was said done then. */
    if (!lent)
        announce(ctx, v, "done", (int)n, (int)cap, variant_started, vr);
out:
    cp_gpu_timer_free(&timer);
    free(cupti_span);
    free(cupti_own);
    free(cupti_gates);
    cp_trace_free(&last_checked);
    free(samples);
    free(gpu_samples);
    return rc;
}

static void add_output_check(cp_ctx *ctx, int index, const cp_variant_result *vr)
{
    char name[128], expected[256];
    double fraction = ctx->settings[index].allowed_fraction;
    uint64_t allowed = (uint64_t)(fraction * (double)vr->elements);
    if (fraction > 0) {
        snprintf(name, sizeof name, "%s: output equals the CPU reference within the bound",
                 vr->name);
        snprintf(expected, sizeof expected, "at most %llu elements (%g%%) differ in every run: %s",
                 (unsigned long long)allowed, fraction * 100, ctx->settings[index].allowed_reason);
    } else {
        snprintf(name, sizeof name, "%s: output equals the CPU reference", vr->name);
        snprintf(expected, sizeof expected, "0 mismatching elements in every run");
    }
    cp_check(ctx, name, vr->worst_mismatches <= allowed && vr->verified_runs > 0, expected,
             "%llu of %llu elements differ in the worst of %d runs",
             (unsigned long long)vr->worst_mismatches, (unsigned long long)vr->elements,
             vr->verified_runs);
}

/* The leak check: device memory after the variant's last run against
 * after its first; a variant marked as leaking must be caught. */
static void add_leak_check(cp_ctx *ctx, int index, const cp_variant_result *vr)
{
    if (!ctx->def->cpu_only && ctx->env->shared_gpu[0]) {
        char name[128];
        snprintf(name, sizeof name, "%s: device memory returned after every run", vr->name);
        cp_check_skip(ctx, name, "at most 8 MiB kept between the first and the last run",
                      ctx->env->shared_gpu);
        return;
    }
    if (!vr->memory_checked)
        return;
    char name[128];
    bool leaked = vr->leaked_bytes > CP_LEAK_BYTES;
    double mib = (double)vr->leaked_bytes / (1 << 20);
    if (ctx->settings[index].expect_leak) {
        snprintf(name, sizeof name, "%s: the harness detects the leak (negative control)",
                 vr->name);
        cp_check(ctx, name, leaked, "more than 8 MiB of device memory kept",
                 "%.1f MiB kept between the first and the last run", mib);
    } else {
        snprintf(name, sizeof name, "%s: device memory returned after every run", vr->name);
        cp_check(ctx, name, !leaked, "at most 8 MiB kept between the first and the last run",
                 "%.1f MiB kept", mib);
    }
}

/* Parses the case's expectations into `list` (cp_run_case checked them
 * first, with cp_case_validate, before anything ran). */
static int load_expectations(const char *text, const char *which, cp_expect_list *list)
{
    if (text && cp_expect_parse(text, 1, list) < 0)
        return cp_failf(CP_EINVAL, "the case's %s: %s", which, cp_last_error());
    return 0;
}

/* One check per expectation and variant it names (every variant when it
 * names none); cp_check_trace skips it when that variant was not traced. */
static void add_expectation_checks(cp_ctx *ctx, const cp_expect_list *list, bool essential)
{
    for (size_t k = 0; k < list->n; k++) {
        const cp_expectation *e = &list->items[k];
        for (int i = 0; i < ctx->nvariants; i++) {
            const char *variant = ctx->def->variants[i];
            bool on_device = cp_expect_on_device(e);
            if (e->scope[0] && !on_device && strcmp(e->scope, variant) != 0)
                continue;
            const cp_variant_result *v = cp_variant_result_get(ctx, variant);
            char measured[96] = "not measured", name[320];
            bool ok = false;
            if (v && on_device && v->traced) {
                /* That device's part of the variant's trace. */
                cp_timeline_opts to = {.max_concurrent_kernels = cp_max_concurrent_kernels(
                                           ctx->env->cc_major, ctx->env->cc_minor)};
                if (cp_expect_eval_trace(e, &v->trace, &to, &ok, measured, sizeof measured) < 0) {
                    ok = false;
                    snprintf(measured, sizeof measured, "%.80s", cp_last_error());
                }
            } else if (v) {
                ok = cp_expect_eval(e, &v->metrics, measured, sizeof measured);
            }
            cp_expect_check_name(e, variant, name, sizeof name);
            cp_check_trace(ctx, variant, name, ok, e->text, "%s", measured);
            if (essential)
                cp_essential(ctx, name);
        }
    }
}

/* A passed case whose essential check was skipped is inconclusive: its
 * claim was never checked. Tracing turned off on request (--no-trace) is
 * the one way such checks are skipped by design; a premise that failed
 * (the gate of conway-streams, say) is not, traced or not. */
static void judge_essentials(cp_case_result *r)
{
    size_t used = 0;
    for (size_t i = 0; i < r->nchecks; i++) {
        const cp_check_result *k = &r->checks[i];
        if (!k->essential || k->status != CP_CHECK_SKIPPED || k->skipped_on_request)
            continue;
        if (r->status == CP_STATUS_PASSED) {
            r->status = CP_STATUS_INCONCLUSIVE;
            used = (size_t)snprintf(r->skip_reason, sizeof r->skip_reason,
                                    "essential check not made: %s (%s)", k->name, k->skip_reason);
        } else if (used < sizeof r->skip_reason) {
            used += (size_t)snprintf(r->skip_reason + used, sizeof r->skip_reason - used,
                                     "; and %s", k->name);
        }
    }
}

static void record_error(cp_case_result *r, const char *what, int rc)
{
    r->status = CP_STATUS_FAILED;
    const char *detail = cp_last_error();
    snprintf(r->error, sizeof r->error, "%s: %s%s%s", what, cp_strerror(rc),
             *detail ? ": " : "", detail);
    cp_clear_last_error();
}

static bool names_variant(const cp_case_def *def, const char *name)
{
    for (const char *const *v = def->variants; v && *v; v++)
        if (!strcmp(*v, name))
            return true;
    return false;
}

/* The line of source file `file` that holds line `line` of a case's
 * declared text (its string literal, as written), or 0 when it cannot be
 * told (no such line, an empty one, a file not at hand, as in an
 * installed build): the first source line holding it whole. */
static int source_line(const char *file, const char *text, int line)
{
    const char *p = text;
    for (int l = 1; l < line && p; l++)
        if ((p = strchr(p, '\n')))
            p++;
    if (!p)
        return 0;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t len = strcspn(p, "\n");
    while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r'))
        len--;
    char want[256];
    if (!len || len >= sizeof want || !file)
        return 0;
    memcpy(want, p, len);
    want[len] = '\0';
    FILE *f = fopen(file, "r");
    if (!f)
        return 0;
    char buf[4096];
    int n = 0, found = 0;
    while (!found && fgets(buf, sizeof buf, f)) {
        n++;
        if (strstr(buf, want))
            found = n;
    }
    fclose(f);
    return found;
}

/* `why` (errors naming "line N, column C" of `text`) with each such place
 * followed by its source line, " (FILE:LINE)", where it can be told. */
static void at_source_lines(const char *file, const char *text, const char *why, char *out,
                            size_t len)
{
    size_t o = 0;
    for (const char *p = why; *p && o + 1 < len;) {
        int line = 0, column = 0, used = 0;
        if (strncmp(p, "line ", 5) == 0 &&
            sscanf(p, "line %d, column %d%n", &line, &column, &used) == 2 && used > 0) {
            int s = source_line(file, text, line);
            int w = s ? snprintf(out + o, len - o, "%.*s (%s:%d)", used, p, file, s)
                      : snprintf(out + o, len - o, "%.*s", used, p);
            o += w > 0 ? (size_t)w : 0;
            p += used;
            if (o >= len)
                o = len - 1;
            continue;
        }
        out[o++] = *p++;
    }
    out[o < len ? o : len - 1] = '\0';
}

/* One declared text of the case checked (cp_case_validate): each error
 * prefixed with the file, the case and which text it is, and each place
 * in the text followed by its line in the case's source file. */
static void validate_text(const cp_case_def *def, const char *text, const char *which,
                          cp_errors *bad)
{
    if (!text)
        return;
    cp_expect_list list = {0};
    int rc = cp_expect_parse(text, 1, &list);
    if (rc == 0)
        rc = cp_expect_validate(&list, def->variants, (size_t)cp_case_variant_count(def));
    cp_expect_list_free(&list);
    if (rc < 0) {
        char why[3000];
        at_source_lines(def->file, text, cp_last_error(), why, sizeof why);
        cp_errors_add(bad, cp_failf(rc, "%s: case %s: its %s, %s",
                                    def->file ? def->file : "(unknown file)", cp_case_name(def),
                                    which, why));
    }
}

int cp_case_validate(const cp_case_def *def)
{
    cp_errors bad = {0};
    if (def->baseline && !names_variant(def, def->baseline))
        cp_errors_add(&bad, cp_failf(CP_EINVAL, "%s: case %s: its baseline \"%s\" is none of "
                                                "its variants",
                                     def->file ? def->file : "(unknown file)", cp_case_name(def),
                                     def->baseline));
    validate_text(def, def->expect, "expectations", &bad);
    validate_text(def, def->essential, "essential expectations", &bad);
    int rc = cp_errors_finish(&bad);
    return rc < 0 ? CP_EINVAL : 0;
}

int cp_case_check_params(const cp_case_def *def, const char *const *params, size_t n)
{
    cp_errors bad = {0};
    char takes[512] = "";
    for (const cp_param_def *p = def->params; p && p->name; p++) {
        size_t used = strlen(takes);
        snprintf(takes + used, sizeof takes - used, "%s%s (%ld to %ld)", used ? ", " : "",
                 p->name, p->lo, p->hi);
    }
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(params[i], '=');
        size_t len = eq ? (size_t)(eq - params[i]) : strlen(params[i]);
        const cp_param_def *p = def->params;
        while (p && p->name && (strlen(p->name) != len || strncmp(p->name, params[i], len)))
            p++;
        if (!p || !p->name) {
            cp_errors_add(&bad, cp_failf(CP_EINVAL, "--param %s: case %s takes no such parameter "
                                                    "(it takes: %s)",
                                         params[i], cp_case_name(def), *takes ? takes : "none"));
            continue;
        }
        char *end = NULL;
        errno = 0;
        long v = eq ? strtol(eq + 1, &end, 10) : 0;
        if (!eq || end == eq + 1 || *end || errno || v < p->lo || v > p->hi)
            cp_errors_add(&bad, cp_failf(CP_EINVAL, "--param %s: case %s's %s is an integer from "
                                                    "%ld to %ld",
                                         params[i], cp_case_name(def), p->name, p->lo, p->hi));
    }
    return cp_errors_finish(&bad);
}

int cp_run_case(const cp_case_def *def, const cp_env *env, const cp_run_opts *o,
                cp_case_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", cp_case_name(def));
    snprintf(r->title, sizeof r->title, "%s", def->title ? def->title : "");
    snprintf(r->source, sizeof r->source, "%s", def->source ? def->source : "");
    snprintf(r->baseline, sizeof r->baseline, "%s", def->baseline ? def->baseline : "");
    bool rule_ok = o->repeat > 0 || (o->min_samples >= 1 && o->max_samples >= o->min_samples &&
                                     o->max_noise > 0 && o->max_time_s >= o->min_time_s);
    if (o->repeat < 0 || !rule_ok || o->warmup < 0 || !def->run) {
        record_error(r, "bad options", CP_EINVAL);
        return CP_EINVAL;
    }
    /* Before a case without a GPU is skipped: a typo in its declaration
     * fails it on a CPU-only machine too. */
    if (cp_case_validate(def) < 0) {
        record_error(r, "bad case declaration", CP_EINVAL);
        return CP_EINVAL;
    }
    r->device = env->device;
    if (!def->cpu_only)
        snprintf(r->gpu_name, sizeof r->gpu_name, "%s", env->gpu_name);
    if (!def->cpu_only && !env->has_device) {
        r->status = CP_STATUS_SKIPPED;
        snprintf(r->skip_reason, sizeof r->skip_reason, "%s", env->no_device_reason);
        return 0;
    }

    int rc = 0, fatal = 0;
    bool set_up = false;
    char untrusted[512] = ""; /* why a variant's trace cannot be trusted */
    cp_expect_list expect = {0}, essential = {0};
    cp_ctx ctx = {.def = def, .profile = o->profile, .env = env, .result = r,
                  .nvariants = cp_case_variant_count(def), .opts = o};
    ctx.settings = calloc((size_t)ctx.nvariants + 1, sizeof *ctx.settings);
    ctx.param_read = calloc(o->nparams + 1, sizeof *ctx.param_read);
    if (!ctx.settings || !ctx.param_read) {
        free(ctx.settings);
        free(ctx.param_read);
        record_error(r, "case", CP_ENOMEM);
        return 0;
    }
    cp_clear_last_error();
    cp_nvtx_push("case %s", r->name);
    CP_TRY(load_expectations(def->expect, "expectations", &expect));
    CP_TRY(load_expectations(def->essential, "essential expectations", &essential));
    if (!def->cpu_only)
        CP_CUDA(cudaSetDevice(env->device));
    cp_nvtx_push("setup");
    rc = def->setup ? def->setup(&ctx) : 0;
    cp_nvtx_pop();
    set_up = true;
    if (rc < 0)
        goto out;
    /* An override the case did not read would change nothing, silently. */
    for (size_t i = 0; i < o->nparams; i++)
        if (!ctx.param_read[i]) {
            rc = cp_failf(CP_EINVAL, "--param %s: case %s takes no such parameter (it takes: %s)",
                          o->params[i], r->name,
                          ctx.param_names[0] ? ctx.param_names : "none");
            goto out;
        }

    for (int i = 0; i < ctx.nvariants; i++) {
        cp_variant v = {.name = def->variants[i], .index = i};
        cp_variant_result *vr = cp_result_add_variant(r);
        if (!vr) {
            rc = CP_ENOMEM;
            goto out;
        }
        snprintf(vr->name, sizeof vr->name, "%s", v.name);
        if (ctx.settings[i].skip[0]) {
            snprintf(vr->skip_reason, sizeof vr->skip_reason, "%s", ctx.settings[i].skip);
            continue;
        }
        cp_nvtx_push("variant %s", v.name);
        rc = run_variant(&ctx, &v, o, vr);
        cp_nvtx_pop();
        if (rc == CP_ECUDA)
            goto out; /* the device may be unusable: stop this case here */
        if (rc == CP_EDROPPED) {
            /* The trust rule (cuproof/trust.h): records lost make a trace an
             * undercount, so the variant's verdict cannot be made: the case
             * is inconclusive (unless a check fails), never passed. */
            if (!untrusted[0])
                snprintf(untrusted, sizeof untrusted, "variant %s: the trace cannot be trusted: %s",
                         v.name, cp_last_error());
            cp_clear_last_error();
            rc = 0;
            continue;
        }
        if (rc < 0) {
            char what[96];
            snprintf(what, sizeof what, "variant %s", v.name);
            record_error(r, what, rc);
            rc = 0;
            continue;
        }
        if (def->verify)
            add_output_check(&ctx, i, vr);
        add_leak_check(&ctx, i, vr);
    }
    if (def->checks)
        CP_TRY(def->checks(&ctx));
    add_expectation_checks(&ctx, &expect, false);
    add_expectation_checks(&ctx, &essential, true);
    if (def->claims)
        CP_TRY(def->claims(&ctx));
out:
    if (rc == CP_ESKIP) {
        r->status = CP_STATUS_SKIPPED;
        rc = 0;
    } else if (rc < 0) {
        record_error(r, "case", rc);
        if (rc == CP_ECUDA)
            fatal = rc;
    }
    if (set_up && def->teardown)
        def->teardown(&ctx);
    free(ctx.state);
    free(ctx.settings);
    free(ctx.param_read);
    cp_expect_list_free(&expect);
    cp_expect_list_free(&essential);
    cp_nvtx_pop();
    if (r->status != CP_STATUS_SKIPPED && r->status != CP_STATUS_FAILED) {
        r->status = CP_STATUS_PASSED;
        for (size_t i = 0; i < r->nchecks; i++)
            if (r->checks[i].status == CP_CHECK_FAILED)
                r->status = CP_STATUS_FAILED;
        if (r->status == CP_STATUS_PASSED && untrusted[0]) {
            r->status = CP_STATUS_INCONCLUSIVE;
            snprintf(r->skip_reason, sizeof r->skip_reason, "%s", untrusted);
        } else if (r->nchecks == 0) {
            /* A case that checked nothing proves nothing. */
            r->status = CP_STATUS_FAILED;
            snprintf(r->error, sizeof r->error, "the case recorded no checks");
        }
        if (r->status == CP_STATUS_PASSED)
            judge_essentials(r);
    }
    return fatal;
}

void cp_tracing_init(void)
{
    cp_tracer_init();
}

bool cp_tracing_available(void)
{
    return cp_tracer_available();
}

const char *cp_tracing_unavailable_reason(void)
{
    return cp_tracer_unavailable_reason();
}

void cp_tracing_shutdown(void)
{
    cp_tracer_shutdown();
}
