/* The one list growth (cuproof/internal/grow.h): the same buffer while
 * there is room, doubled from the first capacity when full, and the list
 * kept as it was when the size would overflow. */
#include <criterion/criterion.h>

#include <cuproof/internal/grow.h>

#include <stdint.h>
#include <stdlib.h>

Test(grow, doubles_from_the_first_capacity_and_keeps_the_elements)
{
    int *items = NULL;
    size_t cap = 0, n = 0;
    for (int v = 0; v < 100; v++) {
        int *q = cp_grow(items, &cap, n, sizeof *q, 4);
        cr_assert_not_null(q, "growing to %zu elements", n + 1);
        items = q;
        items[n++] = v;
        cr_assert(cap >= n);
    }
    /* 4, 8, 16, 32, 64, 128: doubled from the first, never more. */
    cr_expect_eq(cap, 128);
    for (int v = 0; v < 100; v++)
        cr_expect_eq(items[v], v);
    /* With room left, the same buffer and capacity. */
    int *same = cp_grow(items, &cap, n, sizeof *same, 4);
    cr_expect_eq(same, items);
    cr_expect_eq(cap, 128);
    free(items);
}

Test(grow, an_overflowing_size_fails_and_keeps_the_list)
{
    size_t cap = 4;
    char *items = malloc(cap);
    cr_assert_not_null(items);
    size_t big = SIZE_MAX / 4; /* 8 of these overflow size_t */
    void *q = cp_grow(items, &cap, 4, big, 4);
    cr_expect_null(q);
    cr_expect_eq(cap, 4, "the capacity is left as it was");
    items[3] = 'x'; /* the list is still the caller's */
    free(items);
    /* A first capacity of 0 cannot make room: NULL, not a 0-byte list. */
    size_t none = 0;
    cr_expect_null(cp_grow(NULL, &none, 0, sizeof(int), 0));
    cr_expect_eq(none, 0);
}
