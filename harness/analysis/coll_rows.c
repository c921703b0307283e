/*
 * The per-collective table (coll_rows.h): NCCL's kernel names read into
 * operation, algorithm and protocol, a slot per communication kernel, and
 * the rows grouped from them with their medians.
 */
#include "coll_rows.h"

#include <cuproof/error.h>
#include <cuproof/internal/grow.h>

#include <stdbool.h>
#include <stddef.h>
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
    c->slots[c->n] = (coll_slot){.start = a->start, .process = a->process, .device = a->device,
                                 .context = a->context, .stream = a->stream,
                                 .dur_ns = end - a->start, .cls = (uint32_t)cls, .piece = a->piece};
    return (long)c->n++;
}

long cp__coll_call_add(coll_call **calls, size_t *n, size_t *cap, uint32_t process,
                       uint64_t start, uint64_t comm, uint64_t bytes, int32_t peer,
                       const char *name)
{
    if (!comm || !name || strncmp(name, "nccl", 4) != 0)
        return 0;
    coll_call *p = cp_grow(*calls, cap, *n, sizeof *p, 64);
    if (!p)
        return cp_failf(CP_ENOMEM, "out of memory keeping NCCL's calls");
    *calls = p;
    coll_call *k = &p[(*n)++];
    *k = (coll_call){.start = start, .comm = comm, .bytes = bytes, .process = process,
                     .peer = peer};
    snprintf(k->op, sizeof k->op, "%s", name + 4);
    k->dir = strcmp(k->op, "Send") == 0 ? 1 : strcmp(k->op, "Recv") == 0 ? -1 : 0;
    return 1;
}

int cp__coll_call(coll_rows *c, const cp_activity *a)
{
    if (a->kind != CP_ACT_RANGE || a->piece)
        return 0;
    long rc = cp__coll_call_add(&c->calls, &c->ncalls, &c->calls_cap, a->process, a->start,
                                a->comm, a->bytes, a->peer, a->name);
    return rc < 0 ? (int)rc : 0;
}

/* The operation a call's kernels name: NCCL's point-to-point calls run
 * as SendRecv kernels. */
static const char *kernel_op_of_call(const coll_call *b)
{
    return b->dir ? CP_COLL_P2P_OP : b->op;
}

static int by_start(const void *x, const void *y)
{
    uint64_t a = **(const uint64_t *const *)x, b = **(const uint64_t *const *)y;
    return (a > b) - (a < b);
}

/* One communicator's calls of an operation in a process, or one stream's
 * kernels of it: pointers to their starts, in time order. */
typedef struct run {
    uint64_t key;         /* the communicator, or the stream's device, context and stream */
    uint64_t **start;
    size_t n;
    long paired;          /* the run of the other side it is paired with; -1 none */
} run;

/* The runs of `n` items (pointers to their starts, item i's key keys[i])
 * into *runs, in the order their keys are first seen, each in time order;
 * `items` is regrouped so, each run's pointers together. Returns how
 * many, or CP_ENOMEM. */
static long runs_of(uint64_t **items, size_t n, const uint64_t *keys, run **runs)
{
    *runs = NULL;
    if (!n)
        return 0;
    run *r = calloc(n, sizeof *r);
    if (!r)
        return cp_failf(CP_ENOMEM, "out of memory pairing NCCL calls");
    size_t nr = 0;
    /* Few communicators and streams: a linear search each. */
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < nr && r[k].key != keys[i])
            k++;
        if (k == nr) {
            r[nr] = (run){.key = keys[i], .start = items + i, .n = 0, .paired = -1};
            nr++;
        }
    }
    /* Group the pointers by run, in place: a stable pass per run. */
    uint64_t **sorted = malloc(n * sizeof *sorted);
    if (!sorted) {
        free(r);
        return cp_failf(CP_ENOMEM, "out of memory pairing NCCL calls");
    }
    size_t at = 0;
    for (size_t k = 0; k < nr; k++) {
        size_t from = at;
        for (size_t i = 0; i < n; i++)
            if (keys[i] == r[k].key)
                sorted[at++] = items[i];
        r[k].n = at - from;
        qsort(sorted + from, r[k].n, sizeof *sorted, by_start);
    }
    memcpy(items, sorted, n * sizeof *items);
    free(sorted);
    for (size_t k = 0, from = 0; k < nr; from += r[k].n, k++)
        r[k].start = items + from;
    *runs = r;
    return (long)nr;
}

