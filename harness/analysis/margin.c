/* How far declared expectations hold over several runs: the check that
 * states one, its metric's mean and spread between runs, and whether the
 * bound lies within CP_MARGIN_SPREADS of them (cuproof/internal/margin.h). */
#include <cuproof/internal/margin.h>

#include <cuproof/metrics.h>
#include <cuproof/stats.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

bool cp_check_expectation(const char *check, const char *variant, bool bare,
                          cp_expect_list *out)
{
    memset(out, 0, sizeof *out);
    if (!check || !variant || cp_expect_parse(check, 1, out) < 0 || out->n != 1) {
        cp_expect_list_free(out);
        return false;
    }
    const cp_expectation *e = &out->items[0];
    bool whole = !e->has_rank && !e->every_rank && !e->scope_arg &&
                 (strcmp(e->scope, variant) == 0 || (bare && !e->scope[0]));
    if (e->kind != CP_EXPECT_COMPARE || !whole) {
        cp_expect_list_free(out);
        return false;
    }
    return true;
}

bool cp_expectation_margin(const cp_expectation *e, const double *values, size_t n,
                           cp_margin *out)
{
    memset(out, 0, sizeof *out);
    int sign = e->op == CP_OP_GT || e->op == CP_OP_GE   ? 1
               : e->op == CP_OP_LT || e->op == CP_OP_LE ? -1
                                                        : 0;
    if (!sign || n == 0)
        return false;
    cp_mean_sample_sd(values, n, &out->mean, &out->sd);
    out->runs = n;
    out->bound = e->value;
    double by = sign * (out->mean - e->value);
    out->spreads = out->sd > 0 ? by / out->sd : (by >= 0 ? INFINITY : -INFINITY);
    out->tight = n > 1 && out->sd > 0 && fabs(out->spreads) < CP_MARGIN_SPREADS;
    return true;
}

size_t cp_case_margins_of(const cp_case_result *c, cp_margin_values values, void *ctx,
                          cp_case_margin *out, size_t cap)
{
    size_t n = 0;
    double v[CP_MARGIN_MAX_VALUES];
    for (size_t i = 0; i < c->nchecks && n < cap; i++) {
        for (size_t vi = 0; vi < c->nvariants && n < cap; vi++) {
            const char *vname = c->variants[vi].name;
            cp_expect_list list;
            if (!cp_check_expectation(c->checks[i].name, vname, c->nvariants == 1, &list))
                continue;
            const cp_metric_def *d = cp_metric_find(list.items[0].name);
            size_t nv = d ? values(ctx, c, vi, d, v, CP_MARGIN_MAX_VALUES) : 0;
            cp_case_margin *m = &out[n];
            if (nv >= 2 && cp_expectation_margin(&list.items[0], v, nv, &m->margin)) {
                m->check = c->checks[i].name;
                m->variant = vname;
                snprintf(m->metric, sizeof m->metric, "%s", d->name);
                n++;
            }
            cp_expect_list_free(&list);
        }
    }
    return n;
}

/* The values of a variant's traced passes (cp_run_value.metrics). */
static size_t pass_values(void *ctx, const cp_case_result *c, size_t variant,
                          const cp_metric_def *d, double *out, size_t cap)
{
    (void)ctx;
    const cp_variant_result *v = &c->variants[variant];
    size_t n = 0;
    for (size_t k = 0; k < v->nruns && n < cap; k++)
        if (v->runs[k].traced && !cp_metric_unmeasured(&v->runs[k].metrics, d->name))
            out[n++] = cp_metric_value(&v->runs[k].metrics, d);
    return n;
}

size_t cp_case_margins(const cp_case_result *c, cp_case_margin *out, size_t cap)
{
    return cp_case_margins_of(c, pass_values, NULL, out, cap);
}
