/*
 * Collectives matched across ranks, hosts' clocks aligned on their ends,
 * and the straggler found by arrival (cuproof/internal/collectives.h says the
 * rules). The kernels are kept as 32-byte entries and sorted twice: by
 * rank, stream and start to number them, then by collective to match.
 */
#include <cuproof/internal/collectives.h>

#include <cuproof/error.h>
#include <cuproof/internal/grow.h>

#include "coll_rows.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The communicator of a kernel left out of the matching (check_counts). */
#define LEFT_OUT UINT32_MAX

typedef struct comm_kernel {
    uint32_t rank, host, stream;
    uint32_t comm, seq; /* the collective it is, once numbered */
    uint32_t cls;       /* its operation, algorithm and protocol: an index into classes */
    uint64_t start, end;
    uint64_t hash, call_start; /* its NCCL call's communicator and start, where paired */
    int32_t peer;              /* a send's or receive's peer in the communicator */
    int8_t dir;                /* +1 a send, -1 a receive, 0 a collective */
} comm_kernel;

struct cp_collectives {
    comm_kernel *k;
    size_t n, cap;
    uint32_t *host_of; /* per rank + 1; 0: not seen */
    uint32_t nranks, nhosts;
    char unmatched[400]; /* why position cannot match them ("" when it can) */
    char partial[300];   /* which rank's collectives were left out, matched without them */
    coll_class *classes; /* the operations named so far (cp__coll_class_intern) */
    size_t nclasses, classes_cap;
    coll_call *calls; /* NCCL's calls with their payloads, by rank (process = rank) */
    size_t ncalls, calls_cap;
    bool by_comm;         /* numbered by NCCL's communicators (identify) */
    char matched_by[200]; /* how, when calls were recorded ("" when none was) */
};

int cp_collectives_new(cp_collectives **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : cp_failf(CP_ENOMEM, "out of memory");
}

void cp_collectives_free(cp_collectives *c)
{
    if (!c)
        return;
    free(c->k);
    free(c->host_of);
    free(c->classes);
    free(c->calls);
    free(c);
}

int cp_collectives_add_rank(cp_collectives *c, uint32_t rank, uint32_t host)
{
    if (rank >= c->nranks) {
        uint32_t n = rank + 1;
        uint32_t *p = realloc(c->host_of, n * sizeof *p);
        if (!p)
            return cp_failf(CP_ENOMEM, "out of memory");
        memset(p + c->nranks, 0, (n - c->nranks) * sizeof *p);
        c->host_of = p;
        c->nranks = n;
    }
    if (c->host_of[rank] && c->host_of[rank] != host + 1)
        return cp_failf(CP_EINVAL, "rank %u is on host %u and on host %u", rank,
                        c->host_of[rank] - 1, host);
    c->host_of[rank] = host + 1;
    if (host >= c->nhosts)
        c->nhosts = host + 1;
    return 0;
}

int cp_collectives_add(cp_collectives *c, uint32_t rank, uint32_t host, uint32_t stream,
                       uint64_t start, uint64_t end)
{
    return cp_collectives_add_named(c, rank, host, stream, start, end, NULL);
}

int cp_collectives_add_named(cp_collectives *c, uint32_t rank, uint32_t host, uint32_t stream,
                             uint64_t start, uint64_t end, const char *name)
{
    int rc = cp_collectives_add_rank(c, rank, host);
    if (rc < 0)
        return rc;
    long cls = cp__coll_class_intern(&c->classes, &c->nclasses, &c->classes_cap, name);
    if (cls < 0)
        return (int)cls;
    comm_kernel *p = cp_grow(c->k, &c->cap, c->n, sizeof *p, 256);
    if (!p)
        return cp_failf(CP_ENOMEM, "out of memory keeping %zu collectives", c->n);
    c->k = p;
    c->k[c->n++] = (comm_kernel){.rank = rank, .host = host, .stream = stream,
                                 .cls = (uint32_t)cls, .start = start,
                                 .end = end < start ? start : end};
    return 0;
}

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

static int by_rank_stream_start(const void *x, const void *y)
{
    const comm_kernel *a = x, *b = y;
    int c = CMP(a->rank, b->rank);
    if (!c)
        c = CMP(a->stream, b->stream);
    if (!c)
        c = CMP(a->start, b->start);
    return c;
}

static int by_collective(const void *x, const void *y)
{
    const comm_kernel *a = x, *b = y;
    int c = CMP(a->comm, b->comm);
    if (!c)
        c = CMP(a->seq, b->seq);
    if (!c)
        c = CMP(a->rank, b->rank);
    return c;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return CMP(a, b);
}

/* The median of n values (sorted in place); 0 for none. */
static int64_t median(int64_t *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_i64);
    return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

int cp_collectives_add_call(cp_collectives *c, uint32_t rank, uint64_t start, uint64_t comm,
                            uint64_t bytes, int32_t peer, const char *name)
{
    long rc = cp__coll_call_add(&c->calls, &c->ncalls, &c->calls_cap, rank, start, comm, bytes,
                                peer, name);
    return rc < 0 ? (int)rc : 0;
}

/* Each communication kernel paired with its NCCL call, per rank
 * (cp__coll_pair, coll_rows.h's rule): where every kernel of every rank
 * was, the collectives are numbered by communicator and call
 * (c->by_comm); c->matched_by says how they were. Returns 0 or
 * CP_ENOMEM. */
static int identify(cp_collectives *c)
{
    c->by_comm = false;
    c->matched_by[0] = '\0';
    if (!c->ncalls || !c->n)
        return 0;
    coll_pairable *k = malloc(c->n * sizeof *k);
    if (!k)
        return cp_failf(CP_ENOMEM, "out of memory pairing NCCL calls");
    for (size_t i = 0; i < c->n; i++)
        k[i] = (coll_pairable){.start = c->k[i].start, .stream = c->k[i].stream,
                               .op = c->classes[c->k[i].cls].op, .process = c->k[i].rank};
    int rc = cp__coll_pair(c->calls, c->ncalls, k, c->n);
    size_t paired = 0;
    for (size_t i = 0; rc == 0 && i < c->n; i++) {
        c->k[i].hash = k[i].comm;
        c->k[i].call_start = k[i].call_start;
        c->k[i].peer = k[i].peer;
        c->k[i].dir = k[i].dir;
        paired += k[i].comm != 0;
    }
    free(k);
    if (rc < 0)
        return rc;
    c->by_comm = paired == c->n;
    if (c->by_comm)
        snprintf(c->matched_by, sizeof c->matched_by, "%s",
                 "by NCCL's communicators and the order of their calls");
    else
        snprintf(c->matched_by, sizeof c->matched_by,
                 "by stream position: %zu of %zu communication kernels had their NCCL call", paired,
                 c->n);
    return 0;
}

static int by_rank_comm_call(const void *x, const void *y)
{
    const comm_kernel *a = x, *b = y;
    int c = CMP(a->rank, b->rank);
    if (!c)
        c = CMP(a->comm, b->comm);
    if (!c)
        c = CMP(a->call_start, b->call_start);
    return c;
}

/* A point-to-point channel: sends from one rank to another on one
 * communicator, which NCCL matches in order with the receiver's receives
 * from that rank. */
typedef struct channel {
    uint64_t hash;
    uint32_t from, to;
} channel;

static int cmp_channel(const void *x, const void *y)
{
    const channel *a = x, *b = y;
    int c = CMP(a->hash, b->hash);
    if (!c)
        c = CMP(a->from, b->from);
    if (!c)
        c = CMP(a->to, b->to);
    return c;
}

/* The channel of kernel `k`, a send or a receive: its peer is its rank in
 * the communicator, taken as the place of the peer's rank among the
 * communicator's ranks in ascending order (members[0..n), `off` into
 * `mem`), as PyTorch's process groups order them (new_group sorts its
 * ranks). False where that gives no other rank. */
static bool channel_of(const comm_kernel *k, const uint32_t *mem, size_t n, channel *out)
{
    if (k->peer < 0 || (size_t)k->peer >= n || mem[k->peer] == k->rank)
        return false;
    uint32_t other = mem[k->peer];
    *out = (channel){k->hash, k->dir > 0 ? k->rank : other, k->dir > 0 ? other : k->rank};
    return true;
}

/* Numbers the kernels by identity (c->by_comm): communicator m is the
 * m-th of the calls' communicators by id (cp__coll_comms), the same on
 * every rank, and a kernel's seq is its call's place among its rank's
 * collective calls on it. A send or a receive is numbered on its channel
 * instead (communicators' count + its channel's place): the k-th send
 * from one rank to another is the k-th receive there from it, as NCCL
 * pairs them, whatever collectives or other peers' transfers the two
 * ranks ran between. Where a peer cannot be placed, nothing is numbered
 * so (c->by_comm false: matched by position, saying why). Returns 0 or
 * CP_ENOMEM. */
