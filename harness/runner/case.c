/* The registry and the functions cases call. */
#include "runner/ctx.h"

#include <cuproof/nvtx.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct entry {
    const cp_case_def *def;
    char name[64]; /* the identifier with '_' written as '-' */
} entry;

static struct {
    entry *items;
    size_t n, cap;
    bool sorted;
} reg;

void cp_registry_add(const cp_case_def *def)
{
    /* Called from constructors before main: no CUDA. A case that cannot
     * be registered is said on stderr, and `cuproof test` of it then
     * fails as an unknown case. */
    if (reg.n == reg.cap) {
        size_t cap = reg.cap ? reg.cap * 2 : 32;
        entry *p = realloc(reg.items, cap * sizeof *p);
        if (!p) {
            fprintf(stderr, "cuproof: out of memory registering case '%s'\n", def->id);
            return;
        }
        reg.items = p;
        reg.cap = cap;
    }
    entry *e = &reg.items[reg.n++];
    e->def = def;
    snprintf(e->name, sizeof e->name, "%s", def->id);
    for (char *p = e->name; *p; p++)
        if (*p == '_')
            *p = '-';
    reg.sorted = false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static void sort_registry(void)
{
    if (!reg.sorted && reg.n > 1)
        qsort(reg.items, reg.n, sizeof *reg.items, by_name);
    reg.sorted = true;
}

size_t cp_registry_count(void)
{
    return reg.n;
}

const cp_case_def *cp_registry_at(size_t i)
{
    sort_registry();
    return i < reg.n ? reg.items[i].def : NULL;
}

const char *cp_case_name(const cp_case_def *def)
{
    for (size_t i = 0; i < reg.n; i++)
        if (reg.items[i].def == def)
            return reg.items[i].name;
    return def->id;
}

const cp_case_def *cp_registry_find(const char *name)
{
    for (size_t i = 0; name && i < reg.n; i++)
        if (strcmp(reg.items[i].name, name) == 0)
            return reg.items[i].def;
    return NULL;
}

int cp_case_variant_count(const cp_case_def *def)
{
    int n = 0;
    while (def->variants && def->variants[n])
        n++;
    return n;
}

void *cp_ctx_state(const cp_ctx *ctx)
{
    return ctx->state;
}

cp_profile cp_ctx_profile(const cp_ctx *ctx)
{
    return ctx->profile;
}

const cp_env *cp_ctx_env(const cp_ctx *ctx)
{
    return ctx->env;
}

const char *cp_ctx_variant(const cp_ctx *ctx, int i)
{
    return i >= 0 && i < ctx->nvariants ? ctx->def->variants[i] : NULL;
}

const char *cp_ctx_variant_skip(const cp_ctx *ctx, int i)
{
    return i >= 0 && i < ctx->nvariants ? ctx->settings[i].skip : "";
}

void *cp_state_new(cp_ctx *ctx, size_t size)
{
    free(ctx->state);
    return ctx->state = calloc(1, size);
}

int cp_allow_mismatches(cp_ctx *ctx, int variant, double fraction, const char *reason)
{
    if (variant < 0 || variant >= ctx->nvariants || !(fraction >= 0 && fraction < 1))
        return cp_failf(CP_EINVAL, "cp_allow_mismatches: variant %d, fraction %g", variant,
                        fraction);
    cp_variant_setting *v = &ctx->settings[variant];
    v->allowed_fraction = fraction;
    snprintf(v->allowed_reason, sizeof v->allowed_reason, "%s", reason ? reason : "");
    return 0;
}

int cp_expect_leak(cp_ctx *ctx, int variant)
{
    if (variant < 0 || variant >= ctx->nvariants)
        return cp_failf(CP_EINVAL, "cp_expect_leak: variant %d", variant);
    ctx->settings[variant].expect_leak = true;
    return 0;
}

int cp_skip_variant(cp_ctx *ctx, int variant, const char *reason)
{
    if (variant < 0 || variant >= ctx->nvariants || !reason || !*reason)
        return cp_failf(CP_EINVAL, "cp_skip_variant: variant %d needs a reason", variant);
    snprintf(ctx->settings[variant].skip, sizeof ctx->settings[variant].skip, "%s", reason);
    return 0;
}

int cp_time_wall(cp_ctx *ctx, int variant, const char *why)
{
    if (variant < -1 || variant >= ctx->nvariants || !why || !*why)
        return cp_failf(CP_EINVAL, "cp_time_wall: variant %d needs a reason", variant);
    for (int i = variant < 0 ? 0 : variant; i < (variant < 0 ? ctx->nvariants : variant + 1); i++) {
        snprintf(ctx->settings[i].figure_why, sizeof ctx->settings[i].figure_why, "%s", why);
    }
    return 0;
}

int cp_time_gated(cp_ctx *ctx, int variant)
{
    if (variant < -1 || variant >= ctx->nvariants)
        return cp_failf(CP_EINVAL, "cp_time_gated: variant %d", variant);
    for (int i = variant < 0 ? 0 : variant; i < (variant < 0 ? ctx->nvariants : variant + 1); i++)
        ctx->settings[i].gated = true;
    return 0;
}

int cp_time_streams(cp_ctx *ctx, void *const *streams, size_t n)
{
    if (n > CP_TIME_MAX_STREAMS || (n && !streams))
        return cp_failf(CP_EINVAL, "cp_time_streams: %zu streams, at most %d", n,
                        CP_TIME_MAX_STREAMS);
    for (size_t i = 0; i < n; i++)
        ctx->streams[i] = streams[i];
    ctx->nstreams = n;
    return 0;
}

int cp_skip(cp_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->result->skip_reason, sizeof ctx->result->skip_reason, fmt, ap);
    va_end(ap);
    return CP_ESKIP;
}

