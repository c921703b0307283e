/* Timing statistics against values worked out by hand. */
#include <cuproof/error.h>
#include <cuproof/stats.h>

#include <criterion/criterion.h>
#include <math.h>

Test(stats, odd_count)
{
    double s[] = {5, 1, 3};
    cp_timing t;
    cr_assert_eq(cp_timing_compute(s, 3, &t), 0);
    cr_expect_eq(t.runs, 3);
    cr_expect_float_eq(t.median_ms, 3.0, 1e-12);
    cr_expect_float_eq(t.min_ms, 1.0, 1e-12);
    cr_expect_float_eq(t.max_ms, 5.0, 1e-12);
    /* mean 3, deviations 4+0+4 over 3 */
    cr_expect_float_eq(t.stddev_ms, sqrt(8.0 / 3.0), 1e-12);
    cr_expect_float_eq(s[0], 5.0, 0, "the samples are not reordered");
}

Test(stats, even_count_median_is_mean_of_middle)
{
    double s[] = {4, 1, 3, 2};
    cp_timing t;
    cr_assert_eq(cp_timing_compute(s, 4, &t), 0);
    cr_expect_float_eq(t.median_ms, 2.5, 1e-12);
}

Test(stats, single_sample)
{
    double s[] = {7.25};
    cp_timing t;
    cr_assert_eq(cp_timing_compute(s, 1, &t), 0);
    cr_expect_float_eq(t.median_ms, 7.25, 1e-12);
    cr_expect_float_eq(t.stddev_ms, 0.0, 1e-12);
}

Test(stats, rejects_bad_input)
{
    cp_timing t;
    double nan_s[] = {1, NAN};
    double neg[] = {-1};
    cr_expect_eq(cp_timing_compute(neg, 0, &t), CP_EINVAL);
    cr_expect_eq(cp_timing_compute(nan_s, 2, &t), CP_EINVAL);
    cr_expect_eq(cp_timing_compute(neg, 1, &t), CP_EINVAL);
}

Test(stats, error_table)
{
    cr_expect_str_eq(cp_strerror(CP_EDROPPED), "activity records were dropped");
    cr_expect_str_eq(cp_err_name(CP_ECUDA), "CP_ECUDA");
    cr_expect_str_eq(cp_strerror(0), "success");
    cr_expect_str_eq(cp_strerror(-999), "unknown error");
    cr_expect_str_eq(cp_err_name(-999), "CP_UNKNOWN");
    cr_expect_str_eq(cp_err_name(0), "CP_OK");
}
