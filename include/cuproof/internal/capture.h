/*
 * Capture windows (issue 43; docs/exec.md, "Capture windows"): what
 * `cuproof exec --capture SPEC` traces, so that a long program pays for
 * tracing only inside the windows it is judged on. One grammar, parsed
 * here for the command line (which refuses a bad SPEC with exit 2) and
 * again in the injected library (CUPROOF_EXEC_CAPTURE), so that the two
 * cannot read a SPEC differently:
 *
 *   range:NAME            every occurrence of the NVTX range NAME
 *   range:NAME@K          its K-th occurrence (from 1) in each process
 *   range:NAME@K-L        its K-th to L-th occurrences
 *   steps:NAME:W,U,A[,R]  the PyTorch profiler's schedule over the
 *                         occurrences of NAME: W skipped, U traced as
 *                         warm-up (not judged), A traced and judged, the
 *                         cycle R times (0 or none: until the end)
 *   profiler-api          between cudaProfilerStart and cudaProfilerStop
 *   after:S,for:D         D seconds from S seconds after the process
 *                         started tracing (decimal seconds)
 *
 * Occurrences are counted per process, on NVTX's default domain's push
 * and pop (nvtxRangePushA / nvtxRangePushEx with an ASCII message,
 * nvtxRangePop; what CuPy, PyTorch and nvtx3 programs call): a window
 * opens at the push of an occurrence it takes and closes at the pop that
 * ends it, unless the next occurrence is taken too, so that consecutive
 * occurrences are one window.
 *
 * Internal (include/cuproof/internal/): for cuproof's command line, its
 * injected library and tests; it may change in any release.
 */
#ifndef CUPROOF_INTERNAL_CAPTURE_H
#define CUPROOF_INTERNAL_CAPTURE_H

#include "../export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CP_CAPTURE_NONE = 0, /* everything, as without --capture */
    CP_CAPTURE_RANGE,
    CP_CAPTURE_STEPS,
    CP_CAPTURE_PROFILER,
    CP_CAPTURE_TIME,
} cp_capture_kind;

#define CP_CAPTURE_NAME_MAX 128

typedef struct cp_capture {
    cp_capture_kind kind;
    char name[CP_CAPTURE_NAME_MAX]; /* the range (RANGE, STEPS) */
    uint32_t first, last;           /* RANGE: occurrences first..last (last 0: no end) */
    uint32_t wait, warmup, active, repeat; /* STEPS (repeat 0: no end) */
    uint64_t after_ns, for_ns;      /* TIME */
} cp_capture;

/* A window as the trace keeps it: a range of this name in its process
 * (a warm-up window's has the other), from its opening to its closing,
 * whose `correlation` is the range's first occurrence in it (0 for
 * windows of no range): per step numbers the steps inside from it. */
#define CP_CAPTURE_RANGE_NAME "cuproof.capture"
#define CP_WARMUP_RANGE_NAME "cuproof.warmup"

/* The environment variable that hands the SPEC to the injected library. */
#define CP_CAPTURE_VAR "CUPROOF_EXEC_CAPTURE"

/* Parses SPEC into *out. Returns 0, or CP_EPARSE with `why` (and
 * cp_last_error) saying what is wrong and at which character, with the
 * forms above. */
CP_API int cp_capture_parse(const char *spec, cp_capture *out, char *why, size_t len);

/* What occurrence k (from 1) of c's range is: not taken (0), taken and
 * judged (1), or taken as warm-up, traced but not judged (2). Always 0
 * for PROFILER and TIME, whose windows are not occurrences. */
CP_API int cp_capture_takes(const cp_capture *c, uint32_t k);

/* Whether occurrences after k can still be taken (false once a range's
 * last or a schedule's last cycle has passed): tracing can stop for good. */
CP_API bool cp_capture_more_after(const cp_capture *c, uint32_t k);

/* The SPEC as it would be written, canonical ("range:step@3-52"). */
CP_API void cp_capture_format(const cp_capture *c, char *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif
