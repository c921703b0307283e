/*
 * Expectations: declarative checks of a trace's metrics, one a line, as a
 * user writes them in a file or in --expect arguments:
 *
 *   # pinned streams must overlap copies with kernels
 *   streams-pinned: copy_kernel_overlap_ratio > 0.5
 *   streams-pageable: finding cuda_memcpy_async
 *   streams-pinned: no finding cuda_memcpy_async
 *   range(step): copy_kernel_overlap_ratio >= 0.4
 *   span_ns < 2.5e6
 *
 * Grammar, one expectation a line:
 *
 *   line    := [('every' 'rank' | 'rank' 'spread') ':'] [scope ':'] body [comment]
 *            | 'rank' '(' N ')' [NAME '(' ARG ')'] ':' body [comment]
 *            | 'per' 'step' ['(' ARG ')'] ['p' N] ':' body [comment]
 *   scope   := NAME | NAME '(' ARG ')'
 *   body    := METRIC OP NUMBER | 'finding' FINDING | 'no' 'finding' FINDING
 *   NAME    := [A-Za-z0-9_.+-]+
 *   ARG     := characters other than ')', trimmed, not empty
 *   METRIC  := [A-Za-z_][A-Za-z0-9_]*      FINDING := the same
 *   OP      := '<' | '<=' | '>' | '>=' | '==' | '!='
 *   NUMBER  := a finite decimal number (0.5, -1, 2.5e6; no hex, inf or nan)
 *
 * A '#' starts a comment wherever it stands, inside a scope's ARG too, and
 * blank lines are skipped. A scope is recognised by a ':' right after the
 * first word (and its parenthesised ARG), so a body, which never holds a
 * ':', cannot be mistaken for one. `finding` and `no` are keywords only as
 * the first word of a body. Columns count bytes from 1, a tab as one.
 *
 * Ranks (traced programs, docs/distributed.md): `rank(N)` keeps the
 * processes whose rank is N (a decimal integer below 2^31), alone or
 * before one more scope, `rank(1) range(step): ...`; `every rank:` before
 * a line evaluates it on each rank of the trace and holds when it holds
 * on all (cp_expect_eval_trace names the worst rank); `rank spread:`
 * compares the largest minus the smallest of a metric over the ranks
 * (`rank spread: range(step): idle_ns < 1e6`). `rank`, `every` and
 * `spread` are keywords only there: a variant called "rank" is
 * `rank: ...`.
 *
 * Steps (traced programs): `per step:` judges a metric of the per-step
 * table (CP_STEP_METRIC_MAP: `per step: step_ns < 20e6`) on every
 * occurrence of the NVTX range `step` (`per step(NAME):` another range)
 * and names the worst; `per step p95:` judges the 95th percentile of the
 * steps' values instead (p1 to p100, nearest rank). `per` and `step` are
 * keywords only there, and 'per step' takes no other scope.
 *
 * Collectives (traced programs): `collective(OP)` takes the rows of the
 * per-collective table of operation OP (cp_collective_row: NCCL's
 * kernels' AllReduce, AllGather, ...) together, with their own metrics
 * (CP_COLLECTIVE_METRIC_MAP: `collective(AllGather): exposed_share <
 * 0.3`); an operation the trace lacks is not measured, and it takes no
 * rank.
 *
 * This module only parses: which metrics, variants and findings exist is
 * checked by its callers, who can name the offending token through the
 * columns that each expectation keeps.
 */
#ifndef CUPROOF_EXPECT_H
#define CUPROOF_EXPECT_H

#include "export.h"
#include "metrics.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CP_EXPECT_COMPARE = 0, CP_EXPECT_FINDING, CP_EXPECT_NO_FINDING } cp_expect_kind;
typedef enum { CP_OP_LT = 0, CP_OP_LE, CP_OP_GT, CP_OP_GE, CP_OP_EQ, CP_OP_NE } cp_expect_op;

