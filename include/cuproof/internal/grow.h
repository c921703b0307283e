/*
 * The one growth of a list held as (items, count, capacity): what every
 * append of the library wrote out as seven lines of realloc. Header-only
 * (static inline), so that every layer, the injection library's too, uses
 * it without linking anything.
 *
 *   cp_process *q = cp_grow(t->processes, &t->processes_cap, t->nprocesses,
 *                           sizeof *q, 4);
 *   if (!q)
 *       return cp_failf(CP_ENOMEM, "...");
 *   t->processes = q;
 *
 * Internal (include/cuproof/internal/): for cuproof's own code and tests.
 * Installed so that cuproof::main builds, but not part of the stable API:
 * it may change in any release.
 */
#ifndef CUPROOF_INTERNAL_GROW_H
#define CUPROOF_INTERNAL_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* Room for one more element after the first `n` of `items` (each `size`
 * bytes, `*cap` of them allocated): `items` itself while n < *cap, else
 * the list reallocated to twice *cap (`first` when *cap is 0) with *cap
 * updated. NULL when memory runs out or the size would overflow; `items`
 * and *cap are then as they were, so the caller keeps its list and frees
 * it as before. The pointer is returned, not written through a void **,
 * which C would not let alias the caller's typed pointer. */
static inline void *cp_grow(void *items, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return items;
    size_t more = *cap ? *cap * 2 : first;
    if (more <= n || (size && more > SIZE_MAX / size))
        return NULL;
    void *p = realloc(items, more * size);
    if (p)
        *cap = more;
    return p;
}

#endif
