/*
 * cuproof compare, one case's changes: its variants (compare_timing.c),
 * then the checks, case statuses and claims whose result changed (a side's
 * result the worst of its reports'), the findings raised or cleared, and
 * the trace metrics that moved, a move towards failing a declared
 * expectation counted as a regression (compare/compare_build.h).
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

/* ---- checks, case statuses, claims, findings ---- */

/* How bad a result is, for a side's worst of its reports: a failure in
 * any report of the side is the side's. */
static int check_rank(cp_check_status s)
{
    return s == CP_CHECK_PASSED ? 0 : s == CP_CHECK_SKIPPED ? 1 : 2;
}

static int status_rank(cp_status s)
{
    return s == CP_STATUS_PASSED         ? 0
           : s == CP_STATUS_SKIPPED      ? 1
           : s == CP_STATUS_INCONCLUSIVE ? 2
                                         : 3;
}

static int verdict_rank(cp_verdict v)
{
    return v == CP_VERDICT_CONFIRMED ? 0 : v == CP_VERDICT_NOT_MEASURED ? 1 : 2;
}

/* The worst result of check `name` of the side's case among its
 * reports; false when none holds it. */
static bool side_check(const side_case *s, const char *name, cp_check_status *out)
{
    bool found = false;
    for (size_t i = 0; i < s->n; i++) {
        const cp_case_result *c = s->of[i];
        for (size_t j = 0; c && j < c->nchecks; j++)
            if (strcmp(c->checks[j].name, name) == 0) {
                if (!found || check_rank(c->checks[j].status) > check_rank(*out))
                    *out = c->checks[j].status;
                found = true;
                break;
            }
    }
    return found;
}

static bool side_status(const side_case *s, cp_status *out)
{
    bool found = false;
    for (size_t i = 0; i < s->n; i++) {
        const cp_case_result *c = s->of[i];
        if (c && (!found || status_rank(c->status) > status_rank(*out)))
            *out = c->status;
        found |= c != NULL;
    }
    return found;
}

/* Each pass's value of a windowed claim over a side's reports (its one
 * value where a report kept no passes), into v (room for `cap`); the
 * count. */
static size_t side_claim_values(const side_case *s, const char *text, double *v, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const cp_case_result *c = s->of[i];
        for (size_t j = 0; c && j < c->nclaims; j++) {
            const cp_claim_result *k = &c->claims[j];
            if (strcmp(k->text, text) != 0 || !k->has_window)
                continue;
            if (k->npass_values == 0 && isfinite(k->value) && n < cap)
                v[n++] = k->value;
            for (size_t p = 0; p < k->npass_values && n < cap; p++)
                v[n++] = k->pass_values[p];
            break;
        }
    }
    return n;
}

/*
 * Whether a claim that held and is now refuted moved, or only straddles
 * its bound: a claim measured near a window's bound flips between runs of
 * one build (elementwise-vs-handwritten's "about 200x faster" on the H100,
 * fell short in some runs and refuted in others, its value on either side
 * of 1x). With two values or more a side, all > 0, the flip counts only
 * when the values moved as a timing must to be slower (Welch's t on their
 * logs, p < CP_RUN_ALPHA); otherwise `why` says what the values were.
 * Fewer values: no spread is known, and the flip counts.
 */
static bool claim_moved(const side_case *o, const side_case *n, const char *text, char *why,
                        size_t len)
{
    double a[2 * CP_CLAIM_MAX_PASSES], b[2 * CP_CLAIM_MAX_PASSES];
    size_t na = side_claim_values(o, text, a, sizeof a / sizeof *a);
    size_t nb = side_claim_values(n, text, b, sizeof b / sizeof *b);
    cp_run_cmp t;
    if (na < 2 || nb < 2 || cp_compare_runs(a, na, b, nb, NULL, NULL, 0, 0, &t) < 0) {
        cp_clear_last_error();
        return true;
    }
    if (t.p < CP_RUN_ALPHA)
        return true;
    /* The values' range, through the timing summary (any value > 0). */
    cp_timing ta, tb;
    if (cp_timing_compute(a, na, &ta) < 0 || cp_timing_compute(b, nb, &tb) < 0) {
        cp_clear_last_error();
        return true;
    }
    snprintf(why, len,
             "within the spread between runs: %.4g to %.4g over %zu passes, then %.4g "
             "to %.4g over %zu (p %.2g)",
             ta.min_ms, ta.max_ms, na, tb.min_ms, tb.max_ms, nb, t.p);
    return false;
}

