/*
 * Statistics for cuproof compare: the Mann-Whitney U test (exact for small
 * samples, normal approximation otherwise), a seeded percentile bootstrap
 * for the ratio of medians, the Hodges-Lehmann shift and the verdict.
 * Contracts in include/cuproof/internal/compare_stats.h.
 */
#include <cuproof/internal/compare_stats.h>
#include <cuproof/error.h>
#include <cuproof/metrics.h>
#include <cuproof/result.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *cp_cmp_verdict_name(cp_cmp_verdict v)
{
    switch (v) {
    case CP_CMP_SAME:
        return "same";
    case CP_CMP_FASTER:
        return "faster";
    case CP_CMP_SLOWER:
        return "slower";
    case CP_CMP_NOISY:
        return "noisy";
    case CP_CMP_SINGLE_RUN:
        return "single run";
    }
    return "unknown";
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int all_finite(const double *v, size_t n, int positive)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]) || (positive && !(v[i] > 0)))
            return 0;
    return 1;
}

/* Median of n >= 1 sorted values. */
static double sorted_median(const double *v, size_t n)
{
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Median of n >= 1 values, sorting `v` in place. */
static double median_inplace(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return sorted_median(v, n);
}

typedef struct {
    double v;
    int group; /* 0: a, 1: b */
} ranked;

static int cmp_ranked(const void *x, const void *y)
{
    return cmp_double(&((const ranked *)x)->v, &((const ranked *)y)->v);
}

/* Exact two-sided p of the rank sum of the `k` values marked `in` among
 * `n` with doubled midranks `w2` (integers). */
static int exact_p(const int *w2, const unsigned char *in, size_t n, size_t k, double *p)
{
    long max_sum = 0, obs = 0;
    for (size_t i = 0; i < n; i++) {
        max_sum += w2[i];
        if (in[i])
            obs += w2[i];
    }
    size_t width = (size_t)max_sum + 1;
    double *dp = calloc((k + 1) * width, sizeof *dp);
    if (!dp)
        return cp_failf(CP_ENOMEM, "out of memory for an exact rank test of %zu values", n);
    dp[0] = 1; /* dp[j * width + s]: subsets of size j with doubled rank sum s */
    for (size_t i = 0; i < n; i++)
        for (size_t j = (i + 1 < k ? i + 1 : k); j >= 1; j--)
            for (long s = max_sum; s >= w2[i]; s--)
                dp[j * width + (size_t)s] += dp[(j - 1) * width + (size_t)(s - w2[i])];
    double total = 0, le = 0, ge = 0;
    for (long s = 0; s <= max_sum; s++) {
        double c = dp[k * width + (size_t)s];
        total += c;
        if (s <= obs)
            le += c;
        if (s >= obs)
            ge += c;
    }
    free(dp);
    double two = 2 * fmin(le, ge) / total;
    *p = two > 1 ? 1 : two;
    return 0;
}

int cp_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u, double *p)
{
    if (!a || !b || !p || na == 0 || nb == 0 || !all_finite(a, na, 0) || !all_finite(b, nb, 0))
        return cp_failf(CP_EINVAL, "the rank test wants two non-empty sets of finite values");
    size_t n = na + nb;
    ranked *r = malloc(n * sizeof *r);
    int *w2 = malloc(n * sizeof *w2);
    unsigned char *in = malloc(n);
    if (!r || !w2 || !in) {
        free(r);
        free(w2);
        free(in);
        return cp_failf(CP_ENOMEM, "out of memory for a rank test of %zu values", n);
    }
    for (size_t i = 0; i < na; i++)
        r[i] = (ranked){a[i], 0};
    for (size_t j = 0; j < nb; j++)
        r[na + j] = (ranked){b[j], 1};
    qsort(r, n, sizeof *r, cmp_ranked);
    /* Midranks (1-based), doubled to stay integers; tie sizes for the variance. */
    double rank_sum_a = 0, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && r[j + 1].v == r[i].v)
            j++;
        int doubled = (int)(i + 1 + j + 1); /* 2 * (i+1 + j+1) / 2 */
        double t = (double)(j - i + 1);
        ties += t * t * t - t;
        for (size_t m = i; m <= j; m++) {
            w2[m] = doubled;
            if (r[m].group == 0)
                rank_sum_a += doubled / 2.0;
        }
        i = j + 1;
    }
    double ua = rank_sum_a - (double)na * (double)(na + 1) / 2;
    if (u)
        *u = ua;
    int rc = 0;
    size_t small = na < nb ? na : nb;
    if (small < CP_CMP_EXACT_BELOW && n <= 64) {
        int group = na <= nb ? 0 : 1;
        for (size_t i = 0; i < n; i++)
            in[i] = r[i].group == group;
        rc = exact_p(w2, in, n, small, p);
    } else {
        double mu = (double)na * (double)nb / 2;
        double var = (double)na * (double)nb / 12 *
                     ((double)(n + 1) - ties / ((double)n * (double)(n - 1)));
        if (!(var > 0)) {
            *p = 1;
        } else {
            double z = (fabs(ua - mu) - 0.5) / sqrt(var);
            *p = z > 0 ? erfc(z / sqrt(2.0)) : 1;
        }
    }
    free(r);
    free(w2);
    free(in);
    return rc;
}

