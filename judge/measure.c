/*
 * What a recorded trace measured, scope by scope (internal/measure.h):
 * `cuproof check TRACE` without an expectation. A program's files are
 * streamed twice, as check judges them (cp_program_stream_judge): first
 * with no expectation, for the whole program and the scopes it holds
 * (its range names, devices and ranks), then with one expectation per
 * scope, whose scope's own metrics stand in for its verdict
 * (cp_expect_judge_scope_metrics). A trace.json is read whole.
 */
#include <cuproof/internal/measure.h>

#include <cuproof/error.h>
#include <cuproof/expect.h>
#include <cuproof/program.h>
#include <cuproof/trace.h>
#include <cuproof/internal/tracefile.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cp_measured_free(cp_measured *m)
{
    for (size_t i = 0; m->scopes && i < m->n; i++)
        cp_metrics_free(&m->scopes[i].m);
    free(m->scopes);
    memset(m, 0, sizeof *m);
}

static cp_measured_scope *add_scope(cp_measured *m, const char *fmt, const char *arg, long num)
{
    cp_measured_scope *s = realloc(m->scopes, (m->n + 1) * sizeof *s);
    if (!s) {
        cp_failf(CP_ENOMEM, "out of memory measuring the trace's scopes");
        return NULL;
    }
    m->scopes = s;
    s = &m->scopes[m->n++];
    memset(s, 0, sizeof *s);
    if (arg)
        snprintf(s->scope, sizeof s->scope, fmt, arg);
    else
        snprintf(s->scope, sizeof s->scope, fmt, num);
    return s;
}

/* The scopes a program's trace holds beyond the whole: each range name,
 * each device when it ran on several, each rank. */
typedef struct scopes_of {
    const char *const *ranges;
    size_t nranges;
    const cp_metrics *whole;
    int32_t *ranks;
    long nranks;
} scopes_of;

static size_t count_scopes(const scopes_of *s)
{
    return s->nranges + (s->whole->devices > 1 ? s->whole->devices : 0) +
           (s->nranks > 0 ? (size_t)s->nranks : 0);
}

/* Expectation k of the scopes (`kernels >= 0` in it: only its scope is
 * read), into e; the scope's name into m's next scope. */
static int scope_expectation(const scopes_of *s, size_t k, cp_expectation *e, cp_measured *m)
{
    static char kernels[] = "kernels", range[] = "range", device[] = "device", none[] = "";
    memset(e, 0, sizeof *e);
    e->kind = CP_EXPECT_COMPARE;
    e->name = kernels;
    e->op = CP_OP_GE;
    e->scope = none;
    cp_measured_scope *sc;
    if (k < s->nranges) {
        e->scope = range;
        e->scope_arg = (char *)s->ranges[k];
        sc = add_scope(m, "range(%s)", s->ranges[k], 0);
    } else if ((k -= s->nranges) < (s->whole->devices > 1 ? s->whole->devices : 0)) {
        static char numbers[64][12];
        uint32_t dev = s->whole->device_metrics ? s->whole->device_metrics[k].device : (uint32_t)k;
        snprintf(numbers[k % 64], sizeof numbers[0], "%u", dev);
        e->scope = device;
        e->scope_arg = numbers[k % 64];
        sc = add_scope(m, "device(%ld)", NULL, (long)dev);
    } else {
        k -= s->whole->devices > 1 ? s->whole->devices : 0;
        e->has_rank = true;
        e->rank = s->ranks[k];
        sc = add_scope(m, "rank(%ld)", NULL, (long)s->ranks[k]);
    }
    if (!sc)
        return CP_ENOMEM;
    e->text = sc->scope;
    return 0;
}

int cp_measure_program(const char *const *paths, size_t n, bool rec, const cp_stream_opts *opts,
                       cp_measured *out)
{
    memset(out, 0, sizeof *out);
    out->program = true;
    cp_expect_list none = {0};
    cp_program_stream first, second;
    memset(&second, 0, sizeof second);
    cp_expectation *items = NULL;
    scopes_of s = {0};
    int rc = cp_program_stream_judge(paths, n, rec, &none, opts, &first);
    if (rc < 0)
        goto out;
    out->processes = first.meta.nprocesses;
    if (first.meta.nprocesses) {
        const char *cmd = first.meta.processes[0].command, *slash = strrchr(cmd, '/');
        snprintf(out->name, sizeof out->name, "%.127s", slash ? slash + 1 : cmd);
    }
    cp_measured_scope *whole = add_scope(out, "%s", "", 0);
    if (!whole) {
        rc = CP_ENOMEM;
        goto out;
    }
    cp_expect_judge_take_metrics(first.judge, &whole->m);
    whole->measured = true;
    s.whole = &whole->m;
    s.nranges = cp_expect_judge_ranges(first.judge, &s.ranges, &out->more_ranges);
    if ((s.nranks = cp_trace_ranks(&first.meta, &s.ranks)) < 0) {
        rc = (int)s.nranks;
        goto out;
    }
    size_t k = count_scopes(&s);
    if (k == 0)
        goto out;
    if (!(items = calloc(k, sizeof *items))) {
        rc = cp_failf(CP_ENOMEM, "out of memory measuring %zu scopes", k);
        goto out;
    }
    /* The whole scope is scopes[0]; adding may move the array, so the
     * whole program's metrics are reached through the index from here. */
    for (size_t i = 0; rc == 0 && i < k; i++) {
        s.whole = &out->scopes[0].m;
        rc = scope_expectation(&s, i, &items[i], out);
    }
    for (size_t i = 0; rc == 0 && i < k; i++)
        items[i].text = out->scopes[1 + i].scope;
    if (rc < 0)
        goto out;
    cp_expect_list list = {.items = items, .n = k, .cap = k};
    if ((rc = cp_program_stream_judge(paths, n, rec, &list, opts, &second)) < 0)
        goto out;
    for (size_t i = 0; rc == 0 && i < k; i++) {
        cp_measured_scope *sc = &out->scopes[1 + i];
        rc = cp_expect_judge_scope_metrics(second.judge, i, &sc->m, sc->why, sizeof sc->why);
        sc->measured = rc == 0 && !sc->why[0];
    }
out:
    free(items);
    free(s.ranks);
    cp_program_stream_free(&first);
    cp_program_stream_free(&second);
    return rc;
}

