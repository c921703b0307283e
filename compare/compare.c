/*
 * cuproof compare, loading and comparing: each side's reports read once
 * (cp_compare_load), then one cp_comparison filled from them
 * (cp_compare_build), which every output prints (compare_text.c,
 * compare_json.c, compare_html.c). First whether the reports can be
 * compared at all (the same GPU, driver and profile, across the sides and
 * within each). Then per case and variant timed on both sides: each
 * report is one run of it (or as many as its passes of `cuproof run
 * --runs K`); when every run kept its timed samples, the ratio of medians
 * with a bootstrap interval, the Mann-Whitney p-value and
 * cp_compare_samples' verdict; else the medians only, with the older rule
 * of cp_compare_verdict. Then the checks, case statuses and claims whose
 * result changed, and the findings raised or cleared (docs/compare.md,
 * "How a verdict is computed").
 */
#include <cuproof/internal/compare.h>

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

const char *cp_compare_verdict(double old_ms, double old_sd, double new_ms, double new_sd,
                               double *change, double *noise)
{
    *change = (new_ms - old_ms) / old_ms;
    *noise = fmax(fmax(old_sd / old_ms, new_sd / new_ms), 0.02);
    if (fabs(*change) <= *noise)
        return "same";
    return *change < 0 ? "faster" : "slower";
}

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

/* ---- growing the comparison's lists ---- */

/* Appends a zeroed element of `size` to *list (holding *n, room for
 * *cap); NULL when out of memory. */
static void *push(void *list, size_t *n, size_t *cap, size_t size)
{
    void **l = list;
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 8;
        void *grown = realloc(*l, c * size);
        if (!grown)
            return NULL;
        *l = grown;
        *cap = c;
    }
    char *e = (char *)*l + (*n)++ * size;
    memset(e, 0, size);
    return e;
}

/* The lists' capacities while the comparison is built. */
typedef struct caps {
    size_t reasons, variants, checks, cases, claims, findings, metrics, tight;
} caps;

