/* The result model's own helpers: names of statuses and verdicts, series
 * and freeing. Plain data, no CUDA: reports and replays use them too. */
#include <cuproof/result.h>

#include <cuproof/error.h>
#include <cuproof/stats.h>
#include <cuproof/units.h>
#include <cuproof/internal/compare_stats.h>
#include <cuproof/internal/grow.h>
#include <cuproof/internal/ranks.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {"passed", "failed", "skipped", "inconclusive"};
#define NSTATUS (sizeof status_names / sizeof status_names[0])
static const char *const verdict_names[] = {"confirmed", "refuted", "not measured", "exceeded",
                                            "fell short"};
#define NVERDICT (sizeof verdict_names / sizeof verdict_names[0])

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
    return (unsigned)v < NVERDICT ? verdict_names[v] : "unknown";
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
    for (int i = 0; s && i < (int)NVERDICT; i++)
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
    void *p = cp_grow(*items, cap, n, size, 8);
    if (!p) {
        cp_failf(CP_ENOMEM, "out of memory growing a result list");
        return NULL;
    }
    *items = p;
    void *slot = (char *)p + n * size;
    memset(slot, 0, size);
    return slot;
}

cp_check_result *cp_result_add_check(cp_case_result *r)
{
    cp_check_result *e = grow((void **)&r->checks, r->nchecks, &r->checks_cap, sizeof *e);
    r->nchecks += e != NULL;
    return e;
}

const cp_variant_result *cp_case_variant(const cp_case_result *c, const char *name)
{
    for (size_t i = 0; c && i < c->nvariants; i++)
        if (strcmp(c->variants[i].name, name) == 0)
            return &c->variants[i];
    return NULL;
}

