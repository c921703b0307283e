/* Timing statistics over repeated runs. */
#ifndef CUPROOF_STATS_H
#define CUPROOF_STATS_H

#include "export.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_timing {
    int runs;
    double median_ms, min_ms, max_ms, stddev_ms;
} cp_timing;

/*
 * Fills `out` from `n` samples in milliseconds: the median (mean of the two
 * middle values for even n), extremes and the population standard deviation.
 * Returns 0, CP_EINVAL when n is 0 or a sample is negative or not finite, or
 * CP_ENOMEM. `samples` is not modified.
 */
CP_API int cp_timing_compute(const double *samples, size_t n, cp_timing *out);

/* Mean and population standard deviation of n values (0 and 0 for n = 0). */
CP_API void cp_mean_std(const double *v, size_t n, double *mean, double *std);

/* Mean and sample standard deviation (n - 1) of n values, as the spread
 * of a few runs is estimated (sd 0 for fewer than 2; mean 0 for none). */
CP_API void cp_mean_sample_sd(const double *v, size_t n, double *mean, double *sd);

#ifdef __cplusplus
}
#endif

#endif
