/* report.json and trace files, written and read with cJSON; file IO is
 * file.c's, report.html is html.c's, and the session writes both. */
#include <cuproof/internal/tracefile.h>
#include <cuproof/internal/report.h>
#include "reports/json.h"

#include "analysis/json_put.h"

#include <cuproof/error.h>
#include <cuproof/internal/file.h>
#include "headline.h"
#include "kernels.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cJSON's adders return NULL on allocation failure; each object below is
 * built completely and any NULL makes the whole report NULL. `ok` collects
 * the failures so the builders stay flat. */
typedef struct builder {
    bool ok;
} builder;

static cJSON *add_num(builder *b, cJSON *o, const char *k, double v)
{
    cJSON *n = cJSON_AddNumberToObject(o, k, v);
    b->ok = b->ok && n;
    return n;
}

static cJSON *add_str(builder *b, cJSON *o, const char *k, const char *v)
{
    cJSON *n = cJSON_AddStringToObject(o, k, v ? v : "");
    b->ok = b->ok && n;
    return n;
}

static cJSON *add_bool(builder *b, cJSON *o, const char *k, bool v)
{
    cJSON *n = cJSON_AddBoolToObject(o, k, v);
    b->ok = b->ok && n;
    return n;
}

static cJSON *add_obj(builder *b, cJSON *o, const char *k)
{
    cJSON *n = cJSON_AddObjectToObject(o, k);
    b->ok = b->ok && n;
    return n; /* cJSON's adders accept a NULL object and add nothing */
}

static cJSON *add_arr(builder *b, cJSON *o, const char *k)
{
    cJSON *n = cJSON_AddArrayToObject(o, k);
    b->ok = b->ok && n;
    return n;
}

/* An array of n numbers under key k. */
static void add_numbers(builder *b, cJSON *o, const char *k, const double *v, size_t n)
{
    cJSON *arr = add_arr(b, o, k);
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *x = cJSON_CreateNumber(v[i]);
        b->ok = b->ok && x && cJSON_AddItemToArray(arr, x);
    }
}

static cJSON *push_obj(builder *b, cJSON *arr)
{
    cJSON *n = cJSON_CreateObject();
    if (!n || !arr || !cJSON_AddItemToArray(arr, n)) {
        b->ok = false;
        cJSON_Delete(n);
        return NULL;
    }
    return n;
}

static void env_json(builder *b, cJSON *o, const cp_env *e)
{
    add_bool(b, o, "has_device", e->has_device);
    if (!e->has_device)
        add_str(b, o, "no_device_reason", e->no_device_reason);
    add_str(b, o, "gpu_name", e->gpu_name);
    add_str(b, o, "gpu_uuid", e->gpu_uuid);
    add_str(b, o, "cpu_model", e->cpu_model);
    add_str(b, o, "address_layout", e->address_layout);
    add_str(b, o, "cpu_affinity", e->cpu_affinity);
    add_str(b, o, "cpus", e->cpus);
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", e->cc_major, e->cc_minor);
    add_str(b, o, "compute_capability", e->has_device ? cc : "");
    add_num(b, o, "device", e->device);
    add_str(b, o, "device_source", e->device_source);
    add_num(b, o, "sm_count", e->sm_count);
    add_num(b, o, "copy_engines", e->copy_engines);
    add_bool(b, o, "concurrent_kernels_supported", e->concurrent_kernels_supported != 0);
    add_num(b, o, "total_memory_bytes", (double)e->total_mem);
    add_num(b, o, "driver_version", e->driver_version);
    add_num(b, o, "runtime_version", e->runtime_version);
    add_str(b, o, "cuda_device_max_connections", e->max_connections);
    add_str(b, o, "host", e->host);
}

/* One row of the per-collective table into `arr`: false when out of
 * memory. A row of the size table (size_hi set) adds its bucket. */
static bool collective_row_json(builder *b, cJSON *arr, const cp_collective_row *r)
{
    cJSON *j = push_obj(b, arr);
    if (!j)
        return false;
    add_str(b, j, "operation", r->op);
    add_str(b, j, "algorithm", r->algo);
    add_str(b, j, "protocol", r->proto);
    if (r->size_hi) {
        add_num(b, j, "size_from_bytes", (double)r->size_lo);
        add_num(b, j, "size_below_bytes", (double)r->size_hi);
    }
    add_num(b, j, "count", r->count);
    add_num(b, j, "total_ns", (double)r->total_ns);
    add_num(b, j, "median_ns", (double)r->median_ns);
    add_num(b, j, "exposed_ns", (double)r->exposed_ns);
    /* 1.16: NCCL's own account, where its calls were recorded; the
     * bandwidths only where every kernel had its call and ranks. */
    if (!r->sized)
        return true;
    add_num(b, j, "kernels_with_call", r->sized);
    uint64_t bytes = 0;
    double alg = 0, bus = 0;
    if (cp_collective_row_bytes(r, &bytes))
        add_num(b, j, "bytes", (double)bytes);
    if (cp_collective_row_bandwidth(r, &alg, &bus)) {
        add_num(b, j, "algbw_gbps", alg);
        add_num(b, j, "busbw_gbps", bus);
    }
    return true;
}

/* 1.6: the kernel breakdown: per class (compute, communication), the
 * top kernels by total device time with their launches, total, mean,
 * least and most, the name as the trace gave it and demangled, and the
 * rest of the class summed. */
static void breakdown_json(builder *b, cJSON *o, const cp_metrics *m)
{
    cJSON *bd = add_obj(b, o, "kernel_breakdown");
    add_num(b, bd, "top", CP_BREAKDOWN_TOP);
    cJSON *rows = add_arr(b, bd, "kernels"), *rests = add_arr(b, bd, "rest");
    for (size_t c = 0; c < CP_BREAKDOWN_NCLASSES; c++) {
        size_t top[CP_BREAKDOWN_TOP];
        cp_breakdown_rest rest;
        size_t n = cp_breakdown_top(m, cp_breakdown_classes[c], top, &rest);
        for (size_t i = 0; i < n; i++) {
            const cp_kernel_stat *k = &m->kernel_stats[top[i]];
            cJSON *r = push_obj(b, rows);
            if (!r)
                return;
            char demangled[1024];
            cp_demangle(k->name, demangled, sizeof demangled);
            add_str(b, r, "class", cp_work_class_name(k->cls));
            add_str(b, r, "name", k->name);
            add_str(b, r, "demangled", demangled);
            add_num(b, r, "count", k->count);
            add_num(b, r, "total_ns", (double)k->total_ns);
            add_num(b, r, "mean_ns", k->count ? (double)k->total_ns / k->count : 0.0);
            add_num(b, r, "min_ns", (double)k->min_ns);
            add_num(b, r, "max_ns", (double)k->max_ns);
        }
        if (rest.kernels) {
            cJSON *r = push_obj(b, rests);
            if (!r)
                return;
            add_str(b, r, "class", cp_work_class_name(cp_breakdown_classes[c]));
            add_num(b, r, "kernels", (double)rest.kernels);
            add_num(b, r, "count", (double)rest.count);
            add_num(b, r, "total_ns", (double)rest.total_ns);
        }
    }
}

/* The scalar metrics and the findings' names and counts: all that a pass
 * of timing.passes keeps (cp_run_value). */
