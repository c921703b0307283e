/* Headlines and the number formats people read (reports/headline.h). */
#include "headline.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    char measured[sizeof first->measured];
    add(l, "Failed: %zu of %zu %s, first \"%s\": expected %s, measured %s.", failed,
        c->nchecks, cp_unit_agree("checks", (double)c->nchecks), cut(first->name, name, 96),
        first->expected, cp_fmt_measured(first->measured, measured, sizeof measured));
}

static bool timed(const cp_variant_result *v)
{
    return v->ran && v->timing.median_ms > 0;
}

/* The fastest variant other than the baseline, against the baseline, when
 * the case has one that ran and was timed: what "N× faster" compares. */
static bool against_baseline(const cp_case_result *c, const cp_variant_result **base,
                             const cp_variant_result **other)
{
    *base = c->baseline[0] ? cp_case_variant(c, c->baseline) : NULL;
    *other = NULL;
    if (!*base || !timed(*base))
        return false;
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_variant_result *v = &c->variants[i];
        if (v != *base && timed(v) && (!*other || v->timing.median_ms < (*other)->timing.median_ms))
            *other = v;
    }
    return *other != NULL;
}

/* Speed. Against the case's baseline when its variants do the same work:
 * the fastest other variant's ratio to it; a case of one timed variant
 * gives its time. Otherwise a ratio would compare different work (one
 * board against 64), and so would a range of times across the variants:
 * nothing is said here (returns false) and the headline names another
 * fact. */
static bool speed(line *l, const cp_case_result *c)
{
    const cp_variant_result *base, *best_other, *only = NULL;
    size_t ntimed = 0;
    for (size_t i = 0; i < c->nvariants; i++)
        if (timed(&c->variants[i])) {
            ntimed++;
            only = &c->variants[i];
        }
    char a[32], b[32];
    if (ntimed == 1) {
        add(l, " %s took %s.", only->name, cp_fmt_ms(only->timing.median_ms, a, sizeof a));
        return true;
    }
    if (!against_baseline(c, &base, &best_other))
        return false;
    double mb = base->timing.median_ms, mo = best_other->timing.median_ms;
    char x[32];
    /* Within 3% a ratio says more than the medians know ("1.00x
     * faster"): said as the same time. The ratio is of the times shown,
     * so that a reader can recompute it (cuproof/units.h). */
    if (fmax(mb, mo) / fmin(mb, mo) < 1.03) {
        add(l, " %s took about the same time as %s (%s against %s).", best_other->name,
            base->name, cp_fmt_ms(mo, a, sizeof a), cp_fmt_ms(mb, b, sizeof b));
    } else if (mo < mb) {
        cp_fmt_ratio_of(mb, mo, x, sizeof x, b, a, sizeof a);
        add(l, " %s ran %s faster than %s (%s against %s).", best_other->name, x, base->name, a,
            b);
    } else {
        cp_fmt_ratio_of(mo, mb, x, sizeof x, a, b, sizeof a);
        add(l, " No variant beat %s: the fastest other, %s, took %s its time (%s against %s).",
            base->name, best_other->name, x, a, b);
    }
    return true;
}

/* A case with neither a baseline nor overlap to speak of, nor a claim of
 * its source decided: the one measured fact that tells most. The check
 * its claim rests on (an essential one) was declared the point of the
 * case; without one, the slowest variant's time. */
static void telling_fact(line *l, const cp_case_result *c)
{
    char name[100];
    for (size_t i = 0; i < c->nchecks; i++) {
        const cp_check_result *k = &c->checks[i];
        if (k->essential && k->status == CP_CHECK_PASSED && k->measured[0]) {
            char measured[sizeof k->measured];
            add(l, " Its essential check, \"%s\", measured %s.", cut(k->name, name, 96),
                cp_fmt_measured(k->measured, measured, sizeof measured));
            return;
        }
    }
    const cp_variant_result *slow = NULL;
    size_t ntimed = 0;
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_variant_result *v = &c->variants[i];
        if (!timed(v))
            continue;
        ntimed++;
        if (!slow || v->timing.median_ms > slow->timing.median_ms)
            slow = v;
    }
    char t[32];
    if (slow)
        add(l, " The slowest of its %zu variants, %s, took %s.", ntimed, slow->name,
            cp_fmt_ms(slow->timing.median_ms, t, sizeof t));
}

