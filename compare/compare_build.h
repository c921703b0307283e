/*
 * What the files of compare/ that build a comparison share, private to
 * them: the lists' growth while it is built, and each part's entry. The
 * comparison is built by compare.c (cp_compare_build) from four parts,
 * none of which calls it or another part back but as said here:
 *
 *   compare_load.c     the reports read once a side, and whether the
 *                      sides can be compared (the reasons they cannot)
 *   compare_timing.c   each variant's runs gathered a side, and its
 *                      verdict on the samples (the sample-level test)
 *   compare_changes.c  per case: its variants (compare_timing.c), the
 *                      checks, statuses, claims, findings and trace
 *                      metrics that changed
 *   compare_runs.c     every variant's verdict again with the run as the
 *                      unit, and drift
 *   compare_figure.c   the figure's rules after them: wall time judged
 *                      beside the GPU's at the host threshold, and a
 *                      variant judged on wall time at that threshold alone
 *
 * The printers (compare_text.c, compare_json.c, compare_html.c) read the
 * finished cp_comparison (cuproof/internal/compare.h) and call only
 * compare.c.
 */
#ifndef CUPROOF_COMPARE_BUILD_H
#define CUPROOF_COMPARE_BUILD_H

#include <cuproof/internal/compare.h>
#include <cuproof/internal/compare_stats.h>

#include <cuproof/error.h>
#include <cuproof/internal/grow.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The lists' capacities while the comparison is built. */
typedef struct caps {
    size_t reasons, variants, checks, cases, claims, findings, metrics, tight;
} caps;

/* Appends a zeroed element of `size` to *list (holding *n, room for
 * *cap); NULL when out of memory. Inline, so that each part grows its
 * lists without calling another. */
static inline void *push(void *list, size_t *n, size_t *cap, size_t size)
{
    /* The caller's typed pointer is read and written as bytes: a void **
     * may not alias it. */
    void *items;
    memcpy(&items, list, sizeof items);
    char *grown = cp_grow(items, cap, *n, size, 8);
    if (!grown)
        return NULL;
    memcpy(list, &grown, sizeof grown);
    char *e = grown + (*n)++ * size;
    memset(e, 0, size);
    return e;
}

/* A reason the sides cannot be compared, formatted, appended. Returns 0
 * or CP_ENOMEM. */
static inline int reason(cp_comparison *c, caps *k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline int reason(cp_comparison *c, caps *k, const char *fmt, ...)
{
    cp_cmp_reason *r = push(&c->reasons, &c->nreasons, &k->reasons, sizeof *r);
    if (!r)
        return CP_ENOMEM;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->text, sizeof r->text, fmt, ap);
    va_end(ap);
    return 0;
}

/* Slower by more than the threshold, and a regression where it counts
 * (comparable sides, or --force): for every timing verdict. */
static inline void mark_slower(cp_cmp_variant *v, const cp_comparison *c)
{
    v->slower = strcmp(v->verdict, "slower") == 0 && v->ratio - 1 > c->threshold;
    v->regression = v->slower && (c->comparable || c->forced);
}

/* The smallest change called a change for variant v (compare_stats.h). */
static inline double min_effect_of(const cp_cmp_variant *v, const cp_comparison *c)
{
    return cp_cmp_min_effect(v->judged_on == CP_WORK_GPU, v->by_busy, c->min_effect);
}

/* One case on one side, paired once: the case in each of the side's
 * reports, NULL where a report lacks it (cp_cmp_side_case). Every part
 * reads a case's results through it instead of looking the case up by
 * name in every report again. */
typedef struct side_case {
    const char *name;
    const cp_case_result **of;
    size_t n;
} side_case;

/* compare_load.c: case `name` in each report of side `s` into *out (free
 * with cp_cmp_side_case_free). Returns 0 or CP_ENOMEM. */
int cp_cmp_side_case(const cp_compare_side *s, const char *name, side_case *out);
void cp_cmp_side_case_free(side_case *sc);

/* compare_load.c: the reasons reports `a` and `b` cannot be compared
 * (GPU, driver, profile), each prefixed by `prefix`; each report of a
 * side against its first; a warning when the sides' address layouts or
 * CPU affinities differ (cp_comparison.layout_warning). Each returns 0 or
 * CP_ENOMEM. */
int cp_cmp_env_reasons(cp_comparison *c, caps *k, const cp_report *a, const cp_report *b,
                       const char *prefix);
int cp_cmp_side_reasons(cp_comparison *c, caps *k, const cp_compare_side *s, const char *side);
void cp_cmp_layout_warning(cp_comparison *c, const cp_compare_side *o, const cp_compare_side *n);

/* compare_timing.c: variant `vname` of case `cname` (the comparison's
 * case ci) timed on both sides: its runs a side and its sample-level
 * verdict, appended; nothing when a side did not time it. Returns 0 or
 * CP_ENOMEM. */
int cp_cmp_time_variant(cp_comparison *c, caps *k, const side_case *o, const side_case *n,
                        size_t ci, const char *vname);

/* compare_timing.c: the host-bound rule on variant v, whose smaller
 * device share of the two sides is `share` (NAN: untraced): a slower or
 * faster verdict within the host threshold becomes noisy, with why. */
void cp_cmp_host_rule(cp_cmp_variant *v, double share, const cp_comparison *c);

/* compare_changes.c: case `ca` of the old side (the comparison's case ci)
 * against the new: its variants, checks, status, claims, findings and
 * trace metrics. Returns 0 or CP_ENOMEM. */
int cp_cmp_compare_case(cp_comparison *c, caps *k, const cp_compare_side *o,
                        const cp_compare_side *n, const cp_case_result *ca, size_t ci);

/* compare_runs.c: every variant's verdict with the run as the unit (both
 * sides of two runs or more), else "single run"; then drift. Returns 0 or
 * CP_ENOMEM. */
int cp_cmp_run_verdicts(cp_comparison *c);

/* compare_figure.c: after cp_cmp_run_verdicts, each variant's verdict on
 * its figure's rules (the file's opening comment). */
void cp_cmp_figure_verdicts(cp_comparison *c);

#endif
