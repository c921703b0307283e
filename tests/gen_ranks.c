/* The synthetic ranks of gen_ranks.h: one rec file per rank, collectives
 * planned on a true clock shared by every rank and written on each host's
 * own clock. */
#include "gen_ranks.h"

#include <cuproof/error.h>
#include <cuproof/internal/rec.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PENDING = 512, STREAMS = 32 };

/* The true clock's start: a CUPTI-like time far from 0, so that a
 * negative host offset of milliseconds stays a valid time. */
static const uint64_t BASE = 1700000000000000000ull;

static uint32_t next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* A value fixed by (rank, collective, what): every rank can compute any
 * other's arrival at collective k, which is what makes the ends agree. */
static uint64_t mix(uint64_t rank, uint64_t k, uint64_t what)
{
    uint64_t z =
        rank * 0x9E3779B97F4A7C15ull + k * 0xBF58476D1CE4E5B9ull + what * 0x94D049BB133111EBull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t host_of(const gen_ranks_opts *o, uint32_t rank)
{
    return o->hosts ? (uint32_t)((uint64_t)rank * o->hosts / o->ranks) : rank / 4;
}

static bool communicates(const gen_ranks_opts *o, uint32_t rank)
{
    return o->no_collectives_host < 0 || host_of(o, rank) != (uint32_t)o->no_collectives_host;
}

static uint64_t period(const gen_ranks_opts *o)
{
    return o->period_ns ? o->period_ns : 4000000;
}

/* When rank `rank` arrives at collective k (its kernel starts), true clock. */
static uint64_t arrival(const gen_ranks_opts *o, uint32_t rank, uint64_t k)
{
    uint64_t t = BASE + (k + 1) * period(o) + mix(rank, k, 1) % GEN_RANKS_ARRIVAL_SPREAD_NS;
    if (o->delay_rank >= 0 && rank == (uint32_t)o->delay_rank)
        t += o->delay_ns;
    return t;
}

/* When rank `rank`'s kernel of collective k ends: once the last rank that
 * communicates has arrived, plus the transfer, plus its own jitter. */
static uint64_t ending(const gen_ranks_opts *o, uint32_t rank, uint64_t k)
{
    uint64_t last = 0;
    for (uint32_t r = 0; r < o->ranks; r++)
        if (communicates(o, r)) {
            uint64_t a = arrival(o, r, k);
            last = a > last ? a : last;
        }
    return last + 100000 + mix(rank, k, 2) % 6000;
}

/* One rank's writer: its file, its clock's offset, its pending work. */
typedef struct rank_out {
    cp_rec_writer *w;
    int64_t shift;
    cp_activity *pending; /* PENDING entries */
    size_t npending;
    long written, limit;
} rank_out;

/* An activity on this host's clock. */
static int put(rank_out *ro, const cp_activity *a)
{
    cp_activity s = *a;
    s.start = (uint64_t)((int64_t)a->start + ro->shift);
    s.end = (uint64_t)((int64_t)a->end + ro->shift);
    if (cp_rec_put(ro->w, &s) < 0)
        return -1;
    ro->written++;
    return 0;
}

/* Writes the pending work that has ended by `now` (true clock), in the
 * pool's order, which is the order of completion. */
static int flush_done(rank_out *ro, uint64_t now)
{
    for (size_t i = 0; i < ro->npending && ro->written < ro->limit;) {
        if (ro->pending[i].end > now) {
            i++;
            continue;
        }
        if (put(ro, &ro->pending[i]) < 0)
            return -1;
        ro->pending[i] = ro->pending[--ro->npending];
    }
    return 0;
}

/* Queues device work, writing all that is pending first when full. */
static int queue(rank_out *ro, const cp_activity *a)
{
    if (ro->npending == PENDING && flush_done(ro, UINT64_MAX) < 0)
        return -1;
    if (ro->written < ro->limit && ro->npending < PENDING)
        ro->pending[ro->npending++] = *a;
    return 0;
}

static int write_rank(const gen_ranks_opts *o, uint32_t rank, const char *path, cp_activity *pool)
{
    static const char *compute[] = {"ampere_sgemm_128x64_nn", "vectorized_elementwise_kernel",
                                    "reduce_kernel", "softmax_warp_forward"};
    static const char *nccl =
        "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
    uint32_t host = host_of(o, rank);
    rank_out ro = {
        .shift = (int64_t)host * o->clock_offset_ns, .pending = pool, .limit = o->records};
    if (cp_rec_writer_open(&ro.w, path) < 0)
        return -1;
    /* The header as the injection library writes it under torchrun: the
     * rank from RANK, its place on its host, the world and one run. */
    uint32_t first_on_host = rank;
    while (first_on_host > 0 && host_of(o, first_on_host - 1) == host)
        first_on_host--;
    cp_process proc = {.pid = 2000 + rank,
                       .ppid = 1999,
                       .ended = true,
                       .rank = (int32_t)rank,
                       .local_rank = (int32_t)(rank - first_on_host),
                       .world_size = (int32_t)o->ranks};
    if (o->hosts)
        snprintf(proc.host, sizeof proc.host, "sim-host-%u", host);
    else
        snprintf(proc.host, sizeof proc.host, "node%u", host);
    snprintf(proc.command, sizeof proc.command, "python3 train.py (rank %u)", rank);
    snprintf(proc.rank_var, sizeof proc.rank_var, "RANK");
    snprintf(proc.run, sizeof proc.run, "gen-ranks.%u", o->ranks);
    int rc = -1;
    if (cp_rec_put_process(ro.w, &proc) < 0)
        goto out;
    uint32_t device = o->hosts ? (uint32_t)proc.local_rank % 8 : rank % 4;
    uint32_t seed = 777 + rank, correlation = 1;
    uint64_t t = BASE, k = 0, next_arrival = arrival(o, rank, 0);
    bool comm = communicates(o, rank);
    while (ro.written < ro.limit) {
        uint32_t r = next(&seed);
        cp_activity launch = {.kind = CP_ACT_RUNTIME,
                              .start = t,
                              .end = t + 3000 + r % 2000,
                              .correlation = correlation,
                              .name = "cudaLaunchKernel"};
        cp_activity a = {.device = device,
                         .context = 1,
                         .stream = 7 + r % STREAMS,
                         .correlation = correlation,
                         .start = t + 5000 + r % 20000};
        if (comm && t + 20000 >= next_arrival) {
            /* Launched 15 to 20 us ahead of its planned arrival (the clock
             * moves at most 4.5 us a step), so that it starts exactly then. */
            a.kind = CP_ACT_KERNEL;
            a.name = nccl;
            a.stream = 99;
            a.start = next_arrival;
            a.end = ending(o, rank, k);
            a.grid[0] = 2;
            a.grid[1] = a.grid[2] = 1;
            a.block[0] = 512;
            a.block[1] = a.block[2] = 1;
            next_arrival = arrival(o, rank, ++k);
        } else if (r % 100 < 80) {
            a.kind = CP_ACT_KERNEL;
            a.name = compute[r % 4];
            a.end = a.start + 2000 + next(&seed) % 80000;
            a.grid[0] = 1 + r % 4096;
            a.grid[1] = a.grid[2] = 1;
            a.block[0] = 256;
            a.block[1] = a.block[2] = 1;
        } else {
            a.kind = CP_ACT_MEMCPY;
            a.copy_dir = r % 2 ? CP_COPY_HTOD : CP_COPY_DTOH;
            a.src = a.copy_dir == CP_COPY_HTOD ? CP_MEM_PINNED : CP_MEM_DEVICE;
            a.dst = a.copy_dir == CP_COPY_HTOD ? CP_MEM_DEVICE : CP_MEM_PINNED;
            a.bytes = (uint64_t)(1 + r % 64) << 16;
            a.async = true;
            a.end = a.start + a.bytes / 25;
            launch.name = "cudaMemcpyAsync";
        }
        correlation++;
        if (put(&ro, &launch) < 0 || queue(&ro, &a) < 0)
            goto out;
        t += 1500 + r % 3000;
        if (flush_done(&ro, t) < 0)
            goto out;
    }
    cp_process end_of = {.ended = true, .last_ns = (uint64_t)((int64_t)t + ro.shift)};
    snprintf(end_of.why, sizeof end_of.why, "exit");
    cp_rec_end end = {0};
    if (cp_rec_put_process_end(ro.w, 0, &end_of) < 0)
        goto out;
    rc = cp_rec_writer_close(ro.w, &end) < 0 ? -1 : 0;
    ro.w = NULL;
out:
    if (ro.w)
        cp_rec_writer_abandon(ro.w);
    return rc;
}

int gen_ranks_write(const char *dir, const gen_ranks_opts *o)
{
    if (o->records <= 0 || o->ranks == 0 || o->ranks > 1024 || o->hosts > o->ranks)
        return cp_failf(CP_EINVAL,
                        "gen-ranks: %ld records, %u ranks, %u hosts: want records > 0, "
                        "1 to 1024 ranks and no more hosts than ranks",
                        o->records, o->ranks, o->hosts);
    cp_activity *pool = malloc(PENDING * sizeof *pool);
    if (!pool)
        return cp_failf(CP_ENOMEM, "gen-ranks: out of memory");
    int rc = 0;
    for (uint32_t r = 0; rc == 0 && r < o->ranks; r++) {
        char path[4096];
        uint32_t host = host_of(o, r);
        if (o->hosts)
            snprintf(path, sizeof path, "%.4000s/sim-host-%u.%u.proc.cprec", dir, host, 2000 + r);
        else
            snprintf(path, sizeof path, "%.4000s/node%u.%u.proc.cprec", dir, host, 2000 + r);
        rc = write_rank(o, r, path, pool);
    }
    free(pool);
    return rc;
}