static cp_check_result *new_check(cp_ctx *ctx, const char *name, const char *expected)
{
    cp_case_result *r = ctx->result;
    cp_check_result *c = cp_result_add_check(r);
    if (!c) {
        /* A check that could not be recorded must not pass silently. */
        r->status = CP_STATUS_FAILED;
        snprintf(r->error, sizeof r->error, "out of memory; check '%s' was not recorded", name);
        return NULL;
    }
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->expected, sizeof c->expected, "%s", expected);
    return c;
}

static void judge(cp_check_result *c, bool ok, const char *measured, va_list ap)
{
    c->status = ok ? CP_CHECK_PASSED : CP_CHECK_FAILED;
    vsnprintf(c->measured, sizeof c->measured, measured, ap);
}

void cp_check(cp_ctx *ctx, const char *name, bool ok, const char *expected, const char *measured,
              ...)
{
    cp_check_result *c = new_check(ctx, name, expected);
    if (!c)
        return;
    va_list ap;
    va_start(ap, measured);
    judge(c, ok, measured, ap);
    va_end(ap);
}

static cp_check_result *skip_check(cp_ctx *ctx, const char *name, const char *expected,
                                   const char *reason)
{
    cp_check_result *c = new_check(ctx, name, expected);
    if (!c)
        return NULL;
    c->status = CP_CHECK_SKIPPED;
    snprintf(c->skip_reason, sizeof c->skip_reason, "%s", reason);
    snprintf(c->measured, sizeof c->measured, "not measured");
    return c;
}

void cp_check_skip(cp_ctx *ctx, const char *name, const char *expected, const char *reason)
{
    skip_check(ctx, name, expected, reason);
}