static bool side_claim(const side_case *s, const char *text, cp_verdict *out)
{
    bool found = false;
    for (size_t i = 0; i < s->n; i++) {
        const cp_case_result *c = s->of[i];
        for (size_t j = 0; c && j < c->nclaims; j++)
            if (strcmp(c->claims[j].text, text) == 0) {
                if (!found || verdict_rank(c->claims[j].verdict) > verdict_rank(*out))
                    *out = c->claims[j].verdict;
                found = true;
                break;
            }
    }
    return found;
}

/* The metrics of each traced run of variant v (NULL: none): its passes'
 * when a pass kept them (cuproof run --runs K, schema 1.9), else the
 * report's one traced run. At most `cap`; returns how many. */
enum { CP_TRACED_RUNS_MAX = 128 };
static size_t traced_runs(const cp_variant_result *v, const cp_metrics **out, size_t cap)
{
    size_t n = 0;
    for (size_t k = 0; v && k < v->nruns && n < cap; k++)
        if (v->runs[k].traced)
            out[n++] = &v->runs[k].metrics;
    if (n == 0 && v && v->traced && cap)
        out[n++] = &v->metrics;
    return n;
}

/* How many traced runs of a side (traced_runs) raised finding `name` on
 * case/variant; *traced gets how many runs were traced. */
static size_t side_finding(const side_case *s, const char *vname, const char *name, size_t *traced)
{
    size_t raised = 0;
    *traced = 0;
    for (size_t i = 0; i < s->n; i++) {
        const cp_variant_result *v = cp_case_variant(s->of[i], vname);
        const cp_metrics *m[CP_TRACED_RUNS_MAX];
        size_t nm = traced_runs(v, m, CP_TRACED_RUNS_MAX);
        for (size_t r = 0; r < nm; r++) {
            bool here = false;
            for (size_t f = 0; f < m[r]->nfindings; f++)
                here |= strcmp(m[r]->findings[f].name, name) == 0;
            raised += here;
        }
        *traced += nm;
    }
    return raised;
}

/* passed -> failed or inconclusive (and confirmed -> refuted for claims)
 * got worse. */
static bool worse(const char *was, const char *now, const char *good, const char *bad)
{
    return strcmp(was, good) == 0 && (strcmp(now, bad) == 0 || strcmp(now, "inconclusive") == 0);
}

/* One change of a check, case status or claim; `why` ("" for none) says
 * why a worse result is not counted. */
static int change(cp_cmp_change **list, size_t *n, size_t *cap, const char *cname,
                  size_t case_index, const char *name, const char *was, const char *now,
                  bool regression, const char *why)
{
    cp_cmp_change *e = push(list, n, cap, sizeof *e);
    if (!e)
        return CP_ENOMEM;
    snprintf(e->case_name, sizeof e->case_name, "%s", cname);
    e->case_index = case_index;
    snprintf(e->name, sizeof e->name, "%s", name);
    snprintf(e->was, sizeof e->was, "%s", was);
    snprintf(e->now, sizeof e->now, "%s", now);
    e->regression = regression;
    snprintf(e->why, sizeof e->why, "%s", why);
    return 0;
}

/* The findings of each traced variant of case `ca` that one side raised
 * and the other did not, both sides traced. */
static int compare_findings(cp_comparison *c, caps *k, const side_case *o, const side_case *n,
                            const cp_case_result *ca, size_t ci)
{
    size_t nf = 0;
    const cp_finding_def *defs = cp_finding_defs(&nf);
    for (size_t vi = 0; vi < ca->nvariants; vi++) {
        const char *vname = ca->variants[vi].name;
        for (size_t f = 0; f < nf; f++) {
            size_t ta, tb;
            size_t in_old = side_finding(o, vname, defs[f].name, &ta);
            size_t in_new = side_finding(n, vname, defs[f].name, &tb);
            bool was = in_old > 0, now = in_new > 0;
            if (!ta || !tb || was == now)
                continue;
            cp_cmp_finding *e = push(&c->findings, &c->nfindings, &k->findings, sizeof *e);
            if (!e)
                return CP_ENOMEM;
            snprintf(e->case_name, sizeof e->case_name, "%s", ca->name);
            snprintf(e->variant, sizeof e->variant, "%s", vname);
            snprintf(e->name, sizeof e->name, "%s", defs[f].name);
            e->case_index = ci;
            e->raised = now;
            e->old_runs = ta;
            e->new_runs = tb;
            /* Raised in every new run and none of the old, two a side. */
            e->regression = now && in_new == tb && in_old == 0 && ta >= 2 && tb >= 2;
        }
    }
    return 0;
}

/* ---- Trace metrics ---- */

/* The metrics compared between runs: what a case's claims and
 * expectations are about. */
