/*
 * Work classes (cuproof/metrics.h, cp_activity_class): communication,
 * memory and compute, as Holistic Trace Analysis and Nsight's
 * nccl_gpu_overlap_trace split a GPU's work, and the reader of mangled
 * kernel names that the rule needs.
 *
 * Where demangling lives, and why here only in part: CUPTI hands kernel
 * names mangled (`_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP128...`),
 * and the rule ("the demangled name starts with `nccl`") is about the
 * demangled one. This layer is libc only (tests/layers_test.sh), so it
 * cannot call the toolkit's `__cu_demangle` or libstdc++'s
 * `__cxa_demangle`; and demangling every record at ingestion would cost
 * a string per record where the streaming analysis keeps 24 bytes. The
 * rule needs only the demangled name's *leading identifier* (the longest
 * run of [A-Za-z0-9_] it starts with: `ncclDevKernel_AllReduce_Sum_f32...`
 * for a plain function, `at` for `at::native::kernel(...)`, `void` for
 * a template kernel, whose demangled name starts with its return type),
 * which a short reader of the Itanium prefix yields without building the
 * rest; a test holds it equal to the real demangler's output on many
 * names (tests/test_classes.c). Full demangling, for people to read, is
 * the reports layer's (it may link libstdc++). Communication patterns are
 * therefore identifiers too (cp_comm_pattern_valid), so that a prefix of
 * the leading identifier is a prefix of the demangled name.
 */
#include <cuproof/metrics.h>

#include <ctype.h>
#include <string.h>

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static size_t ident_len(const char *s)
{
    size_t n = 0;
    while (s[n] && ident_char(s[n]))
        n++;
    return n;
}

/* <source-name> ::= <length> <identifier>: sets *id and *len, returns the
 * position after it, or NULL when malformed. */
static const char *source_name(const char *p, const char **id, size_t *len)
{
    size_t n = 0;
    if (!isdigit((unsigned char)*p))
        return NULL;
    while (isdigit((unsigned char)*p)) {
        n = n * 10 + (size_t)(*p++ - '0');
        if (n > 4096)
            return NULL;
    }
    if (strnlen(p, n) < n)
        return NULL;
    *id = p;
    *len = n;
    return p + n;
}

/* Skips a number, a `_` ended parameter or substitution, and the like:
 * [n] digits and upper-case letters up to and with `_`. */
static const char *skip_to_underscore(const char *p)
{
    while (*p && *p != '_')
        p++;
    return *p ? p + 1 : NULL;
}

/*
 * Skips one construct that opens at p and closes with its `E`
 * (template arguments `I`, nested names `N`, function types `F`,
 * expressions `X`, packs `J`, local names `Z`, closures `Ul`, decltype
 * `DT`/`Dt`) or any run of simpler productions inside one, counting
 * depth: p points just after the opener; returns the position after its
 * closing `E`, or NULL when the name is malformed or beyond this reader
 * (`level`: closures it is nested in, which it enters by recursion).
 */
static const char *skip_to_close(const char *p, int level)
{
    int depth = 1;
    if (level > 64) /* closures in closures: beyond any real name, and the stack's guard */
        return NULL;
    while (*p) {
        char c = *p;
        const char *id;
        size_t len;
        if (isdigit((unsigned char)c)) {
            if (!(p = source_name(p, &id, &len)))
                return NULL;
        } else if (c == 'E') {
            p++;
            if (--depth == 0)
                return p;
        } else if (c == 'I' || c == 'N' || c == 'F' || c == 'X' || c == 'J' || c == 'Z') {
            depth++;
            p++;
        } else if (c == 'U' && (p[1] == 'l' || p[1] == 't')) {
            /* A closure Ul <parameters> E [<number>] _, or an unnamed
             * type Ut [<number>] _: the number is not a name's length. */
            if (p[1] == 'l')
                p = skip_to_close(p + 2, level + 1);
            else
                p += 2;
            if (!p || !(p = skip_to_underscore(p)))
                return NULL;
        } else if (c == 'D' && (p[1] == 'T' || p[1] == 't')) {
            depth++;
            p += 2;
        } else if (c == 'D' && p[1] == 'v') {
            if (!(p = skip_to_underscore(p + 2)))
                return NULL;
        } else if (c == 'D' && p[1]) {
            p += 2; /* Dp, Dn, Da, Df..., two letters */
        } else if (c == 'L') {
            /* A literal: L_Z <encoding> E, or L <type> <value> E. */
            if (p[1] == '_' && p[2] == 'Z') {
                depth++;
                p += 3;
            } else {
                p++;
                if (isdigit((unsigned char)*p) && !(p = source_name(p, &id, &len)))
                    return NULL;
                else if (!isdigit((unsigned char)*p) && *p)
                    p++; /* a builtin type's letter */
                while (*p && *p != 'E')
                    p++; /* its value: digits, n, lower-case hex */
                if (!*p)
                    return NULL;
                p++;
            }
        } else if (c == 'T' || c == 'S' || c == 'A') {
            /* T_, T0_, S_, S1_, A10_ (numbers, not names); St, Sa and the
             * like are two letters. */
            if (c == 'S' && islower((unsigned char)p[1]))
                p += 2;
            else if (c == 'T' && (p[1] == '_' || isdigit((unsigned char)p[1])))
                p = skip_to_underscore(p + 1);
            else if (c == 'S' || c == 'A')
                p = skip_to_underscore(p + 1);
            else
                p++;
            if (!p)
                return NULL;
        } else if (c == 'f' && p[1] == 'p') {
            if (!(p = skip_to_underscore(p + 2)))
                return NULL;
        } else {
            p++;
        }
    }
    return NULL;
}