static void scalar_metrics_json(builder *b, cJSON *o, const cp_metrics *m, bool messages)
{
    size_t n = 0;
    const cp_metric_def *defs = cp_metric_defs(&n);
    for (size_t i = 0; i < n; i++)
        add_num(b, o, defs[i].name, cp_metric_value(m, &defs[i]));
    cJSON *findings = add_arr(b, o, "findings");
    for (size_t i = 0; i < m->nfindings; i++) {
        cJSON *f = push_obj(b, findings);
        if (!f)
            return;
        add_str(b, f, "name", m->findings[i].name);
        add_num(b, f, "count", m->findings[i].count);
        if (messages)
            add_str(b, f, "message", m->findings[i].message);
    }
}

static void metrics_json(builder *b, cJSON *o, const cp_metrics *m)
{
    scalar_metrics_json(b, o, m, true);
    add_str(b, o, "bound", m->bound);
    cJSON *lanes = add_arr(b, o, "streams");
    for (size_t i = 0; i < m->nlanes; i++) {
        cJSON *l = push_obj(b, lanes);
        if (!l)
            return;
        add_num(b, l, "device", m->lanes[i].device);
        add_num(b, l, "process", m->lanes[i].process);
        add_num(b, l, "context", m->lanes[i].context);
        add_num(b, l, "stream", m->lanes[i].stream);
        add_num(b, l, "busy_ns", (double)m->lanes[i].busy_ns);
        add_num(b, l, "kernels", m->lanes[i].kernels);
        add_num(b, l, "copies", m->lanes[i].copies);
        add_num(b, l, "memsets", m->lanes[i].memsets);
    }
    /* 1.3: the CUDA graphs, when any work was graph-launched. */
    if (m->ngraphs) {
        cJSON *graphs = add_arr(b, o, "graphs");
        for (size_t i = 0; i < m->ngraphs; i++) {
            cJSON *g = push_obj(b, graphs);
            if (!g)
                return;
            add_num(b, g, "process", m->graphs[i].process);
            add_num(b, g, "graph_id", m->graphs[i].graph_id);
            add_num(b, g, "launches", m->graphs[i].launches);
            add_num(b, g, "busy_ns", (double)m->graphs[i].busy_ns);
            add_num(b, g, "kernels", m->graphs[i].kernels);
            add_num(b, g, "copies", m->graphs[i].copies);
            add_num(b, g, "memsets", m->graphs[i].memsets);
        }
    }
    /* 1.5: each device's own metrics (the program's above are their
     * summary: DESIGN.md, "Devices"). */
    cJSON *devices = m->device_metrics ? add_arr(b, o, "per_device") : NULL;
    for (uint32_t i = 0; devices && i < m->devices; i++) {
        const cp_device_metrics *d = &m->device_metrics[i];
        cJSON *j = push_obj(b, devices);
        if (!j)
            return;
        size_t nd = 0;
        const cp_metric_def *ddefs = cp_device_metric_defs(&nd);
        for (size_t k = 0; k < nd; k++)
            add_num(b, j, ddefs[k].name, cp_device_metric_value(d, &ddefs[k]));
        add_str(b, j, "bound", d->bound);
    }
    breakdown_json(b, o, m);
    /* The per-collective table (cp_collective_row), absent without
     * communication kernels; 1.17: the same by message-size bucket. */
    cJSON *coll = m->ncollective_rows ? add_arr(b, o, "collectives_by_operation") : NULL;
    for (size_t i = 0; coll && i < m->ncollective_rows; i++)
        if (!collective_row_json(b, coll, &m->collective_rows[i]))
            return;
    cJSON *sizes = m->ncollective_size_rows ? add_arr(b, o, "collectives_by_size") : NULL;
    for (size_t i = 0; sizes && i < m->ncollective_size_rows; i++)
        if (!collective_row_json(b, sizes, &m->collective_size_rows[i]))
            return;
}

/* 1.7: a distributed program's ranks (cuproof/internal/ranks.h): a row per rank
 * with its own figures, the hosts with the clock offset applied to each,
 * and the collectives' arrivals with the straggler (null when none). The
 * host is written by name, for people, and by index, for readers. */
static void rank_row_json(builder *b, cJSON *j, const cp_ranks *r, const cp_rank_row *w)
{
    add_num(b, j, "rank", w->rank);
    add_str(b, j, "host", w->host < r->nhosts ? r->hosts[w->host].name : "");
    add_num(b, j, "host_index", w->host);
    add_num(b, j, "pid", w->pid);
    add_num(b, j, "processes", w->processes);
    cJSON *devices = add_arr(b, j, "devices");
    for (uint32_t k = 0; devices && k < w->ndevices && k < CP_RANK_MAX_DEVICES; k++) {
        cJSON *x = cJSON_CreateNumber(w->devices[k]);
        b->ok = b->ok && x && cJSON_AddItemToArray(devices, x);
    }
    add_num(b, j, "device_count", w->ndevices); /* the array lists CP_RANK_MAX_DEVICES at most */
    size_t n;
    const cp_metric_def *defs = cp_rank_row_defs(&n);
    for (size_t k = 0; k < n; k++)
        add_num(b, j, defs[k].name, cp_field_value(w, &defs[k]));
}

static void ranks_json(builder *b, cJSON *o, const cp_ranks *r)
{
    cJSON *rj = add_obj(b, o, "ranks");
    cJSON *rows = add_arr(b, rj, "rows");
    for (size_t i = 0; rows && i < r->nrows; i++) {
        cJSON *j = push_obj(b, rows);
        if (!j)
            return;
        rank_row_json(b, j, r, &r->rows[i]);
    }
    cJSON *hosts = add_arr(b, rj, "hosts");
    for (size_t i = 0; hosts && i < r->nhosts; i++) {
        const cp_host_clock *h = &r->hosts[i];
        cJSON *j = push_obj(b, hosts);
        if (!j)
            return;
        add_str(b, j, "name", h->name);
        add_bool(b, j, "aligned", h->aligned);
        add_num(b, j, "offset_ns", (double)h->offset_ns);
        add_num(b, j, "residual_ns", (double)h->residual_ns);
        add_num(b, j, "shared", h->shared);
    }
    add_num(b, rj, "collectives", r->collectives);
    add_num(b, rj, "median_start_spread_ns", (double)r->median_start_spread_ns);
    add_num(b, rj, "median_end_spread_ns", (double)r->median_end_spread_ns);
    add_bool(b, rj, "all_aligned", r->all_aligned);
    /* Why the collectives were not matched (absent when they were). */
    if (r->unmatched[0])
        add_str(b, rj, "unmatched", r->unmatched);
    if (r->partial[0])
        add_str(b, rj, "partial", r->partial);
    /* 1.16: how, where NCCL's calls were recorded. */
    if (r->matched_by[0])
        add_str(b, rj, "matched_by", r->matched_by);
    if (r->missing[0])
        add_str(b, rj, "missing", r->missing);
    if (r->not_one_job[0])
        add_str(b, rj, "not_one_job", r->not_one_job);
    /* The matched collectives by operation: waiting for the last rank and
     * transfer (absent when none was matched). */
    cJSON *waits = r->nwaits ? add_arr(b, rj, "collectives_by_operation") : NULL;
    for (size_t i = 0; waits && i < r->nwaits; i++) {
        cJSON *j = push_obj(b, waits);
        if (!j)
            return;
        add_str(b, j, "operation", r->waits[i].op);
        add_str(b, j, "algorithm", r->waits[i].algo);
        add_str(b, j, "protocol", r->waits[i].proto);
        add_num(b, j, "matched", r->waits[i].matched);
        add_num(b, j, "wait_ns", (double)r->waits[i].wait_ns);
        add_num(b, j, "transfer_ns", (double)r->waits[i].transfer_ns);
    }
    if (!r->straggler) {
        b->ok = b->ok && cJSON_AddNullToObject(rj, "straggler");
        return;
    }
    cJSON *s = add_obj(b, rj, "straggler");
    add_num(b, s, "rank", r->straggler_rank);
    add_num(b, s, "median_lag_ns", (double)r->straggler_median_lag_ns);
    add_num(b, s, "mean_lag_ns", (double)r->straggler_mean_lag_ns);
    add_num(b, s, "max_lag_ns", (double)r->straggler_max_lag_ns);
}