/* The traced variants' overlap and concurrency at their best. Returns
 * whether it said anything. */
static bool trace(line *l, const cp_case_result *c)
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
        return false;
    size_t at = l->len;
    char pct[24];
    if (overlap && overlap->metrics.copy_kernel_overlap_ratio > 0)
        add(l, " Copies overlapped kernels for %s of copy time (%s)",
            cp_fmt_percent(overlap->metrics.copy_kernel_overlap_ratio, pct, sizeof pct),
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
    return l->len > at;
}

/* The source's claims: their verdicts, and one of them in full (a refuted
 * one first: it is the news; then one that fell short or exceeded its
 * window, then a confirmed one). */
static void claims(line *l, const cp_case_result *c)
{
    /* In the order they are said, the news first. */
    static const cp_verdict order[] = {CP_VERDICT_REFUTED, CP_VERDICT_FELL_SHORT,
                                       CP_VERDICT_EXCEEDED, CP_VERDICT_CONFIRMED,
                                       CP_VERDICT_NOT_MEASURED};
    enum { NORDER = sizeof order / sizeof order[0] };
    size_t counts[NORDER] = {0};
    const cp_claim_result *shown = NULL;
    size_t shown_rank = NORDER - 1;
    for (size_t i = 0; i < c->nclaims; i++) {
        const cp_claim_result *k = &c->claims[i];
        for (size_t r = 0; r < NORDER; r++)
            if (order[r] == k->verdict) {
                counts[r]++;
                if (r < shown_rank) {
                    shown = k;
                    shown_rank = r;
                }
            }
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
    add(l, " Source's claims:");
    bool first = true;
    for (size_t r = 0; r < NORDER; r++)
        if (counts[r]) {
            add(l, "%s %zu %s", first ? "" : ",", counts[r], cp_verdict_name(order[r]));
            first = false;
        }
    add(l, "; \"%s\": %s (measured %s).", cut(shown->text, text, 96),
        cp_verdict_name(shown->verdict), shown->measured);
}

static double largest_ratio(const char *s);

/* The claim the headline says in full: a refuted one first (it is the
 * news), then one that fell short or exceeded its window, then a
 * confirmed one; NULL when none was measured. */
static const cp_claim_result *shown_claim(const cp_case_result *c)
{
    static const cp_verdict order[] = {CP_VERDICT_REFUTED, CP_VERDICT_FELL_SHORT,
                                       CP_VERDICT_EXCEEDED, CP_VERDICT_CONFIRMED};
    for (size_t r = 0; r < sizeof order / sizeof order[0]; r++)
        for (size_t i = 0; i < c->nclaims; i++)
            if (c->claims[i].verdict == order[r])
                return &c->claims[i];
    return NULL;
}

/* Whether the claim the headline says measured a ratio ("43.0×"). */
static bool claim_ratio(const cp_case_result *c)
{
    const cp_claim_result *k = shown_claim(c);
    return k && largest_ratio(k->measured) > 0;
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
    /* "Its 1 check passed", never "All 1 checks". */
    add(&l, "%s %zu %s passed%s.",
        passed == c->nchecks ? (passed == 1 ? "Its" : "All") : "Passed:", passed,
        cp_unit_agree("checks", (double)passed),
        passed == c->nchecks ? "" : " (the others were skipped)");
    /* One speedup figure per headline: when the claim it ends with
     * measured a ratio, that is the figure, and the baseline's is not
     * said beside it. */
    bool said = claim_ratio(c) ? false : speed(&l, c);
    said = trace(&l, c) || said;
    for (size_t i = 0; !said && i < c->nclaims; i++)
        said = c->claims[i].verdict != CP_VERDICT_NOT_MEASURED;
    if (!said)
        telling_fact(&l, c);
    claims(&l, c);
    return l.len;
}

/* ---- the report's key findings ---- */

/* What a check declares about overlap: a check whose name or expectation
 * reads "copy_kernel_overlap_ratio > X" or "peak_concurrent_kernels > X"
 * (or "peak concurrent kernels > X", as a case's own check words it) and
 * whose name starts with one of the case's variants ("VARIANT: ...", or
 * any name in a case of one variant, as a traced program's are). A
 * check of "== 0" or "== 1" declares the opposite (a serialised control)
 * and is not one. The numbers said are the variant's metrics, the ones
 * the report's tables show; the check only says what was wanted. */
typedef struct declared {
    const cp_check_result *check;
    const cp_variant_result *variant;
    bool ratio;  /* copy/kernel overlap ratio, else peak concurrent kernels */
    double want; /* the bound after ">" */
} declared;

static bool bound_after(const char *s, const char *metric, double *want)
{
    const char *p = strstr(s, metric);
    if (!p)
        return false;
    p += strlen(metric);
    while (*p == ' ')
        p++;
    if (*p++ != '>')
        return false;
    if (*p == '=')
        p++;
    char *end;
    *want = strtod(p, &end);
    return end != p && isfinite(*want);
}

static bool declares(const cp_case_result *c, const cp_check_result *k, declared *d)
{
    static const struct {
        const char *text;
        bool ratio;
    } metrics[] = {{"copy_kernel_overlap_ratio", true},
                   {"peak_concurrent_kernels", false},
                   {"peak concurrent kernels", false}};
    const char *colon = strstr(k->name, ": ");
    d->variant = NULL;
    for (size_t i = 0; colon && i < c->nvariants; i++)
        if (strlen(c->variants[i].name) == (size_t)(colon - k->name) &&
            !strncmp(c->variants[i].name, k->name, (size_t)(colon - k->name)))
            d->variant = &c->variants[i];
    /* A traced program (cuproof exec) is one variant, and its
     * expectations name none. */
    if (!d->variant && c->nvariants == 1)
        d->variant = &c->variants[0];
    if (!d->variant)
        return false;
    for (size_t m = 0; m < sizeof metrics / sizeof metrics[0]; m++)
        if (bound_after(k->name, metrics[m].text, &d->want) ||
            bound_after(k->expected, metrics[m].text, &d->want)) {
            d->check = k;
            d->ratio = metrics[m].ratio;
            return true;
        }
    return false;
}

/* One declared check's numbers: "copies overlapped kernels for 72% of copy
 * time in streams-pinned (wanted over 50%)" or "up to 64 kernels ran at
 * once in depth-first (wanted more than 1)"; a ratio after another one
 * (`again`) as ", 68% in graph (wanted over 30%)". */
static void declared_fact(line *l, const declared *d, bool again)
{
    const cp_metrics *m = &d->variant->metrics;
    char a[24], b[24];
    if (!d->variant->traced) {
        add(l, "%s%s not traced", again ? ", " : "", d->variant->name);
    } else if (d->ratio) {
        add(l, "%s%s%s in %s (wanted over %s)", again ? ", " : "copies overlapped kernels for ",
            cp_fmt_percent(m->copy_kernel_overlap_ratio, a, sizeof a),
            again ? "" : " of copy time", d->variant->name,
            cp_fmt_percent(d->want, b, sizeof b));
    } else {
        add(l, "%s%s %u kernel%s ran at once in %s (wanted more than %g)", again ? "; " : "",
            m->peak_concurrent_kernels > d->want ? "up to" : "at most",
            m->peak_concurrent_kernels, m->peak_concurrent_kernels == 1 ? "" : "s",
            d->variant->name, d->want);
    }
}

/* The overlap a case declared: achieved (every declared check passed),
 * missed (one failed: the failed ones are named) or not measured (all
 * skipped). Returns false when the case declares none. */
static bool overlap_finding(line *l, const cp_case_result *c)
{
    size_t n[3] = {0}; /* by cp_check_status */
    bool ratio = false, peak = false;
    declared d;
    for (size_t i = 0; i < c->nchecks; i++)
        if (declares(c, &c->checks[i], &d) && (unsigned)d.check->status < 3) {
            n[d.check->status]++;
            ratio |= d.ratio;
            peak |= !d.ratio;
        }
    if (!n[0] && !n[1] && !n[2])
        return false;
    const char *what = ratio && peak ? "copy/kernel overlap and kernel concurrency"
                       : ratio       ? "copy/kernel overlap"
                                     : "kernel concurrency";
    cp_check_status shown = n[CP_CHECK_FAILED] ? CP_CHECK_FAILED
                            : n[CP_CHECK_PASSED] ? CP_CHECK_PASSED
                                                 : CP_CHECK_SKIPPED;
    add(l, "%s %s: ", what,
        shown == CP_CHECK_FAILED ? "missed" : shown == CP_CHECK_PASSED ? "achieved" : "not measured");
    if (shown == CP_CHECK_SKIPPED) {
        add(l, "its %zu check%s could not be made.", n[2], n[2] == 1 ? "" : "s");
        return true;
    }
    /* The ratios one by one (a case declares one or two), those its claim
     * rests on (essential) first; then the peaks one by one when missed,
     * else the highest with how many variants reached theirs. */
    size_t said = 0, peaks = 0;
    declared top = {0};
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = 0; i < c->nchecks; i++) {
            if (!declares(c, &c->checks[i], &d) || d.check->status != shown ||
                d.ratio != (pass < 2) || (pass < 2 && d.check->essential != (pass == 0)))
                continue;
            if (!d.ratio && shown == CP_CHECK_PASSED) {
                peaks++;
                if (!top.variant || d.variant->metrics.peak_concurrent_kernels >
                                        top.variant->metrics.peak_concurrent_kernels)
                    top = d;
                continue;
            }
            declared_fact(l, &d, said++ > 0);
        }
    if (top.variant) {
        declared_fact(l, &top, said++ > 0);
        if (peaks > 1)
            add(l, "; %zu variants were meant to run kernels at once, and did", peaks);
    }
    if (shown == CP_CHECK_PASSED && n[CP_CHECK_SKIPPED])
        add(l, "; %zu more check%s could not be made", n[2], n[2] == 1 ? "" : "s");
    add(l, ".");
    return true;
}

