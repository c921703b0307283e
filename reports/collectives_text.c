/* The terminal's per-collective table (cuproof/metrics.h,
 * cp_collective_row): a line per NCCL operation, algorithm and protocol
 * with its kernels, their device time, the median of one and the part of
 * it no compute kernel ran beside (exposed); where NCCL's own account was
 * recorded, the messages' size and the bus bandwidth ("-" for a row not
 * every kernel of which had them), then the same by message-size bucket
 * (collective_size_rows). The commands print it; the words are here, in
 * the library. */
#include <cuproof/internal/report.h>
#include <cuproof/units.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A power of two of bytes exactly: "256 KiB", "1 MiB". */
static void pow2_bytes(uint64_t v, char *out, size_t size)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    while (u + 1 < sizeof unit / sizeof unit[0] && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    snprintf(out, size, "%llu %s", (unsigned long long)v, unit[u]);
}

/* One row's cells after its name: kernels, times, exposed share, and
 * where `sized`, the messages and bus bandwidth ("-" where not every
 * kernel had them). */
static void row_cells(FILE *f, const cp_collective_row *r, bool sized)
{
    char total[32], median[32], exposed[32];
    fprintf(f, " %8u %12s %12s %12s %7.1f%%", r->count,
            cp_fmt_ms((double)r->total_ns / 1e6, total, sizeof total),
            cp_fmt_ms((double)r->median_ns / 1e6, median, sizeof median),
            cp_fmt_ms((double)r->exposed_ns / 1e6, exposed, sizeof exposed),
            r->total_ns ? 100.0 * (double)r->exposed_ns / (double)r->total_ns : 0.0);
    if (sized) {
        char bytes[32] = "-", bus[32] = "-";
        uint64_t n = 0;
        double alg = 0, busbw = 0;
        if (cp_collective_row_bytes(r, &n))
            cp_fmt_bytes((double)n, bytes, sizeof bytes);
        if (cp_collective_row_bandwidth(r, &alg, &busbw))
            snprintf(bus, sizeof bus, "%.3g", busbw);
        fprintf(f, " %12s %11s", bytes, bus);
    }
    fputc('\n', f);
}

char *cp_collectives_text(const cp_metrics *m, const char *indent)
{
    if (!m->ncollective_rows)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    fprintf(f, "%scollectives (NCCL's kernels by operation, algorithm and protocol; exposed: "
               "no compute kernel beside them on their device):\n",
            indent);
    bool sized = false;
    for (size_t i = 0; i < m->ncollective_rows; i++)
        sized |= m->collective_rows[i].sized > 0;
    fprintf(f, "%s  %-16s %-14s %-6s %8s %12s %12s %12s %8s", indent, "operation", "algorithm",
            "proto", "kernels", "total", "median", "exposed", "exposed%");
    if (sized)
        fprintf(f, " %12s %11s", "messages", "busbw GB/s");
    fputc('\n', f);
    for (size_t i = 0; i < m->ncollective_rows; i++) {
        const cp_collective_row *r = &m->collective_rows[i];
        fprintf(f, "%s  %-16s %-14s %-6s", indent, r->op, r->algo[0] ? r->algo : "-",
                r->proto[0] ? r->proto : "-");
        row_cells(f, r, sized);
    }
    /* By message size: the kernels whose call's size is known. */
    if (m->ncollective_size_rows) {
        fprintf(f, "%sby message size (a call's, in powers of two; the kernels whose call was "
                   "recorded):\n",
                indent);
        fprintf(f, "%s  %-16s %-14s %-6s %-17s %8s %12s %12s %12s %8s %12s %11s\n", indent,
                "operation", "algorithm", "proto", "message", "kernels", "total", "median",
                "exposed", "exposed%", "messages", "busbw GB/s");
        for (size_t i = 0; i < m->ncollective_size_rows; i++) {
            const cp_collective_row *r = &m->collective_size_rows[i];
            char lo[24], hi[24], range[56];
            pow2_bytes(r->size_lo, lo, sizeof lo);
            pow2_bytes(r->size_hi, hi, sizeof hi);
            snprintf(range, sizeof range, "%s-%s", lo, hi);
            fprintf(f, "%s  %-16s %-14s %-6s %-17s", indent, r->op, r->algo[0] ? r->algo : "-",
                    r->proto[0] ? r->proto : "-", range);
            row_cells(f, r, true);
        }
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
