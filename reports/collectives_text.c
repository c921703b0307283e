/* The terminal's per-collective table (cuproof/metrics.h,
 * cp_collective_row): a line per NCCL operation, algorithm and protocol
 * with its kernels, their device time, the median of one and the part of
 * it no compute kernel ran beside (exposed); where NCCL's own account was
 * recorded, the messages' size and the bus bandwidth ("-" for a row not
 * every kernel of which had them). The commands print it; the words are
 * here, in the library. */
#include <cuproof/internal/report.h>
#include <cuproof/units.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

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
        char total[32], median[32], exposed[32];
        fprintf(f, "%s  %-16s %-14s %-6s %8u %12s %12s %12s %7.1f%%", indent, r->op,
                r->algo[0] ? r->algo : "-", r->proto[0] ? r->proto : "-", r->count,
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
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