/* The largest "N×" that a claimed or measured text holds ("about 4x (3x
 * to 4.5x)": 4.5), or -1 when it holds none. */
static double largest_ratio(const char *s)
{
    double best = -1;
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p) || (p > s && (isalnum((unsigned char)p[-1]) ||
                                                      p[-1] == '.')))
            continue;
        char *end;
        double v = strtod(p, &end);
        if (end != p && (*end == 'x' || !strncmp(end, "×", strlen("×"))) &&
            !isalpha((unsigned char)end[*end == 'x' ? 1 : strlen("×")]))
            best = fmax(best, v);
        p = end - 1;
    }
    return best;
}

/* A claim measured past its window ("about 4x (3x to 4.5x)" measured
 * 43.0x): exceeded by its window's rule, or, in a report from before the
 * windows, confirmed with a measured ratio beyond the claimed ones. */
static bool exceeded(const cp_claim_result *k)
{
    if (k->verdict == CP_VERDICT_EXCEEDED)
        return true;
    double claimed = largest_ratio(k->claimed), measured = largest_ratio(k->measured);
    return !k->has_window && k->verdict == CP_VERDICT_CONFIRMED && claimed > 0 &&
           measured > claimed;
}

/* The source's claims that were refuted (the first said, the rest
 * counted), else those exceeded (the largest said). */
static bool claim_finding(line *l, const cp_case_result *c)
{
    const cp_claim_result *refuted = NULL, *beyond = NULL;
    size_t nrefuted = 0, nbeyond = 0;
    for (size_t i = 0; i < c->nclaims; i++) {
        const cp_claim_result *k = &c->claims[i];
        if (k->verdict == CP_VERDICT_REFUTED) {
            nrefuted++;
            refuted = refuted ? refuted : k;
        } else if (exceeded(k)) {
            nbeyond++;
            if (!beyond || largest_ratio(k->measured) > largest_ratio(beyond->measured))
                beyond = k;
        }
    }
    const cp_claim_result *k = refuted ? refuted : beyond;
    if (!k)
        return false;
    char text[100];
    add(l, "the source's claim \"%s\" %s: claimed %s, measured %s", cut(k->text, text, 90),
        refuted ? "refuted" : "exceeded", k->claimed, k->measured);
    size_t more = refuted ? nrefuted - 1 : nbeyond - 1;
    if (more)
        add(l, "; %zu more claim%s %s", more, more == 1 ? "" : "s",
            refuted ? "refuted" : "exceeded");
    add(l, ".");
    return true;
}

/* The passed case with the largest speedup against its baseline (at least
 * 3%, as the headline counts one), or NULL. */
