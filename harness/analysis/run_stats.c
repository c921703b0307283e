/*
 * Run-level statistics for cuproof compare ("compare the run, not the
 * sample"): Welch's t on the logarithms of per-run values, the
 * one-sample t on the log ratios of back-to-back A/B pairs, the sequential
 * stopping rule for pairs, and the t distribution (through the regularized
 * incomplete beta function) that they rest on. libc and libm only.
 * Contracts in include/cuproof/internal/run_stats.h.
 */
#include <cuproof/internal/run_stats.h>
#include <cuproof/error.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Continued fraction of the incomplete beta function (modified Lentz,
 * as in Numerical Recipes' betacf); converges fast for x < (a+1)/(a+b+2). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double qab = a + b, qap = a + 1, qam = a - 1;
    double c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 500; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        if (fabs(d) < tiny)
            d = tiny;
        c = 1 + aa / c;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        if (fabs(d) < tiny)
            d = tiny;
        c = 1 + aa / c;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-15)
            break;
    }
    return h;
}

/* Regularized incomplete beta I_x(a, b), a, b > 0, x in [0, 1]. */
static double inc_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    double bt = exp(lbt);
    if (x < (a + 1) / (a + b + 2))
        return bt * beta_cf(a, b, x) / a;
    return 1 - bt * beta_cf(b, a, 1 - x) / b;
}

double cp_t_two_sided_p(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return 0;
    return inc_beta(df / 2, 0.5, df / (df + t * t));
}

double cp_t_quantile(double q, double df)
{
    if (!(q > 0 && q < 1) || !(df > 0))
        return NAN;
    if (q == 0.5)
        return 0;
    /* P(T > t) = p_two(t) / 2 for t > 0; solve for the upper tail u. */
    double u = q > 0.5 ? 1 - q : q;
    double hi = 1;
    while (cp_t_two_sided_p(hi, df) / 2 > u && hi < 1e300)
        hi *= 2;
    double lo = 0;
    /* Bisection: 200 halvings reach the double's resolution of any
     * bracket, and give the same answer on every machine. */
    for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (cp_t_two_sided_p(mid, df) / 2 > u)
            lo = mid;
        else
            hi = mid;
    }
    double t = 0.5 * (lo + hi);
    return q > 0.5 ? t : -t;
}

static int finite_positive(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]) || !(v[i] > 0))
            return 0;
    return 1;
}

static int finite_nonnegative(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]) || v[i] < 0)
            return 0;
    return 1;
}

/* Mean and sample variance (n - 1) of log(v[i]), by Welford's update (no
 * cancellation when the values are close, which run times are). */
static void log_moments(const double *v, size_t n, double *mean, double *var)
{
    double m = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        double x = log(v[i]);
        double d = x - m;
        m += d / (double)(i + 1);
        s += d * (x - m);
    }
    *mean = m;
    *var = n > 1 ? s / (double)(n - 1) : 0;
}

/* Mean of rse[i]^2: the within-run variance of a run's log value (a
 * relative standard error is, to first order, the sd of the log). */
static double mean_sq(const double *rse, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += rse[i] * rse[i];
    return s / (double)n;
}

/*
 * The smallest count k in [2, CP_RUN_MAX_RUNS] for which a design whose
 * standard error of the log difference is sqrt(var_unit / k) (var_unit:
 * the variance that one unit adds, per the caller) with df(k) degrees of
 * freedom tells a change of `threshold` from none: (t_{1 - alpha/2} +
 * t_{power}) SE <= log(1 + threshold), the usual sample-size rule for a
 * two-sided test at alpha with the given power. *capped when even the cap
 * does not.
 */
static size_t units_needed(double var_unit, double threshold, double alpha, int pairs,
                           bool *capped)
{
    *capped = false;
    double target = log1p(threshold);
    if (!(var_unit > 0))
        return 2;
    for (size_t k = 2; k <= CP_RUN_MAX_RUNS; k++) {
        double df = pairs ? (double)(k - 1) : 2.0 * (double)(k - 1);
        double z = cp_t_quantile(1 - alpha / 2, df) + cp_t_quantile(CP_RUN_POWER, df);
        if (z * sqrt(var_unit / (double)k) <= target)
            return k;
    }
    *capped = true;
    return CP_RUN_MAX_RUNS;
}

