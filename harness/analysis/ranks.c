/* The ranks of a distributed program built while its records are read
 * (cuproof/internal/ranks.h): a streaming analysis per rank for its own figures,
 * and its communication kernels into the collectives for the hosts'
 * clocks and the straggler. */
#include <cuproof/internal/ranks.h>

#include <cuproof/internal/collectives.h>
#include <cuproof/error.h>
#include <cuproof/internal/grow.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cp_metric_def rank_row_defs[] = {
#define CP_RANK_ROW_DEF_(name, type) \
    {#name, NULL, NULL, NULL, CP_METRIC_##type, offsetof(cp_rank_row, name)},
    CP_RANK_ROW_MAP(CP_RANK_ROW_DEF_)
#undef CP_RANK_ROW_DEF_
};

const cp_metric_def *cp_rank_row_defs(size_t *n)
{
    *n = sizeof rank_row_defs / sizeof rank_row_defs[0];
    return rank_row_defs;
}

/* One rank as the records arrive. */
typedef struct rank_state {
    int32_t rank;
    uint32_t host, pid, processes;
    cp_stream *stream;
    uint32_t *devices; /* every device with its work, in order seen */
    uint32_t ndevices, devices_cap;
} rank_state;

struct cp_ranks_builder {
    cp_timeline_opts opts;
    const char *pattern;
    rank_state *ranks; /* by rank, as they come */
    size_t n, cap;
    cp_collectives *coll;
    /* Per process, as the reader adds them: its host index, and its
     * rank's state in `ranks` (-1: not yet, or no rank), so that a record
     * finds both without a search. */
    uint32_t *host_of;
    int32_t *state_of;
    size_t nprocesses;
};

int cp_ranks_builder_new(cp_ranks_builder **out, const cp_timeline_opts *opts)
{
    *out = NULL;
    cp_ranks_builder *b = calloc(1, sizeof *b);
    if (!b)
        return cp_failf(CP_ENOMEM, "out of memory for the ranks' table");
    if (opts)
        b->opts = *opts;
    b->pattern = b->opts.comm_pattern;
    int rc = cp_collectives_new(&b->coll);
    if (rc < 0) {
        free(b);
        return rc;
    }
    *out = b;
    return 0;
}

void cp_ranks_builder_free(cp_ranks_builder *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++) {
        cp_stream_free(b->ranks[i].stream);
        free(b->ranks[i].devices);
    }
    free(b->ranks);
    cp_collectives_free(b->coll);
    free(b->host_of);
    free(b->state_of);
    free(b);
}

/* The host indexes of meta's processes `from` up to `to` (below its
 * processes; 0 past them) into out[], out[0..from) being filled already:
 * a process of a host seen before takes its index, the first of a new
 * host the next. A growing table costs O(processes) a process, where
 * cp_trace_host_index, which counts the hosts before a process, costs the
 * square of it each call. */
static void fill_host_indexes(const cp_trace *meta, uint32_t *out, size_t from, size_t to)
{
    uint32_t next = 0;
    for (size_t j = 0; j < from; j++)
        next = out[j] + 1 > next ? out[j] + 1 : next;
    for (size_t i = from; i < to; i++) {
        if (i >= meta->nprocesses) {
            out[i] = 0;
            continue;
        }
        size_t j = 0;
        while (j < i && strcmp(meta->processes[j].host, meta->processes[i].host) != 0)
            j++;
        out[i] = j < i ? out[j] : next++;
    }
}

/* *table grown to `need` entries of host indexes (*n of them filled). */
static int host_table(const cp_trace *meta, uint32_t **table, size_t *n, size_t need)
{
    if (need <= *n)
        return 0;
    uint32_t *t = realloc(*table, need * sizeof *t);
    if (!t)
        return cp_failf(CP_ENOMEM, "out of memory for the program's hosts");
    fill_host_indexes(meta, t, *n, need);
    *table = t;
    *n = need;
    return 0;
}

/* The builder's per-process tables grown to meta's processes. */
static int learn_processes(cp_ranks_builder *b, const cp_trace *meta)
{
    size_t known = b->nprocesses, need = meta->nprocesses;
    if (need <= known)
        return 0;
    int32_t *s = realloc(b->state_of, need * sizeof *s);
    if (!s)
        return cp_failf(CP_ENOMEM, "out of memory for the ranks' table");
    b->state_of = s;
    for (size_t i = known; i < need; i++)
        s[i] = -1;
    return host_table(meta, &b->host_of, &b->nprocesses, need);
}