static const char *const compared_metrics[] = {"copy_kernel_overlap_ratio",
                                               "peak_concurrent_kernels",
                                               "mean_concurrent_kernels",
                                               "efficiency",
                                               "comm_compute_overlap_ratio",
                                               "kernels",
                                               "copies",
                                               "memsets"};

/* Each traced run's value of metric `d` for case/variant on a side. */
static size_t side_metric(const side_case *s, const char *vname, const cp_metric_def *d,
                          double *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n && n < cap; i++) {
        const cp_variant_result *v = cp_case_variant(s->of[i], vname);
        const cp_metrics *m[CP_TRACED_RUNS_MAX];
        size_t nm = traced_runs(v, m, CP_TRACED_RUNS_MAX);
        for (size_t r = 0; r < nm && n < cap; r++)
            if (!cp_metric_unmeasured(m[r], d->name))
                out[n++] = cp_metric_value(m[r], d);
    }
    return n;
}

/* The case's declared expectation on `metric` of `vname` that a move in
 * direction `up` heads towards failing: a check of the new side stating
 * "METRIC OP N" of the variant (cp_check_expectation; a program's report
 * states it bare) with OP > or >= for a fall, < or <= for a rise. */
static bool towards_failing(const cp_case_result *ca, const char *vname, const char *metric,
                            bool up, char *text, size_t len)
{
    for (size_t i = 0; i < ca->nchecks; i++) {
        cp_expect_list list;
        if (!cp_check_expectation(ca->checks[i].name, vname, ca->nvariants == 1, &list))
            continue;
        const cp_expectation *e = &list.items[0];
        bool hit = strcmp(e->name, metric) == 0 && (up ? (e->op == CP_OP_LT || e->op == CP_OP_LE)
                                                       : (e->op == CP_OP_GT || e->op == CP_OP_GE));
        cp_expect_list_free(&list);
        if (hit) {
            snprintf(text, len, "%s", ca->checks[i].name);
            return true;
        }
    }
    return false;
}

/* The trace metrics of case `ca`'s variants that moved between the sides. */
static int compare_metrics(cp_comparison *c, caps *k, const side_case *o, const side_case *n,
                           const cp_case_result *ca, const cp_case_result *ca_new, size_t ci)
{
    enum { CAP = 256 };
    double a[CAP], b[CAP];
    for (size_t vi = 0; vi < ca->nvariants; vi++) {
        const char *vname = ca->variants[vi].name;
        for (size_t m = 0; m < sizeof compared_metrics / sizeof compared_metrics[0]; m++) {
            const cp_metric_def *d = cp_metric_find(compared_metrics[m]);
            if (!d)
                continue;
            size_t na = side_metric(o, vname, d, a, CAP);
            size_t nb = side_metric(n, vname, d, b, CAP);
            if (!na || !nb)
                continue;
            double ma, sa, mb, sb;
            cp_mean_sample_sd(a, na, &ma, &sa);
            cp_mean_sample_sd(b, nb, &mb, &sb);
            bool ratio = strcmp(d->unit, "ratio") == 0;
            double diff = mb - ma, floor_ = ratio ? 0.05 : 0.1 * fabs(ma);
            bool single = na < 2 || nb < 2;
            double se = sqrt(sa * sa / (double)na + sb * sb / (double)nb);
            if (!(fabs(diff) > floor_) || (!single && !(fabs(diff) > 3 * se)))
                continue;
            cp_cmp_metric *e = push(&c->metrics, &c->nmetrics, &k->metrics, sizeof *e);
            if (!e)
                return CP_ENOMEM;
            snprintf(e->case_name, sizeof e->case_name, "%s", ca->name);
            snprintf(e->variant, sizeof e->variant, "%s", vname);
            snprintf(e->metric, sizeof e->metric, "%s", d->name);
            e->case_index = ci;
            e->was = ma;
            e->now = mb;
            e->spread_old = sa;
            e->spread_new = sb;
            e->n_old = na;
            e->n_new = nb;
            e->single_run = single;
            /* Towards failing what the case declares; a single run a side
             * cannot show it is more than the run's own scatter. */
            e->regression =
                !single && ca_new &&
                towards_failing(ca_new, vname, d->name, diff > 0, e->towards, sizeof e->towards);
        }
    }
    return 0;
}

/* The declared expectations of the new side's case that its runs hold
 * or fail by less than their spread between runs (two runs or more). */
/* The new side's runs of a variant's metric (side_metric), for
 * cp_case_margins_of. */
static size_t side_values(void *ctx, const cp_case_result *c, size_t variant,
                          const cp_metric_def *d, double *out, size_t cap)
{
    return side_metric(ctx, c->variants[variant].name, d, out, cap);
}

