/* Events against the trace (cuproof/agreement.h, docs/DESIGN.md): a run's
 * own CUDA event times paired with its kernel records in launch order. */
#include <cuproof/agreement.h>

#include <cuproof/error.h>
#include <cuproof/stats.h>

#include "api_calls.h"

#include <stdlib.h>
#include <string.h>

/* The start of the last cudaEventRecord call before launch `k`, or 0. */
static uint64_t record_call_start(const cp_trace *t, const cp_activity *k)
{
    const cp_activity *record = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        if (a->kind == CP_ACT_RUNTIME && cp_api_is(a->name, CP_API_EVENT_RECORD) &&
            a->correlation < k->correlation && (!record || a->correlation > record->correlation))
            record = a;
    }
    return record ? record->start : 0;
}

int cp_events_against_trace(const cp_trace *t, const char *kernel, const double *event_ms,
                            size_t n, cp_event_tolerance tol, cp_event_agreement *out)
{
    int rc = 0;
    const cp_activity **k = NULL;
    double *durations = NULL;
    if (!out)
        return cp_failf(CP_EINVAL, "no result to fill");
    memset(out, 0, sizeof *out);
    if (!t || !kernel || (n && !event_ms))
        return cp_failf(CP_EINVAL, "events against trace: missing trace, kernel or events");
    size_t found = 0;
    for (size_t i = 0; i < t->n; i++)
        found += t->items[i].kind == CP_ACT_KERNEL && t->items[i].name &&
                 strcmp(t->items[i].name, kernel) == 0;
    if (found != n)
        return cp_failf(CP_EINVAL, "the trace holds %zu launches of %s but %zu event times",
                        found, kernel, n);
    if (n == 0)
        return 0;
    k = malloc(n * sizeof *k);
    durations = malloc(n * sizeof *durations);
    if (!k || !durations) {
        rc = cp_failf(CP_ENOMEM, "out of memory pairing events with kernels");
        goto out;
    }
    for (size_t i = 0, j = 0; i < t->n; i++)
        if (t->items[i].kind == CP_ACT_KERNEL && t->items[i].name &&
            strcmp(t->items[i].name, kernel) == 0)
            k[j++] = &t->items[i];
    qsort(k, n, sizeof *k, cp_activity_ptr_cmp_correlation);

    double excess_sum = 0;
    out->launches = n;
    out->worst_short_ms = -1e300;
    out->max_excess_ms = -1e300;
    for (size_t i = 0; i < n; i++) {
        double kernel_ms = (double)(k[i]->end - k[i]->start) / 1e6;
        double allowed = tol.abs_ms + tol.rel * kernel_ms;
        double excess = event_ms[i] - kernel_ms;
        durations[i] = kernel_ms;
        excess_sum += excess;
        if (excess > out->max_excess_ms)
            out->max_excess_ms = excess;
        if (-excess > out->worst_short_ms)
            out->worst_short_ms = -excess;
        uint64_t issued = record_call_start(t, k[i]);
        if (issued && issued <= k[i]->start) {
            double wait = (double)(k[i]->start - issued) / 1e6;
            if (wait > out->max_host_wait_ms)
                out->max_host_wait_ms = wait;
            if (event_ms[i] <= (double)(k[i]->end - issued) / 1e6 + allowed)
                out->host_bounded++;
        }
        if (excess < -allowed) {
            out->too_short++;
        } else if (excess <= allowed) {
            out->agreeing++;
        } else {
            out->waited++;
        }
    }
    out->mean_excess_ms = excess_sum / (double)n;
    cp_mean_std(durations, n, &out->kernel_mean_ms, &out->kernel_std_ms);
    cp_mean_std(event_ms, n, &out->event_mean_ms, &out->event_std_ms);
out:
    free(k);
    free(durations);
    return rc;
}