const cp_case_result *cp_report_case(const cp_report *r, const char *name)
{
    for (size_t i = 0; r && i < r->ncases; i++)
        if (strcmp(r->cases[i].name, name) == 0)
            return &r->cases[i];
    return NULL;
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
        for (size_t k = 0; k < v->nruns; k++) {
            free(v->runs[k].samples_ms);
            free(v->runs[k].gpu_samples_ms);
        }
        free(v->runs);
        v->runs = NULL;
        v->nruns = 0;
        cp_series_free(v->series, v->nseries);
        free(v->samples_ms);
        free(v->gpu_samples_ms);
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

/* A copy of n values into *out (NULL for none); false when out of memory. */
static bool copy_values(const double *v, size_t n, double **out)
{
    *out = NULL;
    if (!n)
        return true;
    if (!(*out = malloc(n * sizeof **out)))
        return false;
    memcpy(*out, v, n * sizeof **out);
    return true;
}

/* One variant's timed samples as a run: a copy of them (wall and GPU
 * time), their medians, clocks, and the traced run's device time and
 * scalar metrics. */
static int run_of(const cp_variant_result *v, int pid, cp_run_value *out)
{
    memset(out, 0, sizeof *out);
    if (!copy_values(v->samples_ms, v->nsamples, &out->samples_ms) ||
        !copy_values(v->gpu_samples_ms, v->ngpu_samples, &out->gpu_samples_ms)) {
        free(out->samples_ms);
        return cp_failf(CP_ENOMEM, "out of memory keeping a pass's samples");
    }
    out->nsamples = v->nsamples;
    out->ngpu_samples = v->ngpu_samples;
    cp_timing t;
    if (cp_timing_compute(v->samples_ms, v->nsamples, &t) == 0)
        out->median_ms = t.median_ms;
    if (cp_timing_compute(v->gpu_samples_ms, v->ngpu_samples, &t) == 0)
        out->gpu_median_ms = t.median_ms;
    /* A pass of several processes: the median of theirs, so that one
     * process's level does not pull the pass (the pooled samples' median
     * leans to whichever process took the most samples). */
    if (v->nprocesses > 1 && cp_timing_compute(v->process_ms, (size_t)v->nprocesses, &t) == 0)
        out->median_ms = t.median_ms;
    memcpy(out->process_ms, v->process_ms, sizeof out->process_ms);
    out->nprocesses = v->nprocesses;
    /* The GPU's: the mean of theirs (cp_case_result_add_process says why). */
    if (v->ngpu_processes > 1) {
        double mean, sd;
        cp_mean_std(v->gpu_process_ms, (size_t)v->ngpu_processes, &mean, &sd);
        out->gpu_median_ms = mean;
    }
    memcpy(out->gpu_process_ms, v->gpu_process_ms, sizeof out->gpu_process_ms);
    out->ngpu_processes = v->ngpu_processes;
    out->clocks_before = v->clocks_before;
    out->clocks_after = v->clocks_after;
    out->device_busy_ns = cp_variant_busy_ns(v);
    out->pid = pid;
    out->traced = v->traced;
    if (v->traced) {
        out->metrics = v->metrics;
        out->metrics.lanes = NULL;
        out->metrics.graphs = NULL;
        out->metrics.device_metrics = NULL;
        out->metrics.kernel_stats = NULL;
        out->metrics.collective_rows = NULL;
        out->metrics.ncollective_rows = 0;
        out->metrics.collective_size_rows = NULL;
        out->metrics.ncollective_size_rows = 0;
        out->metrics.nlanes = out->metrics.ngraphs = out->metrics.nkernel_stats = 0;
    }
    return 0;
}

static int add_run(cp_variant_result *v, const cp_variant_result *from, int pid)
{
    cp_run_value *r = realloc(v->runs, (v->nruns + 1) * sizeof *r);
    if (!r)
        return cp_failf(CP_ENOMEM, "out of memory keeping a pass's samples");
    v->runs = r;
    int rc = run_of(from, pid, &v->runs[v->nruns]);
    if (rc == 0)
        v->nruns++;
    return rc;
}

/* into's samples become every run's, and its timing theirs: the wall
 * time's, and the GPU time's where every run has it. */
static int pool_runs(cp_variant_result *v)
{
    size_t n = 0, ng = 0;
    bool every_gpu = true;
    for (size_t k = 0; k < v->nruns; k++) {
        n += v->runs[k].nsamples;
        ng += v->runs[k].ngpu_samples;
        every_gpu &= v->runs[k].ngpu_samples > 0;
    }
    double *all = malloc((n ? n : 1) * sizeof *all);
    double *gpu = malloc((ng ? ng : 1) * sizeof *gpu);
    if (!all || !gpu) {
        free(all);
        free(gpu);
        return cp_failf(CP_ENOMEM, "out of memory pooling a variant's runs");
    }
    size_t at = 0, gat = 0;
    for (size_t k = 0; k < v->nruns; k++) {
        memcpy(all + at, v->runs[k].samples_ms, v->runs[k].nsamples * sizeof *all);
        at += v->runs[k].nsamples;
        memcpy(gpu + gat, v->runs[k].gpu_samples_ms, v->runs[k].ngpu_samples * sizeof *gpu);
        gat += v->runs[k].ngpu_samples;
    }
    free(v->samples_ms);
    v->samples_ms = all;
    v->nsamples = n;
    free(v->gpu_samples_ms);
    v->gpu_samples_ms = NULL;
    v->ngpu_samples = 0;
    memset(&v->gpu_timing, 0, sizeof v->gpu_timing);
    if (every_gpu && ng) {
        v->gpu_samples_ms = gpu;
        v->ngpu_samples = ng;
        int rc = cp_timing_compute(gpu, ng, &v->gpu_timing);
        if (rc < 0)
            return rc;
    } else {
        free(gpu);
    }
    return n ? cp_timing_compute(all, n, &v->timing) : 0;
}

/* into's variant of that name, or NULL. */
static cp_variant_result *variant_named(cp_case_result *into, const char *name)
{
    for (size_t k = 0; k < into->nvariants; k++)
        if (strcmp(into->variants[k].name, name) == 0)
            return &into->variants[k];
    return NULL;
}

/* Each failed check of `from` (another pass or process of the same case)
 * added to `into`, named "WHAT N: its name", so that none is lost. */
static int keep_failed_checks(cp_case_result *into, const cp_case_result *from, const char *what,
                              int number)
{
    for (size_t i = 0; i < from->nchecks; i++) {
        if (from->checks[i].status != CP_CHECK_FAILED)
            continue;
        cp_check_result *k = cp_result_add_check(into);
        if (!k)
            return cp_failf(CP_ENOMEM, "out of memory keeping a %s's checks", what);
        *k = from->checks[i];
        snprintf(k->name, sizeof k->name, "%s %d: %.110s", what, number, from->checks[i].name);
    }
    return 0;
}

int cp_case_result_add_process(cp_case_result *into, const cp_case_result *proc, int number)
{
    for (size_t i = 0; i < proc->nvariants; i++) {
        const cp_variant_result *pv = &proc->variants[i];
        cp_variant_result *v = variant_named(into, pv->name);
        if (!v || !pv->nsamples || !v->nsamples)
            continue;
        if (v->nprocesses == 0)
            v->process_ms[v->nprocesses++] = v->timing.median_ms;
        if (v->nprocesses >= CP_MAX_PROCESSES)
            return cp_failf(CP_EINVAL, "case %s, variant %s: more than %d processes in one pass",
                            into->name, v->name, CP_MAX_PROCESSES);
        double *all = realloc(v->samples_ms, (v->nsamples + pv->nsamples) * sizeof *all);
        if (!all)
            return cp_failf(CP_ENOMEM, "out of memory keeping a process's samples");
        memcpy(all + v->nsamples, pv->samples_ms, pv->nsamples * sizeof *all);
        v->samples_ms = all;
        v->nsamples += pv->nsamples;
        v->process_ms[v->nprocesses++] = pv->timing.median_ms;
        int rc = cp_timing_compute(v->samples_ms, v->nsamples, &v->timing);
        if (rc < 0)
            return rc;
        /* The GPU's time pooled likewise, where both have it, each
         * process's median kept (into's own first). */
        if (v->ngpu_samples && pv->ngpu_samples) {
            if (v->ngpu_processes == 0)
                v->gpu_process_ms[v->ngpu_processes++] = v->gpu_timing.median_ms;
            v->gpu_process_ms[v->ngpu_processes++] = pv->gpu_timing.median_ms;
            double *g = realloc(v->gpu_samples_ms,
                                (v->ngpu_samples + pv->ngpu_samples) * sizeof *g);
            if (!g)
                return cp_failf(CP_ENOMEM, "out of memory keeping a process's samples");
            memcpy(g + v->ngpu_samples, pv->gpu_samples_ms, pv->ngpu_samples * sizeof *g);
            v->gpu_samples_ms = g;
            v->ngpu_samples += pv->ngpu_samples;
            if ((rc = cp_timing_compute(g, v->ngpu_samples, &v->gpu_timing)) < 0)
                return rc;
        }
    }
    if (proc->status == CP_STATUS_FAILED && into->status != CP_STATUS_FAILED) {
        into->status = CP_STATUS_FAILED;
        snprintf(into->error, sizeof into->error, "process %d: %.1000s", number,
                 proc->error[0] ? proc->error : "a check failed");
    }
    return keep_failed_checks(into, proc, "process", number);
}

int cp_case_result_add_pass(cp_case_result *into, const cp_case_result *pass, int number)
{
    for (size_t i = 0; i < pass->nvariants; i++) {
        const cp_variant_result *pv = &pass->variants[i];
        cp_variant_result *v = variant_named(into, pv->name);
        if (!v || !pv->nsamples)
            continue;
        int rc = 0;
        if (v->nruns == 0 && v->nsamples)
            rc = add_run(v, v, into->pid);
        if (rc == 0)
            rc = add_run(v, pv, pass->pid);
        if (rc == 0)
            rc = pool_runs(v);
        if (rc < 0)
            return rc;
    }
    bool failed = pass->status == CP_STATUS_FAILED;
    if ((failed || pass->status == CP_STATUS_INCONCLUSIVE) && into->status == CP_STATUS_PASSED) {
        into->status = pass->status;
        if (failed)
            snprintf(into->error, sizeof into->error, "pass %d: %.1000s", number, pass->error);
        else
            snprintf(into->skip_reason, sizeof into->skip_reason, "pass %d: %.490s", number,
                     pass->skip_reason);
    }
    /* Each windowed claim's value in this pass, beside the first's. */
    for (size_t i = 0; i < pass->nclaims; i++) {
        const cp_claim_result *pc = &pass->claims[i];
        for (size_t k = 0; pc->has_window && isfinite(pc->value) && k < into->nclaims; k++) {
            cp_claim_result *c = &into->claims[k];
            if (!c->has_window || strcmp(c->text, pc->text) != 0)
                continue;
            if (c->npass_values == 0 && isfinite(c->value))
                c->pass_values[c->npass_values++] = c->value;
            if (c->npass_values < CP_CLAIM_MAX_PASSES)
                c->pass_values[c->npass_values++] = pc->value;
            break;
        }
    }
    return keep_failed_checks(into, pass, "pass", number);
}

/* The figures a variant's passes can be judged on. */
typedef enum { BY_WALL, BY_GPU, BY_BUSY } judged_by;

/* A pass's value on the figure its variant is judged on (judged_figure). */
static double judged_value(const cp_run_value *r, judged_by by)
{
    return by == BY_BUSY  ? (double)cp_pass_own_ns(r) / 1e6
           : by == BY_GPU ? r->gpu_median_ms
                          : r->median_ms;
}

/* Which figure compare judges v's passes on, as for one report's: its own
 * busy time (cp_variant_judged_on_busy, every pass having one), the GPU's
 * time (every pass measured it), else wall time; named in *name. */
static judged_by judged_figure(const cp_variant_result *v, const char **name)
{
    bool gpu = cp_variant_judged_on_gpu(v), busy = gpu && cp_variant_judged_on_busy(v);
    for (size_t k = 0; k < v->nruns; k++) {
        gpu &= v->runs[k].gpu_median_ms > 0;
        busy &= cp_pass_own_ns(&v->runs[k]) > 0;
    }
    *name = busy ? "GPU own busy time (traced)" : gpu ? "GPU time" : "wall time";
    return busy ? BY_BUSY : gpu ? BY_GPU : BY_WALL;
}

bool cp_variant_run_spread(const cp_variant_result *v, double *rel_sd, double *max_over_min,
                           const char **figure)
{
    *rel_sd = *max_over_min = 0;
    *figure = "wall time";
    if (v->nruns < 2)
        return false;
    judged_by by = judged_figure(v, figure);
    double sum = 0, lo = judged_value(&v->runs[0], by), hi = lo;
    for (size_t k = 0; k < v->nruns; k++) {
        double m = judged_value(&v->runs[k], by);
        sum += m;
        lo = m < lo ? m : lo;
        hi = m > hi ? m : hi;
    }
    double mean = sum / (double)v->nruns, ss = 0;
    for (size_t k = 0; k < v->nruns; k++) {
        double d = judged_value(&v->runs[k], by) - mean;
        ss += d * d;
    }
    *rel_sd = mean > 0 ? sqrt(ss / (double)(v->nruns - 1)) / mean : 0;
    *max_over_min = lo > 0 ? hi / lo : 0;
    return true;
}

cp_verdict cp_claim_judge(const cp_claim_window *w, double value)
{
    if (!isfinite(value))
        return CP_VERDICT_NOT_MEASURED;
    if (value >= w->lo && value <= w->hi)
        return CP_VERDICT_CONFIRMED;
    /* Mirrored for a claim below its no-effect point (fewer, shorter). */
    bool up = w->none <= w->lo;
    double x = up ? value : -value, lo = up ? w->lo : -w->hi, hi = up ? w->hi : -w->lo;
    double none = up ? w->none : -w->none;
    if (x > hi)
        return CP_VERDICT_EXCEEDED;
    if (x > none && x < lo)
        return CP_VERDICT_FELL_SHORT;
    return CP_VERDICT_REFUTED;
}

/* "3x", "749 ms", "1 thread": a value of window w in its unit, which
 * agrees with it (the units table). */
static void with_unit(const cp_claim_window *w, double v, char *out, size_t len)
{
    bool tight = !strcmp(w->unit, "x") || !strcmp(w->unit, "%") || !w->unit[0];
    snprintf(out, len, "%.4g%s%s", v, tight ? "" : " ", cp_unit_agree(w->unit, v));
}

void cp_claim_rule(const cp_claim_window *w, char *out, size_t len)
{
    bool up = w->none <= w->lo;
    char lo[32], hi[32], none[32];
    with_unit(w, w->lo, lo, sizeof lo);
    with_unit(w, w->hi, hi, sizeof hi);
    with_unit(w, w->none, none, sizeof none);
    /* A claim open on its far side ("faster than 1.2x") cannot be
     * exceeded. */
    if (up ? isinf(w->hi) : isinf(w->lo))
        snprintf(out, len, "confirmed at %s or %s; fell short between %s and %s; refuted at %s "
                           "or %s",
                 up ? lo : hi, up ? "above" : "below", none, up ? lo : hi, none,
                 up ? "below" : "above");
    else
        snprintf(out, len, "confirmed from %s to %s; exceeded %s %s; fell short between %s and "
                           "%s; refuted at %s or %s",
                 lo, hi, up ? "above" : "below", up ? hi : lo, up ? none : hi, up ? lo : none,
                 none, up ? "below" : "above");
}

bool cp_claim_spread(const cp_claim_result *c, double *mean, double *sd, double *bound,
                     double *spreads)
{
    *mean = *sd = *bound = *spreads = 0;
    if (!c->has_window || c->npass_values < 2)
        return false;
    cp_mean_sample_sd(c->pass_values, c->npass_values, mean, sd);
    /* The bound nearest the mean: where the verdict changes. */
    double bounds[3] = {c->window.lo, c->window.hi, c->window.none};
    double best = INFINITY;
    for (size_t i = 0; i < 3; i++)
        if (isfinite(bounds[i]) && fabs(*mean - bounds[i]) < best) {
            best = fabs(*mean - bounds[i]);
            *bound = bounds[i];
        }
    *spreads = *sd > 0 ? best / *sd : INFINITY;
    return true;
}
