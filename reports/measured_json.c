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
 * (CP_COLLECTIVE_METRIC_MAP).
 */
#include <cuproof/internal/measure.h>

#include "analysis/json_put.h"

#include <math.h>
#include <stdio.h>

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

/* After the whole program: each operation of its per-collective table as
 * a scope of its own, "collective(OP)", with that scope's metrics. */
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
            if (cp_collective_unmeasured(defs[i].name, several))
                continue;
            fprintf(f, "%s\"%s\":%.17g", put++ ? "," : "", defs[i].name,
                    cp_field_value(&c, &defs[i]));
        }
        fputs("},\"findings\":[]}", f);
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
