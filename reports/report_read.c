/* report.json read back into a cp_report (cp_report_read), for replay. */
#include <cuproof/internal/file.h>
#include "reports/json.h"

#include <cuproof/error.h>
#include <cuproof/internal/report.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cp_report_json_load(const char *path, cJSON **out)
{
    *out = NULL;
    char *text = cp_read_file(path);
    if (!text)
        return CP_EIO;
    cJSON *root = cJSON_Parse(text);
    if (!root) {
        cp_json_parse_error(text);
        free(text);
        char why[2048];
        snprintf(why, sizeof why, "%s", cp_last_error());
        return cp_failf(CP_EPARSE, "%s: %s", path, why);
    }
    free(text);
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, CP_REPORT_SCHEMA) != 0 ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "cases"))) {
        cJSON_Delete(root);
        return cp_failf(CP_EPARSE, "%s is not a cuproof report (schema %s with a 'cases' array)",
                        path, CP_REPORT_SCHEMA);
    }
    *out = root;
    return 0;
}

/* ---- Fields ---- */

static const cJSON *item(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* Copies string field k into dst ("" when absent or not a string). */
static void str(const cJSON *o, const char *k, char *dst, size_t size)
{
    const cJSON *s = item(o, k);
    snprintf(dst, size, "%s", cJSON_IsString(s) ? s->valuestring : "");
}

/* Number field k, or `def` when absent or not a number. */
static double num(const cJSON *o, const char *k, double def)
{
    const cJSON *n = item(o, k);
    return cJSON_IsNumber(n) && isfinite(n->valuedouble) ? n->valuedouble : def;
}

static bool flag(const cJSON *o, const char *k)
{
    return cJSON_IsTrue(item(o, k));
}

/* A problem in the file: its path and where in it. */
typedef struct where {
    const char *path;
    char at[160]; /* "case multi-kernel, variant sync" */
} where;

static int bad(const where *w, const char *what)
{
    return cp_failf(CP_EPARSE, "%s: %s%s%s", w->path, w->at, w->at[0] ? ": " : "", what);
}

/* A required string field, non-empty. */
static int need_str(const where *w, const cJSON *o, const char *k, char *dst, size_t size)
{
    const cJSON *s = item(o, k);
    if (!cJSON_IsString(s) || !s->valuestring[0]) {
        char what[96];
        snprintf(what, sizeof what, "no '%s'", k);
        return bad(w, what);
    }
    snprintf(dst, size, "%s", s->valuestring);
    return 0;
}

/* ---- Parts ---- */

static void read_env(const cJSON *o, cp_env *e)
{
    e->has_device = flag(o, "has_device");
    str(o, "no_device_reason", e->no_device_reason, sizeof e->no_device_reason);
    str(o, "gpu_name", e->gpu_name, sizeof e->gpu_name);
    str(o, "gpu_uuid", e->gpu_uuid, sizeof e->gpu_uuid);
    str(o, "cpu_model", e->cpu_model, sizeof e->cpu_model);
    str(o, "address_layout", e->address_layout, sizeof e->address_layout);
    str(o, "cpu_affinity", e->cpu_affinity, sizeof e->cpu_affinity);
    str(o, "cpus", e->cpus, sizeof e->cpus);
    char cc[16];
    str(o, "compute_capability", cc, sizeof cc);
    if (sscanf(cc, "%d.%d", &e->cc_major, &e->cc_minor) != 2)
        e->cc_major = e->cc_minor = 0;
    e->device = (int)num(o, "device", 0);
    str(o, "device_source", e->device_source, sizeof e->device_source);
    e->sm_count = (int)num(o, "sm_count", 0);
    e->copy_engines = (int)num(o, "copy_engines", 0);
    e->concurrent_kernels_supported = flag(o, "concurrent_kernels_supported");
    e->total_mem = (size_t)num(o, "total_memory_bytes", 0);
    e->driver_version = (int)num(o, "driver_version", 0);
    e->runtime_version = (int)num(o, "runtime_version", 0);
    str(o, "cuda_device_max_connections", e->max_connections, sizeof e->max_connections);
    str(o, "host", e->host, sizeof e->host);
}

static void read_clocks(const cJSON *o, cp_clocks *c)
{
    if (!cJSON_IsObject(o))
        return;
    c->known = flag(o, "known");
    c->sm_mhz = (unsigned)num(o, "sm_mhz", 0);
    c->mem_mhz = (unsigned)num(o, "mem_mhz", 0);
    c->throttle_reasons = (unsigned long long)num(o, "throttle_reasons", 0);
    str(o, "reason", c->reason, sizeof c->reason);
}

/* Every number of a JSON array as a malloc'd array; NULL with *n = 0 for
 * an absent or empty one. */
static int numbers(const where *w, const cJSON *arr, double **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    int len = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
    if (len <= 0)
        return 0;
    double *v = malloc((size_t)len * sizeof *v);
    if (!v)
        return cp_failf(CP_ENOMEM, "out of memory reading %s", w->path);
    const cJSON *x;
    size_t i = 0;
    cJSON_ArrayForEach(x, arr)
    {
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) {
            free(v);
            return bad(w, "a sample or series value is not a number");
        }
        v[i++] = x->valuedouble;
    }
    *out = v;
    *n = i;
    return 0;
}