static const cp_case_result *largest_speedup(const cp_report *r)
{
    const cp_case_result *best = NULL;
    double best_x = 1.03;
    for (size_t i = 0; i < r->ncases; i++) {
        const cp_case_result *c = &r->cases[i];
        const cp_variant_result *base, *other;
        if (c->status != CP_STATUS_PASSED || !against_baseline(c, &base, &other))
            continue;
        double x = base->timing.median_ms / other->timing.median_ms;
        if (x >= best_x) {
            best_x = x;
            best = c;
        }
    }
    return best;
}

/* Where finding n is written: its slot, or past `max` (only counted) a
 * scratch line of the same size. */
static line slot(cp_key_finding *out, size_t max, size_t n, char *scratch)
{
    return (line){n < max ? out[n].text : scratch, sizeof out->text, 0};
}

/* Records finding n's kind and case where it has a slot; counts it always. */
static void put_finding(cp_key_finding *out, size_t max, size_t *n, cp_key_kind kind,
                        size_t at)
{
    if (*n < max) {
        out[*n].kind = kind;
        out[*n].case_index = at;
    }
    (*n)++;
}

size_t cp_key_findings(const cp_report *r, cp_key_finding *out, size_t max)
{
    size_t n = 0;
    char scratch[sizeof out->text];
    for (int pass = 0; pass < 2; pass++) /* failures, then inconclusive cases */
        for (size_t i = 0; i < r->ncases; i++) {
            const cp_case_result *c = &r->cases[i];
            if (c->status != (pass ? CP_STATUS_INCONCLUSIVE : CP_STATUS_FAILED))
                continue;
            line l = slot(out, max, n, scratch);
            not_passed(&l, c);
            put_finding(out, max, &n, pass ? CP_KEY_INCONCLUSIVE : CP_KEY_FAILED, i);
        }
    const cp_case_result *fast = largest_speedup(r);
    if (fast) {
        const cp_variant_result *base, *other;
        against_baseline(fast, &base, &other);
        line l = slot(out, max, n, scratch);
        char a[32], b[32], x[32];
        cp_fmt_ratio_of(base->timing.median_ms, other->timing.median_ms, x, sizeof x, b, a,
                        sizeof a);
        add(&l, "the largest speedup against a baseline: %s ran %s faster than %s (%s against "
                "%s).", other->name, x, base->name, a, b);
        put_finding(out, max, &n, CP_KEY_SPEEDUP, (size_t)(fast - r->cases));
    }
    for (size_t i = 0; i < r->ncases; i++) {
        line l = slot(out, max, n, scratch);
        if (overlap_finding(&l, &r->cases[i]))
            put_finding(out, max, &n, CP_KEY_OVERLAP, i);
    }
    for (size_t i = 0; i < r->ncases; i++) {
        line l = slot(out, max, n, scratch);
        if (claim_finding(&l, &r->cases[i]))
            put_finding(out, max, &n, CP_KEY_CLAIM, i);
    }
    return n;
}

int cp_case_interest(const cp_report *r, size_t i)
{
    const cp_case_result *c = &r->cases[i];
    if (c->status == CP_STATUS_FAILED || c->status == CP_STATUS_INCONCLUSIVE)
        return 0;
    char scratch[sizeof ((cp_key_finding *)0)->text];
    line l = {scratch, sizeof scratch, 0};
    if (c->nclaims || largest_speedup(r) == c || overlap_finding(&l, c))
        return 1;
    return 2;
}
