/*
 * The ranks of a distributed program (docs/distributed.md, "The ranks'
 * table" and "Collectives and clocks"): one row per rank with its own figures, the hosts and the
 * clock offset applied to each, and the collectives' arrivals with the
 * straggler (cuproof/internal/collectives.h says the rules). `cuproof exec` and
 * `cuproof check` fill it for a program whose processes carry ranks; the
 * report (report.json "ranks", the HTML's ranks table, the terminal
 * summary) prints it.
 *
 * A rank's figures are measured on its own records only (the rank(N)
 * scope's part: its devices, on its host's clock), with the metrics'
 * definitions (cuproof/metrics.h); they are the figures `every rank:`
 * expectations read.
 *
 * Hosts. Host k is the k-th distinct host name among the processes in
 * the order their files are read (file names' byte order); host 0 is the
 * reference clock. A program of several hosts numbers the devices of
 * host k from k * CP_HOST_DEVICE_STRIDE, so that GPU 0 of two hosts are
 * two devices (overlap and concurrency are per device); on one host the
 * numbers are the CUDA ordinals.
 */
#ifndef CUPROOF_RANKS_H
#define CUPROOF_RANKS_H

#include "../export.h"
#include "collectives.h"

#include "../metrics.h"
#include "../trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device numbers of host k start at k * CP_HOST_DEVICE_STRIDE. */
#define CP_HOST_DEVICE_STRIDE 1000u

/* The devices a rank row lists at most (it counts them all). */
#define CP_RANK_MAX_DEVICES 8

/* The least median lag (ns) a straggler shows (cuproof/internal/collectives.h):
 * on two H200s the rank arriving last most often lags by a median of
 * 0.04-0.23 ms in runs where no rank is slow, 0.67-0.69 ms where one
 * sleeps 20 ms a step (and 0.69 ms on the H100 recording). */
#define CP_STRAGGLER_MIN_LAG_NS 400000ull

/* One rank's row. */
typedef struct cp_rank_row {
    int32_t rank;
    uint32_t host;      /* index into cp_ranks.hosts */
    uint32_t pid;       /* its (first) process */
    uint32_t processes; /* its processes: more than one is a duplicate rank */
    uint32_t devices[CP_RANK_MAX_DEVICES];
    uint32_t ndevices; /* devices with its work (the first CP_RANK_MAX_DEVICES listed) */
    /* Its own figures (the metrics of its records, summed over its
     * devices as the program's are): span is its devices' summed spans,
     * busy the time inside them with anything in flight, idle the rest. */
    uint64_t span_ns, busy_ns, idle_ns;
    double idle_share; /* idle_ns / span_ns (0 with no work) */
    uint32_t kernels;
    uint64_t comm_busy_ns, comm_compute_overlap_ns, exposed_comm_ns;
    double comm_compute_overlap_ratio, exposed_comm_share;
    /* How it arrived at the collectives (cp_rank_arrival). */
    uint32_t collectives, arrived_last;
    uint64_t median_lag_ns, mean_lag_ns, max_lag_ns;
} cp_rank_row;

/* The figures of cp_rank_row that report.json writes and reads back, in
 * its order, declared once: XX(field, CP_METRIC_ type). */
#define CP_RANK_ROW_MAP(XX)                                                               \
    XX(span_ns, U64) XX(busy_ns, U64) XX(idle_ns, U64) XX(idle_share, DOUBLE)             \
    XX(kernels, U32) XX(comm_busy_ns, U64) XX(comm_compute_overlap_ns, U64)               \
    XX(exposed_comm_ns, U64) XX(comm_compute_overlap_ratio, DOUBLE)                       \
    XX(exposed_comm_share, DOUBLE) XX(collectives, U32) XX(arrived_last, U32)             \
    XX(median_lag_ns, U64) XX(mean_lag_ns, U64) XX(max_lag_ns, U64)

/* CP_RANK_ROW_MAP as a table (label, unit and meaning NULL), read and set
 * with cp_field_value and cp_field_set; *n gets its length. */
CP_API const cp_metric_def *cp_rank_row_defs(size_t *n);

/* One host: its name and the offset that put its clock on host 0's. */
typedef struct cp_host_clock {
    char name[64];
    bool aligned;        /* false: it shares no collective with host 0 */
    int64_t offset_ns;   /* added to its times (0 for host 0) */
    uint64_t residual_ns; /* median distance of its collectives' ends from the offset */
    uint32_t shared;     /* collectives it shares with host 0 */
} cp_host_clock;

typedef struct cp_ranks {
    cp_rank_row *rows; /* by rank, ascending; owned */
    size_t nrows;
    cp_host_clock *hosts; /* by host index; owned */
    size_t nhosts;
    bool all_aligned;    /* every host's clock could be put on host 0's */
    char unmatched[400]; /* why the collectives could not be matched ("" when they were) */
    char partial[300];   /* matched without a rank's last ones, and why ("" when all) */
    char matched_by[200]; /* how, where NCCL's calls were recorded (cp_collectives_result) */
    char missing[400];   /* the ranks the world size promises that have no trace ("" none) */
    /* Why the files are not one job: ranks of one host whose collectives
     * end far apart (cuproof/internal/collectives.h, "One job"); "" when
     * they are. Then nothing across ranks is given, and the trust rule
     * does not trust the trace. */
    char not_one_job[400];
    /* The matched collectives by operation: their ranks' time waiting for
     * the last rank and transferring (cuproof/internal/collectives.h);
     * owned; NULL when none was matched. */
    cp_collective_wait *waits;
    size_t nwaits;
    /* Each matched collective's arrival (cp_collective_arrival), for the
     * straggler per step; owned; NULL when none was matched. */
    cp_collective_arrival *arrivals;
    size_t narrivals;
    uint32_t collectives; /* matched across two or more ranks */
    uint64_t median_start_spread_ns, median_end_spread_ns;
    bool straggler; /* the rule of cuproof/internal/collectives.h found one */
    int32_t straggler_rank;
    uint64_t straggler_median_lag_ns, straggler_mean_lag_ns, straggler_max_lag_ns;
} cp_ranks;