void cp_check_trace(cp_ctx *ctx, const char *variant, const char *name, bool ok,
                    const char *expected, const char *measured, ...)
{
    const cp_variant_result *v = cp_variant_result_get(ctx, variant);
    if (!v || !v->traced) {
        const char *why = "";
        for (size_t i = 0; !v && i < ctx->result->nvariants; i++)
            if (strcmp(ctx->result->variants[i].name, variant) == 0)
                why = ctx->result->variants[i].skip_reason;
        char reason[sizeof ((cp_check_result *)0)->skip_reason];
        snprintf(reason, sizeof reason, "variant '%s' %s%s%s", variant,
                 v ? "ran untraced: " : "did not run", !v && *why ? ": " : "",
                 v ? v->untraced_reason : why);
        cp_check_result *c = skip_check(ctx, name, expected, reason);
        if (c && v && ctx->opts && !ctx->opts->trace)
            c->skipped_on_request = true;
        return;
    }
    cp_check_result *c = new_check(ctx, name, expected);
    if (!c)
        return;
    va_list ap;
    va_start(ap, measured);
    judge(c, ok, measured, ap);
    va_end(ap);
}

int cp_param_int(cp_ctx *ctx, const char *name, long def, long lo, long hi, long *out)
{
    /* What it reads is what it declared: `run` checked the overrides
     * against the declaration before anything ran (cp_case_check_params). */
    const cp_param_def *d = ctx->def->params;
    while (d && d->name && strcmp(d->name, name) != 0)
        d++;
    if (!d || !d->name || d->lo != lo || d->hi != hi)
        return cp_failf(CP_EINVAL, "case %s reads parameter %s (%ld to %ld), which its .params "
                                   "does not declare so (CP_PARAMS({\"%s\", %ld, %ld}))",
                        cp_case_name(ctx->def), name, lo, hi, name, lo, hi);
    size_t len = strlen(name), used = strlen(ctx->param_names);
    snprintf(ctx->param_names + used, sizeof ctx->param_names - used, "%s%s", used ? ", " : "",
             name);
    *out = def;
    bool overridden = false;
    for (size_t i = 0; ctx->opts && i < ctx->opts->nparams; i++) {
        const char *p = ctx->opts->params[i];
        if (strncmp(p, name, len) != 0 || p[len] != '=')
            continue;
        char *end = NULL;
        errno = 0;
        long v = strtol(p + len + 1, &end, 10);
        if (ctx->param_read)
            ctx->param_read[i] = true;
        if (end == p + len + 1 || *end || errno || v < lo || v > hi)
            return cp_failf(CP_EINVAL, "parameter %s: '%s' is not an integer from %ld to %ld",
                            name, p + len + 1, lo, hi);
        *out = v;
        overridden = true;
    }
    char *list = ctx->result->params;
    used = strlen(list);
    snprintf(list + used, sizeof ctx->result->params - used, "%s%s=%ld%s", used ? " " : "", name,
             *out, overridden ? "*" : "");
    return 0;
}

int cp_essential(cp_ctx *ctx, const char *name)
{
    int marked = 0;
    for (size_t i = 0; i < ctx->result->nchecks; i++)
        if (strcmp(ctx->result->checks[i].name, name) == 0) {
            ctx->result->checks[i].essential = true;
            marked++;
        }
    return marked;
}

const cp_variant_result *cp_variant_result_get(const cp_ctx *ctx, const char *variant)
{
    for (size_t i = 0; i < ctx->result->nvariants; i++)
        if (strcmp(ctx->result->variants[i].name, variant) == 0 && ctx->result->variants[i].ran)
            return &ctx->result->variants[i];
    return NULL;
}

const cp_activity *cp_variant_last_kernel(const cp_ctx *ctx, const char *variant)
{
    const cp_variant_result *v = cp_variant_result_get(ctx, variant);
    const cp_activity *k = NULL;
    for (size_t a = 0; v && v->traced && a < v->trace.n; a++)
        if (v->trace.items[a].kind == CP_ACT_KERNEL)
            k = &v->trace.items[a];
    return k;
}

