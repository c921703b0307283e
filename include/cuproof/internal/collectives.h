/*
 * The collectives of a distributed program, matched across its ranks: the
 * two analyses that need them and nothing else.
 *
 * Matching. Each rank's communication kernels (NCCL's) run on one stream
 * per communicator. The k-th kernel of a rank's i-th communication stream
 * (streams numbered by their first kernel's start) is collective (i, k):
 * every rank of the communicator runs it, and its ends nearly coincide on
 * every rank, since none can finish before the last has arrived. Only
 * where every rank that ran collectives ran as many on each communicator:
 * a rank with fewer whose ends keep pace with the fullest rank's (its
 * trace ends first) is matched over the collectives every rank completed,
 * the rest left out and said (`partial`); one whose ends part from the
 * fullest rank's (a kernel missing in between: a dropped record, a
 * collective some ranks run), or that completed fewer than half, leaves
 * the trace not matched at all, saying why (`unmatched`), and no figure
 * across ranks stands (issue 42: one NCCL kernel removed from rank 1 of a
 * run with no slow rank named rank 1 a straggler at 80 of 81).
 *
 * Identity. Where NCCL's calls were recorded (cp_collectives_add_call)
 * and every kernel of every rank is paired with its call, communicator i
 * is the i-th by NCCL's id and a kernel's place is its call's among its
 * rank's calls on it; a rank with none on a communicator is not of it.
 * The counts' checks above then hold per communicator among its ranks.
 *
 * One job. The ends of a collective on the ranks of one host (one clock)
 * nearly coincide; where their median distance exceeds the median
 * interval between one collective and the next (and 1 ms), the files are
 * not one run of one job (two runs' files without run ids, a forged id:
 * issue 42 saw a median lag of 29.3 s judged as a straggler) and no
 * figure across ranks stands (`not_one_job`). Ranks on different hosts
 * cannot show it: their offset is what the alignment takes out.
 *
 * Clock alignment. Ranks on different hosts stamp their records with
 * different clocks, which disagree by up to milliseconds. For each host,
 * the offset to the reference host (host 0) is the median over the
 * collectives both hosts ran of (the median end on that host minus the
 * median end on the reference); the residual is the median distance of
 * those differences from the offset. A host that shares no collective
 * with the reference is "not aligned": its offset is unknown, and anything
 * that compares its times with another host's cannot be decided.
 *
 * Stragglers. In DDP the all-reduce makes every rank's step as long as the
 * slowest's, so step times cannot name the slow rank; arrival can. Per
 * collective, on aligned clocks: the spread of the starts, the rank that
 * arrived last and its lag (its start minus the median start of the
 * others). A rank is the straggler when it arrived last at least 3 times,
 * in at least half of the collectives it ran and at least 1.5 times as
 * often as chance would have it (1 / the ranks seen: with two ranks, in
 * three of four), with a median lag of at least `min_lag_ns`. The median,
 * not the mean: the first collectives of a run (NCCL's warm-up, the
 * broadcast of the model) come with lags of up to 40 ms whoever is slow,
 * which lift the mean of a run without a slow rank to 1.7-2.3 ms on two
 * H200s, as high as a rank that sleeps 20 ms a step (3.5-4.1 ms), while
 * the medians stay apart: 0.04-0.23 ms without, 0.67-0.69 ms with
 * (ci/device-issue27.sh, 2026-11-25). The mean and the largest lag are
 * reported beside it: what the others waited.
 *
 * Memory grows with the collectives (ranks x communication kernels), not
 * with the records.
 */
#ifndef CUPROOF_COLLECTIVES_H
#define CUPROOF_COLLECTIVES_H

#include "../export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_collectives cp_collectives;

/* Returns 0 or CP_ENOMEM. */
CP_API int cp_collectives_new(cp_collectives **out);

/* One communication kernel of rank `rank` (0..), on host `host` (0..; 0 is
 * the reference clock), on its stream `stream`, over [start, end) on that
 * host's clock. In any order. Returns 0, CP_ENOMEM, or CP_EINVAL for a
 * rank that was added before with another host. */
CP_API int cp_collectives_add(cp_collectives *c, uint32_t rank, uint32_t host, uint32_t stream,
                              uint64_t start, uint64_t end);

/* cp_collectives_add with the kernel's name (as the trace gives it), from
 * which its operation, algorithm and protocol are read (NCCL's names;
 * others are "other"): a matched collective whose kernels say different
 * operations on different ranks is no collective, and its time is split
 * by operation into waiting for the last rank and transfer. */
CP_API int cp_collectives_add_named(cp_collectives *c, uint32_t rank, uint32_t host,
                                    uint32_t stream, uint64_t start, uint64_t end,
                                    const char *name);

/* An NCCL call of rank `rank` with its payload (cuproof/trace.h: an NCCL
 * range whose comm is set): its start on that rank's clock, its
 * communicator (NCCL's commHash, the same on every rank of it), its
 * message size, its peer (a send's or receive's rank in the
 * communicator; -1 for a collective) and its range's name
 * ("ncclAllReduce"; others are left out). Where every communication
 * kernel of every rank is paired with its call (the per-collective
 * table's rule: cuproof/metrics.h, cp_collective_row), collective (i, k)
 * is the k-th call on the i-th communicator by id instead of the k-th
 * kernel of the i-th stream: a subgroup's collectives are matched among
 * its own ranks, and a communicator whose streams differ across ranks is
 * one. Returns 0 or CP_ENOMEM. */
