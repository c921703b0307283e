/*
 * Rows on which a track's slices nest, private to the reports layer.
 *
 * Perfetto (and the Chrome trace format before it) draws the slices of a
 * track as a stack: one must lie inside another or beside it. Records that
 * partly overlap break that: a protobuf slice's end closes whatever slice
 * of its track is innermost, so two such slices swap their ends, and a
 * Chrome "X" event that crosses another's end is cut or dropped. They are
 * not rare: calls of threads the trace does not name, which share a track;
 * kernels of one stream that overlap (programmatic dependent launch);
 * ranges opened with nvtxRangeStart and ended out of turn.
 *
 * cp_rows deals each track's slices to rows, as a timeline viewer lays out
 * overlapping intervals: a slice goes on the first row of its track where
 * it nests with what is open there, and a new row is opened when none
 * takes it. Row 0 is the track itself; the writers draw row R > 0 as a
 * track beside it, named after it with " (R + 1)". Only the slices open
 * at the latest start are kept (a stack per row), so memory grows with
 * how deep slices nest and how many overlap, never with their number.
 *
 * The dealing is exact when a track's slices come in order of start (the
 * longer first at equal starts). A slice that starts before one already
 * dealt on its track cannot be checked against the slices that have left
 * the stacks: it goes on row 0 unchecked and is counted (cp_rows_unordered),
 * so that a writer fed out of order can say so instead of drawing wrong
 * nesting in silence.
 */
#ifndef CUPROOF_REPORTS_ROWS_H
#define CUPROOF_REPORTS_ROWS_H

#include <cuproof/trace.h>

#include <stdint.h>

typedef struct cp_rows cp_rows;

/* A dealer with no track; NULL when out of memory. */
cp_rows *cp_rows_new(void);

void cp_rows_free(cp_rows *r);

/*
 * The row of the slice [start, end] of track `track` (any key the writer
 * chooses, one per track): 0 for the track itself, R > 0 for the R-th row
 * beside it. An end before the start is taken as no duration. Returns -1
 * when out of memory (the dealer is unchanged).
 */
int64_t cp_rows_place(cp_rows *r, uint64_t track, uint64_t start, uint64_t end);

/* The order in which a track's slices are dealt: by start, the longer
 * first (so that of two beginning together the outer opens first).
 * Negative when `a` goes first, 0 when either may. */
int cp_rows_order(const cp_activity *a, const cp_activity *b);

/* The same, for qsort over an array of `const cp_activity *`. */
int cp_rows_order_ptr(const void *x, const void *y);

/* Slices that came before a slice already dealt on their track, and so
 * went on row 0 unchecked. */
uint64_t cp_rows_unordered(const cp_rows *r);

#endif