/* Whether calls c can be kernels k one for one: as many, and each kernel
 * starting after its call did (it cannot start before its launch). */
static bool could_be(const run *c, const run *k)
{
    if (c->n != k->n)
        return false;
    for (size_t i = 0; i < c->n; i++)
        if (*k->start[i] < *c->start[i])
            return false;
    return true;
}

/* Calls c's communicator and size to kernels k, one for one in order. */
static void give(const run *c, const run *k)
{
    for (size_t i = 0; i < k->n; i++) {
        coll_pairable *s = (coll_pairable *)((char *)k->start[i] - offsetof(coll_pairable, start));
        const coll_call *b = (const coll_call *)((char *)c->start[i] - offsetof(coll_call, start));
        s->comm = b->comm;
        s->bytes = b->bytes;
        s->call_start = b->start;
        s->peer = b->peer;
        s->dir = b->dir;
    }
}

/* What the pairing works on: the calls and the kernels. */
typedef struct pairing {
    const coll_call *calls;
    size_t ncalls;
    coll_pairable *k;
    size_t n;
} pairing;

/* A communicator's stream as one operation's calls showed it (pair_calls'
 * first pass): `weight` calls of it fit that stream's kernels. */
typedef struct stream_vote {
    uint64_t comm, stream;
    bool p2p;
    size_t weight;
} stream_vote;

/* The operation's calls and kernels of process `process` into runs (by
 * communicator, by stream); *ncr and *nkr their counts. Returns 0 or
 * CP_ENOMEM. */
static int op_runs(const pairing *c, uint32_t process, const char *op, uint64_t **calls,
                   uint64_t *ckeys, uint64_t **kern, uint64_t *kkeys, run **cr, long *ncr,
                   run **kr, long *nkr)
{
    size_t nc = 0, nk = 0;
    for (size_t j = 0; j < c->ncalls; j++) {
        const coll_call *b = &c->calls[j];
        if (b->process != process || strcmp(kernel_op_of_call(b), op) != 0)
            continue;
        ckeys[nc] = b->comm;
        calls[nc++] = (uint64_t *)&c->calls[j].start;
    }
    for (size_t k = 0; k < c->n; k++) {
        const coll_pairable *s = &c->k[k];
        if (s->process != process || strcmp(s->op, op) != 0)
            continue;
        kkeys[nk] = s->stream;
        kern[nk++] = (uint64_t *)&c->k[k].start;
    }
    *cr = *kr = NULL;
    *ncr = runs_of(calls, nc, ckeys, cr);
    *nkr = *ncr < 0 ? 0 : runs_of(kern, nk, kkeys, kr);
    if (*ncr < 0 || *nkr < 0) {
        int rc = *ncr < 0 ? (int)*ncr : (int)*nkr;
        free(*cr);
        *cr = NULL;
        return rc;
    }
    return 0;
}

/* Which stream's kernels each communicator's calls are (cr[x].paired),
 * by elimination: a communicator whose calls fit (could_be) one stream
 * alone of those not yet taken takes it, unless another's fit that one
 * alone too (then neither does); again until none does. A communicator
 * left fitting several stays unpaired. Returns 0 or CP_ENOMEM. */
