/* The scopes of a traced program (range, process, device): the part of a
 * trace each names, and expectations evaluated on that part. */
#include <cuproof/expect.h>

#include <cuproof/error.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char scope_list[] = "range(NAME), process(PID), device(N)";

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

/* A decimal integer below 2^32, digits only. */
static bool parse_u32(const char *s, uint32_t *out)
{
    uint64_t v = 0;
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 10 || s[n] != '\0')
        return false;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    if (v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* A record's end, a reversed one taken as empty (as the analysis does). */
static uint64_t end_of(const cp_activity *a)
{
    return a->end < a->start ? a->start : a->end;
}

/* What a trace holds beside its records, so that the scoped copy means the
 * same: processes, counts and the legacy default stream. */
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
    return 0;
}

typedef struct interval {
    uint64_t start, end;
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

typedef enum { SCOPE_ALL, SCOPE_RANGE, SCOPE_PROCESS, SCOPE_DEVICE } scope_kind;

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
    bool process = strcmp(scope, "process") == 0;
    if (process || strcmp(scope, "device") == 0) {
        *kind = process ? SCOPE_PROCESS : SCOPE_DEVICE;
        if (!parse_u32(arg, number))
            return fail_why(CP_EINVAL, why, whylen, "%s(%s): the %s must be a decimal integer",
                            scope, arg, process ? "pid" : "device");
        return 0;
    }
    return fail_why(CP_EINVAL, why, whylen, "unknown scope '%s(%s)' (scopes: %s)", scope, arg,
                    scope_list);
}

/* A scope over records that come one at a time (cuproof/expect.h). */
struct cp_scope {
    scope_kind kind;
    uint32_t number; /* the pid or the device */
    char *name;      /* the range's */
    interval *u;     /* range: the ranges seen, then their union */
    size_t nu, cap;
    bool found; /* range: one had the name; device: work ran on it */
    bool *keep_process;
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
    *out = s;
    return 0;
}

int cp_scope_learn(cp_scope *s, const cp_activity *a)
{
    if (s->kind == SCOPE_DEVICE) {
        s->found = s->found || (cp_activity_is_device_work(a) && a->device == s->number);
        return 0;
    }
    if (s->kind != SCOPE_RANGE || a->kind != CP_ACT_RANGE || !a->name ||
        strcmp(a->name, s->name) != 0)
        return 0;
    s->found = true;
    if (end_of(a) <= a->start)
        return 0; /* a range of length zero adds nothing */
    if (s->nu == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        interval *u = realloc(s->u, cap * sizeof *u);
        if (!u)
            return cp_failf(CP_ENOMEM, "out of memory scoping range '%s'", s->name);
        s->u = u;
        s->cap = cap;
    }
    s->u[s->nu++] = (interval){a->start, end_of(a)};
    return 0;
}

int cp_scope_ready(cp_scope *s, const cp_trace *meta, char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    if (s->kind == SCOPE_RANGE) {
        if (!s->found)
            return fail_why(CP_ENOENT, why, whylen, "no range named '%s' in the trace", s->name);
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
    } else if (s->kind == SCOPE_PROCESS) {
        bool any = false;
        free(s->keep_process);
        s->nprocesses = meta->nprocesses;
        s->keep_process = calloc(meta->nprocesses ? meta->nprocesses : 1, sizeof *s->keep_process);
        if (!s->keep_process)
            return fail_why(CP_ENOMEM, why, whylen, "out of memory scoping process %u", s->number);
        for (size_t i = 0; i < meta->nprocesses; i++) {
            s->keep_process[i] = meta->processes[i].pid == s->number;
            any = any || s->keep_process[i];
        }
        if (!any)
            return fail_why(CP_ENOENT, why, whylen, "no process %u in the trace", s->number);
    } else if (s->kind == SCOPE_DEVICE && !s->found) {
        return fail_why(CP_ENOENT, why, whylen, "no device %u in the trace", s->number);
    }
    s->ready = true;
    return 0;
}

