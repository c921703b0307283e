/*
 * The parser of expectations (cuproof/expect.h has the grammar): text to
 * a list of expectations, each keeping the columns of its tokens so that
 * a caller can name an unknown metric or finding where it stands, and the
 * `#! comm-pattern:` directive. Every bad line is said, not only the
 * first, and a text with an error leaves the caller's list as it was.
 * Which metrics and findings exist is checked by the callers
 * (expect_eval.c); cp_expect_parse_all checks it on the lines that did
 * parse too, so that one pass names every error.
 */
#include <cuproof/expect.h>
#include <cuproof/internal/names.h>

#include <cuproof/error.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Error messages stay on one line: a longer token is cut after this many
 * bytes and marked with "...". */
enum { SHOWN_TOKEN = 40 };

/* A quoted token as messages show it, with room for the quotes and "...". */
typedef char shown_token[SHOWN_TOKEN + 8];

/* The character classes of the grammar, spelled out rather than taken from
 * <ctype.h>, whose answers depend on the locale and on the sign of char. */
static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_ident_start(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_ident(char c)
{
    return is_ident_start(c) || is_digit(c);
}

/* The characters of a scope NAME. A run of them is also what the parser
 * takes as one word (a metric, a keyword, a number) before it checks the
 * word's form, so that "span-ns" or "1e5x" is named whole in an error. */
static bool is_word(char c)
{
    return is_ident(c) || c == '.' || c == '+' || c == '-';
}

static bool is_op_char(char c)
{
    return c == '<' || c == '>' || c == '=' || c == '!';
}

static bool is_punct(char c)
{
    return c == ':' || c == '(' || c == ')';
}

/* One line under parse: columns count from start; end is the end of its
 * content, before a comment and trailing blanks. */
typedef struct {
    const char *start;
    const char *end;
    int number;
} line_ctx;

static int column(const line_ctx *ln, const char *p)
{
    return (int)(p - ln->start) + 1;
}

static const char *skip_space(const char *p, const char *end)
{
    while (p < end && is_space(*p))
        p++;
    return p;
}

static const char *skip_word(const char *p, const char *end)
{
    while (p < end && is_word(*p))
        p++;
    return p;
}

static bool word_is(const char *p, const char *q, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(q - p) == n && memcmp(p, word, n) == 0;
}

static bool is_identifier(const char *p, const char *q)
{
    if (p == q || !is_ident_start(*p))
        return false;
    while (++p < q)
        if (!is_ident(*p))
            return false;
    return true;
}

static void quote(const char *p, const char *q, shown_token out)
{
    int n = (int)(q - p);
    if (n > SHOWN_TOKEN)
        snprintf(out, sizeof(shown_token), "'%.*s...'", SHOWN_TOKEN, p);
    else
        snprintf(out, sizeof(shown_token), "'%.*s'", n, p);
}

/* Names what stands at p for a "found ..." message: the run of characters
 * of p's own class (a word, an operator-like run such as "=>", a single
 * ':', '(' or ')', or a run of anything else), or "end of line". */
static void describe(const char *p, const char *end, shown_token out)
{
    if (p >= end) {
        snprintf(out, sizeof(shown_token), "end of line");
        return;
    }
    const char *q = p + 1;
    if (is_word(*p)) {
        q = skip_word(p, end);
    } else if (is_op_char(*p)) {
        while (q < end && is_op_char(*q))
            q++;
    } else if (!is_punct(*p)) {
        while (q < end && !is_space(*q) && !is_word(*q) && !is_op_char(*q) && !is_punct(*q))
            q++;
    }
    quote(p, q, out);
}

static int fail_at(int code, const line_ctx *ln, const char *p, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Records "line L, column C: <message>" with C the column of p. */
static int fail_at(int code, const line_ctx *ln, const char *p, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cp_failf(code, "line %d, column %d: %s", ln->number, column(ln, p), msg);
}

/* The common form of syntax errors: what the grammar wanted at p, and what
 * is there instead. */
static int expected(const line_ctx *ln, const char *p, const char *what)
{
    shown_token found;
    describe(p, ln->end, found);
    return fail_at(CP_EPARSE, ln, p, "expected %s, found %s", what, found);
}

static int no_memory(void)
{
    return cp_failf(CP_ENOMEM, "out of memory while parsing expectations");
}

static char *dup_range(const char *p, const char *q)
{
    size_t n = (size_t)(q - p);
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

/* A metric's or finding's name as written, in lower case: every name is,
 * so 'KERNELS > 1' means 'kernels > 1' (the line keeps its text). */
static char *dup_name(const char *p, const char *end)
{
    char *s = dup_range(p, end);
    for (char *c = s; c && *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a'); /* ASCII, as the grammar's classes are */
    return s;
}

static void item_free(cp_expectation *e)
{
    free(e->scope);
    free(e->scope_arg);
    free(e->name);
    free(e->text);
    free(e->step_range);
    memset(e, 0, sizeof *e);
}

static const char *const op_names[] = {"<", "<=", ">", ">=", "==", "!="};
enum { NOPS = sizeof op_names / sizeof op_names[0] };

const char *cp_expect_op_name(cp_expect_op op)
{
    return (unsigned)op < NOPS ? op_names[op] : "?";
}

static int op_from(const char *p, const char *q)
{
    for (int i = 0; i < NOPS; i++)
        if (word_is(p, q, op_names[i]))
            return i;
    return -1;
}

/* The end of the decimal number at p ([+-] digits [. digits] [e [+-] digits],
 * at least one digit before the exponent), or NULL when none starts there.
 * An 'e' without digits after it is left out, as strtod leaves it. */
static const char *decimal_end(const char *p, const char *end)
{
    const char *q = p;
    if (q < end && (*q == '+' || *q == '-'))
        q++;
    const char *first = q;
    while (q < end && is_digit(*q))
        q++;
    size_t digits = (size_t)(q - first);
    if (q < end && *q == '.') {
        first = ++q;
        while (q < end && is_digit(*q))
            q++;
        digits += (size_t)(q - first);
    }
    if (digits == 0)
        return NULL;
    if (q < end && (*q == 'e' || *q == 'E')) {
        const char *x = q + 1;
        if (x < end && (*x == '+' || *x == '-'))
            x++;
        if (x < end && is_digit(*x)) {
            while (x < end && is_digit(*x))
                x++;
            q = x;
        }
    }
    return q;
}

/* Reads the NUMBER at p that follows operator op into *value and its end
 * into *next. The syntax is checked here first, because strtod also
 * accepts hex, "inf" and "nan", which the grammar rejects; a decimal glued
 * to more word characters ("5x", "0x10", "1e") is no number either. */
static int parse_number(const line_ctx *ln, const char *p, cp_expect_op op, double *value,
                        const char **next)
{
    char what[32];
    snprintf(what, sizeof what, "a number after '%s'", cp_expect_op_name(op));
    const char *q = decimal_end(p, ln->end);
    if (!q || (q < ln->end && is_word(*q)))
        return expected(ln, p, what);
    /* cuproof never changes LC_NUMERIC from "C", so strtod stops where the
     * scanner above did. Were the decimal point another character, strtod
     * would stop early, and that is reported as a syntax error rather than
     * taken as a wrong value. */
    char *stop;
    errno = 0;
    double v = strtod(p, &stop);
    if (stop != q)
        return expected(ln, p, what);
    if (errno == ERANGE || !isfinite(v)) {
        shown_token shown;
        quote(p, q, shown);
        return fail_at(CP_ERANGE, ln, p, "number out of range %s", shown);
    }
    *value = v;
    *next = q;
    return 0;
}

/* Parses the scope at p, which the caller found to be NAME followed by
 * ':' or '(' (the latter at *sep), into e. Stores where the body starts
 * in *body. */
static int parse_scope(const line_ctx *ln, const char *p, const char *name_end, const char *sep,
                       cp_expectation *e, const char **body)
{
    shown_token shown;
    if (name_end == p)
        return fail_at(CP_EPARSE, ln, sep, "empty scope before '%c'", *sep);
    e->scope_column = column(ln, p);
    if (!(e->scope = dup_range(p, name_end)))
        return no_memory();
    if (*sep == '(') {
        const char *close = memchr(sep, ')', (size_t)(ln->end - sep));
        if (!close) {
            quote(p, name_end, shown);
            return fail_at(CP_EPARSE, ln, sep, "unclosed '(' in scope %s", shown);
        }
        const char *a = skip_space(sep + 1, close);
        const char *b = close;
        while (b > a && is_space(b[-1]))
            b--;
        quote(p, close + 1, shown);
        if (a == b)
            return fail_at(CP_EPARSE, ln, sep, "empty argument in scope %s", shown);
        if (!(e->scope_arg = dup_range(a, b)))
            return no_memory();
        sep = skip_space(close + 1, ln->end);
        if (sep >= ln->end || *sep != ':') {
            char what[sizeof(shown_token) + 16];
            snprintf(what, sizeof what, "':' after %s", shown);
            return expected(ln, sep, what);
        }
    }
    *body = skip_space(sep + 1, ln->end);
    return 0;
}

/* Parses the FINDING name at p, after the keyword `finding`. */
static int parse_finding(const line_ctx *ln, const char *p, cp_expectation *e, const char **next)
{
    const char *f = skip_space(p, ln->end);
    const char *f_end = skip_word(f, ln->end);
    if (f == f_end)
        return expected(ln, f, "a finding name after 'finding'");
    if (!is_identifier(f, f_end)) {
        shown_token shown;
        quote(f, f_end, shown);
        return fail_at(CP_EPARSE, ln, f, "invalid finding name %s", shown);
    }
    if (!(e->name = dup_name(f, f_end)))
        return no_memory();
    e->name_column = e->value_column = column(ln, f);
    *next = f_end;
    return 0;
}

/* Parses the body at p into e and stores its end in *next. */
static int parse_body(const line_ctx *ln, const char *p, cp_expectation *e, const char **next)
{
    const char *w_end = skip_word(p, ln->end);
    if (p == w_end)
        return expected(ln, p, "a metric, 'finding' or 'no finding'");
    if (word_is(p, w_end, "finding")) {
        e->kind = CP_EXPECT_FINDING;
        return parse_finding(ln, w_end, e, next);
    }
    if (word_is(p, w_end, "no")) {
        const char *k = skip_space(w_end, ln->end);
        const char *k_end = skip_word(k, ln->end);
        if (!word_is(k, k_end, "finding"))
            return expected(ln, k, "'finding' after 'no'");
        e->kind = CP_EXPECT_NO_FINDING;
        return parse_finding(ln, k_end, e, next);
    }
    if (!is_identifier(p, w_end)) {
        shown_token shown;
        quote(p, w_end, shown);
        return fail_at(CP_EPARSE, ln, p, "invalid metric name %s", shown);
    }
    e->kind = CP_EXPECT_COMPARE;
    e->name_column = column(ln, p);
    if (!(e->name = dup_name(p, w_end)))
        return no_memory();
    /* The whole run of operator characters is the operator, so that "=>"
     * or "<>" is named as written rather than half-accepted. */
    const char *o = skip_space(w_end, ln->end);
    const char *o_end = o;
    while (o_end < ln->end && is_op_char(*o_end))
        o_end++;
    int op = op_from(o, o_end);
    if (op < 0)
        return expected(ln, o, "an operator (<, <=, >, >=, ==, !=)");
    e->op = (cp_expect_op)op;
    const char *v = skip_space(o_end, ln->end);
    e->value_column = column(ln, v);
    return parse_number(ln, v, e->op, &e->value, next);
}

/* The prefixes of ranks (cuproof/expect.h): 'every rank:', 'rank
 * spread:' (which sets every_rank too: it is measured on each rank) and rank(N),
 * read at *p, which moves past them to what follows (the scope or the
 * body). rank(N) followed by ':' leaves *p at the body; followed by a
 * scope, at the scope. Anything else leaves *p where it was. */
static int parse_ranks(const line_ctx *ln, const char **p, cp_expectation *e)
{
    const char *w = *p, *w_end = skip_word(w, ln->end);
    const char *r = skip_space(w_end, ln->end);
    const char *r_end = skip_word(r, ln->end);
    bool every = word_is(w, w_end, "every") && word_is(r, r_end, "rank");
    bool spread = word_is(w, w_end, "rank") && word_is(r, r_end, "spread");
    if (r > w_end && (every || spread)) {
        const char *colon = skip_space(r_end, ln->end);
        if (colon >= ln->end || *colon != ':')
            return expected(ln, colon, every ? "':' after 'every rank'" : "':' after 'rank spread'");
        e->every_rank = true;
        e->spread_ranks = spread;
        e->rank_column = column(ln, w);
        *p = w = skip_space(colon + 1, ln->end);
        w_end = skip_word(w, ln->end);
    }
    const char *open = skip_space(w_end, ln->end);
    if (!word_is(w, w_end, "rank") || open >= ln->end || *open != '(')
        return 0;
    if (e->every_rank)
        return fail_at(CP_EPARSE, ln, w, "'%s' already names the ranks: rank(N) cannot "
                                         "follow it",
                       e->spread_ranks ? "rank spread" : "every rank");
    const char *a = skip_space(open + 1, ln->end);
    const char *b = skip_word(a, ln->end);
    const char *close = skip_space(b, ln->end);
    if (close >= ln->end || *close != ')')
        return expected(ln, close, "')' after rank(N");
    /* A decimal integer below 2^31, so that it compares with the
     * processes' int32_t ranks. */
    int64_t v = 0;
    bool ok = a < b;
    for (const char *q = a; ok && q < b; q++) {
        ok = is_digit(*q);
        v = v * 10 + (*q - '0');
        ok = ok && v <= INT32_MAX;
    }
    if (!ok) {
        shown_token shown;
        quote(a, b, shown);
        return fail_at(CP_EPARSE, ln, a,
                       "the rank in rank(N) must be a decimal integer from 0 to %d, not %s",
                       INT32_MAX, shown);
    }
    e->has_rank = true;
    e->rank = (int32_t)v;
    e->rank_column = column(ln, w);
    const char *next = skip_space(close + 1, ln->end);
    if (next < ln->end && *next == ':') {
        *p = skip_space(next + 1, ln->end);
        /* The body follows: a word and ':' after it would be a scope. */
        const char *n_end = skip_word(*p, ln->end);
        const char *sep = skip_space(n_end, ln->end);
        if (sep < ln->end && (*sep == ':' || *sep == '('))
            return fail_at(CP_EPARSE, ln, *p, "a scope combined with rank(N) stands before the "
                                              "':', as in rank(1) range(step): ...");
        return 0;
    }
    const char *s_end = skip_word(next, ln->end);
    const char *paren = skip_space(s_end, ln->end);
    if (next == s_end || paren >= ln->end || *paren != '(')
        return expected(ln, next, "':' or a scope such as range(NAME) after rank(N)");
    *p = next;
    return 0;
}

/* 'per step [(NAME)] [pNN]:' at *p (cuproof/expect.h), which moves past
 * it to the body; anything else leaves *p where it was. */
static int parse_per_step(const line_ctx *ln, const char **p, cp_expectation *e)
{
    const char *w = *p, *w_end = skip_word(w, ln->end);
    const char *s = skip_space(w_end, ln->end);
    const char *s_end = skip_word(s, ln->end);
    if (!word_is(w, w_end, "per") || s == w_end || !word_is(s, s_end, "step"))
        return 0;
    e->per_step = true;
    e->step_column = column(ln, w);
    const char *q = skip_space(s_end, ln->end);
    const char *name = "step", *name_end = name + 4;
    if (q < ln->end && *q == '(') {
        const char *a = skip_space(q + 1, ln->end);
        const char *close = memchr(a, ')', (size_t)(ln->end - a));
        if (!close)
            return expected(ln, ln->end, "')' after per step(NAME");
        const char *b = close;
        while (b > a && is_space(b[-1]))
            b--;
        if (a == b)
            return expected(ln, a, "a range's name in per step(NAME)");
        name = a;
        name_end = b;
        q = skip_space(close + 1, ln->end);
    }
    if (!(e->step_range = dup_range(name, name_end)))
        return no_memory();
    if (q < ln->end && *q == 'p') {
        const char *d = q + 1, *d_end = skip_word(d, ln->end);
        int v = 0;
        bool ok = d < d_end && d_end - d <= 3;
        for (const char *c = d; ok && c < d_end; c++) {
            ok = is_digit(*c);
            v = v * 10 + (*c - '0');
        }
        if (!ok || v < 1 || v > 100) {
            shown_token shown;
            quote(q, d_end, shown);
            return fail_at(CP_EPARSE, ln, q,
                           "a percentile after 'per step' is p1 to p100 (p50, p95), not %s",
                           shown);
        }
        e->step_quantile = v;
        q = skip_space(d_end, ln->end);
    }
    if (q >= ln->end || *q != ':')
        return expected(ln, q, "':' after 'per step' (per step: METRIC OP NUMBER, per "
                               "step(NAME) p95: ...)");
    *p = skip_space(q + 1, ln->end);
    const char *n_end = skip_word(*p, ln->end);
    const char *sep = skip_space(n_end, ln->end);
    if (sep < ln->end && (*sep == ':' || *sep == '('))
        return fail_at(CP_EPARSE, ln, *p, "'per step' takes no other scope: each step is "
                                          "judged whole (per step: METRIC OP NUMBER)");
    return 0;
}

/* Parses the line [start, stop) into e. Returns 1 when it held an
 * expectation, 0 when it was blank or a comment, or a negative code with e
 * left empty. */
static int parse_line(const char *start, const char *stop, int number, cp_expectation *e)
{
    memset(e, 0, sizeof *e);
    const char *hash = memchr(start, '#', (size_t)(stop - start));
    const char *end = hash ? hash : stop;
    const char *p = skip_space(start, end);
    while (end > p && is_space(end[-1]))
        end--;
    if (p == end)
        return 0;
    line_ctx ln = {.start = start, .end = end, .number = number};
    int rc = 0;
    e->line = number;
    if (!(e->text = dup_range(p, end))) {
        rc = no_memory();
        goto out;
    }
    if ((rc = parse_per_step(&ln, &p, e)) < 0)
        goto out;
    if (!e->per_step && (rc = parse_ranks(&ln, &p, e)) < 0)
        goto out;
    /* A scope is a first word followed by ':' or '(': no body has either
     * there, so nothing else needs to be tried first. */
    const char *name_end = skip_word(p, end);
    const char *sep = skip_space(name_end, end);
    const char *body = p;
    if (sep < end && (*sep == ':' || *sep == '(')) {
        if ((rc = parse_scope(&ln, p, name_end, sep, e, &body)) < 0)
            goto out;
    } else {
        e->scope_column = column(&ln, p);
        if (!(e->scope = dup_range(p, p))) {
            rc = no_memory();
            goto out;
        }
    }
    const char *rest;
    if ((rc = parse_body(&ln, body, e, &rest)) < 0)
        goto out;
    rest = skip_space(rest, end);
    if (rest < end) {
        shown_token found;
        describe(rest, end, found);
        rc = fail_at(CP_EPARSE, &ln, rest, "unexpected %s after the expectation", found);
        goto out;
    }
    rc = 1;
out:
    if (rc < 0)
        item_free(e);
    return rc;
}

/* Makes room for `more` items after list->n, doubling so that appending
 * line by line stays linear. */
static int reserve(cp_expect_list *list, size_t more)
{
    const size_t max = SIZE_MAX / sizeof(cp_expectation);
    if (more > max - list->n)
        return no_memory();
    size_t need = list->n + more;
    if (need <= list->cap)
        return 0;
    size_t cap = list->cap > max / 2 ? max : list->cap * 2;
    if (cap < need)
        cap = need < 8 ? 8 : need;
    cp_expectation *p = realloc(list->items, cap * sizeof *p);
    if (!p)
        return no_memory();
    list->items = p;
    list->cap = cap;
    return 0;
}

/* A directive line, `#! NAME: VALUE` (a comment to older readers): the
 * one there is, `#! comm-pattern: PREFIX`, sets the communication pattern
 * (cuproof/metrics.h) into `pattern`. Returns 1 when the line was a
 * directive, 0 when not, or a negative code naming the line. */
static int parse_directive(const char *start, const char *stop, int number, char *pattern,
                           size_t size)
{
    const char *p = skip_space(start, stop);
    if (stop - p < 2 || p[0] != '#' || p[1] != '!')
        return 0;
    static const char key[] = "comm-pattern:";
    p = skip_space(p + 2, stop);
    if ((size_t)(stop - p) < sizeof key - 1 || memcmp(p, key, sizeof key - 1) != 0)
        return cp_failf(CP_EPARSE, "line %d: unknown directive (the one there is: "
                                   "'#! comm-pattern: PREFIX')", number);
    const char *v = skip_space(p + sizeof key - 1, stop), *e = stop;
    while (e > v && is_space(e[-1]))
        e--;
    char value[64];
    size_t n = (size_t)(e - v);
    if (n >= sizeof value || n >= size)
        return cp_failf(CP_EPARSE, "line %d: comm-pattern longer than %zu bytes", number,
                        sizeof value - 1);
    memcpy(value, v, n);
    value[n] = '\0';
    if (!cp_comm_pattern_valid(value))
        return cp_failf(CP_EPARSE, "line %d: comm-pattern '%s': expected a name's prefix "
                                   "(letters, digits, '_'), as in 'nccl'", number, value);
    memcpy(pattern, value, n + 1);
    return 1;
}

int cp_expect_parse(const char *text, int first_line, cp_expect_list *list)
{
    if (!text || !list)
        return cp_failf(CP_EINVAL, "cp_expect_parse: %s is NULL", text ? "list" : "text");
    if (first_line < 1)
        return cp_failf(CP_EINVAL, "cp_expect_parse: first line %d is below 1", first_line);
    /* Expectations gather in a list of their own and move to the caller's
     * only once the whole text parsed, so that an error leaves the caller's
     * list as it was. */
    cp_expect_list fresh = {0};
    char pattern[sizeof list->comm_pattern] = "";
    /* Every bad line is said, not only the first (cp_errors). */
    cp_errors bad = {0};
    int rc = 0;
    int number = first_line;
    for (const char *p = text;;) {
        const char *stop = p + strcspn(p, "\n");
        if (stop - p >= INT_MAX) {
            rc = cp_failf(CP_ERANGE, "line %d: longer than %d bytes", number, INT_MAX - 1);
            goto out;
        }
        int directive = parse_directive(p, stop, number, pattern, sizeof pattern);
        cp_expectation e;
        int got = directive ? 0 : parse_line(p, stop, number, &e);
        if (directive < 0 || got < 0) {
            if (directive < 0 ? directive == CP_ENOMEM : got == CP_ENOMEM) {
                rc = CP_ENOMEM;
                goto out;
            }
            cp_errors_add(&bad, directive < 0 ? directive : got);
        } else if (got > 0) {
            if ((rc = reserve(&fresh, 1)) < 0) {
                item_free(&e);
                goto out;
            }
            fresh.items[fresh.n++] = e;
        }
        if (*stop == '\0')
            break;
        if (number == INT_MAX) {
            rc = cp_failf(CP_ERANGE, "line %d: too many lines", number);
            goto out;
        }
        number++;
        p = stop + 1;
    }
    if ((rc = cp_errors_finish(&bad)) < 0)
        goto out;
    if (fresh.n > 0) {
        if ((rc = reserve(list, fresh.n)) < 0)
            goto out;
        memcpy(list->items + list->n, fresh.items, fresh.n * sizeof *fresh.items);
        list->n += fresh.n;
        /* The strings belong to `list` now; only the array is fresh's. */
        fresh.n = 0;
    }
    if (pattern[0])
        memcpy(list->comm_pattern, pattern, sizeof pattern);
out:
    cp_expect_list_free(&fresh);
    return rc;
}

int cp_expect_parse_all(const char *text, int first_line, cp_expect_list *list)
{
    int rc = cp_expect_parse(text, first_line, list);
    if (rc != CP_EPARSE)
        return rc;
    /* The syntax errors hid the rest: each line that did parse is checked
     * for its metric or finding too, so that one pass names them all. */
    cp_errors all = {0};
    cp_errors_add(&all, rc);
    int number = first_line;
    for (const char *p = text; p; number++) {
        const char *stop = strchr(p, '\n');
        size_t n = stop ? (size_t)(stop - p) : strlen(p);
        char *line = malloc(n + 1);
        if (!line)
            return cp_failf(CP_ENOMEM, "out of memory");
        memcpy(line, p, n);
        line[n] = '\0';
        cp_expect_list one = {0};
        if (cp_expect_parse(line, number, &one) == 0 && one.n == 1) {
            int vr = cp_expect_validate_name(&one.items[0]);
            if (vr < 0)
                cp_errors_add(&all, vr);
        }
        cp_expect_list_free(&one);
        free(line);
        p = stop ? stop + 1 : NULL;
    }
    cp_errors_finish(&all);
    return rc;
}

void cp_expect_list_free(cp_expect_list *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->n; i++)
        item_free(&list->items[i]);
    free(list->items);
    memset(list, 0, sizeof *list);
}

int cp_expect_scope_range(cp_expect_list *list, const char *range)
{
    for (size_t i = 0; list && range && *range && i < list->n; i++) {
        cp_expectation *e = &list->items[i];
        /* rank(N), 'every rank' and 'per step' are scopes too: they keep
         * what they say. */
        if (e->scope[0] || e->scope_arg || e->has_rank || e->every_rank || e->per_step)
            continue;
        size_t len = strlen(range) + strlen(e->text) + 10;
        char *scope = strdup("range"), *arg = strdup(range), *text = malloc(len);
        if (!scope || !arg || !text) {
            free(scope);
            free(arg);
            free(text);
            return cp_failf(CP_ENOMEM, "out of memory scoping expectations to range(%s)", range);
        }
        snprintf(text, len, "range(%s): %s", range, e->text);
        free(e->scope);
        free(e->scope_arg);
        free(e->text);
        e->scope = scope;
        e->scope_arg = arg;
        e->text = text;
    }
    return 0;
}

bool cp_expect_compare(double measured, cp_expect_op op, double value)
{
    if (isnan(measured) || isnan(value))
        return false;
    switch (op) {
    case CP_OP_LT:
        return measured < value;
    case CP_OP_LE:
        return measured <= value;
    case CP_OP_GT:
        return measured > value;
    case CP_OP_GE:
        return measured >= value;
    case CP_OP_EQ:
        return measured == value;
    case CP_OP_NE:
        return measured != value;
    }
    return false;
}

double cp_expect_badness(double measured, cp_expect_op op, double value)
{
    switch (op) {
    case CP_OP_GT:
    case CP_OP_GE:
        return -measured;
    case CP_OP_LT:
    case CP_OP_LE:
        return measured;
    case CP_OP_EQ:
        return measured > value ? measured - value : value - measured;
    case CP_OP_NE:
        break;
    }
    return 0;
}

/* ---- Names checked against the metric and finding tables, once ---- */

/* "unknown WHAT 'NAME' (did you mean 'X'?)" when one is near, else the
 * whole list of known names. */
static int unknown(const cp_expectation *e, int column, const char *what, const char *name,
                   const void *defs, size_t n, size_t stride, const char *plural)
{
    const char *near = cp_nearest_name(name, defs, n, stride);
    if (near)
        return cp_failf(CP_EINVAL, "line %d, column %d: unknown %s '%s' (did you mean '%s'?)",
                        e->line, column, what, name, near);
    char known[1024];
    cp_list_names(defs, n, stride, known, sizeof known);
    return cp_failf(CP_EINVAL, "line %d, column %d: unknown %s '%s' (%s: %s)", e->line, column,
                    what, name, plural, known);
}

bool cp_expect_scope_number(const char *s, uint32_t *out)
{
    uint64_t v = 0;
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 10 || s[n] != '\0')
        return false;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    if (v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

static int validate_one(const cp_expectation *e, const char *const *scopes, size_t nscopes)
{
    if (e->per_step)
        return cp_failf(CP_EINVAL,
                        "line %d, column %d: 'per step' is for traced programs (their NVTX "
                        "ranges); a case's expectations are scoped by variant",
                        e->line, e->step_column);
    if (e->has_rank || e->every_rank)
        return cp_failf(CP_EINVAL,
                        "line %d, column %d: %s is for traced programs; a case's expectations "
                        "are scoped by variant",
                        e->line, e->rank_column,
                        e->spread_ranks ? "'rank spread'"
                        : e->every_rank ? "'every rank'"
                                        : "rank(N)");
    /* A scope no program has either is a typo, said as one. */
    if (e->scope_arg && !cp_expect_scope_known(e->scope)) {
        const char *near = cp_expect_scope_meant(e->scope);
        return cp_failf(CP_EINVAL, "line %d, column %d: unknown scope '%s(%s)'%s%s%s",
                        e->line, e->scope_column, e->scope, e->scope_arg,
                        near ? " (did you mean '" : " (scopes: range(NAME), process(PID), "
                                                    "device(N), and a case's variants",
                        near ? near : "", near ? "'?)" : ")");
    }
    /* device(N) is every trace's: a case's variant on N GPUs has one
     * timeline per device. range and process are a traced program's. */
    if (e->scope_arg && strcmp(e->scope, "device") != 0)
        return cp_failf(CP_EINVAL,
                        "line %d, column %d: scope '%s(%s)' is for traced programs; a case's "
                        "expectations are scoped by variant or by device(N)",
                        e->line, e->scope_column, e->scope, e->scope_arg);
    uint32_t device;
    if (e->scope_arg && !cp_expect_scope_number(e->scope_arg, &device))
        return cp_failf(CP_EINVAL,
                        "line %d, column %d: device(%s): the device must be a decimal integer",
                        e->line, e->scope_column, e->scope_arg);
    if (!e->scope_arg && e->scope[0]) {
        bool found = false;
        for (size_t i = 0; i < nscopes && !found; i++)
            found = strcmp(scopes[i], e->scope) == 0;
        if (!found)
            return unknown(e, e->scope_column, "variant", e->scope, scopes, nscopes,
                           sizeof *scopes, "variants");
    }
    size_t n = 0;
    if (e->kind == CP_EXPECT_COMPARE && !cp_metric_find(e->name)) {
        const cp_metric_def *defs = cp_metric_defs(&n);
        return unknown(e, e->name_column, "metric", e->name, defs, n, sizeof *defs, "metrics");
    }
    if (e->kind != CP_EXPECT_COMPARE && !cp_finding_known(e->name)) {
        const cp_finding_def *defs = cp_finding_defs(&n);
        return unknown(e, e->name_column, "finding", e->name, defs, n, sizeof *defs,
                       "findings");
    }
    return 0;
}

int cp_expect_validate_name(const cp_expectation *e)
{
    cp_expectation bare = *e;
    bare.scope = "";
    bare.scope_arg = NULL;
    bare.has_rank = bare.every_rank = bare.spread_ranks = bare.per_step = false;
    return validate_one(&bare, NULL, 0);
}

int cp_expect_validate(const cp_expect_list *list, const char *const *scopes, size_t nscopes)
{
    cp_errors bad = {0};
    for (size_t i = 0; i < list->n; i++) {
        int rc = validate_one(&list->items[i], scopes, nscopes);
        if (rc < 0)
            cp_errors_add(&bad, rc);
    }
    return cp_errors_finish(&bad);
}

/* The lines of `text` that hold something (not blank, not a comment), and
 * of them how many parse on their own. */
static void count_lines(const char *text, int *lines, int *parsed)
{
    *lines = *parsed = 0;
    for (const char *p = text; p && *p;) {
        const char *stop = strchr(p, '\n');
        size_t n = stop ? (size_t)(stop - p) : strlen(p);
        size_t k = strspn(p, " \t\r");
        if (k < n && p[k] != '#') {
            (*lines)++;
            char *line = malloc(n + 1);
            if (line) {
                memcpy(line, p, n);
                line[n] = '\0';
                cp_expect_list one = {0};
                *parsed += cp_expect_parse(line, 1, &one) == 0;
                cp_expect_list_free(&one);
                free(line);
            }
        }
        p = stop ? stop + 1 : NULL;
    }
}

int cp_expect_parse_file(const char *text, size_t len, cp_expect_list *list)
{
    if (!text || !list)
        return cp_failf(CP_EINVAL, "cp_expect_parse_file: NULL text or list");
    size_t text_len = strlen(text);
    if (text_len < len)
        return cp_failf(CP_EPARSE, "not a text file (a NUL byte at byte %zu): an expectation file "
                                   "holds one expectation a line",
                        text_len);
    int rc = cp_expect_parse_all(text, 1, list);
    if (rc != CP_EPARSE)
        return rc;
    char *errors = strdup(cp_last_error()); /* counting the lines parses again */
    if (!errors)
        return cp_failf(CP_ENOMEM, "out of memory");
    int lines = 0, parsed = 0;
    count_lines(text, &lines, &parsed);
    if (lines >= 3 && parsed == 0) {
        /* Said first, then as many of the errors as the message holds,
         * the rest counted (cp_errors). */
        cp_errors all = {0};
        cp_errors_add(&all, cp_failf(CP_EPARSE, "none of its %d lines is an expectation: is it "
                                                "an expectation file? Its errors:",
                                     lines));
        cp_failf(CP_EPARSE, "%s", errors);
        cp_errors_add(&all, CP_EPARSE);
        rc = cp_errors_finish(&all);
    } else {
        cp_failf(CP_EPARSE, "%s", errors);
    }
    free(errors);
    return rc;
}

/* The scopes with an argument a traced program's expectation may name
 * (scope.c reads them through these, since it calls this file). */
static const char *const scope_names[] = {"range", "process", "device", "collective"};

const char *cp_expect_scope_meant(const char *scope)
{
    return cp_nearest_name(scope, scope_names, sizeof scope_names / sizeof *scope_names,
                           sizeof *scope_names);
}

bool cp_expect_scope_known(const char *scope)
{
    for (size_t i = 0; i < sizeof scope_names / sizeof *scope_names; i++)
        if (strcmp(scope, scope_names[i]) == 0)
            return true;
    return false;
}
