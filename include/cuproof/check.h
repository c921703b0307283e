/*
 * The checking macros for CUDA, CUPTI and NVRTC calls. They share one
 * expansion (CP_CALL): on failure they record file, line, the call's text,
 * the error's name and string as the thread's last error (error.h), set
 * `rc` and jump to the caller's single cleanup label `out`:
 *
 *   int rc = 0;
 *   CP_CUDA(cudaMalloc(&p, bytes));
 *   CP_CUDA(my_kernel_launch(p, n)); // a launch wrapper returning cudaGetLastError()
 * out:
 *   cudaFree(p);
 *   return rc;
 *
 * The translators take the library's result as an int, so this header needs
 * no CUDA header: the runtime's and NVRTC's are linked with the runner layer,
 * CUPTI's with the collect layer. The driver API's macro (CP_CU) is in
 * driver.h.
 */
#ifndef CUPROOF_CHECK_H
#define CUPROOF_CHECK_H

#include "export.h"

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Library-specific translators: 0 when `err` is the library's success
 * value, else cp_fail(...) with the library's own error name and string
 * and the returned code (CP_ECUDA, CP_ECUPTI, CP_ENVRTC). */
CP_API int cp_check_cuda(int err, const char *file, int line, const char *call);
CP_API int cp_check_cupti(int err, const char *file, int line, const char *call);
CP_API int cp_check_nvrtc(int err, const char *file, int line, const char *call);

#ifdef __cplusplus
}
#endif

#define CP_CALL(lib, call)                                                        \
    do {                                                                          \
        int cp_call_rc_ = cp_check_##lib((int)(call), __FILE__, __LINE__, #call); \
        if (cp_call_rc_ < 0) {                                                    \
            rc = cp_call_rc_;                                                     \
            goto out;                                                             \
        }                                                                         \
    } while (0)

#define CP_CUDA(call) CP_CALL(cuda, call)
#define CP_CUPTI(call) CP_CALL(cupti, call)
#define CP_NVRTC(call) CP_CALL(nvrtc, call)

#endif