static int number_by_comm(cp_collectives *c)
{
    coll_comm *comms = NULL;
    long n = cp__coll_comms(c->calls, c->ncalls, &comms);
    if (n < 0)
        return (int)n;
    /* Each communicator's ranks, ascending (the calls are sorted by
     * communicator and rank now). */
    size_t *off = calloc((size_t)n + 1, sizeof *off);
    uint32_t *mem = malloc((c->ncalls ? c->ncalls : 1) * sizeof *mem);
    /* Each send's or receive's channel (kc, by kernel), and the distinct
     * channels sorted (ch). */
    channel *kc = malloc((c->n ? c->n : 1) * sizeof *kc);
    channel *ch = malloc((c->n ? c->n : 1) * sizeof *ch);
    int rc = 0;
    if (!off || !mem || !kc || !ch) {
        rc = cp_failf(CP_ENOMEM, "out of memory numbering collectives");
        goto out;
    }
    size_t nm = 0;
    for (size_t i = 0, m = 0; i < c->ncalls; i++) {
        if (i && c->calls[i].comm != c->calls[i - 1].comm)
            off[++m] = nm;
        if (!i || c->calls[i].comm != c->calls[i - 1].comm ||
            c->calls[i].process != c->calls[i - 1].process)
            mem[nm++] = c->calls[i].process;
    }
    off[n] = nm;
    size_t nch = 0, unplaced = 0;
    for (size_t i = 0; i < c->n; i++) {
        size_t m = cp__coll_comm_find(comms, (size_t)n, c->k[i].hash);
        c->k[i].comm = (uint32_t)m;
        if (c->k[i].dir == 0 || m >= (size_t)n)
            continue;
        if (channel_of(&c->k[i], mem + off[m], off[m + 1] - off[m], &kc[i]))
            ch[nch++] = kc[i];
        else
            unplaced++;
    }
    if (unplaced) {
        c->by_comm = false;
        snprintf(c->matched_by, sizeof c->matched_by,
                 "by stream position: %zu sends or receives name a peer that is not one of "
                 "their communicator's other ranks in the trace",
                 unplaced);
        goto out;
    }
    qsort(ch, nch, sizeof *ch, cmp_channel);
    size_t u = 0;
    for (size_t i = 0; i < nch; i++)
        if (!u || cmp_channel(&ch[i], &ch[u - 1]) != 0)
            ch[u++] = ch[i];
    for (size_t i = 0; i < c->n; i++) {
        if (c->k[i].dir == 0 || c->k[i].comm >= (uint32_t)n)
            continue;
        const channel *at = bsearch(&kc[i], ch, u, sizeof *ch, cmp_channel);
        c->k[i].comm = (uint32_t)((size_t)n + (size_t)(at - ch));
    }
    qsort(c->k, c->n, sizeof *c->k, by_rank_comm_call);
    for (size_t i = 0, seq = 0; i < c->n; i++) {
        if (i && (c->k[i].rank != c->k[i - 1].rank || c->k[i].comm != c->k[i - 1].comm))
            seq = 0;
        c->k[i].seq = (uint32_t)seq++;
    }
out:
    free(comms);
    free(off);
    free(mem);
    free(kc);
    free(ch);
    return rc;
}

/* A jump of the difference of two ranks' ends, from one collective to the
 * next, larger than this is no clock's drift: a true pair's ends coincide
 * (none can finish before the last rank arrived), a pair shifted by one
 * is a collective's interval apart. More than one in ten such jumps in
 * the second half of a rank's collectives (3 at least) is a shift. */
#define GAP_JUMP_NS 50000

/* Whether matching by position can be trusted (c sorted by rank, stream
 * and start, numbered), and over which collectives. Every rank that ran
 * collectives must have run as many on each communicator; where one ran
 * fewer and its ends keep pace with the fullest rank's (no jump: its
 * trace ends first, cut short), the collectives every rank completed are
 * matched and the rest are left out (c->partial says how many); where its
 * ends part (a kernel missing in between: a dropped record, a collective
 * of a subgroup), or fewer than half would match, nothing is
 * (c->unmatched says where). Returns 0 or CP_ENOMEM. */
