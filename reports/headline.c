/* Headlines and the number formats people read (reports/headline.h). */
#include "headline.h"

#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Three significant digits: as many decimals as the magnitude leaves. */
static int decimals(double v)
{
    int d = 2 - (int)floor(log10(v));
    return d < 0 ? 0 : d > 3 ? 3 : d;
}

char *cp_format_ms(double ms, char *buf, size_t size)
{
    static const struct {
        double per_ms;
        const char *unit;
    } units[] = {{1e6, "ns"}, {1e3, "µs"}, {1, "ms"}, {1e-3, "s"}};
    if (!isfinite(ms) || ms < 0) {
        snprintf(buf, size, "-");
        return buf;
    }
    if (ms == 0) {
        snprintf(buf, size, "0 ms");
        return buf;
    }
    size_t u = 0;
    /* The largest unit in which the value is at least 1, after rounding
     * to three digits (999.96 µs reads 1.00 ms, not 1000 µs). */
    while (u + 1 < sizeof units / sizeof units[0] && ms * units[u + 1].per_ms >= 0.9995)
        u++;
    double v = ms * units[u].per_ms;
    snprintf(buf, size, "%.*f %s", decimals(fmax(v, 1)), v, units[u].unit);
    return buf;
}

char *cp_format_percent(double ratio, char *buf, size_t size)
{
    double p = 100 * ratio;
    if (!isfinite(p))
        snprintf(buf, size, "-");
    else if (p <= 0)
        snprintf(buf, size, "0%%");
    else if (p < 0.01)
        snprintf(buf, size, "under 0.01%%");
    else
        snprintf(buf, size, "%.*f%%", p >= 10 ? 0 : p >= 1 ? 1 : 2, p);
    return buf;
}

/* An appending writer that keeps the length it wanted, as snprintf. */
typedef struct line {
    char *buf;
    size_t size, len;
} line;

static void add(line *l, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void add(line *l, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    size_t at = l->len < l->size ? l->len : (l->size ? l->size - 1 : 0);
    int n = vsnprintf(l->size ? l->buf + at : NULL, l->size ? l->size - at : 0, f, ap);
    va_end(ap);
    if (n > 0)
        l->len += (size_t)n;
}

/* A claim's or check's text, cut to `max` characters with an ellipsis. */
static const char *cut(const char *s, char *out, size_t max)
{
    size_t n = strlen(s);
    if (n <= max) {
        snprintf(out, max + 1, "%s", s);
        return out;
    }
    snprintf(out, max + 4, "%.*s…", (int)(max - 1), s);
    return out;
}

static void not_passed(line *l, const cp_case_result *c)
{
    if (c->status == CP_STATUS_SKIPPED) {
        add(l, "Skipped: %s.", c->skip_reason[0] ? c->skip_reason : "no reason given");
        return;
    }
    if (c->status == CP_STATUS_INCONCLUSIVE) {
        add(l, "Inconclusive: %s.", c->skip_reason);
        return;
    }
    if (c->error[0]) {
        add(l, "Failed: %s.", c->error);
        return;
    }
    size_t failed = 0;
    const cp_check_result *first = NULL;
    for (size_t i = 0; i < c->nchecks; i++)
        if (c->checks[i].status == CP_CHECK_FAILED) {
            failed++;
            first = first ? first : &c->checks[i];
        }
    if (!first) {
        add(l, "Failed.");
        return;
    }
    char name[100];
    add(l, "Failed: %zu of %zu checks, first \"%s\": expected %s, measured %s.", failed,
        c->nchecks, cut(first->name, name, 96), first->expected, first->measured);
}

static bool timed(const cp_variant_result *v)
{
    return v->ran && v->timing.median_ms > 0;
}

static const cp_variant_result *find_variant(const cp_case_result *c, const char *name)
{
    for (size_t i = 0; i < c->nvariants; i++)
        if (!strcmp(c->variants[i].name, name))
            return &c->variants[i];
    return NULL;
}

/* The ratio as people say it: more digits where it is small. */
static void times(line *l, double x)
{
    add(l, "%.*f×", x < 10 ? 2 : x < 100 ? 1 : 0, x);
}

/* Speed. Against the case's baseline when its variants do the same work:
 * the fastest other variant's ratio to it. Otherwise a ratio would compare
 * different work (one board against 64), so only the range of times is
 * given. */
static void speed(line *l, const cp_case_result *c)
{
    const cp_variant_result *base = c->baseline[0] ? find_variant(c, c->baseline) : NULL;
    const cp_variant_result *fast = NULL, *slow = NULL, *best_other = NULL;
    size_t ntimed = 0;
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_variant_result *v = &c->variants[i];
        if (!timed(v))
            continue;
        ntimed++;
        if (!fast || v->timing.median_ms < fast->timing.median_ms)
            fast = v;
        if (!slow || v->timing.median_ms > slow->timing.median_ms)
            slow = v;
        if (v != base && (!best_other || v->timing.median_ms < best_other->timing.median_ms))
            best_other = v;
    }
    char a[32], b[32];
    if (!fast)
        return;
    if (ntimed == 1) {
        add(l, " %s took %s.", fast->name, cp_format_ms(fast->timing.median_ms, a, sizeof a));
        return;
    }
    if (base && timed(base) && best_other) {
        double mb = base->timing.median_ms, mo = best_other->timing.median_ms;
        /* Within 3% a ratio says more than the medians know ("1.00x
         * faster"): said as the same time. */
        if (fmax(mb, mo) / fmin(mb, mo) < 1.03) {
            add(l, " %s took about the same time as %s (%s against %s).", best_other->name,
                base->name, cp_format_ms(mo, a, sizeof a), cp_format_ms(mb, b, sizeof b));
        } else if (mo < mb) {
            add(l, " %s ran ", best_other->name);
            times(l, mb / mo);
            add(l, " faster than %s (%s against %s).", base->name, cp_format_ms(mo, a, sizeof a),
                cp_format_ms(mb, b, sizeof b));
        } else {
            add(l, " No variant beat %s: the fastest other, %s, took ", base->name,
                best_other->name);
            times(l, mo / mb);
            add(l, " its time (%s against %s).", cp_format_ms(mo, a, sizeof a),
                cp_format_ms(mb, b, sizeof b));
        }
        return;
    }
    add(l, " Medians from %s (%s) to %s (%s).", cp_format_ms(fast->timing.median_ms, a, sizeof a),
        fast->name, cp_format_ms(slow->timing.median_ms, b, sizeof b), slow->name);
}

