/*
 * Units and names as people read them (cuproof/units.h): durations,
 * ratios, shares, counts, figure names, CUDA API names and stream labels,
 * one rule each, for every output a person reads.
 */
#include <cuproof/units.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Decimals that leave `sig` significant digits of v (v >= 1 shows at
 * most sig decimals and at least none). */
static int decimals_of(double v, int sig)
{
    int d = sig - 1 - (int)floor(log10(v));
    return d < 0 ? 0 : d > sig ? sig : d;
}

static int decimals(double v)
{
    return decimals_of(v, 3);
}

static const struct {
    double per_ms;
    const char *unit;
} time_units[] = {{1e6, "ns"}, {1e3, "µs"}, {1, "ms"}, {1e-3, "s"}};
enum { NTIME_UNITS = sizeof time_units / sizeof time_units[0] };

/* The unit a duration is shown in with `sig` digits, and its decimals
 * there. */
static size_t time_unit(double ms, int sig, int *dec)
{
    size_t u = 0;
    /* The largest unit in which the value is at least 1 after rounding
     * (999.96 µs reads 1.00 ms, not 1000 µs). */
    double least = 1 - 0.5 * pow(10, -sig);
    while (u + 1 < NTIME_UNITS && ms * time_units[u + 1].per_ms >= least)
        u++;
    *dec = decimals_of(fmax(ms * time_units[u].per_ms, 1), sig);
    return u;
}

/* cp_fmt_ms with `sig` significant digits; the value shown, in ms, into
 * *shown when not NULL. */
static char *fmt_ms(double ms, int sig, char *buf, size_t size, double *shown)
{
    if (shown)
        *shown = ms;
    if (!isfinite(ms) || ms < 0) {
        snprintf(buf, size, "-");
        return buf;
    }
    if (ms == 0) {
        snprintf(buf, size, "0 ms");
        return buf;
    }
    int dec;
    size_t u = time_unit(ms, sig, &dec);
    double v = ms * time_units[u].per_ms, scale = pow(10, dec);
    if (shown)
        *shown = round(v * scale) / scale / time_units[u].per_ms;
    snprintf(buf, size, "%.*f %s", dec, v, time_units[u].unit);
    return buf;
}

char *cp_fmt_ms(double ms, char *buf, size_t size)
{
    return fmt_ms(ms, 3, buf, size, NULL);
}

double cp_fmt_ms_shown(double ms)
{
    char b[32];
    double shown;
    fmt_ms(ms, 3, b, sizeof b, &shown);
    return shown;
}

