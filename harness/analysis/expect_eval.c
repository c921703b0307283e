/* Expectations against the metric and finding tables: names checked once,
 * then evaluated on each traced run's metrics. */
#include <cuproof/expect.h>

#include <cuproof/error.h>

#include <stdio.h>
#include <string.h>

/* Appends the names of the n entries (each `stride` bytes apart, the name
 * first) to `out`, comma-separated, cut at `len`. */
static void list_names(const void *defs, size_t n, size_t stride, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++) {
        const char *name = *(const char *const *)(const void *)((const char *)defs + i * stride);
        int w = snprintf(out + used, len - used, "%s%s", i ? ", " : "", name);
        used += w > 0 ? (size_t)w : 0;
    }
}

static int validate_one(const cp_expectation *e, const char *const *scopes, size_t nscopes)
{
    char known[1024];
    if (e->has_rank || e->every_rank)
        return cp_failf(CP_EINVAL,
                        "line %d, column %d: %s is for traced programs; a case's expectations "
                        "are scoped by variant",
                        e->line, e->rank_column,
                        e->spread_ranks ? "'rank spread'"
                        : e->every_rank ? "'every rank'"
                                        : "rank(N)");
    if (e->scope_arg)
        return cp_failf(CP_EINVAL,
                        "line %d, column %d: scope '%s(%s)' is for traced programs; a case's "
                        "expectations are scoped by variant",
                        e->line, e->scope_column, e->scope, e->scope_arg);
    if (e->scope[0]) {
        bool found = false;
        for (size_t i = 0; i < nscopes && !found; i++)
            found = strcmp(scopes[i], e->scope) == 0;
        if (!found) {
            list_names(scopes, nscopes, sizeof *scopes, known, sizeof known);
            return cp_failf(CP_EINVAL, "line %d, column %d: unknown variant '%s' (variants: %s)",
                            e->line, e->scope_column, e->scope, known);
        }
    }
    size_t n = 0;
    if (e->kind == CP_EXPECT_COMPARE && !cp_metric_find(e->name)) {
        const cp_metric_def *defs = cp_metric_defs(&n);
        list_names(defs, n, sizeof *defs, known, sizeof known);
        return cp_failf(CP_EINVAL, "line %d, column %d: unknown metric '%s' (metrics: %s)",
                        e->line, e->name_column, e->name, known);
    }
    if (e->kind != CP_EXPECT_COMPARE && !cp_finding_known(e->name)) {
        const cp_finding_def *defs = cp_finding_defs(&n);
        list_names(defs, n, sizeof *defs, known, sizeof known);
        return cp_failf(CP_EINVAL, "line %d, column %d: unknown finding '%s' (findings: %s)",
                        e->line, e->name_column, e->name, known);
    }
    return 0;
}

int cp_expect_validate(const cp_expect_list *list, const char *const *scopes, size_t nscopes)
{
    for (size_t i = 0; i < list->n; i++) {
        int rc = validate_one(&list->items[i], scopes, nscopes);
        if (rc < 0)
            return rc;
    }
    return 0;
}

bool cp_expect_eval(const cp_expectation *e, const cp_metrics *m, char *measured, size_t len)
{
    const char *unmeasured = cp_metric_unmeasured(m, e->name);
    if (unmeasured) {
        snprintf(measured, len, "%s", unmeasured);
        return false;
    }
    if (e->kind == CP_EXPECT_COMPARE) {
        const cp_metric_def *d = cp_metric_find(e->name);
        if (!d) {
            snprintf(measured, len, "no metric '%s'", e->name);
            return false;
        }
        double v = cp_metric_value(m, d);
        /* Counts and times are whole numbers: written whole (3198480
         * kernels, not 3.19848e+06), ratios and means to 6 digits. */
        if (d->type == CP_METRIC_DOUBLE)
            snprintf(measured, len, "%.6g %s", v, d->unit);
        else
            snprintf(measured, len, "%.0f %s", v, d->unit);
        return cp_expect_compare(v, e->op, e->value);
    }
    if (!cp_finding_known(e->name)) {
        snprintf(measured, len, "no finding '%s'", e->name);
        return false;
    }
    const cp_finding *f = cp_metrics_finding(m, e->name);
    if (f)
        snprintf(measured, len, "raised (count %u)", f->count);
    else
        snprintf(measured, len, "not raised");
    return (f != NULL) == (e->kind == CP_EXPECT_FINDING);
}

void cp_expect_check_name(const cp_expectation *e, const char *variant, char *buf, size_t size)
{
    if (e->scope[0] || e->has_rank || e->every_rank)
        snprintf(buf, size, "%s", e->text);
    else
        snprintf(buf, size, "%s: %s", variant, e->text);
}