/* The GPU's clocks at one moment, or why they are not known (nothing for
 * a CPU case, whose reason is empty). */
static void clocks_json(builder *b, cJSON *parent, const char *key, const cp_clocks *c)
{
    if (!c->known && !c->reason[0])
        return;
    cJSON *o = add_obj(b, parent, key);
    add_bool(b, o, "known", c->known);
    if (c->known) {
        add_num(b, o, "sm_mhz", c->sm_mhz);
        add_num(b, o, "mem_mhz", c->mem_mhz);
        add_num(b, o, "throttle_reasons", (double)c->throttle_reasons);
    } else {
        add_str(b, o, "reason", c->reason);
    }
}

/* processes_ms (1.13) or gpu_processes_ms (1.18): each process's median
 * in a pass of several (cuproof run --processes). */
static void processes_json(builder *b, cJSON *o, const char *key, const double *ms, int n)
{
    if (n >= 2)
        add_numbers(b, o, key, ms, (size_t)n);
}

/* 1.8: the passes of `cuproof run --runs K` (cp_run_value), each its own
 * samples, median, clocks, traced device time and (1.9) the process
 * that ran it and its traced run's scalar metrics and findings, in
 * timing.passes. */
static void passes_json(builder *b, cJSON *timing, const cp_variant_result *v)
{
    cJSON *arr = add_arr(b, timing, "passes");
    for (size_t i = 0; arr && i < v->nruns; i++) {
        const cp_run_value *r = &v->runs[i];
        cJSON *o = push_obj(b, arr);
        if (!o)
            return;
        add_num(b, o, "median_ms", r->median_ms);
        add_numbers(b, o, "samples_ms", r->samples_ms, r->nsamples);
        if (r->ngpu_samples) {
            add_num(b, o, "gpu_median_ms", r->gpu_median_ms);
            add_numbers(b, o, "gpu_samples_ms", r->gpu_samples_ms, r->ngpu_samples);
        }
        clocks_json(b, o, "clocks_before", &r->clocks_before);
        clocks_json(b, o, "clocks_after", &r->clocks_after);
        add_num(b, o, "device_busy_ns", (double)r->device_busy_ns);
        if (r->pid)
            add_num(b, o, "pid", r->pid);
        processes_json(b, o, "processes_ms", r->process_ms, r->nprocesses);
        /* 1.18: the GPU's time of each process, whose mean is the pass's
         * gpu_median_ms. */
        processes_json(b, o, "gpu_processes_ms", r->gpu_process_ms, r->ngpu_processes);
        if (r->traced)
            scalar_metrics_json(b, add_obj(b, o, "metrics"), &r->metrics, false);
    }
}

/* A variant's series: name, unit, values and their mean and spread. */
static void series_json(builder *b, cJSON *parent, const cp_variant_result *v)
{
    cJSON *arr = add_arr(b, parent, "series");
    for (size_t i = 0; i < v->nseries; i++) {
        const cp_series *s = &v->series[i];
        cJSON *j = push_obj(b, arr);
        if (!j)
            return;
        double mean, std;
        cp_mean_std(s->values, s->n, &mean, &std);
        add_str(b, j, "name", s->name);
        add_str(b, j, "unit", s->unit);
        add_num(b, j, "mean", mean);
        add_num(b, j, "stddev", std);
        cJSON *vals = cJSON_CreateDoubleArray(s->values, (int)s->n);
        if (!vals || !cJSON_AddItemToObject(j, "values", vals)) {
            cJSON_Delete(vals);
            b->ok = false;
        }
    }
}

