/* The CPU references against answers known without them, and every
 * case's declared expectations against the names that exist. */
#include "cases/references.h"
#include <cuproof/expect.h>
#include <cuproof/case.h>
#include "kernels/grid_model.h"

#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <string.h>

Test(references, vector_add_known_values)
{
    float a[] = {1.0f, -2.5f, 1e30f, 0.1f};
    float b[] = {2.0f, 2.5f, 1e30f, 0.2f};
    float c[4];
    cp_ref_vector_add(a, b, c, 4);
    cr_expect_eq(c[0], 3.0f);
    cr_expect_eq(c[1], 0.0f);
    cr_expect_eq(c[2], 2e30f);
    /* 0.1f + 0.2f rounds to the float nearest 0.3, which is 0.3f + 1 ulp:
     * the reference must add in float, not in double. */
    cr_expect_eq(c[3], 0.1f + 0.2f);
    cr_expect_eq(c[3], (float)((double)0.1f + (double)0.2f));
}

/* mult_ker's 50 rounds of *2.0 and /2.0 are the identity for any float
 * whose double survives the round trip, and turn values above FLT_MAX/2
 * into infinity: the reference must show both. */
Test(references, mult_is_identity_in_range)
{
    float xs[] = {0.0f, -0.0f, 1.0f, -3.999f, 1e-38f, 1.17549435e-38f, FLT_MAX / 2, 1e-45f};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        float y = cp_ref_mult(xs[i]);
        cr_expect_eq(memcmp(&y, &xs[i], sizeof y), 0, "%g -> %g", xs[i], y);
    }
}

Test(references, mult_overflows_above_half_max)
{
    cr_expect(isinf(cp_ref_mult(FLT_MAX)));
    cr_expect(isinf(cp_ref_mult(-FLT_MAX)));
    cr_expect(isnan(cp_ref_mult(NAN)));
}

Test(references, bit_mismatch_counts_nan_and_signed_zero)
{
    float poison;
    memset(&poison, 0xFF, sizeof poison);
    float want[] = {1.0f, 0.0f, 2.0f, poison};
    float got[] = {1.0f, -0.0f, 2.0f, poison};
    cr_expect_eq(cp_count_bit_mismatches(got, want, 4), 1);
    got[0] = poison;
    cr_expect_eq(cp_count_bit_mismatches(got, want, 4), 2);
}

Test(references, inputs_are_deterministic)
{
    uint32_t s1 = 7, s2 = 7;
    for (int i = 0; i < 1000; i++) {
        float a = cp_rand_float(&s1, -4.0f, 4.0f);
        cr_assert_eq(a, cp_rand_float(&s2, -4.0f, 4.0f));
        cr_assert(a >= -4.0f && a < 4.0f);
    }
    uint32_t zero = 0;
    cr_expect_neq(cp_rand_next(&zero), 0, "a zero seed must not stick at zero");
}

/* A blinker has period 2; a glider moves one cell diagonally in 4 steps. */
Test(references, conway_blinker_and_glider)
{
    enum { N = 8 };
    int a[N * N] = {0}, b[N * N], c[N * N];
    a[3 * N + 2] = a[3 * N + 3] = a[3 * N + 4] = 1; /* horizontal blinker */
    cp_ref_conway_step(b, a, N);
    cr_expect_eq(b[2 * N + 3] + b[3 * N + 3] + b[4 * N + 3], 3, "vertical after one step");
    cr_expect_eq(b[3 * N + 2] + b[3 * N + 4], 0);
    cp_ref_conway_step(c, b, N);
    cr_expect_arr_eq(c, a, sizeof a, "back after two steps");

    int g[N * N] = {0}, w[N * N], want[N * N] = {0};
    const int cells[5][2] = {{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}}; /* x, y */
    for (int i = 0; i < 5; i++) {
        g[cells[i][1] * N + cells[i][0]] = 1;
        want[(cells[i][1] + 1) * N + cells[i][0] + 1] = 1;
    }
    for (int s = 0; s < 4; s++) {
        cp_ref_conway_step(w, g, N);
        memcpy(g, w, sizeof g);
    }
    cr_expect_arr_eq(g, want, sizeof g, "the glider moved by (1, 1)");
}