/* The state of rank `rank`, made on its first record (its analysis's
 * chunk a share of one analysis's, as 'every rank' sizes them). */
static int rank_of(cp_ranks_builder *b, const cp_trace *meta, uint32_t process, rank_state **out)
{
    int rc = learn_processes(b, meta);
    if (rc < 0)
        return rc;
    if (b->state_of[process] >= 0) {
        *out = &b->ranks[b->state_of[process]];
        return 0;
    }
    /* A new process: its rank's state, which another process of the same
     * rank (a duplicate) may have made. */
    int32_t rank = cp_process_rank(&meta->processes[process]);
    for (size_t i = 0; i < b->n; i++)
        if (b->ranks[i].rank == rank) {
            b->state_of[process] = (int32_t)i;
            *out = &b->ranks[i];
            return 0;
        }
    rank_state *p = cp_grow(b->ranks, &b->cap, b->n, sizeof *p, 8);
    if (!p)
        return cp_failf(CP_ENOMEM, "out of memory for the ranks' table");
    b->ranks = p;
    int32_t world = meta->processes[process].world_size;
    size_t share = ((size_t)1 << 21) / (size_t)(world > 0 ? world : 8);
    cp_stream_opts so = {.timeline = b->opts,
                         .chunk_records = share < ((size_t)1 << 16) ? (size_t)1 << 16 : share};
    rank_state *r = &b->ranks[b->n];
    memset(r, 0, sizeof *r);
    r->rank = rank;
    r->host = b->host_of[process];
    r->pid = meta->processes[process].pid;
    rc = cp_stream_new(&r->stream, &so);
    if (rc < 0)
        return rc;
    b->state_of[process] = (int32_t)b->n;
    b->n++;
    *out = r;
    return 0;
}

int cp_ranks_builder_add(cp_ranks_builder *b, const cp_trace *meta, const cp_activity *a)
{
    bool call = a->kind == CP_ACT_RANGE && a->comm && !a->piece;
    if ((!call && !cp_activity_is_device_work(a)) || a->process >= meta->nprocesses ||
        cp_process_rank(&meta->processes[a->process]) < 0)
        return 0;
    rank_state *r;
    int rc = rank_of(b, meta, a->process, &r);
    if (rc < 0)
        return rc;
    /* An NCCL call with its payload: for matching by identity. */
    if (call)
        return cp_collectives_add_call(b->coll, (uint32_t)r->rank, a->start, a->comm, a->bytes,
                                       a->peer, a->name);
    /* Its devices, every one kept (the row lists the first
     * CP_RANK_MAX_DEVICES and counts them all): past the listed ones a
     * device must still be recognised, or each of its records would
     * count it again. */
    bool seen = false;
    for (uint32_t i = 0; i < r->ndevices && !seen; i++)
        seen = r->devices[i] == a->device;
    if (!seen) {
        if (r->ndevices == r->devices_cap) {
            uint32_t cap = r->devices_cap ? 2 * r->devices_cap : CP_RANK_MAX_DEVICES;
            uint32_t *d = realloc(r->devices, cap * sizeof *d);
            if (!d)
                return cp_failf(CP_ENOMEM, "out of memory for rank %d's devices", (int)r->rank);
            r->devices = d;
            r->devices_cap = cap;
        }
        r->devices[r->ndevices++] = a->device;
    }
    if (a->kind == CP_ACT_KERNEL &&
        cp_activity_class(a, b->pattern) == CP_CLASS_COMMUNICATION) {
        /* The stream of one communicator: the process's context and
         * stream, since stream ids repeat across contexts. */
        uint32_t stream = a->context * 65599u ^ a->stream;
        rc = cp_collectives_add_named(b->coll, (uint32_t)r->rank, r->host, stream, a->start,
                                      a->end, a->name);
        if (rc < 0)
            return rc;
    }
    return cp_stream_add(r->stream, a);
}

