/*
 * The kernel breakdown as report.json and report.html show it: the top
 * kernels of each class by total device time (cp_metrics.kernel_stats),
 * the rest of the class summed, and each name demangled for people to
 * read. Private to the reports layer (json.c and html.c are its users).
 */
#ifndef CUPROOF_REPORTS_KERNELS_H
#define CUPROOF_REPORTS_KERNELS_H

#include <cuproof/metrics.h>

#include <stddef.h>

/* Kernels shown per class; the rest are summed into one row. */
#define CP_BREAKDOWN_TOP 10

/* The classes the breakdown lists, in its order (kernels are compute or
 * communication; copies and memsets have no kernel name). */
#define CP_BREAKDOWN_NCLASSES 2
static const cp_work_class cp_breakdown_classes[CP_BREAKDOWN_NCLASSES] = {
    CP_CLASS_COMPUTE, CP_CLASS_COMMUNICATION};

/* What a class's rows leave out: the distinct names, their launches and
 * their device time. */
typedef struct cp_breakdown_rest {
    size_t kernels;
    uint64_t count, total_ns;
} cp_breakdown_rest;

/* The indexes into m->kernel_stats of class c's top kernels (at most
 * CP_BREAKDOWN_TOP, the most device time first) into `top`; returns how
 * many, and sums the rest of the class into *rest. */
size_t cp_breakdown_top(const cp_metrics *m, cp_work_class c, size_t top[CP_BREAKDOWN_TOP],
                        cp_breakdown_rest *rest);

/* `name` demangled (the Itanium C++ ABI, through libstdc++'s
 * __cxa_demangle, which follows the ABI the toolkit's __cu_demangle
 * does) into buf, cut to size; a name that is not mangled (a C kernel)
 * is copied as it is. */
void cp_demangle(const char *name, char *buf, size_t size);

#endif