static int settle(run *cr, long ncr, const run *kr, long nkr)
{
    bool *fit = malloc((size_t)(ncr ? ncr : 1) * (size_t)(nkr ? nkr : 1) * sizeof *fit);
    bool *taken = calloc((size_t)(nkr ? nkr : 1), sizeof *taken);
    if (!fit || !taken) {
        free(fit);
        free(taken);
        return cp_failf(CP_ENOMEM, "out of memory pairing NCCL calls");
    }
    for (long x = 0; x < ncr; x++)
        for (long y = 0; y < nkr; y++)
            fit[x * nkr + y] = could_be(&cr[x], &kr[y]);
    for (bool moved = true; moved;) {
        moved = false;
        for (long x = 0; x < ncr; x++) {
            if (cr[x].paired >= 0)
                continue;
            long only = -1, fits = 0;
            for (long y = 0; y < nkr; y++)
                if (fit[x * nkr + y] && !taken[y]) {
                    only = y;
                    fits++;
                }
            if (fits != 1)
                continue;
            bool rival = false;
            for (long z = 0; z < ncr && !rival; z++) {
                if (z == x || cr[z].paired >= 0 || !fit[z * nkr + only])
                    continue;
                long others = 0;
                for (long y = 0; y < nkr; y++)
                    others += fit[z * nkr + y] && !taken[y] && y != only;
                rival = others == 0;
            }
            if (rival) {
                /* Two whose calls fit that stream alone: neither. */
                for (long z = 0; z < ncr; z++)
                    fit[z * nkr + only] = false;
                taken[only] = true;
            } else {
                cr[x].paired = only;
                taken[only] = true;
            }
            moved = true;
        }
    }
    free(fit);
    free(taken);
    return 0;
}

/* Adds a vote; returns 0 or CP_ENOMEM. */
static int vote(stream_vote **v, size_t *n, size_t *cap, stream_vote add)
{
    stream_vote *p = cp_grow(*v, cap, *n, sizeof *p, 16);
    if (!p)
        return cp_failf(CP_ENOMEM, "out of memory pairing NCCL calls");
    *v = p;
    p[(*n)++] = add;
    return 0;
}

/* The stream of (comm, p2p) by the votes: the one with the most calls
 * behind it; false where none or a tie. */
static bool stream_of(const stream_vote *v, size_t n, uint64_t comm, bool p2p, uint64_t *stream)
{
    size_t best = 0;
    bool tie = false;
    for (size_t i = 0; i < n; i++) {
        if (v[i].comm != comm || v[i].p2p != p2p)
            continue;
        size_t w = 0;
        for (size_t j = 0; j < n; j++)
            if (v[j].comm == comm && v[j].p2p == p2p && v[j].stream == v[i].stream)
                w += v[j].weight;
        if (w > best) {
            best = w;
            *stream = v[i].stream;
            tie = false;
        } else if (w == best && v[i].stream != *stream) {
            tie = true;
        }
    }
    return best && !tie;
}

/* Pairs each process's NCCL calls of an operation with its kernels of it
 * (coll_rows.h says when), their comm and bytes into the kernels. Two
 * passes per process. First, each operation votes each communicator a
 * stream: the one its calls fit one for one (could_be) by elimination
 * (settle), or where one stream's kernels are left, the communicators
 * left together fit them. Each
 * communicator's stream is then the one most of its calls voted for,
 * point-to-point calls apart (PyTorch runs them on a stream of their
 * own): one operation's coincidence cannot outvote the rest. Second, per
 * operation and stream, the calls of the communicators on that stream,
 * in time order, go to its kernels where they fit one for one. */
/* The calls of the runs paired with `want` (-1: those unpaired), together
 * in time order in `mine`, as one run. */
static run merged(const run *cr, long ncr, long want, uint64_t **mine)
{
    size_t m = 0;
    for (long x = 0; x < ncr; x++)
        for (size_t k = 0; cr[x].paired == want && k < cr[x].n; k++)
            mine[m++] = cr[x].start[k];
    qsort(mine, m, sizeof *mine, by_start);
    return (run){.start = mine, .n = m, .paired = want};
}

