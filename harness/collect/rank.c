/* A process's rank, local rank, world size and exec run from the
 * launcher's environment (rank.h): no CUDA, no allocation, so that the
 * injection library can call it inside cuInit. */
#include "collect/rank.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The value of NAME in env, or NULL when it is not set. */
static const char *lookup(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; env && env[i]; i++)
        if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
            return env[i] + n + 1;
    return NULL;
}

/* The first of the NULL-ended names that is set: its value, and its name
 * in *which. */
static const char *first_set(char *const *env, const char *const *names, const char **which)
{
    for (size_t i = 0; names[i]; i++) {
        const char *v = lookup(env, names[i]);
        if (v) {
            *which = names[i];
            return v;
        }
    }
    return NULL;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A decimal integer from lo to 2^31-1, blanks around it allowed: strtol
 * would take signs, hex-looking prefixes and trailing junk. */
static bool parse_count(const char *s, int32_t lo, int32_t *out)
{
    while (is_blank(*s))
        s++;
    int64_t v = 0;
    size_t digits = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        v = v * 10 + (*s - '0');
        if (v > INT32_MAX)
            return false;
    }
    while (is_blank(*s))
        s++;
    if (digits == 0 || *s != '\0' || v < lo)
        return false;
    *out = (int32_t)v;
    return true;
}

/* Appends one reason to p->rank_why. */
static void add_why(cp_process *p, const char *name, const char *value, const char *what)
{
    size_t used = strlen(p->rank_why);
    if (used + 1 >= sizeof p->rank_why)
        return;
    snprintf(p->rank_why + used, sizeof p->rank_why - used, "%s%s=\"%.24s\" is not %s",
             used ? "; " : "", name, value, what);
}

void cp_rank_from_env(char *const *env, cp_process *p)
{
    static const char *const ranks[] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK",
                                        "PMI_RANK", "PMIX_RANK", NULL};
    static const char *const locals[] = {"LOCAL_RANK", "SLURM_LOCALID",
                                         "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", NULL};
    static const char *const sizes[] = {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE",
                                        "PMI_SIZE", NULL};
    p->rank = p->local_rank = p->world_size = -1;
    p->rank_var[0] = p->rank_why[0] = p->run[0] = '\0';
    const char *which = NULL;
    const char *v = first_set(env, ranks, &which);
    if (v && parse_count(v, 0, &p->rank))
        snprintf(p->rank_var, sizeof p->rank_var, "%s", which);
    else if (v)
        add_why(p, which, v, "a rank (a decimal integer from 0)");
    if ((v = first_set(env, locals, &which)) && !parse_count(v, 0, &p->local_rank))
        add_why(p, which, v, "a local rank (a decimal integer from 0)");
    if ((v = first_set(env, sizes, &which)) && !parse_count(v, 1, &p->world_size))
        add_why(p, which, v, "a world size (a decimal integer from 1)");
    if (p->rank >= 0 && p->world_size > 0 && p->rank >= p->world_size) {
        size_t used = strlen(p->rank_why);
        snprintf(p->rank_why + used, sizeof p->rank_why - used,
                 "%srank %d is not below the world size %d", used ? "; " : "", (int)p->rank,
                 (int)p->world_size);
    }
    if ((v = lookup(env, CP_EXEC_RUN_VAR)))
        snprintf(p->run, sizeof p->run, "%s", v);
}

/* Fills why with "CUPROOF_TEST_HOST_SHIFT: at character POS: WHAT". */
static int shift_error(char *why, size_t len, const char *value, const char *at, const char *what)
{
    snprintf(why, len, "%s=\"%.80s\": at character %zu: %s", CP_TEST_HOST_SHIFT_VAR, value,
             (size_t)(at - value) + 1, what);
    return -1;
}

int cp_host_shift_parse(const char *value, int32_t rank, char *host, int64_t *offset_ns,
                        char *why, size_t why_len)
{
    /* Every entry is checked before any applies: a value malformed
     * anywhere shifts no rank, so that a typo never leaves half a
     * simulation that looks like a real one. */
    enum { MAX_ENTRIES = 1024 };
    int32_t seen[MAX_ENTRIES];
    size_t nseen = 0;
    const char *found = NULL; /* the host of this rank's entry */
    size_t found_len = 0;
    int64_t found_offset = 0;
    if (why_len)
        why[0] = '\0';
    if (!value || !*value)
        return 0;
    const char *s = value;
    for (;;) {
        /* RANK */
        const char *entry = s, *start = s;
        int64_t r = 0;
        for (; *s >= '0' && *s <= '9'; s++) {
            r = r * 10 + (*s - '0');
            if (r > INT32_MAX)
                return shift_error(why, why_len, value, start, "the rank is above 2^31-1");
        }
        if (s == start)
            return shift_error(why, why_len, value, s, "expected a rank (a decimal integer from 0)");
        if (*s != ':')
            return shift_error(why, why_len, value, s, "expected ':' after the rank");
        s++;
        /* HOST */
        start = s;
        while (*s && *s != ':' && *s != ',' && !is_blank(*s))
            s++;
        size_t hlen = (size_t)(s - start);
        if (hlen == 0)
            return shift_error(why, why_len, value, start, "expected a host name");
        if (hlen > CP_HOST_SHIFT_NAME_MAX)
            return shift_error(why, why_len, value, start, "the host name is longer than 63 characters");
        if (*s != ':')
            return shift_error(why, why_len, value, s, "expected ':' after the host name");
        const char *name = start;
        s++;
        /* OFFSET_NS */
        start = s;
        bool negative = *s == '-';
        if (*s == '-' || *s == '+')
            s++;
        const char *digits = s;
        int64_t off = 0;
        for (; *s >= '0' && *s <= '9'; s++) {
            off = off * 10 + (*s - '0');
            if (off > 1000000000000000ll)
                return shift_error(why, why_len, value, start, "the offset is beyond 10^15 ns");
        }
        if (s == digits)
            return shift_error(why, why_len, value, digits,
                               "expected an offset in ns (a decimal integer, optionally signed)");
        if (*s != ',' && *s != '\0')
            return shift_error(why, why_len, value, s, "expected ',' or the end after the offset");
        for (size_t i = 0; i < nseen; i++)
            if (seen[i] == (int32_t)r)
                return shift_error(why, why_len, value, entry,
                                   "this rank was given an entry before");
        if (nseen == MAX_ENTRIES)
            return shift_error(why, why_len, value, s, "more than 1024 entries");
        seen[nseen++] = (int32_t)r;
        if (rank >= 0 && (int32_t)r == rank) {
            found = name;
            found_len = hlen;
            found_offset = negative ? -off : off;
        }
        if (*s == '\0')
            break;
        s++;
    }
    if (!found)
        return 0;
    memcpy(host, found, found_len);
    host[found_len] = '\0';
    *offset_ns = found_offset;
    return 1;
}
