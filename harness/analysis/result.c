/* The result model's own helpers: names of statuses and verdicts, series
 * and freeing. Plain data, no CUDA: reports and replays use them too. */
#include <cuproof/result.h>

#include <cuproof/error.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {"passed", "failed", "skipped", "inconclusive"};
#define NSTATUS (sizeof status_names / sizeof status_names[0])
static const char *const verdict_names[] = {"confirmed", "refuted", "not measured"};

const char *cp_status_name(cp_status s)
{
    return (unsigned)s < NSTATUS ? status_names[s] : "unknown";
}

const char *cp_check_status_name(cp_check_status s)
{
    return (unsigned)s <= CP_CHECK_SKIPPED ? status_names[s] : "unknown";
}

const char *cp_verdict_name(cp_verdict v)
{
    return (unsigned)v < 3 ? verdict_names[v] : "unknown";
}

int cp_status_from_name(const char *s)
{
    for (int i = 0; s && i < (int)NSTATUS; i++)
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

/* Makes room for one more element of `size` bytes in *items (holding n,
 * with room for *cap) and zeroes it. Returns it, or NULL when out of
 * memory. */
static void *grow(void **items, size_t n, size_t *cap, size_t size)
{
    if (n == *cap) {
        size_t more = *cap ? *cap * 2 : 8;
        void *p = realloc(*items, more * size);
        if (!p) {
            cp_failf(CP_ENOMEM, "out of memory growing a result list");
            return NULL;
        }
        *items = p;
        *cap = more;
    }
    void *slot = (char *)*items + n * size;
    memset(slot, 0, size);
    return slot;
}

cp_check_result *cp_result_add_check(cp_case_result *r)
{
    cp_check_result *e = grow((void **)&r->checks, r->nchecks, &r->checks_cap, sizeof *e);
    r->nchecks += e != NULL;
    return e;
}

cp_variant_result *cp_result_add_variant(cp_case_result *r)
{
    cp_variant_result *e = grow((void **)&r->variants, r->nvariants, &r->variants_cap, sizeof *e);
    r->nvariants += e != NULL;
    return e;
}

cp_claim_result *cp_result_add_claim(cp_case_result *r)
{
    cp_claim_result *e = grow((void **)&r->claims, r->nclaims, &r->claims_cap, sizeof *e);
    r->nclaims += e != NULL;
    return e;
}

cp_figure *cp_result_add_figure(cp_case_result *r)
{
    cp_figure *e = grow((void **)&r->figures, r->nfigures, &r->figures_cap, sizeof *e);
    r->nfigures += e != NULL;
    return e;
}

int cp_series_store(cp_series **list, size_t *n, size_t *cap, const char *name, const char *unit,
                    const double *values, size_t count)
{
    if (!name || !*name)
        return cp_failf(CP_EINVAL, "a series needs a name");
    cp_series *s = (cp_series *)cp_series_find(*list, *n, name);
    double *copy = malloc((count ? count : 1) * sizeof *copy);
    if (!copy)
        return cp_failf(CP_ENOMEM, "out of memory storing series %s", name);
    if (count)
        memcpy(copy, values, count * sizeof *copy);
    if (!s) {
        s = grow((void **)list, *n, cap, sizeof *s);
        if (!s) {
            free(copy);
            return CP_ENOMEM;
        }
        (*n)++;
    }
    free(s->values);
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->unit, sizeof s->unit, "%s", unit ? unit : "");
    s->values = copy;
    s->n = count;
    return 0;
}

void cp_series_free(cp_series *list, size_t n)
{
    for (size_t k = 0; k < n; k++)
        free(list[k].values);
    free(list);
}

void cp_case_result_free(cp_case_result *r)
{
    for (size_t i = 0; i < r->nvariants; i++) {
        cp_variant_result *v = &r->variants[i];
        cp_trace_free(&v->trace);
        cp_metrics_free(&v->metrics);
        cp_summary_free(v->summary);
        free(v->summary);
        cp_ranks_free(v->ranks);
        v->ranks = NULL;
        for (size_t k = 0; k < v->nruns; k++)
            free(v->runs[k].samples_ms);
        free(v->runs);
        v->runs = NULL;
        v->nruns = 0;
        cp_series_free(v->series, v->nseries);
        free(v->samples_ms);
    }
    free(r->variants);
    free(r->checks);
    free(r->claims);
    free(r->figures);
    r->variants = NULL;
    r->checks = NULL;
    r->claims = NULL;
    r->figures = NULL;
    r->nvariants = r->nchecks = r->nclaims = r->nfigures = 0;
    r->variants_cap = r->checks_cap = r->claims_cap = r->figures_cap = 0;
}
