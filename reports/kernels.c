/*
 * The kernel breakdown's selection and the demangling of kernel names
 * for the reports (kernels.h). Demangling lives here, not in the
 * analysis layer, which is libc only: the classification there reads
 * only a name's leading identifier (harness/analysis/classes.c); people
 * read the whole demangled name, which this layer may build with
 * libstdc++ (present wherever the CUDA toolchain is).
 */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler, declared here since this file is C. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

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
    char *d = name && strncmp(name, "_Z", 2) == 0 ? __cxa_demangle(name, NULL, NULL, &status)
                                                  : NULL;
    /* Out of memory or not a valid mangling: the name as CUPTI gave it. */
    snprintf(buf, size, "%s", status == 0 && d ? d : name ? name : "");
    free(d);
}
