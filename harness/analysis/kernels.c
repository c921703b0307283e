/*
 * The kernel breakdown (cp_metrics.kernel_stats): per distinct kernel
 * name, its class, count and total, least and most device time, as both
 * analyses count activities (cp__kernel_table_add from the shared count
 * step's callers). Memory grows with the distinct names, never with the
 * records, so that the streaming analysis keeps its bound; the names are
 * copied because the streaming analysis sees each only during its call.
 * The names stay as CUPTI gave them (mangled): people read them
 * demangled in the reports layer, which may link a demangler. A name is
 * classed once, when first met, and each record takes its class from
 * here: the mangled-name reader runs per distinct name, not per record.
 */
#include <cuproof/metrics.h>

#include <cuproof/error.h>
#include <cuproof/internal/grow.h>

#include "sweep.h"

#include <stdlib.h>
#include <string.h>

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Doubles the index at half load, rehashing the names it holds. */
static int grow(kernel_table *t)
{
    if (2 * (t->n + 1) <= t->index_cap)
        return 0;
    size_t cap = t->index_cap ? 2 * t->index_cap : 64;
    uint32_t *idx = calloc(cap, sizeof *idx);
    if (!idx)
        return CP_ENOMEM;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = name_hash(t->items[i].name) & (cap - 1);
        while (idx[j])
            j = (j + 1) & (cap - 1);
        idx[j] = (uint32_t)i + 1;
    }
    free(t->index);
    t->index = idx;
    t->index_cap = cap;
    return 0;
}

int cp__kernel_table_add(kernel_table *t, const cp_activity *a, uint64_t end,
                         const cp_timeline_opts *o)
{
    if (a->kind != CP_ACT_KERNEL)
        return (int)cp_activity_class(a, NULL); /* by kind alone */
    const char *name = a->name && *a->name ? a->name : "(unnamed)";
    uint64_t d = end - a->start;
    size_t j = 0;
    if (t->index_cap)
        for (j = name_hash(name) & (t->index_cap - 1); t->index[j];
             j = (j + 1) & (t->index_cap - 1)) {
            cp_kernel_stat *k = &t->items[t->index[j] - 1];
            if (strcmp(k->name, name) != 0)
                continue;
            /* A later piece of a clipped kernel adds its time to the
             * kernel it belongs to, not a launch. */
            k->total_ns += d;
            if (!a->piece) {
                k->count++;
                if (d < k->min_ns)
                    k->min_ns = d;
                if (d > k->max_ns)
                    k->max_ns = d;
            }
            return (int)k->cls;
        }
    if (grow(t) < 0)
        return CP_ENOMEM;
    cp_kernel_stat *p = cp_grow(t->items, &t->cap, t->n, sizeof *p, 16);
    if (!p)
        return CP_ENOMEM;
    t->items = p;
    char *copy = strdup(name);
    if (!copy)
        return CP_ENOMEM;
    uint32_t one = a->piece ? 0 : 1;
    t->items[t->n] = (cp_kernel_stat){
        .name = copy,
        .cls = cp_activity_class(a, o ? o->comm_pattern : NULL),
        .count = one,
        .total_ns = d,
        .min_ns = one ? d : UINT64_MAX,
        .max_ns = one ? d : 0,
    };
    for (j = name_hash(copy) & (t->index_cap - 1); t->index[j]; j = (j + 1) & (t->index_cap - 1))
        ;
    t->index[j] = (uint32_t)++t->n;
    return (int)t->items[t->n - 1].cls;
}

/* By total time, the most first; ties by name, so that both analyses,
 * which meet the names in different orders, list them alike. */
static int stat_cmp(const void *a, const void *b)
{
    const cp_kernel_stat *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

void cp__kernel_table_finish(kernel_table *t, cp_metrics *m)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].min_ns == UINT64_MAX) /* pieces only: no whole launch */
            t->items[i].min_ns = 0;
    if (t->n)
        qsort(t->items, t->n, sizeof *t->items, stat_cmp);
    m->kernel_stats = t->items;
    m->nkernel_stats = t->n;
    free(t->index);
    memset(t, 0, sizeof *t);
}

void cp__kernel_table_free(kernel_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->items[i].name);
    free(t->items);
    free(t->index);
    memset(t, 0, sizeof *t);
}
