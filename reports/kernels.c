/*
 * The kernel breakdown's selection and the demangling of kernel names
 * for the reports (kernels.h). Demangling lives here, not in the
 * analysis layer, which is libc only: the classification there reads
 * only a name's leading identifier (harness/analysis/classes.c); people
 * read the whole demangled name, which this layer may build with the
 * toolkit's __cu_demangle (libcufilt, where the toolkit ships it: the
 * build defines CUPROOF_HAVE_CUFILT) or else libstdc++'s __cxa_demangle
 * (present wherever the CUDA toolchain is); both follow the Itanium ABI.
 * They write it differently (on the H100 host, CUDA 13: __cu_demangle
 * gives `kernel<(int)4>(float *)` where __cxa_demangle gives
 * `kernel<4>(float*)`, `<unnamed>::` for `(anonymous namespace)::`), but
 * the leading identifier the classification reads is the same in both
 * on the names tried there, NCCL's and PyTorch's among them.
 */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Declared here rather than through nv_decode.h or <cxxabi.h>: the
 * reports layer sees no CUDA header (tests/layers_test.sh), and this file
 * is C. Each returns a malloc'd name and sets *status 0 on success. */
#ifdef CUPROOF_HAVE_CUFILT
char *__cu_demangle(const char *id, char *output_buffer, size_t *length, int *status);
#define demangle(name, status) __cu_demangle(name, NULL, NULL, status)
#else
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
#define demangle(name, status) __cxa_demangle(name, NULL, NULL, status)
#endif

size_t cp_breakdown_top(const cp_metrics *m, cp_work_class c, size_t top[CP_BREAKDOWN_TOP],
                        cp_breakdown_rest *rest)
{
    size_t n = 0;
    memset(rest, 0, sizeof *rest);
    /* kernel_stats is sorted by total device time, the most first. */
    for (size_t i = 0; i < m->nkernel_stats; i++) {
        const cp_kernel_stat *k = &m->kernel_stats[i];
        if (k->cls != c)
            continue;
        if (n < CP_BREAKDOWN_TOP) {
            top[n++] = i;
        } else {
            rest->kernels++;
            rest->count += k->count;
            rest->total_ns += k->total_ns;
        }
    }
    return n;
}

void cp_demangle(const char *name, char *buf, size_t size)
{
    if (!size)
        return;
    int status = -1;
    char *d = name && strncmp(name, "_Z", 2) == 0 ? demangle(name, &status) : NULL;
    /* Out of memory or not a valid mangling: the name as CUPTI gave it. */
    snprintf(buf, size, "%s", status == 0 && d ? d : name ? name : "");
    free(d);
}