/* A blinker across the corner: the board is a torus. */
Test(references, conway_wraps_around_the_edges)
{
    enum { N = 8 };
    int a[N * N] = {0}, b[N * N], c[N * N];
    a[0 * N + 7] = a[0 * N + 0] = a[0 * N + 1] = 1;
    cp_ref_conway_step(b, a, N);
    cr_expect_eq(b[7 * N + 0] + b[0 * N + 0] + b[1 * N + 0], 3, "vertical through row 0");
    cp_ref_conway_step(c, b, N);
    cr_expect_arr_eq(c, a, sizeof a);
}

Test(references, mult_inputs_are_seeded_in_range_and_survive)
{
    enum { N = 4096 };
    static float a[N], b[N];
    cr_expect_eq(cp_ref_mult_inputs(a, N, 7, N), 0, "the reference leaves them unchanged");
    cr_expect_eq(cp_ref_mult_inputs(b, N, 7, 16), 0);
    cr_expect_arr_eq(a, b, sizeof a, "the same seed gives the same inputs");
    for (int i = 0; i < N; i++)
        cr_assert(a[i] >= -4.0f && a[i] < 4.0f, "a[%d] = %g", i, a[i]);
    cp_ref_mult_inputs(b, N, 8, 0);
    cr_expect_neq(memcmp(a, b, sizeof a), 0, "another seed, other inputs");
}

/* Cycle skipping agrees with stepping one generation at a time. */
Test(references, conway_run_equals_stepping)
{
    enum { N = 32 };
    static int a[N * N], b[N * N], w[N * N];
    const uint64_t counts[] = {0, 1, 2, 100, 3000};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        uint32_t seed = 99;
        for (int i = 0; i < N * N; i++)
            a[i] = b[i] = cp_rand_next(&seed) % 4 == 0;
        cr_assert_eq(cp_ref_conway_run(a, N, counts[c]), 0);
        for (uint64_t g = 0; g < counts[c]; g++) {
            cp_ref_conway_step(w, b, N);
            memcpy(b, w, sizeof b);
        }
        cr_expect_arr_eq(a, b, sizeof a, "after %llu generations", (unsigned long long)counts[c]);
    }
}

/* A glider crosses a 16 x 16 torus every 64 generations: after 10^9 (a
 * multiple of 64) it is back, and after 10^9 + 4 it moved by (1, 1). */
Test(references, conway_run_skips_a_billion_generations)
{
    enum { N = 16 };
    int g[N * N] = {0}, h[N * N], want[N * N] = {0};
    const int cells[5][2] = {{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}};
    for (int i = 0; i < 5; i++) {
        g[cells[i][1] * N + cells[i][0]] = 1;
        want[(cells[i][1] + 1) * N + cells[i][0] + 1] = 1;
    }
    memcpy(h, g, sizeof g);
    cr_assert_eq(cp_ref_conway_run(h, N, 1000000000ull), 0);
    cr_expect_arr_eq(h, g, sizeof g);
    memcpy(h, g, sizeof g);
    cr_assert_eq(cp_ref_conway_run(h, N, 1000000004ull), 0);
    cr_expect_arr_eq(h, want, sizeof h);
}

Test(references, grid_model_formula)
{
    int out[5 * 3 * 2 * CP_GRID_FIELDS];
    const int n[3] = {5, 3, 2}, block[3] = {2, 2, 1};
    cp_ref_grid_model(out, n, block);
    /* Element (x, y, z) = (4, 2, 1): the edge block (2, 1, 1), thread (0, 0, 0). */
    const int *o = out + (4 + 5 * (2 + 3 * 1)) * CP_GRID_FIELDS;
    const int want[CP_GRID_FIELDS] = {2, 1, 1, 0, 0, 0, 29};
    cr_expect_arr_eq(o, want, sizeof want);
    o = out + (3 + 5 * (1 + 3 * 0)) * CP_GRID_FIELDS;
    const int want2[CP_GRID_FIELDS] = {1, 0, 0, 1, 1, 0, 8};
    cr_expect_arr_eq(o, want2, sizeof want2);
}

/* Points known inside and outside the set. */
Test(references, mandelbrot_known_points)
{
    cr_expect_eq(cp_ref_mandel_point(0.0f, 0.0f, 256, 2.0f), 256, "0 is inside");
    cr_expect_eq(cp_ref_mandel_point(-1.0f, 0.0f, 256, 2.0f), 256, "-1 cycles 0, -1");
    cr_expect_eq(cp_ref_mandel_point(-2.0f, 0.0f, 256, 2.0f), 256, "-2 stays at 2 (not > 2)");
    cr_expect_eq(cp_ref_mandel_point(0.25f, 0.0f, 256, 2.0f), 256, "the cusp converges to 1/2");
    cr_expect_eq(cp_ref_mandel_point(-0.1f, 0.5f, 256, 2.0f), 256, "inside the main cardioid");
    cr_expect_eq(cp_ref_mandel_point(2.0f, 2.0f, 256, 2.0f), 0, "|c| > 2 escapes at once");
    cr_expect_eq(cp_ref_mandel_point(1.0f, 1.0f, 256, 2.0f), 1, "1+i, then 1+3i");
    int slow = cp_ref_mandel_point(0.26f, 0.0f, 256, 2.0f);
    cr_expect(slow > 10 && slow < 256, "0.26 escapes slowly: %d", slow);
    cp_mandel_params p = {.real_low = -2, .real_high = 2, .imag_low = -2, .imag_high = 2,
                          .max_iters = 64, .upper_bound = 2, .width = 5, .height = 5};
    float img[25];
    cp_ref_mandelbrot(img, &p);
    cr_expect_float_eq(img[2 + 2 * 5], 64.0f, 0, "the centre pixel is c = 0");
    cr_expect_float_eq(img[4 + 0 * 5], 0.0f, 0, "the top-right pixel is c = 2 + 2i");
}

/* ---- seed 004 references, against answers worked by hand ---- */

Test(references, leaky_relu_and_piecewise_scale)
{
    cr_expect_float_eq(cp_ref_leaky_relu(3.0f, 0.1f), 3.0f, 0);
    cr_expect_float_eq(cp_ref_leaky_relu(-5.0f, 0.1f), -0.5f, 1e-7);
    cr_expect_float_eq(cp_ref_leaky_relu(0.0f, 0.1f), 0.0f, 0, "0 is not > 0: slope * 0");
    cr_expect_float_eq(cp_ref_piecewise_scale(-0.5f), -0.25f, 0);
    cr_expect_float_eq(cp_ref_piecewise_scale(0.0f), 0.0f, 0, "0 is in [0, 1): doubled");
    cr_expect_float_eq(cp_ref_piecewise_scale(0.5f), 1.0f, 0);
    cr_expect_float_eq(cp_ref_piecewise_scale(1.0f), 0.1f, 1e-8, "1 is past the second piece");
    cr_expect_float_eq(cp_ref_piecewise_scale(3.0f), 0.3f, 1e-7);
    float d[3] = {1, -2, 4};
    cp_ref_scale(d, 3, 2.5f);
    cr_expect_float_eq(d[0], 2.5f, 0);
    cr_expect_float_eq(d[1], -5.0f, 0);
    cr_expect_float_eq(d[2], 10.0f, 0);
}

Test(references, broadcasting_stretches_the_last_dimension)
{
    const float m[6] = {1, 2, 3, 4, 5, 6}, v[3] = {10, 20, 30};
    float out[6];
    cp_ref_broadcast_add(m, v, out, 2, 3);
    const float want[6] = {11, 22, 33, 14, 25, 36};
    cr_expect_arr_eq(out, want, sizeof want);
    const float t[8] = {1, 2, 3, 4, 5, 6, 7, 8}, s[2] = {2, -1};
    float o3[8];
    cp_ref_broadcast_mul3(t, s, o3, 2, 2, 2);
    const float want3[8] = {2, -2, 6, -4, 10, -6, 14, -8};
    cr_expect_arr_eq(o3, want3, sizeof want3);
}

Test(references, gather_compaction_and_slices)
{
    const float src[6] = {0.9f, 0.1f, 0.6f, -1.0f, 0.5f, 0.7f};
    const int idx[4] = {5, 0, 0, 3};
    float g[4];
    cp_ref_gather(src, idx, 4, g);
    const float wg[4] = {0.7f, 0.9f, 0.9f, -1.0f};
    cr_expect_arr_eq(g, wg, sizeof wg);
    float c[6];
    cr_expect_eq(cp_ref_compact(src, 6, 0.5f, c), 3, "0.5 itself is not > 0.5");
    const float wc[3] = {0.9f, 0.6f, 0.7f};
    cr_expect_arr_eq(c, wc, sizeof wc, "order preserved");
    cr_expect_eq(cp_ref_compact(src, 6, 5.0f, c), 0, "an empty mask");
    cr_expect_eq(cp_ref_compact(src, 6, -2.0f, c), 6, "an all-true mask");
    cr_expect_arr_eq(c, src, sizeof src);
    const float m[12] = {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23};
    float sl[4];
    cp_ref_slice2d(m, 4, 1, 3, 1, 3, sl);
    const float ws[4] = {11, 12, 21, 22};
    cr_expect_arr_eq(sl, ws, sizeof ws);
}

Test(references, column_means_centring_and_masked_assignment)
{
    const float m[6] = {1, -2, 3, -4, 5, 6}; /* 3 rows x 2 columns */
    float means[2], centred[6];
    cp_ref_column_means(m, 3, 2, means);
    cr_expect_float_eq(means[0], 3.0f, 0, "(1 + 3 + 5) / 3");
    cr_expect_float_eq(means[1], 0.0f, 0, "(-2 - 4 + 6) / 3");
    cp_ref_centre(m, means, centred, 3, 2);
    float after[2];
    cp_ref_column_means(centred, 3, 2, after);
    cr_expect_float_eq(after[0], 0.0f, 1e-7, "centred columns have mean 0");
    cr_expect_float_eq(after[1], 0.0f, 1e-7);
    float z[6];
    memcpy(z, m, sizeof z);
    cp_ref_clamp_negative(z, 6);
    const float wz[6] = {1, 0, 3, 0, 5, 6};
    cr_expect_arr_eq(z, wz, sizeof wz);
}

/* Parses an expectation text and checks its names against `variants`
 * (NULL-terminated), as the runner does before a case runs. Returns 0, or
 * the error code with the reason, line and column in cp_last_error();
 * *count gets the number of expectations. */
static int check_expectations(const char *text, const char *const *variants, size_t *count)
{
    cp_expect_list list = {0};
    size_t n = 0;
    while (variants[n])
        n++;
    int rc = cp_expect_parse(text, 1, &list);
    if (rc == 0)
        rc = cp_expect_validate(&list, variants, n);
    *count = list.n;
    cp_expect_list_free(&list);
    return rc;
}

/* Every registered case's .expect parses and names only metrics, findings
 * and variants that exist: a typo fails here, on a machine without a GPU,
 * rather than when the case first runs on one. */
Test(cases, every_declared_expectation_parses_and_names_known_things)
{
    size_t declaring = 0;
    for (size_t i = 0; i < cp_registry_count(); i++) {
        const cp_case_def *def = cp_registry_at(i);
        if (!def->expect && !def->essential)
            continue;
        declaring++;
        size_t n = 0;
        if (def->expect)
            cr_expect_eq(check_expectations(def->expect, def->variants, &n), 0, "%s: %s",
                         cp_case_name(def), cp_last_error());
        if (def->essential)
            cr_expect_eq(check_expectations(def->essential, def->variants, &n), 0,
                         "%s (essential): %s", cp_case_name(def), cp_last_error());
        cr_expect_gt(n, 0, "%s declares expectations without any", cp_case_name(def));
    }
    cr_expect_geq(declaring, 10, "only %zu cases declare expectations", declaring);
}

/* The control: the same check fails on mistakes a case could make in
 * multi-kernel's expectations, and says where each one is. */
Test(cases, a_wrong_expectation_names_its_line_and_column)
{
    const cp_case_def *def = cp_registry_find("multi-kernel");
    cr_assert_not_null(def);
    size_t n;
    const char *metric = "sync: peak_concurrent_kernels == 1\n"
                         "# a misspelt metric\n"
                         "streams-pinned: copy_kernel_overlap_ration > 0.5\n";
    cr_expect_eq(check_expectations(metric, def->variants, &n), CP_EINVAL);
    cr_expect_not_null(strstr(cp_last_error(),
                              "line 3, column 17: unknown metric 'copy_kernel_overlap_ration'"),
                       "%s", cp_last_error());
    const char *variant = "sync: peak_concurrent_kernels == 1\n"
                          "  stream-pinned: no finding cuda_memcpy_async\n";
    cr_expect_eq(check_expectations(variant, def->variants, &n), CP_EINVAL);
    cr_expect_not_null(strstr(cp_last_error(), "line 2, column 3: unknown variant 'stream-pinned'"),
                       "%s", cp_last_error());
    const char *finding = "streams-pageable: finding cuda_memcpy_asnyc\n";
    cr_expect_eq(check_expectations(finding, def->variants, &n), CP_EINVAL);
    cr_expect_not_null(strstr(cp_last_error(),
                              "line 1, column 27: unknown finding 'cuda_memcpy_asnyc'"),
                       "%s", cp_last_error());
}