static int row_cmp(const void *x, const void *y)
{
    const cp_rank_row *a = x, *b = y;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

/* A rank's own figures from its analysis. */
static void fill_row(cp_rank_row *row, const cp_metrics *m)
{
    for (size_t d = 0; d < m->devices; d++)
        row->span_ns += m->device_metrics[d].span_ns;
    row->idle_ns = m->idle_ns;
    row->busy_ns = row->span_ns > row->idle_ns ? row->span_ns - row->idle_ns : 0;
    row->idle_share = row->span_ns ? (double)row->idle_ns / (double)row->span_ns : 0;
    row->kernels = m->kernels;
    row->comm_busy_ns = m->comm_busy_ns;
    row->comm_compute_overlap_ns = m->comm_compute_overlap_ns;
    row->comm_compute_overlap_ratio = m->comm_compute_overlap_ratio;
    row->exposed_comm_ns = m->exposed_comm_ns;
    row->exposed_comm_share = m->exposed_comm_share;
}

/* Rows for ranks with no device work: they are ranks all the same. */
static int add_idle_ranks(cp_ranks_builder *b, const cp_trace *meta)
{
    for (uint32_t p = 0; p < meta->nprocesses; p++) {
        if (cp_process_rank(&meta->processes[p]) < 0)
            continue;
        rank_state *r;
        int rc = rank_of(b, meta, p, &r);
        if (rc < 0)
            return rc;
        rc = cp_collectives_add_rank(b->coll, (uint32_t)r->rank, r->host);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The ranks the processes' world size promises that no process is (the
 * files of a rank left out, or never written), into r->missing. */
static void missing_ranks(cp_ranks *r, const cp_trace *meta)
{
    int32_t world = 0;
    for (size_t p = 0; p < meta->nprocesses; p++)
        if (cp_process_rank(&meta->processes[p]) >= 0 && meta->processes[p].world_size > world)
            world = meta->processes[p].world_size;
    size_t used = 0, n = 0;
    char list[200] = "";
    for (int32_t k = 0; k < world; k++) {
        bool seen = false;
        for (size_t i = 0; i < r->nrows && !seen; i++)
            seen = r->rows[i].rank == k;
        if (seen)
            continue;
        if (n++ < 16 && used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%d", n > 1 ? ", " : "",
                                     (int)k);
    }
    if (n)
        snprintf(r->missing, sizeof r->missing,
                 "%s %s%s of the job's %d (its world size) %s no trace here: a figure across "
                 "ranks, or on every rank, would be of the %zu present alone",
                 n == 1 ? "rank" : "ranks", list, n > 16 ? " and more" : "", (int)world,
                 n == 1 ? "has" : "have", r->nrows);
}

int cp_ranks_builder_finish(cp_ranks_builder *b, const cp_trace *meta, cp_ranks **out)
{
    *out = NULL;
    int rc = learn_processes(b, meta);
    if (rc == 0)
        rc = add_idle_ranks(b, meta);
    if (rc < 0 || b->n == 0)
        return rc;
    cp_ranks *r = calloc(1, sizeof *r);
    uint32_t nhosts = cp_trace_hosts(meta);
    if (!r || !(r->rows = calloc(b->n, sizeof *r->rows)) ||
        !(r->hosts = calloc(nhosts ? nhosts : 1, sizeof *r->hosts))) {
        cp_ranks_free(r);
        return cp_failf(CP_ENOMEM, "out of memory for the ranks' table");
    }
    r->nrows = b->n;
    r->nhosts = nhosts;
    r->straggler_rank = -1;
    for (uint32_t p = 0; p < meta->nprocesses; p++) {
        cp_host_clock *h = &r->hosts[b->host_of[p]];
        if (!h->name[0])
            snprintf(h->name, sizeof h->name, "%s", meta->processes[p].host);
    }
    for (size_t i = 0; rc == 0 && i < b->n; i++) {
        rank_state *s = &b->ranks[i];
        cp_rank_row *row = &r->rows[i];
        row->rank = s->rank;
        row->host = s->host;
        row->pid = s->pid;
        row->ndevices = s->ndevices;
        for (uint32_t d = 0; d < s->ndevices && d < CP_RANK_MAX_DEVICES; d++)
            row->devices[d] = s->devices[d];
        for (size_t p = 0; p < meta->nprocesses; p++)
            row->processes += cp_process_rank(&meta->processes[p]) == s->rank;
        cp_metrics m;
        rc = cp_stream_finish(s->stream, &m);
        if (rc == 0) {
            fill_row(row, &m);
            cp_metrics_free(&m);
        }
    }
    if (rc == 0)
        missing_ranks(r, meta);
    cp_collectives_result c;
    memset(&c, 0, sizeof c);
    if (rc == 0)
        rc = cp_collectives_analyse(b->coll, CP_STRAGGLER_MIN_LAG_NS, &c);
    if (rc < 0) {
        cp_ranks_free(r);
        return rc;
    }
    qsort(r->rows, r->nrows, sizeof *r->rows, row_cmp);
    r->collectives = c.matched;
    snprintf(r->unmatched, sizeof r->unmatched, "%s", c.unmatched);
    snprintf(r->partial, sizeof r->partial, "%s", c.partial);
    snprintf(r->matched_by, sizeof r->matched_by, "%s", c.matched_by);
    if (c.not_one_job) {
        const char *host = c.apart_host < r->nhosts ? r->hosts[c.apart_host].name : "";
        snprintf(r->not_one_job, sizeof r->not_one_job,
                 "on host %.64s the ranks' collectives end a median %.3f ms apart (ranks %u "
                 "and %u the farthest, over %u collectives), more than the %.3f ms between one "
                 "collective and the next; one job's collectives end together, so these files "
                 "are not one run of one job (files of two runs without run ids, or a run id copied): "
                 "judge each run's files alone",
                 host, (double)c.apart_median_ns / 1e6, c.apart_ranks[0], c.apart_ranks[1],
                 c.apart_collectives, (double)c.apart_interval_ns / 1e6);
    }
    if (c.nwaits) {
        r->waits = c.waits; /* taken from the result */
        r->nwaits = c.nwaits;
        c.waits = NULL;
        c.nwaits = 0;
    }
    if (c.narrivals) {
        r->arrivals = c.arrivals;
        r->narrivals = c.narrivals;
        c.arrivals = NULL;
        c.narrivals = 0;
    }
    r->median_start_spread_ns = c.median_start_spread_ns;
    r->median_end_spread_ns = c.median_end_spread_ns;
    r->straggler = c.straggler;
    if (c.straggler) {
        r->straggler_rank = (int32_t)c.straggler_rank;
        r->straggler_median_lag_ns = c.straggler_lag_ns;
        r->straggler_mean_lag_ns = c.straggler_mean_lag_ns;
        r->straggler_max_lag_ns = c.straggler_max_lag_ns;
    }
    for (uint32_t h = 0; h < c.hosts && h < r->nhosts; h++) {
        r->hosts[h].aligned = h == 0 || c.hosts_of[h].aligned;
        r->hosts[h].offset_ns = c.hosts_of[h].offset_ns;
        r->hosts[h].residual_ns = c.hosts_of[h].residual_ns;
        r->hosts[h].shared = c.hosts_of[h].shared;
    }
    /* One host is its own reference; of several, a host that has no rank
     * (so no collective) cannot be aligned either. */
    if (r->nhosts)
        r->hosts[0].aligned = true;
    r->all_aligned = true;
    for (size_t h = 0; h < r->nhosts; h++)
        r->all_aligned = r->all_aligned && r->hosts[h].aligned;
    for (uint32_t i = 0; i < c.ranks; i++) {
        const cp_rank_arrival *ar = &c.ranks_of[i];
        cp_rank_row *row = NULL;
        for (size_t k = 0; k < r->nrows && !row; k++)
            if (r->rows[k].rank == (int32_t)ar->rank)
                row = &r->rows[k];
        if (!row)
            continue;
        row->collectives = ar->collectives;
        row->arrived_last = ar->arrived_last;
        row->median_lag_ns = ar->median_lag_ns;
        row->mean_lag_ns = ar->mean_lag_ns;
        row->max_lag_ns = ar->max_lag_ns;
    }
    cp_collectives_result_free(&c);
    *out = r;
    return 0;
}

const cp_rank_row *cp_ranks_row(const cp_ranks *r, int32_t rank)
{
    for (size_t i = 0; r && i < r->nrows; i++)
        if (r->rows[i].rank == rank)
            return &r->rows[i];
    return NULL;
}

void cp_ranks_free(cp_ranks *r)
{
    if (!r)
        return;
    free(r->rows);
    free(r->hosts);
    free(r->waits);
    free(r->arrivals);
    free(r);
}

int cp_placer_record(void *placer, const cp_activity *a)
{
    cp_placer *p = placer;
    if (a->process >= p->nhost_of) {
        size_t n = p->meta->nprocesses > a->process ? p->meta->nprocesses : a->process + 1;
        int rc = host_table(p->meta, &p->host_of, &p->nhost_of, n);
        if (rc < 0)
            return rc;
    }
    uint32_t host = p->host_of[a->process];
    cp_activity placed = *a;
    if (host && cp_activity_is_device_work(a))
        placed.device = a->device + host * CP_HOST_DEVICE_STRIDE;
    int64_t off = p->offsets && host < p->noffsets ? p->offsets[host] : 0;
    if (off) {
        placed.start = (uint64_t)((int64_t)a->start + off);
        placed.end = (uint64_t)((int64_t)a->end + off);
    }
    int rc = p->ranks ? cp_ranks_builder_add(p->ranks, p->meta, &placed) : 0;
    return rc < 0 ? rc : p->next(p->next_ctx, &placed);
}

void cp_placer_free(cp_placer *p)
{
    free(p->host_of);
    p->host_of = NULL;
    p->nhost_of = 0;
}

bool cp_ranks_need_alignment(const cp_ranks *r)
{
    for (size_t h = 1; r && h < r->nhosts; h++)
        if (r->hosts[h].aligned && r->hosts[h].offset_ns != 0)
            return true;
    return false;
}

int64_t *cp_ranks_offsets(const cp_ranks *r)
{
    int64_t *o = calloc(r->nhosts ? r->nhosts : 1, sizeof *o);
    if (!o) {
        cp_failf(CP_ENOMEM, "out of memory for the hosts' offsets");
        return NULL;
    }
    for (size_t h = 0; h < r->nhosts; h++)
        o[h] = r->hosts[h].aligned ? r->hosts[h].offset_ns : 0;
    return o;
}

int cp_ranks_shift_processes(cp_trace *meta, const int64_t *offsets, size_t n)
{
    uint32_t *host = NULL;
    size_t known = 0;
    int rc = host_table(meta, &host, &known, meta->nprocesses);
    for (size_t p = 0; rc == 0 && p < meta->nprocesses; p++) {
        int64_t off = host[p] < n ? offsets[host[p]] : 0;
        meta->processes[p].last_ns = (uint64_t)((int64_t)meta->processes[p].last_ns + off);
    }
    free(host);
    return rc;
}

void cp_ranks_put_metrics(const cp_ranks *r, cp_metrics *m)
{
    m->ranks = (uint32_t)r->nrows;
    m->hosts = (uint32_t)r->nhosts;
    for (size_t h = 0; h < r->nhosts; h++)
        if (r->hosts[h].residual_ns > m->clock_residual_ns)
            m->clock_residual_ns = r->hosts[h].residual_ns;
    m->collectives = r->collectives;
    m->collective_start_spread_ns = r->median_start_spread_ns;
    const cp_rank_row *last = NULL;
    for (size_t i = 0; i < r->nrows; i++)
        if (!last || r->rows[i].arrived_last > last->arrived_last)
            last = &r->rows[i];
    m->straggler_lag_ns = last ? last->median_lag_ns : 0;
    if (!r->straggler || m->nfindings >= CP_MAX_FINDINGS)
        return;
    const cp_rank_row *s = cp_ranks_row(r, r->straggler_rank);
    cp_finding *f = &m->findings[m->nfindings++];
    f->name = "straggler";
    f->count = s ? s->arrived_last : 0;
    snprintf(f->message, sizeof f->message,
             "rank %d arrived last at %u of its %u collectives, by a median %.3f ms; the "
             "others waited %.3f ms for it on average there, %.3f ms at most",
             (int)r->straggler_rank, s ? s->arrived_last : 0, s ? s->collectives : 0,
             (double)r->straggler_median_lag_ns / 1e6, (double)r->straggler_mean_lag_ns / 1e6,
             (double)r->straggler_max_lag_ns / 1e6);
}

bool cp_ranks_incomplete(const cp_ranks *r, char *why, size_t len)
{
    if (!r || !r->missing[0])
        return false;
    snprintf(why, len, "%s", r->missing);
    return true;
}

bool cp_ranks_not_one_job(const cp_ranks *r, char *why, size_t len)
{
    if (!r || !r->not_one_job[0])
        return false;
    snprintf(why, len, "%s", r->not_one_job);
    return true;
}

bool cp_ranks_unmatched(const cp_ranks *r, char *why, size_t len)
{
    if (!r || !r->unmatched[0])
        return false;
    snprintf(why, len, "%s", r->unmatched);
    return true;
}

bool cp_ranks_unaligned(const cp_ranks *r, char *why, size_t len)
{
    if (!r || r->all_aligned)
        return false;
    size_t used = (size_t)snprintf(why, len, "hosts not aligned:");
    for (size_t h = 1; h < r->nhosts && used < len; h++)
        if (!r->hosts[h].aligned)
            used += (size_t)snprintf(why + used, len - used, " %s", r->hosts[h].name);
    if (used < len)
        snprintf(why + used, len - used,
                 " shares no collective with %s, so its clock cannot be put on %s's and a "
                 "figure across hosts would compare clocks that disagree",
                 r->hosts[0].name, r->hosts[0].name);
    return true;
}