/*
 * Building the ranks while a program's records are read, in any order
 * and in bounded memory (each rank's figures through its own streaming
 * analysis; the collectives kept as 32 bytes per communication kernel).
 */
typedef struct cp_ranks_builder cp_ranks_builder;

/* `opts` (may be NULL) as for the analysis: the communication pattern and
 * the concurrency limit. Returns 0 or CP_ENOMEM. */
CP_API int cp_ranks_builder_new(cp_ranks_builder **out, const cp_timeline_opts *opts);

/* One record of process `a->process` of `meta` (whose processes the
 * reader has filled up to it); records of a process without a rank are
 * not a rank's. Times as the files hold them (each host's own clock).
 * Returns 0, CP_ENOMEM or CP_EIO (a rank's analysis spilling to disk). */
CP_API int cp_ranks_builder_add(cp_ranks_builder *b, const cp_trace *meta, const cp_activity *a);

/* The ranks of `meta` (every process read): *out is NULL when no process
 * has a rank. Returns 0, CP_ENOMEM or CP_EIO; the builder is spent. */
CP_API int cp_ranks_builder_finish(cp_ranks_builder *b, const cp_trace *meta, cp_ranks **out);
CP_API void cp_ranks_builder_free(cp_ranks_builder *b);

/* The program-wide figures (CP_PROGRAM_WIDE_MAP) of `r` into `m`, and the
 * straggler finding when `r` found one. */
CP_API void cp_ranks_put_metrics(const cp_ranks *r, cp_metrics *m);

/* Whether the hosts' clocks disagree: some host other than host 0 was
 * aligned with a non-zero offset, so the records must be read again with
 * the offsets on (cp_placer). */
CP_API bool cp_ranks_need_alignment(const cp_ranks *r);

/*
 * Placing a program's records before any analysis sees them, as a
 * cp_activity_fn in front of the next one: on a host other than host 0
 * its device work is numbered from the host's CP_HOST_DEVICE_STRIDE and,
 * when `offsets` is set, its times moved by its host's offset; every
 * placed record goes to `ranks` (when set), then to `next`. `meta` is the
 * reader's trace, whose processes grow as files are read. Zero-initialise,
 * set the fields, pass cp_placer_record with the placer as the reader's
 * callback, and cp_placer_free it.
 */
typedef struct cp_placer {
    const cp_trace *meta;
    const int64_t *offsets; /* by host; NULL: as the files say */
    size_t noffsets;
    cp_ranks_builder *ranks; /* may be NULL */
    cp_activity_fn next;
    void *next_ctx;
    uint32_t *host_of; /* private: each process's host index */
    size_t nhost_of;
} cp_placer;

CP_API int cp_placer_record(void *placer, const cp_activity *a);
CP_API void cp_placer_free(cp_placer *p);

/* The offsets by host that cp_ranks_need_alignment asks for (0 for a host
 * that could not be aligned) in a new array of r->nhosts; NULL when out
 * of memory (CP_ENOMEM set). */
CP_API int64_t *cp_ranks_offsets(const cp_ranks *r);

/* Moves the processes' last_ns of `meta` by their hosts' offsets, after a
 * reading with the offsets on. Returns 0 or CP_ENOMEM (nothing moved). */
CP_API int cp_ranks_shift_processes(cp_trace *meta, const int64_t *offsets, size_t n);

/* Whether some host's clock could not be put on host 0's ("hosts not
 * aligned"), with why in `why` (naming the hosts): an expectation whose
 * part spans hosts (cp_expect_crosses_hosts) is then undecided,
 * inconclusive rather than judged on clocks that disagree. False for r
 * NULL or one host. */
CP_API bool cp_ranks_unaligned(const cp_ranks *r, char *why, size_t len);

/* Whether the collectives could not be matched (cp_ranks.unmatched), with
 * why in `why`: an expectation on a figure across ranks (the program-wide
 * metrics, the straggler finding) is then undecided, never judged on a
 * shifted match. False for r NULL. */
CP_API bool cp_ranks_unmatched(const cp_ranks *r, char *why, size_t len);

/* Whether ranks the processes' world size promises have no trace
 * (cp_ranks.missing), with why: an expectation across ranks or on every
 * rank is then undecided, never judged on the ranks present alone. */
CP_API bool cp_ranks_incomplete(const cp_ranks *r, char *why, size_t len);

/* Whether the ranks' files are not one job (r->not_one_job), why in
 * `why`. False for NULL. */
CP_API bool cp_ranks_not_one_job(const cp_ranks *r, char *why, size_t len);

/* The row of rank `rank`, or NULL. */
CP_API const cp_rank_row *cp_ranks_row(const cp_ranks *r, int32_t rank);

CP_API void cp_ranks_free(cp_ranks *r);

#ifdef __cplusplus
}
#endif

#endif
