/* The progress sink with its choices made by the caller: cp_sink_progress
 * makes them from the output (a terminal or not) and the environment, and
 * tests give them directly, so that no test depends on where it runs.
 * Private to the reports layer. */
#ifndef CUPROOF_REPORTS_PROGRESS_SINK_H
#define CUPROOF_REPORTS_PROGRESS_SINK_H

#include <cuproof/internal/session.h>

#include <stdbool.h>
#include <stdio.h>

typedef struct progress_style {
    /* A terminal: the runs of the case under way as one line rewritten in
     * place, cut to width - 1 columns so that it never wraps, redrawn at
     * most once per interval_s of a variant's time (its first run and
     * each new phase always). Otherwise: nothing per run, and one line for
     * each variant that took more than slow_s. */
    bool terminal;
    int width;
    double interval_s;
    double slow_s;
} progress_style;

/* cp_sink_progress's sink with the given style; a sink with a NULL name
 * when out of memory. */
cp_sink progress_sink(FILE *out, size_t total, const progress_style *style);

#endif