CP_API int cp_collectives_add_call(cp_collectives *c, uint32_t rank, uint64_t start,
                                   uint64_t comm, uint64_t bytes, int32_t peer,
                                   const char *name);

/* Declares rank `rank` on host `host` whether or not it ran a collective,
 * so that a host none of whose ranks did is seen, and reported as not
 * aligned. Returns as cp_collectives_add. */
CP_API int cp_collectives_add_rank(cp_collectives *c, uint32_t rank, uint32_t host);

/* Per host: the offset to add to its times to put them on host 0's clock,
 * the residual, and whether it could be aligned at all. */
typedef struct cp_host_offset {
    uint32_t host;
    bool aligned;           /* false: no collective shared with host 0 */
    int64_t offset_ns;      /* add to the host's times (0 for host 0) */
    uint64_t residual_ns;   /* median distance of the matches from the offset */
    uint32_t shared;        /* collectives it shares with host 0 */
} cp_host_offset;

/* Per operation, algorithm and protocol, over the matched collectives on
 * aligned clocks: how many, and their ranks' kernel time before the last
 * rank arrived (waiting for it) and after (the transfer), summed over the
 * ranks' kernels. */
typedef struct cp_collective_wait {
    char op[24], algo[24], proto[12];
    uint32_t matched;
    uint64_t wait_ns, transfer_ns;
} cp_collective_wait;

/* Per rank: how it arrived at the collectives. */
typedef struct cp_rank_arrival {
    uint32_t rank, host;
    uint32_t collectives;   /* matched collectives it took part in */
    uint32_t arrived_last;  /* of those, how often it started last */
    uint64_t median_lag_ns; /* when last: its start minus the others' median */
    uint64_t mean_lag_ns;   /* the mean of those lags: what the others waited */
    uint64_t max_lag_ns;    /* the largest such lag */
} cp_rank_arrival;

/* One matched collective's arrival, on host 0's clock: its first rank's
 * start, the rank that started it last and that rank's lag (its start
 * minus the others' median), for the straggler per step
 * (cuproof/internal/steps.h). */
typedef struct cp_collective_arrival {
    int64_t first_ns;
    uint32_t last_rank;
    uint64_t lag_ns;
} cp_collective_arrival;

typedef struct cp_collectives_result {
    uint32_t ranks, hosts;
    uint32_t matched;           /* collectives that two or more ranks ran */
    cp_host_offset *hosts_of;   /* `hosts` entries, by host */
    bool all_aligned;
    /* Why the kernels cannot be matched by position: ranks ran different
     * numbers of collectives on a communicator (counts and streams
     * named); then nothing is aligned, matched or named a straggler. ""
     * when they can. */
    char unmatched[400];
    /* Matched without the collectives past what every rank completed
     * (a rank's trace ends first): which rank, and how many ("" when
     * every rank ran them all). */
    char partial[300];
    /* How they were matched when NCCL's calls were recorded: "by NCCL's
     * communicators and the order of their calls", or "by stream
     * position: N of M communication kernels had their NCCL call"; ""
     * when no call was recorded (by stream position, as always). */
    char matched_by[200];
    /* Not one job: on host `apart_host`, matched collectives' ends are a
     * median apart_median_ns apart (ranks apart_ranks the farthest), more
     * than the median apart_interval_ns between one collective and the
     * next (over apart_collectives). Then, as for `unmatched`, nothing is
     * aligned, matched or named a straggler. */
    bool not_one_job;
    uint32_t apart_host, apart_ranks[2], apart_collectives;
    uint64_t apart_median_ns, apart_interval_ns;
    cp_rank_arrival *ranks_of;  /* `ranks` entries, by rank */
    cp_collective_wait *waits;  /* by operation, the most time first; owned */
    size_t nwaits;
    cp_collective_arrival *arrivals; /* each matched collective's, in match order; owned */
    size_t narrivals;
    uint64_t median_start_spread_ns, median_end_spread_ns;
    bool straggler;             /* the rule above found one */
    uint32_t straggler_rank;
    uint64_t straggler_lag_ns;  /* its median lag */
    uint64_t straggler_mean_lag_ns, straggler_max_lag_ns;
} cp_collectives_result;

/* Matches, aligns and looks for a straggler (rules above), with
 * `min_lag_ns` the least median lag a straggler shows. Collectives of a
 * host that cannot be aligned take no part in the arrivals. Returns 0 or
 * CP_ENOMEM; free the result with cp_collectives_result_free. */
CP_API int cp_collectives_analyse(cp_collectives *c, uint64_t min_lag_ns,
                                  cp_collectives_result *out);
CP_API void cp_collectives_result_free(cp_collectives_result *r);
CP_API void cp_collectives_free(cp_collectives *c);

#ifdef __cplusplus
}
#endif

#endif