int cp_scope_emit(const cp_scope *s, const cp_activity *a, cp_activity_fn fn, void *ctx)
{
    if (!s->ready)
        return cp_failf(CP_EINVAL, "a scope handed records before cp_scope_ready");
    bool device_work = cp_activity_is_device_work(a);
    if (s->kind == SCOPE_RANGE && device_work)
        return emit_clipped(a, s->u, s->nu, fn, ctx);
    if (s->kind == SCOPE_PROCESS && (a->process >= s->nprocesses || !s->keep_process[a->process]))
        return 0;
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
    cp_scope *s = NULL;
    cp_trace_init(out);
    int rc = cp_scope_new(&s, scope, arg, why, whylen);
    for (size_t i = 0; rc == 0 && i < in->n; i++)
        if (cp_scope_learn(s, &in->items[i]) < 0)
            rc = fail_why(CP_ENOMEM, why, whylen, "out of memory scoping range '%s'", arg);
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
static void describe_scope(const cp_expectation *e, char *out, size_t len)
{
    if (!e->scope[0])
        snprintf(out, len, "in the trace");
    else if (strcmp(e->scope, "range") == 0)
        snprintf(out, len, "inside range '%s'", e->scope_arg);
    else if (strcmp(e->scope, "process") == 0)
        snprintf(out, len, "in process %s", e->scope_arg);
    else
        snprintf(out, len, "on device %s", e->scope_arg);
}

int cp_expect_eval_trace(const cp_expectation *e, const cp_trace *t, const cp_timeline_opts *opts,
                         bool *ok, char *measured, size_t len)
{
    int rc = 0;
    cp_trace scoped;
    cp_trace_init(&scoped);
    const cp_trace *use = t;
    *ok = false;
    if (e->scope[0] || e->scope_arg) {
        char why[256];
        rc = cp_trace_scope(t, e->scope, e->scope_arg, &scoped, why, sizeof why);
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
        describe_scope(e, where, sizeof where);
        snprintf(measured, len, "no kernels, copies or memsets %s", where);
        goto out;
    }
    cp_metrics m;
    if (cp_timeline_analyse(use, opts, &m) < 0) {
        rc = cp_failf(CP_ENOMEM, "out of memory analysing the trace for '%s'", e->text);
        goto out;
    }
    *ok = cp_expect_eval(e, &m, measured, len);
    cp_metrics_free(&m);
out:
    cp_trace_free(&scoped);
    return rc;
}

/* One expectation over records that come one at a time
 * (cuproof/expect.h): its scope, and the streaming analysis of what the
 * scope hands on. */
struct cp_expect_stream {
    const cp_expectation *e;
    cp_scope *scope;      /* NULL without one: the whole trace's metrics answer */
    cp_stream *stream;    /* what the scope hands on */
    uint64_t work;        /* kernels, copies and memsets the scope handed on */
    char missing[256];    /* why the scope names nothing (its range, process or device is absent) */
};

int cp_expect_stream_new(cp_expect_stream **out, const cp_expectation *e,
                         const cp_stream_opts *opts)
{
    *out = NULL;
    cp_expect_stream *x = calloc(1, sizeof *x);
    if (!x)
        return cp_failf(CP_ENOMEM, "out of memory for '%s'", e->text);
    x->e = e;
    int rc = 0;
    if (e->scope[0] || e->scope_arg) {
        rc = cp_scope_new(&x->scope, e->scope, e->scope_arg, NULL, 0);
        if (rc == 0)
            rc = cp_stream_new(&x->stream, opts);
    }
    if (rc < 0) {
        cp_expect_stream_free(x);
        return rc;
    }
    *out = x;
    return 0;
}

int cp_expect_stream_learn(cp_expect_stream *x, const cp_activity *a)
{
    return x->scope ? cp_scope_learn(x->scope, a) : 0;
}

int cp_expect_stream_ready(cp_expect_stream *x, const cp_trace *meta)
{
    if (!x->scope)
        return 0;
    if (meta->has_legacy_stream)
        cp_stream_set_legacy(x->stream, meta->legacy_device, meta->legacy_context,
                             meta->legacy_stream);
    int rc = cp_scope_ready(x->scope, meta, x->missing, sizeof x->missing);
    return rc == CP_ENOENT ? 0 : rc;
}

static int to_scoped_stream(void *ctx, const cp_activity *a)
{
    cp_expect_stream *x = ctx;
    x->work += cp_activity_is_device_work(a);
    return cp_stream_add(x->stream, a);
}

int cp_expect_stream_add(cp_expect_stream *x, const cp_activity *a)
{
    if (!x->scope || x->missing[0])
        return 0;
    return cp_scope_emit(x->scope, a, to_scoped_stream, x);
}

int cp_expect_stream_finish(cp_expect_stream *x, const cp_metrics *whole, bool *ok, char *measured,
                            size_t len)
{
    *ok = false;
    if (x->missing[0]) {
        snprintf(measured, len, "%s", x->missing);
        return 0;
    }
    uint64_t work = x->scope ? x->work : (uint64_t)whole->kernels + whole->copies + whole->memsets;
    if (work == 0) {
        char where[192];
        describe_scope(x->e, where, sizeof where);
        snprintf(measured, len, "no kernels, copies or memsets %s", where);
        return 0;
    }
    if (!x->scope) {
        *ok = cp_expect_eval(x->e, whole, measured, len);
        return 0;
    }
    cp_metrics m;
    int rc = cp_stream_finish(x->stream, &m);
    if (rc < 0)
        return rc;
    *ok = cp_expect_eval(x->e, &m, measured, len);
    cp_metrics_free(&m);
    return 0;
}

void cp_expect_stream_free(cp_expect_stream *x)
{
    if (!x)
        return;
    cp_scope_free(x->scope);
    cp_stream_free(x->stream);
    free(x);
}

int cp_expect_validate_program(const cp_expect_list *list)
{
    for (size_t i = 0; i < list->n; i++) {
        const cp_expectation *e = &list->items[i];
        scope_kind kind;
        uint32_t number;
        char why[256];
        if (scope_kind_of(e->scope, e->scope_arg, &kind, &number, why, sizeof why) < 0)
            return cp_failf(CP_EINVAL, "line %d, column %d: %s", e->line, e->scope_column, why);
        /* The metric or finding, checked as a case's are: the same
         * expectation without its scope. */
        cp_expectation bare = *e;
        bare.scope = "";
        bare.scope_arg = NULL;
        cp_expect_list one = {.items = &bare, .n = 1, .cap = 1};
        int rc = cp_expect_validate(&one, NULL, 0);
        if (rc < 0)
            return rc;
    }
    return 0;
}
