/* The CPU references against answers known without them. */
#include "cases/references.h"
#include "harness/case.h"

#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <string.h>
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
