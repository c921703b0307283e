/*
 * cuproof compare --format json (cp_compare_print_json): a cp_comparison
 * as one JSON object, with the keys compare.h lists. Calls no other
 * output of compare.
 */
#include <cuproof/internal/compare.h>
#include "reports/json.h"

#include <cuproof/error.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Building the document: `ok` turns false at the first allocation that
 * fails, and the document is then dropped whole. */
typedef struct doc {
    bool ok;
} doc;

static cJSON *added(doc *d, cJSON *item)
{
    d->ok = d->ok && item;
    return item;
}

static void number_or_null(doc *d, cJSON *o, const char *k, double v)
{
    added(d, isfinite(v) ? cJSON_AddNumberToObject(o, k, v) : cJSON_AddNullToObject(o, k));
}

static cJSON *object_in(doc *d, cJSON *array)
{
    cJSON *o = added(d, cJSON_CreateObject());
    if (o && !cJSON_AddItemToArray(array, o)) {
        cJSON_Delete(o);
        d->ok = false;
        return NULL;
    }
    return o;
}

static void run_medians(doc *d, cJSON *o, const char *k, const cp_cmp_run *runs, size_t n)
{
    cJSON *a = added(d, cJSON_AddArrayToObject(o, k));
    for (size_t i = 0; a && i < n; i++)
        d->ok = d->ok && cJSON_AddItemToArray(a, added(d, cJSON_CreateNumber(runs[i].median_ms)));
}

static void variant_json(doc *d, cJSON *jv, const cp_cmp_variant *v)
{
    added(d, cJSON_AddStringToObject(jv, "case", v->case_name));
    added(d, cJSON_AddStringToObject(jv, "variant", v->variant));
    added(d, cJSON_AddStringToObject(jv, "method", v->by_runs   ? "runs"
                                                   : v->samples ? "samples"
                                                                : "medians"));
    added(d, cJSON_AddNumberToObject(jv, "old_median_ms", v->old_median_ms));
    added(d, cJSON_AddNumberToObject(jv, "new_median_ms", v->new_median_ms));
    number_or_null(d, jv, "ratio", v->ratio);
    number_or_null(d, jv, "ci_low", v->ci_low);
    number_or_null(d, jv, "ci_high", v->ci_high);
    number_or_null(d, jv, "p", v->p);
    /* old_runs and new_runs have always counted timed values (samples);
     * the runs themselves are old_run_count and new_run_count. */
    added(d, cJSON_AddNumberToObject(jv, "old_runs", (double)v->old_samples));
    added(d, cJSON_AddNumberToObject(jv, "new_runs", (double)v->new_samples));
    number_or_null(d, jv, "device_share", v->device_share);
    added(d, cJSON_AddBoolToObject(jv, "host_bound", v->host_bound));
    added(d, cJSON_AddStringToObject(jv, "verdict", v->verdict));
    added(d, cJSON_AddStringToObject(jv, "why", v->why));
    /* The figure the verdict rests on; the wall time beside the GPU's. */
    added(d, cJSON_AddStringToObject(jv, "judged_on",
                                     v->judged_on != CP_WORK_GPU ? "wall_time"
                                     : v->by_busy                ? "gpu_busy_time"
                                                                 : "gpu_time"));
    added(d, cJSON_AddStringToObject(jv, "judged_on_why", v->judged_why));
    if (v->judged_on == CP_WORK_GPU) {
        number_or_null(d, jv, "old_wall_ms", v->old_wall_ms);
        number_or_null(d, jv, "new_wall_ms", v->new_wall_ms);
    }
    added(d, cJSON_AddBoolToObject(jv, "regression", v->regression));
    added(d, cJSON_AddNumberToObject(jv, "old_run_count", (double)v->n_old_runs));
    added(d, cJSON_AddNumberToObject(jv, "new_run_count", (double)v->n_new_runs));
    run_medians(d, jv, "old_run_medians_ms", v->old_runs, v->n_old_runs);
    run_medians(d, jv, "new_run_medians_ms", v->new_runs, v->n_new_runs);
    /* The run as the unit: the spread between runs each side,
     * whether the comparison's shared spread was used, and for noisy the
     * runs a side that would decide (0 otherwise). */
    if (v->by_runs) {
        added(d, cJSON_AddNumberToObject(jv, "spread_old", v->spread_old));
        added(d, cJSON_AddNumberToObject(jv, "spread_new", v->spread_new));
        added(d, cJSON_AddBoolToObject(jv, "moderated", v->moderated));
        added(d, cJSON_AddNumberToObject(jv, "old_sm_mhz", v->old_sm_mhz));
        added(d, cJSON_AddNumberToObject(jv, "new_sm_mhz", v->new_sm_mhz));
    }
    added(d, cJSON_AddNumberToObject(jv, "runs_needed", (double)v->runs_needed));
    added(d, cJSON_AddNumberToObject(jv, "reports_needed", (double)v->reports_needed));
}

