/*
 * The metrics record as data (cuproof/metrics.h): the tables that
 * CP_METRIC_MAP and CP_FINDING_MAP expand to, the lookups by name over
 * them, a metric's value read and set through its offset, and the
 * accessors of a computed cp_metrics (a finding by name, a lane by its
 * key in sweep.h's lane order, freeing what it owns). The reports, as
 * written and as read back, the expectations and `cuproof metrics` reach
 * metrics by name through these tables and never compute them, so the
 * tables stand apart from the analyses (timeline.c, stream.c) that fill
 * a record.
 */
#include <cuproof/metrics.h>
#include <cuproof/units.h>

#include <stdio.h>

#include "sweep.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const cp_metric_def metric_defs[] = {
#define CP_METRIC_DEF_(name, type, label, unit, meaning) \
    {#name, label, unit, meaning, CP_METRIC_##type, offsetof(cp_metrics, name)},
    CP_METRIC_MAP(CP_METRIC_DEF_)
#undef CP_METRIC_DEF_
};

static const cp_metric_def device_metric_defs[] = {
#define CP_DEVICE_METRIC_DEF_(name, type) \
    {#name, NULL, NULL, NULL, CP_METRIC_##type, offsetof(cp_device_metrics, name)},
    CP_DEVICE_METRIC_MAP(CP_DEVICE_METRIC_DEF_)
#undef CP_DEVICE_METRIC_DEF_
};

static const cp_finding_def finding_defs[] = {
#define CP_FINDING_DEF_(name, label, meaning) {#name, label, meaning},
    CP_FINDING_MAP(CP_FINDING_DEF_)
#undef CP_FINDING_DEF_
};

const cp_metric_def *cp_metric_defs(size_t *n)
{
    *n = sizeof metric_defs / sizeof metric_defs[0];
    return metric_defs;
}

const cp_metric_def *cp_metric_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof metric_defs / sizeof metric_defs[0]; i++)
        if (strcmp(metric_defs[i].name, name) == 0)
            return &metric_defs[i];
    return NULL;
}

double cp_field_value(const void *record, const cp_metric_def *d)
{
    const char *field = (const char *)record + d->offset;
    switch (d->type) {
    case CP_METRIC_U64:
        return (double)*(const uint64_t *)(const void *)field;
    case CP_METRIC_U32:
        return (double)*(const uint32_t *)(const void *)field;
    default:
        return *(const double *)(const void *)field;
    }
}

void cp_metric_format(const cp_metric_def *d, double v, char *out, size_t len)
{
    if (!d) {
        snprintf(out, len, "%.6g", v);
        return;
    }
    /* A share as a fraction and a percentage: "0.8235 (82.3%)", never
     * "0 ratio". */
    if (strcmp(d->unit, "ratio") == 0) {
        cp_fmt_fraction(v, out, len);
        return;
    }
    /* One kernel, two kernels: the unit agrees with the count, by the
     * one table of units (cuproof/units.h). */
    const char *unit = cp_unit_agree(d->unit, v);
    /* Counts and times are whole numbers: written whole (3198480
     * kernels, not 3.19848e+06), means to 6 digits. */
    if (d->type == CP_METRIC_DOUBLE)
        snprintf(out, len, "%.6g%s%s", v, *unit ? " " : "", unit);
    else
        snprintf(out, len, "%.0f%s%s", v, *unit ? " " : "", unit);
}

double cp_metric_value(const cp_metrics *m, const cp_metric_def *d)
{
    return cp_field_value(m, d);
}

bool cp_metric_is_program_wide(const char *name)
{
    static const char *const wide[] = {
#define CP_WIDE_NAME_(name) #name,
        CP_PROGRAM_WIDE_MAP(CP_WIDE_NAME_)
#undef CP_WIDE_NAME_
    };
    for (size_t i = 0; name && i < sizeof wide / sizeof wide[0]; i++)
        if (strcmp(wide[i], name) == 0)
            return true;
    return false;
}

/* The metrics (and the finding) that are a figure of something the trace
 * may not hold, and the count that says whether it holds it:
 * XX(name, count, missing). */
#define CP_METRIC_NEEDS_MAP(XX)                                                              \
    XX(copy_kernel_overlap_ratio, copy_busy_ns, "no copy")                                   \
    XX(comm_compute_overlap_ns, comm_busy_ns, "no communication kernel")                     \
    XX(comm_compute_overlap_ratio, comm_busy_ns, "no communication kernel")                  \
    XX(exposed_comm_ns, comm_busy_ns, "no communication kernel")                             \
    XX(exposed_comm_share, comm_busy_ns, "no communication kernel")                          \
    XX(collective_start_spread_ns, collectives, "no collective matched across ranks")        \
    XX(straggler_lag_ns, collectives, "no collective matched across ranks")                  \
    XX(straggler, collectives, "no collective matched across ranks")

