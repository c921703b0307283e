/* The result model's own helpers: names of statuses and verdicts, series
 * and freeing. Plain data, no CUDA: reports and replays use them too. */
#include <cuproof/result.h>

#include <cuproof/error.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {"passed", "failed", "skipped"};
static const char *const verdict_names[] = {"confirmed", "refuted", "not measured"};

const char *cp_status_name(cp_status s)
{
    return (unsigned)s < 3 ? status_names[s] : "unknown";
}

const char *cp_check_status_name(cp_check_status s)
{
    return cp_status_name((cp_status)s);
}

const char *cp_verdict_name(cp_verdict v)
{
    return (unsigned)v < 3 ? verdict_names[v] : "unknown";
}

int cp_status_from_name(const char *s)
{
    for (int i = 0; s && i < 3; i++)
        if (strcmp(s, status_names[i]) == 0)
            return i;
    return -1;
}

int cp_verdict_from_name(const char *s)
{
    for (int i = 0; s && i < 3; i++)
        if (strcmp(s, verdict_names[i]) == 0)
            return i;
    return -1;
}

const cp_series *cp_series_find(const cp_series *series, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(series[i].name, name) == 0)
            return &series[i];
    return NULL;
}

int cp_series_store(cp_series *list, size_t *n, const char *name, const char *unit,
                    const double *values, size_t count)
{
    if (!name || !*name)
        return cp_failf(CP_EINVAL, "a series needs a name");
    cp_series *s = (cp_series *)cp_series_find(list, *n, name);
    if (!s && *n == CP_MAX_SERIES)
        return cp_failf(CP_EINVAL, "more than %d series in one variant", CP_MAX_SERIES);
    double *copy = malloc((count ? count : 1) * sizeof *copy);
    if (!copy)
        return cp_failf(CP_ENOMEM, "out of memory storing series %s", name);
    if (count)
        memcpy(copy, values, count * sizeof *copy);
    if (!s) {
        s = &list[(*n)++];
        memset(s, 0, sizeof *s);
    }
    free(s->values);
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->unit, sizeof s->unit, "%s", unit ? unit : "");
    s->values = copy;
    s->n = count;
    return 0;
}

void cp_case_result_free(cp_case_result *r)
{
    for (size_t i = 0; i < r->nvariants; i++) {
        cp_variant_result *v = &r->variants[i];
        cp_trace_free(&v->trace);
        cp_metrics_free(&v->metrics);
        for (size_t k = 0; k < v->nseries; k++)
            free(v->series[k].values);
        v->nseries = 0;
    }
}