/* checks, cases or claims: {case, check|claim (name_key; none for a
 * case), old, new, regression}. */
static void changes_json(doc *d, cJSON *array, const cp_cmp_change *list, size_t n,
                         const char *name_key)
{
    for (size_t i = 0; array && i < n; i++) {
        cJSON *o = object_in(d, array);
        if (!o)
            return;
        added(d, cJSON_AddStringToObject(o, "case", list[i].case_name));
        if (name_key)
            added(d, cJSON_AddStringToObject(o, name_key, list[i].name));
        added(d, cJSON_AddStringToObject(o, "old", list[i].was));
        added(d, cJSON_AddStringToObject(o, "new", list[i].now));
        added(d, cJSON_AddBoolToObject(o, "regression", list[i].regression));
        if (list[i].why[0])
            added(d, cJSON_AddStringToObject(o, "why", list[i].why));
    }
}

static void paths_json(doc *d, cJSON *root, const char *k, const cp_cmp_report *r, size_t n)
{
    cJSON *a = added(d, cJSON_AddArrayToObject(root, k));
    for (size_t i = 0; a && i < n; i++)
        d->ok = d->ok && cJSON_AddItemToArray(a, added(d, cJSON_CreateString(r[i].path)));
}

static cJSON *comparison_json(const cp_comparison *c, doc *d)
{
    cJSON *root = added(d, cJSON_CreateObject());
    if (!root)
        return NULL;
    cJSON *reasons = added(d, cJSON_AddArrayToObject(root, "reasons"));
    for (size_t i = 0; reasons && i < c->nreasons; i++)
        d->ok = d->ok &&
                cJSON_AddItemToArray(reasons, added(d, cJSON_CreateString(c->reasons[i].text)));
    added(d, cJSON_AddBoolToObject(root, "comparable", c->comparable));
    added(d, cJSON_AddBoolToObject(root, "forced", c->forced));
    added(d, cJSON_AddNumberToObject(root, "threshold", c->threshold));
    added(d, cJSON_AddNumberToObject(root, "min_effect", c->min_effect));
    added(d, cJSON_AddNumberToObject(root, "host_threshold", c->host_threshold));
    cJSON *variants = added(d, cJSON_AddArrayToObject(root, "variants"));
    for (size_t i = 0; variants && i < c->nvariants; i++) {
        cJSON *jv = object_in(d, variants);
        if (jv)
            variant_json(d, jv, &c->variants[i]);
    }
    changes_json(d, added(d, cJSON_AddArrayToObject(root, "checks")), c->checks, c->nchecks,
                 "check");
    changes_json(d, added(d, cJSON_AddArrayToObject(root, "claims")), c->claims, c->nclaims,
                 "claim");
    changes_json(d, added(d, cJSON_AddArrayToObject(root, "cases")), c->cases, c->ncases, NULL);
    added(d, cJSON_AddNumberToObject(root, "regressions", c->regressions));
    added(d, cJSON_AddBoolToObject(root, "timing_compared", c->nvariants > 0));
    cJSON *counts = added(d, cJSON_AddObjectToObject(root, "verdict_counts"));
    for (size_t k = 0; counts && k < CP_CMP_NVERDICTS; k++)
        added(d, cJSON_AddNumberToObject(counts, cp_cmp_summary_verdict(k),
                                         (double)c->verdict_counts[k]));
    added(d, cJSON_AddNumberToObject(root, "runs_compared", (double)c->runs_compared));
    added(d, cJSON_AddNumberToObject(root, "median_spread", c->median_spread));
    added(d, cJSON_AddNumberToObject(root, "noisy_with_runs", (double)c->noisy_with_runs));
    added(d, cJSON_AddNumberToObject(root, "median_runs_needed", (double)c->median_runs_needed));
    added(d, cJSON_AddBoolToObject(root, "median_runs_capped", c->median_runs_capped));
    added(d, cJSON_AddStringToObject(root, "noisy_note", c->noisy_note));
    added(d, cJSON_AddStringToObject(root, "figure_note", c->figure_note));
    added(d, cJSON_AddStringToObject(root, "clock_warning", c->clock_warning));
    added(d, cJSON_AddStringToObject(root, "layout_warning", c->layout_warning));
    paths_json(d, root, "old_reports", c->old_reports, c->n_old_reports);
    paths_json(d, root, "new_reports", c->new_reports, c->n_new_reports);
    cJSON *findings = added(d, cJSON_AddArrayToObject(root, "findings"));
    for (size_t i = 0; findings && i < c->nfindings; i++) {
        cJSON *o = object_in(d, findings);
        if (!o)
            break;
        added(d, cJSON_AddStringToObject(o, "case", c->findings[i].case_name));
        added(d, cJSON_AddStringToObject(o, "variant", c->findings[i].variant));
        added(d, cJSON_AddStringToObject(o, "finding", c->findings[i].name));
        added(d, cJSON_AddStringToObject(o, "change",
                                         c->findings[i].raised ? "raised" : "cleared"));
        added(d, cJSON_AddBoolToObject(o, "regression", c->findings[i].regression));
    }
    cJSON *metrics = added(d, cJSON_AddArrayToObject(root, "metrics"));
    for (size_t i = 0; metrics && i < c->nmetrics; i++) {
        const cp_cmp_metric *m = &c->metrics[i];
        cJSON *o = object_in(d, metrics);
        if (!o)
            break;
        added(d, cJSON_AddStringToObject(o, "case", m->case_name));
        added(d, cJSON_AddStringToObject(o, "variant", m->variant));
        added(d, cJSON_AddStringToObject(o, "metric", m->metric));
        added(d, cJSON_AddNumberToObject(o, "old", m->was));
        added(d, cJSON_AddNumberToObject(o, "new", m->now));
        added(d, cJSON_AddNumberToObject(o, "old_runs", (double)m->n_old));
        added(d, cJSON_AddNumberToObject(o, "new_runs", (double)m->n_new));
        added(d, cJSON_AddNumberToObject(o, "spread_old", m->spread_old));
        added(d, cJSON_AddNumberToObject(o, "spread_new", m->spread_new));
        added(d, cJSON_AddBoolToObject(o, "single_run", m->single_run));
        added(d, cJSON_AddBoolToObject(o, "regression", m->regression));
        added(d, cJSON_AddStringToObject(o, "towards", m->towards));
    }
    cJSON *tight = added(d, cJSON_AddArrayToObject(root, "tight_expectations"));
    for (size_t i = 0; tight && i < c->ntight; i++) {
        const cp_cmp_tight *t = &c->tight[i];
        cJSON *o = object_in(d, tight);
        if (!o)
            break;
        added(d, cJSON_AddStringToObject(o, "case", t->case_name));
        added(d, cJSON_AddStringToObject(o, "variant", t->variant));
        added(d, cJSON_AddStringToObject(o, "expectation", t->check));
        added(d, cJSON_AddNumberToObject(o, "mean", t->mean));
        added(d, cJSON_AddNumberToObject(o, "sd", t->sd));
        added(d, cJSON_AddNumberToObject(o, "runs", (double)t->runs));
        added(d, cJSON_AddNumberToObject(o, "spreads", t->spreads));
    }
    return root;
}

int cp_compare_print_json(const cp_comparison *c, FILE *out)
{
    doc d = {.ok = true};
    cJSON *root = comparison_json(c, &d);
    char *text = d.ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text)
        return cp_failf(CP_ENOMEM, "out of memory printing the comparison");
    fprintf(out, "%s\n", text);
    free(text);
    return 0;
}