static int check_counts(cp_collectives *c)
{
    c->unmatched[0] = c->partial[0] = '\0';
    uint32_t most = 0;
    for (size_t i = 0; i < c->n; i++)
        most = c->k[i].comm + 1 > most ? c->k[i].comm + 1 : most;
    size_t cells = (size_t)(c->nranks ? c->nranks : 1) * (most ? most : 1);
    uint32_t *count = calloc(cells, sizeof *count);
    size_t *from = calloc(cells, sizeof *from);
    uint32_t *keep = calloc(most ? most : 1, sizeof *keep);
    int64_t *jump = malloc((c->n + 1) * sizeof *jump);
    int rc = count && from && keep && jump ? 0 : cp_failf(CP_ENOMEM, "out of memory counting "
                                                                     "collectives");
    for (size_t i = 0; rc == 0 && i < c->n; i++) {
        size_t at = (size_t)c->k[i].rank * most + c->k[i].comm;
        if (!count[at]++)
            from[at] = i;
    }
    bool *ran = rc == 0 ? calloc(c->nranks ? c->nranks : 1, sizeof *ran) : NULL;
    if (rc == 0 && !ran)
        rc = cp_failf(CP_ENOMEM, "out of memory counting collectives");
    for (size_t i = 0; rc == 0 && i < c->n; i++)
        ran[c->k[i].rank] = true;
    size_t left_out = 0;
    for (uint32_t m = 0; rc == 0 && m < most && !c->unmatched[0]; m++) {
        uint32_t ref = 0, full = 0;
        for (uint32_t r = 0; r < c->nranks; r++)
            if (ran[r] && count[(size_t)r * most + m] > full) {
                full = count[(size_t)r * most + m];
                ref = r;
            }
        keep[m] = full;
        for (uint32_t r = 0; r < c->nranks && !c->unmatched[0]; r++) {
            uint32_t n = count[(size_t)r * most + m];
            /* By identity, a rank with no call on a communicator is not
             * of it (a subgroup's), not one that ran none. */
            if (!ran[r] || n == full || (c->by_comm && n == 0))
                continue;
            const comm_kernel *a = &c->k[from[(size_t)ref * most + m]],
                              *b = &c->k[from[(size_t)r * most + m]];
            /* The jumps of the ends' difference from one collective to the
             * next: a true pair's stays put but for the warm-up's few (6
             * of 57 past 50 us on the recorded DDP run, none in its second
             * half); a shift by one makes it follow the intervals between
             * collectives (23 of 78 with rank 1's 41st kernel removed, 15
             * of 39 in the second half). */
            for (uint32_t k = 1; k < n; k++) {
                int64_t d1 = (int64_t)b[k].end - (int64_t)a[k].end,
                        d0 = (int64_t)b[k - 1].end - (int64_t)a[k - 1].end;
                jump[k - 1] = llabs(d1 - d0);
            }
            uint32_t late = 0, big = 0;
            int64_t gap = 0;
            for (uint32_t k = n / 2; k + 1 < n; k++, late++)
                if (jump[k] > GAP_JUMP_NS) {
                    big++;
                    gap = gap > jump[k] ? gap : jump[k];
                }
            if (big < 3 || 10 * big <= late)
                gap = 0;
            if (gap)
                snprintf(c->unmatched, sizeof c->unmatched,
                         "collectives cannot be matched%s: on communicator %u, rank "
                         "%u ran %u and rank %u ran %u, and their ends part in %u of the last "
                         "%u (by up to %.3f ms: a kernel missing before them, a dropped record "
                         "or a collective some ranks ran); with nothing in the trace to tell "
                         "which collective a kernel is, every match after it would be shifted",
                         c->by_comm ? "" : " by position", m, r, n, ref, full, big, late,
                         (double)gap / 1e6);
            else if (2 * (size_t)n < full)
                snprintf(c->unmatched, sizeof c->unmatched,
                         "collectives cannot be matched: on communicator %u, rank %u ran %u and "
                         "rank %u ran %u, fewer than half of them (its trace ends first)",
                         m, r, n, ref, full);
            else if (n < keep[m]) {
                left_out += keep[m] - n;
                keep[m] = n;
                snprintf(c->partial, sizeof c->partial,
                         "rank %u's trace ends first: on communicator %u it ran %u collectives "
                         "and rank %u ran %u; figures across ranks rest on the %u all ranks "
                         "completed there",
                         r, m, n, ref, full, n);
            }
        }
    }
    /* The collectives past what every rank completed take no part. */
    for (size_t i = 0; rc == 0 && !c->unmatched[0] && left_out && i < c->n; i++)
        if (c->k[i].seq >= keep[c->k[i].comm])
            c->k[i].comm = LEFT_OUT;
    free(count);
    free(from);
    free(keep);
    free(jump);
    free(ran);
    return rc;
}

/* Numbers each rank's kernels: its streams in the order of their first
 * kernel's start are communicators 0, 1, ...; the k-th kernel of one is
 * collective (comm, k). */
static int number(cp_collectives *c)
{
    int rc = identify(c);
    if (rc < 0)
        return rc;
    if (c->by_comm && (rc = number_by_comm(c)) < 0)
        return rc;
    if (c->by_comm)
        return check_counts(c) < 0 ? CP_ENOMEM
                                   : (qsort(c->k, c->n, sizeof *c->k, by_collective), 0);
    qsort(c->k, c->n, sizeof *c->k, by_rank_stream_start);
    size_t i = 0;
    while (i < c->n) {
        size_t r_end = i;
        while (r_end < c->n && c->k[r_end].rank == c->k[i].rank)
            r_end++;
        /* The rank's streams, each with its first start. */
        size_t nstreams = 0;
        for (size_t j = i; j < r_end; j++)
            nstreams += j == i || c->k[j].stream != c->k[j - 1].stream;
        int64_t *first = malloc(nstreams * 2 * sizeof *first);
        if (!first)
            return cp_failf(CP_ENOMEM, "out of memory");
        size_t s = 0;
        for (size_t j = i; j < r_end; j++)
            if (j == i || c->k[j].stream != c->k[j - 1].stream) {
                first[2 * s] = (int64_t)c->k[j].start;
                first[2 * s + 1] = (int64_t)c->k[j].stream;
                s++;
            }
        /* Rank of each stream by first start (few streams: quadratic). */
        for (size_t j = i, seq = 0; j < r_end; j++) {
            if (j > i && c->k[j].stream != c->k[j - 1].stream)
                seq = 0;
            uint32_t comm = 0;
            int64_t mine = 0;
            for (size_t t = 0; t < nstreams; t++)
                if ((uint32_t)first[2 * t + 1] == c->k[j].stream)
                    mine = first[2 * t];
            for (size_t t = 0; t < nstreams; t++)
                comm += first[2 * t] < mine ||
                        (first[2 * t] == mine && (uint32_t)first[2 * t + 1] < c->k[j].stream);
            c->k[j].comm = comm;
            c->k[j].seq = (uint32_t)seq++;
        }
        free(first);
        i = r_end;
    }
    return check_counts(c) < 0 ? CP_ENOMEM : (qsort(c->k, c->n, sizeof *c->k, by_collective), 0);
}

/* What an analysis works in: two arrays of a value per rank, each host's
 * differences of ends from host 0's, each rank's lags when it arrived
 * last, and each matched collective's spreads of starts and of ends. */
typedef struct scratch {
    int64_t *a, *b, **diffs, **lags;
    size_t *ndiffs, *nlags;
    int64_t *spread_s, *spread_e;
    size_t ngroups;
    cp_collective_wait *waits; /* per class, as c->classes */
} scratch;

/* Allocates the result's hosts and ranks (each rank on its host) and the
 * scratch, each list room for every collective. Returns 0 or CP_ENOMEM;
 * on failure the caller frees what was made (free_scratch). */
static int alloc_scratch(const cp_collectives *c, scratch *s, cp_collectives_result *out)
{
    out->hosts_of = calloc(c->nhosts ? c->nhosts : 1, sizeof *out->hosts_of);
    out->ranks_of = calloc(c->nranks ? c->nranks : 1, sizeof *out->ranks_of);
    s->a = malloc((c->nranks + 1) * sizeof *s->a);
    s->b = malloc((c->nranks + 1) * sizeof *s->b);
    s->diffs = calloc(c->nhosts + 1, sizeof *s->diffs);
    s->ndiffs = calloc(c->nhosts + 1, sizeof *s->ndiffs);
    s->lags = calloc(c->nranks + 1, sizeof *s->lags);
    s->nlags = calloc(c->nranks + 1, sizeof *s->nlags);
    s->spread_s = malloc((c->n + 1) * sizeof *s->spread_s);
    s->spread_e = malloc((c->n + 1) * sizeof *s->spread_e);
    s->waits = calloc(c->nclasses + 1, sizeof *s->waits);
    out->arrivals = malloc((c->n + 1) * sizeof *out->arrivals);
    if (!out->hosts_of || !out->ranks_of || !s->a || !s->b || !s->diffs || !s->ndiffs ||
        !s->lags || !s->nlags || !s->spread_s || !s->spread_e || !s->waits || !out->arrivals)
        return cp_failf(CP_ENOMEM, "out of memory matching %zu collectives", c->n);
    for (uint32_t r = 0; r < c->nranks; r++)
        out->ranks_of[r] =
            (cp_rank_arrival){.rank = r, .host = c->host_of[r] ? c->host_of[r] - 1 : 0};
    for (uint32_t h = 0; h < c->nhosts; h++) {
        out->hosts_of[h].host = h;
        if (!(s->diffs[h] = malloc((c->n + 1) * sizeof *s->diffs[h])))
            return cp_failf(CP_ENOMEM, "out of memory");
    }
    for (uint32_t r = 0; r < c->nranks; r++)
        if (!(s->lags[r] = malloc((c->n + 1) * sizeof *s->lags[r])))
            return cp_failf(CP_ENOMEM, "out of memory");
    return 0;
}

/* Frees the scratch, however far alloc_scratch got; the result stays. */
static void free_scratch(const cp_collectives *c, scratch *s)
{
    free(s->a);
    free(s->b);
    for (uint32_t h = 0; s->diffs && h < c->nhosts; h++)
        free(s->diffs[h]);
    for (uint32_t r = 0; s->lags && r < c->nranks; r++)
        free(s->lags[r]);
    free(s->diffs);
    free(s->ndiffs);
    free(s->lags);
    free(s->nlags);
    free(s->spread_s);
    free(s->spread_e);
    free(s->waits);
}

/* The end of the run of kernels from i that are one collective (c is
 * sorted by collective). */
static size_t collective_end(const cp_collectives *c, size_t i)
{
    size_t j = i;
    while (j < c->n && c->k[j].comm == c->k[i].comm && c->k[j].seq == c->k[i].seq)
        j++;
    return j;
}

/* First pass over the collectives: each host's clock against host 0's,
 * from the differences of the median ends of the collectives they share
 * (the ends: none can finish before the last rank has arrived, so they
 * nearly coincide). A host that shares none is not aligned. */
static void align_hosts(const cp_collectives *c, scratch *s, cp_collectives_result *out)
{
    for (size_t i = 0, j; i < c->n; i = j) {
        j = collective_end(c, i);
        if (j - i < 2 || c->k[i].comm == LEFT_OUT)
            continue;
        size_t nref = 0;
        for (size_t t = i; t < j; t++)
            if (c->k[t].host == 0)
                s->a[nref++] = (int64_t)c->k[t].end;
        if (!nref)
            continue;
        int64_t ref = median(s->a, nref);
        for (uint32_t h = 1; h < c->nhosts; h++) {
            size_t nh = 0;
            for (size_t t = i; t < j; t++)
                if (c->k[t].host == h)
                    s->b[nh++] = (int64_t)c->k[t].end;
            if (nh)
                s->diffs[h][s->ndiffs[h]++] = median(s->b, nh) - ref;
        }
    }
    out->all_aligned = true;
    out->hosts_of[0].aligned = c->nhosts > 0;
    for (uint32_t h = 1; h < c->nhosts; h++) {
        cp_host_offset *o = &out->hosts_of[h];
        o->shared = (uint32_t)s->ndiffs[h];
        if (!s->ndiffs[h]) {
            out->all_aligned = false;
            continue;
        }
        int64_t d = median(s->diffs[h], s->ndiffs[h]);
        for (size_t t = 0; t < s->ndiffs[h]; t++)
            s->diffs[h][t] = llabs(s->diffs[h][t] - d);
        o->residual_ns = (uint64_t)median(s->diffs[h], s->ndiffs[h]);
        o->offset_ns = -d;
        o->aligned = true;
    }
}

/* One job's collective ends on one host lie closer together than the
 * interval between its collectives (none ends before the last rank
 * arrives); two runs' files, whose ends are seconds apart, do not. The
 * least such distance that says so, below which a job's own jitter and
 * back-to-back collectives could not be told from it. */
#define ONE_JOB_FLOOR_NS 1000000

/* Whether the ranks that share a host are one job (c sorted by
 * collective): per matched collective, the spread of the ends of the
 * ranks on each host (their clock is one, nothing to align), the largest
 * over hosts, against the interval from the previous collective on the
 * same communicator (the first kernel's end of each). Where the median
 * spread exceeds the median interval (and ONE_JOB_FLOOR_NS), out says
 * which ranks and by how much (not_one_job). */
static int check_one_job(const cp_collectives *c, scratch *s, cp_collectives_result *out)
{
    /* Per host, the earliest and latest end in the collective at hand
     * and the ranks that had them. */
    int64_t *lo = malloc((c->nhosts + 1) * sizeof *lo), *hi = malloc((c->nhosts + 1) * sizeof *hi);
    uint32_t *lo_rank = malloc((c->nhosts + 1) * sizeof *lo_rank),
             *hi_rank = malloc((c->nhosts + 1) * sizeof *hi_rank);
    if (!lo || !hi || !lo_rank || !hi_rank) {
        free(lo);
        free(hi);
        free(lo_rank);
        free(hi_rank);
        return cp_failf(CP_ENOMEM, "out of memory comparing the ranks' collectives");
    }
    /* The intervals go in spread_s and the spreads in spread_e, which
     * find_arrivals fills afresh after. */
    size_t nspread = 0, ninterval = 0;
    int64_t prev_end = 0, far = -1;
    uint32_t prev_comm = LEFT_OUT, far_a = 0, far_b = 0, far_host = 0;
    for (size_t i = 0, j; i < c->n; i = j) {
        j = collective_end(c, i);
        if (c->k[i].comm == LEFT_OUT)
            continue;
        if (c->k[i].comm == prev_comm && (int64_t)c->k[i].end > prev_end)
            s->spread_s[ninterval++] = (int64_t)c->k[i].end - prev_end;
        prev_comm = c->k[i].comm;
        prev_end = (int64_t)c->k[i].end;
        for (uint32_t h = 0; h < c->nhosts; h++) {
            lo[h] = INT64_MAX;
            hi[h] = INT64_MIN;
        }
        for (size_t t = i; t < j; t++) {
            uint32_t h = c->k[t].host;
            int64_t e = (int64_t)c->k[t].end;
            if (e < lo[h]) {
                lo[h] = e;
                lo_rank[h] = c->k[t].rank;
            }
            if (e > hi[h]) {
                hi[h] = e;
                hi_rank[h] = c->k[t].rank;
            }
        }
        int64_t widest = -1;
        for (uint32_t h = 0; h < c->nhosts; h++) {
            if (lo[h] == INT64_MAX || lo_rank[h] == hi_rank[h])
                continue;
            int64_t d = hi[h] - lo[h];
            widest = d > widest ? d : widest;
            if (d > far) {
                far = d;
                far_a = lo_rank[h] < hi_rank[h] ? lo_rank[h] : hi_rank[h];
                far_b = lo_rank[h] < hi_rank[h] ? hi_rank[h] : lo_rank[h];
                far_host = h;
            }
        }
        if (widest >= 0)
            s->spread_e[nspread++] = widest;
    }
    free(lo);
    free(hi);
    free(lo_rank);
    free(hi_rank);
    if (nspread < 3 || ninterval < 2)
        return 0;
    int64_t spread = median(s->spread_e, nspread), interval = median(s->spread_s, ninterval);
    if (spread <= interval || spread <= ONE_JOB_FLOOR_NS)
        return 0;
    out->not_one_job = true;
    out->apart_host = far_host;
    out->apart_ranks[0] = far_a;
    out->apart_ranks[1] = far_b;
    out->apart_median_ns = (uint64_t)spread;
    out->apart_interval_ns = (uint64_t)interval;
    out->apart_collectives = (uint32_t)nspread;
    return 0;
}

/* Kernel t's start and end on host 0's clock; false when its host could
 * not be aligned. */
static bool aligned_times(const cp_collectives *c, const cp_collectives_result *out, size_t t,
                          int64_t *st, int64_t *e)
{
    const cp_host_offset *o = &out->hosts_of[c->k[t].host];
    *st = (int64_t)c->k[t].start + o->offset_ns;
    *e = (int64_t)c->k[t].end + o->offset_ns;
    return o->aligned;
}

/* A collective's arrival (kernels i to j, `last` the rank that started
 * last, at hi_s): its spreads kept, each rank's count of collectives
 * raised, the last one charged its lag (its start minus the others'
 * median). */
static void charge_last(const cp_collectives *c, scratch *s, cp_collectives_result *out, size_t i,
                        size_t j, size_t last, int64_t hi_s, int64_t lo_s, int64_t spread_e)
{
    s->spread_s[s->ngroups] = hi_s - lo_s;
    s->spread_e[s->ngroups++] = spread_e;
    for (size_t t = i; t < j; t++)
        if (out->hosts_of[c->k[t].host].aligned)
            out->ranks_of[c->k[t].rank].collectives++;
    size_t no = 0;
    for (size_t t = i; t < j; t++) {
        int64_t st, e;
        if (aligned_times(c, out, t, &st, &e) && t != last)
            s->b[no++] = st;
    }
    uint32_t r = c->k[last].rank;
    out->ranks_of[r].arrived_last++;
    int64_t lag = hi_s - median(s->b, no);
    out->arrivals[out->narrivals++] = (cp_collective_arrival){lo_s, r, (uint64_t)lag};
    s->lags[r][s->nlags[r]++] = lag;
    out->ranks_of[r].mean_lag_ns += (uint64_t)lag; /* the sum, divided in name_straggler */
    if ((uint64_t)lag > out->ranks_of[r].max_lag_ns)
        out->ranks_of[r].max_lag_ns = (uint64_t)lag;
}

/* Second pass: arrivals on aligned clocks. Each collective that two or
 * more aligned ranks ran is matched; its spreads of starts and of ends
 * are kept, and the rank that started it last is charged its lag. A
 * point-to-point transfer (NCCL's SendRecv kernels: a send and its
 * receive) is matched and its wait kept, but charges no one: a receiver
 * waits for its sender by the program's own order (a pipeline's stage
 * for the one before it), which is no straggler, as Holistic Trace
 * Analysis finds stragglers on collectives alone. */
static void find_arrivals(const cp_collectives *c, scratch *s, cp_collectives_result *out)
{
    for (size_t i = 0, j; i < c->n; i = j) {
        j = collective_end(c, i);
        if (c->k[i].comm == LEFT_OUT)
            continue;
        bool p2p = strcmp(c->classes[c->k[i].cls].op, CP_COLL_P2P_OP) == 0;
        size_t m = 0;
        int64_t lo_s = INT64_MAX, hi_s = INT64_MIN, lo_e = INT64_MAX, hi_e = INT64_MIN;
        size_t last = j;
        for (size_t t = i; t < j; t++) {
            int64_t st, e;
            if (!aligned_times(c, out, t, &st, &e))
                continue;
            s->a[m++] = st;
            lo_s = st < lo_s ? st : lo_s;
            lo_e = e < lo_e ? e : lo_e;
            hi_e = e > hi_e ? e : hi_e;
            if (st > hi_s) {
                hi_s = st;
                last = t;
            }
        }
        if (m < 2)
            continue;
        out->matched++;
        if (!p2p)
            charge_last(c, s, out, i, j, last, hi_s, lo_s, hi_e - lo_e);
        /* Each rank's kernel before the last arrived waited for it; the
         * rest is the transfer. One class a collective (check_identity). */
        cp_collective_wait *w = &s->waits[c->k[i].cls];
        w->matched++;
        for (size_t t = i; t < j; t++) {
            int64_t st, e;
            if (!aligned_times(c, out, t, &st, &e))
                continue;
            int64_t from = st > hi_s ? st : hi_s;
            w->wait_ns += (uint64_t)(hi_s - st > 0 ? (hi_s < e ? hi_s : e) - st : 0);
            w->transfer_ns += (uint64_t)(e > from ? e - from : 0);
        }
    }
}

static int wait_cmp(const void *x, const void *y)
{
    const cp_collective_wait *a = x, *b = y;
    uint64_t ta = a->wait_ns + a->transfer_ns, tb = b->wait_ns + b->transfer_ns;
    if (ta != tb)
        return ta > tb ? -1 : 1;
    return strcmp(a->op, b->op);
}

/* The classes with matched collectives into out->waits. */
static int put_waits(const cp_collectives *c, scratch *s, cp_collectives_result *out)
{
    size_t n = 0;
    for (size_t k = 0; k < c->nclasses; k++)
        n += s->waits[k].matched > 0;
    if (!n)
        return 0;
    if (!(out->waits = calloc(n, sizeof *out->waits)))
        return cp_failf(CP_ENOMEM, "out of memory");
    for (size_t k = 0; k < c->nclasses; k++) {
        if (!s->waits[k].matched)
            continue;
        cp_collective_wait *w = &out->waits[out->nwaits++];
        *w = s->waits[k];
        memcpy(w->op, c->classes[k].op, sizeof w->op);
        memcpy(w->algo, c->classes[k].algo, sizeof w->algo);
        memcpy(w->proto, c->classes[k].proto, sizeof w->proto);
    }
    qsort(out->waits, out->nwaits, sizeof *out->waits, wait_cmp);
    return 0;
}

