/*
 * Rows on which a track's slices nest (reports/rows.c): which row each
 * slice is dealt, given in order of start, the longer first.
 */
#include "reports/rows.h"

#include <criterion/criterion.h>

static cp_rows *r;

static void setup(void)
{
    r = cp_rows_new();
    cr_assert_not_null(r);
}

static void teardown(void)
{
    cp_rows_free(r);
}

TestSuite(rows, .init = setup, .fini = teardown);

Test(rows, nested_and_touching_slices_share_the_track)
{
    cr_expect_eq(cp_rows_place(r, 1, 0, 100), 0);
    cr_expect_eq(cp_rows_place(r, 1, 0, 40), 0, "inside, beginning together");
    cr_expect_eq(cp_rows_place(r, 1, 10, 40), 0, "inside, ending together");
    cr_expect_eq(cp_rows_place(r, 1, 40, 100), 0, "from where the last ended to the outer end");
    cr_expect_eq(cp_rows_place(r, 1, 100, 150), 0, "from where the outer ended");
    cr_expect_eq(cp_rows_place(r, 1, 150, 150), 0, "no duration");
    cr_expect_eq(cp_rows_unordered(r), 0);
}

Test(rows, a_partly_overlapping_slice_goes_on_a_row_beside)
{
    cr_expect_eq(cp_rows_place(r, 1, 0, 100), 0);
    cr_expect_eq(cp_rows_place(r, 1, 50, 150), 1, "crosses the end of [0, 100]");
    cr_expect_eq(cp_rows_place(r, 1, 60, 120), 1, "nests in [50, 150], not in [0, 100]");
    cr_expect_eq(cp_rows_place(r, 1, 90, 130), 2, "crosses both rows' innermost ends");
    cr_expect_eq(cp_rows_place(r, 1, 110, 140), 0, "the track is free again from 100");
    cr_expect_eq(cp_rows_place(r, 2, 60, 70), 0, "another track has rows of its own");
}

Test(rows, an_end_before_the_start_is_no_duration)
{
    cr_expect_eq(cp_rows_place(r, 1, 0, 100), 0);
    cr_expect_eq(cp_rows_place(r, 1, 50, 10), 0, "[50, 50] nests in [0, 100]");
    cr_expect_eq(cp_rows_place(r, 1, 60, 200), 1, "[50, 50] has ended; [0, 100] has not");
}

Test(rows, a_slice_out_of_order_is_counted_and_left_on_the_track)
{
    cr_expect_eq(cp_rows_place(r, 1, 100, 200), 0);
    cr_expect_eq(cp_rows_place(r, 1, 150, 300), 1);
    cr_expect_eq(cp_rows_place(r, 1, 50, 120), 0, "before the last start: unchecked");
    cr_expect_eq(cp_rows_unordered(r), 1);
    cr_expect_eq(cp_rows_place(r, 1, 160, 170), 0, "in order again: dealt as before");
    cr_expect_eq(cp_rows_place(r, 7, 10, 20), 0, "order is per track");
    cr_expect_eq(cp_rows_unordered(r), 1);
}

Test(rows, many_tracks_and_deep_nesting)
{
    for (uint64_t k = 0; k < 1000; k++)
        for (uint64_t d = 0; d < 20; d++)
            cr_assert_eq(cp_rows_place(r, k, d, 1000 - d), 0, "track %llu depth %llu",
                         (unsigned long long)k, (unsigned long long)d);
    cr_expect_eq(cp_rows_place(r, 999, 500, 2000), 1, "crosses every open end");
}

Test(rows, the_order_is_by_start_the_longer_first)
{
    cp_activity a = {.start = 10, .end = 50}, b = {.start = 10, .end = 20},
                c = {.start = 5, .end = 8}, d = {.start = 10, .end = 5};
    cr_expect_lt(cp_rows_order(&a, &b), 0);
    cr_expect_gt(cp_rows_order(&b, &a), 0);
    cr_expect_lt(cp_rows_order(&c, &a), 0);
    cr_expect_gt(cp_rows_order(&d, &b), 0, "an end before the start is no duration");
    cr_expect_eq(cp_rows_order(&a, &a), 0);
}