/* The trace's metrics and findings as the report keeps them (the lanes
 * and the records are not in it: they are in CASE.trace.json). */
static void read_metrics(const cJSON *o, cp_metrics *m, uint64_t *missing)
{
    size_t n = 0;
    const cp_metric_def *defs = cp_metric_defs(&n);
    *missing = 0;
    for (size_t i = 0; i < n; i++) {
        cp_metric_set(m, &defs[i], num(o, defs[i].name, 0));
        if (!cJSON_IsNumber(item(o, defs[i].name)) && i < 64)
            *missing |= (uint64_t)1 << i;
    }
    size_t nf = 0;
    const cp_finding_def *fdefs = cp_finding_defs(&nf);
    const cJSON *f;
    cJSON_ArrayForEach(f, item(o, "findings"))
    {
        const cJSON *name = item(f, "name");
        for (size_t k = 0; cJSON_IsString(name) && k < nf && m->nfindings < CP_MAX_FINDINGS; k++)
            if (strcmp(fdefs[k].name, name->valuestring) == 0) {
                cp_finding *d = &m->findings[m->nfindings++];
                d->name = fdefs[k].name;
                d->count = (uint32_t)num(f, "count", 0);
                str(f, "message", d->message, sizeof d->message);
            }
    }
}

/* ---- Ranks (1.7) ---- */

/* A field of the ranks' object: absent reads as 0 (a reader can do
 * without it), present it must be a number from `min` up, else an error
 * naming it ("ranks.rows[1].pid"). */
static int rank_num(const where *w, const cJSON *o, const char *at, const char *k, double min,
                    double *out)
{
    const cJSON *n = item(o, k);
    *out = 0;
    if (!n)
        return 0;
    if (!cJSON_IsNumber(n) || !isfinite(n->valuedouble) || n->valuedouble < min) {
        char what[160];
        snprintf(what, sizeof what, "%s.%s is not a number%s", at, k,
                 min >= 0 ? " from 0 up" : "");
        return bad(w, what);
    }
    *out = n->valuedouble;
    return 0;
}

/* Unsigned fields, each through rank_num. */
#define RANK_U(o, at, k, dst)                                                            \
    do {                                                                                 \
        double x_;                                                                       \
        CP_TRY(rank_num(w, o, at, k, 0, &x_));                                           \
        (dst) = x_; /* converted to the field's type */                              \
    } while (0)