static size_t set_out(const char **out, const char *s, size_t n)
{
    *out = s;
    return n;
}

size_t cp_name_leading(const char *name, const char **out)
{
    if (!name)
        return set_out(out, "", 0);
    if (strncmp(name, "_Z", 2) != 0)
        return set_out(out, name, ident_len(name)); /* a C name, or one already demangled */
    const char *p = name + 2, *id;
    size_t len;
    if (*p == 'L') /* internal linkage, which the demangled name does not show */
        p++;
    if (isdigit((unsigned char)*p)) {
        /* _Z <source-name> [<template-args> <return type>] <parameters> */
        const char *q = source_name(p, &id, &len);
        if (!q)
            return set_out(out, "", 0);
        /* A template function's demangled name starts with its return
         * type; a kernel's is void. */
        if (*q == 'I')
            return set_out(out, "void", 4);
        return set_out(out, id, len);
    }
    if (strncmp(p, "St", 2) == 0) {
        /* ::std:: <unqualified-name> */
        const char *q = source_name(p + 2, &id, &len);
        if (!q)
            return set_out(out, "", 0);
        return *q == 'I' ? set_out(out, "void", 4) : set_out(out, "std", 3);
    }
    if (*p != 'N')
        return set_out(out, "", 0);
    p++;
    while (*p == 'r' || *p == 'V' || *p == 'K' || *p == 'R' || *p == 'O')
        p++;
    /* The first component names the demangled name's start, unless the
     * last is template arguments (then the return type comes first). */
    const char *lead = "";
    size_t lead_len = 0;
    if (*p == 'S' && (p[1] == 't' || p[1] == 'a' || p[1] == 'b' || p[1] == 's' ||
                      p[1] == 'i' || p[1] == 'o' || p[1] == 'd')) {
        lead = "std";
        lead_len = 3;
    } else if (isdigit((unsigned char)*p)) {
        if (!source_name(p, &id, &len))
            return set_out(out, "", 0);
        /* "(anonymous namespace)" starts with no identifier. */
        if (!(len >= 10 && strncmp(id, "_GLOBAL__N", 10) == 0)) {
            lead = id;
            lead_len = len;
        }
    }
    bool last_template = false;
    while (*p && *p != 'E') {
        if (*p == 'I') {
            if (!(p = skip_to_close(p + 1, 0)))
                return set_out(out, "", 0);
            last_template = true;
            continue;
        }
        last_template = false;
        if (isdigit((unsigned char)*p)) {
            if (!(p = source_name(p, &id, &len)))
                return set_out(out, "", 0);
        } else if (*p == 'S') {
            p = islower((unsigned char)p[1]) ? p + 2 : skip_to_underscore(p + 1);
        } else if (*p == 'U' && p[1] == 'l') {
            p = skip_to_close(p + 2, 0);
            if (p)
                p = skip_to_underscore(p);
        } else if (*p == 'U' && p[1] == 't') {
            p = skip_to_underscore(p + 2);
        } else if (*p == 'C' || *p == 'D') {
            p += p[1] ? 2 : 1;
        } else {
            p++; /* an operator's two letters, one at a time */
        }
        if (!p)
            return set_out(out, "", 0);
    }
    if (*p != 'E')
        return set_out(out, "", 0);
    return last_template ? set_out(out, "void", 4) : set_out(out, lead, lead_len);
}

bool cp_comm_pattern_valid(const char *pattern)
{
    return pattern && *pattern && ident_len(pattern) == strlen(pattern);
}

bool cp_name_is_comm(const char *name, const char *pattern)
{
    if (!pattern)
        pattern = CP_COMM_PATTERN_DEFAULT;
    const char *lead;
    size_t n = cp_name_leading(name, &lead);
    size_t k = strlen(pattern);
    /* Case-sensitive, as HTA and nccl_gpu_overlap_trace match. */
    return k <= n && memcmp(lead, pattern, k) == 0;
}

cp_work_class cp_activity_class(const cp_activity *a, const char *pattern)
{
    switch (a->kind) {
    case CP_ACT_KERNEL:
        return cp_name_is_comm(a->name, pattern) ? CP_CLASS_COMMUNICATION : CP_CLASS_COMPUTE;
    case CP_ACT_MEMCPY:
    case CP_ACT_MEMSET:
        return CP_CLASS_MEMORY;
    default:
        /* API calls (cudaStreamSynchronize, cudaEventSynchronize and every
         * wait among them) and ranges are host time: never compute. */
        return CP_CLASS_HOST;
    }
}

const char *cp_work_class_name(cp_work_class c)
{
#define CP_CLASS_NAME(e, name, rule) name,
    static const char *const names[CP_CLASS_COUNT] = {CP_WORK_CLASS_MAP(CP_CLASS_NAME)};
#undef CP_CLASS_NAME
    return (unsigned)c < CP_CLASS_COUNT ? names[c] : "unknown";
}

const char *cp_work_class_rule(cp_work_class c)
{
#define CP_CLASS_RULE(e, name, rule) rule,
    static const char *const rules[CP_CLASS_COUNT] = {CP_WORK_CLASS_MAP(CP_CLASS_RULE)};
#undef CP_CLASS_RULE
    return (unsigned)c < CP_CLASS_COUNT ? rules[c] : "";
}
