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

/* Edit distance between a and b (insertions, deletions, substitutions,
 * and a swap of two neighbours), at most 63 characters each; 99 beyond. */
static int distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63)
        return 99;
    int d[64][64];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            best = d[i - 1][j] + 1 < best ? d[i - 1][j] + 1 : best;
            best = d[i][j - 1] + 1 < best ? d[i][j - 1] + 1 : best;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

/* The name of `defs` nearest to `name`, when it is near enough to be a
 * typo of it (at most 2 edits, or a fifth of its length), else NULL. */
static const char *nearest(const char *name, const void *defs, size_t n, size_t stride)
{
    const char *best = NULL;
    int least = (int)strlen(name) / 5 > 2 ? (int)strlen(name) / 5 : 2;
    for (size_t i = 0; i < n; i++) {
        const char *k = *(const char *const *)(const void *)((const char *)defs + i * stride);
        int d = distance(name, k);
        if (d <= least) {
            least = d;
            best = k;
        }
    }
    return best;
}

/* "unknown WHAT 'NAME' (did you mean 'X'?)" when one is near, else the
 * whole list of known names. */
static int unknown(const cp_expectation *e, int column, const char *what, const char *name,
                   const void *defs, size_t n, size_t stride, const char *plural)
{
    const char *near = nearest(name, defs, n, stride);
    if (near)
        return cp_failf(CP_EINVAL, "line %d, column %d: unknown %s '%s' (did you mean '%s'?)",
                        e->line, column, what, name, near);
    char known[1024];
    list_names(defs, n, stride, known, sizeof known);
    return cp_failf(CP_EINVAL, "line %d, column %d: unknown %s '%s' (%s: %s)", e->line, column,
                    what, name, plural, known);
}

static int validate_one(const cp_expectation *e, const char *const *scopes, size_t nscopes)
{
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
        if (!found)
            return unknown(e, e->scope_column, "variant", e->scope, scopes, nscopes,
                           sizeof *scopes, "variants");
    }
    size_t n = 0;
    if (e->kind == CP_EXPECT_COMPARE && !cp_metric_find(e->name)) {
        const cp_metric_def *defs = cp_metric_defs(&n);
        return unknown(e, e->name_column, "metric", e->name, defs, n, sizeof *defs, "metrics");
    }
    if (e->kind != CP_EXPECT_COMPARE && !cp_finding_known(e->name)) {
        const cp_finding_def *defs = cp_finding_defs(&n);
        return unknown(e, e->name_column, "finding", e->name, defs, n, sizeof *defs,
                       "findings");
    }
    return 0;
}

int cp_expect_validate_name(const cp_expectation *e)
{
    cp_expectation bare = *e;
    bare.scope = "";
    bare.scope_arg = NULL;
    bare.has_rank = bare.every_rank = bare.spread_ranks = false;
    return validate_one(&bare, NULL, 0);
}

int cp_expect_validate(const cp_expect_list *list, const char *const *scopes, size_t nscopes)
{
    cp_errors bad = {0};
    for (size_t i = 0; i < list->n; i++) {
        int rc = validate_one(&list->items[i], scopes, nscopes);
        if (rc < 0)
            cp_errors_add(&bad, rc);
    }
    return cp_errors_finish(&bad);
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
        cp_metric_format(d, v, measured, len);
        return cp_expect_compare(v, e->op, e->value);
    }
    if (!cp_finding_known(e->name)) {
        snprintf(measured, len, "no finding '%s'", e->name);
        return false;
    }
    const cp_finding *f = cp_metrics_finding(m, e->name);
    if (f)
        /* "raised 80 times", not "raised (count 80)" (issue 29). */
        snprintf(measured, len, f->count == 1 ? "raised once" : "raised %u times", f->count);
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