const char *cp_metric_needs(const char *name, const char **count)
{
#define CP_NEEDS_(metric, counted, missing)                                                  \
    if (strcmp(name, #metric) == 0) {                                                     \
        *count = #counted;                                                                \
        return "not measured: " missing;                                                  \
    }
    CP_METRIC_NEEDS_MAP(CP_NEEDS_)
#undef CP_NEEDS_
    *count = NULL;
    return NULL;
}

const char *cp_metric_unmeasured(const cp_metrics *m, const char *name)
{
    const char *count;
    const char *why = cp_metric_needs(name, &count);
    const cp_metric_def *d = why ? cp_metric_find(count) : NULL;
    return d && cp_metric_value(m, d) == 0 ? why : NULL;
}

const cp_metric_def *cp_metric_def_in(const cp_metric_def *defs, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(defs[i].name, name) == 0)
            return &defs[i];
    return NULL;
}

static const cp_metric_def collective_metric_defs[] = {
#define CP_COLLECTIVE_DEF_(name, type, label, unit, meaning) \
    {#name, label, unit, meaning, CP_METRIC_##type, offsetof(cp_collective_figures, name)},
    CP_COLLECTIVE_METRIC_MAP(CP_COLLECTIVE_DEF_)
#undef CP_COLLECTIVE_DEF_
};

const cp_metric_def *cp_collective_metric_defs(size_t *n)
{
    *n = sizeof collective_metric_defs / sizeof collective_metric_defs[0];
    return collective_metric_defs;
}

const cp_metric_def *cp_collective_metric_find(const char *name)
{
    return cp_metric_def_in(collective_metric_defs,
                            sizeof collective_metric_defs / sizeof *collective_metric_defs, name);
}

bool cp_collective_figures_of(const cp_metrics *m, const char *op, cp_collective_figures *out,
                              bool *several, char *why, size_t len)
{
    memset(out, 0, sizeof *out);
    *several = false;
    size_t rows = 0, used = 0;
    uint64_t bw_ns = 0;
    double alg = 0, bus = 0;
    char ops[160] = "";
    for (size_t i = 0; i < m->ncollective_rows; i++) {
        const cp_collective_row *r = &m->collective_rows[i];
        if (used < sizeof ops) {
            int w = snprintf(ops + used, sizeof ops - used, "%s%s", i ? ", " : "", r->op);
            used += w > 0 ? (size_t)w : 0;
        }
        if (strcmp(r->op, op) != 0)
            continue;
        rows++;
        out->kernels += r->count;
        out->total_ns += r->total_ns;
        out->exposed_ns += r->exposed_ns;
        out->median_ns = r->median_ns;
        out->sized += r->sized;
        out->bw_kernels += r->bw_kernels;
        out->bytes += r->bytes;
        bw_ns += r->bw_ns;
        alg += r->alg_bytes;
        bus += r->bus_bytes;
    }
    if (!rows) {
        snprintf(why, len, "no %s collective in the trace (%s%s)", op,
                 m->ncollective_rows ? "its collectives: " : "no communication kernel",
                 m->ncollective_rows ? ops : "");
        return false;
    }
    if (rows > 1) {
        *several = true;
        out->median_ns = 0;
    }
    out->exposed_share = out->total_ns ? (double)out->exposed_ns / (double)out->total_ns : 0.0;
    /* Bytes per ns are GB/s. */
    out->algbw_gbps = bw_ns ? alg / (double)bw_ns : 0.0;
    out->busbw_gbps = bw_ns ? bus / (double)bw_ns : 0.0;
    return true;
}

bool cp_collective_next(const cp_metrics *m, size_t *row, const char **op,
                        cp_collective_figures *out, bool *several)
{
    for (; *row < m->ncollective_rows; ++*row) {
        const char *name = m->collective_rows[*row].op;
        bool seen = false;
        for (size_t k = 0; k < *row && !seen; k++)
            seen = strcmp(m->collective_rows[k].op, name) == 0;
        char why[224];
        if (seen || !cp_collective_figures_of(m, name, out, several, why, sizeof why))
            continue;
        *op = name;
        ++*row;
        return true;
    }
    return false;
}

const char *cp_collective_unmeasured(const cp_collective_figures *f, const char *name,
                                     bool several)
{
    if (several && strcmp(name, "median_ns") == 0)
        return "ran with several algorithms or protocols, each with its own median";
    bool size = strcmp(name, "bytes") == 0,
         bw = strcmp(name, "algbw_gbps") == 0 || strcmp(name, "busbw_gbps") == 0;
    if ((size || bw) && f->sized < f->kernels)
        return f->sized ? "has kernels whose NCCL call is not known (exec records NCCL's payloads; "
                          "each process's calls of it on one communicator, its kernels on one "
                          "stream, as many of each)"
                        : "has no NCCL call known for its kernels (exec records NCCL's payloads "
                          "when NCCL's NVTX is on; traces of an earlier cuproof have none)";
    if (bw && f->bw_kernels < f->kernels)
        return "has kernels whose communicator's ranks are not known (fewer than two of its "
               "processes in the trace)";
    return NULL;
}

bool cp_collective_row_bytes(const cp_collective_row *r, uint64_t *bytes)
{
    if (!r->count || r->sized < r->count)
        return false;
    *bytes = r->bytes;
    return true;
}

bool cp_collective_row_bandwidth(const cp_collective_row *r, double *algbw, double *busbw)
{
    if (!r->count || r->bw_kernels < r->count || !r->bw_ns)
        return false;
    /* Bytes per ns are GB/s. */
    *algbw = r->alg_bytes / (double)r->bw_ns;
    *busbw = r->bus_bytes / (double)r->bw_ns;
    return true;
}

void cp_collective_label(const char *op, const char *algo, const char *proto, char *out,
                         size_t len)
{
    snprintf(out, len, "%s%s%s%s%s", op, algo[0] ? " " : "", algo, proto[0] ? " " : "", proto);
}

const cp_metric_def *cp_device_metric_defs(size_t *n)
{
    *n = sizeof device_metric_defs / sizeof device_metric_defs[0];
    return device_metric_defs;
}

double cp_device_metric_value(const cp_device_metrics *dm, const cp_metric_def *d)
{
    return cp_field_value(dm, d);
}

void cp_metric_set(cp_metrics *m, const cp_metric_def *d, double v)
{
    cp_field_set(m, d, v);
}

void cp_field_set(void *record, const cp_metric_def *d, double v)
{
    char *field = (char *)record + d->offset;
    /* v == v is false for NaN alone; the bounds leave out the infinities. */
    bool whole = v == v && v >= 0;
    switch (d->type) {
    case CP_METRIC_U64:
        *(uint64_t *)(void *)field = whole && v < 1.8e19 ? (uint64_t)(v + 0.5) : 0;
        break;
    case CP_METRIC_U32:
        *(uint32_t *)(void *)field = whole && v < 4294967295.0 ? (uint32_t)(v + 0.5) : 0;
        break;
    default:
        *(double *)(void *)field = v;
    }
}

const cp_finding_def *cp_finding_defs(size_t *n)
{
    *n = sizeof finding_defs / sizeof finding_defs[0];
    return finding_defs;
}

bool cp_finding_known(const char *name)
{
    for (size_t i = 0; name && i < sizeof finding_defs / sizeof finding_defs[0]; i++)
        if (strcmp(finding_defs[i].name, name) == 0)
            return true;
    return false;
}

void cp_metrics_free(cp_metrics *m)
{
    free(m->lanes);
    m->lanes = NULL;
    m->nlanes = 0;
    free(m->graphs);
    m->graphs = NULL;
    m->ngraphs = 0;
    free(m->device_metrics);
    m->device_metrics = NULL;
    for (size_t i = 0; i < m->nkernel_stats; i++)
        free(m->kernel_stats[i].name);
    free(m->kernel_stats);
    m->kernel_stats = NULL;
    m->nkernel_stats = 0;
    free(m->collective_rows);
    m->collective_rows = NULL;
    m->ncollective_rows = 0;
    free(m->collective_size_rows);
    m->collective_size_rows = NULL;
    m->ncollective_size_rows = 0;
    free(m->step_parts);
    m->step_parts = NULL;
    m->nstep_parts = 0;
}

const cp_finding *cp_metrics_finding(const cp_metrics *m, const char *name)
{
    for (size_t i = 0; i < m->nfindings; i++)
        if (strcmp(m->findings[i].name, name) == 0)
            return &m->findings[i];
    return NULL;
}

long cp_metrics_lane_index(const cp_metrics *m, const cp_activity *a)
{
    size_t at = cp__lane_lower_bound(m->lanes, m->nlanes, a);
    return at < m->nlanes && cp__lane_is(&m->lanes[at], a) ? (long)at : -1;
}