typedef struct cp_expectation {
    cp_expect_kind kind;
    char *scope;     /* "" when none; the NAME part, e.g. "streams-pinned" or "range" */
    char *scope_arg; /* NULL when the scope has no (ARG); "step" for range(step) */
    char *name;      /* the metric (COMPARE) or the finding */
    cp_expect_op op; /* COMPARE only */
    double value;    /* COMPARE only */
    char *text;      /* the line as written, trimmed, without its comment */
    int line;        /* 1-based line in the parsed text */
    /* 1-based columns, for later errors. scope_column is the column of the
     * scope's NAME, or of the body's first word when there is no scope;
     * value_column is the number's column, or name_column for a finding. */
    int scope_column, name_column, value_column;
    /* rank(N): only the processes of rank N (has_rank); rank_column is
     * the column of its "rank", or of "every" for 'every rank'. */
    bool has_rank;
    int32_t rank;
    /* 'every rank:': evaluated on each rank, holding when all hold. */
    bool every_rank;
    /* 'rank spread:' (every_rank is set too): the metric's largest value
     * over the ranks minus its smallest is what the line compares. */
    bool spread_ranks;
    int rank_column;
    /* 'per step:' (cuproof/internal/steps.h): judged on each occurrence of
     * the range `step_range` ("step" unless 'per step(NAME)' names
     * another) alone, with the per-step metrics; holds when every step
     * holds, or, with 'per step pNN:', when the NN-th percentile of the
     * steps' values does (step_quantile NN, 0 for every step).
     * step_column is the column of "per". */
    bool per_step;
    char *step_range;
    int step_quantile;
    int step_column;
} cp_expectation;

typedef struct cp_expect_list {
    cp_expectation *items;
    size_t n, cap;
    /* A line `#! comm-pattern: NAME` of the text: the communication
     * pattern its expectations are judged under (cp_activity_class); ""
     * when none said one. A later text's directive replaces an earlier's. */
    char comm_pattern[64];
} cp_expect_list;

/*
 * Parses `text` (any number of lines, up to its terminating NUL) and
 * appends its expectations, in the order written, to `list`, which the
 * caller zero-initialised or filled by earlier calls. first_line is the
 * number of text's first line (1 normally), so that a caller can number
 * the lines of a file or of several --expect arguments as the user sees
 * them. Returns 0 on success, also for a text without expectations. On
 * error it returns a negative code and records a message naming line,
 * column and the offending token as the thread's last error
 * (cp_last_error): CP_EPARSE for a syntax error, CP_ERANGE for a number
 * too large or too small for a double, CP_ENOMEM when memory ran out and
 * CP_EINVAL for a NULL text or list or a first_line below 1. After an
 * error `list` is exactly as it was before the call: nothing of the text
 * is appended. The appended strings belong to the list and are released
 * by cp_expect_list_free.
 */
CP_API int cp_expect_parse(const char *text, int first_line, cp_expect_list *list);

/*
 * cp_expect_parse, saying every error of the text at once: when a line
 * does not parse, the lines that do are also checked for an unknown
 * metric or finding (with "did you mean"), so that a file with a syntax
 * error and a misspelt name reports both. Returns what cp_expect_parse
 * returns; `list` is left as it was on an error.
 */
CP_API int cp_expect_parse_all(const char *text, int first_line, cp_expect_list *list);

/*
 * An expectation file's `len` bytes (`text` NUL-terminated after them),
 * as cp_expect_parse_all reads them, but saying first what the file is
 * not: a file holding a NUL byte is "not a text file" (CP_EPARSE, with the
 * byte's offset), and one of three lines or more, none of which parses, is
 * named as no expectation file before its errors ("none of its 12 lines
 * is an expectation: is it an expectation file?"). Returns what
 * cp_expect_parse_all returns.
 */
CP_API int cp_expect_parse_file(const char *text, size_t len, cp_expect_list *list);

/*
 * Releases every expectation of `list`, their strings and the array, and
 * leaves the list zeroed so that it can be filled again. A NULL list is
 * ignored.
 */