/* A required field: the rank of a row or of the straggler. */
static int rank_need(const where *w, const cJSON *o, const char *at, const char *k, double *out)
{
    if (!cJSON_IsNumber(item(o, k))) {
        char what[160];
        snprintf(what, sizeof what, "%s: no '%s'", at, k);
        return bad(w, what);
    }
    return rank_num(w, o, at, k, 0, out);
}

static int read_rank_row(const where *w, const cJSON *o, const char *at, size_t nhosts,
                         cp_rank_row *row)
{
    int rc = 0;
    double x;
    CP_TRY(rank_need(w, o, at, "rank", &x));
    row->rank = (int32_t)x;
    CP_TRY(rank_need(w, o, at, "host_index", &x));
    if (x >= (double)nhosts) {
        char what[200];
        snprintf(what, sizeof what, "%s.host_index %.0f names no host (%zu in ranks.hosts)",
                 at, x, nhosts);
        CP_TRY(bad(w, what));
    }
    row->host = (uint32_t)x;
    RANK_U(o, at, "pid", row->pid);
    RANK_U(o, at, "processes", row->processes);
    const cJSON *d;
    cJSON_ArrayForEach(d, item(o, "devices"))
    {
        if (!cJSON_IsNumber(d) || d->valuedouble < 0) {
            char what[160];
            snprintf(what, sizeof what, "%s.devices holds something not a device number", at);
            CP_TRY(bad(w, what));
        }
        if (row->ndevices < CP_RANK_MAX_DEVICES)
            row->devices[row->ndevices++] = (uint32_t)d->valuedouble;
    }
    uint32_t count;
    RANK_U(o, at, "device_count", count);
    if (count > row->ndevices)
        row->ndevices = count; /* it counts past the devices it lists */
    size_t n;
    const cp_metric_def *defs = cp_rank_row_defs(&n);
    for (size_t k = 0; k < n; k++) {
        CP_TRY(rank_num(w, o, at, defs[k].name, 0, &x));
        cp_field_set(row, &defs[k], x);
    }
out:
    return rc;
}

static int read_host(const where *w, const cJSON *o, const char *at, cp_host_clock *h)
{
    int rc = 0;
    const cJSON *name = item(o, "name");
    if (!cJSON_IsString(name)) {
        char what[160];
        snprintf(what, sizeof what, "%s: no 'name'", at);
        return bad(w, what);
    }
    snprintf(h->name, sizeof h->name, "%s", name->valuestring);
    h->aligned = flag(o, "aligned");
    double offset;
    CP_TRY(rank_num(w, o, at, "offset_ns", -INFINITY, &offset)); /* a clock may be behind */
    h->offset_ns = (int64_t)offset;
    RANK_U(o, at, "residual_ns", h->residual_ns);
    RANK_U(o, at, "shared", h->shared);
out:
    return rc;
}

/* The straggler: null (or absent) when the rule found none. */
static int read_straggler(const where *w, const cJSON *o, cp_ranks *r)
{
    int rc = 0;
    r->straggler_rank = -1;
    if (!o || cJSON_IsNull(o))
        return 0;
    if (!cJSON_IsObject(o))
        return bad(w, "ranks.straggler is neither null nor an object");
    double x;
    CP_TRY(rank_need(w, o, "ranks.straggler", "rank", &x));
    r->straggler = true;
    r->straggler_rank = (int32_t)x;
    RANK_U(o, "ranks.straggler", "median_lag_ns", r->straggler_median_lag_ns);
    RANK_U(o, "ranks.straggler", "mean_lag_ns", r->straggler_mean_lag_ns);
    RANK_U(o, "ranks.straggler", "max_lag_ns", r->straggler_max_lag_ns);
out:
    return rc;
}