static void case_json(builder *b, cJSON *o, const cp_case_result *c)
{
    add_str(b, o, "name", c->name);
    add_str(b, o, "title", c->title);
    add_str(b, o, "source", c->source);
    if (c->baseline[0])
        add_str(b, o, "baseline", c->baseline);
    add_str(b, o, "status", cp_status_name(c->status));
    char headline[1024];
    cp_case_headline(c, headline, sizeof headline);
    add_str(b, o, "headline", headline);
    if (c->params[0])
        add_str(b, o, "params", c->params);
    add_num(b, o, "device", c->device);
    add_str(b, o, "gpu", c->gpu_name);
    add_str(b, o, "skip_reason", c->skip_reason);
    add_str(b, o, "error", c->error);
    cJSON *checks = add_arr(b, o, "checks");
    for (size_t i = 0; i < c->nchecks; i++) {
        const cp_check_result *k = &c->checks[i];
        cJSON *j = push_obj(b, checks);
        if (!j)
            return;
        add_str(b, j, "name", k->name);
        if (k->status == CP_CHECK_SKIPPED)
            b->ok = b->ok && cJSON_AddNullToObject(j, "ok");
        else
            add_bool(b, j, "ok", k->status == CP_CHECK_PASSED);
        add_str(b, j, "status", cp_check_status_name(k->status));
        add_str(b, j, "expected", k->expected);
        add_str(b, j, "measured", k->measured);
        if (k->status == CP_CHECK_SKIPPED)
            add_str(b, j, "skip_reason", k->skip_reason);
        if (k->essential)
            add_bool(b, j, "essential", true);
        if (k->origin != CP_ORIGIN_LIVE)
            add_str(b, j, "origin", k->origin == CP_ORIGIN_RECOMPUTED ? "recomputed" : "recorded");
    }
    cJSON *variants = add_arr(b, o, "variants");
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_variant_result *v = &c->variants[i];
        cJSON *j = push_obj(b, variants);
        if (!j)
            return;
        add_str(b, j, "name", v->name);
        if (v->skip_reason[0])
            add_str(b, j, "skip_reason", v->skip_reason);
        cJSON *t = add_obj(b, j, "timing");
        add_num(b, t, "runs", v->timing.runs);
        add_num(b, t, "median_ms", v->timing.median_ms);
        add_num(b, t, "min_ms", v->timing.min_ms);
        add_num(b, t, "max_ms", v->timing.max_ms);
        add_num(b, t, "stddev_ms", v->timing.stddev_ms);
        if (v->nsamples) {
            /* The timed runs themselves, on the runner's clock. */
            add_numbers(b, t, "samples_ms", v->samples_ms, v->nsamples);
            add_str(b, t, "clock", "CLOCK_MONOTONIC");
            add_str(b, t, "stopped_by", v->stopped_by);
            if (isfinite(v->noise))
                add_num(b, t, "median_noise", v->noise);
            /* A report of one pass: its processes here; of several, each
             * pass's in timing.passes. */
            if (!v->nruns)
                processes_json(b, t, "processes_ms", v->process_ms, v->nprocesses);
        }
        if (v->ngpu_samples) {
            /* 1.14: the GPU's time of the same timed runs (CUDA events). */
            add_numbers(b, t, "gpu_samples_ms", v->gpu_samples_ms, v->ngpu_samples);
            add_num(b, t, "gpu_median_ms", v->gpu_timing.median_ms);
            add_num(b, t, "gpu_min_ms", v->gpu_timing.min_ms);
            add_num(b, t, "gpu_max_ms", v->gpu_timing.max_ms);
            add_num(b, t, "gpu_stddev_ms", v->gpu_timing.stddev_ms);
            if (!v->nruns)
                processes_json(b, t, "gpu_processes_ms", v->gpu_process_ms, v->ngpu_processes);
        }
        if (v->ran && v->nsamples) {
            /* 1.14: the figure the variant is judged on, and why wall. */
            bool gpu = v->figure == CP_WORK_GPU && v->ngpu_samples;
            add_str(b, t, "judged_on", gpu ? "gpu_time" : "wall_time");
            if (v->figure_why[0])
                add_str(b, t, "judged_on_why", v->figure_why);
            if (v->gated)
                b->ok = b->ok && cJSON_AddTrueToObject(t, "gated");
        }
        clocks_json(b, j, "clocks_before", &v->clocks_before);
        clocks_json(b, j, "clocks_after", &v->clocks_after);
        if (v->nruns)
            passes_json(b, t, v);
        cJSON *verify = add_obj(b, j, "verification");
        add_num(b, verify, "runs", v->verified_runs);
        add_num(b, verify, "elements", (double)v->elements);
        add_num(b, verify, "worst_mismatches", (double)v->worst_mismatches);
        series_json(b, j, v);
        if (v->memory_checked)
            add_num(b, j, "device_memory_kept_bytes", (double)v->leaked_bytes);
        if (v->traced) {
            cJSON *tr = add_obj(b, j, "trace");
            metrics_json(b, tr, &v->metrics);
            add_num(b, tr, "dropped_records", (double)v->trace.dropped_records);
            add_num(b, tr, "renamed_kernels", (double)v->trace.renamed_kernels);
            if (v->summary)
                add_num(b, tr, "records_streamed", (double)v->summary->all);
        } else {
            b->ok = b->ok && cJSON_AddNullToObject(j, "trace");
            add_str(b, j, "untraced_reason", v->untraced_reason);
        }
        if (v->ranks)
            ranks_json(b, j, v->ranks);
    }
    cJSON *claims = add_arr(b, o, "claims");
    for (size_t i = 0; i < c->nclaims; i++) {
        const cp_claim_result *k = &c->claims[i];
        cJSON *j = push_obj(b, claims);
        if (!j)
            return;
        add_str(b, j, "text", k->text);
        add_str(b, j, "source", k->source);
        add_str(b, j, "claimed", k->claimed);
        add_str(b, j, "measured", k->measured);
        add_str(b, j, "verdict", cp_verdict_name(k->verdict));
        add_str(b, j, "reason", k->reason);
        /* 1.9: the window a measured claim is judged by, and the rule. */
        if (k->has_window) {
            cJSON *w = add_obj(b, j, "window");
            char rule[256];
            cp_claim_rule(&k->window, rule, sizeof rule);
            add_num(b, w, "lo", k->window.lo);
            add_num(b, w, "hi", k->window.hi);
            add_num(b, w, "none", k->window.none);
            add_str(b, w, "unit", k->window.unit);
            add_num(b, w, "value", k->value);
            add_str(b, w, "rule", rule);
            /* 1.13: the value each pass measured (run --runs K), so that
             * compare can tell a flip across a bound from a move. */
            if (k->npass_values > 1)
                add_numbers(b, w, "passes", k->pass_values, k->npass_values);
        }
    }
    cJSON *figures = add_arr(b, o, "figures");
    for (size_t i = 0; i < c->nfigures; i++) {
        cJSON *j = push_obj(b, figures);
        if (!j)
            return;
        add_str(b, j, "name", c->figures[i].name);
        add_num(b, j, "value", c->figures[i].value);
        add_str(b, j, "unit", c->figures[i].unit);
    }
}

/* One tracing cost's figures (a process's, or a program's sum). */
static void cost_json(builder *b, cJSON *o, const cp_tracing_cost *c, uint64_t dropped)
{
    add_bool(b, o, "recorded", c->recorded);
    add_num(b, o, "dropped", (double)dropped);
    if (!c->recorded)
        return; /* unknown, not zero: the fields are left out */
    add_str(b, o, "api", c->api_all ? "all" : "filtered");
    add_num(b, o, "records", (double)c->records);
    add_num(b, o, "api_records", (double)c->api_records);
    add_num(b, o, "api_filtered", (double)c->api_filtered);
    add_num(b, o, "buffers", (double)c->buffers);
    add_num(b, o, "overhead_records", (double)c->overhead_records);
    add_num(b, o, "cupti_overhead_ms", (double)cp_tracing_overhead_ns(c) / 1e6);
    cJSON *kinds = add_obj(b, o, "cupti_overhead_ms_by_kind");
    for (int k = 0; k < CP_OVERHEAD_KIND_COUNT; k++)
        if (c->overhead_ns[k])
            add_num(b, kinds, cp_overhead_kind_name((cp_overhead_kind)k),
                    (double)c->overhead_ns[k] / 1e6);
}

/* 1.11: what tracing a program cost (cuproof exec): the sum over its
 * processes that recorded it, each process's own, and the launcher's
 * post-processing; 1.12: how much of its reading the launcher did while
 * the program ran. */
static void tracing_cost_json(builder *b, cJSON *o, const cp_report *r)
{
    static const cp_trace none;
    const cp_trace *t = r->ncases && r->cases[0].nvariants ? &r->cases[0].variants[0].trace : &none;
    cp_tracing_cost sum;
    size_t recorded = cp_trace_tracing_cost(t, &sum);
    uint64_t dropped = 0;
    for (size_t i = 0; i < t->nprocesses; i++)
        dropped += t->processes[i].dropped;
    add_num(b, o, "postprocess_ms", r->postprocess_ms);
    add_num(b, o, "records_read_during_run", (double)r->records_read_during_run);
    add_num(b, o, "records_read_after_exit", (double)r->records_read_after_exit);
    if (r->read_after_exit_why[0])
        add_str(b, o, "read_after_exit_why", r->read_after_exit_why);
    /* 1.15: what --capture traced, and what not. */
    if (r->has_capture) {
        cJSON *c = add_obj(b, o, "capture");
        add_str(b, c, "spec", r->capture);
        add_num(b, c, "windows", r->capture_windows);
        add_num(b, c, "window_ms", r->capture_window_ms);
        add_num(b, c, "program_ms", r->capture_program_ms);
        add_num(b, c, "outside_ms", r->capture_program_ms > r->capture_window_ms
                                        ? r->capture_program_ms - r->capture_window_ms
                                        : 0);
        cJSON *list = add_arr(b, c, "list");
        for (size_t i = 0; i < r->ncapture_list && b->ok; i++) {
            cJSON *w = push_obj(b, list);
            add_num(b, w, "pid", r->capture_list[i].pid);
            add_num(b, w, "first_occurrence", r->capture_list[i].first);
            add_num(b, w, "start_ms", r->capture_list[i].start_ms);
            add_num(b, w, "length_ms", r->capture_list[i].length_ms);
        }
    }
    add_num(b, o, "processes", (double)t->nprocesses);
    add_num(b, o, "processes_recorded", (double)recorded);
    cost_json(b, o, &sum, dropped);
    cJSON *each = add_arr(b, o, "per_process");
    for (size_t i = 0; i < t->nprocesses && b->ok; i++) {
        cJSON *p = push_obj(b, each);
        add_num(b, p, "pid", t->processes[i].pid);
        add_str(b, p, "host", t->processes[i].host);
        cost_json(b, p, &t->processes[i].cost, t->processes[i].dropped);
    }
}