CP_API void cp_expect_list_free(cp_expect_list *list);

/*
 * The one scope rule of `--range NAME` (exec and check alike): every
 * expectation of `list` that names no scope is scoped to range(NAME), and
 * its text becomes "range(NAME): TEXT" so that every verdict printed or
 * reported says where it was measured. Expectations with a scope keep it.
 * A NULL or empty range leaves the list as it is. Returns 0, or CP_ENOMEM
 * (the list then holds every expectation, some not yet scoped).
 */
CP_API int cp_expect_scope_range(cp_expect_list *list, const char *range);

/*
 * Returns the operator as written in an expectation ("<", "<=", ">", ">=",
 * "==" or "!="), or "?" for a value outside cp_expect_op. The string is
 * static and must not be freed.
 */
CP_API const char *cp_expect_op_name(cp_expect_op op);

/*
 * Returns whether `measured op value` holds. A NaN on either side makes
 * every comparison false, "!=" included, so that a metric that could not
 * be measured never satisfies an expectation. An op outside cp_expect_op
 * also gives false.
 */
CP_API bool cp_expect_compare(double measured, cp_expect_op op, double value);

/* How far `measured` is from holding `op value` (larger is farther), to
 * name the worst of several answers ('every rank', 'per step') among the
 * failing or among the passing: for > and >= the smaller value, for < and
 * <= the larger, for == the farther from the number; 0 for !=. */
CP_API double cp_expect_badness(double measured, cp_expect_op op, double value);

/*
 * Checks the names in every expectation of `list` against what exists:
 * each metric must be in CP_METRIC_MAP, each finding in CP_FINDING_MAP, and
 * each scope one of the n names in `scopes` (a case's variants) or
 * device(N), which every variant has (each device's part of its trace).
 * The other scopes with an argument, range(step) and process(PID),
 * belong to traced programs and are refused here. Returns 0, or CP_EINVAL
 * with cp_last_error naming the line, the column, the unknown name and
 * the names that would do.
 */
CP_API int cp_expect_validate(const cp_expect_list *list, const char *const *scopes, size_t nscopes);

/* cp_expect_validate of e's metric or finding alone, whatever its scope
 * (a program's scopes are checked by cp_expect_validate_program). */
CP_API int cp_expect_validate_name(const cp_expectation *e);

/* The name of the check that expectation e becomes for a case's variant:
 * its text when e names the variant, else "VARIANT: TEXT" (the runner's
 * checks, and a replay's that must find them again; device(N) names no
 * variant). */
CP_API void cp_expect_check_name(const cp_expectation *e, const char *variant, char *buf,
                                 size_t size);

/* A scope's number (the PID of process(PID), the N of device(N)) into
 * *out: a decimal integer below 2^32, digits only. */
CP_API bool cp_expect_scope_number(const char *s, uint32_t *out);

/* Whether e is scoped by device(N): for a case, evaluated on each variant
 * it applies to, on that device's part of its trace (cp_expect_eval_trace). */
CP_API bool cp_expect_on_device(const cp_expectation *e);

/*
 * Evaluates one expectation on the metrics of a traced run: a comparison
 * of the named metric with the value, or whether the finding was raised.
 * Writes what was measured ("0.812", "raised (count 64)") into
 * `measured`. Returns whether the expectation holds; false for a metric
 * or finding that does not exist (cp_expect_validate catches those first).
 */
CP_API bool cp_expect_eval(const cp_expectation *e, const cp_metrics *m, char *measured,
                           size_t len);

