/*
 * Helpers for the CPU tests that replay traces recorded on an H100
 * (tests/fixtures/CASE-h100-ci.trace.json). Each fails the calling
 * Criterion test, with the reason, when a fixture or variant is missing.
 */
#ifndef CUPROOF_TESTS_REPLAY_H
#define CUPROOF_TESTS_REPLAY_H

#include <cuproof/internal/tracefile.h>
#include <cuproof/metrics.h>

#include <stdbool.h>
#include <stddef.h>

/* Reads the ci-profile fixture of case `name` into `f`; asserts that it was
 * recorded on an H100. */
void replay_load(cp_trace_file *f, const char *name);

/* Reads fixture `file` (in tests/fixtures) into `f`; asserts that it was
 * recorded on a GPU whose name holds `gpu`. */
void replay_load_file(cp_trace_file *f, const char *file, const char *gpu);

/* The trace of `variant` in `f`; asserts that it is there. */
cp_trace *replay_variant(cp_trace_file *f, const char *variant);

/* The kernels of a trace: how many, and the last one (NULL when none). */
size_t replay_kernels(const cp_trace *t, const cp_activity **last);

/* Copies of direction `dir` in a trace, and their bytes in all. */
size_t replay_copies(const cp_trace *t, cp_copy_dir dir, uint64_t *bytes);

/* Whether kernel `k` ran with grid (gx, gy, gz) and block (bx, by, bz). */
bool replay_shape_is(const cp_activity *k, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                     unsigned by, unsigned bz);

/* Evaluates every expectation case `name` declares (its .expect) on the
 * recorded variant it names (every variant when it names none), with the
 * metrics in m[i] for f->variants[i]; asserts that each holds and that
 * there were some. Returns how many (expectation, variant) pairs held. */
size_t replay_expectations(const cp_trace_file *f, const cp_metrics *m, const char *name);

/* Evaluates the expectations of case `name` that apply to variant `from`
 * (scoped to it, or to no variant) on the metrics `m` of another variant
 * or of an altered trace; returns how many failed there. */
size_t replay_expectations_fail_on(const cp_metrics *m, const char *name, const char *from);

/* The metrics of every variant of `f`, analysed with `opts` (NULL for the
 * defaults): element i is f->variants[i]'s, as replay_expectations reads
 * them. Asserts that each analysis succeeded; release the array with
 * replay_metrics_free(m, f->nvariants). */
cp_metrics *replay_analyse(const cp_trace_file *f, const cp_timeline_opts *opts);
void replay_metrics_free(cp_metrics *m, size_t n);

/* replay_expectations on the metrics of every variant of `f`, analysed
 * with `opts` (replay_analyse); returns how many pairs held. */
size_t replay_expectations_analysed(const cp_trace_file *f, const cp_timeline_opts *opts,
                                    const char *name);

#endif