cJSON *cp_report_to_json(const cp_report *r)
{
    builder b = {.ok = true};
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    add_str(&b, root, "schema", CP_REPORT_SCHEMA);
    /* 1.1: timing samples and clocks per variant, the GPU's UUID and the
     * host's CPU in the environment; 1.2: a headline per case, essential
     * and origin per check, and replay; 1.3: the baseline variant per
     * case, graph metrics and a variant's graphs; 1.4: records_streamed;
     * 1.5: per_device metrics; 1.6: communication and compute
     * (comm_busy_ns, comm_compute_overlap_ns and _ratio, exposed_comm_ns
     * and _share, in the trace and per device), the work classes' rules
     * and each trace's kernel_breakdown; 1.7: a distributed program's
     * ranks per variant (readers of 1.0 ignore them); 1.10: the
     * environment's address_layout; 1.11: tracing_cost (cuproof exec);
     * 1.12: the environment's cpu_affinity and cpus, and the records exec
     * read while the program ran, in tracing_cost; 1.13: a windowed
     * claim's value in each pass (window.passes), and each process's
     * median in a pass of several (processes_ms, run --processes); 1.14:
     * each timed run's GPU time (timing.gpu_samples_ms and the passes'),
     * the figure a variant is judged on (timing.judged_on, _why) and
     * whether its body was gated (timing.gated); 1.15: exec --capture's
     * windows in tracing_cost.capture; 1.16: NCCL's own account in a
     * trace's collectives_by_operation (kernels_with_call, bytes,
     * algbw_gbps, busbw_gbps), and an NCCL range's comm, bytes and peer in
     * trace files; 1.17: collectives_by_size, the same rows by message
     * size (size_from_bytes, size_below_bytes); 1.18: each process's
     * GPU time in a pass of several (gpu_processes_ms), whose mean is
     * then the pass's gpu_median_ms. */
    add_str(&b, root, "schema_version", "1.18");
    cJSON *tool = add_obj(&b, root, "tool");
    add_str(&b, tool, "name", "cuproof");
    add_str(&b, tool, "version", r->tool_version);
    add_str(&b, root, "date", r->date);
    if (r->replayed_from[0]) {
        /* 1.2: a replayed report says so, and from what. */
        cJSON *replay = add_obj(&b, root, "replay");
        add_str(&b, replay, "recording", r->replayed_from);
        add_str(&b, replay, "recorded", r->recorded_date);
        add_str(&b, replay, "gpu", r->env.gpu_name);
    }
    env_json(&b, add_obj(&b, root, "environment"), &r->env);
    add_str(&b, root, "profile", r->profile);
    /* 1.6: the rules of the work classes the communication metrics and
     * the kernel breakdown rest on (CP_WORK_CLASS_MAP). */
    cJSON *classes = add_arr(&b, root, "work_classes");
    for (int c = 0; c < CP_CLASS_COUNT; c++) {
        cJSON *k = push_obj(&b, classes);
        if (!k)
            break;
        add_str(&b, k, "class", cp_work_class_name((cp_work_class)c));
        add_str(&b, k, "rule", cp_work_class_rule((cp_work_class)c));
    }
    add_num(&b, root, "repeat", r->repeat);
    if (r->repeat == 0) {
        cJSON *rule = add_obj(&b, root, "stopping_rule");
        add_num(&b, rule, "min_samples", r->min_samples);
        add_num(&b, rule, "max_samples", r->max_samples);
        add_num(&b, rule, "max_noise", r->max_noise);
        add_num(&b, rule, "min_time_s", r->min_time_s);
        add_num(&b, rule, "max_time_s", r->max_time_s);
    }
    cJSON *tracing = add_obj(&b, root, "tracing");
    add_bool(&b, tracing, "available", r->traced);
    add_str(&b, tracing, "reason", r->untraced_reason);
    if (r->has_tracing_cost)
        tracing_cost_json(&b, add_obj(&b, root, "tracing_cost"), r);
    cJSON *cases = add_arr(&b, root, "cases");
    for (size_t i = 0; i < r->ncases && b.ok; i++) {
        cJSON *c = push_obj(&b, cases);
        if (c)
            case_json(&b, c, &r->cases[i]);
    }
    if (!b.ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}



/* The processes of a traced program. last_ns is absolute, on CUPTI's clock,
 * beyond a double's exact integers: a decimal string, as origin_ns. */
static void put_processes(FILE *f, const cp_trace *t)
{
    fputs(",\"processes\":[", f);
    for (size_t i = 0; i < t->nprocesses; i++) {
        const cp_process *p = &t->processes[i];
        fprintf(f, "%s{\"pid\":%u,\"ppid\":%u,\"host\":", i ? "," : "", p->pid, p->ppid);
        cp_json_put_string(f, p->host);
        fputs(",\"command\":", f);
        cp_json_put_string(f, p->command);
        fprintf(f, ",\"ended\":%s,\"last_ns\":\"%llu\",\"dropped\":%llu,\"zero_timestamps\":%llu",
                p->ended ? "true" : "false", (unsigned long long)p->last_ns,
                (unsigned long long)p->dropped, (unsigned long long)p->zero_timestamps);
        if (p->why[0]) {
            fputs(",\"why\":", f);
            cp_json_put_string(f, p->why);
        }
        fputc('}', f);
    }
    fputc(']', f);
}

/* The names the program gave its streams (cp_trace.stream_names), each
 * by the process, device, context and stream its records carry, so that
 * a trace read back labels its lanes as the run that wrote it did. */
static void put_stream_names(FILE *f, const cp_trace *t)
{
    fputs(",\"stream_names\":[", f);
    for (size_t i = 0; i < t->nstream_names; i++) {
        const cp_stream_name *n = &t->stream_names[i];
        fprintf(f, "%s{\"process\":%u,\"device\":%u,\"context\":%u,\"stream\":%u,\"name\":",
                i ? "," : "", n->process, n->device, n->context, n->stream);
        cp_json_put_string(f, n->name);
        fputc('}', f);
    }
    fputc(']', f);
}

/*
 * Trace files are streamed, not built as a cJSON tree: a run can hold a
 * million records, and a tree of them costs seconds and gigabytes. Only
 * the small series block goes through cJSON.
 */
int cp_trace_file_write(const cp_case_result *c, const char *device, const char *path)
{
    int rc = 0;
    FILE *f = fopen(path, "w");
    if (!f)
        return cp_failf(CP_EIO, "cannot write %s: %s", path, strerror(errno));
    /* A large buffer of its own (none shared: the writer may run beside
     * another, jobs.h); stdio's own when none can be had. */
    char *buffer = malloc(1 << 16);
    if (buffer)
        setvbuf(f, buffer, _IOFBF, 1 << 16);
    fprintf(f, "{\"schema\":\"%s\",\"case\":", CP_TRACE_SCHEMA);
    cp_json_put_string(f, c->name);
    fputs(",\"device\":", f);
    cp_json_put_string(f, device);
    fputs(",\"variants\":[", f);
    bool first_variant = true;
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_variant_result *v = &c->variants[i];
        if (!v->traced)
            continue;
        fputs(first_variant ? "{\"name\":" : ",{\"name\":", f);
        first_variant = false;
        cp_json_put_string(f, v->name);
        fprintf(f, ",\"dropped_records\":%llu", (unsigned long long)v->trace.dropped_records);
        if (v->trace.renamed_kernels)
            fprintf(f, ",\"renamed_kernels\":%llu",
                    (unsigned long long)v->trace.renamed_kernels);
        if (v->trace.has_legacy_stream)
            fprintf(f, ",\"legacy_default_stream\":{\"device\":%u,\"context\":%u,\"stream\":%u}",
                    v->trace.legacy_device, v->trace.legacy_context, v->trace.legacy_stream);
        if (v->trace.nprocesses)
            put_processes(f, &v->trace);
        /* Written only when a stream is named, so that a trace without
         * names stays as it was. */
        if (v->trace.nstream_names)
            put_stream_names(f, &v->trace);
        builder b = {.ok = true};
        cJSON *holder = cJSON_CreateObject();
        if (holder)
            series_json(&b, holder, v);
        char *series = holder && b.ok ? cJSON_PrintUnformatted(cJSON_GetObjectItem(holder, "series"))
                                      : NULL;
        cJSON_Delete(holder);
        if (!series) {
            rc = cp_failf(CP_ENOMEM, "out of memory writing %s", path);
            goto out;
        }
        fprintf(f, ",\"series\":%s", series);
        free(series);
        /* JSON numbers are doubles, exact to 2^53: absolute CUPTI times
         * (about 1.8e18 ns) would lose 256 ns, so activities are written
         * relative to an origin that is written as a decimal string. */
        uint64_t origin = UINT64_MAX;
        for (size_t k = 0; k < v->trace.n; k++)
            if (v->trace.items[k].start < origin)
                origin = v->trace.items[k].start;
        if (origin == UINT64_MAX)
            origin = 0;
        fprintf(f, ",\"origin_ns\":\"%llu\",\"activities\":[", (unsigned long long)origin);
        for (size_t k = 0; k < v->trace.n; k++) {
            const cp_activity *a = &v->trace.items[k];
            fprintf(f, "%s{\"kind\":\"%s\",\"start\":%llu,\"end\":%llu,\"device\":%u,"
                       "\"context\":%u,\"stream\":%u,\"correlation\":%u,\"name\":",
                    k ? "," : "", cp_act_kind_name(a->kind),
                    (unsigned long long)(a->start - origin),
                    (unsigned long long)(a->end >= origin ? a->end - origin : 0), a->device,
                    a->context, a->stream, a->correlation);
            cp_json_put_string(f, a->name);
            if (a->kind == CP_ACT_MEMCPY || a->kind == CP_ACT_MEMSET)
                fprintf(f, ",\"bytes\":%llu", (unsigned long long)a->bytes);
            if (a->kind == CP_ACT_MEMCPY)
                fprintf(f, ",\"dir\":\"%s\",\"src\":\"%s\",\"dst\":\"%s\",\"async\":%s",
                        cp_copy_dir_name(a->copy_dir), cp_mem_kind_name(a->src),
                        cp_mem_kind_name(a->dst), a->async ? "true" : "false");
            if (a->kind == CP_ACT_RANGE)
                fprintf(f, ",\"depth\":%u", a->depth);
            if (a->kind == CP_ACT_RANGE && a->comm)
                cp_json_put_nccl(f, a->comm, a->bytes, a->peer);
            if (a->kind == CP_ACT_KERNEL && a->block[0])
                fprintf(f, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", a->grid[0], a->grid[1],
                        a->grid[2], a->block[0], a->block[1], a->block[2]);
            /* Written only when set, so that a case's trace stays as it was. */
            if (a->process)
                fprintf(f, ",\"process\":%u", a->process);
            if (a->graph_id)
                fprintf(f, ",\"graph_id\":%u", a->graph_id);
            if (a->graph_node)
                fprintf(f, ",\"graph_node\":%llu", (unsigned long long)a->graph_node);
            if (a->thread)
                fprintf(f, ",\"thread\":%u", a->thread);
            fputc('}', f);
        }
        fputs("]}", f);
    }
    fputs("]}", f);
out:;
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed)
        if (rc == 0)
            rc = cp_failf(CP_EIO, "cannot write %s: %s", path, strerror(errno));
    free(buffer);
    return rc;
}