char *cp_fmt_percent(double share, char *buf, size_t size)
{
    double p = 100 * share;
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

/* The decimals cp_fmt_times shows x with: three significant digits. */
static int times_decimals(double x)
{
    return x >= 1 ? decimals(x) : 2 - (int)floor(log10(x));
}

char *cp_fmt_times(double x, char *buf, size_t size)
{
    if (!isfinite(x) || x < 0)
        snprintf(buf, size, "-");
    else if (x == 0)
        snprintf(buf, size, "0×");
    else
        snprintf(buf, size, "%.*f×", times_decimals(x), x);
    return buf;
}

void cp_fmt_ms_pair(double num_ms, double den_ms, int ratio_decimals, char *a, char *b,
                    size_t tsize)
{
    double scale = pow(10, ratio_decimals), want = round(num_ms / den_ms * scale);
    /* Enough digits in the times that their ratio, recomputed from what
     * is shown, is the ratio shown: "0.84x (0.004 ms against 0.003 ms)"
     * could not be checked. Three digits mostly do; up to seven are
     * tried. */
    for (int sig = 3; sig <= 7; sig++) {
        double sa, sb;
        fmt_ms(num_ms, sig, a, tsize, &sa);
        fmt_ms(den_ms, sig, b, tsize, &sb);
        if (!(sb > 0) || round(sa / sb * scale) == want)
            break;
    }
}

double cp_fmt_ratio_of(double num_ms, double den_ms, char *x, size_t xsize, char *a, char *b,
                       size_t tsize)
{
    double r = num_ms / den_ms;
    cp_fmt_times(r, x, xsize);
    if (isfinite(r) && r > 0)
        cp_fmt_ms_pair(num_ms, den_ms, times_decimals(r), a, b, tsize);
    else {
        cp_fmt_ms(num_ms, a, tsize);
        cp_fmt_ms(den_ms, b, tsize);
    }
    return r;
}

/* Plural and singular of the count units that cuproof writes. */
static const char *const plural[][2] = {
    {"kernels", "kernel"}, {"copies", "copy"},   {"memsets", "memset"},
    {"gaps", "gap"},       {"devices", "device"}, {"ranks", "rank"},
    {"hosts", "host"},     {"launches", "launch"}, {"collectives", "collective"},
    {"nodes", "node"},     {"pixels", "pixel"},  {"checks", "check"},
    {"variants", "variant"}, {"runs", "run"},    {"values", "value"},
    {"cases", "case"},     {"claims", "claim"},  {"records", "record"},
    {"lanes", "lane"},     {"contexts", "context"}, {"streams", "stream"},
    {"threads", "thread"}, {"processes", "process"}, {"samples", "sample"},
    {"passes", "pass"},    {"buffers", "buffer"}, {"API calls", "API call"},
    {"call kinds", "call kind"}};

const char *cp_unit_agree(const char *unit, double count)
{
    for (size_t i = 0; unit && count == 1 && i < sizeof plural / sizeof plural[0]; i++)
        if (strcmp(unit, plural[i][0]) == 0)
            return plural[i][1];
    return unit ? unit : "";
}

char *cp_fmt_count(double count, const char *unit, char *buf, size_t size)
{
    const char *u = cp_unit_agree(unit, count);
    snprintf(buf, size, "%.0f%s%s", count, *u ? " " : "", u);
    return buf;
}

char *cp_fmt_bytes(double bytes, char *buf, size_t size)
{
    static const struct {
        double scale;
        const char *unit;
    } u[] = {{1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        if (bytes >= u[i].scale) {
            snprintf(buf, size, "%.3g %s", bytes / u[i].scale, u[i].unit);
            return buf;
        }
    snprintf(buf, size, "%.0f B", bytes);
    return buf;
}

static bool is_time_unit(const char *unit, double *per_ms)
{
    static const struct {
        const char *unit;
        double ms;
    } t[] = {{"ns", 1e-6}, {"us", 1e-3}, {"µs", 1e-3}, {"ms", 1}, {"s", 1e3}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(unit, t[i].unit) == 0) {
            *per_ms = t[i].ms;
            return true;
        }
    return false;
}

static bool is_count_unit(const char *unit)
{
    for (size_t i = 0; i < sizeof plural / sizeof plural[0]; i++)
        if (strcmp(unit, plural[i][0]) == 0)
            return true;
    return false;
}

char *cp_fmt_value(double v, const char *unit, char *buf, size_t size)
{
    double ms;
    unit = unit ? unit : "";
    if (!isfinite(v))
        snprintf(buf, size, "-");
    else if (is_time_unit(unit, &ms))
        cp_fmt_ms(v * ms, buf, size);
    else if (strcmp(unit, "x") == 0)
        cp_fmt_times(v, buf, size);
    else if ((strcmp(unit, "ratio") == 0 || strcmp(unit, "fraction") == 0) && v <= 1)
        cp_fmt_percent(v, buf, size); /* a share */
    else if (strcmp(unit, "ratio") == 0 || strcmp(unit, "fraction") == 0)
        snprintf(buf, size, "%.*f", decimals(v), v); /* no share: a plain number */
    else if (is_count_unit(unit) || (v == floor(v) && fabs(v) < 1e15))
        cp_fmt_count(v, unit, buf, size);
    else if (v == 0)
        snprintf(buf, size, "0%s%s", *unit ? " " : "", unit);
    else
        snprintf(buf, size, "%.*f%s%s", decimals(fmax(fabs(v), 1)), v, *unit ? " " : "", unit);
    return buf;
}

char *cp_fmt_copy_overlap(bool copies, double ratio, bool its, char *buf, size_t size)
{
    char pc[24];
    if (copies)
        snprintf(buf, size, "copies overlapped kernels for %s of %scopy time",
                 cp_fmt_percent(ratio, pc, sizeof pc), its ? "its " : "");
    else
        snprintf(buf, size, "no copies");
    return buf;
}

char *cp_fmt_fraction(double share, char *buf, size_t size)
{
    /* Six digits keep the value an expectation was judged on; the
     * percentage is what a reader takes in. */
    snprintf(buf, size, "%.6g (%.3g%%)", share, 100 * share);
    return buf;
}

const char *cp_measured_label(const char *text)
{
    static const char *const none[] = {"not measured", "not judged", "not checked"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (strncmp(text, none[i], strlen(none[i])) == 0)
            return "";
    return "measured ";
}

char *cp_fmt_measured(const char *text, char *buf, size_t size)
{
    char unit[32];
    double v;
    int end = 0;
    if (sscanf(text, "%lf %31[a-z]%n", &v, unit, &end) == 2 && text[end] == '\0' &&
        isfinite(v)) {
        if (strcmp(unit, "ratio") == 0)
            return cp_fmt_fraction(v, buf, size);
        if (is_count_unit(unit) && v == floor(v))
            return cp_fmt_count(v, unit, buf, size);
    }
    /* Elsewhere in the text, a count of one agrees with its unit: "1
     * contexts, 1 lanes" is "1 context, 1 lane". */
    size_t o = 0;
    for (const char *p = text; *p && o + 1 < size;) {
        bool alone = (p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '.' ||
                                     p[-1] == '/' || p[-1] == '-'));
        if (alone && p[0] == '1' && p[1] == ' ') {
            size_t n = 0;
            while (isalpha((unsigned char)p[2 + n]))
                n++;
            char word[32];
            if (n > 0 && n < sizeof word) {
                memcpy(word, p + 2, n);
                word[n] = '\0';
                const char *one = cp_unit_agree(word, 1);
                if (one != word && !isalnum((unsigned char)p[2 + n])) {
                    int w = snprintf(buf + o, size - o, "1 %s", one);
                    o += w > 0 ? (size_t)w : 0;
                    o = o < size ? o : size - 1;
                    p += 2 + n;
                    continue;
                }
            }
        }
        buf[o++] = *p++;
    }
    buf[o < size ? o : size - 1] = '\0';
    return buf;
}

char *cp_fmt_figure_name(const char *name, const char *unit, char *buf, size_t size)
{
    snprintf(buf, size, "%s", name ? name : "");
    size_t nu = unit ? strlen(unit) : 0, n = strlen(buf);
    if (!nu || strcmp(unit, "x") == 0)
        return buf;
    /* The unit as a word of its own: at the end ("... ms"), or before
     * "per" ("ns per generation"). */
    for (char *p = buf; (p = strstr(p, unit)) != NULL; p++) {
        bool word_start = p > buf && p[-1] == ' ';
        bool at_end = p[nu] == '\0', before_word = p[nu] == ' ';
        if (!word_start || !(at_end || before_word))
            continue;
        memmove(p - 1, p + nu, n - (size_t)(p + nu - buf) + 1);
        break;
    }
    return buf;
}

size_t cp_api_name_len(const char *name)
{
    if (!name)
        return 0;
    size_t n = strlen(name), k = n;
    while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
        k--;
    /* "_v" then one digit or more, and something before it. */
    if (k < n && k >= 3 && name[k - 1] == 'v' && name[k - 2] == '_')
        return k - 2;
    return n;
}

const char *cp_activity_label(const cp_activity *a, size_t *len)
{
    const char *s = a->kind == CP_ACT_MEMCPY ? cp_copy_dir_name(a->copy_dir) : a->name;
    if (!s)
        s = "";
    *len = a->kind == CP_ACT_RUNTIME ? cp_api_name_len(s) : strlen(s);
    return s;
}

const char *cp_activity_label_str(const cp_activity *a, char *buf, size_t size)
{
    size_t len;
    const char *s = cp_activity_label(a, &len);
    if (s[len] == '\0')
        return s;
    snprintf(buf, size, "%.*s", (int)len, s);
    return buf;
}

char *cp_stream_label(const cp_trace *t, uint32_t process, uint32_t device, uint32_t context,
                      uint32_t stream, char *buf, size_t size)
{
    char number[32];
    if (t && t->has_legacy_stream && t->legacy_device == device &&
        t->legacy_context == context && t->legacy_stream == stream)
        snprintf(number, sizeof number, "default stream");
    else
        snprintf(number, sizeof number, "stream %u", stream);
    const char *name = cp_trace_stream_name(t, process, device, context, stream);
    if (!name) {
        snprintf(buf, size, "%s", number);
        return buf;
    }
    /* The name gives way to the number: "NAME (" + number + ")". */
    size_t keep = strlen(number) + 3;
    size_t room = size > keep ? size - 1 - keep : 0;
    /* A cut name ends on a whole UTF-8 character, so that the JSON and
     * HTML writers get valid text. */
    if (strlen(name) > room)
        while (room > 0 && ((unsigned char)name[room] & 0xC0) == 0x80)
            room--;
    snprintf(buf, size, "%.*s (%s)", (int)room, name, number);
    return buf;
}
