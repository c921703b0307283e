/* The scopes of a traced program (range, process, device, and rank(N)
 * before any of them): the part of a trace each names, and expectations
 * evaluated on that part, 'every rank' on each rank's. */
#include <cuproof/expect.h>

#include <cuproof/error.h>
#include <cuproof/internal/names.h>
#include <cuproof/internal/collectives.h>
#include <cuproof/internal/grow.h>
#include <cuproof/internal/steps.h>

#include <stdarg.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char scope_list[] = "range(NAME), process(PID), device(N), collective(OP)";


/* A failure that `why` carries as well as cp_last_error. */
static int fail_why(int code, char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_why(int code, char *why, size_t whylen, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (why && whylen)
        snprintf(why, whylen, "%s", msg);
    return cp_failf(code, "%s", msg);
}

/* A record's end, a reversed one taken as empty (as the analysis does). */
static uint64_t end_of(const cp_activity *a)
{
    return a->end < a->start ? a->start : a->end;
}

/* What a trace holds beside its records, so that the scoped copy means the
 * same: processes, counts, the legacy default stream and the streams'
 * names. */
static int copy_context(const cp_trace *in, cp_trace *out)
{
    out->dropped_records = in->dropped_records;
    out->renamed_kernels = in->renamed_kernels;
    out->has_legacy_stream = in->has_legacy_stream;
    out->legacy_device = in->legacy_device;
    out->legacy_context = in->legacy_context;
    out->legacy_stream = in->legacy_stream;
    for (size_t i = 0; i < in->nprocesses; i++)
        if (cp_trace_add_process(out, &in->processes[i]) < 0)
            return CP_ENOMEM;
    return cp_trace_copy_stream_names(out, in);
}

typedef struct interval {
    uint64_t start, end;
    uint32_t process; /* whose range it is, so that rank(N) keeps its own */
} interval;

static int interval_cmp(const void *a, const void *b)
{
    const interval *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* Hands `fn` the parts of device record `a` inside the union `u`: one
 * record per piece it overlaps (the later ones marked as pieces, so that
 * the record is counted once), or the record itself when it has length
 * zero and lies inside. */
static int emit_clipped(const cp_activity *a, const interval *u, size_t n, cp_activity_fn fn,
                        void *ctx)
{
    uint64_t s = a->start, e = end_of(a);
    /* The first piece that ends after s. */
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u[mid].end <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (s == e)
        return lo < n && u[lo].start <= s ? fn(ctx, a) : 0;
    for (size_t k = lo; k < n && u[k].start < e; k++) {
        cp_activity piece = *a;
        piece.start = s > u[k].start ? s : u[k].start;
        piece.end = e < u[k].end ? e : u[k].end;
        /* The first piece stands for the record; the others add time. */
        piece.piece = k > lo;
        int rc = fn(ctx, &piece);
        if (rc < 0)
            return rc;
    }
    return 0;
}

typedef enum { SCOPE_ALL, SCOPE_RANGE, SCOPE_PROCESS, SCOPE_DEVICE, SCOPE_COLLECTIVE } scope_kind;

/* collective(OP): the per-collective table's rows of operation OP, which
 * the whole trace's analysis makes; no record is scoped. */
static bool is_collective(const cp_expectation *e)
{
    return e->scope_arg && strcmp(e->scope, "collective") == 0;
}

/* An expectation on collective(OP), on `m`'s per-collective table. */
static bool eval_collective(const cp_expectation *e, const cp_metrics *m, char *measured,
                            size_t len)
{
    cp_collective_figures f;
    bool several = false;
    const cp_metric_def *d = cp_collective_metric_find(e->name);
    char why[224];
    if (!d) {
        snprintf(measured, len, "no metric '%s' of a collective", e->name);
        return false;
    }
    if (!cp_collective_figures_of(m, e->scope_arg, &f, &several, why, sizeof why)) {
        snprintf(measured, len, "not measured: %s", why);
        return false;
    }
    const char *unmeasured = cp_collective_unmeasured(&f, e->name, several);
    if (unmeasured) {
        snprintf(measured, len, "not measured: %s %s", e->scope_arg, unmeasured);
        return false;
    }
    double v = cp_field_value(&f, d);
    cp_metric_format(d, v, measured, len);
    return cp_expect_compare(v, e->op, e->value);
}

/* Which scope `scope` with `arg` is; CP_EINVAL (with `why`) for none. */
static int scope_kind_of(const char *scope, const char *arg, scope_kind *kind, uint32_t *number,
                         char *why, size_t whylen)
{
    if (!scope[0] && !arg) {
        *kind = SCOPE_ALL;
        return 0;
    }
    if (!arg)
        return fail_why(CP_EINVAL, why, whylen,
                        "'%s' is not a scope of a traced program (a variant's name is a scope "
                        "only in a case's trace; scopes: %s)",
                        scope, scope_list);
    if (strcmp(scope, "range") == 0) {
        *kind = SCOPE_RANGE;
        return 0;
    }
    if (strcmp(scope, "collective") == 0) {
        *kind = SCOPE_COLLECTIVE;
        for (const char *p = arg; *p; p++)
            if (!isalnum((unsigned char)*p))
                return fail_why(CP_EINVAL, why, whylen,
                                "collective(%s): the operation is a name of letters and digits, "
                                "as NCCL's kernels say it (AllReduce, AllGather, ReduceScatter, "
                                "Broadcast, SendRecv)",
                                arg);
        return *arg ? 0
                    : fail_why(CP_EINVAL, why, whylen, "collective(): it names no operation");
    }
    bool process = strcmp(scope, "process") == 0;
    if (process || strcmp(scope, "device") == 0) {
        *kind = process ? SCOPE_PROCESS : SCOPE_DEVICE;
        if (!cp_expect_scope_number(arg, number))
            return fail_why(CP_EINVAL, why, whylen, "%s(%s): the %s must be a decimal integer",
                            scope, arg, process ? "pid" : "device");
        return 0;
    }
    const char *near = cp_expect_scope_meant(scope);
    if (near)
        return fail_why(CP_EINVAL, why, whylen, "unknown scope '%s(%s)' (did you mean '%s'?)",
                        scope, arg, near);
    return fail_why(CP_EINVAL, why, whylen, "unknown scope '%s(%s)' (scopes: %s)", scope, arg,
                    scope_list);
}

/* A scope over records that come one at a time (cuproof/expect.h). */
struct cp_scope {
    scope_kind kind;
    int32_t rank;    /* rank(N) before the scope; -1: every process */
    uint32_t number; /* the pid or the device */
    char *name;      /* the range's */
    interval *u;     /* range: the ranges seen, then their union */
    size_t nu, cap;
    bool found; /* range: one had the name; device: work ran on it */
    /* device: the processes (by index) that ran work on it, for rank(N) */
    bool *device_in;
    size_t ndevice_in;
    bool *keep_process; /* process(PID) or rank(N): the processes kept */
    size_t nprocesses;
    bool ready;
};

int cp_scope_new(cp_scope **out, const char *scope, const char *arg, char *why, size_t whylen)
{
    *out = NULL;
    if (why && whylen)
        why[0] = '\0';
    scope_kind kind = SCOPE_ALL;
    uint32_t number = 0;
    int rc = scope_kind_of(scope ? scope : "", arg, &kind, &number, why, whylen);
    if (rc < 0)
        return rc;
    cp_scope *s = calloc(1, sizeof *s);
    if (!s || (kind == SCOPE_RANGE && !(s->name = strdup(arg)))) {
        free(s);
        return fail_why(CP_ENOMEM, why, whylen, "out of memory scoping the trace");
    }
    s->kind = kind;
    s->number = number;
    s->rank = -1;
    *out = s;
    return 0;
}

int cp_scope_set_rank(cp_scope *s, int32_t rank)
{
    if (s->ready || s->nu || s->found)
        return cp_failf(CP_EINVAL, "cp_scope_set_rank after the scope learnt records");
    s->rank = rank < 0 ? -1 : rank;
    return 0;
}

/* Remembers that process `p` ran work on the scope's device. */
static int mark_device(cp_scope *s, uint32_t p)
{
    if (p >= s->ndevice_in) {
        size_t n = (size_t)p + 1 > 2 * s->ndevice_in ? (size_t)p + 1 : 2 * s->ndevice_in;
        bool *d = realloc(s->device_in, n * sizeof *d);
        if (!d)
            return cp_failf(CP_ENOMEM, "out of memory scoping device %u", s->number);
        memset(d + s->ndevice_in, 0, (n - s->ndevice_in) * sizeof *d);
        s->device_in = d;
        s->ndevice_in = n;
    }
    s->device_in[p] = true;
    return 0;
}

int cp_scope_learn(cp_scope *s, const cp_activity *a)
{
    if (s->kind == SCOPE_DEVICE) {
        if (!cp_activity_is_device_work(a) || a->device != s->number)
            return 0;
        s->found = true;
        return mark_device(s, a->process);
    }
    if (s->kind != SCOPE_RANGE || a->kind != CP_ACT_RANGE || !a->name ||
        strcmp(a->name, s->name) != 0)
        return 0;
    s->found = true;
    if (end_of(a) <= a->start)
        return 0; /* a range of length zero adds nothing */
    interval *u = cp_grow(s->u, &s->cap, s->nu, sizeof *u, 16);
    if (!u)
        return cp_failf(CP_ENOMEM, "out of memory scoping range '%s'", s->name);
    s->u = u;
    s->u[s->nu++] = (interval){a->start, end_of(a), a->process};
    return 0;
}

/* The ranks of `meta`'s processes, as "0, 1, 3", or "none". */
static void list_ranks(const cp_trace *meta, char *out, size_t len)
{
    int32_t *r = NULL;
    long n = cp_trace_ranks(meta, &r);
    size_t used = 0;
    snprintf(out, len, n < 0 ? "unknown: out of memory" : "none");
    for (long i = 0; i < n && used < len; i++) {
        int w = snprintf(out + used, len - used, "%s%d", i ? ", " : "", (int)r[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    free(r);
}

/* Which processes the scope keeps: process(PID) and rank(N) filter; the
 * others keep all. Fails when none is kept. */
static int keep_processes(cp_scope *s, const cp_trace *meta, char *why, size_t whylen)
{
    bool by_pid = s->kind == SCOPE_PROCESS, by_rank = s->rank >= 0;
    if (!by_pid && !by_rank)
        return 0;
    free(s->keep_process);
    s->nprocesses = meta->nprocesses;
    s->keep_process = calloc(meta->nprocesses ? meta->nprocesses : 1, sizeof *s->keep_process);
    if (!s->keep_process)
        return fail_why(CP_ENOMEM, why, whylen, "out of memory scoping the trace");
    bool any_rank = false, any = false;
    for (size_t i = 0; i < meta->nprocesses; i++) {
        const cp_process *p = &meta->processes[i];
        bool rank_ok = !by_rank || cp_process_rank(p) == s->rank;
        any_rank = any_rank || rank_ok;
        s->keep_process[i] = rank_ok && (!by_pid || p->pid == s->number);
        any = any || s->keep_process[i];
    }
    if (by_rank && !any_rank) {
        char ranks[128];
        list_ranks(meta, ranks, sizeof ranks);
        return fail_why(CP_ENOENT, why, whylen, "no rank %d in the trace (ranks: %s)",
                        (int)s->rank, ranks);
    }
    if (!any && by_rank)
        return fail_why(CP_ENOENT, why, whylen, "no process %u in rank %d", s->number,
                        (int)s->rank);
    if (!any)
        return fail_why(CP_ENOENT, why, whylen, "no process %u in the trace", s->number);
    return 0;
}

static bool kept(const cp_scope *s, uint32_t p)
{
    return !s->keep_process || (p < s->nprocesses && s->keep_process[p]);
}

int cp_scope_ready(cp_scope *s, const cp_trace *meta, char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    int rc = keep_processes(s, meta, why, whylen);
    if (rc < 0)
        return rc;
    char in_rank[32] = "";
    if (s->rank >= 0)
        snprintf(in_rank, sizeof in_rank, " of rank %d", (int)s->rank);
    if (s->kind == SCOPE_RANGE) {
        /* rank(N): the rank's own ranges only (its processes' clock and
         * steps, not another rank's). */
        size_t k = 0;
        for (size_t i = 0; i < s->nu; i++)
            if (kept(s, s->u[i].process))
                s->u[k++] = s->u[i];
        s->nu = k;
        if (!s->found || (s->rank >= 0 && k == 0))
            return fail_why(CP_ENOENT, why, whylen, "no range named '%s' in the trace%s",
                            s->name, in_rank);
        /* The ranges' union, as sorted disjoint intervals. */
        if (s->nu > 1)
            qsort(s->u, s->nu, sizeof *s->u, interval_cmp);
        size_t m = 0;
        for (size_t i = 0; i < s->nu; i++) {
            if (m > 0 && s->u[i].start <= s->u[m - 1].end) {
                if (s->u[i].end > s->u[m - 1].end)
                    s->u[m - 1].end = s->u[i].end;
            } else {
                s->u[m++] = s->u[i];
            }
        }
        s->nu = m;
    } else if (s->kind == SCOPE_DEVICE) {
        bool found = s->found;
        if (s->rank >= 0) {
            found = false;
            for (size_t i = 0; i < s->ndevice_in && !found; i++)
                found = s->device_in[i] && kept(s, (uint32_t)i);
        }
        if (!found)
            return fail_why(CP_ENOENT, why, whylen, "no device %u in the trace%s", s->number,
                            in_rank);
    }
    s->ready = true;
    return 0;
}

int cp_scope_emit(const cp_scope *s, const cp_activity *a, cp_activity_fn fn, void *ctx)
{
    if (!s->ready)
        return cp_failf(CP_EINVAL, "a scope handed records before cp_scope_ready");
    bool device_work = cp_activity_is_device_work(a);
    if (!kept(s, a->process))
        return 0;
    if (s->kind == SCOPE_RANGE && device_work)
        return emit_clipped(a, s->u, s->nu, fn, ctx);
    if (s->kind == SCOPE_DEVICE && device_work && a->device != s->number)
        return 0;
    return fn(ctx, a);
}

void cp_scope_free(cp_scope *s)
{
    if (!s)
        return;
    free(s->name);
    free(s->u);
    free(s->device_in);
    free(s->keep_process);
    free(s);
}

static int add_to_trace(void *ctx, const cp_activity *a)
{
    return cp_trace_add(ctx, a);
}

int cp_trace_scope(const cp_trace *in, const char *scope, const char *arg, cp_trace *out,
                   char *why, size_t whylen)
{
    return cp_trace_scope_rank(in, -1, scope, arg, out, why, whylen);
}

int cp_trace_scope_rank(const cp_trace *in, int32_t rank, const char *scope, const char *arg,
                        cp_trace *out, char *why, size_t whylen)
{
    cp_scope *s = NULL;
    cp_trace_init(out);
    int rc = cp_scope_new(&s, scope, arg, why, whylen);
    if (rc == 0)
        rc = cp_scope_set_rank(s, rank);
    for (size_t i = 0; rc == 0 && i < in->n; i++)
        if (cp_scope_learn(s, &in->items[i]) < 0)
            rc = fail_why(CP_ENOMEM, why, whylen, "out of memory scoping range '%s'",
                          arg ? arg : "");
    if (rc == 0)
        rc = cp_scope_ready(s, in, why, whylen);
    if (rc == 0 && copy_context(in, out) < 0)
        rc = fail_why(CP_ENOMEM, why, whylen, "out of memory scoping the trace");
    for (size_t i = 0; rc == 0 && i < in->n; i++)
        if (cp_scope_emit(s, &in->items[i], add_to_trace, out) < 0)
            rc = fail_why(CP_ENOMEM, why, whylen, "out of memory scoping the trace");
    if (rc < 0)
        cp_trace_free(out);
    cp_scope_free(s);
    return rc;
}

/* Where a scope lies, as the messages say it: "inside range 'step'". */
static void describe_scope(const cp_expectation *e, int32_t rank, char *out, size_t len)
{
    char of_rank[32] = "";
    if (rank >= 0)
        snprintf(of_rank, sizeof of_rank, "%s rank %d", e->scope[0] ? " of" : "in", (int)rank);
    if (!e->scope[0])
        snprintf(out, len, "%s", rank >= 0 ? of_rank : "in the trace");
    else if (strcmp(e->scope, "range") == 0)
        snprintf(out, len, "inside range '%s'%s", e->scope_arg, of_rank);
    else if (strcmp(e->scope, "process") == 0)
        snprintf(out, len, "in process %s%s", e->scope_arg, of_rank);
    else
        snprintf(out, len, "on device %s%s", e->scope_arg, of_rank);
}

/* One rank's answer to an 'every rank' expectation. */
typedef struct rank_answer {
    int32_t rank;
    bool ok;
    bool has_value; /* a metric was measured (not a finding, not a missing scope) */
    double value;
    char measured[160];
} rank_answer;

/* cp_expect_eval, keeping the metric's value for 'every rank'. */
static bool eval_metrics(const cp_expectation *e, const cp_metrics *m, rank_answer *r,
                         char *measured, size_t len)
{
    const cp_metric_def *d = e->kind == CP_EXPECT_COMPARE ? cp_metric_find(e->name) : NULL;
    if (r && d && !cp_metric_unmeasured(m, e->name)) {
        r->has_value = true;
        r->value = cp_metric_value(m, d);
    }
    return cp_expect_eval(e, m, measured, len);
}

/* Whether answer `a` is worse than `b`: a failure is worse than a pass, a
 * failure with nothing measured (a missing range, no work) worse than a
 * measured one, then the farther from holding; the first rank on a tie. */
static bool worse(const cp_expectation *e, const rank_answer *a, const rank_answer *b)
{
    if (a->ok != b->ok)
        return !a->ok;
    if (a->has_value != b->has_value)
        return !a->has_value;
    if (!a->has_value || e->kind != CP_EXPECT_COMPARE)
        return false;
    return cp_expect_badness(a->value, e->op, e->value) >
           cp_expect_badness(b->value, e->op, e->value);
}

/* The verdict of 'every rank' from each rank's answer: it holds when all
 * hold; `measured` names the worst rank and every rank's figure, e.g.
 * "worst rank 1: 0.31 ratio; ranks 0..3: 0.62, 0.31, 0.7, 0.66". */
static bool combine_ranks(const cp_expectation *e, const rank_answer *r, size_t n, char *measured,
                          size_t len)
{
    size_t w = 0;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        ok = ok && r[i].ok;
        if (worse(e, &r[i], &r[w]))
            w = i;
    }
    bool contiguous = true;
    for (size_t i = 1; i < n; i++)
        contiguous = contiguous && r[i].rank == r[i - 1].rank + 1;
    int used = snprintf(measured, len, "worst rank %d: %s; ", (int)r[w].rank, r[w].measured);
    size_t u = used > 0 ? (size_t)used : 0;
    if (n > 1 && contiguous)
        used = snprintf(measured + (u < len ? u : len), u < len ? len - u : 0, "ranks %d..%d: ",
                        (int)r[0].rank, (int)r[n - 1].rank);
    else
        used = snprintf(measured + (u < len ? u : len), u < len ? len - u : 0, "rank%s ",
                        n > 1 ? "s" : "");
    u += used > 0 ? (size_t)used : 0;
    for (size_t i = 0; i < n && u < len; i++) {
        char one[64];
        if (r[i].has_value)
            snprintf(one, sizeof one, "%.6g", r[i].value);
        else if (e->kind != CP_EXPECT_COMPARE && r[i].ok == (e->kind == CP_EXPECT_FINDING))
            snprintf(one, sizeof one, "raised");
        else if (e->kind != CP_EXPECT_COMPARE && strncmp(r[i].measured, "no ", 3) != 0)
            snprintf(one, sizeof one, "not raised");
        else
            snprintf(one, sizeof one, "none");
        if (n > 1 && !contiguous)
            used = snprintf(measured + u, len - u, "%s%d: %s", i ? ", " : "", (int)r[i].rank, one);
        else
            used = snprintf(measured + u, len - u, "%s%s", i ? ", " : "", one);
        u += used > 0 ? (size_t)used : 0;
    }
    return ok;
}

/* 'rank spread': the largest minus the smallest of the metric over the
 * ranks, compared; a rank with nothing measured fails it, named. The
 * measured text: "spread 0.725 (72.5%) (largest rank 0: 1, smallest rank
 * 1: 0.275); ranks 0..1: 1, 0.275". */
static bool combine_spread(const cp_expectation *e, const rank_answer *r, size_t n,
                           char *measured, size_t len)
{
    size_t hi = 0, lo = 0;
    for (size_t i = 0; i < n; i++) {
        if (!r[i].has_value) {
            snprintf(measured, len, "rank %d: %s", (int)r[i].rank, r[i].measured);
            return false;
        }
        if (r[i].value > r[hi].value)
            hi = i;
        if (r[i].value < r[lo].value)
            lo = i;
    }
    const cp_metric_def *d = cp_metric_find(e->name);
    double spread = r[hi].value - r[lo].value;
    char shown[64];
    cp_metric_format(d, spread, shown, sizeof shown);
    int used = snprintf(measured, len,
                        "spread %s (largest rank %d: %.6g, smallest rank %d: %.6g); ", shown,
                        (int)r[hi].rank, r[hi].value, (int)r[lo].rank, r[lo].value);
    size_t u = used > 0 ? (size_t)used : 0;
    bool contiguous = true;
    for (size_t i = 1; i < n; i++)
        contiguous = contiguous && r[i].rank == r[i - 1].rank + 1;
    for (size_t i = 0; i < n && u < len; i++) {
        if (i == 0 && n > 1 && contiguous)
            used = snprintf(measured + u, len - u, "ranks %d..%d: %.6g", (int)r[0].rank,
                            (int)r[n - 1].rank, r[0].value);
        else if (contiguous && n > 1)
            used = snprintf(measured + u, len - u, ", %.6g", r[i].value);
        else
            used = snprintf(measured + u, len - u, "%s%d: %.6g", i ? ", " : "ranks ",
                            (int)r[i].rank, r[i].value);
        u += used > 0 ? (size_t)used : 0;
    }
    return cp_expect_compare(spread, e->op, e->value);
}

/* 'every rank' needs ranks; the reason when the trace has none. */
static void no_ranks(const cp_expectation *e, char *measured, size_t len)
{
    snprintf(measured, len, "no rank recorded in the trace: '%s' needs processes launched with "
                            "RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK",
             e->spread_ranks ? "rank spread" : "every rank");
}

/* cp_expect_eval_trace on rank `rank` (-1: every process), keeping the
 * metric's value in *r when r is not NULL. */
static int eval_scoped(const cp_expectation *e, const cp_trace *t, const cp_timeline_opts *opts,
                       int32_t rank, bool *ok, rank_answer *r, char *measured, size_t len)
{
    int rc = 0;
    cp_trace scoped;
    cp_trace_init(&scoped);
    const cp_trace *use = t;
    *ok = false;
    bool collective = is_collective(e);
    if (!collective && (e->scope[0] || e->scope_arg || rank >= 0)) {
        char why[256];
        rc = cp_trace_scope_rank(t, rank, e->scope, e->scope_arg, &scoped, why, sizeof why);
        if (rc == CP_ENOENT) {
            snprintf(measured, len, "%s", why);
            rc = 0;
            goto out;
        }
        if (rc < 0)
            goto out;
        use = &scoped;
    }
    size_t work = 0;
    for (size_t i = 0; i < use->n; i++)
        work += cp_activity_is_device_work(&use->items[i]);
    if (work == 0) {
        char where[192];
        describe_scope(e, rank, where, sizeof where);
        snprintf(measured, len, "no kernels, copies or memsets %s", where);
        goto out;
    }
    cp_metrics m;
    if (cp_timeline_analyse(use, opts, &m) < 0) {
        rc = cp_failf(CP_ENOMEM, "out of memory analysing the trace for '%s'", e->text);
        goto out;
    }
    *ok = collective ? eval_collective(e, &m, measured, len) : eval_metrics(e, &m, r, measured, len);
    cp_metrics_free(&m);
out:
    cp_trace_free(&scoped);
    return rc;
}

int cp_expect_eval_trace(const cp_expectation *e, const cp_trace *t, const cp_timeline_opts *opts,
                         bool *ok, char *measured, size_t len)
{
    if (e->per_step)
        return cp_step_eval_trace(e, t, opts, ok, measured, len);
    if (!e->every_rank)
        return eval_scoped(e, t, opts, e->has_rank ? e->rank : -1, ok, NULL, measured, len);
    *ok = false;
    int32_t *ranks = NULL;
    long n = cp_trace_ranks(t, &ranks);
    if (n < 0)
        return (int)n;
    if (n == 0) {
        no_ranks(e, measured, len);
        return 0;
    }
    rank_answer *r = calloc((size_t)n, sizeof *r);
    if (!r) {
        free(ranks);
        return cp_failf(CP_ENOMEM, "out of memory evaluating '%s' on every rank", e->text);
    }
    int rc = 0;
    for (long i = 0; rc == 0 && i < n; i++) {
        r[i].rank = ranks[i];
        rc = eval_scoped(e, t, opts, ranks[i], &r[i].ok, &r[i], r[i].measured,
                         sizeof r[i].measured);
    }
    if (rc == 0)
        *ok = e->spread_ranks ? combine_spread(e, r, (size_t)n, measured, len)
                              : combine_ranks(e, r, (size_t)n, measured, len);
    free(r);
    free(ranks);
    return rc;
}

/* One scope's part of the records and the streaming analysis of it. */
typedef struct part {
    int32_t rank;      /* -1 unless 'every rank' */
    cp_scope *scope;   /* NULL without one: the whole trace's metrics answer */
    cp_stream *stream; /* what the scope hands on */
    uint64_t work;     /* kernels, copies and memsets the scope handed on */
    char missing[256]; /* why the scope names nothing (its range, process, device or rank is absent) */
} part;

/* One expectation over records that come one at a time
 * (cuproof/expect.h): its scope, and the streaming analysis of what the
 * scope hands on; for 'every rank', one part per rank, made when the
 * processes are known (cp_expect_stream_ready) from what the first pass
 * learnt for every process. */
struct cp_expect_stream {
    const cp_expectation *e;
    bool has_opts;
    cp_stream_opts opts;
    part one;         /* the expectation's scope; 'every rank': the scope that learns */
    part *ranks;      /* 'every rank': a part per rank of the trace */
    size_t nranks;
    bool no_ranks;    /* 'every rank' on a trace of no rank */
    /* device(N) of no rank: what it hands on is known from each record
     * alone (its device; every process kept), so it is fed on the first
     * pass as it learns, and needs no second (cp_expect_stream_one_pass). */
    bool one_pass;
    bool collective; /* collective(OP): answered by the whole's per-collective table */
    /* 'per step': the step range's windows, learnt on the first pass; the
     * whole trace, on the second, through one.stream measuring them. */
    bool per_step;
    cp_step_windows steps;
    const cp_collective_arrival *arrivals; /* the ranks', for the straggler per step */
    size_t narrivals;
};

int cp_expect_stream_new(cp_expect_stream **out, const cp_expectation *e,
                         const cp_stream_opts *opts)
{
    *out = NULL;
    cp_expect_stream *x = calloc(1, sizeof *x);
    if (!x)
        return cp_failf(CP_ENOMEM, "out of memory for '%s'", e->text);
    x->e = e;
    x->one.rank = -1;
    if (opts) {
        x->has_opts = true;
        x->opts = *opts;
    }
    int rc = 0;
    x->collective = is_collective(e);
    if (e->per_step) {
        x->per_step = true;
        if ((rc = cp_step_windows_init(&x->steps, e->step_range)) < 0) {
            cp_expect_stream_free(x);
            return rc;
        }
        *out = x;
        return 0;
    }
    if (!x->collective && (e->scope[0] || e->scope_arg || e->has_rank || e->every_rank)) {
        rc = cp_scope_new(&x->one.scope, e->scope, e->scope_arg, NULL, 0);
        if (rc == 0 && e->has_rank)
            rc = cp_scope_set_rank(x->one.scope, e->rank);
        if (rc == 0 && !e->every_rank)
            rc = cp_stream_new(&x->one.stream, opts);
        x->one_pass = rc == 0 && x->one.scope->kind == SCOPE_DEVICE && !e->has_rank &&
                      !e->every_rank;
    }
    if (rc < 0) {
        cp_expect_stream_free(x);
        return rc;
    }
    *out = x;
    return 0;
}

static int to_part(void *ctx, const cp_activity *a);

int cp_expect_stream_learn(cp_expect_stream *x, const cp_activity *a)
{
    if (x->per_step)
        return cp_step_windows_learn(&x->steps, a);
    if (!x->one.scope)
        return 0;
    int rc = cp_scope_learn(x->one.scope, a);
    /* cp_scope_emit's rule for a device scope that keeps every process. */
    if (rc == 0 && x->one_pass &&
        !(cp_activity_is_device_work(a) && a->device != x->one.scope->number))
        rc = to_part(&x->one, a);
    return rc;
}

bool cp_expect_stream_one_pass(const cp_expect_stream *x)
{
    if (x->per_step)
        return false;
    return !x->one.scope || x->one_pass;
}

/* A copy of scope `s` as it learnt (not yet ready), for rank `rank`. */
static int clone_for_rank(const cp_scope *s, int32_t rank, cp_scope **out)
{
    *out = NULL;
    cp_scope *c = calloc(1, sizeof *c);
    if (!c)
        return cp_failf(CP_ENOMEM, "out of memory scoping rank %d", (int)rank);
    c->kind = s->kind;
    c->number = s->number;
    c->found = s->found;
    c->rank = rank;
    bool ok = !s->name || (c->name = strdup(s->name));
    if (ok && s->nu) {
        ok = (c->u = malloc(s->nu * sizeof *c->u)) != NULL;
        if (ok) {
            memcpy(c->u, s->u, s->nu * sizeof *c->u);
            c->nu = c->cap = s->nu;
        }
    }
    if (ok && s->ndevice_in) {
        ok = (c->device_in = malloc(s->ndevice_in * sizeof *c->device_in)) != NULL;
        if (ok) {
            memcpy(c->device_in, s->device_in, s->ndevice_in * sizeof *c->device_in);
            c->ndevice_in = s->ndevice_in;
        }
    }
    if (!ok) {
        cp_scope_free(c);
        return cp_failf(CP_ENOMEM, "out of memory scoping rank %d", (int)rank);
    }
    *out = c;
    return 0;
}

/* Readies part `p` for the second pass; a missing scope is a verdict. */
static int ready_part(part *p, const cp_trace *meta)
{
    if (meta->has_legacy_stream)
        cp_stream_set_legacy(p->stream, meta->legacy_device, meta->legacy_context,
                             meta->legacy_stream);
    int rc = cp_scope_ready(p->scope, meta, p->missing, sizeof p->missing);
    return rc == CP_ENOENT ? 0 : rc;
}

int cp_expect_stream_ready(cp_expect_stream *x, const cp_trace *meta)
{
    if (x->per_step) {
        /* The windows, numbered, are what the second pass's analysis
         * measures the whole trace over. */
        cp_step_windows_finish(&x->steps);
        cp_stream_opts o = x->has_opts ? x->opts : (cp_stream_opts){0};
        o.timeline.steps = x->steps.w;
        o.timeline.nsteps = x->steps.n;
        int rc = cp_stream_new(&x->one.stream, &o);
        if (rc == 0 && meta->has_legacy_stream)
            cp_stream_set_legacy(x->one.stream, meta->legacy_device, meta->legacy_context,
                                 meta->legacy_stream);
        return rc;
    }
    if (!x->one.scope)
        return 0;
    if (!x->e->every_rank)
        return ready_part(&x->one, meta);
    int32_t *ranks = NULL;
    long n = cp_trace_ranks(meta, &ranks);
    if (n < 0)
        return (int)n;
    x->no_ranks = n == 0;
    if (n > 0 && !(x->ranks = calloc((size_t)n, sizeof *x->ranks))) {
        free(ranks);
        return cp_failf(CP_ENOMEM, "out of memory evaluating '%s' on every rank", x->e->text);
    }
    /* Each rank's analysis sorts its own chunk: the ranks share what one
     * analysis would hold (at least 64 Ki records each). */
    cp_stream_opts o = x->has_opts ? x->opts : (cp_stream_opts){0};
    size_t chunk = o.chunk_records ? o.chunk_records : (size_t)1 << 21;
    o.chunk_records = chunk / (size_t)(n ? n : 1);
    if (o.chunk_records < ((size_t)1 << 16))
        o.chunk_records = (size_t)1 << 16;
    int rc = 0;
    for (long i = 0; rc == 0 && i < n; i++) {
        part *p = &x->ranks[i];
        x->nranks++;
        p->rank = ranks[i];
        rc = clone_for_rank(x->one.scope, ranks[i], &p->scope);
        if (rc == 0)
            rc = cp_stream_new(&p->stream, &o);
        if (rc == 0)
            rc = ready_part(p, meta);
    }
    free(ranks);
    return rc;
}

static int to_part(void *ctx, const cp_activity *a)
{
    part *p = ctx;
    p->work += cp_activity_is_device_work(a);
    return cp_stream_add(p->stream, a);
}

static int add_part(part *p, const cp_activity *a)
{
    if (!p->scope || !p->stream || p->missing[0])
        return 0;
    return cp_scope_emit(p->scope, a, to_part, p);
}

int cp_expect_stream_add(cp_expect_stream *x, const cp_activity *a)
{
    if (x->per_step)
        return x->one.stream ? cp_stream_add(x->one.stream, a) : 0;
    if (x->one_pass)
        return 0; /* fed as it learnt */
    if (!x->e->every_rank)
        return add_part(&x->one, a);
    for (size_t i = 0; i < x->nranks; i++) {
        int rc = add_part(&x->ranks[i], a);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The verdict of part `p` (its metrics, or why there are none). */
static int finish_part(const cp_expect_stream *x, part *p, const cp_metrics *whole, bool *ok,
                       rank_answer *r, char *measured, size_t len)
{
    *ok = false;
    if (p->missing[0]) {
        snprintf(measured, len, "%s", p->missing);
        return 0;
    }
    uint64_t work = p->scope ? p->work : (uint64_t)whole->kernels + whole->copies + whole->memsets;
    if (work == 0) {
        char where[192];
        describe_scope(x->e, p->rank >= 0 ? p->rank : x->e->has_rank ? x->e->rank : -1, where,
                       sizeof where);
        snprintf(measured, len, "no kernels, copies or memsets %s", where);
        return 0;
    }
    if (!p->scope) {
        *ok = x->collective ? eval_collective(x->e, whole, measured, len)
                            : eval_metrics(x->e, whole, r, measured, len);
        return 0;
    }
    cp_metrics m;
    int rc = cp_stream_finish(p->stream, &m);
    if (rc < 0)
        return rc;
    *ok = eval_metrics(x->e, &m, r, measured, len);
    cp_metrics_free(&m);
    return 0;
}

int cp_expect_stream_metrics(cp_expect_stream *x, cp_metrics *out, char *why, size_t len)
{
    memset(out, 0, sizeof *out);
    why[0] = '\0';
    part *p = &x->one;
    if (x->e->every_rank || !p->scope || !p->stream)
        return cp_failf(CP_EINVAL, "'%s': the metrics of one scope, not of every rank or none",
                        x->e->text);
    if (p->missing[0]) {
        snprintf(why, len, "%s", p->missing);
        return 0;
    }
    if (p->work == 0) {
        char where[192];
        describe_scope(x->e, x->e->has_rank ? x->e->rank : -1, where, sizeof where);
        snprintf(why, len, "no kernels, copies or memsets %s", where);
        return 0;
    }
    return cp_stream_finish(p->stream, out);
}

/* A 'per step' expectation's rows, from the second pass's analysis. */
static long step_rows(cp_expect_stream *x, cp_step_row **rows)
{
    *rows = NULL;
    cp_metrics m;
    int rc = x->one.stream ? cp_stream_finish(x->one.stream, &m)
                           : cp_failf(CP_EINVAL, "'%s': judged before its second pass", x->e->text);
    if (rc < 0)
        return rc;
    long n = cp_step_rows(&x->steps, m.step_parts, rows);
    cp_metrics_free(&m);
    if (n > 0) {
        int put = cp_step_rows_put_arrivals(*rows, (size_t)n, &x->steps, x->arrivals,
                                            x->narrivals);
        if (put < 0) {
            free(*rows);
            *rows = NULL;
            return put;
        }
    }
    return n;
}

void cp_expect_stream_set_arrivals(cp_expect_stream *x, const cp_collective_arrival *a, size_t na)
{
    x->arrivals = a;
    x->narrivals = na;
}

static int finish_steps(cp_expect_stream *x, bool *ok, char *measured, size_t len)
{
    cp_step_row *rows;
    long n = step_rows(x, &rows);
    if (n < 0)
        return (int)n;
    *ok = cp_step_judge(x->e, &x->steps, rows, (size_t)n, measured, len);
    free(rows);
    return 0;
}

int cp_expect_stream_steps(cp_expect_stream *x, cp_step_row **rows, size_t *n, char *why,
                           size_t len)
{
    *rows = NULL;
    *n = 0;
    why[0] = '\0';
    if (!x->per_step)
        return cp_failf(CP_EINVAL, "'%s' is no 'per step' expectation", x->e->text);
    long k = step_rows(x, rows);
    if (k < 0)
        return (int)k;
    *n = (size_t)k;
    if (k == 0)
        snprintf(why, len, "no range named '%s' in the trace: no steps", x->steps.range);
    return 0;
}

int cp_expect_stream_finish(cp_expect_stream *x, const cp_metrics *whole, bool *ok, char *measured,
                            size_t len)
{
    *ok = false;
    if (x->per_step)
        return finish_steps(x, ok, measured, len);
    if (!x->e->every_rank)
        return finish_part(x, &x->one, whole, ok, NULL, measured, len);
    if (x->no_ranks || x->nranks == 0) {
        no_ranks(x->e, measured, len);
        return 0;
    }
    rank_answer *r = calloc(x->nranks, sizeof *r);
    if (!r)
        return cp_failf(CP_ENOMEM, "out of memory evaluating '%s' on every rank", x->e->text);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < x->nranks; i++) {
        r[i].rank = x->ranks[i].rank;
        rc = finish_part(x, &x->ranks[i], whole, &r[i].ok, &r[i], r[i].measured,
                         sizeof r[i].measured);
    }
    if (rc == 0)
        *ok = x->e->spread_ranks ? combine_spread(x->e, r, x->nranks, measured, len)
                                 : combine_ranks(x->e, r, x->nranks, measured, len);
    free(r);
    return rc;
}

void cp_expect_stream_free(cp_expect_stream *x)
{
    if (!x)
        return;
    cp_scope_free(x->one.scope);
    cp_stream_free(x->one.stream);
    for (size_t i = 0; i < x->nranks; i++) {
        cp_scope_free(x->ranks[i].scope);
        cp_stream_free(x->ranks[i].stream);
    }
    free(x->ranks);
    cp_step_windows_free(&x->steps);
    free(x);
}

/* The error of a line whose metric is not one of its scope's own table
 * (collective(OP)'s, per step's): the names that are, and the nearest. */
static int not_its_metric(const cp_expectation *e, const char *what, const cp_metric_def *defs,
                          size_t n)
{
    char names[400];
    cp_list_names(defs, n, sizeof *defs, names, sizeof names);
    const char *near =
        e->kind == CP_EXPECT_COMPARE ? cp_nearest_name(e->name, defs, n, sizeof *defs) : NULL;
    return cp_failf(CP_EINVAL, "line %d, column %d: %s measures %s, not '%s'%s%s%s", e->line,
                    e->name_column, what, names, e->name, near ? " (did you mean '" : "",
                    near ? near : "", near ? "'?)" : "");
}

int cp_expect_validate_program(const cp_expect_list *list)
{
    cp_errors bad = {0};
    for (size_t i = 0; i < list->n; i++) {
        const cp_expectation *e = &list->items[i];
        scope_kind kind;
        uint32_t number;
        char why[256];
        if (e->per_step) {
            /* The per-step table's metrics, each step judged whole. */
            if (e->kind != CP_EXPECT_COMPARE || !cp_step_metric_find(e->name)) {
                size_t n = 0;
                const cp_metric_def *defs = cp_step_metric_defs(&n);
                cp_errors_add(&bad, not_its_metric(e, "per step", defs, n));
            }
            continue;
        }
        if (scope_kind_of(e->scope, e->scope_arg, &kind, &number, why, sizeof why) < 0) {
            cp_errors_add(&bad, cp_failf(CP_EINVAL, "line %d, column %d: %s", e->line,
                                         e->scope_column, why));
            continue;
        }
        int rc = 0;
        if (kind == SCOPE_COLLECTIVE) {
            /* Its own metrics, of the whole program's table. */
            size_t n = 0;
            const cp_metric_def *defs = cp_collective_metric_defs(&n);
            if (e->has_rank || e->every_rank)
                rc = cp_failf(CP_EINVAL,
                              "line %d, column %d: collective(%s) is the whole program's table; "
                              "it takes no rank",
                              e->line, e->scope_column, e->scope_arg);
            else if (e->kind != CP_EXPECT_COMPARE || !cp_collective_metric_find(e->name)) {
                char what[160];
                snprintf(what, sizeof what, "collective(%s)", e->scope_arg);
                rc = not_its_metric(e, what, defs, n);
            }
            if (rc < 0)
                cp_errors_add(&bad, rc);
            continue;
        }
        if (cp_metric_is_program_wide(e->name) &&
            (e->scope[0] || e->scope_arg || e->has_rank || e->every_rank))
            rc = cp_failf(CP_EINVAL,
                          "line %d, column %d: '%s' is measured across the ranks of the whole "
                          "program; it takes no scope",
                          e->line, e->name_column, e->name);
        else if (e->spread_ranks && e->kind != CP_EXPECT_COMPARE)
            rc = cp_failf(CP_EINVAL, "line %d, column %d: 'rank spread' compares a metric's "
                                     "spread over the ranks; a finding has none",
                          e->line, e->name_column);
        /* The metric or finding, checked as a case's are. */
        if (rc == 0)
            rc = cp_expect_validate_name(e);
        if (rc < 0)
            cp_errors_add(&bad, rc);
    }
    return cp_errors_finish(&bad);
}

bool cp_expect_crosses_hosts(const cp_expectation *e)
{
    bool one_rank = e->has_rank || e->every_rank || e->spread_ranks;
    bool one_process = e->scope_arg && strcmp(e->scope, "process") == 0;
    /* A step's figures are each process's own, measured on its clock over
     * its own window, and only summed: no time of one host meets
     * another's. */
    return !one_rank && !one_process && !e->per_step;
}