static int read_ranks_into(const where *w, const cJSON *o, cp_ranks *r)
{
    int rc = 0;
    const cJSON *rows = item(o, "rows"), *hosts = item(o, "hosts");
    if (!cJSON_IsArray(rows) || !cJSON_IsArray(hosts))
        return bad(w, "ranks has no 'rows' and 'hosts' arrays");
    int nr = cJSON_GetArraySize(rows), nh = cJSON_GetArraySize(hosts);
    r->rows = calloc(nr > 0 ? (size_t)nr : 1, sizeof *r->rows);
    r->hosts = calloc(nh > 0 ? (size_t)nh : 1, sizeof *r->hosts);
    if (!r->rows || !r->hosts)
        return CP_ENOMEM;
    const cJSON *x;
    char at[48];
    cJSON_ArrayForEach(x, hosts)
    {
        snprintf(at, sizeof at, "ranks.hosts[%zu]", r->nhosts);
        CP_TRY(read_host(w, x, at, &r->hosts[r->nhosts++]));
    }
    cJSON_ArrayForEach(x, rows)
    {
        snprintf(at, sizeof at, "ranks.rows[%zu]", r->nrows);
        CP_TRY(read_rank_row(w, x, at, r->nhosts, &r->rows[r->nrows++]));
    }
    RANK_U(o, "ranks", "collectives", r->collectives);
    RANK_U(o, "ranks", "median_start_spread_ns", r->median_start_spread_ns);
    RANK_U(o, "ranks", "median_end_spread_ns", r->median_end_spread_ns);
    r->all_aligned = flag(o, "all_aligned");
    str(o, "unmatched", r->unmatched, sizeof r->unmatched);
    str(o, "partial", r->partial, sizeof r->partial);
    str(o, "matched_by", r->matched_by, sizeof r->matched_by);
    str(o, "missing", r->missing, sizeof r->missing);
    str(o, "not_one_job", r->not_one_job, sizeof r->not_one_job);
    const cJSON *waits = item(o, "collectives_by_operation");
    int nw = cJSON_IsArray(waits) ? cJSON_GetArraySize(waits) : 0;
    if (nw > 0 && !(r->waits = calloc((size_t)nw, sizeof *r->waits)))
        return CP_ENOMEM;
    const cJSON *each = nw > 0 ? waits : NULL;
    cJSON_ArrayForEach(x, each)
    {
        cp_collective_wait *k = &r->waits[r->nwaits++];
        snprintf(at, sizeof at, "ranks.collectives_by_operation[%zu]", r->nwaits - 1);
        str(x, "operation", k->op, sizeof k->op);
        str(x, "algorithm", k->algo, sizeof k->algo);
        str(x, "protocol", k->proto, sizeof k->proto);
        RANK_U(x, at, "matched", k->matched);
        RANK_U(x, at, "wait_ns", k->wait_ns);
        RANK_U(x, at, "transfer_ns", k->transfer_ns);
    }
    CP_TRY(read_straggler(w, item(o, "straggler"), r));
out:
    return rc;
}

/* A variant's "ranks" (absent before 1.7 and for a program without
 * ranks: *out stays NULL). */
static int read_ranks(const where *w, const cJSON *o, cp_ranks **out)
{
    *out = NULL;
    if (!o)
        return 0;
    if (!cJSON_IsObject(o))
        return bad(w, "ranks is not an object");
    cp_ranks *r = calloc(1, sizeof *r);
    if (!r)
        return CP_ENOMEM;
    int rc = read_ranks_into(w, o, r);
    if (rc < 0) {
        cp_ranks_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

#undef RANK_U

/* o's `key`: processes_ms (1.13) or gpu_processes_ms (1.18), each
 * process's median in a pass of several; absent for a pass of one. */
static int read_processes(const where *w, const cJSON *o, const char *key, double *ms, int *n)
{
    const cJSON *arr = item(o, key);
    *n = 0;
    if (!arr)
        return 0;
    char what[96];
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > CP_MAX_PROCESSES) {
        snprintf(what, sizeof what, "%s is not an array of at most %d times", key,
                 CP_MAX_PROCESSES);
        return bad(w, what);
    }
    const cJSON *x;
    cJSON_ArrayForEach(x, arr)
    {
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || !(x->valuedouble > 0)) {
            snprintf(what, sizeof what, "%s holds a value that is not a time > 0", key);
            return bad(w, what);
        }
        ms[(*n)++] = x->valuedouble;
    }
    return 0;
}

/* timing.passes (1.8, metrics 1.9): each pass of `cuproof run --runs K`; absent in a
 * report of one pass or an older schema (nruns 0). */
static int read_passes(const where *w, const cJSON *arr, cp_variant_result *v)
{
    int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
    if (arr && !cJSON_IsArray(arr))
        return bad(w, "timing.passes is not an array");
    if (n <= 0)
        return 0;
    if (!(v->runs = calloc((size_t)n, sizeof *v->runs)))
        return cp_failf(CP_ENOMEM, "out of memory reading %s", w->path);
    const cJSON *p;
    cJSON_ArrayForEach(p, arr)
    {
        cp_run_value *r = &v->runs[v->nruns++];
        const cJSON *median = item(p, "median_ms");
        if (!cJSON_IsNumber(median) || !isfinite(median->valuedouble) || median->valuedouble < 0)
            return bad(w, "a pass of timing.passes has no median_ms");
        r->median_ms = median->valuedouble;
        int rc = numbers(w, item(p, "samples_ms"), &r->samples_ms, &r->nsamples);
        if (rc < 0)
            return rc;
        /* 1.14: the pass's GPU time. */
        if ((rc = numbers(w, item(p, "gpu_samples_ms"), &r->gpu_samples_ms, &r->ngpu_samples)) < 0)
            return rc;
        r->gpu_median_ms = num(p, "gpu_median_ms", 0);
        if (r->ngpu_samples && !(r->gpu_median_ms > 0))
            return bad(w, "a pass of timing.passes has gpu_samples_ms but no gpu_median_ms > 0");
        read_clocks(item(p, "clocks_before"), &r->clocks_before);
        read_clocks(item(p, "clocks_after"), &r->clocks_after);
        r->device_busy_ns = (uint64_t)num(p, "device_busy_ns", 0);
        r->pid = (int)num(p, "pid", 0);
        rc = read_processes(w, p, "processes_ms", r->process_ms, &r->nprocesses);
        /* 1.18: the GPU's time of each process. */
        if (rc == 0)
            rc = read_processes(w, p, "gpu_processes_ms", r->gpu_process_ms, &r->ngpu_processes);
        if (rc < 0)
            return rc;
        /* 1.9: the pass's traced metrics; the bits of metrics the pass
         * lacks are not kept (compare reads the report's own for them). */
        const cJSON *m = item(p, "metrics");
        if (cJSON_IsObject(m)) {
            uint64_t missing;
            read_metrics(m, &r->metrics, &missing);
            r->traced = true;
        }
    }
    return 0;
}

/* 1.14: the GPU's time of the timed runs and the figure the variant is
 * judged on; a report without them (older, or a variant that did not
 * run) is judged on wall time, and says so. */
static int read_figure(const where *w, const cJSON *t, cp_variant_result *v)
{
    int rc = numbers(w, item(t, "gpu_samples_ms"), &v->gpu_samples_ms, &v->ngpu_samples);
    if (rc < 0)
        return rc;
    if (v->ngpu_samples && (rc = cp_timing_compute(v->gpu_samples_ms, v->ngpu_samples,
                                                   &v->gpu_timing)) < 0)
        return bad(w, "timing.gpu_samples_ms holds a value that is not a time");
    char on[16] = "";
    str(t, "judged_on", on, sizeof on);
    str(t, "judged_on_why", v->figure_why, sizeof v->figure_why);
    const cJSON *gated = item(t, "gated");
    v->gated = cJSON_IsTrue(gated);
    if (!on[0]) {
        v->figure = CP_WORK_WALL;
        snprintf(v->figure_why, sizeof v->figure_why, "%s", CP_WALL_ONLY);
    } else if (strcmp(on, "gpu_time") == 0) {
        v->figure = CP_WORK_GPU;
        if (!v->ngpu_samples && v->timing.runs > 0)
            return bad(w, "timing.judged_on is gpu_time but there is no gpu_samples_ms");
    } else if (strcmp(on, "wall_time") == 0) {
        v->figure = CP_WORK_WALL;
    } else {
        return bad(w, "timing.judged_on is neither \"gpu_time\" nor \"wall_time\"");
    }
    return 0;
}

static int read_variant(where *w, const cJSON *o, cp_variant_result *v)
{
    int rc = 0;
    size_t used = strlen(w->at);
    CP_TRY(need_str(w, o, "name", v->name, sizeof v->name));
    snprintf(w->at + used, sizeof w->at - used, ", variant %s", v->name);
    str(o, "skip_reason", v->skip_reason, sizeof v->skip_reason);
    v->ran = !v->skip_reason[0];
    const cJSON *t = item(o, "timing");
    v->timing.runs = (int)num(t, "runs", 0);
    v->timing.median_ms = num(t, "median_ms", 0);
    v->timing.min_ms = num(t, "min_ms", 0);
    v->timing.max_ms = num(t, "max_ms", 0);
    v->timing.stddev_ms = num(t, "stddev_ms", 0);
    CP_TRY(numbers(w, item(t, "samples_ms"), &v->samples_ms, &v->nsamples));
    str(t, "stopped_by", v->stopped_by, sizeof v->stopped_by);
    v->noise = num(t, "median_noise", NAN);
    CP_TRY(read_processes(w, t, "processes_ms", v->process_ms, &v->nprocesses));
    CP_TRY(read_processes(w, t, "gpu_processes_ms", v->gpu_process_ms, &v->ngpu_processes));
    CP_TRY(read_figure(w, t, v));
    read_clocks(item(o, "clocks_before"), &v->clocks_before);
    read_clocks(item(o, "clocks_after"), &v->clocks_after);
    CP_TRY(read_passes(w, item(t, "passes"), v));
    const cJSON *verify = item(o, "verification");
    v->verified_runs = (int)num(verify, "runs", 0);
    v->elements = (uint64_t)num(verify, "elements", 0);
    v->worst_mismatches = (uint64_t)num(verify, "worst_mismatches", 0);
    const cJSON *kept = item(o, "device_memory_kept_bytes");
    v->memory_checked = cJSON_IsNumber(kept);
    v->leaked_bytes = (long long)num(o, "device_memory_kept_bytes", 0);
    const cJSON *s;
    cJSON_ArrayForEach(s, item(o, "series"))
    {
        char name[48], unit[16];
        double *values = NULL;
        size_t n = 0;
        str(s, "name", name, sizeof name);
        str(s, "unit", unit, sizeof unit);
        CP_TRY(numbers(w, item(s, "values"), &values, &n));
        int stored = cp_series_store(&v->series, &v->nseries, &v->series_cap, name, unit,
                                     values, n);
        free(values);
        CP_TRY(stored == CP_EINVAL ? bad(w, "a series without a name") : stored);
    }
    const cJSON *tr = item(o, "trace");
    v->traced = cJSON_IsObject(tr);
    if (v->traced) {
        read_metrics(tr, &v->metrics, &v->metrics_missing);
        v->trace.dropped_records = (uint64_t)num(tr, "dropped_records", 0);
        v->trace.renamed_kernels = (uint64_t)num(tr, "renamed_kernels", 0);
    } else {
        str(o, "untraced_reason", v->untraced_reason, sizeof v->untraced_reason);
    }
    CP_TRY(read_ranks(w, item(o, "ranks"), &v->ranks));
out:
    w->at[used] = '\0';
    return rc;
}

