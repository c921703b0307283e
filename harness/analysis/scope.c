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

/* The union of the ranges called `name`, as sorted disjoint intervals
 * (ranges of length zero add nothing). *found says whether any range had
 * the name. */
static int range_union(const cp_trace *in, const char *name, interval **out, size_t *n,
                       bool *found)
{
    size_t count = 0;
    *found = false;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < in->n; i++) {
        const cp_activity *a = &in->items[i];
        if (a->kind == CP_ACT_RANGE && a->name && strcmp(a->name, name) == 0) {
            *found = true;
            count += end_of(a) > a->start;
        }
    }
    if (count == 0)
        return 0;
    interval *u = malloc(count * sizeof *u);
    if (!u)
        return CP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < in->n; i++) {
        const cp_activity *a = &in->items[i];
        if (a->kind == CP_ACT_RANGE && a->name && strcmp(a->name, name) == 0 &&
            end_of(a) > a->start)
            u[k++] = (interval){a->start, end_of(a)};
    }
    qsort(u, k, sizeof *u, interval_cmp);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m > 0 && u[i].start <= u[m - 1].end) {
            if (u[i].end > u[m - 1].end)
                u[m - 1].end = u[i].end;
        } else {
            u[m++] = u[i];
        }
    }
    *out = u;
    *n = m;
    return 0;
}

/* Adds the parts of device record `a` inside the union `u`: one record per
 * piece it overlaps (the later ones marked as pieces, so that the record is
 * counted once), or the record itself when it has length zero and lies
 * inside. */
static int add_clipped(cp_trace *out, const cp_activity *a, const interval *u, size_t n)
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
    if (s == e) {
        if (lo < n && u[lo].start <= s)
            return cp_trace_add(out, a);
        return 0;
    }
    for (size_t k = lo; k < n && u[k].start < e; k++) {
        cp_activity piece = *a;
        piece.start = s > u[k].start ? s : u[k].start;
        piece.end = e < u[k].end ? e : u[k].end;
        /* The first piece stands for the record; the others add time. */
        piece.piece = k > lo;
        if (cp_trace_add(out, &piece) < 0)
            return CP_ENOMEM;
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

int cp_trace_scope(const cp_trace *in, const char *scope, const char *arg, cp_trace *out,
                   char *why, size_t whylen)
{
    int rc = 0;
    interval *u = NULL;
    size_t nu = 0;
    bool *keep_process = NULL;
    scope_kind kind = SCOPE_ALL;
    uint32_t number = 0;
    cp_trace_init(out);
    if (why && whylen)
        why[0] = '\0';
    CP_TRY(scope_kind_of(scope ? scope : "", arg, &kind, &number, why, whylen));

    if (kind == SCOPE_RANGE) {
        bool found = false;
        if (range_union(in, arg, &u, &nu, &found) < 0) {
            rc = fail_why(CP_ENOMEM, why, whylen, "out of memory scoping range '%s'", arg);
            goto out;
        }
        if (!found) {
            rc = fail_why(CP_ENOENT, why, whylen, "no range named '%s' in the trace", arg);
            goto out;
        }
    } else if (kind == SCOPE_PROCESS) {
        bool any = false;
        keep_process = calloc(in->nprocesses ? in->nprocesses : 1, sizeof *keep_process);
        if (!keep_process) {
            rc = fail_why(CP_ENOMEM, why, whylen, "out of memory scoping process %u", number);
            goto out;
        }
        for (size_t i = 0; i < in->nprocesses; i++) {
            keep_process[i] = in->processes[i].pid == number;
            any = any || keep_process[i];
        }
        if (!any) {
            rc = fail_why(CP_ENOENT, why, whylen, "no process %u in the trace", number);
            goto out;
        }
    } else if (kind == SCOPE_DEVICE) {
        bool any = false;
        for (size_t i = 0; i < in->n && !any; i++)
            any = cp_activity_is_device_work(&in->items[i]) && in->items[i].device == number;
        if (!any) {
            rc = fail_why(CP_ENOENT, why, whylen, "no device %u in the trace", number);
            goto out;
        }
    }

    if (copy_context(in, out) < 0) {
        rc = fail_why(CP_ENOMEM, why, whylen, "out of memory scoping the trace");
        goto out;
    }
    for (size_t i = 0; i < in->n; i++) {
        const cp_activity *a = &in->items[i];
        bool device_work = cp_activity_is_device_work(a);
        int added = 0;
        if (kind == SCOPE_RANGE && device_work)
            added = add_clipped(out, a, u, nu);
        else if (kind == SCOPE_PROCESS && (a->process >= in->nprocesses || !keep_process[a->process]))
            continue;
        else if (kind == SCOPE_DEVICE && device_work && a->device != number)
            continue;
        else
            added = cp_trace_add(out, a);
        if (added < 0) {
            rc = fail_why(CP_ENOMEM, why, whylen, "out of memory scoping the trace");
            goto out;
        }
    }
out:
    if (rc < 0)
        cp_trace_free(out);
    free(u);
    free(keep_process);
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
