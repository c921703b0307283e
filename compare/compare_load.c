/*
 * cuproof compare, reading the sides: each side's reports read once
 * (cp_compare_load, a run directory's report.json found), and whether the
 * sides can be compared at all: the same GPU, driver and profile across
 * the sides and within each, and a warning where their address layouts or
 * CPU affinities differ (compare/compare_build.h).
 */
#include "compare/compare_build.h"

#include <cuproof/internal/compare_stats.h>
#include <cuproof/internal/margin.h>
#include <cuproof/internal/report.h>
#include <cuproof/internal/run_stats.h>
#include <cuproof/error.h>
#include <cuproof/expect.h>
#include <cuproof/stats.h>
#include <cuproof/units.h>

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- loading ---- */

void cp_compare_unload(cp_report *reports, char **resolved, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (reports)
            cp_report_free(&reports[i]);
        if (resolved)
            free(resolved[i]);
    }
    free(reports);
    free(resolved);
}

/* `path`, or its report.json when it is a directory (a run's output
 * directory), malloc'd. */
static char *report_path(const char *path)
{
    struct stat st;
    bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    size_t len = strlen(path) + sizeof "/report.json";
    char *p = malloc(len);
    if (p)
        snprintf(p, len, dir ? "%s/report.json" : "%s", path);
    return p;
}

int cp_compare_load(const char *const *paths, size_t n, cp_report **reports, char ***resolved,
                    size_t *loaded, cp_errors *bad)
{
    int rc = 0;
    size_t k = 0; /* reports read, kept in the order given */
    *reports = NULL;
    if (resolved)
        *resolved = NULL;
    if (loaded)
        *loaded = 0;
    if (n == 0)
        return cp_failf(CP_EINVAL, "compare needs at least one report a side");
    cp_report *r = calloc(n, sizeof *r);
    char **p = calloc(n, sizeof *p);
    if (!r || !p) {
        rc = cp_failf(CP_ENOMEM, "out of memory reading %s", paths[0]);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(p[k] = report_path(paths[i]))) {
            rc = cp_failf(CP_ENOMEM, "out of memory reading %s", paths[i]);
            goto out;
        }
        int read = cp_report_read(p[k], &r[k]);
        if (read < 0) {
            cp_report_free(&r[k]); /* what it read before it stopped */
            free(p[k]);
            p[k] = NULL;
        }
        if (read == CP_ENOMEM || (read < 0 && !bad)) {
            rc = read;
            goto out;
        }
        if (read < 0) {
            /* Named and left out; the rest are still read. */
            cp_errors_add(bad, read);
            continue;
        }
        k++;
    }
out:
    if (rc < 0) {
        cp_compare_unload(r, p, k);
        return rc;
    }
    *reports = r;
    if (loaded)
        *loaded = k;
    if (resolved)
        *resolved = p;
    else
        cp_compare_unload(NULL, p, k);
    return 0;
}

/* ---- comparability ---- */

/* Adds why reports a and b cannot be compared: another GPU, driver or
 * profile. `who` prefixes the reasons ("" across the sides, "old reports
 * A and B: " within one). */
int cp_cmp_env_reasons(cp_comparison *c, caps *k, const cp_report *a, const cp_report *b,
                       const char *who)
{
    int rc = 0;
    const char *ga = a->env.gpu_name, *gb = b->env.gpu_name;
    if (strcmp(ga, gb) != 0)
        CP_TRY(reason(c, k, "%sdifferent GPUs (%s and %s)", who, *ga ? ga : "none",
                      *gb ? gb : "none"));
    if (a->env.driver_version != b->env.driver_version)
        CP_TRY(reason(c, k, "%sdifferent driver versions (%d and %d)", who, a->env.driver_version,
                      b->env.driver_version));
    if (strcmp(a->profile, b->profile) != 0)
        CP_TRY(reason(c, k, "%sdifferent profiles (%s and %s): their sizes differ", who, a->profile,
                      b->profile));
out:
    return rc;
}

/* A timing setting of a side's reports (the environment's field at
 * `off`: the address-space layout, internal/layout.h, or the CPU
 * affinity): its value, "mixed" when its reports differ, NULL when one
 * does not say (an older report). */
static const char *side_setting(const cp_compare_side *side, size_t off)
{
    const char *l = NULL;
    for (size_t i = 0; i < side->n; i++) {
        const char *x = (const char *)&side->reports[i].env + off;
        if (!*x)
            return NULL;
        l = !l || strcmp(l, x) == 0 ? x : "mixed";
    }
    return l;
}

/* A host-bound time moves with the layout and with the CPUs the process
 * ran on, so sides that ran with different settings are said to, where
 * every report knows. */
void cp_cmp_layout_warning(cp_comparison *c, const cp_compare_side *o, const cp_compare_side *n)
{
    static const struct {
        size_t off;
        const char *what, *why;
    } settings[] = {
        {offsetof(cp_env, address_layout), "address-space layouts",
         "host-bound times move with the layout (CUPROOF_ASLR)"},
        {offsetof(cp_env, cpu_affinity), "CPU affinities",
         "host-bound times move with the CPUs a process runs on (CUPROOF_CPU_AFFINITY)"},
    };
    size_t at = 0;
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        const char *lo = side_setting(o, settings[i].off), *ln = side_setting(n, settings[i].off);
        if (!lo || !ln || strcmp(lo, ln) == 0 || at >= sizeof c->layout_warning)
            continue;
        int w = snprintf(c->layout_warning + at, sizeof c->layout_warning - at,
                         "%sthe sides ran with different %s (old %s, new %s): %s", at ? "; " : "",
                         settings[i].what, lo, ln, settings[i].why);
        at += w > 0 ? (size_t)w : 0;
    }
}

/* Each report of a side against the side's first: the runs of one side
 * must be comparable among themselves too. */
int cp_cmp_side_reasons(cp_comparison *c, caps *k, const cp_compare_side *s, const char *side)
{
    int rc = 0;
    for (size_t i = 1; i < s->n; i++) {
        char who[1200];
        snprintf(who, sizeof who, "%s reports %s and %s: ", side, s->paths[0], s->paths[i]);
        CP_TRY(cp_cmp_env_reasons(c, k, &s->reports[0], &s->reports[i], who));
    }
out:
    return rc;
}

int cp_cmp_side_case(const cp_compare_side *s, const char *name, side_case *out)
{
    out->name = name;
    out->n = s->n;
    out->of = calloc(s->n ? s->n : 1, sizeof *out->of);
    if (!out->of)
        return CP_ENOMEM;
    for (size_t i = 0; i < s->n; i++)
        out->of[i] = cp_report_case(&s->reports[i], name);
    return 0;
}

void cp_cmp_side_case_free(side_case *sc)
{
    free(sc->of);
    sc->of = NULL;
}