/* The verdict from a significance p at `alpha`, an interval of the ratio,
 * the threshold and the minimum effect (the rules in run_stats.h). */
static cp_cmp_verdict verdict_of(double p, double alpha, double lo, double hi, double threshold,
                                 double min_effect)
{
    if (p < alpha && lo > 1 + min_effect)
        return CP_CMP_SLOWER;
    if (p < alpha && hi < 1 - min_effect)
        return CP_CMP_FASTER;
    /* Same: no change of the threshold, and none beyond the minimum
     * effect that the interval shows (an interval wholly above 1.02 that
     * is not yet significant is a likely change, not "same"). */
    if (lo > 1 - threshold && hi < 1 + threshold && !(lo > 1 + min_effect) &&
        !(hi < 1 - min_effect))
        return CP_CMP_SAME;
    return CP_CMP_NOISY;
}

/* p and interval of a difference of logs `diff` with standard error `se`
 * and `df` degrees of freedom; a zero standard error is certainty. */
static void t_test(double diff, double se, double df, double level, double *p, double *lo,
                   double *hi)
{
    if (!(se > 0)) {
        *p = diff == 0 ? 1 : 0;
        *lo = *hi = exp(diff);
        return;
    }
    *p = cp_t_two_sided_p(diff / se, df);
    double h = cp_t_quantile((1 + level) / 2, df) * se;
    *lo = exp(diff - h);
    *hi = exp(diff + h);
}

/* A noisy verdict's runs a side that would decide, from the variance of
 * a difference of one run a side: undecided with these runs, so more than
 * these are needed even when the estimate says they should have sufficed
 * (it is an estimate from a few runs); capped at CP_RUN_MAX_RUNS. */
static void noisy_runs_needed(cp_run_cmp *out, double var_unit, double threshold)
{
    out->runs_needed = units_needed(var_unit, threshold, CP_RUN_ALPHA, 0, &out->runs_capped);
    size_t more = (out->n_old > out->n_new ? out->n_old : out->n_new) + 1;
    if (out->runs_needed < more && !out->runs_capped)
        out->runs_needed = more;
    if (out->runs_needed > CP_RUN_MAX_RUNS) {
        out->runs_needed = CP_RUN_MAX_RUNS;
        out->runs_capped = true;
    }
}

int cp_compare_runs(const double *old_runs, size_t n_old, const double *new_runs, size_t n_new,
                    const double *old_rse, const double *new_rse, double threshold,
                    double min_effect, cp_run_cmp *out)
{
    if (!out || !old_runs || !new_runs || n_old == 0 || n_new == 0 ||
        !finite_positive(old_runs, n_old) || !finite_positive(new_runs, n_new) ||
        (old_rse && !finite_nonnegative(old_rse, n_old)) ||
        (new_rse && !finite_nonnegative(new_rse, n_new)) || !(threshold >= 0) ||
        !isfinite(threshold) || !(min_effect >= 0) || !isfinite(min_effect))
        return cp_failf(CP_EINVAL, "a run comparison wants at least one run a side, each a "
                                   "finite time > 0, relative errors finite and >= 0, and a "
                                   "threshold and minimum effect >= 0");
    memset(out, 0, sizeof *out);
    out->n_old = n_old;
    out->n_new = n_new;
    double m_old, v_old, m_new, v_new;
    log_moments(old_runs, n_old, &m_old, &v_old);
    log_moments(new_runs, n_new, &m_new, &v_new);
    out->ratio = exp(m_new - m_old);
    out->spread_old = sqrt(v_old);
    out->spread_new = sqrt(v_new);
    out->within_old = old_rse ? sqrt(mean_sq(old_rse, n_old)) : 0;
    out->within_new = new_rse ? sqrt(mean_sq(new_rse, n_new)) : 0;
    /* What a side's runs spread by, as used: the between-run variance, but
     * never less than the within-run variance of one run's value (the
     * runs cannot vary by less than their own values are uncertain; a
     * handful of runs can happen to agree closely). Only ever wider. */
    double u_old = fmax(v_old, out->within_old * out->within_old);
    double u_new = fmax(v_new, out->within_new * out->within_new);
    if (n_old < 2 || n_new < 2) {
        /* No between-run spread on (at least) one side: no test. The runs
         * needed come from whatever spread is known (assumed the same on
         * both sides); none known, 0. */
        out->verdict = CP_CMP_SINGLE_RUN;
        out->p = 1;
        out->ci_low = 0;
        out->ci_high = INFINITY;
        out->df = 0;
        double known = fmax(n_old > 1 ? u_old : out->within_old * out->within_old,
                            n_new > 1 ? u_new : out->within_new * out->within_new);
        if (known > 0 || n_old > 1 || n_new > 1)
            out->runs_needed =
                units_needed(2 * known, threshold, CP_RUN_ALPHA, 0, &out->runs_capped);
        return 0;
    }
    /* Welch: each side its own variance, Welch-Satterthwaite df; a
     * newer build may well drift more than an older one. */
    double a = u_old / (double)n_old, b = u_new / (double)n_new;
    double se = sqrt(a + b);
    double df = a + b > 0 ? (a + b) * (a + b) /
                                (a * a / (double)(n_old - 1) + b * b / (double)(n_new - 1))
                          : (double)(n_old + n_new - 2);
    out->df = df;
    t_test(m_new - m_old, se, df, CP_CMP_LEVEL, &out->p, &out->ci_low, &out->ci_high);
    out->verdict =
        verdict_of(out->p, CP_RUN_ALPHA, out->ci_low, out->ci_high, threshold, min_effect);
    if (out->verdict == CP_CMP_NOISY)
        noisy_runs_needed(out, u_old + u_new, threshold);
    return 0;
}

