/*
 * The per-collective table (coll_rows.h): NCCL's kernel names read into
 * operation, algorithm and protocol, a slot per communication kernel, and
 * the rows grouped from them with their medians.
 */
#include "coll_rows.h"

#include <cuproof/error.h>
#include <cuproof/internal/grow.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NCCL's algorithms and protocols as its kernel names spell them. */
static const char *const algos[] = {"RING", "TREE", "COLLNET_DIRECT", "COLLNET_CHAIN",
                                    "NVLS", "NVLS_TREE", "PAT"};
static const char *const protos[] = {"LL", "LL128", "SIMPLE"};

static bool one_of(const char *tok, size_t len, const char *const *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(set[i]) == len && strncmp(set[i], tok, len) == 0)
            return true;
    return false;
}

bool cp__coll_class_of(const char *name, coll_class *out)
{
    memset(out, 0, sizeof *out);
    const char *id = NULL;
    size_t len = name ? cp_name_leading(name, &id) : 0;
    static const char *const prefixes[] = {"ncclDevKernel_", "ncclKernel_"};
    size_t skip = 0;
    for (size_t i = 0; i < 2 && !skip; i++) {
        size_t k = strlen(prefixes[i]);
        if (len > k && strncmp(id, prefixes[i], k) == 0)
            skip = k;
    }
    if (!skip)
        return false;
    /* Tokens between underscores: the operation first, then (after a
     * reduction and a type: Sum_f32) an algorithm, which may hold an
     * underscore itself (COLLNET_DIRECT, NVLS_TREE), and a protocol. */
    const char *p = id + skip, *end = id + len;
    const char *tok = p;
    size_t toklen = 0;
    while (tok + toklen < end && tok[toklen] != '_')
        toklen++;
    snprintf(out->op, sizeof out->op, "%.*s", (int)toklen, tok);
    p = tok + toklen;
    while (p < end) {
        p++; /* the underscore */
        tok = p;
        toklen = 0;
        while (tok + toklen < end && tok[toklen] != '_')
            toklen++;
        /* Two tokens that make one algorithm name. */
        size_t two = toklen;
        if (tok + toklen < end) {
            two = toklen + 1;
            while (tok + two < end && tok[two] != '_')
                two++;
        }
        if (two > toklen && one_of(tok, two, algos, sizeof algos / sizeof *algos)) {
            snprintf(out->algo, sizeof out->algo, "%.*s", (int)two, tok);
            toklen = two;
        } else if (one_of(tok, toklen, algos, sizeof algos / sizeof *algos)) {
            snprintf(out->algo, sizeof out->algo, "%.*s", (int)toklen, tok);
        } else if (one_of(tok, toklen, protos, sizeof protos / sizeof *protos)) {
            snprintf(out->proto, sizeof out->proto, "%.*s", (int)toklen, tok);
        }
        p = tok + toklen;
    }
    return out->op[0] != '\0';
}

long cp__coll_class_intern(coll_class **classes, size_t *n, size_t *cap, const char *name)
{
    coll_class k;
    if (!cp__coll_class_of(name, &k))
        snprintf(k.op, sizeof k.op, "%s", "other");
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*classes)[i].op, k.op) == 0 && strcmp((*classes)[i].algo, k.algo) == 0 &&
            strcmp((*classes)[i].proto, k.proto) == 0)
            return (long)i;
    coll_class *p = cp_grow(*classes, cap, *n, sizeof *p, 8);
    if (!p)
        return cp_failf(CP_ENOMEM, "out of memory for the collectives' classes");
    *classes = p;
    p[*n] = k;
    return (long)(*n)++;
}

long cp__coll_add(coll_rows *c, const cp_activity *a, uint64_t end)
{
    long cls = cp__coll_class_intern(&c->classes, &c->nclasses, &c->classes_cap, a->name);
    if (cls < 0)
        return cls;
    coll_slot *s = cp_grow(c->slots, &c->cap, c->n, sizeof *s, 256);
    if (!s)
        return cp_failf(CP_ENOMEM, "out of memory for the collectives' table");
    c->slots = s;
    c->slots[c->n] = (coll_slot){.dur_ns = end - a->start, .cls = (uint32_t)cls, .piece = a->piece};
    return (long)c->n++;
}

