/*
 * What a trace measured, scope by scope, as JSON (`cuproof check TRACE
 * --format json` without --expect; internal/measure.h): one object per
 * trace, {"trace", "kind": "program"|"case", "name", "processes",
 * "scopes": [{"scope", "measured", "why"?, "metrics": {NAME: value},
 * "findings": [{"name", "count", "message"}]}], "more_ranges"}, the
 * metrics a scope cannot measure left out. Values are the metric table's
 * (cp_metric_value), in its units (ns, counts, fractions). A program's
 * whole is followed by a scope per operation of its per-collective table,
 * "collective(OP)", with that scope's own metrics
 * (CP_COLLECTIVE_METRIC_MAP), its rows of the per-collective table
 * ("rows": [{"algorithm", "protocol", "count", "total_ns", "median_ns",
 * "exposed_ns", "bytes"?, "algbw_gbps"?, "busbw_gbps"?}]) and the same by
 * message size ("by_size": each with "size_from_bytes",
 * "size_below_bytes"). A "per step(NAME)" scope has "steps",
 * per metric of CP_STEP_METRIC_MAP {"measured_steps", "median", "p95",
 * "max", "max_step", "min", "min_step"}, and "late_rank": each step's
 * late rank (-1 where no collective was matched).
 */
#include <cuproof/internal/measure.h>
#include <cuproof/internal/steps.h>

