/*
 * Synthetic ranks of a distributed training job, written as the injection
 * library writes them (one cuproof.rec per-process file per rank, with
 * its rank fields): shared by stream_bench gen-ranks (the 8 x 1M merge of
 * ci/bench.sh) and the CPU tests of the hosts' clock alignment
 * (tests/test_hosts.c), so that the bench measures what the tests check.
 *
 * What a rank holds: compute kernels on 32 streams, pinned copies, a
 * launch call per piece of device work, and an NCCL all-reduce on a
 * communicator stream of its own every period_ns (unless its host runs
 * none). Collective k is planned at base + (k + 1) * period_ns; each
 * rank arrives (its kernel starts) up to 50 us after that, the delayed
 * rank delay_ns later still, and every rank's kernel ends when the last
 * has arrived plus 100 us plus a jitter of its own of up to 6 us, as a
 * real all-reduce can end only once every rank is in it. Host k's clock
 * reads k * clock_offset_ns ahead of the true time, which every time the
 * file holds carries. Records leave in completion order, as CUPTI
 * delivers them.
 */
#ifndef CUPROOF_TESTS_GEN_RANKS_H
#define CUPROOF_TESTS_GEN_RANKS_H

#include <stdint.h>

typedef struct gen_ranks_opts {
    long records;     /* activity records per rank (> 0) */
    uint32_t ranks;   /* 1 .. 1024 */
    /* 0: hosts "node0", "node1", ... of 4 ranks each (the bench's first
     * layout); else ranks in blocks over hosts "sim-host-0" .. "sim-host-(H-1)"
     * (rank r on host r * H / ranks). Host k is the k-th host in the
     * files' name order only while H <= 10. */
    uint32_t hosts;
    int64_t clock_offset_ns;  /* host k's clock = true + k * clock_offset_ns */
    int32_t no_collectives_host; /* this host's ranks run no collective; -1: none */
    int32_t delay_rank;          /* the rank that arrives late; -1: none */
    uint64_t delay_ns;           /* how late it arrives at every collective */
    uint64_t period_ns;          /* between collectives; 0: 4 ms */
} gen_ranks_opts;

/* The defaults above: no offset, no delay, every host communicating. */
#define GEN_RANKS_OPTS_INIT {.no_collectives_host = -1, .delay_rank = -1}

/* The planned delay's bounds: a rank arrives up to this late by chance. */
#define GEN_RANKS_ARRIVAL_SPREAD_NS 50000u

/* Writes the ranks into `dir` (which exists) as HOST.PID.proc.cprec, PID
 * 2000 + rank. Returns 0, or -1 with cp_last_error naming the file. */
int gen_ranks_write(const char *dir, const gen_ranks_opts *o);

#endif
