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
#include <cuproof/internal/steps.h>
#include <cuproof/internal/tracefile.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cp_measured_free(cp_measured *m)
{
    for (size_t i = 0; m->scopes && i < m->n; i++) {
        cp_metrics_free(&m->scopes[i].m);
        free(m->scopes[i].steps);
    }
    free(m->scopes);
    memset(m, 0, sizeof *m);
}

/* The next scope of m, named by fmt with arg (or num); NULL when out of
 * memory. The array may move: a pointer into it is good until the next. */
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

/* The scopes a program's trace holds beyond the whole: each range name
 * (at most CP_MAX_RANGE_NAMES), each device where it ran on several (their
 * ids), each rank. */
typedef struct scopes_of {
    const char *const *ranges;
    size_t nranges;
    /* The range names whose steps are measured: those that came more
     * than once, the first CP_MEASURE_STEP_RANGES of them. */
    const char *step_ranges[CP_MEASURE_STEP_RANGES];
    size_t nstep_ranges;
    uint32_t *devices;
    uint32_t ndevices;
    int32_t *ranks;
    long nranks;
} scopes_of;

/* The devices of `whole` into s, where it ran on several; its metrics
 * need not outlive s. Returns 0 or CP_ENOMEM. */
static int devices_of(const cp_metrics *whole, scopes_of *s)
{
    uint32_t n = whole->devices > 1 ? whole->devices : 0;
    if (n && !(s->devices = malloc(n * sizeof *s->devices)))
        return cp_failf(CP_ENOMEM, "out of memory measuring %u devices", n);
    for (uint32_t d = 0; d < n; d++)
        s->devices[d] = whole->device_metrics ? whole->device_metrics[d].device : d;
    s->ndevices = n;
    return 0;
}

/* The range names whose steps are measured (s->step_ranges): those that
 * came more than once (counts[i] times the i-th), the first
 * CP_MEASURE_STEP_RANGES of them, but the communication library's own
 * ranges (NCCL's ncclAllReduce and the like, one a call: the work classes'
 * rule, cp_name_is_comm). */
static void pick_step_ranges(scopes_of *s, const uint64_t *counts, const cp_timeline_opts *opts)
{
    for (size_t i = 0; i < s->nranges && s->nstep_ranges < CP_MEASURE_STEP_RANGES; i++)
        if (counts[i] > 1 && !cp_name_is_comm(s->ranges[i], opts ? opts->comm_pattern : NULL))
            s->step_ranges[s->nstep_ranges++] = s->ranges[i];
}

/* Drops the 'per step' scopes of fewer than two steps (a range each
 * process ran once is no loop), freeing them. */
static void drop_single_steps(cp_measured *m)
{
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++) {
        cp_measured_scope *sc = &m->scopes[i];
        if (sc->per_step && sc->nsteps < 2) {
            free(sc->steps);
            continue;
        }
        m->scopes[k++] = *sc;
    }
    m->n = k;
}

/* Each scope of s beyond the whole, in this order (ranges, devices,
 * ranks): a measured scope added to out, and the expectation that names
 * it (`kernels >= 0`: only its scope is read) into (*items)[i], its device
 * number in (*args)[i]. *k gets their count; the caller frees both lists,
 * which hold pointers into out's scopes and s. Returns 0 or CP_ENOMEM. */