static int read_check(const where *w, const cJSON *o, cp_check_result *k)
{
    int rc = need_str(w, o, "name", k->name, sizeof k->name);
    if (rc < 0)
        return rc;
    char status[24];
    str(o, "status", status, sizeof status);
    /* The writer's "ok" (true, false, or null when skipped) and "status"
     * agree; in a report edited since, "ok" decides, as cuproof compare has
     * always read it. "inconclusive" (a check some tools write for one
     * that could not be made) is the model's essential check skipped. */
    const cJSON *ok = item(o, "ok");
    bool inconclusive = strcmp(status, "inconclusive") == 0;
    if (cJSON_IsBool(ok))
        k->status = cJSON_IsTrue(ok) ? CP_CHECK_PASSED : CP_CHECK_FAILED;
    else if (strcmp(status, "passed") == 0)
        k->status = CP_CHECK_PASSED;
    else if (strcmp(status, "failed") == 0)
        k->status = CP_CHECK_FAILED;
    else if (strcmp(status, "skipped") == 0 || inconclusive)
        k->status = CP_CHECK_SKIPPED;
    else
        return bad(w, "a check whose status is not passed, failed, skipped or inconclusive");
    str(o, "expected", k->expected, sizeof k->expected);
    str(o, "measured", k->measured, sizeof k->measured);
    str(o, "skip_reason", k->skip_reason, sizeof k->skip_reason);
    k->essential = flag(o, "essential") || inconclusive;
    char origin[16];
    str(o, "origin", origin, sizeof origin);
    k->origin = strcmp(origin, "recomputed") == 0 ? CP_ORIGIN_RECOMPUTED
                : strcmp(origin, "recorded") == 0 ? CP_ORIGIN_RECORDED
                                                  : CP_ORIGIN_LIVE;
    return 0;
}

static int read_case(where *w, const cJSON *o, cp_case_result *c)
{
    int rc = 0;
    CP_TRY(need_str(w, o, "name", c->name, sizeof c->name));
    snprintf(w->at, sizeof w->at, "case %s", c->name);
    char status[24];
    str(o, "status", status, sizeof status);
    int st = cp_status_from_name(status);
    if (st < 0)
        CP_TRY(bad(w, "its status is not passed, failed, inconclusive or skipped"));
    c->status = (cp_status)st;
    str(o, "title", c->title, sizeof c->title);
    str(o, "source", c->source, sizeof c->source);
    str(o, "baseline", c->baseline, sizeof c->baseline);
    str(o, "params", c->params, sizeof c->params);
    c->device = (int)num(o, "device", 0);
    str(o, "gpu", c->gpu_name, sizeof c->gpu_name);
    str(o, "skip_reason", c->skip_reason, sizeof c->skip_reason);
    str(o, "error", c->error, sizeof c->error);
    const cJSON *x;
    cJSON_ArrayForEach(x, item(o, "checks"))
    {
        cp_check_result *k = cp_result_add_check(c);
        CP_TRY(k ? read_check(w, x, k) : CP_ENOMEM);
    }
    cJSON_ArrayForEach(x, item(o, "variants"))
    {
        cp_variant_result *v = cp_result_add_variant(c);
        CP_TRY(v ? read_variant(w, x, v) : CP_ENOMEM);
    }
    cJSON_ArrayForEach(x, item(o, "claims"))
    {
        cp_claim_result *k = cp_result_add_claim(c);
        CP_TRY(k ? 0 : CP_ENOMEM);
        str(x, "text", k->text, sizeof k->text);
        str(x, "source", k->source, sizeof k->source);
        str(x, "claimed", k->claimed, sizeof k->claimed);
        str(x, "measured", k->measured, sizeof k->measured);
        str(x, "reason", k->reason, sizeof k->reason);
        char verdict[24];
        str(x, "verdict", verdict, sizeof verdict);
        int vd = cp_verdict_from_name(verdict);
        if (vd < 0)
            CP_TRY(bad(w, "a claim whose verdict is not confirmed, exceeded, fell short, refuted "
                          "or not measured"));
        k->verdict = (cp_verdict)vd;
        const cJSON *win = item(x, "window");
        if (cJSON_IsObject(win)) {
            k->has_window = true;
            k->window.lo = num(win, "lo", NAN);
            k->window.hi = num(win, "hi", NAN);
            k->window.none = num(win, "none", NAN);
            str(win, "unit", k->window.unit, sizeof k->window.unit);
            k->value = num(win, "value", NAN);
            /* 1.13: each pass's value; absent for one pass. */
            const cJSON *pv = item(win, "passes"), *e;
            if (pv && !cJSON_IsArray(pv))
                CP_TRY(bad(w, "a claim's window.passes is not an array"));
            cJSON_ArrayForEach(e, pv)
            {
                if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
                    CP_TRY(bad(w, "a claim's window.passes holds a value that is not a number"));
                if (k->npass_values < CP_CLAIM_MAX_PASSES)
                    k->pass_values[k->npass_values++] = e->valuedouble;
            }
        }
    }
    cJSON_ArrayForEach(x, item(o, "figures"))
    {
        cp_figure *f = cp_result_add_figure(c);
        CP_TRY(f ? 0 : CP_ENOMEM);
        str(x, "name", f->name, sizeof f->name);
        f->value = num(x, "value", NAN);
        str(x, "unit", f->unit, sizeof f->unit);
    }
out:
    return rc;
}

