/* The HTML pages' growing buffer and escaping (html_buf.h). */
#include "html_buf.h"

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
    html_raw(b, "\"");
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            html_fmt(b, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            html_fmt(b, "\\u%04x", c);
        else
            html_put(b, s, 1);
    }
    html_raw(b, "\"");
}
