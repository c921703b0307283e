/*
 * Error codes of cuproof and the thread's last error.
 *
 * Every harness function returns 0 on success or one negative code from
 * CP_ERRNO_MAP (in the spirit of libuv's UV_ERRNO_MAP), so callers can test
 * `rc < 0` and print cp_strerror(rc). Nothing here needs a CUDA header: the
 * checking macros for CUDA, CUPTI and NVRTC calls are in check.h.
 */
#ifndef CUPROOF_ERROR_H
#define CUPROOF_ERROR_H

#include "export.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CP_ERRNO_MAP(XX)                                               \
    XX(EINVAL, -1, "invalid argument")                                 \
    XX(ENOMEM, -2, "out of memory")                                    \
    XX(ECUDA, -3, "CUDA error")                                        \
    XX(ECUPTI, -4, "CUPTI error")                                      \
    XX(ENVRTC, -5, "NVRTC error")                                      \
    XX(ENODEV, -6, "no usable CUDA device")                            \
    XX(EIO, -7, "input/output error")                                  \
    XX(EPARSE, -8, "malformed input")                                  \
    XX(ENOENT, -9, "not found")                                        \
    XX(EVERIFY, -10, "device result does not match the CPU reference") \
    XX(ESKIP, -11, "skipped")                                          \
    XX(EDROPPED, -12, "activity records were dropped")                 \
    XX(ERANGE, -13, "value out of range")                              \
    XX(ETIMEDOUT, -14, "timed out")

enum {
#define CP_ERRNO_ENUM_(name, value, text) CP_##name = value,
    CP_ERRNO_MAP(CP_ERRNO_ENUM_)
#undef CP_ERRNO_ENUM_
};

/* Returns the description of a code from CP_ERRNO_MAP, or "unknown error". */
CP_API const char *cp_strerror(int code);

/* Returns the code's name ("CP_ECUDA"), or "CP_UNKNOWN". */
CP_API const char *cp_err_name(int code);

/*
 * Records one failed call as this thread's last error (cp_last_error):
 *   file:line: call failed: ERRNAME: error string
 * Nothing is printed here: whoever reports the failure (the runner into
 * the report, the command line on stderr) shows it once. Returns `code`.
 */
CP_API int cp_fail(int code, const char *file, int line, const char *call, const char *errname,
            const char *errstr);

/* Formats a failure that is not a library call (a bad size, a mismatch). */
CP_API int cp_failf(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The message of this thread's last cp_fail/cp_failf, "" when none. */
CP_API const char *cp_last_error(void);
CP_API void cp_clear_last_error(void);

/* Several errors said together, for an input that holds more than one
 * (an expectation file with three bad lines reports all three): each
 * cp_errors_add appends the thread's last error, the first code kept;
 * cp_errors_finish makes them the last error, one per line (the later
 * ones indented), and returns the first code, or 0 when none was added.
 * Past the last error's room the rest are counted, not lost silently. */
typedef struct cp_errors {
    char text[4000];
    size_t used;
    int first, n, dropped;
} cp_errors;
CP_API void cp_errors_add(cp_errors *e, int code);
CP_API int cp_errors_finish(cp_errors *e);

/* Propagates a harness return code through the same cleanup path. */
#define CP_TRY(expr)                  \
    do {                              \
        int cp_try_rc_ = (expr);      \
        if (cp_try_rc_ < 0) {         \
            rc = cp_try_rc_;          \
            goto out;                 \
        }                             \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif
