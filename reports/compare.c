/*
 * cuproof compare: two report.json files side by side. First whether they
 * can be compared at all (the same GPU, driver and profile). Then per case
 * and variant in both: when both sides kept every timed run (timing.
 * samples_ms), the ratio of medians with a bootstrap interval, the
 * Mann-Whitney p-value and cp_compare_samples' verdict; else the medians
 * only, with the older rule of cp_compare_verdict. Then the checks, case
 * statuses and claims whose result changed (docs/DESIGN.md, "Comparing
 * runs").
 */
#include <cuproof/internal/compare.h>
#include "reports/json.h"

#include <cuproof/internal/compare_stats.h>
#include <cuproof/error.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *load(const char *path)
{
    cJSON *root = NULL;
    cp_report_json_load(path, &root);
    return root;
}

static const cJSON *named(const cJSON *array, const char *key, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, array)
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, key);
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
            return e;
    }
    return NULL;
}

static double number(const cJSON *o, const char *k)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(n) ? n->valuedouble : NAN;
}

static const char *string(const cJSON *o, const char *k)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(n) ? n->valuestring : "";
}

const char *cp_compare_verdict(double old_ms, double old_sd, double new_ms, double new_sd,
                               double *change, double *noise)
{
    *change = (new_ms - old_ms) / old_ms;
    *noise = fmax(fmax(old_sd / old_ms, new_sd / new_ms), 0.02);
    if (fabs(*change) <= *noise)
        return "same";
    return *change < 0 ? "faster" : "slower";
}

/* The share of a variant's timed median in which its traced run kept the
 * GPU busy with work of its own: the trace's span less its idle time and
 * less its pageable copies, whose time is the CPU's staging them (a report
 * from before pageable_copy_sum_ns counts all copy time as theirs when it
 * has any); NAN without a trace. */
static double device_share(const cJSON *variant, double median_ms)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(variant, "trace");
    double span = number(t, "span_ns"), idle = number(t, "idle_ns");
    if (!(span > 0) || !(idle >= 0) || idle > span || !(median_ms > 0))
        return NAN;
    double pageable = number(t, "pageable_copy_sum_ns");
    if (isnan(pageable))
        pageable = number(t, "pageable_copies") > 0 ? number(t, "copy_busy_ns") : 0;
    return fmax(0, span - idle - (isnan(pageable) ? span : pageable)) / 1e6 / median_ms;
}

/* Every number of timing.samples_ms as a malloc'd array (*n of them), or
 * NULL when there is no such non-empty array of numbers. */
static double *samples_of(const cJSON *timing, size_t *n)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(timing, "samples_ms"), *e;
    *n = 0;
    int count = cJSON_IsArray(s) ? cJSON_GetArraySize(s) : 0;
    if (count <= 0)
        return NULL;
    double *v = malloc((size_t)count * sizeof *v);
    if (!v)
        return NULL;
    cJSON_ArrayForEach(e, s)
    {
        if (!cJSON_IsNumber(e)) {
            free(v);
            *n = 0;
            return NULL;
        }
        v[(*n)++] = e->valuedouble;
    }
    return v;
}

/* A seed per case and variant (FNV-1a of the names): the same reports
 * always give the same intervals. */
