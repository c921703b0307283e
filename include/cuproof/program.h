/*
 * A traced program's per-process files (cuproof/proc.h), read, analysed
 * and judged against expectations, in memory bounded whatever the
 * program's length: `cuproof exec` and `cuproof check` on a program's
 * directory both go through it.
 *
 * Up to `keep_records` records are held, as cp_proc_read_dir would hold
 * them, and analysed whole (cp_timeline_analyse, cp_expect_eval_trace).
 * Past that the records are streamed: they go once through the streaming
 * analysis (cp_stream) and into DIR/NAME.cprec as they are read; a second
 * reading of that file writes the Perfetto file (protobuf,
 * DIR/NAME.VARIANT.perfetto-trace), the timeline's summary and the scoped
 * expectations' own analyses (cp_expect_stream). The metrics, verdicts and
 * measured values are the same either way (the test suite holds the two
 * equal on the recorded programs).
 */
#ifndef CUPROOF_PROGRAM_H
#define CUPROOF_PROGRAM_H

#include "export.h"

#include "expect.h"
#include "metrics.h"
#include "result.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Records held at most by default: where a report's timeline is a summary
 * anyway and the Perfetto file is written in protobuf
 * (CP_PERFETTO_PROTO_RECORDS), about 40 MB of records in memory. */
#define CP_PROGRAM_KEEP_RECORDS 200000

typedef struct cp_program_opts {
    cp_timeline_opts timeline;
    /* Records held at most; past them the records are streamed. 0 means
     * CP_PROGRAM_KEEP_RECORDS; UINT64_MAX never streams. */
    uint64_t keep_records;
    /* Where streamed records go: out_dir/name.cprec and
     * out_dir/name.variant.perfetto-trace (variant NULL: "program"). */
    const char *out_dir, *name, *variant;
} cp_program_opts;

/* One expectation's verdict: whether it holds, and the measured value or
 * why there is none (cp_expect_eval_trace's words). */
typedef struct cp_program_check {
    bool ok;
    char measured[256];
} cp_program_check;

/* What the reading found beside the metrics. */
typedef struct cp_program_info {
    size_t nfiles;     /* per-process files read */
    uint64_t records;  /* records read, API calls included */
    uint64_t first_ns; /* the earliest non-zero start; UINT64_MAX with none */
    bool streamed;     /* past keep_records: v->summary is set, v->trace holds no records */
    char rec_path[4352], perfetto_path[4352]; /* the streamed files; "" when kept */
    /* Slices of the streamed Perfetto file that came too far out of order
     * on their track to be checked for nesting (Perfetto may draw them
     * with another's end); 0 when kept or when every one was checked. */
    uint64_t perfetto_unordered;
} cp_program_info;

/*
 * Reads the per-process files in `dir` into `v` (its trace initialised by
 * the caller and empty): v->trace gets the processes and counts, and the
 * records when they are kept; v->metrics the analysis; v->summary the
 * timeline's summary when streamed. Each of list's n expectations (list
 * may be NULL) is evaluated into checks[i], which must hold list->n.
 * With no per-process file, info->nfiles is 0 and nothing is analysed.
 * Returns 0, or the first error: reading (CP_EIO, CP_EPARSE naming the
 * file and line), writing the streamed files (CP_EIO naming them),
 * CP_EINVAL for a scope cp_expect_validate_program refuses, CP_ENOMEM.
 */
CP_API int cp_program_analyse(const char *dir, const cp_expect_list *list,
                              const cp_program_opts *opts, cp_variant_result *v,
                              cp_program_check *checks, cp_program_info *info);

#ifdef __cplusplus
}
#endif

#endif
