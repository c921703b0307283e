/* Timing statistics over repeated runs (cuproof/stats.h): a variant's
 * median, extremes and standard deviation from its samples, and the mean
 * with the population or the sample standard deviation. */
#include <cuproof/stats.h>

#include <cuproof/error.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cp_timing_compute(const double *samples, size_t n, cp_timing *out)
{
    if (n == 0)
        return CP_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(samples[i]) || samples[i] < 0)
            return CP_EINVAL;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return CP_ENOMEM;
    memcpy(s, samples, n * sizeof *s);
    qsort(s, n, sizeof *s, dbl_cmp);
    double mean, std;
    cp_mean_std(s, n, &mean, &std);
    out->runs = (int)n;
    out->min_ms = s[0];
    out->max_ms = s[n - 1];
    out->median_ms = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    out->stddev_ms = std;
    free(s);
    return 0;
}

void cp_mean_std(const double *v, size_t n, double *mean, double *std)
{
    double sum = 0, var = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    *mean = n ? sum / (double)n : 0;
    for (size_t i = 0; i < n; i++)
        var += (v[i] - *mean) * (v[i] - *mean);
    *std = n ? sqrt(var / (double)n) : 0;
}

void cp_mean_sample_sd(const double *v, size_t n, double *mean, double *sd)
{
    cp_mean_std(v, n, mean, sd);
    *sd = n > 1 ? *sd * sqrt((double)n / (double)(n - 1)) : 0;
}