int cp_report_read(const char *path, cp_report *r)
{
    memset(r, 0, sizeof *r);
    cJSON *root = NULL;
    int rc = cp_report_json_load(path, &root);
    if (rc < 0)
        return rc;
    where w = {.path = path};
    const cJSON *tool = item(root, "tool");
    str(tool, "version", r->tool_version, sizeof r->tool_version);
    str(root, "date", r->date, sizeof r->date);
    const cJSON *replay = item(root, "replay");
    str(replay, "recording", r->replayed_from, sizeof r->replayed_from);
    str(replay, "recorded", r->recorded_date, sizeof r->recorded_date);
    str(root, "profile", r->profile, sizeof r->profile);
    r->repeat = (int)num(root, "repeat", 0);
    const cJSON *rule = item(root, "stopping_rule");
    r->min_samples = (int)num(rule, "min_samples", 0);
    r->max_samples = (int)num(rule, "max_samples", 0);
    r->max_noise = num(rule, "max_noise", 0);
    r->min_time_s = num(rule, "min_time_s", 0);
    r->max_time_s = num(rule, "max_time_s", 0);
    read_env(item(root, "environment"), &r->env);
    const cJSON *tracing = item(root, "tracing");
    r->traced = flag(tracing, "available");
    str(tracing, "reason", r->untraced_reason, sizeof r->untraced_reason);
    const cJSON *cases = item(root, "cases");
    int n = cJSON_GetArraySize(cases);
    r->cases = calloc(n > 0 ? (size_t)n : 1, sizeof *r->cases);
    if (!r->cases) {
        rc = cp_failf(CP_ENOMEM, "out of memory reading %s", path);
        goto out;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        w.at[0] = '\0';
        rc = read_case(&w, c, &r->cases[r->ncases++]);
        if (rc == CP_ENOMEM)
            rc = cp_failf(CP_ENOMEM, "out of memory reading %s", path);
        if (rc < 0)
            goto out;
    }
out:
    cJSON_Delete(root);
    if (rc < 0)
        cp_report_free(r);
    return rc;
}

void cp_report_free(cp_report *r)
{
    for (size_t i = 0; r->cases && i < r->ncases; i++)
        cp_case_result_free(&r->cases[i]);
    free(r->cases);
    memset(r, 0, sizeof *r);
}
