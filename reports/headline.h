/*
 * What a case (or a traced program) showed, in words a person reads first:
 * its headline. Private to the reports layer: report.json,
 * report.html, the compare page and the terminal's summary are its only
 * users, so it is no part of the library's interface.
 */
#ifndef CUPROOF_REPORTS_HEADLINE_H
#define CUPROOF_REPORTS_HEADLINE_H

#include <cuproof/result.h>
#include <cuproof/units.h>

#include <stddef.h>

/*
 * One or two plain sentences generated from a case's verdict, checks,
 * timings, traced metrics and claims, written to buf (always terminated
 * when size > 0, cut to fit). A case that did not pass says why first
 * ("Failed: ...", "Inconclusive: ...", "Skipped: ..."); a passed one says
 * how much faster its fastest variant ran than its baseline (c->baseline,
 * when the variants do the same work), or the time of its one timed
 * variant; how much of the copy time overlapped kernels and how many
 * kernels ran at once in its traced variants; when neither a baseline nor
 * overlap gave it anything to say, the one most telling fact (the check
 * its claim rests on, else its slowest variant's time: never a range of
 * times across variants that do different work); and what became of the
 * source's claims. Returns the length it wanted (as snprintf).
 */
size_t cp_case_headline(const cp_case_result *c, char *buf, size_t size);

/* Durations, shares and ratios are shown through cuproof/units.h, the
 * one table every output shares. */

/* What a key finding is about, in the order the report lists them. */
typedef enum cp_key_kind {
    CP_KEY_FAILED,
    CP_KEY_INCONCLUSIVE,
    CP_KEY_SPEEDUP,
    CP_KEY_OVERLAP,
    CP_KEY_CLAIM
} cp_key_kind;

/* One line of the report's "Key findings": its case (an index into
 * r->cases, which the page links to) and the sentence that follows the
 * case's name. */
typedef struct cp_key_finding {
    cp_key_kind kind;
    size_t case_index;
    char text[768];
} cp_key_finding;

/*
 * The run's findings a reader wants first, derived from the cases' verdicts,
 * timings, metrics, checks and claims, each with its numbers: every failed,
 * then every inconclusive case (why, as its headline says it); the largest
 * speedup against a baseline among the passed cases (at least 3%); per
 * case whose checks declare that copies must overlap kernels or kernels
 * run at once ("V: copy_kernel_overlap_ratio > X", "V: peak concurrent
 * kernels > 1"; no "V: " in a case of one variant, as a traced program's
 * expectations), whether it was achieved or missed, with the variants'
 * measured ratio or peak and the bound wanted; per case, a source's claim
 * refuted (else one exceeded: measured past its window, or in an older
 * report past the largest ratio claimed), with what was claimed and
 * measured. Writes the first
 * `max` to out and returns how many there are.
 */
size_t cp_key_findings(const cp_report *r, cp_key_finding *out, size_t max);

/* How much case i of r interests a reader, for the order of the report's
 * cases: 0 failed or inconclusive, 1 with a key finding or a claim of its
 * source, 2 the rest. */
int cp_case_interest(const cp_report *r, size_t i);

#endif
