/*
 * cuproof replay DIR [--out OUT]: a full report rebuilt from a recording
 * (a `cuproof run --out DIR` of a GPU machine: its report.json with every
 * timed sample, and CASE.trace.json per traced case), with no GPU. What
 * can be computed again is: each traced variant's metrics and findings,
 * from its recorded trace by the same timeline analysis; its timing, from
 * its samples; and every check a case declares as an expectation, from
 * those metrics. Each must agree with the recording, or the replay says
 * where it does not and fails. What needed the live run (outputs against
 * the CPU, events, host timings, the claims built on them) is kept as
 * recorded and marked so. The report says everywhere that it is a replay,
 * of which GPU and when. A case whose trace file cannot be read is named
 * and left out of the rebuilt report, the others still replayed (exit 5).
 */
#include <cuproof/internal/tracefile.h>
#include "cli.h"

#include <cuproof/case.h>
#include <cuproof/error.h>
#include <cuproof/expect.h>
#include <cuproof/internal/report.h>
#include <cuproof/internal/session.h>
#include <cuproof/stats.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a replay found that disagrees with its recording, and how much it
 * recomputed. */
typedef struct tally {
    size_t variants, metrics, samples, checks, new_checks, statuses;
    size_t metrics_unrecorded; /* values a recording of an older schema lacks */
    size_t disagreements, verdicts_differ;
} tally;

