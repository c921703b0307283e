/*
 * cuproof compare: two report.json files side by side. Per case and
 * variant in both, the median times, their ratio and a verdict that
 * allows for the runs' own noise, as nvbench's compare does: a change
 * within the larger relative standard deviation of the two (and at least
 * 2%) is "same". Then the checks whose result changed and the claims whose
 * verdict changed.
 */
#include "reports/json.h"

#include <cuproof/error.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *load(const char *path)
{
    char *text = cp_read_file(path);
    if (!text)
        return NULL;
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!root) {
        cp_failf(CP_EPARSE, "%s is not valid JSON", path);
        return NULL;
    }
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, CP_REPORT_SCHEMA) != 0 ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "cases"))) {
        cJSON_Delete(root);
        cp_failf(CP_EPARSE, "%s is not a cuproof report (schema %s with a 'cases' array)", path,
                 CP_REPORT_SCHEMA);
        return NULL;
    }
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

int cp_compare_reports(const char *old_path, const char *new_path, double threshold, FILE *out,
                       int *regressions)
{
    int rc = 0, compared = 0;
    *regressions = 0;
    cJSON *a = load(old_path), *b = a ? load(new_path) : NULL;
    if (!a || !b) {
        rc = CP_EPARSE;
        goto out;
    }
    const char *pa = string(a, "profile"), *pb = string(b, "profile");
    if (strcmp(pa, pb) != 0) {
        rc = cp_failf(CP_EINVAL, "the reports ran different profiles (%s and %s): their sizes "
                      "differ, so their times cannot be compared", pa, pb);
        goto out;
    }
    fprintf(out, "%-28s %-26s %11s %11s %7s %6s  %s\n", "case", "variant", "old ms", "new ms",
            "ratio", "noise", "verdict");
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
            const cJSON *vb = named(cJSON_GetObjectItemCaseSensitive(cb, "variants"), "name",
                                    string(va, "name"));
            const cJSON *ta = cJSON_GetObjectItemCaseSensitive(va, "timing");
            const cJSON *tb = vb ? cJSON_GetObjectItemCaseSensitive(vb, "timing") : NULL;
            double ma = number(ta, "median_ms"), mb = number(tb, "median_ms");
            if (!vb || !(ma > 0) || !(mb > 0))
                continue;
            double change, noise;
            const char *verdict = cp_compare_verdict(ma, number(ta, "stddev_ms"), mb,
                                                     number(tb, "stddev_ms"), &change, &noise);
            bool regression = strcmp(verdict, "slower") == 0 && change > threshold;
            *regressions += regression;
            compared++;
            fprintf(out, "%-28s %-26s %11.3f %11.3f %7.3f %5.1f%%  %s%s\n", name,
                    string(va, "name"), ma, mb, mb / ma, noise * 100, verdict,
                    regression ? " (regression)" : "");
        }
        const cJSON *ka;
        cJSON_ArrayForEach(ka, cJSON_GetObjectItemCaseSensitive(ca, "checks"))
        {
            const cJSON *kb = named(cJSON_GetObjectItemCaseSensitive(cb, "checks"), "name",
                                    string(ka, "name"));
            const cJSON *oa = cJSON_GetObjectItemCaseSensitive(ka, "ok");
            const cJSON *ob = kb ? cJSON_GetObjectItemCaseSensitive(kb, "ok") : NULL;
            if (!kb || (cJSON_IsTrue(oa) == cJSON_IsTrue(ob) && cJSON_IsNull(oa) == cJSON_IsNull(ob)))
                continue;
            const char *was = cJSON_IsTrue(oa) ? "passed" : cJSON_IsNull(oa) ? "skipped" : "failed";
            const char *now = cJSON_IsTrue(ob) ? "passed" : cJSON_IsNull(ob) ? "skipped" : "failed";
            /* A check that passed and now fails is a regression too. */
            *regressions += cJSON_IsTrue(oa) && cJSON_IsFalse(ob);
            fprintf(out, "check %s: %s: %s -> %s\n", name, string(ka, "name"), was, now);
        }
        cJSON_ArrayForEach(ka, cJSON_GetObjectItemCaseSensitive(ca, "claims"))
        {
            const cJSON *kb = named(cJSON_GetObjectItemCaseSensitive(cb, "claims"), "text",
                                    string(ka, "text"));
            if (kb && strcmp(string(ka, "verdict"), string(kb, "verdict")) != 0)
                fprintf(out, "claim %s: %.60s: %s -> %s\n", name, string(ka, "text"),
                        string(ka, "verdict"), string(kb, "verdict"));
        }
    }
    if (compared == 0)
        rc = cp_failf(CP_EINVAL, "%s and %s have no timed variant in common", old_path,
                      new_path);
out:
    cJSON_Delete(a);
    cJSON_Delete(b);
    return rc;
}