static size_t key_of(uint32_t lane1, uint64_t start, size_t cap)
{
    return (size_t)((start * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)lane1 * 0xC2B2AE3D27D4EB4Full)) &
           (cap - 1);
}

int cp__coll_key_put(coll_rows *c, uint32_t lane, uint64_t start, uint32_t slot)
{
    if (2 * (c->nkeys + 1) > c->keys_cap) {
        size_t cap = c->keys_cap ? 2 * c->keys_cap : 256;
        coll_key *k = calloc(cap, sizeof *k);
        if (!k)
            return cp_failf(CP_ENOMEM, "out of memory for the collectives' table");
        for (size_t i = 0; i < c->keys_cap; i++) {
            if (!c->keys[i].lane1)
                continue;
            size_t j = key_of(c->keys[i].lane1, c->keys[i].start, cap);
            while (k[j].lane1)
                j = (j + 1) & (cap - 1);
            k[j] = c->keys[i];
        }
        free(c->keys);
        c->keys = k;
        c->keys_cap = cap;
    }
    size_t j = key_of(lane + 1, start, c->keys_cap);
    for (; c->keys[j].lane1; j = (j + 1) & (c->keys_cap - 1))
        if (c->keys[j].lane1 == lane + 1 && c->keys[j].start == start)
            return 0; /* the first keeps it */
    c->keys[j] = (coll_key){start, lane + 1, slot};
    c->nkeys++;
    return 0;
}

uint32_t cp__coll_key_get(const coll_rows *c, uint32_t lane, uint64_t start)
{
    if (!c->keys_cap)
        return 0;
    for (size_t j = key_of(lane + 1, start, c->keys_cap); c->keys[j].lane1;
         j = (j + 1) & (c->keys_cap - 1))
        if (c->keys[j].lane1 == lane + 1 && c->keys[j].start == start)
            return c->keys[j].slot + 1;
    return 0;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static int row_cmp(const void *x, const void *y)
{
    const cp_collective_row *a = x, *b = y;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    int k = strcmp(a->op, b->op);
    if (!k)
        k = strcmp(a->algo, b->algo);
    return k ? k : strcmp(a->proto, b->proto);
}

int cp__coll_finish(coll_rows *c, cp_metrics *m)
{
    int rc = 0;
    cp_collective_row *rows = c->nclasses ? calloc(c->nclasses, sizeof *rows) : NULL;
    uint64_t *dur = c->n ? malloc(c->n * sizeof *dur) : NULL;
    if ((c->nclasses && !rows) || (c->n && !dur)) {
        rc = cp_failf(CP_ENOMEM, "out of memory for the collectives' table");
        free(rows);
        rows = NULL;
    }
    for (size_t k = 0; rc == 0 && k < c->nclasses; k++) {
        cp_collective_row *r = &rows[k];
        memcpy(r->op, c->classes[k].op, sizeof r->op);
        memcpy(r->algo, c->classes[k].algo, sizeof r->algo);
        memcpy(r->proto, c->classes[k].proto, sizeof r->proto);
        size_t n = 0;
        for (size_t i = 0; i < c->n; i++) {
            if (c->slots[i].cls != k)
                continue;
            /* A clipped kernel's later pieces add time, not a kernel (as
             * the kernel breakdown counts them). */
            if (!c->slots[i].piece)
                dur[n++] = c->slots[i].dur_ns;
            r->total_ns += c->slots[i].dur_ns;
            r->exposed_ns += c->slots[i].exposed_ns;
        }
        r->count = (uint32_t)n;
        qsort(dur, n, sizeof *dur, cmp_u64);
        r->median_ns = n ? (n % 2 ? dur[n / 2] : dur[n / 2 - 1] + (dur[n / 2] - dur[n / 2 - 1]) / 2)
                         : 0;
    }
    if (rc == 0 && rows)
        qsort(rows, c->nclasses, sizeof *rows, row_cmp);
    free(m->collective_rows);
    m->collective_rows = rows;
    m->ncollective_rows = rc == 0 ? c->nclasses : 0;
    free(dur);
    cp__coll_free(c);
    return rc;
}

void cp__coll_free(coll_rows *c)
{
    free(c->slots);
    free(c->classes);
    free(c->keys);
    memset(c, 0, sizeof *c);
}
