/*
 * NVTX annotations in one domain, "cuproof": a range per case, variant and
 * phase, and names for streams, so that Nsight Systems shows the harness's
 * structure. Every range is also stamped on CUPTI's clock and added to the
 * open traced window, so reports draw the phases on the activity timeline.
 */
#ifndef CUPROOF_NVTX_H
#define CUPROOF_NVTX_H

#include "export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens a range named by the printf format; ranges nest up to 16 deep
 * (deeper pushes are ignored, and so are their pops). */
CP_API void cp_nvtx_push(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
CP_API void cp_nvtx_pop(void);

/* How many ranges this thread has open: 0 between cases when every push
 * was popped. */
CP_API int cp_nvtx_depth(void);

/* Names a cudaStream_t (passed as void * so callers need no CUDA header). */
CP_API void cp_nvtx_name_stream(void *stream, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif
