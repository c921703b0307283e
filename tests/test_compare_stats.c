/* The statistics of cuproof compare: rank-test p-values worked out by hand,
 * a deterministic bootstrap, and the verdict's error rates measured over
 * seeded trials of simulated timings (lognormal noise). */
#include <cuproof/internal/compare_stats.h>
#include <cuproof/error.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdint.h>

#include "seeded_rng.h"

enum { TRIALS = 1000, N = 10 };


/* n timings with median `median` and coefficient of variation `cv`. */
static void lognormal(double *v, size_t n, double median, double cv)
{
    double sigma = sqrt(log(1 + cv * cv));
    for (size_t i = 0; i < n; i++)
        v[i] = median * exp(sigma * normal());
}

/* Verdict counts over TRIALS seeded trials of N old runs at 1 ms and N new
 * runs at `factor` ms, both with noise `cv`. */
static void trials(double factor, double cv, int counts[4])
{
    double a[N], b[N];
    for (int v = 0; v < 4; v++)
        counts[v] = 0;
    for (int t = 0; t < TRIALS; t++) {
        rng_state = 1000003u * (uint64_t)t + 17;
        lognormal(a, N, 1.0, cv);
        lognormal(b, N, factor, cv);
        cp_cmp_result r;
        cr_assert_eq(cp_compare_samples(a, N, b, N, 0.10, CP_CMP_MIN_EFFECT, (uint64_t)t, &r), 0,
                     "%s", cp_last_error());
        counts[r.verdict]++;
    }
}

Test(compare_stats, identical_distributions_are_same)
{
    int c[4];
    trials(1.0, 0.03, c);
    double false_alarms = (double)(TRIALS - c[CP_CMP_SAME]) / TRIALS;
    cr_log_info("identical, CV 3%%, %d runs each: false-alarm rate %.3f (faster %d, slower %d, "
                "noisy %d of %d)", N, false_alarms, c[CP_CMP_FASTER], c[CP_CMP_SLOWER],
                c[CP_CMP_NOISY], TRIALS);
    cr_expect_leq(false_alarms, 0.01, "false-alarm rate %.3f", false_alarms);
}

Test(compare_stats, ten_percent_slower_is_detected)
{
    int c[4];
    trials(1.10, 0.03, c);
    double detected = (double)c[CP_CMP_SLOWER] / TRIALS;
    cr_log_info("10%% slower, CV 3%%, %d runs each: detected in %.3f of trials", N, detected);
    cr_expect_geq(detected, 0.95, "detection rate %.3f", detected);
    cr_expect_eq(c[CP_CMP_FASTER], 0);
    trials(1 / 1.10, 0.03, c);
    detected = (double)c[CP_CMP_FASTER] / TRIALS;
    cr_log_info("10%% faster, CV 3%%, %d runs each: detected in %.3f of trials", N, detected);
    cr_expect_geq(detected, 0.95, "detection rate %.3f", detected);
}

Test(compare_stats, very_noisy_pair_is_never_slower)
{
    int c[4];
    trials(1.0, 0.30, c);
    double ok = (double)(c[CP_CMP_SAME] + c[CP_CMP_NOISY]) / TRIALS;
    cr_log_info("identical, CV 30%%, %d runs each: same or noisy in %.3f (noisy %d, slower %d, "
                "faster %d)", N, ok, c[CP_CMP_NOISY], c[CP_CMP_SLOWER], c[CP_CMP_FASTER]);
    cr_expect_geq(ok, 0.99, "same or noisy in only %.3f", ok);
    cr_expect_leq(c[CP_CMP_SLOWER], TRIALS / 100);
}

Test(compare_stats, three_samples_are_noisy)
{
    double a[] = {1.0, 1.01, 0.99}, b[] = {2.0, 2.02, 1.98};
    cp_cmp_result r;
    cr_assert_eq(cp_compare_samples(a, 3, b, 3, 0.10, 0.02, 1, &r), 0);
    cr_expect_eq(r.verdict, CP_CMP_NOISY);
    cr_expect_str_eq(cp_cmp_verdict_name(r.verdict), "noisy");
    cr_expect_float_eq(r.ratio, 2.0, 1e-12);
    cr_expect_float_eq(r.p, 0.1, 1e-12, "exact p for complete separation of 3 and 3");
    cr_expect_eq(r.n_old, 3);
    cr_expect_eq(r.n_new, 3);
}

Test(compare_stats, mann_whitney_hand_computed)
{
    double u, p;
    /* Exact: complete separation, 2 / C(6,3) and 2 / C(10,5). */
    double a3[] = {1, 2, 3}, b3[] = {4, 5, 6};
    cr_assert_eq(cp_mann_whitney(a3, 3, b3, 3, &u, &p), 0);
    cr_expect_float_eq(u, 0, 1e-12);
    cr_expect_float_eq(p, 0.1, 1e-12);
    cr_assert_eq(cp_mann_whitney(b3, 3, a3, 3, &u, &p), 0);
    cr_expect_float_eq(u, 9, 1e-12);
    cr_expect_float_eq(p, 0.1, 1e-12);
    double a5[] = {5, 3, 1, 2, 4}, b5[] = {10, 6, 7, 8, 9};
    cr_assert_eq(cp_mann_whitney(a5, 5, b5, 5, &u, &p), 0);
    cr_expect_float_eq(p, 2.0 / 252, 1e-12);
    /* Exact with ties (midranks), counted over every split by hand. */
    double at[] = {1, 2, 2}, bt[] = {2, 3, 4};
    cr_assert_eq(cp_mann_whitney(at, 3, bt, 3, &u, &p), 0);
    cr_expect_float_eq(u, 1, 1e-12, "1 > none, 2 > none, ties count 1/2: 0 + 0.5 + 0.5");
    cr_expect_float_eq(p, 0.3, 1e-12);
    double au[] = {1, 2, 2, 3, 5}, bu[] = {2, 3, 4, 6, 7, 8};
    cr_assert_eq(cp_mann_whitney(au, 5, bu, 6, &u, &p), 0);
    cr_expect_float_eq(p, 12.0 / 126, 1e-12);
    /* Normal approximation (8 each): U = 0, mu = 32, var = 64/12 * 17. */
    double a8[] = {1, 2, 3, 4, 5, 6, 7, 8}, b8[] = {9, 10, 11, 12, 13, 14, 15, 16};
    cr_assert_eq(cp_mann_whitney(a8, 8, b8, 8, &u, &p), 0);
    cr_expect_float_eq(u, 0, 1e-12);
    cr_expect_float_eq(p, 0.0009391056991171905, 1e-12);
    /* Normal with ties: U = 8, tie term sum(t^3 - t) = 8 * 6. */
    double c8[] = {1, 1, 2, 2, 3, 3, 4, 4}, d8[] = {3, 3, 4, 4, 5, 5, 6, 6};
    cr_assert_eq(cp_mann_whitney(c8, 8, d8, 8, &u, &p), 0);
    cr_expect_float_eq(u, 8, 1e-12);
    cr_expect_float_eq(p, 0.011979951213734286, 1e-12);
    /* Everything tied: no evidence at all. */
    double e[] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
    cr_assert_eq(cp_mann_whitney(e, 10, e, 10, &u, &p), 0);
    cr_expect_float_eq(p, 1, 1e-12);
    /* Bad input. */
    double bad[] = {1, NAN};
    cr_expect_eq(cp_mann_whitney(bad, 2, a3, 3, &u, &p), CP_EINVAL);
    cr_expect_eq(cp_mann_whitney(a3, 0, a3, 3, &u, &p), CP_EINVAL);
}

Test(compare_stats, bootstrap_is_deterministic)
{
    double a[20], b[20];
    rng_state = 42;
    lognormal(a, 20, 1.0, 0.05);
    lognormal(b, 20, 1.05, 0.05);
    double r1, l1, h1, r2, l2, h2, r3, l3, h3;
    cr_assert_eq(cp_median_ratio_ci(a, 20, b, 20, 7, 2000, 0.95, &r1, &l1, &h1), 0);
    cr_assert_eq(cp_median_ratio_ci(a, 20, b, 20, 7, 2000, 0.95, &r2, &l2, &h2), 0);
    cr_expect(r1 == r2 && l1 == l2 && h1 == h2, "the same seed gives the same interval");
    cr_expect(l1 <= r1 && r1 <= h1, "[%g, %g] holds %g", l1, h1, r1);
    cr_assert_eq(cp_median_ratio_ci(a, 20, b, 20, 8, 2000, 0.95, &r3, &l3, &h3), 0);
    cr_expect(r3 == r1 && (l3 != l1 || h3 != h1), "another seed, another interval");
    /* Identical constant samples: a point interval at 1. */
    double c[] = {3, 3, 3, 3, 3};
    cr_assert_eq(cp_median_ratio_ci(c, 5, c, 5, 1, 100, 0.95, &r1, &l1, &h1), 0);
    cr_expect(r1 == 1 && l1 == 1 && h1 == 1);
    cr_expect_eq(cp_median_ratio_ci(c, 5, c, 5, 1, 0, 0.95, &r1, &l1, &h1), CP_EINVAL);
    cr_expect_eq(cp_median_ratio_ci(c, 5, c, 5, 1, 10, 1.0, &r1, &l1, &h1), CP_EINVAL);
    double z[] = {0, 1};
    cr_expect_eq(cp_median_ratio_ci(z, 2, c, 5, 1, 10, 0.95, &r1, &l1, &h1), CP_EINVAL);
    /* The verdict is deterministic too. */
    cp_cmp_result x, y;
    cr_assert_eq(cp_compare_samples(a, 20, b, 20, 0.10, 0.02, 99, &x), 0);
    cr_assert_eq(cp_compare_samples(a, 20, b, 20, 0.10, 0.02, 99, &y), 0);
    cr_expect(x.verdict == y.verdict && x.ci_low == y.ci_low && x.ci_high == y.ci_high &&
              x.p == y.p);
}

Test(compare_stats, hodges_lehmann)
{
    double a[] = {1, 2, 3}, b[] = {11, 12, 13}, s;
    cr_assert_eq(cp_hodges_lehmann(a, 3, b, 3, &s), 0);
    cr_expect_float_eq(s, 10, 1e-12);
    double c[] = {1, 2}, d[] = {2, 10};
    /* differences 1, 0, 9, 8: median 4.5 */
    cr_assert_eq(cp_hodges_lehmann(c, 2, d, 2, &s), 0);
    cr_expect_float_eq(s, 4.5, 1e-12);
}
