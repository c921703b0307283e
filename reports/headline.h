/*
 * What a case (or a traced program) showed, in words a person reads first:
 * its headline, and the number formats that the headline, the terminal
 * and the HTML pages share. Private to the reports layer: report.json,
 * report.html, the compare page and the terminal's summary are its only
 * users, so it is no part of the library's interface.
 */
#ifndef CUPROOF_REPORTS_HEADLINE_H
#define CUPROOF_REPORTS_HEADLINE_H

#include <cuproof/result.h>

#include <stddef.h>

/*
 * One or two plain sentences generated from a case's verdict, checks,
 * timings, traced metrics and claims, written to buf (always terminated
 * when size > 0, cut to fit). A case that did not pass says why first
 * ("Failed: ...", "Inconclusive: ...", "Skipped: ..."); a passed one says
 * how much faster its fastest variant ran than its baseline (c->baseline,
 * when the variants do the same work; otherwise the range of their
 * medians, since a ratio would compare different work), how much of the
 * copy time overlapped kernels and how many kernels ran at once in its
 * traced variants, and what became of the source's claims. Returns the
 * length it wanted (as snprintf).
 */
size_t cp_case_headline(const cp_case_result *c, char *buf, size_t size);

/* A duration in the unit that fits, three significant digits: "812 µs",
 * "34.0 ms", "2.09 s" (ns below 1 µs). Returns buf. */
char *cp_format_ms(double ms, char *buf, size_t size);

/* A ratio in [0, 1] as a percentage with the precision that shows it:
 * "82%", "1.9%", "0.04%", "0%". Returns buf. */
char *cp_format_percent(double ratio, char *buf, size_t size);

#endif