/* pair_calls' first pass for one operation: its communicators' runs `cr`
 * settled on its streams' runs `kr`, and where one stream is left the
 * communicators left together; each pairing a vote. Returns 0 or
 * CP_ENOMEM. */
static int vote_op(run *cr, long ncr, const run *kr, long nkr, bool p2p, uint64_t **mine,
                   stream_vote **votes, size_t *nvotes, size_t *cap)
{
    int rc = settle(cr, ncr, kr, nkr);
    long left = -1, nleft = 0, rest_runs = 0;
    for (long y = 0; rc == 0 && y < nkr; y++) {
        bool taken = false;
        for (long x = 0; x < ncr && !taken; x++)
            taken = cr[x].paired == y;
        if (!taken) {
            left = y;
            nleft++;
        }
    }
    for (long x = 0; x < ncr; x++)
        rest_runs += cr[x].paired < 0;
    bool together = false;
    if (rc == 0 && nleft == 1 && rest_runs >= 2) {
        run all = merged(cr, ncr, -1, mine);
        together = could_be(&all, &kr[left]);
    }
    for (long x = 0; rc == 0 && x < ncr; x++) {
        long y = cr[x].paired >= 0 ? cr[x].paired : together ? left : -1;
        if (y >= 0)
            rc = vote(votes, nvotes, cap, (stream_vote){cr[x].key, kr[y].key, p2p, cr[x].n});
    }
    return rc;
}

/* pair_calls' second pass for one operation: each communicator's run on
 * the stream its votes chose, and each stream's kernels given the calls
 * of the communicators on it where they fit one for one. */
static void give_op(run *cr, long ncr, const run *kr, long nkr, bool p2p, const stream_vote *votes,
                    size_t nvotes, uint64_t **mine)
{
    for (long x = 0; x < ncr; x++) {
        uint64_t stream = 0;
        bool voted = stream_of(votes, nvotes, cr[x].key, p2p, &stream);
        cr[x].paired = -1;
        for (long y = 0; voted && y < nkr; y++)
            if (kr[y].key == stream)
                cr[x].paired = y;
    }
    for (long y = 0; y < nkr; y++) {
        run all = merged(cr, ncr, y, mine);
        if (all.n && could_be(&all, &kr[y]))
            give(&all, &kr[y]);
    }
}

static int pair_calls(const pairing *c)
{
    if (!c->ncalls)
        return 0;
    uint64_t **calls = malloc(c->ncalls * sizeof *calls), **kern = malloc((c->n + 1) * sizeof *kern);
    uint64_t *ckeys = malloc(c->ncalls * sizeof *ckeys), *kkeys = malloc((c->n + 1) * sizeof *kkeys);
    uint64_t **mine = malloc(c->ncalls * sizeof *mine);
    bool *done = calloc(c->ncalls, sizeof *done);
    stream_vote *votes = NULL;
    size_t nvotes = 0, votes_cap = 0;
    int rc = calls && kern && ckeys && kkeys && mine && done
                 ? 0
                 : cp_failf(CP_ENOMEM, "out of memory pairing NCCL calls");
    for (size_t i = 0; rc == 0 && i < c->ncalls; i++) {
        if (done[i])
            continue;
        uint32_t process = c->calls[i].process;
        nvotes = 0;
        /* The process's operations, each once (few: NCCL has a dozen). */
        const char *ops[32];
        size_t nops = 0;
        for (size_t j = i; j < c->ncalls; j++) {
            if (c->calls[j].process != process)
                continue;
            done[j] = true;
            const char *op = kernel_op_of_call(&c->calls[j]);
            size_t k = 0;
            while (k < nops && strcmp(ops[k], op) != 0)
                k++;
            if (k == nops && nops < sizeof ops / sizeof *ops)
                ops[nops++] = op;
        }
        for (int pass = 0; rc == 0 && pass < 2; pass++)
            for (size_t o = 0; rc == 0 && o < nops; o++) {
                bool p2p = strcmp(ops[o], CP_COLL_P2P_OP) == 0;
                run *cr = NULL, *kr = NULL;
                long ncr = 0, nkr = 0;
                rc = op_runs(c, process, ops[o], calls, ckeys, kern, kkeys, &cr, &ncr, &kr, &nkr);
                if (rc == 0 && pass == 0)
                    rc = vote_op(cr, ncr, kr, nkr, p2p, mine, &votes, &nvotes, &votes_cap);
                else if (rc == 0)
                    give_op(cr, ncr, kr, nkr, p2p, votes, nvotes, mine);
                free(cr);
                free(kr);
            }
    }
    free(votes);
    free(calls);
    free(kern);
    free(ckeys);
    free(kkeys);
    free(mine);
    free(done);
    return rc;
}