/* Reads a non-negative integer field; false when absent or not a number. */
static bool get_u64(const cJSON *o, const char *k, uint64_t *v)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > 1.8e19)
        return false;
    *v = (uint64_t)n->valuedouble;
    return true;
}

static int parse_activity(const cJSON *j, size_t index, uint64_t origin, cp_trace *t)
{
    cp_activity a = {0};
    uint64_t dev = 0, ctx = 0, stream = 0, corr = 0;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
    int k = cJSON_IsString(kind) ? cp_act_kind_from_name(kind->valuestring) : -1;
    if (k < 0)
        return cp_failf(CP_EPARSE, "activity %zu: missing or unknown 'kind'", index);
    if (!get_u64(j, "start", &a.start) || !get_u64(j, "end", &a.end) ||
        !get_u64(j, "device", &dev) || !get_u64(j, "context", &ctx) ||
        !get_u64(j, "stream", &stream) || !get_u64(j, "correlation", &corr))
        return cp_failf(CP_EPARSE,
                        "activity %zu: start, end, device, context, stream and correlation "
                        "must be non-negative numbers",
                        index);
    a.kind = (cp_act_kind)k;
    a.start += origin;
    a.end += origin;
    a.device = (uint32_t)dev;
    a.context = (uint32_t)ctx;
    a.stream = (uint32_t)stream;
    a.correlation = (uint32_t)corr;
    a.name = cJSON_IsString(name) ? name->valuestring : NULL;
    /* Absent in a case's trace and in traces written before they existed. */
    uint64_t process = 0, graph = 0, thread = 0;
    get_u64(j, "process", &process);
    get_u64(j, "thread", &thread);
    get_u64(j, "graph_id", &graph);
    get_u64(j, "graph_node", &a.graph_node);
    if (process && process >= t->nprocesses)
        return cp_failf(CP_EPARSE, "activity %zu: process %llu is not among the variant's %zu "
                        "processes", index, (unsigned long long)process, t->nprocesses);
    a.process = (uint32_t)process;
    a.graph_id = (uint32_t)graph;
    if (thread > UINT32_MAX)
        return cp_failf(CP_EPARSE, "activity %zu: thread %llu is out of range", index,
                        (unsigned long long)thread);
    a.thread = (uint32_t)thread;
    if (a.kind == CP_ACT_MEMCPY) {
        const cJSON *dir = cJSON_GetObjectItemCaseSensitive(j, "dir");
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(j, "src");
        const cJSON *dst = cJSON_GetObjectItemCaseSensitive(j, "dst");
        int d = cJSON_IsString(dir) ? cp_copy_dir_from_name(dir->valuestring) : -1;
        int s = cJSON_IsString(src) ? cp_mem_kind_from_name(src->valuestring) : -1;
        int t2 = cJSON_IsString(dst) ? cp_mem_kind_from_name(dst->valuestring) : -1;
        if (d < 0 || s < 0 || t2 < 0 || !get_u64(j, "bytes", &a.bytes))
            return cp_failf(CP_EPARSE, "activity %zu: a memcpy needs dir, src, dst and bytes",
                            index);
        a.copy_dir = (cp_copy_dir)d;
        a.src = (cp_mem_kind)s;
        a.dst = (cp_mem_kind)t2;
        a.async = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "async"));
    } else if (a.kind == CP_ACT_MEMSET) {
        get_u64(j, "bytes", &a.bytes);
    } else if (a.kind == CP_ACT_RANGE) {
        uint64_t depth = 0;
        get_u64(j, "depth", &depth);
        a.depth = (uint32_t)depth;
        /* An NCCL call's payload (cuproof/trace.h). */
        const cJSON *comm = cJSON_GetObjectItemCaseSensitive(j, "comm");
        if (comm) {
            const cJSON *peer = cJSON_GetObjectItemCaseSensitive(j, "peer");
            if (!cJSON_IsString(comm) || !cp_json_comm_parse(comm->valuestring, &a.comm) ||
                !get_u64(j, "bytes", &a.bytes) || !cJSON_IsNumber(peer) ||
                peer->valuedouble < -1 || peer->valuedouble > 2147483647.0)
                return cp_failf(CP_EPARSE, "activity %zu: an NCCL range's comm must be 16 "
                                           "lower-case hexadecimal digits, not 0, with bytes and "
                                           "peer (-1 or a rank)",
                                index);
            a.peer = (int32_t)peer->valuedouble;
        }
    } else if (a.kind == CP_ACT_KERNEL) {
        const char *keys[2] = {"grid", "block"};
        uint32_t *dims[2] = {a.grid, a.block};
        for (int d = 0; d < 2; d++) {
            const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, keys[d]);
            if (!arr)
                continue;
            if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != 3)
                return cp_failf(CP_EPARSE, "activity %zu: '%s' must be 3 numbers", index,
                                keys[d]);
            for (int i = 0; i < 3; i++) {
                const cJSON *x = cJSON_GetArrayItem(arr, i);
                if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble > 4294967295.0)
                    return cp_failf(CP_EPARSE, "activity %zu: '%s' must be 3 numbers", index,
                                    keys[d]);
                dims[d][i] = (uint32_t)x->valuedouble;
            }
        }
    }
    return cp_trace_add(t, &a);
}