double cp_f_upper(double f, double d1, double d2)
{
    if (!(f > 0) || !(d1 > 0) || !(d2 > 0))
        return 1;
    return inc_beta(d2 / 2, d1 / 2, d2 / (d2 + d1 * f));
}

/* The F distribution's q quantile (upper tail 1 - q) by bisection. */
static double f_quantile(double q, double d1, double d2)
{
    double lo = 0, hi = 1;
    while (cp_f_upper(hi, d1, d2) > 1 - q && hi < 1e300)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (cp_f_upper(mid, d1, d2) > 1 - q)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

int cp_runs_variance(const double *old_runs, size_t n_old, const double *new_runs, size_t n_new,
                    double *var, double *df)
{
    if (!old_runs || !new_runs || !var || !df || n_old == 0 || n_new == 0 ||
        !finite_positive(old_runs, n_old) || !finite_positive(new_runs, n_new))
        return cp_failf(CP_EINVAL, "a run variance wants at least one run a side, each a finite "
                                   "time > 0");
    double m, v_old, v_new;
    log_moments(old_runs, n_old, &m, &v_old);
    log_moments(new_runs, n_new, &m, &v_new);
    *df = n_old < 2 || n_new < 2 ? 0 : (double)(n_old + n_new - 2);
    *var = *df > 0 ? ((double)(n_old - 1) * v_old + (double)(n_new - 1) * v_new) / *df : 0;
    return 0;
}

/* The digamma and trigamma functions: the recurrence up to x >= 6, then
 * their asymptotic series (error below 1e-12 there). */
static double digamma(double x)
{
    double r = 0;
    for (; x < 6; x += 1)
        r -= 1 / x;
    double f = 1 / (x * x);
    return r + log(x) - 0.5 / x -
           f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

static double trigamma(double x)
{
    double r = 0;
    for (; x < 6; x += 1)
        r += 1 / (x * x);
    double f = 1 / (x * x);
    return r + 1 / x + f / 2 + f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f / 30)));
}

/* The tetragamma function (the derivative of trigamma), likewise. */
static double tetragamma(double x)
{
    double r = 0;
    for (; x < 6; x += 1)
        r -= 2 / (x * x * x);
    double f = 1 / (x * x);
    return r - f - f / x -
           f * f * (0.5 - f * (1.0 / 6 - f * (1.0 / 6 - f * (3.0 / 10 - f * 5.0 / 6))));
}

/* The x > 0 with trigamma(x) = y > 0: Smyth's (2004) Newton iteration
 * from x = 0.5 + 1 / y, as limma's trigammaInverse. */
