/*
 * A timeline's summary: what a page draws of a trace too long to embed
 * record by record. Per lane (the analysis' lanes, then the NVTX phases)
 * and per column of `nbins` over the span of the drawn records, the time
 * each kind kept the lane busy and the records that touched it. Its size
 * grows with the lanes, not with the records, and it is built in two
 * passes that need not hold the records: the span first
 * (cp_summary_span_add over every record, or over a stream of them), then
 * the columns (cp_summary_add, once the analysis knows the lanes).
 *
 *   cp_summary_span sp = CP_SUMMARY_SPAN_INIT;
 *   for each record a: cp_summary_span_add(&sp, &a);
 *   cp_summary_init(&s, &metrics, &sp, CP_SUMMARY_BINS);
 *   for each record a: cp_summary_add(&s, &metrics, &a);
 */
#ifndef CUPROOF_SUMMARY_H
#define CUPROOF_SUMMARY_H

#include "export.h"

#include "metrics.h"
#include "trace.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds a page colours apart. */
typedef enum cp_summary_kind {
    CP_SUMMARY_KERNEL = 0,
    CP_SUMMARY_HTOD,
    CP_SUMMARY_DTOH,
    CP_SUMMARY_COPY, /* any other copy direction */
    CP_SUMMARY_MEMSET,
    CP_SUMMARY_RANGE,
    CP_SUMMARY_KINDS
} cp_summary_kind;

/* Columns over the span: about one per pixel of a page. */
#define CP_SUMMARY_BINS 1000

/* The kind a page colours `a` as. */
CP_API cp_summary_kind cp_summary_kind_of(const cp_activity *a);

/* The lane `a` is drawn in: its index in m->lanes, m->nlanes for an NVTX
 * range, or -1 when it is not drawn (API calls; work the analysis did not
 * see). */
CP_API long cp_summary_lane(const cp_metrics *m, const cp_activity *a);

/* The drawn records' span and count, gathered in a first pass. */
typedef struct cp_summary_span {
    uint64_t origin, end; /* first start, last end; origin > end while empty */
    uint64_t records;     /* records that are drawn (all but API calls) */
    uint64_t all;         /* every record added, API calls too */
} cp_summary_span;

#define CP_SUMMARY_SPAN_INIT {UINT64_MAX, 0, 0, 0}

/* Counts `a`, and adds it to the span unless it is an API call, which a
 * page does not draw. */
CP_API void cp_summary_span_add(cp_summary_span *sp, const cp_activity *a);

typedef struct cp_summary {
    uint64_t origin, end; /* the span the columns cover */
    uint64_t records;     /* the span's drawn records */
    uint64_t all;         /* every record, API calls too */
    uint32_t nlanes;      /* the analysis' lanes + 1 (the NVTX phases) */
    uint32_t nbins;
    double width_ns; /* of a column; at least 1 */
    /* busy[(lane * nbins + bin) * CP_SUMMARY_KINDS + kind]: ns of the
     * column the kind's records covered (overlapping records add up). */
    double *busy;
    uint32_t *count; /* [lane * nbins + bin]: records that touched it */
} cp_summary;

/* Columns of `nbins` (1 or more) over `sp`, for the lanes of `m`.
 * Returns 0, CP_EINVAL (nbins 0) or CP_ENOMEM; *s is empty on failure. */
CP_API int cp_summary_init(cp_summary *s, const cp_metrics *m, const cp_summary_span *sp,
                           uint32_t nbins);

/* Adds `a` to the columns it overlaps; records not drawn, or outside the
 * span, are left out. `m` must be the analysis that made the lanes. */
CP_API void cp_summary_add(cp_summary *s, const cp_metrics *m, const cp_activity *a);

/* Whether a column has any record, the kind that kept it busiest, and how
 * busy it was, from 0 to 1 (the kinds' time over the column's, capped). */
CP_API uint32_t cp_summary_cell(const cp_summary *s, size_t cell, cp_summary_kind *busiest,
                                double *level);

/* Frees the columns; accepts NULL and an empty summary. */
CP_API void cp_summary_free(cp_summary *s);

#ifdef __cplusplus
}
#endif

#endif