/* A count of ns written as a decimal string (origin_ns, last_ns). */
static bool get_decimal(const cJSON *o, uint64_t *v)
{
    if (!cJSON_IsString(o))
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(o->valuestring, &end, 10);
    if (end == o->valuestring || *end || errno || o->valuestring[0] == '-')
        return false;
    *v = x;
    return true;
}

/* A variant's optional processes (a traced program's): each needs its pid;
 * what else it has must have its type. */
static int parse_processes(const cJSON *v, size_t variant, cp_trace *t)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(v, "processes");
    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr))
        return cp_failf(CP_EPARSE, "trace file: variant %zu: 'processes' must be an array",
                        variant);
    size_t i = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, arr)
    {
        cp_process p;
        memset(&p, 0, sizeof p);
        uint64_t pid = 0, ppid = 0;
        const cJSON *host = cJSON_GetObjectItemCaseSensitive(j, "host");
        const cJSON *command = cJSON_GetObjectItemCaseSensitive(j, "command");
        const cJSON *ended = cJSON_GetObjectItemCaseSensitive(j, "ended");
        const cJSON *last = cJSON_GetObjectItemCaseSensitive(j, "last_ns");
        const cJSON *dropped = cJSON_GetObjectItemCaseSensitive(j, "dropped");
        const cJSON *zero = cJSON_GetObjectItemCaseSensitive(j, "zero_timestamps");
        const cJSON *pp = cJSON_GetObjectItemCaseSensitive(j, "ppid");
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(j, "why");
        bool ok = get_u64(j, "pid", &pid) && pid <= UINT32_MAX && (!why || cJSON_IsString(why)) &&
                  (!pp || (get_u64(j, "ppid", &ppid) && ppid <= UINT32_MAX)) &&
                  (!host || cJSON_IsString(host)) && (!command || cJSON_IsString(command)) &&
                  (!ended || cJSON_IsBool(ended)) && (!last || get_decimal(last, &p.last_ns)) &&
                  (!dropped || get_u64(j, "dropped", &p.dropped)) &&
                  (!zero || get_u64(j, "zero_timestamps", &p.zero_timestamps));
        if (!ok)
            return cp_failf(CP_EPARSE, "trace file: variant %zu: process %zu needs a numeric "
                            "pid, and ppid, dropped and zero_timestamps numbers, host and "
                            "command (and why) strings, ended true or false and last_ns a decimal "
                            "string where present", variant, i);
        p.pid = (uint32_t)pid;
        p.ppid = (uint32_t)ppid;
        if (host)
            snprintf(p.host, sizeof p.host, "%s", host->valuestring);
        if (command)
            snprintf(p.command, sizeof p.command, "%s", command->valuestring);
        p.ended = cJSON_IsTrue(ended);
        if (why)
            snprintf(p.why, sizeof p.why, "%s", why->valuestring);
        if (cp_trace_add_process(t, &p) < 0)
            return cp_failf(CP_ENOMEM, "out of memory reading the trace file's processes");
        i++;
    }
    return 0;
}

/* A variant's optional stream names (a traced program's, or a case's
 * whose streams the case named): each needs the device, context and
 * stream its records carry and a string name; its process, when given,
 * must be one of the variant's (0 when it has none), as a record's. A
 * trace written before them names no stream. */
static int parse_stream_names(const cJSON *v, size_t variant, cp_trace *t)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(v, "stream_names");
    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr))
        return cp_failf(CP_EPARSE, "trace file: variant %zu: 'stream_names' must be an array",
                        variant);
    size_t i = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, arr)
    {
        uint64_t process = 0, device = 0, context = 0, stream = 0;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "process");
        bool ok = get_u64(j, "device", &device) && device <= UINT32_MAX &&
                  get_u64(j, "context", &context) && context <= UINT32_MAX &&
                  get_u64(j, "stream", &stream) && stream <= UINT32_MAX &&
                  (!p || (get_u64(j, "process", &process) && process <= UINT32_MAX)) &&
                  cJSON_IsString(name);
        if (!ok)
            return cp_failf(CP_EPARSE, "trace file: variant %zu: stream name %zu needs device, "
                            "context and stream numbers, a string name and, where present, a "
                            "process number", variant, i);
        if (process && process >= t->nprocesses)
            return cp_failf(CP_EPARSE, "trace file: variant %zu: stream name %zu: process %llu "
                            "is not among the variant's %zu processes", variant, i,
                            (unsigned long long)process, t->nprocesses);
        cp_stream_name n = {(uint32_t)process, (uint32_t)device, (uint32_t)context,
                            (uint32_t)stream, name->valuestring};
        if (cp_trace_name_stream(t, &n) < 0)
            return cp_failf(CP_ENOMEM, "out of memory reading the trace file's stream names");
        i++;
    }
    return 0;
}