static uint64_t seed_of(const char *c, const char *v)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *s = c; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    h = (h ^ '/') * 0x100000001b3ULL;
    for (const char *s = v; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

/* A check's result: "ok" true or false is passed or failed; otherwise its
 * "status" (skipped, inconclusive) when the report has one, else skipped. */
static const char *check_status(const cJSON *k)
{
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(k, "ok");
    if (cJSON_IsBool(ok))
        return cJSON_IsTrue(ok) ? "passed" : "failed";
    const char *st = string(k, "status");
    return *st ? st : "skipped";
}

/* passed -> failed or inconclusive (and confirmed -> refuted or
 * inconclusive for claims) got worse. */
static bool worse(const char *was, const char *now, const char *good, const char *bad)
{
    return strcmp(was, good) == 0 &&
           (strcmp(now, bad) == 0 || strcmp(now, "inconclusive") == 0);
}

static void add_number_or_null(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

/* Adds to `reasons` (and to the text) why the reports' timings cannot be
 * compared: another GPU, driver or profile. */
static void comparability(const cJSON *a, const cJSON *b, cJSON *reasons)
{
    const cJSON *ea = cJSON_GetObjectItemCaseSensitive(a, "environment");
    const cJSON *eb = cJSON_GetObjectItemCaseSensitive(b, "environment");
    char why[768];
    const char *ga = string(ea, "gpu_name"), *gb = string(eb, "gpu_name");
    if (strcmp(ga, gb) != 0) {
        snprintf(why, sizeof why, "different GPUs (%s and %s)", *ga ? ga : "none",
                 *gb ? gb : "none");
        cJSON_AddItemToArray(reasons, cJSON_CreateString(why));
    }
    double da = number(ea, "driver_version"), db = number(eb, "driver_version");
    if (!(da == db) && !(isnan(da) && isnan(db))) {
        snprintf(why, sizeof why, "different driver versions (%.0f and %.0f)", da, db);
        cJSON_AddItemToArray(reasons, cJSON_CreateString(why));
    }
    const char *pa = string(a, "profile"), *pb = string(b, "profile");
    if (strcmp(pa, pb) != 0) {
        snprintf(why, sizeof why, "different profiles (%s and %s): their sizes differ", pa, pb);
        cJSON_AddItemToArray(reasons, cJSON_CreateString(why));
    }
}

int cp_compare_reports_opts(const char *old_path, const char *new_path,
                            const cp_compare_options *opt, FILE *out, int *regressions)
{
    int rc = 0, compared = 0;
    *regressions = 0;
    double threshold = opt ? opt->threshold : 0.10;
    double min_effect = opt ? opt->min_effect : CP_CMP_MIN_EFFECT;
    double host_threshold = opt ? opt->host_threshold : CP_CMP_HOST_THRESHOLD;
    bool force = opt && opt->force, json = opt && opt->json;
    cJSON *doc = NULL;
    cJSON *a = load(old_path), *b = a ? load(new_path) : NULL;
    if (!a || !b) {
        rc = CP_EPARSE;
        goto out;
    }
    doc = cJSON_CreateObject();
    cJSON *reasons = cJSON_AddArrayToObject(doc, "reasons");
    if (!doc || !reasons) {
        rc = cp_failf(CP_ENOMEM, "out of memory comparing %s and %s", old_path, new_path);
        goto out;
    }
    comparability(a, b, reasons);
    bool comparable = cJSON_GetArraySize(reasons) == 0, counts = comparable || force;
    cJSON_AddBoolToObject(doc, "comparable", comparable);
    cJSON_AddBoolToObject(doc, "forced", force);
    cJSON_AddNumberToObject(doc, "threshold", threshold);
    cJSON_AddNumberToObject(doc, "min_effect", min_effect);
    cJSON_AddNumberToObject(doc, "host_threshold", host_threshold);
    cJSON *jvariants = cJSON_AddArrayToObject(doc, "variants");
    cJSON *jchecks = cJSON_AddArrayToObject(doc, "checks");
    cJSON *jclaims = cJSON_AddArrayToObject(doc, "claims");
    cJSON *jcases = cJSON_AddArrayToObject(doc, "cases");
    if (!json) {
        const cJSON *r;
        cJSON_ArrayForEach(r, reasons)
        fprintf(out, "incomparable: %s\n", r->valuestring);
        if (!comparable)
            fprintf(out, "%s\n", force ? "--force: timing verdicts count as regressions anyway"
                                       : "timing verdicts are informational (no regression "
                                         "exit); --force counts them");
        fprintf(out, "%-28s %-26s %11s %11s %7s %-17s %8s  %s\n", "case", "variant", "old ms",
                "new ms", "ratio", "95% interval", "p", "verdict");
    }
    bool medians_only = false;
    const cJSON *cases_b = cJSON_GetObjectItemCaseSensitive(b, "cases"), *ca;
    cJSON_ArrayForEach(ca, cJSON_GetObjectItemCaseSensitive(a, "cases"))
    {
        const char *name = string(ca, "name");
        const cJSON *cb = named(cases_b, "name", name);
        if (!cb)
            continue;
        const cJSON *va;
        cJSON_ArrayForEach(va, cJSON_GetObjectItemCaseSensitive(ca, "variants"))
        {
            const char *vname = string(va, "name");
            const cJSON *vb = named(cJSON_GetObjectItemCaseSensitive(cb, "variants"), "name",
                                    vname);
            const cJSON *ta = cJSON_GetObjectItemCaseSensitive(va, "timing");
            const cJSON *tb = vb ? cJSON_GetObjectItemCaseSensitive(vb, "timing") : NULL;
            double ma = number(ta, "median_ms"), mb = number(tb, "median_ms");
            if (!vb || !(ma > 0) || !(mb > 0))
                continue;
            size_t na = 0, nb = 0;
            double *sa = samples_of(ta, &na), *sb = samples_of(tb, &nb);
            cp_cmp_result st;
            bool stats = sa && sb &&
                         cp_compare_samples(sa, na, sb, nb, threshold, min_effect,
                                            seed_of(name, vname), &st) == 0;
            free(sa);
            free(sb);
            const char *verdict;
            double ratio, lo = NAN, hi = NAN, p = NAN, noise = NAN, change;
            if (stats) {
                verdict = cp_cmp_verdict_name(st.verdict);
                ratio = st.ratio;
                lo = st.ci_low;
                hi = st.ci_high;
                p = st.p;
            } else {
                verdict = cp_compare_verdict(ma, number(ta, "stddev_ms"), mb,
                                             number(tb, "stddev_ms"), &change, &noise);
                ratio = mb / ma;
                medians_only = true;
            }
            /* Host-bound (or untraced, so it cannot be told): a change
             * within the host threshold is noise this comparison cannot
             * rule out, whatever the two processes' own runs say. */
            double share = fmin(device_share(va, ma), device_share(vb, mb));
            if (isnan(device_share(va, ma)) || isnan(device_share(vb, mb)))
                share = NAN;
            bool host_bound = !(share >= CP_CMP_DEVICE_SHARE);
            char why[160] = "";
            double moved = ratio >= 1 ? ratio - 1 : 1 / ratio - 1;
            if (host_bound && (strcmp(verdict, "slower") == 0 || strcmp(verdict, "faster") == 0) &&
                moved <= host_threshold) {
                if (isnan(share))
                    snprintf(why, sizeof why, "untraced: host-bound or not cannot be told");
                else
                    snprintf(why, sizeof why, "host-bound: the GPU was busy %.0f%% of the run",
                             100 * share);
                verdict = "noisy";
            }
            bool slower = strcmp(verdict, "slower") == 0 && ratio - 1 > threshold;
            bool regression = slower && counts;
            *regressions += regression;
            compared++;
            cJSON *jv = cJSON_CreateObject();
            cJSON_AddItemToArray(jvariants, jv);
            cJSON_AddStringToObject(jv, "case", name);
            cJSON_AddStringToObject(jv, "variant", vname);
            cJSON_AddStringToObject(jv, "method", stats ? "samples" : "medians");
            cJSON_AddNumberToObject(jv, "old_median_ms", ma);
            cJSON_AddNumberToObject(jv, "new_median_ms", mb);
            add_number_or_null(jv, "ratio", ratio);
            add_number_or_null(jv, "ci_low", lo);
            add_number_or_null(jv, "ci_high", hi);
            add_number_or_null(jv, "p", p);
            cJSON_AddNumberToObject(jv, "old_runs", stats ? (double)st.n_old : number(ta, "runs"));
            cJSON_AddNumberToObject(jv, "new_runs", stats ? (double)st.n_new : number(tb, "runs"));
            add_number_or_null(jv, "device_share", share);
            cJSON_AddBoolToObject(jv, "host_bound", host_bound);
            cJSON_AddStringToObject(jv, "verdict", verdict);
            cJSON_AddStringToObject(jv, "why", why);
            cJSON_AddBoolToObject(jv, "regression", regression);
            if (json)
                continue;
            char ci[32] = "-", pv[16] = "-";
            if (stats) {
                snprintf(ci, sizeof ci, "[%.3f, %.3f]", lo, hi);
                snprintf(pv, sizeof pv, p < 1e-4 ? "%.1e" : "%.4f", p);
            }
            fprintf(out, "%-28s %-26s %11.3f %11.3f %7.3f %-17s %8s  %s%s%s%s%s%s\n", name, vname,
                    ma, mb, ratio, ci, pv, verdict, *why ? " (" : "", why, *why ? ")" : "",
                    regression ? " (regression)"
                    : slower   ? " (not counted: incomparable)"
                               : "",
                    stats ? "" : " (medians only: old report without samples)");
        }
        bool check_regressed = false;
        const cJSON *ka;
        cJSON_ArrayForEach(ka, cJSON_GetObjectItemCaseSensitive(ca, "checks"))
        {
            const cJSON *kb = named(cJSON_GetObjectItemCaseSensitive(cb, "checks"), "name",
                                    string(ka, "name"));
            if (!kb)
                continue;
            const char *was = check_status(ka), *now = check_status(kb);
            if (strcmp(was, now) == 0)
                continue;
            /* A check that passed and now fails (or cannot tell) is a regression too. */
            bool regression = worse(was, now, "passed", "failed");
            check_regressed |= regression;
            *regressions += regression;
            cJSON *jk = cJSON_CreateObject();
            cJSON_AddItemToArray(jchecks, jk);
            cJSON_AddStringToObject(jk, "case", name);
            cJSON_AddStringToObject(jk, "check", string(ka, "name"));
            cJSON_AddStringToObject(jk, "old", was);
            cJSON_AddStringToObject(jk, "new", now);
            cJSON_AddBoolToObject(jk, "regression", regression);
            if (!json)
                fprintf(out, "check %s: %s: %s -> %s%s\n", name, string(ka, "name"), was, now,
                        regression ? " (regression)" : "");
        }
        const char *csa = string(ca, "status"), *csb = string(cb, "status");
        if (*csa && *csb && strcmp(csa, csb) != 0) {
            /* Counted once per case: a check that got worse already counted. */
            bool regression = worse(csa, csb, "passed", "failed") && !check_regressed;
            *regressions += regression;
            cJSON *jc = cJSON_CreateObject();
            cJSON_AddItemToArray(jcases, jc);
            cJSON_AddStringToObject(jc, "case", name);
            cJSON_AddStringToObject(jc, "old", csa);
            cJSON_AddStringToObject(jc, "new", csb);
            cJSON_AddBoolToObject(jc, "regression", regression);
            if (!json)
                fprintf(out, "case %s: %s -> %s%s\n", name, csa, csb,
                        regression ? " (regression)" : "");
        }
        cJSON_ArrayForEach(ka, cJSON_GetObjectItemCaseSensitive(ca, "claims"))
        {
            const cJSON *kb = named(cJSON_GetObjectItemCaseSensitive(cb, "claims"), "text",
                                    string(ka, "text"));
            if (!kb || strcmp(string(ka, "verdict"), string(kb, "verdict")) == 0)
                continue;
            bool regression = worse(string(ka, "verdict"), string(kb, "verdict"), "confirmed",
                                    "refuted");
            *regressions += regression;
            cJSON *jk = cJSON_CreateObject();
            cJSON_AddItemToArray(jclaims, jk);
            cJSON_AddStringToObject(jk, "case", name);
            cJSON_AddStringToObject(jk, "claim", string(ka, "text"));
            cJSON_AddStringToObject(jk, "old", string(ka, "verdict"));
            cJSON_AddStringToObject(jk, "new", string(kb, "verdict"));
            cJSON_AddBoolToObject(jk, "regression", regression);
            if (!json)
                fprintf(out, "claim %s: %.60s: %s -> %s%s\n", name, string(ka, "text"),
                        string(ka, "verdict"), string(kb, "verdict"),
                        regression ? " (regression)" : "");
        }
    }
    if (compared == 0) {
        rc = cp_failf(CP_EINVAL, "%s and %s have no timed variant in common", old_path,
                      new_path);
        goto out;
    }
    cJSON_AddNumberToObject(doc, "regressions", *regressions);
    if (json) {
        char *text = cJSON_Print(doc);
        if (!text) {
            rc = cp_failf(CP_ENOMEM, "out of memory printing the comparison");
            goto out;
        }
        fprintf(out, "%s\n", text);
        free(text);
    } else if (medians_only) {
        fprintf(out, "note: verdicts marked 'medians only' compare medians against the runs' "
                     "standard deviations; reports with timing.samples_ms get a rank test "
                     "and an interval\n");
    }
out:
    cJSON_Delete(doc);
    cJSON_Delete(a);
    cJSON_Delete(b);
    return rc;
}

int cp_compare_reports(const char *old_path, const char *new_path, double threshold, FILE *out,
                       int *regressions)
{
    cp_compare_options o = {.threshold = threshold,
                            .min_effect = CP_CMP_MIN_EFFECT,
                            .host_threshold = CP_CMP_HOST_THRESHOLD};
    return cp_compare_reports_opts(old_path, new_path, &o, out, regressions);
}