static int scope_list(const scopes_of *s, cp_measured *out, cp_expectation **items,
                      char (**args)[12], size_t *k)
{
    static char kernels[] = "kernels", range[] = "range", device[] = "device", none[] = "",
                step_ns[] = "step_ns";
    size_t ranks = s->nranks > 0 ? (size_t)s->nranks : 0;
    *k = s->nranges + s->ndevices + ranks + s->nstep_ranges;
    *items = calloc(*k ? *k : 1, sizeof **items);
    *args = calloc(*k ? *k : 1, sizeof **args);
    if (!*items || !*args)
        return cp_failf(CP_ENOMEM, "out of memory measuring %zu scopes", *k);
    size_t first = out->n;
    for (size_t i = 0; i < *k; i++) {
        cp_expectation *e = &(*items)[i];
        e->kind = CP_EXPECT_COMPARE;
        e->name = kernels;
        e->op = CP_OP_GE;
        e->scope = none;
        cp_measured_scope *sc;
        if (i < s->nranges) {
            e->scope = range;
            e->scope_arg = (char *)s->ranges[i];
            sc = add_scope(out, "range(%s)", s->ranges[i], 0);
        } else if (i - s->nranges < s->ndevices) {
            uint32_t dev = s->devices[i - s->nranges];
            snprintf((*args)[i], sizeof (*args)[i], "%u", dev);
            e->scope = device;
            e->scope_arg = (*args)[i];
            sc = add_scope(out, "device(%ld)", NULL, (long)dev);
        } else if (i - s->nranges - s->ndevices < ranks) {
            e->has_rank = true;
            e->rank = s->ranks[i - s->nranges - s->ndevices];
            sc = add_scope(out, "rank(%ld)", NULL, (long)e->rank);
        } else {
            e->per_step = true;
            e->name = step_ns;
            e->step_range = (char *)s->step_ranges[i - s->nranges - s->ndevices - ranks];
            sc = add_scope(out, "per step(%s)", e->step_range, 0);
            if (sc)
                sc->per_step = true;
        }
        if (!sc)
            return CP_ENOMEM;
    }
    /* Named once the scopes stopped moving. */
    for (size_t i = 0; i < *k; i++)
        (*items)[i].text = out->scopes[first + i].scope;
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
    char (*args)[12] = NULL;
    size_t k = 0;
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
    s.nranges = cp_expect_judge_ranges(first.judge, &s.ranges, &out->more_ranges);
    uint64_t counts[CP_MAX_RANGE_NAMES];
    for (size_t i = 0; i < s.nranges; i++)
        counts[i] = cp_expect_judge_range_count(first.judge, i);
    pick_step_ranges(&s, counts, opts ? &opts->timeline : NULL);
    if ((rc = devices_of(&whole->m, &s)) < 0)
        goto out;
    if ((s.nranks = cp_trace_ranks(&first.meta, &s.ranks)) < 0) {
        rc = (int)s.nranks;
        goto out;
    }
    if ((rc = scope_list(&s, out, &items, &args, &k)) < 0 || k == 0)
        goto out;
    cp_expect_list list = {.items = items, .n = k, .cap = k};
    if ((rc = cp_program_stream_judge(paths, n, rec, &list, opts, &second)) < 0)
        goto out;
    for (size_t i = 0; rc == 0 && i < k; i++) {
        cp_measured_scope *sc = &out->scopes[1 + i];
        rc = sc->per_step ? cp_expect_judge_steps(second.judge, i, &sc->steps, &sc->nsteps,
                                                  sc->why, sizeof sc->why)
                          : cp_expect_judge_scope_metrics(second.judge, i, &sc->m, sc->why,
                                                          sizeof sc->why);
        sc->measured = rc == 0 && !sc->why[0];
    }
    drop_single_steps(out);
out:
    free(items);
    free(args);
    free(s.devices);
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

/* The steps of range `range` of trace t into sc. */
static int measure_steps(const cp_trace *t, const char *range, const cp_timeline_opts *opts,
                         cp_measured_scope *sc)
{
    cp_step_windows w;
    long n = cp_step_rows_of_trace(t, range, opts, &w, &sc->steps);
    cp_step_windows_free(&w);
    if (n < 0)
        return (int)n;
    sc->nsteps = (size_t)n;
    sc->measured = n > 0;
    if (n == 0)
        snprintf(sc->why, sizeof sc->why, "no range named '%s' in the trace: no steps", range);
    return 0;
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
        cp_measured_scope *whole = add_scope(out, "%s", "", 0);
        rc = whole ? measure_part(t, "", NULL, -1, opts, whole) : CP_ENOMEM;
        /* The range names in order first seen, each once, as the
         * streaming judge collects them (cp_expect_judge_ranges). */
        const char *names[CP_MAX_RANGE_NAMES];
        uint64_t counts[CP_MAX_RANGE_NAMES] = {0};
        scopes_of s = {.ranges = names};
        for (size_t i = 0; rc == 0 && i < t->n; i++) {
            const cp_activity *a = &t->items[i];
            if (a->kind != CP_ACT_RANGE || !a->name || !a->name[0])
                continue;
            size_t seen = 0;
            while (seen < s.nranges && strcmp(names[seen], a->name) != 0)
                seen++;
            if (seen < s.nranges)
                counts[seen]++;
            else if (s.nranges == CP_MAX_RANGE_NAMES)
                out->more_ranges = true;
            else
                counts[s.nranges] = 1, names[s.nranges++] = a->name;
        }
        pick_step_ranges(&s, counts, opts);
        if (rc == 0 && out->scopes[0].measured)
            rc = devices_of(&out->scopes[0].m, &s);
        if (rc == 0 && (s.nranks = cp_trace_ranks(t, &s.ranks)) < 0)
            rc = (int)s.nranks;
        cp_expectation *items = NULL;
        char (*args)[12] = NULL;
        size_t k = 0;
        if (rc == 0)
            rc = scope_list(&s, out, &items, &args, &k);
        for (size_t i = 0; rc == 0 && i < k; i++)
            rc = items[i].per_step
                     ? measure_steps(t, items[i].step_range, opts, &out->scopes[1 + i])
                     : measure_part(t, items[i].scope, items[i].scope_arg,
                                    items[i].has_rank ? items[i].rank : -1, opts,
                                    &out->scopes[1 + i]);
        free(items);
        free(args);
        free(s.devices);
        free(s.ranks);
        drop_single_steps(out);
    }
    cp_trace_file_free(&tf);
    return rc;
}