static int compare_margins(cp_comparison *c, caps *k, const side_case *n,
                           const cp_case_result *ca_new, size_t ci)
{
    enum { CAP = 256 };
    cp_case_margin *m = malloc(CAP * sizeof *m);
    if (!m)
        return CP_ENOMEM;
    size_t nm = cp_case_margins_of(ca_new, side_values, (void *)n, m, CAP);
    int rc = 0;
    for (size_t i = 0; i < nm && rc == 0; i++) {
        if (!m[i].margin.tight)
            continue;
        cp_cmp_tight *e = push(&c->tight, &c->ntight, &k->tight, sizeof *e);
        if (!e) {
            rc = CP_ENOMEM;
            break;
        }
        snprintf(e->case_name, sizeof e->case_name, "%s", ca_new->name);
        snprintf(e->variant, sizeof e->variant, "%s", m[i].variant);
        snprintf(e->check, sizeof e->check, "%s", m[i].check);
        e->case_index = ci;
        e->mean = m[i].margin.mean;
        e->sd = m[i].margin.sd;
        e->spreads = m[i].margin.spreads;
        e->runs = m[i].margin.runs;
    }
    free(m);
    return rc;
}

/* One case of the old side against the new: its variants, checks, status,
 * claims and findings. */
int cp_cmp_compare_case(cp_comparison *c, caps *k, const cp_compare_side *o,
                        const cp_compare_side *n, const cp_case_result *ca, size_t ci)
{
    int rc = 0;
    const char *name = ca->name;
    side_case so = {0}, sn = {0};
    CP_TRY(cp_cmp_side_case(o, name, &so));
    CP_TRY(cp_cmp_side_case(n, name, &sn));
    for (size_t i = 0; i < ca->nvariants; i++) {
        const char *vname = ca->variants[i].name;
        bool seen = false;
        for (size_t j = 0; j < c->nvariants && !seen; j++)
            seen = c->variants[j].case_index == ci && strcmp(c->variants[j].variant, vname) == 0;
        if (!seen)
            CP_TRY(cp_cmp_time_variant(c, k, &so, &sn, ci, vname));
    }
    bool check_regressed = false;
    for (size_t i = 0; i < ca->nchecks; i++) {
        cp_check_status sa, sb;
        const char *kname = ca->checks[i].name;
        if (!side_check(&so, kname, &sa) || !side_check(&sn, kname, &sb) || sa == sb)
            continue;
        const char *was = cp_check_status_name(sa), *now = cp_check_status_name(sb);
        /* A check that passed and now fails (or cannot tell) is a regression too. */
        bool regression = worse(was, now, "passed", "failed");
        check_regressed |= regression;
        CP_TRY(
            change(&c->checks, &c->nchecks, &k->checks, name, ci, kname, was, now, regression, ""));
    }
    cp_status csa, csb;
    if (side_status(&so, &csa) && side_status(&sn, &csb) && csa != csb) {
        const char *was = cp_status_name(csa), *now = cp_status_name(csb);
        /* Counted once per case: a check that got worse already counted. */
        bool regression = worse(was, now, "passed", "failed") && !check_regressed;
        CP_TRY(change(&c->cases, &c->ncases, &k->cases, name, ci, "", was, now, regression, ""));
    }
    for (size_t i = 0; i < ca->nclaims; i++) {
        cp_verdict va, vb;
        const char *text = ca->claims[i].text;
        if (!side_claim(&so, text, &va) || !side_claim(&sn, text, &vb) || va == vb)
            continue;
        const char *was = cp_verdict_name(va), *now = cp_verdict_name(vb);
        /* A claim that held (inside its window, or beyond it on the
         * claimed side) and is now refuted got worse; moving within the
         * claimed side (confirmed, exceeded, fell short) is said, not
         * counted. */
        bool held =
            va == CP_VERDICT_CONFIRMED || va == CP_VERDICT_EXCEEDED || va == CP_VERDICT_FELL_SHORT;
        char why[160] = "";
        bool worse = held && vb == CP_VERDICT_REFUTED;
        if (worse)
            worse = claim_moved(&so, &sn, text, why, sizeof why);
        CP_TRY(change(&c->claims, &c->nclaims, &k->claims, name, ci, text, was, now, worse, why));
    }
    CP_TRY(compare_findings(c, k, &so, &sn, ca, ci));
    const cp_case_result *ca_new = NULL;
    for (size_t r = 0; r < sn.n && !ca_new; r++)
        ca_new = sn.of[r];
    CP_TRY(compare_metrics(c, k, &so, &sn, ca, ca_new, ci));
    if (ca_new)
        CP_TRY(compare_margins(c, k, &sn, ca_new, ci));
out:
    cp_cmp_side_case_free(&so);
    cp_cmp_side_case_free(&sn);
    return rc;
}