static void disagree(tally *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void disagree(tally *t, const char *fmt, ...)
{
    t->disagreements++;
    printf("cuproof replay: disagrees with the recording: ");
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/* Equal up to the rounding of a JSON number written with 15 digits. */
static bool same(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* The recorded variant's metrics against those the analysis computes
 * from its recorded trace, which then replace them. */
static int reanalyse(const cp_env *env, const char *case_name, cp_variant_result *v,
                     cp_trace *trace, tally *t)
{
    cp_timeline_opts opts = {
        .max_concurrent_kernels = cp_max_concurrent_kernels(env->cc_major, env->cc_minor),
        .gap_threshold_ns = v->metrics.gap_threshold_ns};
    cp_metrics m;
    memset(&m, 0, sizeof m);
    int rc = cp_timeline_analyse(trace, &opts, &m);
    if (rc < 0)
        return rc;
    size_t n = 0;
    const cp_metric_def *defs = cp_metric_defs(&n);
    for (size_t i = 0; i < n; i++) {
        double was = cp_metric_value(&v->metrics, &defs[i]), now = cp_metric_value(&m, &defs[i]);
        /* A metric newer than the recording is computed, with nothing to
         * hold it to. */
        if (i < 64 && (v->metrics_missing >> i & 1)) {
            t->metrics_unrecorded++;
            continue;
        }
        t->metrics++;
        if (!same(was, now))
            disagree(t, "%s: %s: %s recorded %.17g, recomputed %.17g", case_name, v->name,
                     defs[i].name, was, now);
    }
    for (size_t i = 0; i < v->metrics.nfindings; i++)
        if (!cp_metrics_finding(&m, v->metrics.findings[i].name))
            disagree(t, "%s: %s: finding %s recorded, not raised again", case_name, v->name,
                     v->metrics.findings[i].name);
    for (size_t i = 0; i < m.nfindings; i++)
        if (!cp_metrics_finding(&v->metrics, m.findings[i].name))
            disagree(t, "%s: %s: finding %s raised, not in the recording", case_name, v->name,
                     m.findings[i].name);
    uint64_t dropped = v->trace.dropped_records, renamed = v->trace.renamed_kernels;
    cp_metrics_free(&v->metrics);
    v->metrics = m;
    cp_trace_free(&v->trace);
    v->trace = *trace;
    cp_trace_init(trace);
    v->trace.dropped_records = dropped;
    v->trace.renamed_kernels = renamed;
    t->variants++;
    return 0;
}

/* The variant's timing from its samples, against the recorded summary. */
static int retime(const char *case_name, cp_variant_result *v, tally *t)
{
    if (!v->nsamples)
        return 0;
    cp_timing timing;
    int rc = cp_timing_compute(v->samples_ms, v->nsamples, &timing);
    if (rc < 0)
        return rc;
    t->samples += v->nsamples;
    if (!same(timing.median_ms, v->timing.median_ms) || timing.runs != v->timing.runs)
        disagree(t, "%s: %s: timing (median or runs) differs from its samples", case_name,
                 v->name);
    v->timing = timing;
    return 0;
}

static cp_check_result *find_check(cp_case_result *c, const char *name)
{
    for (size_t i = 0; i < c->nchecks; i++)
        if (strcmp(c->checks[i].name, name) == 0)
            return &c->checks[i];
    return NULL;
}

/* The case's declared expectations, evaluated again on the recomputed
 * metrics of each traced variant they name. A check the recording holds
 * must come out the same; one it does not hold (the case declares it
 * since) is added, marked as recomputed. Every other check stays as
 * recorded. */
static int recheck(const cp_case_def *def, cp_case_result *c, tally *t)
{
    int rc = 0;
    for (size_t i = 0; i < c->nchecks; i++)
        c->checks[i].origin = CP_ORIGIN_RECORDED;
    const char *lists[] = {def->expect, def->essential};
    for (int l = 0; l < 2; l++) {
        if (!lists[l])
            continue;
        cp_expect_list list = {0};
        CP_TRY(cp_expect_parse(lists[l], 1, &list));
        for (size_t k = 0; k < list.n; k++) {
            const cp_expectation *e = &list.items[k];
            for (int vi = 0; def->variants[vi]; vi++) {
                const char *variant = def->variants[vi];
                const cp_variant_result *v = cp_case_variant(c, variant);
                if ((e->scope[0] && strcmp(e->scope, variant) != 0) || !v || !v->traced)
                    continue;
                char name[sizeof ((cp_check_result *)0)->name], measured[96];
                cp_expect_check_name(e, variant, name, sizeof name);
                bool ok = cp_expect_eval(e, &v->metrics, measured, sizeof measured);
                cp_check_result *k2 = find_check(c, name);
                t->checks++;
                if (!k2) {
                    k2 = cp_result_add_check(c);
                    if (!k2) {
                        cp_expect_list_free(&list);
                        return cp_failf(CP_ENOMEM, "out of memory replaying %s", c->name);
                    }
                    snprintf(k2->name, sizeof k2->name, "%s", name);
                    snprintf(k2->expected, sizeof k2->expected, "%s", e->text);
                    k2->essential = l == 1;
                    t->new_checks++;
                } else if ((k2->status == CP_CHECK_PASSED) != ok) {
                    disagree(t, "%s: check \"%s\": recorded %s", c->name, name,
                             cp_check_status_name(k2->status));
                }
                k2->status = ok ? CP_CHECK_PASSED : CP_CHECK_FAILED;
                snprintf(k2->measured, sizeof k2->measured, "%s", measured);
                k2->origin = CP_ORIGIN_RECOMPUTED;
            }
        }
        cp_expect_list_free(&list);
    }
out:
    return rc;
}

/* One recorded case replayed in place. *unreadable turns true when the
 * failure is its trace file's (the input's), not cuproof's. */
static int replay_case(const char *dir, const cp_env *env, cp_case_result *c, tally *t,
                       bool *unreadable)
{
    int rc = 0;
    cp_trace_file f;
    memset(&f, 0, sizeof f);
    char path[4096];
    bool traced = false;
    for (size_t i = 0; i < c->nvariants; i++)
        traced |= c->variants[i].traced;
    if (traced) {
        snprintf(path, sizeof path, "%s/%s.trace.json", dir, c->name);
        rc = cp_trace_file_read(path, &f);
        if (rc < 0) {
            *unreadable = true;
            goto out;
        }
        for (size_t i = 0; i < c->nvariants; i++) {
            cp_variant_result *v = &c->variants[i];
            cp_trace_variant *tv = NULL;
            for (size_t k = 0; k < f.nvariants && !tv; k++)
                if (strcmp(f.variants[k].name, v->name) == 0)
                    tv = &f.variants[k];
            if (v->traced && !tv) {
                *unreadable = true;
                CP_TRY(cp_failf(CP_EPARSE, "%s has no trace of variant %s, which the report "
                                           "says was traced", path, v->name));
            }
            if (v->traced)
                CP_TRY(reanalyse(env, c->name, v, &tv->trace, t));
        }
    }
    for (size_t i = 0; i < c->nvariants; i++)
        CP_TRY(retime(c->name, &c->variants[i], t));
    const cp_case_def *def = cp_registry_find(c->name);
    /* A recording older than the baseline's declaration takes it from the
     * case, for the headline. */
    if (def && def->baseline && !c->baseline[0])
        snprintf(c->baseline, sizeof c->baseline, "%s", def->baseline);
    cp_status was = c->status;
    if (def)
        CP_TRY(recheck(def, c, t));
    else
        for (size_t i = 0; i < c->nchecks; i++)
            c->checks[i].origin = CP_ORIGIN_RECORDED;
    /* The verdict again: failed when a check failed or the run failed,
     * else passed. A skipped or inconclusive case keeps its verdict, whose
     * reason (no GPU, a premise) is the live run's. */
    bool failed = c->error[0] != '\0';
    for (size_t i = 0; i < c->nchecks; i++)
        failed |= c->checks[i].status == CP_CHECK_FAILED;
    if (failed)
        c->status = CP_STATUS_FAILED;
    else if (c->status == CP_STATUS_FAILED)
        c->status = CP_STATUS_PASSED;
    t->statuses++;
    if (c->status != was) {
        t->verdicts_differ++;
        disagree(t, "%s: verdict %s, recorded %s", c->name, cp_status_name(c->status),
                 cp_status_name(was));
    }
out:
    cp_trace_file_free(&f);
    return rc;
}

int cp_cmd_replay(int argc, char **argv)
{
    const char *dir = NULL, *out_dir = "cuproof-out";
    const cp_help_opt *table = cp_opts_replay;
    for (int i = 0; i < argc; i++) {
        cp_arg g;
        int kind = cp_arg_next(table, argc, argv, &i, &g);
        if (kind == CP_ARG_BAD)
            return CP_EXIT_USAGE;
        if (kind == CP_ARG_OPERAND && !dir) {
            dir = g.operand;
        } else if (kind == CP_ARG_OPERAND) {
            return cp_usage_error("%s", "replay takes one recording directory: "
                                        "replay DIR [--out OUT]");
        } else if (strcmp(g.opt, "--out") == 0) {
            if (!g.val || !g.val[0])
                return cp_usage_error("%s", "--out needs a directory");
            out_dir = g.val;
        } else {
            return cp_opt_unparsed(g.opt);
        }
    }
    if (!dir)
        return cp_usage_error("%s", "replay takes one recording directory: replay DIR [--out OUT]");
    char path[4096];
    snprintf(path, sizeof path, "%s/report.json", dir);
    cp_report rec;
    int read = cp_report_read(path, &rec);
    if (read < 0)
        return cp_input_error(read);
    int rc = CP_EXIT_OK;
    size_t nbad = 0;
    cp_session *s = NULL;
    if (cp_make_dirs(out_dir) < 0) {
        rc = cp_tool_error();
        goto out;
    }
    s = cp_session_new();
    if (!s) {
        fprintf(stderr, "cuproof: out of memory\n");
        rc = CP_EXIT_TOOL;
        goto out;
    }
    cp_report *r = cp_session_report(s);
    /* The recording's description: the numbers are its GPU's. */
    memcpy(r->profile, rec.profile, sizeof r->profile);
    r->repeat = rec.repeat;
    r->min_samples = rec.min_samples;
    r->max_samples = rec.max_samples;
    r->max_noise = rec.max_noise;
    r->min_time_s = rec.min_time_s;
    r->max_time_s = rec.max_time_s;
    r->env = rec.env;
    r->traced = rec.traced;
    memcpy(r->untraced_reason, rec.untraced_reason, sizeof r->untraced_reason);
    snprintf(r->replayed_from, sizeof r->replayed_from, "%s", dir);
    memcpy(r->recorded_date, rec.date, sizeof r->recorded_date);
    printf("cuproof: replayed from a recording on %s, %s (%s): no GPU is used; metrics, "
           "timings and declared checks are recomputed, the rest is as recorded\n",
           rec.env.gpu_name[0] ? rec.env.gpu_name : "no GPU", rec.date, dir);
    if (cp_session_add_sink(s, cp_sink_progress(stdout, rec.ncases)) < 0 ||
        cp_session_add_sink(s, cp_sink_traces(out_dir)) < 0 ||
        cp_session_add_sink(s, cp_sink_report(out_dir)) < 0) {
        rc = cp_tool_error();
        goto out;
    }
    tally t = {0};
    for (size_t i = 0; i < rec.ncases; i++) {
        cp_case_result *c = &rec.cases[i];
        bool unreadable = false;
        int replayed = replay_case(dir, &rec.env, c, &t, &unreadable);
        if (replayed < 0 && unreadable) {
            /* Named and left out of the rebuilt report: a case kept as
             * recorded would pass for one replayed. */
            fprintf(stderr, "cuproof: %s: case %s left out of the replay\n", cp_last_error(),
                    c->name);
            rc = cp_exit_worse(rc, cp_exit_of_read(replayed));
            nbad++;
            continue;
        }
        if (replayed < 0) {
            rc = cp_tool_error();
            goto out;
        }
        if (cp_session_add_case(s, c) < 0)
            rc = cp_exit_worse(rc, cp_tool_error());
    }
    if (cp_session_close(s) < 0) {
        rc = cp_tool_error();
        goto out;
    }
    size_t np, nf, ns, ni;
    cp_session_counts(s, &np, &nf, &ns, &ni);
    printf("cuproof replay: %zu variants' metrics (%zu values) recomputed from their traces, "
           "%zu timed samples, %zu declared checks (%zu new since the recording); %zu of %zu "
           "verdicts as recorded\n",
           t.variants, t.metrics, t.samples, t.checks, t.new_checks,
           t.statuses - t.verdicts_differ, t.statuses);
    if (t.metrics_unrecorded)
        printf("cuproof replay: %zu values of metrics newer than the recording were computed "
               "with nothing recorded to compare them to\n",
               t.metrics_unrecorded);
    cp_session_print_counts(s, out_dir, stdout);
    if (nbad)
        printf("cuproof replay: %zu case%s left out: %s trace file could not be read (named "
               "above)\n",
               nbad, nbad == 1 ? "" : "s", nbad == 1 ? "its" : "their");
    if (t.disagreements) {
        printf("cuproof replay: %zu disagreement%s with the recording (above)\n", t.disagreements,
               t.disagreements == 1 ? "" : "s");
        rc = cp_exit_worse(rc, CP_EXIT_FAILED);
    } else {
        rc = cp_exit_worse(rc, cp_exit_of_verdicts(nf, ni));
    }
out:
    cp_session_free(s);
    cp_report_free(&rec);
    return rc;
}