/* splitmix64 (Steele, Lea, Flood 2014): small, fast, the same everywhere. */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) without modulo bias worth speaking of for n < 2^32. */
static size_t below(uint64_t *s, size_t n)
{
    return (size_t)(((splitmix64(s) >> 32) * (uint64_t)n) >> 32);
}

/* Quantile q of n sorted values, linear between order statistics. */
static double quantile(const double *v, size_t n, double q)
{
    double h = q * (double)(n - 1);
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return v[n - 1];
    return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

int cp_median_ratio_ci(const double *old_ms, size_t n_old, const double *new_ms, size_t n_new,
                       uint64_t seed, int resamples, double level, double *ratio, double *low,
                       double *high)
{
    if (!old_ms || !new_ms || !low || !high || n_old == 0 || n_new == 0 ||
        !all_finite(old_ms, n_old, 1) || !all_finite(new_ms, n_new, 1) || resamples < 1 ||
        !(level > 0 && level < 1))
        return cp_failf(CP_EINVAL, "the bootstrap wants two non-empty sets of finite times > 0, "
                                   "resamples >= 1 and a level in (0, 1)");
    size_t big = n_old > n_new ? n_old : n_new;
    double *buf = malloc(big * sizeof *buf);
    double *ratios = malloc((size_t)resamples * sizeof *ratios);
    if (!buf || !ratios) {
        free(buf);
        free(ratios);
        return cp_failf(CP_ENOMEM, "out of memory for %d bootstrap resamples", resamples);
    }
    if (ratio) {
        memcpy(buf, old_ms, n_old * sizeof *buf);
        double mo = median_inplace(buf, n_old);
        memcpy(buf, new_ms, n_new * sizeof *buf);
        *ratio = median_inplace(buf, n_new) / mo;
    }
    uint64_t state = seed;
    for (int i = 0; i < resamples; i++) {
        for (size_t k = 0; k < n_old; k++)
            buf[k] = old_ms[below(&state, n_old)];
        double mo = median_inplace(buf, n_old);
        for (size_t k = 0; k < n_new; k++)
            buf[k] = new_ms[below(&state, n_new)];
        ratios[i] = median_inplace(buf, n_new) / mo;
    }
    qsort(ratios, (size_t)resamples, sizeof *ratios, cmp_double);
    *low = quantile(ratios, (size_t)resamples, (1 - level) / 2);
    *high = quantile(ratios, (size_t)resamples, (1 + level) / 2);
    free(buf);
    free(ratios);
    return 0;
}

int cp_hodges_lehmann(const double *a, size_t na, const double *b, size_t nb, double *shift)
{
    if (!a || !b || !shift || na == 0 || nb == 0 || !all_finite(a, na, 0) ||
        !all_finite(b, nb, 0))
        return cp_failf(CP_EINVAL, "the Hodges-Lehmann shift wants two non-empty sets of "
                                   "finite values");
    if (nb > ((size_t)-1) / sizeof(double) / na)
        return cp_failf(CP_ENOMEM, "too many pairs for the Hodges-Lehmann shift");
    double *d = malloc(na * nb * sizeof *d);
    if (!d)
        return cp_failf(CP_ENOMEM, "out of memory for %zu pairs", na * nb);
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
            d[i * nb + j] = b[j] - a[i];
    *shift = median_inplace(d, na * nb);
    free(d);
    return 0;
}

int cp_compare_samples(const double *old_ms, size_t n_old, const double *new_ms, size_t n_new,
                       double threshold, double min_effect, uint64_t seed, cp_cmp_result *out)
{
    if (!out || !(threshold >= 0) || !isfinite(threshold) || !(min_effect >= 0) ||
        !isfinite(min_effect))
        return cp_failf(CP_EINVAL, "compare wants a result, and a threshold and minimum effect "
                                   ">= 0");
    memset(out, 0, sizeof *out);
    out->n_old = n_old;
    out->n_new = n_new;
    int rc = cp_median_ratio_ci(old_ms, n_old, new_ms, n_new, seed, CP_CMP_RESAMPLES,
                                CP_CMP_LEVEL, &out->ratio, &out->ci_low, &out->ci_high);
    if (rc == 0)
        rc = cp_mann_whitney(new_ms, n_new, old_ms, n_old, NULL, &out->p);
    if (rc == 0)
        rc = cp_hodges_lehmann(old_ms, n_old, new_ms, n_new, &out->shift_ms);
    if (rc)
        return rc;
    if (n_old < CP_CMP_MIN_SAMPLES || n_new < CP_CMP_MIN_SAMPLES)
        out->verdict = CP_CMP_NOISY;
    else if (out->p < CP_CMP_ALPHA && out->ci_low > 1 + min_effect)
        out->verdict = CP_CMP_SLOWER;
    else if (out->p < CP_CMP_ALPHA && out->ci_high < 1 - min_effect)
        out->verdict = CP_CMP_FASTER;
    else if (out->ci_high - out->ci_low > 2 * threshold)
        out->verdict = CP_CMP_NOISY;
    else
        out->verdict = CP_CMP_SAME;
    return 0;
}

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

uint64_t cp_variant_busy_ns(const cp_variant_result *v)
{
    return v->traced ? v->metrics.kernel_busy_ns + v->metrics.copy_busy_ns : 0;
}

uint64_t cp_metrics_own_ns(const cp_metrics *m)
{
    /* A pageable copy of no time cannot be: a report from before
     * pageable_copy_sum_ns reads 0 there, and all its copy time is taken
     * as theirs. */
    uint64_t pageable = m->pageable_copy_sum_ns ? m->pageable_copy_sum_ns
                        : m->pageable_copies    ? m->copy_busy_ns
                                                : 0;
    if (m->idle_ns > m->span_ns)
        return 0;
    uint64_t busy = m->span_ns - m->idle_ns;
    return busy > pageable ? busy - pageable : 0;
}

uint64_t cp_variant_own_ns(const cp_variant_result *v)
{
    return v->traced ? cp_metrics_own_ns(&v->metrics) : 0;
}

uint64_t cp_pass_own_ns(const cp_run_value *r)
{
    return r->traced ? cp_metrics_own_ns(&r->metrics) : r->device_busy_ns;
}

double cp_variant_device_share(const cp_variant_result *v, double median_ms)
{
    const cp_metrics *m = &v->metrics;
    if (!v->traced || !has_metric(v, "span_ns") || !has_metric(v, "idle_ns"))
        return NAN;
    if (!(m->span_ns > 0) || m->idle_ns > m->span_ns || !(median_ms > 0))
        return NAN;
    /* Before pageable_copy_sum_ns, a report with pageable copies counts
     * all its copy time as theirs (cp_metrics_own_ns). */
    cp_metrics own = *m;
    if (!has_metric(v, "pageable_copy_sum_ns"))
        own.pageable_copy_sum_ns = 0;
    return (double)cp_metrics_own_ns(&own) / 1e6 / median_ms;
}

bool cp_variant_judged_on_gpu(const cp_variant_result *v)
{
    return v->figure == CP_WORK_GPU && v->ngpu_samples && v->gpu_timing.median_ms > 0;
}

bool cp_variant_declared_wall(const cp_variant_result *v)
{
    return v->figure == CP_WORK_WALL && v->figure_why[0] && strcmp(v->figure_why, CP_WALL_ONLY);
}

bool cp_variant_judged_on_busy(const cp_variant_result *v)
{
    /* Not a gated one: its events run from the gate's end, its traced run
     * (ungated) at the host's pace, and their work overlaps otherwise
     * (conway-streams streams-8 on the H200: own busy time 1.75 ms traced,
     * 1.38 to 1.48 ms in its gated timed runs), so the traced run does not
     * describe its events; they agree with CUPTI's span of the same runs
     * within 4%. */
    return cp_variant_judged_on_gpu(v) && v->traced && !v->gated &&
           !(cp_variant_device_share(v, v->gpu_timing.median_ms) >= CP_CMP_EVENTS_SHARE);
}