static double trigamma_inverse(double y)
{
    if (y > 1e7)
        return 1 / sqrt(y);
    if (y < 1e-6)
        return 1 / y;
    double x = 0.5 + 1 / y;
    for (int i = 0; i < 50; i++) {
        double t = trigamma(x);
        double step = t * (1 - t / y) / tetragamma(x);
        x += step;
        if (fabs(step) < 1e-8 * x)
            break;
    }
    return x;
}

int cp_runs_prior_from(const double *vars, const double *dfs, size_t n, cp_runs_prior *out)
{
    memset(out, 0, sizeof *out);
    /* Smyth's (2004) moments: e = log s^2 - digamma(d/2) + log(d/2) has
     * the mean log s0^2 - digamma(d0/2) + log(d0/2) and the variance
     * trigamma(d/2) + trigamma(d0/2), over the variants with a spread. */
    size_t used = 0;
    double sum = 0, tri = 0;
    for (size_t i = 0; i < n; i++)
        if (dfs[i] > 0 && isfinite(vars[i]) && vars[i] > 0) {
            sum += log(vars[i]) - digamma(dfs[i] / 2) + log(dfs[i] / 2);
            tri += trigamma(dfs[i] / 2);
            used++;
        }
    if (used < 3)
        return 0;
    double mean = sum / (double)used, ss = 0;
    for (size_t i = 0; i < n; i++)
        if (dfs[i] > 0 && isfinite(vars[i]) && vars[i] > 0) {
            double e = log(vars[i]) - digamma(dfs[i] / 2) + log(dfs[i] / 2) - mean;
            ss += e * e;
        }
    /* No excess: the variances scatter no more than sampling alone makes
     * them, one spread (d0 infinite, s0^2 = exp(mean)). */
    double excess = ss / (double)(used - 1) - tri / (double)used;
    double d0 = excess > 0 ? 2 * trigamma_inverse(excess) : INFINITY;
    out->var = isfinite(d0) ? exp(mean + digamma(d0 / 2) - log(d0 / 2)) : exp(mean);
    out->df = fmin(d0, CP_RUN_PRIOR_DF);
    return 0;
}

int cp_compare_runs_prior(const double *old_runs, size_t n_old, const double *new_runs,
                          size_t n_new, const double *old_rse, const double *new_rse,
                          double threshold, double min_effect, const cp_runs_prior *prior,
                          cp_run_cmp *out)
{
    int rc = cp_compare_runs(old_runs, n_old, new_runs, n_new, old_rse, new_rse, threshold,
                             min_effect, out);
    if (rc < 0 || !prior || !(prior->df > 0) || !(prior->var > 0) || n_old < 2 || n_new < 2)
        return rc;
    double var, df;
    cp_runs_variance(old_runs, n_old, new_runs, n_new, &var, &df);
    /* A variant that spreads more than the others is not described by
     * their spread: its own runs decide (cp_compare_runs' Welch test). */
    if (var / prior->var > f_quantile(0.95, df, prior->df))
        return 0;
    double mod = (prior->df * prior->var + df * var) / (prior->df + df);
    double floor_old = out->within_old * out->within_old;
    double floor_new = out->within_new * out->within_new;
    mod = fmax(mod, fmax(floor_old, floor_new));
    double se = sqrt(mod * (1.0 / (double)n_old + 1.0 / (double)n_new));
    double m_old, m_new, v;
    log_moments(old_runs, n_old, &m_old, &v);
    log_moments(new_runs, n_new, &m_new, &v);
    out->moderated = true;
    out->df = prior->df + df;
    out->runs_needed = 0;
    out->runs_capped = false;
    t_test(m_new - m_old, se, out->df, CP_CMP_LEVEL, &out->p, &out->ci_low, &out->ci_high);
    out->verdict =
        verdict_of(out->p, CP_RUN_ALPHA, out->ci_low, out->ci_high, threshold, min_effect);
    if (out->verdict == CP_CMP_NOISY)
        noisy_runs_needed(out, 2 * mod, threshold);
    return 0;
}

