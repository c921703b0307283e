/*
 * What the analyses make of a recorded trace, as text that two readings
 * can be compared by (the first differing line names what differs):
 * shared by the API filter's replay (tests/test_replay_filter.c) and the
 * follower's (tests/test_follow.c), with the recorded exec traces both
 * walk (tests/fixtures/exec-*, found by name, so that one recorded later
 * is held to both too).
 */
#ifndef CUPROOF_TESTS_TRACE_TEXT_H
#define CUPROOF_TESTS_TRACE_TEXT_H

#include <cuproof/metrics.h>
#include <cuproof/trace.h>

#include <glob.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The H100's and H200's concurrent-kernel limit (sm_90). */
extern const cp_timeline_opts tt_h100;

/* Every metric, lane, graph, per-device figure, kernel of the breakdown,
 * the pageable copies' evidence and every finding with its words. */
void tt_put_metrics(FILE *f, const cp_metrics *m);

/* The scopes a trace offers, as expectation prefixes ("" is the whole
 * program): each range name (the first 8 met), process, device and rank,
 * then every rank and a rank spread when there are ranks. Returns how
 * many (at most cap). */
size_t tt_scopes_of(const cp_trace *t, const cp_metrics *m, char scopes[][96], size_t cap);

/* The expectations asked in scope `scope` (a prefix of tt_scopes_of), one
 * a line: a count, a share and every finding (no finding for a rank
 * spread, which has none). Returns the text's length. */
int tt_scope_lines(const char *scope, char *text, size_t size);

/* The first line where a and b differ, both sides, for a message. */
void tt_first_difference(const char *a, const char *b, char *out, size_t size);

/* Reads recorded trace `path` into t (initialised here): a per-process
 * file, a whole trace in the rec form, or a trace file's first variant. */
void tt_load(const char *path, cp_trace *t);

/* The traces exec recorded: the per-process files, the merged trace files
 * and the rec files of tests/fixtures/exec-* (globfree the result). */
glob_t tt_recorded(void);

#endif
