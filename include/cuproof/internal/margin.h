/*
 * How far a declared expectation holds, over several runs ("thresholds
 * that respect the spread"): internal to cuproof run --runs K
 * and compare, which warn when a threshold lies closer to what the runs
 * measured than their own spread between runs, so that the next run can
 * flip the verdict (exec.torch_streams: an overlap of 0.64 to 0.68 on five
 * runs, 0.062 on one, against "> 0.1").
 */
#ifndef CUPROOF_INTERNAL_MARGIN_H
#define CUPROOF_INTERNAL_MARGIN_H

#include "../export.h"
#include "../expect.h"
#include "../result.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A bound closer than this many between-run standard deviations to the
 * runs' mean can be crossed by the next run (a normal spread crosses 3
 * deviations once in 740 runs; with the deviation itself estimated from
 * 3 to 5 runs, far more often). */
#define CP_MARGIN_SPREADS 3.0

/*
 * The one comparison a check states, when it is a declared expectation on
 * the whole of variant `variant`: a check named "VARIANT: METRIC OP N"
 * (a case's expectation, scoped to its variant) or, when `bare` (a
 * program's report, whose case has one variant), "METRIC OP N". A range,
 * rank or finding, or any other check ("the program succeeded"), is not
 * one. On true, *out holds it as its only item; free it with
 * cp_expect_list_free (on false it is left empty).
 */
CP_API bool cp_check_expectation(const char *check, const char *variant, bool bare,
                                 cp_expect_list *out);

/* A declared expectation against the values its metric took in n runs. */
typedef struct cp_margin {
    size_t runs;
    double mean, sd; /* sd: the sample deviation between the runs (0 for one) */
    double bound;    /* the expectation's number */
    /* (mean - bound) / sd for > and >=, (bound - mean) / sd for < and <=:
     * how many deviations the mean lies on the holding side (negative: it
     * fails on average); INFINITY or -INFINITY when sd is 0. */
    double spreads;
    /* Two runs or more, sd > 0 and |spreads| < CP_MARGIN_SPREADS: the
     * expectation can go either way from one run to the next. */
    bool tight;
} cp_margin;

/* The margin of comparison `e` (> >= < <=; == and != have none: *out
 * zeroed, false) over `values`. Returns whether one was computed. */
CP_API bool cp_expectation_margin(const cp_expectation *e, const double *values, size_t n,
                                  cp_margin *out);

/* One declared expectation of a case over the traced passes of its
 * variant (cp_run_value.metrics): cuproof run --runs K. */
typedef struct cp_case_margin {
    const char *check;   /* the check's name, in the case result */
    const char *variant; /* the variant's name, in the case result */
    char metric[64];
    cp_margin margin;
} cp_case_margin;

/* The values metric d took in the runs of variant `variant` of case c,
 * at most `cap` into `out`; returns how many. */
typedef size_t (*cp_margin_values)(void *ctx, const cp_case_result *c, size_t variant,
                                   const cp_metric_def *d, double *out, size_t cap);
#define CP_MARGIN_MAX_VALUES 256

/* The margins of case c's declared expectations, each over the values
 * `values` gives for its variant and metric (ctx passed along), in check
 * order, at most `cap` into `out`; returns how many (fewer than two values
 * give none). */
CP_API size_t cp_case_margins_of(const cp_case_result *c, cp_margin_values values, void *ctx,
                                 cp_case_margin *out, size_t cap);

/* cp_case_margins_of over each variant's traced passes (cuproof run
 * --runs K). */
CP_API size_t cp_case_margins(const cp_case_result *c, cp_case_margin *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
