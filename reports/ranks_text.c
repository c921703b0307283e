/* The terminal's table of a distributed program's ranks (cuproof/internal/ranks.h)
 * that `cuproof exec` leads its summary with: a line per rank with its own
 * figures, then the straggler and any host whose clock could not be
 * aligned. The command prints it; the words are here, in the library. */
#include <cuproof/internal/report.h>
#include <cuproof/units.h>

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A rank's devices, "0,1" (and "+N" for those past the ones listed); "-"
 * for none. */
static void devices_text(const cp_rank_row *w, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    uint32_t listed = w->ndevices < CP_RANK_MAX_DEVICES ? w->ndevices : CP_RANK_MAX_DEVICES;
    for (uint32_t k = 0; k < listed && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s%u", k ? "," : "", w->devices[k]);
    if (w->ndevices > listed && used < size)
        snprintf(buf + used, size - used, ",+%u", w->ndevices - listed);
    if (!w->ndevices)
        snprintf(buf, size, "-");
}

static const char *host_name(const cp_ranks *r, uint32_t host)
{
    return host < r->nhosts ? r->hosts[host].name : "?";
}

/* The widths of the host and devices columns: their longest entry. */
static void widths(const cp_ranks *r, int *host_w, int *dev_w)
{
    *host_w = 4;
    *dev_w = 7;
    for (size_t i = 0; i < r->nrows; i++) {
        char d[128];
        devices_text(&r->rows[i], d, sizeof d);
        int h = (int)strlen(host_name(r, r->rows[i].host));
        *host_w = h > *host_w ? h : *host_w;
        *dev_w = (int)strlen(d) > *dev_w ? (int)strlen(d) : *dev_w;
    }
}

static void row_text(FILE *f, const cp_ranks *r, const cp_rank_row *w, const char *indent,
                     int host_w, int dev_w)
{
    char d[128], last[32];
    devices_text(w, d, sizeof d);
    snprintf(last, sizeof last, "%u/%u", w->arrived_last, w->collectives);
    fprintf(f, "%s%4d  %-*s  %-*s  %9.3f  %5.1f%%  %11.1f%%  %11.1f%%  %12s%s\n", indent,
            (int)w->rank, host_w, host_name(r, w->host), dev_w, d, (double)w->busy_ns / 1e6,
            w->idle_share * 100, w->comm_compute_overlap_ratio * 100,
            w->exposed_comm_share * 100, last,
            r->straggler && w->rank == r->straggler_rank ? "  straggler" : "");
}

/* The straggler's line, and a line per host after the first: the offset
 * put on its clock, or that it stayed its own. */
static void after_table(FILE *f, const cp_ranks *r, const char *indent)
{
    const cp_rank_row *s = r->straggler ? cp_ranks_row(r, r->straggler_rank) : NULL;
    char mean[32], median[32], most[32], offset[32], residual[32];
    if (r->straggler)
        fprintf(f, "%sstraggler: rank %d%s%s%s arrived last at %u of %u collectives; lag mean "
                   "%s, median %s, most %s\n",
                indent, (int)r->straggler_rank, s ? " (" : "", s ? host_name(r, s->host) : "",
                s ? ")" : "", s ? s->arrived_last : 0, s ? s->collectives : r->collectives,
                cp_fmt_ms((double)r->straggler_mean_lag_ns / 1e6, mean, sizeof mean),
                cp_fmt_ms((double)r->straggler_median_lag_ns / 1e6, median, sizeof median),
                cp_fmt_ms((double)r->straggler_max_lag_ns / 1e6, most, sizeof most));
    for (size_t i = 0; i < r->nwaits; i++) {
        const cp_collective_wait *w = &r->waits[i];
        char wait[32], transfer[32], label[64];
        uint64_t all = w->wait_ns + w->transfer_ns;
        cp_collective_label(w->op, w->algo, w->proto, label, sizeof label);
        fprintf(f, "%s%s: %u matched; the ranks' kernels waited %s for the last rank "
                   "(%.1f%%), transferred %s\n",
                indent, label, w->matched, cp_fmt_ms((double)w->wait_ns / 1e6, wait, sizeof wait),
                all ? 100.0 * (double)w->wait_ns / (double)all : 0.0,
                cp_fmt_ms((double)w->transfer_ns / 1e6, transfer, sizeof transfer));
    }
    if (r->missing[0])
        fprintf(f, "%smissing: %s\n", indent, r->missing);
    if (r->not_one_job[0])
        fprintf(f, "%snot one job: %s\n", indent, r->not_one_job);
    if (r->unmatched[0])
        fprintf(f, "%snot matched: %s; no figure across ranks is given\n", indent,
                r->unmatched);
    else if (r->partial[0])
        fprintf(f, "%swarning: %s\n", indent, r->partial);
    for (size_t h = 1; h < r->nhosts; h++)
        if (!r->hosts[h].aligned && r->unmatched[0])
            fprintf(f, "%shost %s: clock not aligned (its collectives could not be matched); its "
                       "ranks' times are on its own clock\n",
                    indent, r->hosts[h].name);
        else if (!r->hosts[h].aligned)
            fprintf(f, "%shost %s: clock not aligned (it shares no collective with %s); its "
                       "ranks' times are on its own clock\n",
                    indent, r->hosts[h].name, r->hosts[0].name);
        else
            fprintf(f, "%shost %s: clock put on %s's by %s%s (residual %s over %u "
                       "collectives)\n",
                    indent, r->hosts[h].name, r->hosts[0].name,
                    r->hosts[h].offset_ns < 0 ? "-" : "+",
                    cp_fmt_ms(fabs((double)r->hosts[h].offset_ns) / 1e6, offset, sizeof offset),
                    cp_fmt_ms((double)r->hosts[h].residual_ns / 1e6, residual, sizeof residual),
                    r->hosts[h].shared);
}

char *cp_ranks_text(const cp_ranks *r, const char *indent)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    int host_w, dev_w;
    widths(r, &host_w, &dev_w);
    fprintf(f, "%sranks: %zu on %zu host%s, %u collective%s matched%s%s%s\n", indent, r->nrows,
            r->nhosts, r->nhosts == 1 ? "" : "s", r->collectives, r->collectives == 1 ? "" : "s",
            r->matched_by[0] ? " (" : "", r->matched_by, r->matched_by[0] ? ")" : "");
    fprintf(f, "%s%4s  %-*s  %-*s  %9s  %6s  %12s  %12s  %12s\n", indent, "rank", host_w, "host",
            dev_w, "devices", "busy ms", "idle", "comm/compute", "exposed comm", "arrived last");
    for (size_t i = 0; i < r->nrows; i++)
        row_text(f, r, &r->rows[i], indent, host_w, dev_w);
    after_table(f, r, indent);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