/* The traced variants' overlap and concurrency at their best. */
static void trace(line *l, const cp_case_result *c)
{
    const cp_variant_result *overlap = NULL, *peak = NULL;
    bool several_kernels = false, lanes = false;
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_variant_result *v = &c->variants[i];
        if (!v->traced)
            continue;
        const cp_metrics *m = &v->metrics;
        several_kernels |= m->kernels > 1;
        lanes |= m->nlanes > 1;
        if (m->copies && m->kernels &&
            (!overlap || m->copy_kernel_overlap_ratio > overlap->metrics.copy_kernel_overlap_ratio))
            overlap = v;
        if (!peak || m->peak_concurrent_kernels > peak->metrics.peak_concurrent_kernels)
            peak = v;
    }
    /* With one lane of work nothing could overlap: saying it did not
     * would be noise. */
    if (!lanes)
        return;
    char pct[24];
    if (overlap && overlap->metrics.copy_kernel_overlap_ratio > 0)
        add(l, " Copies overlapped kernels for %s of copy time (%s)",
            cp_format_percent(overlap->metrics.copy_kernel_overlap_ratio, pct, sizeof pct),
            overlap->name);
    else if (overlap)
        add(l, " No copy overlapped a kernel");
    if (peak && peak->metrics.peak_concurrent_kernels > 1)
        add(l, "%s %u kernels ran at once (%s).", overlap ? "; up to" : " Up to",
            peak->metrics.peak_concurrent_kernels, peak->name);
    else if (several_kernels)
        add(l, "%s.", overlap ? "; no two kernels ever ran at once" : " No two kernels ever ran at once");
    else if (overlap)
        add(l, ".");
}

/* The source's claims: their verdicts, and one of them in full (a refuted
 * one first: it is the news). */
static void claims(line *l, const cp_case_result *c)
{
    size_t counts[3] = {0};
    const cp_claim_result *shown = NULL;
    for (size_t i = 0; i < c->nclaims; i++) {
        const cp_claim_result *k = &c->claims[i];
        if ((unsigned)k->verdict < 3)
            counts[k->verdict]++;
        if (k->verdict == CP_VERDICT_REFUTED && (!shown || shown->verdict != CP_VERDICT_REFUTED))
            shown = k;
        else if (k->verdict == CP_VERDICT_CONFIRMED && !shown)
            shown = k;
    }
    char text[100];
    if (!shown) {
        if (c->nclaims)
            add(l, " The source's claim%s could not be measured here.", c->nclaims > 1 ? "s" : "");
        return;
    }
    if (c->nclaims == 1) {
        add(l, " Source's claim \"%s\": %s (measured %s).", cut(shown->text, text, 96),
            cp_verdict_name(shown->verdict), shown->measured);
        return;
    }
    add(l, " Source's claims: %zu confirmed, %zu refuted", counts[CP_VERDICT_CONFIRMED],
        counts[CP_VERDICT_REFUTED]);
    if (counts[CP_VERDICT_NOT_MEASURED])
        add(l, ", %zu not measured", counts[CP_VERDICT_NOT_MEASURED]);
    add(l, "; \"%s\": %s (measured %s).", cut(shown->text, text, 96),
        cp_verdict_name(shown->verdict), shown->measured);
}

size_t cp_case_headline(const cp_case_result *c, char *buf, size_t size)
{
    line l = {buf, size, 0};
    if (size)
        buf[0] = '\0';
    if (c->status != CP_STATUS_PASSED) {
        not_passed(&l, c);
        return l.len;
    }
    size_t passed = 0;
    for (size_t i = 0; i < c->nchecks; i++)
        passed += c->checks[i].status == CP_CHECK_PASSED;
    add(&l, "%s %zu checks passed%s.", passed == c->nchecks ? "All" : "Passed:", passed,
        passed == c->nchecks ? "" : " (the others were skipped)");
    speed(&l, c);
    trace(&l, c);
    claims(&l, c);
    return l.len;
}
