/* The HTML pages' growing buffer and escaping (html_buf.h). */
#include "html_buf.h"

#include <cuproof/metrics.h>

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void html_put(html_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 8192;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void html_raw(html_buf *b, const char *s)
{
    html_put(b, s, strlen(s));
}

/* Appends printf output with every argument already escaped by the caller
 * where it is text; numbers need none. */
void html_fmt(html_buf *b, const char *f, ...)
{
    char tmp[2048];
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(tmp, sizeof tmp, f, ap);
    va_end(ap);
    if (n > 0)
        html_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

void html_text(html_buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': html_raw(b, "&lt;"); break;
        case '>': html_raw(b, "&gt;"); break;
        case '&': html_raw(b, "&amp;"); break;
        case '"': html_raw(b, "&quot;"); break;
        default: html_put(b, s, 1);
        }
    }
}

void html_cell(html_buf *b, const char *s)
{
    html_raw(b, "<td>");
    html_text(b, s);
    html_raw(b, "</td>");
}


/* A JSON string for a <script type="application/json"> block: quotes and
 * backslashes escaped, and '<' as \u003c so no "</script>" can end it. */
void html_json_string(html_buf *b, const char *s)
{
    html_json_string_n(b, s, s ? strlen(s) : 0);
}

void html_json_string_n(html_buf *b, const char *s, size_t n)
{
    html_raw(b, "\"");
    /* Runs of bytes that need no escape go in one append: a trace's
     * names are most of a Chrome trace's bytes. */
    size_t i = 0, run = 0;
    for (; s && i < n && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(c == '"' || c == '\\' || c < 0x20 || c == '<' || c == '>' || c == '&')) {
            run++;
            continue;
        }
        html_put(b, s + i - run, run);
        run = 0;
        if (c == '"' || c == '\\')
            html_fmt(b, "\\%c", c);
        else
            html_fmt(b, "\\u%04x", c);
    }
    if (run)
        html_put(b, s + i - run, run);
    html_raw(b, "\"");
}

static bool word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* The label of the metric or finding called by the n bytes at w, or NULL. */
static const char *label_of(const char *w, size_t n)
{
    size_t nm = 0, nf = 0;
    const cp_metric_def *m = cp_metric_defs(&nm);
    const cp_finding_def *f = cp_finding_defs(&nf);
    for (size_t i = 0; i < nm; i++)
        if (strlen(m[i].name) == n && strncmp(m[i].name, w, n) == 0)
            return m[i].label;
    for (size_t i = 0; i < nf; i++)
        if (strlen(f[i].name) == n && strncmp(f[i].name, w, n) == 0)
            return f[i].label;
    return NULL;
}

void html_human(html_buf *b, const char *s)
{
    while (s && *s) {
        if (!word_char(*s)) {
            char one[2] = {*s++, '\0'};
            html_text(b, one);
            continue;
        }
        size_t n = 0;
        while (word_char(s[n]))
            n++;
        /* Only identifiers: a one-word metric ("kernels") is a word of the
         * text too ("1 kernels", "overlapped kernels"). */
        const char *label = memchr(s, '_', n) ? label_of(s, n) : NULL;
        bool unit = n > 3 && s[n - 3] == '_' && strchr("mun", s[n - 2]) && s[n - 1] == 's';
        if (label) {
            html_text(b, label);
        } else if (unit) {
            for (size_t i = 0; i < n - 3; i++) {
                char one[2] = {s[i] == '_' ? ' ' : s[i], '\0'};
                html_text(b, one);
            }
            html_fmt(b, " (%s)", s[n - 2] == 'u' ? "µs" : s[n - 2] == 'm' ? "ms" : "ns");
        } else {
            html_put(b, s, n);
        }
        s += n;
    }
}