int cp__coll_pair(const coll_call *calls, size_t ncalls, coll_pairable *k, size_t nk)
{
    for (size_t i = 0; i < nk; i++) {
        k[i].comm = k[i].bytes = k[i].call_start = 0;
        k[i].peer = -1;
        k[i].dir = 0;
    }
    pairing p = {calls, ncalls, k, nk};
    return pair_calls(&p);
}

/* The table's kernels paired with its calls (cp__coll_pair): each slot's
 * comm and bytes, a clipped kernel's later pieces left out. Returns 0 or
 * CP_ENOMEM. */
static int pair_slots(coll_rows *c)
{
    if (!c->ncalls || !c->n)
        return 0;
    coll_pairable *k = malloc(c->n * sizeof *k);
    uint32_t *slot = malloc(c->n * sizeof *slot);
    if (!k || !slot) {
        free(k);
        free(slot);
        return cp_failf(CP_ENOMEM, "out of memory pairing NCCL calls");
    }
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        const coll_slot *s = &c->slots[i];
        if (s->piece)
            continue;
        slot[n] = (uint32_t)i;
        k[n++] = (coll_pairable){.start = s->start,
                                 .stream = (uint64_t)s->device << 48 ^ (uint64_t)s->context << 24 ^
                                           s->stream,
                                 .op = c->classes[s->cls].op,
                                 .process = s->process};
    }
    int rc = cp__coll_pair(c->calls, c->ncalls, k, n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        c->slots[slot[i]].comm = k[i].comm;
        c->slots[slot[i]].bytes = k[i].bytes;
    }
    free(k);
    free(slot);
    return rc;
}

static int cmp_comm_process(const void *x, const void *y)
{
    const coll_call *a = x, *b = y;
    if (a->comm != b->comm)
        return a->comm < b->comm ? -1 : 1;
    return (a->process > b->process) - (a->process < b->process);
}

long cp__coll_comms(coll_call *calls, size_t ncalls, coll_comm **out)
{
    *out = NULL;
    if (!ncalls)
        return 0;
    qsort(calls, ncalls, sizeof *calls, cmp_comm_process);
    coll_comm *comms = malloc(ncalls * sizeof *comms);
    if (!comms)
        return cp_failf(CP_ENOMEM, "out of memory counting communicators");
    size_t n = 0;
    for (size_t i = 0; i < ncalls; i++) {
        bool new_comm = i == 0 || calls[i].comm != calls[i - 1].comm;
        if (new_comm)
            comms[n++] = (coll_comm){calls[i].comm, 0};
        if (new_comm || calls[i].process != calls[i - 1].process)
            comms[n - 1].ranks++;
    }
    *out = comms;
    return (long)n;
}

size_t cp__coll_comm_find(const coll_comm *comms, size_t n, uint64_t comm)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (comms[mid].comm < comm)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && comms[lo].comm == comm ? lo : n;
}

/* The ranks of communicator `comm` among the table's calls, 0 when unknown. */
static uint32_t comm_ranks(const coll_rows *c, uint64_t comm)
{
    size_t k = cp__coll_comm_find(c->comms, c->ncomms, comm);
    return k < c->ncomms ? c->comms[k].ranks : 0;
}

