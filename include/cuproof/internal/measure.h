/*
 * What a recorded trace measured, scope by scope, before any expectation
 * is written (`cuproof check TRACE` without --expect): every metric and
 * finding of the whole trace and of each scope an expectation could name
 * in it, so that a user reads the values instead of guessing thresholds.
 *
 * The scopes, in this order: a case's trace file, each variant; a
 * program's (per-process files, a rec file, exec's trace.json), the whole
 * program, each NVTX range name (range(NAME), at most 64 names), each
 * device where it ran on several (device(N)), each rank (rank(N)), and
 * the steps of the first CP_MEASURE_STEP_RANGES range names that came
 * more than once (per step(NAME): each metric's median, p95 and largest,
 * with its step).
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests; it may change in any release.
 */
#ifndef CUPROOF_INTERNAL_MEASURE_H
#define CUPROOF_INTERNAL_MEASURE_H

#include "../export.h"
#include "../metrics.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CP_MEASURE_STEP_RANGES 4

typedef struct cp_measured_scope {
    char scope[192]; /* as an expectation writes it: "range(step)", "device(1)", "rank(0)";
                      * "" for the whole program; a variant's name in a case's file */
    bool measured;   /* m holds its figures; else why says why it has none */
    char why[256];
    cp_metrics m;
    /* 'per step(NAME)' (internal/steps.h): its steps instead of m; owned. */
    bool per_step;
    struct cp_step_row *steps;
    size_t nsteps;
} cp_measured_scope;

typedef struct cp_measured {
    bool program;          /* a traced program's (else a case's variants) */
    char name[128];        /* the case, or the program's command's name */
    size_t processes;      /* a program's traced processes */
    bool more_ranges;      /* range names past the first 64 were left out */
    cp_measured_scope *scopes;
    size_t n;
} cp_measured;

/* A program's per-process files (rec false) or one rec file (rec true),
 * streamed in bounded memory: a first reading for the whole program and
 * the scopes it holds, a second for each scope's own figures. Returns 0,
 * or the readers' error (CP_ENOENT, CP_EIO, CP_EPARSE naming the file),
 * CP_ENOMEM; `out` is to be freed with cp_measured_free either way. */
CP_API int cp_measure_program(const char *const *paths, size_t n, bool rec,
                              const cp_stream_opts *opts, cp_measured *out);

/* A cuproof.trace/1 file read whole: a case's (each variant) or a traced
 * program's (exec's trace.json: the program and its scopes). Returns 0,
 * or the reader's error; free `out` with cp_measured_free either way. */
CP_API int cp_measure_trace_file(const char *path, const cp_timeline_opts *opts,
                                 cp_measured *out);

CP_API void cp_measured_free(cp_measured *m);

/* Printed (reports/measured_text.c, reports/measured_json.c): as text,
 * one trace; as JSON, {"traces": [...]}: each trace's object after the
 * first with first false, then cp_measured_print_json_end. */
CP_API void cp_measured_print_text(FILE *f, const cp_measured *m, const char *path);
CP_API void cp_measured_print_json(FILE *f, const cp_measured *m, const char *path, bool first);
CP_API void cp_measured_print_json_end(FILE *f);

#ifdef __cplusplus
}
#endif

#endif
