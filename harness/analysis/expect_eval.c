/* Expectations evaluated on each traced run's metrics (their names were
 * checked against the metric and finding tables once, by expect.c). */
#include <cuproof/expect.h>

#include <cuproof/error.h>

#include <stdio.h>
#include <string.h>

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
        /* "raised 80 times", not "raised (count 80)". */
        snprintf(measured, len, f->count == 1 ? "raised once" : "raised %u times", f->count);
    else
        snprintf(measured, len, "not raised");
    return (f != NULL) == (e->kind == CP_EXPECT_FINDING);
}

bool cp_expect_on_device(const cp_expectation *e)
{
    return e->scope_arg && strcmp(e->scope, "device") == 0;
}

void cp_expect_check_name(const cp_expectation *e, const char *variant, char *buf, size_t size)
{
    /* A variant's scope, or a rank's, names it in the text; device(N) on
     * a case is each variant's. */
    if ((e->scope[0] && !cp_expect_on_device(e)) || e->has_rank || e->every_rank)
        snprintf(buf, size, "%s", e->text);
    else
        snprintf(buf, size, "%s: %s", variant, e->text);
}