#include "analysis/json_put.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void put_number(FILE *f, const char *key, double v, bool comma)
{
    fprintf(f, "%s\"%s\":", comma ? "," : "", key);
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

/* A 'per step' scope: "steps" and, per metric measured in a step, its
 * summary over the steps. */
static void put_steps(FILE *f, const cp_measured_scope *s)
{
    fprintf(f, ",\"steps\":%zu,\"metrics\":{", s->nsteps);
    size_t n = 0, put = 0;
    const cp_metric_def *defs = cp_step_metric_defs(&n);
    for (size_t i = 0; i < n; i++) {
        cp_step_summary sum;
        cp_step_summarise(s->steps, s->nsteps, &defs[i], &sum);
        if (sum.measured == 0)
            continue;
        fprintf(f, "%s\"%s\":{\"measured_steps\":%zu", put++ ? "," : "", defs[i].name,
                sum.measured);
        put_number(f, "median", sum.p50, true);
        put_number(f, "p95", sum.p95, true);
        put_number(f, "max", sum.max, true);
        fprintf(f, ",\"max_step\":%u", sum.max_step);
        put_number(f, "min", sum.min, true);
        fprintf(f, ",\"min_step\":%u}", sum.min_step);
    }
    /* Each step's late rank (-1: no collective matched in it), in order. */
    fputs("},\"late_rank\":[", f);
    for (size_t i = 0; i < s->nsteps; i++)
        fprintf(f, "%s%d", i ? "," : "", (int)s->steps[i].late_rank);
    fputs("]}", f);
}

static void put_scope(FILE *f, const cp_measured_scope *s)
{
    fputs("{\"scope\":", f);
    cp_json_put_string(f, s->scope);
    fprintf(f, ",\"measured\":%s", s->measured ? "true" : "false");
    if (!s->measured) {
        fputs(",\"why\":", f);
        cp_json_put_string(f, s->why);
        fputs("}", f);
        return;
    }
    if (s->per_step) {
        put_steps(f, s);
        return;
    }
    fputs(",\"metrics\":{", f);
    size_t n = 0, put = 0;
    const cp_metric_def *defs = cp_metric_defs(&n);
    for (size_t i = 0; i < n; i++) {
        double v = cp_metric_value(&s->m, &defs[i]);
        if (cp_metric_unmeasured(&s->m, defs[i].name) || !isfinite(v))
            continue;
        fprintf(f, "%s\"%s\":%.17g", put++ ? "," : "", defs[i].name, v);
    }
    fputs("},\"findings\":[", f);
    for (size_t i = 0; i < s->m.nfindings; i++) {
        fprintf(f, "%s{\"name\":", i ? "," : "");
        cp_json_put_string(f, s->m.findings[i].name);
        fprintf(f, ",\"count\":%u,\"message\":", s->m.findings[i].count);
        cp_json_put_string(f, s->m.findings[i].message);
        fputs("}", f);
    }
    fputs("]}", f);
}

/* The rows of operation `op` in `rows` (n of them) as "key": [{...}]:
 * algorithm, protocol, for a size row its bucket, and the row's figures
 * (NCCL's bytes and bandwidths where the table's rules give them). */
static void put_rows(FILE *f, const char *key, const cp_collective_row *rows, size_t n,
                     const char *op)
{
    fprintf(f, ",\"%s\":[", key);
    size_t put = 0;
    for (size_t i = 0; i < n; i++) {
        const cp_collective_row *r = &rows[i];
        if (strcmp(r->op, op) != 0)
            continue;
        fputs(put++ ? ",{\"algorithm\":" : "{\"algorithm\":", f);
        cp_json_put_string(f, r->algo);
        fputs(",\"protocol\":", f);
        cp_json_put_string(f, r->proto);
        if (r->size_hi)
            fprintf(f, ",\"size_from_bytes\":%llu,\"size_below_bytes\":%llu",
                    (unsigned long long)r->size_lo, (unsigned long long)r->size_hi);
        fprintf(f, ",\"count\":%u,\"total_ns\":%llu,\"median_ns\":%llu,\"exposed_ns\":%llu", r->count,
                (unsigned long long)r->total_ns, (unsigned long long)r->median_ns,
                (unsigned long long)r->exposed_ns);
        uint64_t bytes = 0;
        double alg = 0, bus = 0;
        if (cp_collective_row_bytes(r, &bytes))
            fprintf(f, ",\"bytes\":%llu", (unsigned long long)bytes);
        if (cp_collective_row_bandwidth(r, &alg, &bus)) {
            put_number(f, "algbw_gbps", alg, true);
            put_number(f, "busbw_gbps", bus, true);
        }
        fputc('}', f);
    }
    fputc(']', f);
}

/* After the whole program: each operation of its per-collective table as
 * a scope of its own, "collective(OP)", with that scope's metrics, its
 * rows ("rows": by algorithm and protocol) and the same by message size
 * ("by_size": the kernels whose call's size is known). */
static void put_collectives(FILE *f, const cp_metrics *whole)
{
    size_t n = 0, row = 0;
    const cp_metric_def *defs = cp_collective_metric_defs(&n);
    const char *op = NULL;
    cp_collective_figures c;
    bool several = false;
    while (cp_collective_next(whole, &row, &op, &c, &several)) {
        char scope[64];
        snprintf(scope, sizeof scope, "collective(%s)", op);
        fputs(",{\"scope\":", f);
        cp_json_put_string(f, scope);
        fputs(",\"measured\":true,\"metrics\":{", f);
        size_t put = 0;
        for (size_t i = 0; i < n; i++) {
            if (cp_collective_unmeasured(&c, defs[i].name, several))
                continue;
            fprintf(f, "%s\"%s\":%.17g", put++ ? "," : "", defs[i].name,
                    cp_field_value(&c, &defs[i]));
        }
        fputc('}', f);
        put_rows(f, "rows", whole->collective_rows, whole->ncollective_rows, op);
        put_rows(f, "by_size", whole->collective_size_rows, whole->ncollective_size_rows, op);
        fputs(",\"findings\":[]}", f);
    }
}

void cp_measured_print_json(FILE *f, const cp_measured *m, const char *path, bool first)
{
    fputs(first ? "{\"traces\":[" : ",", f);
    fputs("{\"trace\":", f);
    cp_json_put_string(f, path);
    fprintf(f, ",\"kind\":\"%s\",\"name\":", m->program ? "program" : "case");
    cp_json_put_string(f, m->name);
    fprintf(f, ",\"processes\":%zu,\"more_ranges\":%s,\"scopes\":[", m->processes,
            m->more_ranges ? "true" : "false");
    for (size_t i = 0; i < m->n; i++) {
        if (i)
            fputc(',', f);
        put_scope(f, &m->scopes[i]);
        if (m->program && !m->scopes[i].scope[0] && m->scopes[i].measured)
            put_collectives(f, &m->scopes[i].m);
    }
    fputs("]}", f);
}

void cp_measured_print_json_end(FILE *f)
{
    fputs("]}\n", f);
}
