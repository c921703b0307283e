/*
 * Trace files (schema "cuproof.trace/1"): every activity record of each
 * traced variant of a case, with a program's processes and the names the
 * program gave its streams (`stream_names`), written by a run and read
 * back by replay, check, export, timeline and the tests.
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_TRACEFILE_H
#define CUPROOF_TRACEFILE_H

#include "../export.h"

#include "../result.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CP_TRACE_SCHEMA "cuproof.trace/1"

typedef struct cp_trace_file cp_trace_file;

/* Writes the traces of a case's traced variants, recorded on `device` (its
 * name), to `path`. Returns 0, CP_ENOMEM or CP_EIO. */
CP_API int cp_trace_file_write(const cp_case_result *c, const char *device, const char *path);

/* One variant of a recorded trace file: its trace and what its run
 * measured itself. */
typedef struct cp_trace_variant {
    char name[64];
    cp_trace trace;
    cp_series *series;
    size_t nseries, series_cap;
} cp_trace_variant;

/* A recorded trace file read back: one trace per variant. */
struct cp_trace_file {
    char case_name[64];
    char device[256];
    cp_trace_variant *variants;
    size_t nvariants, variants_cap;
};

/*
 * Parses a trace file. Returns 0, CP_EIO when it cannot be read, or
 * CP_EPARSE when it is not JSON, has another schema, or a record misses a
 * field or has an unknown kind (cp_last_error says which and where: the
 * path first, then the line and column, or that the text ended, cut
 * short).
 */
CP_API int cp_trace_file_read(const char *path, cp_trace_file *out);
CP_API int cp_trace_file_parse(const char *text, cp_trace_file *out);
CP_API void cp_trace_file_free(cp_trace_file *f);

/* Whether a trace file is a traced program's (exec's trace.json: one
 * variant and the processes that wrote it), whose scopes are a program's
 * (range, process, device, rank), not a case's variants. */
CP_API bool cp_trace_file_is_program(const cp_trace_file *f);

/* A page of timelines drawn from recorded trace files (cuproof timeline),
 * with the same drawing as report.html. Returns a malloc'd string, or NULL
 * when out of memory. */
CP_API char *cp_trace_files_html(const cp_trace_file *files, size_t n);

#ifdef __cplusplus
}
#endif

#endif