/*
 * Scopes of a traced program (`cuproof exec`, `cuproof check` on
 * per-process files), where a trace holds one program rather than a
 * case's variants:
 *
 *   range(NAME)   the time inside the ranges (NVTX markers) called NAME,
 *                 of any process: their union
 *   process(PID)  the records of the processes with that pid
 *   device(N)     the work on device N
 *
 * Copies into `out` the part of `in` that `scope` with `arg` names (scope
 * "" with a NULL arg: all of it). In range(NAME) every kernel, copy and
 * memset is clipped to the union: the part inside is kept, the part
 * outside dropped, and a record that crosses a gap between two pieces of
 * the union becomes one record per piece (so that busy and overlap times
 * count only time inside; counts of records can then exceed the
 * program's). Host records (API calls and ranges) are kept as they are in
 * range(NAME) and device(N): they are not device work and no metric reads
 * them. `out` needs no initialising and its earlier contents are not
 * freed; it receives the processes and counts of `in` too, so that process
 * indices keep their meaning, and the caller frees it (cp_trace_free) after
 * success. Returns 0; CP_ENOENT when the trace has no range NAME, no
 * process PID or no work on device N; CP_EINVAL for a scope that is none
 * of the three (a variant's name included), or a PID or N that is not a
 * decimal integer; CP_ENOMEM. On error `why` (whylen bytes, may be 0) says
 * what, e.g. "no range named 'step' in the trace", cp_last_error too, and
 * `out` holds nothing.
 */
CP_API int cp_trace_scope(const cp_trace *in, const char *scope, const char *arg, cp_trace *out,
                          char *why, size_t whylen);

/* cp_trace_scope on the processes of rank `rank` alone (-1: all), as
 * cp_scope_set_rank scopes them. */
CP_API int cp_trace_scope_rank(const cp_trace *in, int32_t rank, const char *scope,
                               const char *arg, cp_trace *out, char *why, size_t whylen);

/*
 * The same scopes over records that come one at a time, for a trace too
 * long to hold: two passes over the records, the first to learn what the
 * scope needs (the ranges called NAME, whether device N has work), the
 * second to hand on the part of each record the scope names, clipped as
 * cp_trace_scope clips it (which is built on these).
 *
 *   cp_scope_new(&s, "range", "step", why, sizeof why);
 *   first pass: cp_scope_learn(s, &a) for every record
 *   cp_scope_ready(s, &meta, why, sizeof why);    // meta: the processes
 *   second pass: cp_scope_emit(s, &a, fn, ctx) for every record
 *
 * Memory: the ranges called NAME (two 64-bit times each), a flag per
 * process. cp_scope_new returns 0, CP_EINVAL (as cp_trace_scope) or
 * CP_ENOMEM; cp_scope_learn 0 or CP_ENOMEM; cp_scope_ready 0, CP_ENOENT
 * (no range NAME, no process PID, no work on device N: `why` says which)
 * or CP_ENOMEM; cp_scope_emit 0, what `fn` returned, or CP_EINVAL before
 * cp_scope_ready.
 */
typedef struct cp_scope cp_scope;

CP_API int cp_scope_new(cp_scope **out, const char *scope, const char *arg, char *why,
                        size_t whylen);
/* rank(N) before the scope: only the processes of rank `rank` (-1: all),
 * and in range(NAME) only their own ranges. Call it before any record is
 * learnt; returns 0, or CP_EINVAL after. cp_scope_ready then fails with
 * CP_ENOENT ("no rank 3 in the trace (ranks: 0, 1)") when no process
 * has that rank. */
CP_API int cp_scope_set_rank(cp_scope *s, int32_t rank);
CP_API int cp_scope_learn(cp_scope *s, const cp_activity *a);
CP_API int cp_scope_ready(cp_scope *s, const cp_trace *meta, char *why, size_t whylen);
CP_API int cp_scope_emit(const cp_scope *s, const cp_activity *a, cp_activity_fn fn, void *ctx);
/* Accepts NULL. */
CP_API void cp_scope_free(cp_scope *s);

/*
 * Evaluates expectation `e` of a traced program on trace `t`: the part of
 * the trace its scope names (cp_trace_scope; the whole trace without a
 * scope), analysed with `opts` (may be NULL) and checked with
 * cp_expect_eval. *ok says whether it holds; `measured` gets the measured
 * value or why there is none. A scope with no kernel, copy or memset fails
 * (measured "no kernels, copies or memsets inside range 'step'"), so that
 * nothing passes for want of work; a range, process or device the trace
 * lacks fails with that reason. Returns 0 when the expectation was
 * evaluated (passed or failed); CP_EINVAL for a scope that
 * cp_expect_validate_program refuses; CP_ENOMEM.
 */
