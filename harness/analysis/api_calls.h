/*
 * Which CUDA API calls matter, in one place: the patterns by which the
 * analyses read API call records (the only reads by name there are), and
 * the one rule of which calls `cuproof exec` records. Every API call CUPTI
 * records costs the traced program time on its own thread (about 0.4 to
 * 0.8 µs a call under a launch-bound loop on the H100), so the injection
 * library records only the calls some metric, finding, scope or view
 * reads; a test walks every name CUPTI knows and holds that whatever the
 * analyses' patterns match is kept (tests/test_api_filter.c).
 */
#ifndef CUPROOF_API_CALLS_H
#define CUPROOF_API_CALLS_H

#include <stdbool.h>
#include <stddef.h>

/* What an analysis reads an API call for. */
typedef enum {
    /* sweep.c: a call that may issue a copy, matched with the copy by
     * process and correlation: cuda_memcpy_async's host time. */
    CP_API_COPY_CALL = 0,
    /* sweep.c: an event wait between streams, which orders them:
     * serialized_streams is not raised where the program did that. */
    CP_API_STREAM_WAIT_EVENT,
    /* agreement.c: the event record before a launch, which bounds when
     * its start event can fire (events against the trace). */
    CP_API_EVENT_RECORD,
    CP_API_USE_COUNT
} cp_api_use;

/* How the analyses match a call's name for one use: a piece anywhere in
 * the name, or its start (`prefix`), as CUPTI gives it, suffixes and all. */
typedef struct cp_api_pattern {
    cp_api_use use;
    const char *text;
    bool prefix;
    const char *reader; /* who reads it, for messages */
} cp_api_pattern;

/* The analyses' patterns, one per use, in the order of cp_api_use. */
const cp_api_pattern *cp_api_patterns(size_t *n);

/* Whether `name` is a call of `use` (false for NULL). */
bool cp_api_is(const char *name, cp_api_use use);

/* A call's name without CUPTI's suffixes, in whatever order they come:
 * the version ("_v3020", "_v2": cp_api_name_len) and the per-thread
 * default stream's ("_ptds", "_ptsz"), so that
 * "cudaStreamGetCaptureInfo_v2_ptsz_v11030" is "cudaStreamGetCaptureInfo".
 * Writes it into buf and returns its length. */
size_t cp_api_base_name(const char *name, char *buf, size_t size);

/* One rule of the calls exec records: a class of calls, and a piece of
 * their base name (anywhere in it, or its start with `prefix`). */
typedef struct cp_api_rule {
    const char *what;
    const char *text;
    bool prefix;
} cp_api_rule;

/* The rules, for the documentation and the tests. */
const cp_api_rule *cp_api_rules(size_t *n);

/* Whether `cuproof exec` records calls of this name by default (its base
 * name matches a rule): kernel launches, graph launches, copies, memsets,
 * synchronising calls, event waits and records, allocation and free.
 * False for NULL. */
bool cp_api_kept(const char *name);

#endif
