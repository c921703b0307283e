/* The HTML pages' growing buffer (report.html, the timeline page, the
 * compare page): appends that remember running out of memory instead of
 * failing each call, and HTML and JSON-in-HTML escaping. Private to the
 * reports layer. */
#ifndef CUPROOF_REPORTS_HTML_BUF_H
#define CUPROOF_REPORTS_HTML_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct html_buf {
    char *s;
    size_t len, cap;
    bool oom; /* an append failed: the page is incomplete, s stays valid */
} html_buf;

/* Appends n bytes of s. */
void html_put(html_buf *b, const char *s, size_t n);
/* Appends s as it is (markup). */
void html_raw(html_buf *b, const char *s);
/* Appends printf output with every argument already escaped by the caller
 * where it is text; numbers need none. At most 2047 bytes. */
void html_fmt(html_buf *b, const char *f, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as HTML text: < > & " escaped. */
void html_text(html_buf *b, const char *s);
/* Appends s as HTML text that a person reads: a metric's or a finding's
 * name with an underscore in it becomes its label from the metric table ("copy_kernel_overlap_ratio"
 * reads "Copy time overlapping kernels"), and a word ending in _ms, _us or
 * _ns reads as words with the unit in parentheses ("event_ms": "event
 * (ms)"). Other words, a kernel's name among them, stay as written. */
void html_human(html_buf *b, const char *s);
/* Appends <td>s</td>, s escaped. */
void html_cell(html_buf *b, const char *s);
/* Appends s as a JSON string for a <script type="application/json"> block:
 * quotes and backslashes escaped, control characters and < > & as \u00XX,
 * so no "</script>" can end the block. */
void html_json_string(html_buf *b, const char *s);
/* The first n bytes of s (a name shown without its suffix), as above. */
void html_json_string_n(html_buf *b, const char *s, size_t n);

#endif