CP_API int cp_expect_eval_trace(const cp_expectation *e, const cp_trace *t,
                                const cp_timeline_opts *opts, bool *ok, char *measured,
                                size_t len);

/*
 * cp_expect_eval_trace for a trace too long to hold: expectation `e` over
 * records that come one at a time, in two passes (the first for what its
 * scope must learn, cp_scope_learn), the scope's part going through its
 * own streaming analysis (cp_stream, with `opts`, which may be NULL). The
 * verdicts, measured values and reasons are cp_expect_eval_trace's.
 *
 *   cp_expect_stream_new(&x, e, NULL);
 *   first pass: cp_expect_stream_learn(x, &a) for every record
 *   cp_expect_stream_ready(x, &meta);      // meta: processes, legacy stream
 *   second pass: cp_expect_stream_add(x, &a) for every record
 *   cp_expect_stream_finish(x, &whole, &ok, measured, sizeof measured);
 *
 * An expectation without a scope needs neither pass: the whole trace's
 * metrics (`whole`, from the caller's own streaming analysis) answer it.
 * Nor does device(N) of no rank need the second: a record's device says
 * whether it is the scope's, so learn hands it on and add does nothing
 * (cp_expect_stream_one_pass says which).
 * `e` must outlive the evaluator. new returns 0, CP_EINVAL (a scope that
 * cp_expect_validate_program refuses) or CP_ENOMEM; learn, ready and add
 * 0 or CP_ENOMEM / CP_EIO (a missing range, process or device is a
 * verdict, not an error); finish 0 when the expectation was evaluated, or
 * the streaming analysis' error. free accepts NULL.
 */
typedef struct cp_expect_stream cp_expect_stream;

CP_API int cp_expect_stream_new(cp_expect_stream **out, const cp_expectation *e,
                                const cp_stream_opts *opts);
CP_API int cp_expect_stream_learn(cp_expect_stream *x, const cp_activity *a);
CP_API int cp_expect_stream_ready(cp_expect_stream *x, const cp_trace *meta);
CP_API int cp_expect_stream_add(cp_expect_stream *x, const cp_activity *a);
CP_API bool cp_expect_stream_one_pass(const cp_expect_stream *x);
CP_API int cp_expect_stream_finish(cp_expect_stream *x, const cp_metrics *whole, bool *ok,
                                   char *measured, size_t len);
/* Instead of finish, for an expectation of one scope (not 'every rank',
 * not none): the metrics of what the scope handed on, into *out (freed
 * by the caller with cp_metrics_free), why "" ; or why the scope has
 * none (its range, process, device or rank is absent, or it holds no
 * kernel, copy or memset), *out zeroed. Returns 0, CP_EINVAL for an
 * expectation of another kind, or the streaming analysis' error. */
CP_API int cp_expect_stream_metrics(cp_expect_stream *x, cp_metrics *out, char *why, size_t len);
CP_API void cp_expect_stream_free(cp_expect_stream *x);

/*
 * A list of expectations judged on a trace too long to hold, in one or
 * two passes over its records (cuproof check on per-process files and on
 * rec files): the first pass feeds the whole trace's streaming analysis
 * (every unscoped expectation's answer) and what each scope must learn;
 * when an expectation has a scope, a second pass hands each scope its
 * part (cp_expect_stream). The records never need to be held.
 *
 *   cp_expect_judge_new(&j, &list, NULL);
 *   first pass:  cp_expect_judge_record(j, &a) for every record
 *   cp_expect_judge_between(j, &meta);          // processes, legacy stream
 *   if (cp_expect_judge_second_pass(j)) second pass: the same records again
 *   cp_expect_judge_metrics(j)->kernels ...     // the whole trace's metrics
 *   cp_expect_judge_verdict(j, k, &ok, measured, sizeof measured);
 *
 * cp_expect_judge_record has the signature of the readers' callbacks
 * (cp_proc_emit, cp_rec_emit), to be passed with j as their context. `list`
 * must outlive the judge. new and between return 0, CP_EINVAL (a scope
 * that cp_expect_validate_program refuses) or CP_ENOMEM; verdict 0 when
 * the expectation was evaluated. free accepts NULL.
 */
