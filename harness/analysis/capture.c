/* Capture windows' SPEC (cuproof/internal/capture.h): parsed once for the
 * command line and the injected library, and which occurrences of a range
 * a SPEC takes. */
#include <cuproof/internal/capture.h>

#include <cuproof/error.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char forms[] = "range:NAME[@K[-L]], steps:NAME:WAIT,WARMUP,ACTIVE[,REPEAT], "
                            "profiler-api, after:SECONDS,for:SECONDS";

static int bad(char *why, size_t len, const char *spec, const char *at, const char *what)
{
    snprintf(why, len, "--capture '%s': %s at character %d (the forms: %s)", spec, what,
             (int)(at - spec) + 1, forms);
    return cp_failf(CP_EPARSE, "%s", why);
}

/* A decimal count from 0 to UINT32_MAX at *p, which moves past it. */
static bool count_at(const char **p, uint32_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    while (*s >= '0' && *s <= '9' && v <= UINT32_MAX)
        v = v * 10 + (uint64_t)(*s++ - '0');
    if (s == *p || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    *p = s;
    return true;
}

/* Decimal seconds (no sign, no exponent) at *p into ns. */
static bool seconds_at(const char **p, uint64_t *ns)
{
    const char *s = *p;
    size_t n = strspn(s, "0123456789.");
    if (n == 0 || n > 20)
        return false;
    char buf[24];
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (*end || errno || !isfinite(v) || v < 0 || v > 1e9)
        return false;
    *ns = (uint64_t)llround(v * 1e9);
    *p = s + n;
    return true;
}

/* The range's name up to `stop` characters (or the end), into out. */
static int name_at(const char *spec, const char **p, const char *stops, cp_capture *out, char *why,
                   size_t len)
{
    size_t n = strcspn(*p, stops);
    if (n == 0)
        return bad(why, len, spec, *p, "a range's name is missing");
    if (n >= sizeof out->name)
        return bad(why, len, spec, *p, "the range's name is too long");
    memcpy(out->name, *p, n);
    out->name[n] = '\0';
    *p += n;
    return 0;
}

int cp_capture_parse(const char *spec, cp_capture *out, char *why, size_t len)
{
    memset(out, 0, sizeof *out);
    if (!spec || !*spec)
        return bad(why, len, spec ? spec : "", spec ? spec : "", "nothing");
    const char *p = spec;
    if (strcmp(spec, "profiler-api") == 0) {
        out->kind = CP_CAPTURE_PROFILER;
        return 0;
    }
    if (strncmp(spec, "range:", 6) == 0) {
        out->kind = CP_CAPTURE_RANGE;
        p += 6;
        int rc = name_at(spec, &p, "@", out, why, len);
        if (rc < 0)
            return rc;
        out->first = 1;
        if (*p == '@') {
            p++;
            if (!count_at(&p, &out->first) || out->first == 0)
                return bad(why, len, spec, p, "expected an occurrence from 1 after '@'");
            out->last = out->first;
            if (*p == '-') {
                p++;
                if (!count_at(&p, &out->last))
                    return bad(why, len, spec, p, "expected the last occurrence after '-'");
                if (out->last < out->first)
                    return bad(why, len, spec, p - 1, "the last occurrence comes before the first");
            }
        }
        if (*p)
            return bad(why, len, spec, p, "unexpected text after the range");
        return 0;
    }
    if (strncmp(spec, "steps:", 6) == 0) {
        out->kind = CP_CAPTURE_STEPS;
        p += 6;
        int rc = name_at(spec, &p, ":", out, why, len);
        if (rc < 0)
            return rc;
        if (*p != ':')
            return bad(why, len, spec, p, "expected ':' and WAIT,WARMUP,ACTIVE after the name");
        p++;
        uint32_t *f[] = {&out->wait, &out->warmup, &out->active, &out->repeat};
        const char *names[] = {"WAIT", "WARMUP", "ACTIVE", "REPEAT"};
        for (int i = 0; i < 4; i++) {
            if (i == 3 && !*p)
                break;
            if (i > 0 && *p++ != ',')
                return bad(why, len, spec, p - 1, i == 3 ? "expected ',' and REPEAT, or the end"
                                                         : "expected ',' between the counts");
            if (!count_at(&p, f[i])) {
                char what[48];
                snprintf(what, sizeof what, "expected %s, a count", names[i]);
                return bad(why, len, spec, p, what);
            }
        }
        if (*p)
            return bad(why, len, spec, p, "unexpected text after the schedule");
        if (out->active == 0)
            return bad(why, len, spec, spec + 6, "ACTIVE must be at least 1: nothing would be judged");
        return 0;
    }
    if (strncmp(spec, "after:", 6) == 0) {
        out->kind = CP_CAPTURE_TIME;
        p += 6;
        if (!seconds_at(&p, &out->after_ns))
            return bad(why, len, spec, p, "expected seconds after 'after:'");
        if (strncmp(p, ",for:", 5) != 0)
            return bad(why, len, spec, p, "expected ',for:SECONDS'");
        p += 5;
        if (!seconds_at(&p, &out->for_ns) || out->for_ns == 0)
            return bad(why, len, spec, p, "expected seconds above 0 after 'for:'");
        if (*p)
            return bad(why, len, spec, p, "unexpected text after the seconds");
        return 0;
    }
    return bad(why, len, spec, spec, "not a capture form");
}

int cp_capture_takes(const cp_capture *c, uint32_t k)
{
    if (k == 0)
        return 0;
    if (c->kind == CP_CAPTURE_RANGE)
        return k >= c->first && (c->last == 0 || k <= c->last);
    if (c->kind != CP_CAPTURE_STEPS)
        return 0;
    uint64_t period = (uint64_t)c->wait + c->warmup + c->active;
    uint64_t j = k - 1, cycle = j / period, pos = j % period;
    if (c->repeat && cycle >= c->repeat)
        return 0;
    if (pos < c->wait)
        return 0;
    return pos < (uint64_t)c->wait + c->warmup ? 2 : 1;
}

bool cp_capture_more_after(const cp_capture *c, uint32_t k)
{
    if (c->kind == CP_CAPTURE_RANGE)
        return c->last == 0 || k < c->last;
    if (c->kind == CP_CAPTURE_STEPS) {
        uint64_t period = (uint64_t)c->wait + c->warmup + c->active;
        return c->repeat == 0 || (uint64_t)k < period * c->repeat;
    }
    return true;
}

void cp_capture_format(const cp_capture *c, char *out, size_t len)
{
    switch (c->kind) {
    case CP_CAPTURE_RANGE:
        if (c->first == 1 && c->last == 0)
            snprintf(out, len, "range:%s", c->name);
        else if (c->last == c->first)
            snprintf(out, len, "range:%s@%u", c->name, c->first);
        else
            snprintf(out, len, "range:%s@%u-%u", c->name, c->first, c->last);
        break;
    case CP_CAPTURE_STEPS:
        snprintf(out, len, "steps:%s:%u,%u,%u,%u", c->name, c->wait, c->warmup, c->active,
                 c->repeat);
        break;
    case CP_CAPTURE_PROFILER:
        snprintf(out, len, "profiler-api");
        break;
    case CP_CAPTURE_TIME:
        snprintf(out, len, "after:%.9g,for:%.9g", (double)c->after_ns / 1e9,
                 (double)c->for_ns / 1e9);
        break;
    default:
        snprintf(out, len, "everything");
    }
}