/* Identity where the names give one: the kernels of one matched
 * collective must be of one operation, algorithm and protocol on every
 * rank; where they are not, the match by position is wrong (c sorted by
 * collective), said in c->unmatched. */
static void check_identity(cp_collectives *c)
{
    for (size_t i = 0, j; i < c->n && !c->unmatched[0]; i = j) {
        j = collective_end(c, i);
        if (c->k[i].comm == LEFT_OUT)
            continue;
        for (size_t t = i + 1; t < j; t++) {
            if (c->k[t].cls == c->k[i].cls)
                continue;
            char a[64], b[64];
            const coll_class *ka = &c->classes[c->k[i].cls], *kb = &c->classes[c->k[t].cls];
            cp_collective_label(ka->op, ka->algo, ka->proto, a, sizeof a);
            cp_collective_label(kb->op, kb->algo, kb->proto, b, sizeof b);
            snprintf(c->unmatched, sizeof c->unmatched,
                     "collectives cannot be matched by position: collective %u on communicator "
                     "%u is %s on rank %u and %s on rank %u (the ranks ran different "
                     "collectives there, or a kernel is missing before it)",
                     c->k[i].seq + 1, c->k[i].comm, a, c->k[i].rank, b, c->k[t].rank);
            break;
        }
    }
}

/* The spreads' medians, each rank's lags summed up, and the straggler:
 * the rank that arrived last most often, named one (cuproof/collectives.h
 * says the rule) only where more than one rank was seen. */
static void name_straggler(const cp_collectives *c, scratch *s, uint64_t min_lag_ns,
                           cp_collectives_result *out)
{
    out->median_start_spread_ns = (uint64_t)median(s->spread_s, s->ngroups);
    out->median_end_spread_ns = (uint64_t)median(s->spread_e, s->ngroups);
    uint32_t best = 0;
    for (uint32_t r = 0; r < c->nranks; r++) {
        if (s->nlags[r])
            out->ranks_of[r].mean_lag_ns /= s->nlags[r];
        out->ranks_of[r].median_lag_ns = (uint64_t)median(s->lags[r], s->nlags[r]);
        if (out->ranks_of[r].arrived_last > out->ranks_of[best].arrived_last)
            best = r;
    }
    uint32_t seen = 0;
    for (uint32_t r = 0; r < c->nranks; r++)
        seen += c->host_of[r] != 0;
    if (seen > 1) {
        const cp_rank_arrival *a = &out->ranks_of[best];
        double chance = (double)a->collectives / (double)seen;
        out->straggler = a->arrived_last >= 3 && 2 * a->arrived_last >= a->collectives &&
                         (double)a->arrived_last >= 1.5 * chance && a->median_lag_ns >= min_lag_ns;
        out->straggler_rank = a->rank;
        out->straggler_lag_ns = a->median_lag_ns;
        out->straggler_max_lag_ns = a->max_lag_ns;
        out->straggler_mean_lag_ns = a->mean_lag_ns;
    }
}

int cp_collectives_analyse(cp_collectives *c, uint64_t min_lag_ns, cp_collectives_result *out)
{
    memset(out, 0, sizeof *out);
    out->ranks = c->nranks;
    out->hosts = c->nhosts;
    int rc = number(c);
    if (rc < 0)
        return rc;
    if (!c->unmatched[0])
        check_identity(c);
    snprintf(out->unmatched, sizeof out->unmatched, "%s", c->unmatched);
    snprintf(out->partial, sizeof out->partial, "%s", c->partial);
    snprintf(out->matched_by, sizeof out->matched_by, "%s", c->matched_by);
    scratch s = {0};
    if ((rc = alloc_scratch(c, &s, out)) == 0 && !out->unmatched[0])
        rc = check_one_job(c, &s, out);
    if (rc == 0 && !out->unmatched[0] && !out->not_one_job) {
        align_hosts(c, &s, out);
        find_arrivals(c, &s, out);
        name_straggler(c, &s, min_lag_ns, out);
        rc = put_waits(c, &s, out);
    } else if (rc == 0) {
        /* No figure across ranks rests on a match by position that the
         * counts deny: no alignment, arrival or straggler. */
        out->hosts_of[0].aligned = c->nhosts > 0;
        out->all_aligned = c->nhosts <= 1;
    }
    free_scratch(c, &s);
    if (rc < 0)
        cp_collectives_result_free(out);
    return rc;
}

void cp_collectives_result_free(cp_collectives_result *r)
{
    free(r->hosts_of);
    free(r->ranks_of);
    free(r->waits);
    free(r->arrivals);
    memset(r, 0, sizeof *r);
}
