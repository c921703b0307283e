/*
 * Rows on which a track's slices nest (rows.h says why and how).
 */
#include "reports/rows.h"

#include <stdbool.h>
#include <stdlib.h>

/* The ends of the slices open on one row, innermost last. */
typedef struct row {
    uint64_t *ends;
    uint32_t n, cap;
} row;

typedef struct track {
    uint64_t key;
    uint64_t last_start; /* the latest start dealt */
    bool used;
    uint32_t nrows;
    row *rows;
} track;

struct cp_rows {
    track *tracks; /* open addressing, kept at most half full */
    size_t cap, n;
    uint64_t unordered;
};

cp_rows *cp_rows_new(void)
{
    return calloc(1, sizeof(cp_rows));
}

void cp_rows_free(cp_rows *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->cap; i++) {
        for (uint32_t k = 0; k < r->tracks[i].nrows; k++)
            free(r->tracks[i].rows[k].ends);
        free(r->tracks[i].rows);
    }
    free(r->tracks);
    free(r);
}

static size_t slot_of(const track *tracks, size_t cap, uint64_t key)
{
    /* A multiplicative hash spreads the small, dense keys writers use. */
    size_t mask = cap - 1;
    for (size_t i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 20) & mask;; i = (i + 1) & mask)
        if (!tracks[i].used || tracks[i].key == key)
            return i;
}

static track *find_or_add(cp_rows *r, uint64_t key)
{
    if (2 * (r->n + 1) > r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        track *tracks = calloc(cap, sizeof *tracks);
        if (!tracks)
            return NULL;
        for (size_t i = 0; i < r->cap; i++)
            if (r->tracks[i].used)
                tracks[slot_of(tracks, cap, r->tracks[i].key)] = r->tracks[i];
        free(r->tracks);
        r->tracks = tracks;
        r->cap = cap;
    }
    track *t = &r->tracks[slot_of(r->tracks, r->cap, key)];
    if (!t->used) {
        *t = (track){.key = key, .used = true};
        r->n++;
    }
    return t;
}

static bool push(row *w, uint64_t end)
{
    if (w->n == w->cap) {
        uint32_t cap = w->cap ? 2 * w->cap : 8;
        uint64_t *ends = realloc(w->ends, cap * sizeof *ends);
        if (!ends)
            return false;
        w->ends = ends;
        w->cap = cap;
    }
    w->ends[w->n++] = end;
    return true;
}

int64_t cp_rows_place(cp_rows *r, uint64_t key, uint64_t start, uint64_t end)
{
    if (end < start)
        end = start;
    track *t = find_or_add(r, key);
    if (!t)
        return -1;
    if (t->nrows && start < t->last_start) {
        r->unordered++;
        return 0;
    }
    /* A slice that ends where this one starts has ended: Perfetto, reading
     * events of one time in file order, closes it first. */
    uint32_t k = 0;
    for (; k < t->nrows; k++) {
        row *w = &t->rows[k];
        while (w->n && w->ends[w->n - 1] <= start)
            w->n--;
        if (w->n == 0 || w->ends[w->n - 1] >= end)
            break;
    }
    if (k == t->nrows) {
        row *rows = realloc(t->rows, (t->nrows + 1) * sizeof *rows);
        if (!rows)
            return -1;
        t->rows = rows;
        t->rows[t->nrows] = (row){0};
    }
    if (!push(&t->rows[k], end))
        return -1;
    if (k == t->nrows)
        t->nrows++;
    t->last_start = start;
    return k;
}

int cp_rows_order(const cp_activity *a, const cp_activity *b)
{
    uint64_t ea = a->end > a->start ? a->end : a->start, eb = b->end > b->start ? b->end : b->start;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (ea < eb) - (ea > eb);
}

int cp_rows_order_ptr(const void *x, const void *y)
{
    return cp_rows_order(*(const cp_activity *const *)x, *(const cp_activity *const *)y);
}

uint64_t cp_rows_unordered(const cp_rows *r)
{
    return r->unordered;
}