/* A variant's optional series: each needs a name and an array of numbers. */
static int parse_series(const cJSON *v, size_t variant, cp_trace_file *out)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(v, "series");
    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr))
        return cp_failf(CP_EPARSE, "trace file: variant %zu: 'series' must be an array", variant);
    const cJSON *s;
    cJSON_ArrayForEach(s, arr)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(s, "name");
        const cJSON *unit = cJSON_GetObjectItemCaseSensitive(s, "unit");
        const cJSON *vals = cJSON_GetObjectItemCaseSensitive(s, "values");
        if (!cJSON_IsString(name) || !cJSON_IsArray(vals))
            return cp_failf(CP_EPARSE, "trace file: variant %zu: a series needs a string "
                            "'name' and an array 'values'", variant);
        size_t n = (size_t)cJSON_GetArraySize(vals), i = 0;
        double *buf = malloc((n ? n : 1) * sizeof *buf);
        if (!buf)
            return cp_failf(CP_ENOMEM, "out of memory reading series %s", name->valuestring);
        const cJSON *x;
        cJSON_ArrayForEach(x, vals)
        {
            if (!cJSON_IsNumber(x)) {
                free(buf);
                return cp_failf(CP_EPARSE, "trace file: variant %zu: series %s holds a "
                                "non-number", variant, name->valuestring);
            }
            buf[i++] = x->valuedouble;
        }
        cp_trace_variant *tv = &out->variants[variant];
        int rc = cp_series_store(&tv->series, &tv->nseries, &tv->series_cap, name->valuestring,
                                 cJSON_IsString(unit) ? unit->valuestring : "", buf, n);
        free(buf);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Where cJSON stopped in `text`: line and column; a text whose brackets
 * are still open at its end was cut short (a writer that died, a copy that
 * stopped), wherever cJSON noticed. Every JSON reader of this layer (trace
 * files, reports) says it the same way. */
int cp_json_parse_error(const char *text)
{
    const char *at = cJSON_GetErrorPtr();
    size_t len = strlen(text), off = at && at >= text && at <= text + len ? (size_t)(at - text)
                                                                          : len;
    long depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (in_string) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_string = false;
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            depth--;
        }
    }
    bool cut = depth > 0 || in_string;
    size_t where = cut ? len : off;
    int line = 1, col = 1;
    for (size_t i = 0; i < where; i++)
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    if (cut)
        return cp_failf(CP_EPARSE, "not valid JSON: it ends at line %d, column %d (byte %zu) "
                                   "inside a value: cut short?",
                        line, col, len);
    return cp_failf(CP_EPARSE, "not valid JSON at line %d, column %d (byte %zu, near \"%.20s\")",
                    line, col, off, text + off);
}

int cp_trace_file_parse(const char *text, cp_trace_file *out)
{
    int rc = 0;
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_Parse(text);
    if (!root)
        return cp_json_parse_error(text);
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    const cJSON *cname = cJSON_GetObjectItemCaseSensitive(root, "case");
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(root, "variants");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, CP_TRACE_SCHEMA) != 0) {
        rc = cp_failf(CP_EPARSE, "trace file: schema is not \"%s\"", CP_TRACE_SCHEMA);
        goto out;
    }
    if (!cJSON_IsString(cname) || !cJSON_IsArray(vars)) {
        rc = cp_failf(CP_EPARSE, "trace file: needs a string 'case' and an array 'variants'");
        goto out;
    }
    snprintf(out->case_name, sizeof out->case_name, "%s", cname->valuestring);
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, "device");
    if (cJSON_IsString(dev))
        snprintf(out->device, sizeof out->device, "%s", dev->valuestring);
    const cJSON *v;
    cJSON_ArrayForEach(v, vars)
    {
        const cJSON *vname = cJSON_GetObjectItemCaseSensitive(v, "name");
        const cJSON *acts = cJSON_GetObjectItemCaseSensitive(v, "activities");
        if (!cJSON_IsString(vname) || !cJSON_IsArray(acts)) {
            rc = cp_failf(CP_EPARSE,
                          "trace file: variant %zu needs a string 'name' and 'activities'",
                          out->nvariants);
            goto out;
        }
        if (out->nvariants == out->variants_cap) {
            size_t cap = out->variants_cap ? out->variants_cap * 2 : 8;
            cp_trace_variant *p = realloc(out->variants, cap * sizeof *p);
            if (!p) {
                rc = cp_failf(CP_ENOMEM, "out of memory reading the trace file");
                goto out;
            }
            out->variants = p;
            out->variants_cap = cap;
        }
        size_t i = out->nvariants++;
        cp_trace_variant *tv = &out->variants[i];
        memset(tv, 0, sizeof *tv);
        snprintf(tv->name, sizeof tv->name, "%s", vname->valuestring);
        cp_trace_init(&tv->trace);
        uint64_t dropped = 0;
        get_u64(v, "dropped_records", &dropped);
        tv->trace.dropped_records = dropped;
        uint64_t renamed = 0; /* absent in traces written before it existed */
        get_u64(v, "renamed_kernels", &renamed);
        tv->trace.renamed_kernels = renamed;
        const cJSON *ls = cJSON_GetObjectItemCaseSensitive(v, "legacy_default_stream");
        if (ls) {
            uint64_t d = 0, c = 0, s = 0;
            if (!get_u64(ls, "device", &d) || !get_u64(ls, "context", &c) ||
                !get_u64(ls, "stream", &s)) {
                rc = cp_failf(CP_EPARSE, "trace file: variant %zu: legacy_default_stream needs "
                              "device, context and stream", i);
                goto out;
            }
            tv->trace.has_legacy_stream = true;
            tv->trace.legacy_device = (uint32_t)d;
            tv->trace.legacy_context = (uint32_t)c;
            tv->trace.legacy_stream = (uint32_t)s;
        }
        uint64_t origin = 0;
        const cJSON *org = cJSON_GetObjectItemCaseSensitive(v, "origin_ns");
        if (org && !get_decimal(org, &origin)) {
            rc = cp_failf(CP_EPARSE, "trace file: variant %zu: origin_ns must be a decimal "
                          "string", i);
            goto out;
        }
        /* Before the activities, which refer to them by index. */
        CP_TRY(parse_processes(v, i, &tv->trace));
        CP_TRY(parse_stream_names(v, i, &tv->trace));
        size_t k = 0;
        const cJSON *a;
        cJSON_ArrayForEach(a, acts)
        {
            rc = parse_activity(a, k++, origin, &tv->trace);
            if (rc < 0)
                goto out;
        }
        CP_TRY(parse_series(v, i, out));
    }
out:
    cJSON_Delete(root);
    if (rc < 0)
        cp_trace_file_free(out);
    return rc;
}

int cp_trace_file_read(const char *path, cp_trace_file *out)
{
    memset(out, 0, sizeof *out);
    char *text = cp_read_file(path);
    if (!text)
        return CP_EIO;
    int rc = cp_trace_file_parse(text, out);
    free(text);
    if (rc < 0) {
        char why[2048];
        snprintf(why, sizeof why, "%s", cp_last_error());
        return cp_failf(rc, "%s: %s", path, why);
    }
    return rc;
}

bool cp_trace_file_is_program(const cp_trace_file *f)
{
    return f->nvariants == 1 && f->variants[0].trace.nprocesses > 0;
}

void cp_trace_file_free(cp_trace_file *f)
{
    for (size_t i = 0; i < f->nvariants; i++) {
        cp_trace_free(&f->variants[i].trace);
        cp_series_free(f->variants[i].series, f->variants[i].nseries);
    }
    free(f->variants);
    f->variants = NULL;
    f->nvariants = f->variants_cap = 0;
}

int cp_report_json_write(const cp_report *r, const char *path)
{
    cJSON *root = cp_report_to_json(r);
    char *text = root ? cJSON_Print(root) : NULL;
    int rc = text ? cp_write_file(path, text)
                  : cp_failf(CP_ENOMEM, "out of memory while writing %s", path);
    cJSON_Delete(root);
    free(text);
    return rc;
}