/* The paired test at significance `alpha` and interval `level`. */
static int pairs_at(const double *lr, size_t n, double threshold, double min_effect,
                    double alpha, double level, cp_pair_cmp *out)
{
    if (!out || !lr || n == 0 || !(threshold >= 0) || !isfinite(threshold) ||
        !(min_effect >= 0) || !isfinite(min_effect))
        return cp_failf(CP_EINVAL, "a paired comparison wants at least one pair and a "
                                   "threshold and minimum effect >= 0");
    for (size_t i = 0; i < n; i++)
        if (!isfinite(lr[i]))
            return cp_failf(CP_EINVAL, "log ratio %zu is not finite", i);
    memset(out, 0, sizeof *out);
    out->n = n;
    out->alpha = alpha;
    out->level = level;
    double m = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        double d = lr[i] - m;
        m += d / (double)(i + 1);
        s += d * (lr[i] - m);
    }
    double var = n > 1 ? s / (double)(n - 1) : 0;
    out->ratio = exp(m);
    out->spread = sqrt(var);
    if (n < 2) {
        out->verdict = CP_CMP_SINGLE_RUN;
        out->p = 1;
        out->ci_low = 0;
        out->ci_high = INFINITY;
        return 0;
    }
    t_test(m, sqrt(var / (double)n), (double)(n - 1), level, &out->p, &out->ci_low,
           &out->ci_high);
    out->verdict = verdict_of(out->p, alpha, out->ci_low, out->ci_high, threshold, min_effect);
    if (out->verdict == CP_CMP_NOISY) {
        out->pairs_needed = units_needed(var, threshold, alpha, 1, &out->pairs_capped);
        if (out->pairs_needed <= n && !out->pairs_capped)
            out->pairs_needed = n + 1; /* as for runs: these did not decide */
        if (out->pairs_needed > CP_RUN_MAX_RUNS) {
            out->pairs_needed = CP_RUN_MAX_RUNS;
            out->pairs_capped = true;
        }
    }
    return 0;
}

int cp_compare_pairs(const double *log_ratios, size_t n, double threshold, double min_effect,
                     cp_pair_cmp *out)
{
    int rc = pairs_at(log_ratios, n, threshold, min_effect, CP_RUN_ALPHA, CP_CMP_LEVEL, out);
    if (rc == 0)
        out->decided = out->verdict != CP_CMP_NOISY && out->verdict != CP_CMP_SINGLE_RUN;
    return rc;
}

int cp_pairs_decided(const double *log_ratios, size_t n, double threshold, double min_effect,
                     size_t min_pairs, size_t budget, cp_pair_cmp *out)
{
    if (min_pairs < 2 || budget < min_pairs || n > budget)
        return cp_failf(CP_EINVAL, "the stopping rule wants 2 <= min_pairs (%zu) <= budget "
                                   "(%zu) and no more pairs (%zu) than the budget",
                        min_pairs, budget, n);
    /* Bonferroni over the looks at min_pairs, ..., budget pairs: each look
     * spends alpha / looks of the false-alarm risk, and (1 - level) /
     * looks of the risk of "same" for a change of threshold. */
    double looks = (double)(budget - min_pairs + 1);
    int rc = pairs_at(log_ratios, n, threshold, min_effect, CP_RUN_ALPHA / looks,
                      1 - (1 - CP_CMP_LEVEL) / looks, out);
    if (rc)
        return rc;
    if (n < min_pairs)
        out->decided = false;
    else
        out->decided = n == budget ||
                       (out->verdict != CP_CMP_NOISY && out->verdict != CP_CMP_SINGLE_RUN);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cp_median_inplace(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double cp_median_rse_log(const double *samples, size_t n)
{
    if (n < 3)
        return 0;
    double m = 0, ss = 0;
    for (size_t k = 0; k < n; k++)
        m += log(samples[k]) / (double)n;
    for (size_t k = 0; k < n; k++) {
        double d = log(samples[k]) - m;
        ss += d * d;
    }
    return 1.2533 * sqrt(ss / (double)(n - 1)) / sqrt((double)n);
}

double cp_geomean(const double *v, size_t n)
{
    double l = 0;
    for (size_t i = 0; i < n; i++)
        l += log(v[i]) / (double)n;
    return exp(l);
}