/* nccl-tests' (doc/PERFORMANCE.md) for operation `op` on n ranks: the
 * data size S a call of NCCL's message size `bytes` moves (AllGather's
 * and ReduceScatter's message is one rank's part), into *size, and the
 * bus bandwidth's factor over S / t; false for an operation it does not
 * define. */
static bool bus_rule(const char *op, uint64_t bytes, uint32_t n, double *size, double *factor)
{
    double r = n;
    *size = (double)bytes;
    if (strcmp(op, "AllReduce") == 0)
        *factor = 2 * (r - 1) / r;
    else if (strcmp(op, "AllGather") == 0 || strcmp(op, "ReduceScatter") == 0) {
        *size = (double)bytes * r;
        *factor = (r - 1) / r;
    } else if (strcmp(op, "AlltoAll") == 0)
        *factor = (r - 1) / r;
    else if (strcmp(op, "Broadcast") == 0 || strcmp(op, "Reduce") == 0 ||
             strcmp(op, CP_COLL_P2P_OP) == 0)
        *factor = 1;
    else
        return false;
    return true;
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

/* The median of n sorted durations (the lower two's midpoint when n is
 * even), 0 for none. */
static uint64_t median_sorted(const uint64_t *v, size_t n)
{
    return n ? (n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2) : 0;
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

/* NCCL's account of a kernel whose call is known (slot sl) added to row
 * r: its size, and its bandwidth where the communicator's ranks are
 * known (two or more of its processes in this analysis), over the
 * kernel's whole time, its wait for the last rank in it, as nccl-tests'. */
static void add_call(const coll_rows *c, cp_collective_row *r, const coll_slot *sl)
{
    r->sized++;
    r->bytes += sl->bytes;
    uint32_t ranks = comm_ranks(c, sl->comm);
    double size = 0, factor = 0;
    if (ranks >= 2 && bus_rule(r->op, sl->bytes, ranks, &size, &factor)) {
        r->bw_kernels++;
        r->bw_ns += sl->dur_ns;
        r->alg_bytes += size;
        r->bus_bytes += size * factor;
    }
}

/* The bucket of a message of `bytes`: [lo, 2 lo), lo a power of two. */
static uint64_t bucket_lo(uint64_t bytes)
{
    uint64_t lo = 1;
    while (bytes >= 2 * lo && lo < (UINT64_C(1) << 62))
        lo *= 2;
    return lo;
}

/* A sized kernel (slot i) ordered by its row of the size table: the
 * order of its class's row in m->collective_rows, its bucket, its
 * duration. */
typedef struct sized_slot {
    uint32_t row;
    uint64_t lo, dur;
    size_t slot;
} sized_slot;

static int sized_cmp(const void *x, const void *y)
{
    const sized_slot *a = x, *b = y;
    if (a->row != b->row)
        return a->row < b->row ? -1 : 1;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return (a->dur > b->dur) - (a->dur < b->dur);
}

/* m->collective_size_rows from the paired slots (after m->collective_rows,
 * whose order the classes keep): each row the kernels of one class whose
 * call's size falls in one bucket, with their time, exposed time, bytes
 * and bandwidth by the class table's rules. `dur` has room for c->n
 * durations. Returns 0 or CP_ENOMEM. */
static int size_rows(const coll_rows *c, cp_metrics *m, uint64_t *dur)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        n += !c->slots[i].piece && c->slots[i].comm;
    if (!n)
        return 0;
    sized_slot *v = malloc(n * sizeof *v);
    uint32_t *row_of = malloc((c->nclasses ? c->nclasses : 1) * sizeof *row_of); /* each class's row */
    if (!v || !row_of) {
        free(v);
        free(row_of);
        return cp_failf(CP_ENOMEM, "out of memory for the collectives' sizes");
    }
    for (size_t k = 0; k < c->nclasses; k++) {
        const coll_class *cl = &c->classes[k];
        uint32_t row = 0;
        while (row < m->ncollective_rows &&
               !(strcmp(m->collective_rows[row].op, cl->op) == 0 &&
                 strcmp(m->collective_rows[row].algo, cl->algo) == 0 &&
                 strcmp(m->collective_rows[row].proto, cl->proto) == 0))
            row++;
        row_of[k] = row;
    }
    size_t k = 0, nrows = 0;
    for (size_t i = 0; i < c->n; i++) {
        const coll_slot *sl = &c->slots[i];
        if (!sl->piece && sl->comm)
            v[k++] = (sized_slot){row_of[sl->cls], bucket_lo(sl->bytes), sl->dur_ns, i};
    }
    free(row_of);
    qsort(v, n, sizeof *v, sized_cmp);
    for (size_t i = 0; i < n; i++)
        nrows += !i || v[i].row != v[i - 1].row || v[i].lo != v[i - 1].lo;
    cp_collective_row *rows = calloc(nrows, sizeof *rows);
    if (!rows) {
        free(v);
        return cp_failf(CP_ENOMEM, "out of memory for the collectives' sizes");
    }
    size_t r = 0;
    for (size_t i = 0, j; i < n; i = j) {
        cp_collective_row *w = &rows[r++];
        const cp_collective_row *cls = &m->collective_rows[v[i].row];
        memcpy(w->op, cls->op, sizeof w->op);
        memcpy(w->algo, cls->algo, sizeof w->algo);
        memcpy(w->proto, cls->proto, sizeof w->proto);
        w->size_lo = v[i].lo;
        w->size_hi = 2 * v[i].lo;
        for (j = i; j < n && v[j].row == v[i].row && v[j].lo == v[i].lo; j++) {
            const coll_slot *sl = &c->slots[v[j].slot];
            dur[j - i] = v[j].dur; /* sorted within the row */
            w->total_ns += sl->dur_ns;
            w->exposed_ns += sl->exposed_ns;
            add_call(c, w, sl);
        }
        w->count = (uint32_t)(j - i);
        w->median_ns = median_sorted(dur, j - i);
    }
    free(v);
    m->collective_size_rows = rows;
    m->ncollective_size_rows = nrows;
    return 0;
}

int cp__coll_finish(coll_rows *c, cp_metrics *m)
{
    int rc = pair_slots(c);
    long ncomms = rc < 0 ? 0 : cp__coll_comms(c->calls, c->ncalls, &c->comms);
    if (ncomms < 0)
        rc = (int)ncomms;
    else
        c->ncomms = (size_t)ncomms;
    if (rc < 0) {
        cp__coll_free(c);
        return rc;
    }
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
            const coll_slot *sl = &c->slots[i];
            if (!sl->piece)
                dur[n++] = sl->dur_ns;
            r->total_ns += sl->dur_ns;
            r->exposed_ns += sl->exposed_ns;
            if (!sl->piece && sl->comm)
                add_call(c, r, sl);
        }
        r->count = (uint32_t)n;
        qsort(dur, n, sizeof *dur, cmp_u64);
        r->median_ns = median_sorted(dur, n);
    }
    if (rc == 0 && rows)
        qsort(rows, c->nclasses, sizeof *rows, row_cmp);
    free(m->collective_rows);
    m->collective_rows = rows;
    m->ncollective_rows = rc == 0 ? c->nclasses : 0;
    free(m->collective_size_rows);
    m->collective_size_rows = NULL;
    m->ncollective_size_rows = 0;
    if (rc == 0)
        rc = size_rows(c, m, dur);
    free(dur);
    cp__coll_free(c);
    return rc;
}

void cp__coll_free(coll_rows *c)
{
    free(c->slots);
    free(c->calls);
    free(c->comms);
    free(c->classes);
    free(c->keys);
    memset(c, 0, sizeof *c);
}