int cp_variant_events(const cp_ctx *ctx, const char *variant, const char *kernel,
                      cp_event_agreement *a)
{
    memset(a, 0, sizeof *a);
    const cp_variant_result *v = cp_variant_result_get(ctx, variant);
    const cp_series *ev = v ? cp_series_find(v->series, v->nseries, "event_ms") : NULL;
    if (!v || !v->traced || !ev)
        return cp_failf(CP_ENOENT, "variant %s has no traced event times", variant);
    return cp_events_against_trace(&v->trace, kernel, ev->values, ev->n, CP_EVENT_TOLERANCE, a);
}

void cp_keep_least(double *slot, double value)
{
    if (*slot == 0 || value < *slot)
        *slot = value;
}

double cp_variant_median_ms(const cp_ctx *ctx, const char *variant)
{
    const cp_variant_result *v = cp_variant_result_get(ctx, variant);
    return v && v->timing.runs > 0 ? v->timing.median_ms : -1.0;
}

/* A claim recorded with its reason formatted from `ap`; NULL (and the
 * case failed, saying so) when memory ran out. */
static cp_claim_result *claim_v(cp_ctx *ctx, const char *text, const char *source,
                                const char *claimed, const char *measured, cp_verdict verdict,
                                const char *reason, va_list ap)
{
    cp_case_result *r = ctx->result;
    cp_claim_result *c = cp_result_add_claim(r);
    if (!c) {
        r->status = CP_STATUS_FAILED;
        snprintf(r->error, sizeof r->error, "out of memory; a claim was not recorded");
        return NULL;
    }
    snprintf(c->text, sizeof c->text, "%s", text);
    snprintf(c->source, sizeof c->source, "%s", source);
    snprintf(c->claimed, sizeof c->claimed, "%s", claimed);
    snprintf(c->measured, sizeof c->measured, "%s", measured);
    c->verdict = verdict;
    vsnprintf(c->reason, sizeof c->reason, reason, ap);
    return c;
}

void cp_claim_add(cp_ctx *ctx, const char *text, const char *source, const char *claimed,
                  const char *measured, cp_verdict verdict, const char *reason, ...)
{
    va_list ap;
    va_start(ap, reason);
    claim_v(ctx, text, source, claimed, measured, verdict, reason, ap);
    va_end(ap);
}

void cp_claim_measure(cp_ctx *ctx, const char *text, const char *source, const char *claimed,
                      const cp_claim_window *w, double value, const char *measured,
                      const char *reason, ...)
{
    va_list ap;
    va_start(ap, reason);
    cp_claim_result *c =
        claim_v(ctx, text, source, claimed, measured, cp_claim_judge(w, value), reason, ap);
    va_end(ap);
    if (!c)
        return;
    c->has_window = true;
    c->window = *w;
    c->value = value;
}

void cp_figure_add(cp_ctx *ctx, const char *name, double value, const char *unit)
{
    cp_case_result *r = ctx->result;
    cp_figure *f = cp_result_add_figure(r);
    if (!f)
        return; /* a figure is shown, never checked: losing one fails nothing */
    snprintf(f->name, sizeof f->name, "%s", name);
    snprintf(f->unit, sizeof f->unit, "%s", unit);
    f->value = value;
}

void cp_phase_begin(cp_ctx *ctx, const char *phase)
{
    ctx->open_phases++;
    cp_nvtx_push("%s", phase);
}

void cp_phase_end(cp_ctx *ctx)
{
    if (ctx->open_phases == 0)
        return;
    ctx->open_phases--;
    cp_nvtx_pop();
}

int cp_series_set(cp_ctx *ctx, const cp_variant *v, const char *name, const char *unit,
                  const double *values, size_t n)
{
    cp_case_result *r = ctx->result;
    for (size_t i = 0; i < r->nvariants; i++)
        if (strcmp(r->variants[i].name, v->name) == 0)
            return cp_series_store(&r->variants[i].series, &r->variants[i].nseries,
                                   &r->variants[i].series_cap, name, unit, values, n);
    return cp_failf(CP_EINVAL, "series %s: variant %s is not running", name, v->name);
}