static int reason(cp_comparison *c, caps *k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int reason(cp_comparison *c, caps *k, const char *fmt, ...)
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

/* ---- comparability ---- */

/* Adds why reports a and b cannot be compared: another GPU, driver or
 * profile. `who` prefixes the reasons ("" across the sides, "old reports
 * A and B: " within one). */
static int env_reasons(cp_comparison *c, caps *k, const cp_report *a, const cp_report *b,
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
        CP_TRY(reason(c, k, "%sdifferent profiles (%s and %s): their sizes differ", who,
                      a->profile, b->profile));
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
static void layout_warning(cp_comparison *c, const cp_compare_side *o, const cp_compare_side *n)
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
static int side_reasons(cp_comparison *c, caps *k, const cp_compare_side *s, const char *side)
{
    int rc = 0;
    for (size_t i = 1; i < s->n; i++) {
        char who[1200];
        snprintf(who, sizeof who, "%s reports %s and %s: ", side, s->paths[0], s->paths[i]);
        CP_TRY(env_reasons(c, k, &s->reports[0], &s->reports[i], who));
    }
out:
    return rc;
}

/* ---- timing ---- */

/* Whether metric `name` was in the report (not one of an older schema). */
static bool has_metric(const cp_variant_result *v, const char *name)
{
    size_t n = 0;
    const cp_metric_def *defs = cp_metric_defs(&n);
    for (size_t i = 0; i < n && i < 64; i++)
        if (strcmp(defs[i].name, name) == 0)
            return !(v->metrics_missing & ((uint64_t)1 << i));
    return false;
}

/* The share of a variant's timed median in which its traced run kept the
 * GPU busy with work of its own: the trace's span less its idle time and
 * less its pageable copies, whose time is the CPU's staging them (a report
 * from before pageable_copy_sum_ns counts all copy time as theirs when it
 * has any); NAN without a trace. */
static double device_share(const cp_variant_result *v)
{
    const cp_metrics *m = &v->metrics;
    double median_ms = v->timing.median_ms;
    if (!v->traced || !has_metric(v, "span_ns") || !has_metric(v, "idle_ns"))
        return NAN;
    double span = (double)m->span_ns, idle = (double)m->idle_ns;
    if (!(span > 0) || idle > span || !(median_ms > 0))
        return NAN;
    double pageable = has_metric(v, "pageable_copy_sum_ns") ? (double)m->pageable_copy_sum_ns
                      : m->pageable_copies > 0           ? (double)m->copy_busy_ns
                                                         : 0;
    return fmax(0, span - idle - pageable) / 1e6 / median_ms;
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n values (sorted in place); NAN for none. */
static double median_of(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* What one side holds of a variant: its runs, the timed values counted,
 * the smallest device share of its reports. */
typedef struct side_timing {
    cp_cmp_run *runs;
    size_t n, cap;
    size_t counted; /* timing.runs summed: the values behind the medians */
    double share;   /* NAN when a report has no trace of it */
    bool every_sample; /* every run kept its samples */
} side_timing;

static void side_free(side_timing *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->runs[i].samples_ms);
    free(t->runs);
    memset(t, 0, sizeof *t);
}

/* The SM clock over a run: the mean of its known ends (0: unknown). */
static double sm_clock(const cp_clocks *before, const cp_clocks *after)
{
    if (before->known && after->known)
        return 0.5 * (before->sm_mhz + after->sm_mhz);
    return before->known ? before->sm_mhz : after->known ? after->sm_mhz : 0;
}

static int add_run(side_timing *t, size_t report, double median, double sd, const double *s,
                   size_t ns, const cp_clocks *before, const cp_clocks *after, uint64_t busy)
{
    double sm_mhz = sm_clock(before, after);
    cp_cmp_run *r = push(&t->runs, &t->n, &t->cap, sizeof *r);
    if (!r)
        return CP_ENOMEM;
    r->report = report;
    r->median_ms = median;
    r->stddev_ms = sd;
    r->sm_mhz = sm_mhz;
    r->device_busy_ns = busy;
    r->throttle = before->throttle_reasons | after->throttle_reasons;
    if (ns) {
        if (!(r->samples_ms = malloc(ns * sizeof *s)))
            return CP_ENOMEM;
        memcpy(r->samples_ms, s, ns * sizeof *s);
        r->nsamples = ns;
    }
    t->every_sample &= ns > 0;
    return 0;
}

/* Every run of case/variant on a side: a report whose variant has passes
 * gives one run each, any other that timed it one run. */
static int side_runs(const cp_compare_side *s, const char *cname, const char *vname,
                     side_timing *t)
{
    int rc = 0;
    memset(t, 0, sizeof *t);
    t->every_sample = true;
    bool first = true;
    for (size_t i = 0; i < s->n; i++) {
        const cp_variant_result *v = cp_case_variant(cp_report_case(&s->reports[i], cname), vname);
        if (!v || !(v->timing.median_ms > 0))
            continue;
        if (v->nruns) {
            for (size_t k = 0; k < v->nruns; k++)
                CP_TRY(add_run(t, i, v->runs[k].median_ms, NAN, v->runs[k].samples_ms,
                               v->runs[k].nsamples, &v->runs[k].clocks_before,
                               &v->runs[k].clocks_after, v->runs[k].device_busy_ns));
        } else {
            CP_TRY(add_run(t, i, v->timing.median_ms, v->timing.stddev_ms, v->samples_ms,
                           v->nsamples, &v->clocks_before, &v->clocks_after,
                           v->traced ? v->metrics.kernel_busy_ns + v->metrics.copy_busy_ns : 0));
        }
        t->counted += v->timing.runs > 0 ? (size_t)v->timing.runs : 0;
        double share = device_share(v);
        t->share = first ? share : isnan(share) || isnan(t->share) ? NAN : fmin(t->share, share);
        first = false;
    }
out:
    return rc;
}

/* Every sample of a side's runs in one array (malloc'd, *n of them). */
static double *pooled(const side_timing *t, size_t *n)
{
    size_t total = 0;
    for (size_t i = 0; i < t->n; i++)
        total += t->runs[i].nsamples;
    *n = 0;
    double *v = total ? malloc(total * sizeof *v) : NULL;
    for (size_t i = 0; v && i < t->n; i++) {
        memcpy(v + *n, t->runs[i].samples_ms, t->runs[i].nsamples * sizeof *v);
        *n += t->runs[i].nsamples;
    }
    return v;
}

/* A side's median and spread: its one run's, else the median and the
 * standard deviation of its runs' medians (the spread between runs). */
static int side_summary(const side_timing *t, double *median, double *sd)
{
    if (t->n == 1) {
        *median = t->runs[0].median_ms;
        *sd = t->runs[0].stddev_ms;
        return 0;
    }
    double *m = malloc(t->n * sizeof *m), mean = 0, ss = 0;
    if (!m)
        return CP_ENOMEM;
    for (size_t i = 0; i < t->n; i++)
        mean += (m[i] = t->runs[i].median_ms) / (double)t->n;
    for (size_t i = 0; i < t->n; i++)
        ss += (m[i] - mean) * (m[i] - mean);
    *sd = sqrt(ss / (double)(t->n - 1));
    *median = median_of(m, t->n);
    free(m);
    return 0;
}

/* The verdict on one variant from its runs on both sides (v's names,
 * medians and runs set). */
static int timing_verdict(cp_cmp_variant *v, const side_timing *a, const side_timing *b,
                          const cp_comparison *c)
{
    int rc = 0;
    size_t na = 0, nb = 0;
    double *sa = NULL, *sb = NULL, sda = NAN, sdb = NAN;
    CP_TRY(side_summary(a, &v->old_median_ms, &sda));
    CP_TRY(side_summary(b, &v->new_median_ms, &sdb));
    /* Every run's samples pooled: the sample-level test. The verdict that
     * counts rests on the runs (run_verdicts, below), which replaces this
     * one and keeps it only as the samples' finding. */
    if (a->every_sample && b->every_sample) {
        sa = pooled(a, &na);
        sb = pooled(b, &nb);
        if (!sa || !sb)
            CP_TRY(CP_ENOMEM);
    }
    cp_cmp_result st;
    v->samples = sa && sb &&
                 cp_compare_samples(sa, na, sb, nb, c->threshold, c->min_effect,
                                    seed_of(v->case_name, v->variant), &st) == 0;
    v->ci_low = v->ci_high = v->p = NAN;
    v->old_shown_ms = v->old_median_ms;
    v->new_shown_ms = v->new_median_ms;
    if (v->samples) {
        snprintf(v->verdict, sizeof v->verdict, "%s", cp_cmp_verdict_name(st.verdict));
        v->ratio = st.ratio;
        /* st.ratio is of the pooled samples' medians (compare_stats.h). */
        v->old_shown_ms = median_of(sa, na);
        v->new_shown_ms = median_of(sb, nb);
        v->ci_low = st.ci_low;
        v->ci_high = st.ci_high;
        v->p = st.p;
        v->old_samples = st.n_old;
        v->new_samples = st.n_new;
    } else {
        double change, noise;
        snprintf(v->verdict, sizeof v->verdict, "%s",
                 cp_compare_verdict(v->old_median_ms, isnan(sda) ? 0 : sda, v->new_median_ms,
                                    isnan(sdb) ? 0 : sdb, &change, &noise));
        v->ratio = v->new_median_ms / v->old_median_ms;
        v->old_samples = a->counted;
        v->new_samples = b->counted;
    }
out:
    free(sa);
    free(sb);
    return rc;
}

/* Slower by more than the threshold, and a regression where it counts
 * (comparable sides, or --force): for every timing verdict. */
static void mark_slower(cp_cmp_variant *v, const cp_comparison *c)
{
    v->slower = strcmp(v->verdict, "slower") == 0 && v->ratio - 1 > c->threshold;
    v->regression = v->slower && (c->comparable || c->forced);
}

/* Host-bound (or untraced, so it cannot be told): a change within the
 * host threshold is noise this comparison cannot rule out, whatever the
 * processes' own runs say. */
static void host_rule(cp_cmp_variant *v, double share, const cp_comparison *c)
{
    v->device_share = share;
    v->host_bound = !(share >= CP_CMP_DEVICE_SHARE);
    double moved = v->ratio >= 1 ? v->ratio - 1 : 1 / v->ratio - 1;
    bool changed = strcmp(v->verdict, "slower") == 0 || strcmp(v->verdict, "faster") == 0;
    if (v->host_bound && changed && moved <= c->host_threshold) {
        if (isnan(share))
            snprintf(v->why, sizeof v->why, "untraced: host-bound or not cannot be told");
        else {
            /* "busy 0.4% of the run", never "busy 0%" (cuproof/units.h). */
            char busy[24];
            snprintf(v->why, sizeof v->why, "host-bound: the GPU was busy %s of the run",
                     cp_fmt_percent(share, busy, sizeof busy));
        }
        snprintf(v->verdict, sizeof v->verdict, "noisy");
        v->reports_needed = 2;
    }
}

static int compare_variant(cp_comparison *c, caps *k, const cp_compare_side *o,
                           const cp_compare_side *n, const char *cname, size_t case_index,
                           const char *vname)
{
    int rc = 0;
    side_timing a = {0}, b = {0};
    CP_TRY(side_runs(o, cname, vname, &a));
    CP_TRY(side_runs(n, cname, vname, &b));
    if (a.n == 0 || b.n == 0)
        goto out;
    cp_cmp_variant *v = push(&c->variants, &c->nvariants, &k->variants, sizeof *v);
    if (!v)
        CP_TRY(CP_ENOMEM);
    snprintf(v->case_name, sizeof v->case_name, "%s", cname);
    snprintf(v->variant, sizeof v->variant, "%s", vname);
    v->case_index = case_index;
    CP_TRY(timing_verdict(v, &a, &b, c));
    /* The runs move into the comparison, which frees them from now on. */
    v->old_runs = a.runs;
    v->n_old_runs = a.n;
    v->new_runs = b.runs;
    v->n_new_runs = b.n;
    a.runs = b.runs = NULL;
    a.n = b.n = 0;
    host_rule(v, isnan(a.share) || isnan(b.share) ? NAN : fmin(a.share, b.share), c);
    mark_slower(v, c);
out:
    side_free(&a);
    side_free(&b);
    return rc;
}

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

/* The worst result of check `name` of case `cname` among a side's
 * reports; false when none holds it. */
static bool side_check(const cp_compare_side *s, const char *cname, const char *name,
                       cp_check_status *out)
{
    bool found = false;
    for (size_t i = 0; i < s->n; i++) {
        const cp_case_result *c = cp_report_case(&s->reports[i], cname);
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

static bool side_status(const cp_compare_side *s, const char *cname, cp_status *out)
{
    bool found = false;
    for (size_t i = 0; i < s->n; i++) {
        const cp_case_result *c = cp_report_case(&s->reports[i], cname);
        if (c && (!found || status_rank(c->status) > status_rank(*out)))
            *out = c->status;
        found |= c != NULL;
    }
    return found;
}

/* Each pass's value of a windowed claim over a side's reports (its one
 * value where a report kept no passes), into v (room for `cap`); the
 * count. */
static size_t side_claim_values(const cp_compare_side *s, const char *cname, const char *text,
                                double *v, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const cp_case_result *c = cp_report_case(&s->reports[i], cname);
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
static bool claim_moved(const cp_compare_side *o, const cp_compare_side *n, const char *cname,
                        const char *text, char *why, size_t len)
{
    double a[2 * CP_CLAIM_MAX_PASSES], b[2 * CP_CLAIM_MAX_PASSES];
    size_t na = side_claim_values(o, cname, text, a, sizeof a / sizeof *a);
    size_t nb = side_claim_values(n, cname, text, b, sizeof b / sizeof *b);
    cp_run_cmp t;
    if (na < 2 || nb < 2 ||
        cp_compare_runs(a, na, b, nb, NULL, NULL, 0, 0, &t) < 0) {
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
    snprintf(why, len, "within the spread between runs: %.4g to %.4g over %zu passes, then %.4g "
                       "to %.4g over %zu (p %.2g)",
             ta.min_ms, ta.max_ms, na, tb.min_ms, tb.max_ms, nb, t.p);
    return false;
}

static bool side_claim(const cp_compare_side *s, const char *cname, const char *text,
                       cp_verdict *out)
{
    bool found = false;
    for (size_t i = 0; i < s->n; i++) {
        const cp_case_result *c = cp_report_case(&s->reports[i], cname);
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
static size_t side_finding(const cp_compare_side *s, const char *cname, const char *vname,
                           const char *name, size_t *traced)
{
    size_t raised = 0;
    *traced = 0;
    for (size_t i = 0; i < s->n; i++) {
        const cp_variant_result *v = cp_case_variant(cp_report_case(&s->reports[i], cname), vname);
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
    return strcmp(was, good) == 0 &&
           (strcmp(now, bad) == 0 || strcmp(now, "inconclusive") == 0);
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
static int compare_findings(cp_comparison *c, caps *k, const cp_compare_side *o,
                            const cp_compare_side *n, const cp_case_result *ca, size_t ci)
{
    size_t nf = 0;
    const cp_finding_def *defs = cp_finding_defs(&nf);
    for (size_t vi = 0; vi < ca->nvariants; vi++) {
        const char *vname = ca->variants[vi].name;
        for (size_t f = 0; f < nf; f++) {
            size_t ta, tb;
            size_t in_old = side_finding(o, ca->name, vname, defs[f].name, &ta);
            size_t in_new = side_finding(n, ca->name, vname, defs[f].name, &tb);
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
static const char *const compared_metrics[] = {
    "copy_kernel_overlap_ratio", "peak_concurrent_kernels", "mean_concurrent_kernels",
    "efficiency", "comm_compute_overlap_ratio", "kernels", "copies", "memsets"};

/* Each traced run's value of metric `d` for case/variant on a side. */
static size_t side_metric(const cp_compare_side *s, const char *cname, const char *vname,
                          const cp_metric_def *d, double *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n && n < cap; i++) {
        const cp_variant_result *v = cp_case_variant(cp_report_case(&s->reports[i], cname), vname);
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
        bool hit = strcmp(e->name, metric) == 0 &&
                   (up ? (e->op == CP_OP_LT || e->op == CP_OP_LE)
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
static int compare_metrics(cp_comparison *c, caps *k, const cp_compare_side *o,
                           const cp_compare_side *n, const cp_case_result *ca,
                           const cp_case_result *ca_new, size_t ci)
{
    enum { CAP = 256 };
    double a[CAP], b[CAP];
    for (size_t vi = 0; vi < ca->nvariants; vi++) {
        const char *vname = ca->variants[vi].name;
        for (size_t m = 0; m < sizeof compared_metrics / sizeof compared_metrics[0]; m++) {
            const cp_metric_def *d = cp_metric_find(compared_metrics[m]);
            if (!d)
                continue;
            size_t na = side_metric(o, ca->name, vname, d, a, CAP);
            size_t nb = side_metric(n, ca->name, vname, d, b, CAP);
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
            e->regression = !single && ca_new &&
                            towards_failing(ca_new, vname, d->name, diff > 0, e->towards,
                                            sizeof e->towards);
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
    return side_metric(ctx, c->name, c->variants[variant].name, d, out, cap);
}

static int compare_margins(cp_comparison *c, caps *k, const cp_compare_side *n,
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
static int compare_case(cp_comparison *c, caps *k, const cp_compare_side *o,
                        const cp_compare_side *n, const cp_case_result *ca, size_t ci)
{
    int rc = 0;
    const char *name = ca->name;
    for (size_t i = 0; i < ca->nvariants; i++) {
        const char *vname = ca->variants[i].name;
        bool seen = false;
        for (size_t j = 0; j < c->nvariants && !seen; j++)
            seen = c->variants[j].case_index == ci && strcmp(c->variants[j].variant, vname) == 0;
        if (!seen)
            CP_TRY(compare_variant(c, k, o, n, name, ci, vname));
    }
    bool check_regressed = false;
    for (size_t i = 0; i < ca->nchecks; i++) {
        cp_check_status sa, sb;
        const char *kname = ca->checks[i].name;
        if (!side_check(o, name, kname, &sa) || !side_check(n, name, kname, &sb) || sa == sb)
            continue;
        const char *was = cp_check_status_name(sa), *now = cp_check_status_name(sb);
        /* A check that passed and now fails (or cannot tell) is a regression too. */
        bool regression = worse(was, now, "passed", "failed");
        check_regressed |= regression;
        CP_TRY(change(&c->checks, &c->nchecks, &k->checks, name, ci, kname, was, now,
                      regression, ""));
    }
    cp_status csa, csb;
    if (side_status(o, name, &csa) && side_status(n, name, &csb) && csa != csb) {
        const char *was = cp_status_name(csa), *now = cp_status_name(csb);
        /* Counted once per case: a check that got worse already counted. */
        bool regression = worse(was, now, "passed", "failed") && !check_regressed;
        CP_TRY(change(&c->cases, &c->ncases, &k->cases, name, ci, "", was, now, regression, ""));
    }
    for (size_t i = 0; i < ca->nclaims; i++) {
        cp_verdict va, vb;
        const char *text = ca->claims[i].text;
        if (!side_claim(o, name, text, &va) || !side_claim(n, name, text, &vb) || va == vb)
            continue;
        const char *was = cp_verdict_name(va), *now = cp_verdict_name(vb);
        /* A claim that held (inside its window, or beyond it on the
         * claimed side) and is now refuted got worse; moving within the
         * claimed side (confirmed, exceeded, fell short) is said, not
         * counted. */
        bool held = va == CP_VERDICT_CONFIRMED || va == CP_VERDICT_EXCEEDED ||
                    va == CP_VERDICT_FELL_SHORT;
        char why[160] = "";
        bool worse = held && vb == CP_VERDICT_REFUTED;
        if (worse)
            worse = claim_moved(o, n, name, text, why, sizeof why);
        CP_TRY(change(&c->claims, &c->nclaims, &k->claims, name, ci, text, was, now, worse, why));
    }
    CP_TRY(compare_findings(c, k, o, n, ca, ci));
    const cp_case_result *ca_new = NULL;
    for (size_t r = 0; r < n->n && !ca_new; r++)
        ca_new = cp_report_case(&n->reports[r], name);
    CP_TRY(compare_metrics(c, k, o, n, ca, ca_new, ci));
    if (ca_new)
        CP_TRY(compare_margins(c, k, n, ca_new, ci));
out:
    return rc;
}

static int side_reports(cp_cmp_report **out, const cp_compare_side *s)
{
    if (!(*out = calloc(s->n, sizeof **out)))
        return CP_ENOMEM;
    for (size_t i = 0; i < s->n; i++) {
        cp_cmp_report *r = &(*out)[i];
        const cp_report *src = &s->reports[i];
        snprintf(r->path, sizeof r->path, "%s", s->paths ? s->paths[i] : "");
        snprintf(r->gpu_name, sizeof r->gpu_name, "%s", src->env.gpu_name);
        r->driver_version = src->env.driver_version;
        snprintf(r->profile, sizeof r->profile, "%s", src->profile);
        snprintf(r->date, sizeof r->date, "%s", src->date);
    }
    return 0;
}

/* ---- The run as the unit ---- */

/* One value per run of a side (its median, or the median scaled by the
 * run's clock or replaced by its device time), into `out`; false when a
 * run lacks the figure. */
typedef enum { BY_TIME, BY_CYCLES, BY_DEVICE } run_figure;

static bool run_values(const cp_cmp_run *r, size_t n, run_figure f, double *out, double *rse)
{
    for (size_t i = 0; i < n; i++) {
        if (f == BY_TIME)
            out[i] = r[i].median_ms;
        else if (f == BY_CYCLES)
            out[i] = r[i].median_ms * r[i].sm_mhz; /* ms x MHz: SM kilocycles */
        else
            out[i] = (double)r[i].device_busy_ns;
        if (!(out[i] > 0))
            return false;
        /* A run's own precision (rse may be NULL: not wanted): the
         * relative standard error of its median from its samples (1.2533
         * sd / sqrt(n) for the median). */
        if (!rse)
            continue;
        rse[i] = 0;
        if (f == BY_TIME && r[i].nsamples >= 3) {
            double m = 0, ss = 0;
            for (size_t k = 0; k < r[i].nsamples; k++)
                m += log(r[i].samples_ms[k]) / (double)r[i].nsamples;
            for (size_t k = 0; k < r[i].nsamples; k++) {
                double d = log(r[i].samples_ms[k]) - m;
                ss += d * d;
            }
            rse[i] = 1.2533 * sqrt(ss / (double)(r[i].nsamples - 1)) / sqrt((double)r[i].nsamples);
        }
    }
    return true;
}

/* The comparison's shared spread: every variant with two runs or more a
 * side gives its pooled between-run variance (cp_runs_prior_from). */
static int shared_spread(const cp_comparison *c, cp_runs_prior *prior)
{
    memset(prior, 0, sizeof *prior);
    double *vars = malloc((c->nvariants + 1) * sizeof *vars);
    double *dfs = malloc((c->nvariants + 1) * sizeof *dfs);
    size_t n = 0, most = 1;
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_cmp_variant *v = &c->variants[i];
        most = v->n_old_runs > most ? v->n_old_runs : most;
        most = v->n_new_runs > most ? v->n_new_runs : most;
    }
    double *a = malloc(most * sizeof *a), *b = malloc(most * sizeof *b);
    int rc = vars && dfs && a && b ? 0 : CP_ENOMEM;
    for (size_t i = 0; rc == 0 && i < c->nvariants; i++) {
        const cp_cmp_variant *v = &c->variants[i];
        if (v->n_old_runs < 2 || v->n_new_runs < 2 ||
            !run_values(v->old_runs, v->n_old_runs, BY_TIME, a, NULL) ||
            !run_values(v->new_runs, v->n_new_runs, BY_TIME, b, NULL))
            continue;
        rc = cp_runs_variance(a, v->n_old_runs, b, v->n_new_runs, &vars[n], &dfs[n]);
        n += rc == 0;
    }
    if (rc == 0)
        rc = cp_runs_prior_from(vars, dfs, n, prior);
    free(vars);
    free(dfs);
    free(a);
    free(b);
    return rc;
}

/* The runs' geometric means, which a ratio by runs is of (run_stats.h),
 * as the times shown beside it, where they give it back; else the
 * medians stay shown. */
static void shown_by_runs(cp_cmp_variant *v)
{
    double lo = 0, ln = 0;
    for (size_t i = 0; i < v->n_old_runs; i++)
        lo += log(v->old_runs[i].median_ms) / (double)v->n_old_runs;
    for (size_t i = 0; i < v->n_new_runs; i++)
        ln += log(v->new_runs[i].median_ms) / (double)v->n_new_runs;
    double go = exp(lo), gn = exp(ln);
    if (isfinite(go) && isfinite(gn) && go > 0 && fabs(gn / go / v->ratio - 1) < 1e-9) {
        v->old_shown_ms = go;
        v->new_shown_ms = gn;
    }
}

/* The run-level test of variant v on figure f; false when a run lacks
 * the figure. */
static int runs_test(const cp_cmp_variant *v, run_figure f, const cp_comparison *c,
                     const cp_runs_prior *prior, cp_run_cmp *out, bool *done)
{
    size_t most = v->n_old_runs > v->n_new_runs ? v->n_old_runs : v->n_new_runs;
    double *a = malloc(most * sizeof *a), *b = malloc(most * sizeof *b);
    double *ra = malloc(most * sizeof *ra), *rb = malloc(most * sizeof *rb);
    int rc = a && b && ra && rb ? 0 : CP_ENOMEM;
    *done = false;
    if (rc == 0 && run_values(v->old_runs, v->n_old_runs, f, a, ra) &&
        run_values(v->new_runs, v->n_new_runs, f, b, rb)) {
        /* The shared spread is of times, and of cycles alike (a clock
         * scales a run, not its spread); the device's own figure is
         * judged on its own runs. */
        rc = cp_compare_runs_prior(a, v->n_old_runs, b, v->n_new_runs, f == BY_TIME ? ra : NULL,
                                   f == BY_TIME ? rb : NULL, c->threshold, c->min_effect,
                                   f == BY_DEVICE ? NULL : prior, out);
        *done = rc == 0;
    }
    free(a);
    free(b);
    free(ra);
    free(rb);
    return rc;
}

/* The distinct reports (invocations of cuproof) a side's runs come from. */
static size_t reports_of(const cp_cmp_run *r, size_t n)
{
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = r[k].report == r[i].report;
        distinct += !seen;
    }
    return distinct;
}

/* The mean SM clock of a side's runs (0: unknown for one). */
static double side_clock(const cp_cmp_run *r, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(r[i].sm_mhz > 0))
            return 0;
        sum += r[i].sm_mhz;
    }
    return n ? sum / (double)n : 0;
}

/* A slowdown that equal clocks or the device's own time do not show is
 * drift, with its reason. */
static int drift_check(cp_cmp_variant *v, const cp_comparison *c, const cp_runs_prior *prior)
{
    cp_run_cmp t;
    bool done = false;
    int rc = 0;
    /* Drift is shown, not presumed: the slowdown must disappear, the
     * interval of the other figure's ratio lying wholly below half of the
     * time's slowdown. By the clock only where the clocks differ (2% or
     * more); by the device time only for a device-bound variant. Neither
     * "noisy" nor a smaller but real growth is drift: on the H100, 10%
     * more work grew streams-pinned's GPU time by 7.4% and its time by
     * 9.8%, a slowdown. */
    double half_way = 1 + (v->ratio - 1) / 2;
    double oc = side_clock(v->old_runs, v->n_old_runs), nc = side_clock(v->new_runs, v->n_new_runs);
    bool clocks_differ = oc > 0 && nc > 0 && fabs(nc / oc - 1) >= 0.02;
    if (clocks_differ)
        rc = runs_test(v, BY_CYCLES, c, prior, &t, &done);
    if (rc == 0 && done && t.ci_high < half_way) {
        snprintf(v->verdict, sizeof v->verdict, "drift");
        int w = snprintf(v->why, sizeof v->why,
                         "the clock: old runs at %.0f MHz, new at %.0f MHz; in SM cycles the "
                         "ratio is %.3f [%.3f, %.3f]",
                         oc, nc, t.ratio, t.ci_low, t.ci_high);
        /* Why the clock fell, when NVML said (its clocks-event reasons). */
        unsigned long long thr = 0;
        for (size_t i = 0; i < v->n_new_runs; i++)
            thr |= v->new_runs[i].throttle;
        if (thr && w > 0 && (size_t)w < sizeof v->why)
            snprintf(v->why + w, sizeof v->why - (size_t)w, "; NVML clocks-event reasons 0x%llx",
                     thr);
        return 0;
    }
    /* The device time explains the time of a device-bound variant only:
     * a host-bound one's slowdown is on the host, which it cannot see. */
    if (rc == 0 && v->device_share >= CP_CMP_DEVICE_SHARE)
        rc = runs_test(v, BY_DEVICE, c, NULL, &t, &done);
    else
        done = false;
    if (rc == 0 && done && t.ci_high < half_way) {
        snprintf(v->verdict, sizeof v->verdict, "drift");
        snprintf(v->why, sizeof v->why,
                 "the device time: the traced runs' GPU busy time moved by %.3f [%.3f, %.3f] "
                 "against %.3f",
                 t.ratio, t.ci_low, t.ci_high, v->ratio);
    }
    return rc;
}

/* Every variant's verdict with the run as the unit: both sides of two
 * runs or more, cp_compare_runs_prior with the comparison's shared
 * spread; a side of one run, "single run" (the sample test's finding is
 * only said); then drift. */
static int run_verdicts(cp_comparison *c)
{
    cp_runs_prior prior;
    int rc = shared_spread(c, &prior);
    double old_clock = 0, new_clock = 0;
    size_t clocked = 0;
    for (size_t i = 0; rc == 0 && i < c->nvariants; i++) {
        cp_cmp_variant *v = &c->variants[i];
        double oc = side_clock(v->old_runs, v->n_old_runs);
        double nc = side_clock(v->new_runs, v->n_new_runs);
        v->old_sm_mhz = oc;
        v->new_sm_mhz = nc;
        if (oc > 0 && nc > 0) {
            old_clock += oc;
            new_clock += nc;
            clocked++;
        }
        cp_run_cmp t;
        bool done;
        rc = runs_test(v, BY_TIME, c, &prior, &t, &done);
        if (rc < 0)
            break;
        if (!done)
            continue; /* no run-level figure: the verdict stays the samples' */
        if (t.verdict == CP_CMP_SINGLE_RUN) {
            /* run_stats' rule: no spread between runs, no change called;
             * what the samples within the run say, said beside it. */
            char within[160];
            snprintf(within, sizeof within, "one run a side: the spread between runs is unknown; "
                     "within the run: %s", v->verdict);
            snprintf(v->why, sizeof v->why, "%s", within);
            snprintf(v->verdict, sizeof v->verdict, "%s", cp_cmp_verdict_name(t.verdict));
            mark_slower(v, c);
            continue;
        }
        v->by_runs = true;
        v->moderated = t.moderated;
        v->ratio = t.ratio;
        shown_by_runs(v);
        v->ci_low = t.ci_low;
        v->ci_high = t.ci_high;
        v->p = t.p;
        v->spread_old = t.spread_old;
        v->spread_new = t.spread_new;
        v->runs_needed = t.runs_needed;
        v->runs_capped = t.runs_capped;
        v->reports_needed = 0;
        v->why[0] = '\0';
        snprintf(v->verdict, sizeof v->verdict, "%s", cp_cmp_verdict_name(t.verdict));
        if (t.verdict == CP_CMP_SLOWER)
            rc = drift_check(v, c, &prior);
        /* The passes of one invocation do not show how much a
         * host-bound variant moves between invocations minutes apart,
         * even each in its own process (five ci runs on the H100:
         * broadcast matrix-row 0.070 to 0.075 ms in all three passes of
         * one, 0.059 to 0.062 in all three of another, a false "slower"
         * at p 0.0006): the host rule holds unless each side's runs come
         * from two reports or more. */
        if (rc == 0 && (reports_of(v->old_runs, v->n_old_runs) < 2 ||
                        reports_of(v->new_runs, v->n_new_runs) < 2))
            host_rule(v, v->device_share, c);
        mark_slower(v, c);
    }
    if (rc == 0 && clocked) {
        old_clock /= (double)clocked;
        new_clock /= (double)clocked;
        if (fabs(new_clock / old_clock - 1) > 0.05)
            snprintf(c->clock_warning, sizeof c->clock_warning,
                     "the sides ran at different SM clocks: old %.0f MHz, new %.0f MHz on average "
                     "(a slowdown that equal clocks do not show is drift)",
                     old_clock, new_clock);
    }
    return rc;
}

/* The regressions the comparison holds: variants, checks, case statuses,
 * claims, trace metrics and findings, each marked where it was judged. */
static int count_regressions(const cp_comparison *c)
{
    int n = 0;
    for (size_t i = 0; i < c->nvariants; i++)
        n += c->variants[i].regression;
    for (size_t i = 0; i < c->nchecks; i++)
        n += c->checks[i].regression;
    for (size_t i = 0; i < c->ncases; i++)
        n += c->cases[i].regression;
    for (size_t i = 0; i < c->nclaims; i++)
        n += c->claims[i].regression;
    for (size_t i = 0; i < c->nmetrics; i++)
        n += c->metrics[i].regression;
    for (size_t i = 0; i < c->nfindings; i++)
        n += c->findings[i].regression;
    return n;
}

/* The verdicts counted and what the noisy ones rest on (cp_comparison's
 * verdict_counts to median_spread). */
static int summarise(cp_comparison *c)
{
    double *spreads = malloc((c->nvariants ? c->nvariants : 1) * sizeof *spreads);
    double *needed = malloc((c->nvariants ? c->nvariants : 1) * sizeof *needed);
    if (!spreads || !needed) {
        free(spreads);
        free(needed);
        return CP_ENOMEM;
    }
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_cmp_variant *v = &c->variants[i];
        for (size_t k = 0; k < CP_CMP_NVERDICTS; k++)
            c->verdict_counts[k] += strcmp(v->verdict, cp_cmp_summary_verdict(k)) == 0;
        if (v->by_runs)
            spreads[c->runs_compared++] = v->spread_old > v->spread_new ? v->spread_old
                                                                        : v->spread_new;
        /* A capped count is "more than the most": above it in the order. */
        if (strcmp(v->verdict, "noisy") == 0 && !v->reports_needed && v->runs_needed)
            needed[c->noisy_with_runs++] = (double)v->runs_needed + (v->runs_capped ? 1 : 0);
    }
    c->median_spread = c->runs_compared ? median_of(spreads, c->runs_compared) : 0;
    c->median_runs_needed =
        c->noisy_with_runs ? (size_t)ceil(median_of(needed, c->noisy_with_runs)) : 0;
    c->median_runs_capped = c->median_runs_needed >= CP_RUN_MAX_RUNS;
    if (c->median_runs_capped)
        c->median_runs_needed = CP_RUN_MAX_RUNS;
    if (c->verdict_counts[CP_CMP_COUNT_NOISY] && c->runs_compared) {
        int at = snprintf(c->noisy_note, sizeof c->noisy_note,
                          "the runs of the %zu variant%s compared by runs spread by a median "
                          "%.1f%%; a %g%% change is decided only where runs spread little "
                          "(docs/compare.md)",
                          c->runs_compared, c->runs_compared == 1 ? "" : "s",
                          100 * c->median_spread, 100 * c->threshold);
        if (c->noisy_with_runs && at > 0 && (size_t)at < sizeof c->noisy_note)
            snprintf(c->noisy_note + at, sizeof c->noisy_note - (size_t)at,
                     "; the noisy would need a median of %zu runs a side%s",
                     c->median_runs_needed, c->median_runs_capped ? " or more" : "");
    }
    free(spreads);
    free(needed);
    return 0;
}

int cp_compare_build(const cp_compare_side *o, const cp_compare_side *n,
                     const cp_compare_options *opt, cp_comparison *c)
{
    int rc = 0;
    caps k = {0};
    memset(c, 0, sizeof *c);
    if (!o->n || !n->n)
        return cp_failf(CP_EINVAL, "compare needs at least one report a side");
    c->threshold = opt ? opt->threshold : 0.10;
    c->min_effect = opt ? opt->min_effect : CP_CMP_MIN_EFFECT;
    c->host_threshold = opt ? opt->host_threshold : CP_CMP_HOST_THRESHOLD;
    c->forced = opt && opt->force;
    c->n_old_reports = o->n;
    c->n_new_reports = n->n;
    CP_TRY(side_reports(&c->old_reports, o));
    CP_TRY(side_reports(&c->new_reports, n));
    CP_TRY(env_reasons(c, &k, &o->reports[0], &n->reports[0], ""));
    layout_warning(c, o, n);
    CP_TRY(side_reasons(c, &k, o, "old"));
    CP_TRY(side_reasons(c, &k, n, "new"));
    c->comparable = c->nreasons == 0;
    /* The old side's cases in order, each once however many of its
     * reports hold it. */
    for (size_t r = 0; r < o->n; r++)
        for (size_t i = 0; i < o->reports[r].ncases; i++) {
            const cp_case_result *ca = &o->reports[r].cases[i];
            bool seen = false;
            for (size_t q = 0; q < r && !seen; q++)
                seen = cp_report_case(&o->reports[q], ca->name) != NULL;
            for (size_t q = 0; q < i && !seen; q++)
                seen = strcmp(o->reports[r].cases[q].name, ca->name) == 0;
            if (seen)
                continue;
            CP_TRY(compare_case(c, &k, o, n, ca, c->ncase_names++));
        }
    /* The timing verdicts again with the run as the unit, then every
     * regression counted once, from what the comparison holds. */
    CP_TRY(run_verdicts(c));
    CP_TRY(summarise(c));
    c->regressions = count_regressions(c);
out:
    if (rc == CP_ENOMEM)
        rc = cp_failf(CP_ENOMEM, "out of memory comparing %s and %s",
                      o->paths ? o->paths[0] : "the old reports",
                      n->paths ? n->paths[0] : "the new reports");
    if (rc < 0)
        cp_comparison_free(c);
    return rc;
}

void cp_comparison_free(cp_comparison *c)
{
    for (size_t i = 0; c->variants && i < c->nvariants; i++) {
        cp_cmp_variant *v = &c->variants[i];
        for (size_t r = 0; r < v->n_old_runs; r++)
            free(v->old_runs[r].samples_ms);
        for (size_t r = 0; r < v->n_new_runs; r++)
            free(v->new_runs[r].samples_ms);
        free(v->old_runs);
        free(v->new_runs);
    }
    free(c->variants);
    free(c->old_reports);
    free(c->new_reports);
    free(c->reasons);
    free(c->checks);
    free(c->cases);
    free(c->claims);
    free(c->findings);
    free(c->metrics);
    free(c->tight);
    memset(c, 0, sizeof *c);
}

int cp_compare_files(const char *const *old_paths, size_t n_old, const char *const *new_paths,
                     size_t n_new, const cp_compare_options *opt, cp_comparison *out,
                     cp_errors *bad)
{
    int rc = 0;
    cp_report *a = NULL, *b = NULL;
    char **pa = NULL, **pb = NULL;
    size_t ka = 0, kb = 0;
    memset(out, 0, sizeof *out);
    CP_TRY(cp_compare_load(old_paths, n_old, &a, &pa, &ka, bad));
    CP_TRY(cp_compare_load(new_paths, n_new, &b, &pb, &kb, bad));
    if (ka == 0 || kb == 0) {
        /* A side with no report left: nothing to compare; every report
         * that could not be read is named. */
        rc = cp_errors_finish(bad);
        goto out;
    }
    cp_compare_side o = {a, (const char *const *)pa, ka};
    cp_compare_side n = {b, (const char *const *)pb, kb};
    rc = cp_compare_build(&o, &n, opt, out);
out:
    cp_compare_unload(a, pa, a ? ka : 0);
    cp_compare_unload(b, pb, b ? kb : 0);
    return rc;
}

void cp_cmp_shown_times(const cp_cmp_variant *v, int ratio_decimals, char *t_new, char *t_old,
                        size_t size)
{
    bool set = v->old_shown_ms > 0 && v->new_shown_ms > 0;
    cp_fmt_ms_pair(set ? v->new_shown_ms : v->new_median_ms,
                   set ? v->old_shown_ms : v->old_median_ms, ratio_decimals, t_new, t_old, size);
}