typedef struct cp_expect_judge cp_expect_judge;

CP_API int cp_expect_judge_new(cp_expect_judge **out, const cp_expect_list *list,
                               const cp_stream_opts *opts);
CP_API int cp_expect_judge_record(void *judge, const cp_activity *a);
CP_API int cp_expect_judge_between(cp_expect_judge *j, const cp_trace *meta);
CP_API bool cp_expect_judge_second_pass(const cp_expect_judge *j);
CP_API const cp_metrics *cp_expect_judge_metrics(const cp_expect_judge *j);
/* The program-wide figures of a distributed program's ranks (ranks.h)
 * into the whole trace's metrics, before the verdicts: expectations on
 * them are unscoped, so the whole trace's metrics answer them. */
struct cp_ranks;
CP_API void cp_expect_judge_put_ranks(cp_expect_judge *j, const struct cp_ranks *r);
/* The trace's earliest start (UINT64_MAX with no record). */
CP_API uint64_t cp_expect_judge_first(const cp_expect_judge *j);
CP_API int cp_expect_judge_verdict(cp_expect_judge *j, size_t k, bool *ok, char *measured,
                                   size_t len);
/* The distinct NVTX range names the first pass saw, in the order first
 * seen (at most CP_MAX_RANGE_NAMES; *more, which may be NULL, says whether
 * others were left out); the names live as long as the judge. */
#define CP_MAX_RANGE_NAMES 64
CP_API size_t cp_expect_judge_ranges(const cp_expect_judge *j, const char *const **names,
                                     bool *more);
/* How many ranges the k-th of those names the first pass saw. */
CP_API uint64_t cp_expect_judge_range_count(const cp_expect_judge *j, size_t k);
/* Expectation k's scope's own metrics (cp_expect_stream_metrics), after
 * the second pass, instead of its verdict. */
CP_API int cp_expect_judge_scope_metrics(cp_expect_judge *j, size_t k, cp_metrics *out, char *why,
                                         size_t len);
/* Moves the whole trace's metrics into *out (freed by the caller with
 * cp_metrics_free); after it, verdicts can no longer be asked for. */
CP_API void cp_expect_judge_take_metrics(cp_expect_judge *j, cp_metrics *out);
CP_API void cp_expect_judge_free(cp_expect_judge *j);

/*
 * cp_expect_validate for a traced program: each scope must be none,
 * range(NAME), process(PID) or device(N) (PID and N decimal integers
 * below 2^32), each metric in CP_METRIC_MAP and each finding in
 * CP_FINDING_MAP. Returns 0, or CP_EINVAL with cp_last_error naming the
 * line, the column and what is wrong.
 */
CP_API int cp_expect_validate_program(const cp_expect_list *list);

/* Whether `e`'s part of a program may span hosts: every expectation but
 * those of one rank (rank(N), 'every rank:' and 'rank spread:', measured
 * rank by rank) and of one process (process(PID)), since a rank and a
 * process run on one host. While the hosts are not aligned
 * (cp_ranks_unaligned) such an expectation is undecided. */
CP_API bool cp_expect_crosses_hosts(const cp_expectation *e);

/* Whether `scope` is one a traced program's expectation may name with an
 * argument (range, process, device), and the one nearest a misspelt
 * scope ("rnage": "range"; NULL when none is near). */
CP_API bool cp_expect_scope_known(const char *scope);
CP_API const char *cp_expect_scope_meant(const char *scope);

#ifdef __cplusplus
}
#endif

#endif