/* Scope `scope`(`arg`) of trace t, for rank `rank` (-1: every process),
 * analysed into sc. */
static int measure_part(const cp_trace *t, const char *scope, const char *arg, int32_t rank,
                        const cp_timeline_opts *opts, cp_measured_scope *sc)
{
    cp_trace part;
    int rc = rank >= 0 ? cp_trace_scope_rank(t, rank, scope, arg, &part, sc->why, sizeof sc->why)
                       : cp_trace_scope(t, scope, arg, &part, sc->why, sizeof sc->why);
    if (rc == CP_ENOENT) {
        cp_clear_last_error();
        return 0;
    }
    if (rc < 0)
        return rc;
    size_t work = 0;
    for (size_t i = 0; i < part.n; i++)
        work += cp_activity_is_device_work(&part.items[i]);
    if (work == 0)
        snprintf(sc->why, sizeof sc->why, "no kernels, copies or memsets in it");
    else if ((rc = cp_timeline_analyse(&part, opts, &sc->m)) == 0)
        sc->measured = true;
    cp_trace_free(&part);
    return rc;
}

int cp_measure_trace_file(const char *path, const cp_timeline_opts *opts, cp_measured *out)
{
    memset(out, 0, sizeof *out);
    cp_trace_file tf;
    int rc = cp_trace_file_read(path, &tf);
    if (rc < 0)
        return rc;
    snprintf(out->name, sizeof out->name, "%s", tf.case_name);
    out->program = cp_trace_file_is_program(&tf);
    for (size_t v = 0; rc == 0 && !out->program && v < tf.nvariants; v++) {
        cp_measured_scope *sc = add_scope(out, "%s", tf.variants[v].name, 0);
        rc = sc ? measure_part(&tf.variants[v].trace, "", NULL, -1, opts, sc) : CP_ENOMEM;
    }
    if (out->program) {
        const cp_trace *t = &tf.variants[0].trace;
        out->processes = t->nprocesses;
        cp_measured_scope *sc = add_scope(out, "%s", "", 0);
        rc = sc ? measure_part(t, "", NULL, -1, opts, sc) : CP_ENOMEM;
        /* The range names in order first seen, each once. */
        for (size_t i = 0; rc == 0 && i < t->n; i++) {
            const cp_activity *a = &t->items[i];
            if (a->kind != CP_ACT_RANGE || !a->name || !a->name[0])
                continue;
            char want[192];
            snprintf(want, sizeof want, "range(%s)", a->name);
            bool seen = false;
            for (size_t k = 0; k < out->n && !seen; k++)
                seen = strcmp(out->scopes[k].scope, want) == 0;
            if (seen)
                continue;
            if (out->n > 64) {
                out->more_ranges = true;
                continue;
            }
            sc = add_scope(out, "range(%s)", a->name, 0);
            rc = sc ? measure_part(t, "range", a->name, -1, opts, sc) : CP_ENOMEM;
        }
        uint32_t devices = out->n && out->scopes[0].measured ? out->scopes[0].m.devices : 0;
        for (uint32_t d = 0; rc == 0 && devices > 1 && d < devices; d++) {
            uint32_t dev = out->scopes[0].m.device_metrics ? out->scopes[0].m.device_metrics[d].device
                                                            : d;
            char num[16];
            snprintf(num, sizeof num, "%u", dev);
            sc = add_scope(out, "device(%ld)", NULL, (long)dev);
            rc = sc ? measure_part(t, "device", num, -1, opts, sc) : CP_ENOMEM;
        }
        int32_t *ranks = NULL;
        long nr = rc == 0 ? cp_trace_ranks(t, &ranks) : 0;
        if (nr < 0)
            rc = (int)nr;
        for (long r = 0; rc == 0 && r < nr; r++) {
            sc = add_scope(out, "rank(%ld)", NULL, (long)ranks[r]);
            rc = sc ? measure_part(t, "", NULL, ranks[r], opts, sc) : CP_ENOMEM;
        }
        free(ranks);
    }
    cp_trace_file_free(&tf);
    return rc;
}
