/* The session: one report, built case by case, handed to every sink. */
#include <cuproof/session.h>

#include <cuproof/error.h>
#include <cuproof/report.h>
#include <cuproof/version.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct cp_session {
    cp_report report;
    size_t cap;
    cp_sink *sinks;
    size_t nsinks;
};

cp_session *cp_session_new(void)
{
    cp_session *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    snprintf(s->report.tool_version, sizeof s->report.tool_version, "%s", cp_version());
    time_t now = time(NULL);
    strftime(s->report.date, sizeof s->report.date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    return s;
}

cp_report *cp_session_report(cp_session *s)
{
    return &s->report;
}

int cp_session_add_sink(cp_session *s, cp_sink sink)
{
    if (!sink.name) {
        if (sink.release)
            sink.release(sink.data);
        return cp_failf(CP_EINVAL, "a sink could not be made (out of memory)");
    }
    cp_sink *p = realloc(s->sinks, (s->nsinks + 1) * sizeof *p);
    if (!p) {
        if (sink.release)
            sink.release(sink.data);
        return cp_failf(CP_ENOMEM, "out of memory adding sink %s", sink.name);
    }
    s->sinks = p;
    s->sinks[s->nsinks++] = sink;
    return 0;
}

int cp_session_add_case(cp_session *s, cp_case_result *c)
{
    cp_report *r = &s->report;
    if (r->ncases == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        cp_case_result *p = realloc(r->cases, cap * sizeof *p);
        if (!p) {
            cp_case_result_free(c);
            return cp_failf(CP_ENOMEM, "out of memory adding case %s", c->name);
        }
        r->cases = p;
        s->cap = cap;
    }
    cp_case_result *kept = &r->cases[r->ncases++];
    *kept = *c;
    memset(c, 0, sizeof *c);
    int first = 0;
    for (size_t i = 0; i < s->nsinks; i++) {
        int rc = s->sinks[i].add_case ? s->sinks[i].add_case(s->sinks[i].data, r, kept) : 0;
        if (rc < 0 && first == 0)
            first = rc;
    }
    return first;
}

void cp_session_counts(const cp_session *s, size_t *passed, size_t *failed, size_t *skipped,
                       size_t *inconclusive)
{
    *passed = *failed = *skipped = *inconclusive = 0;
    for (size_t i = 0; i < s->report.ncases; i++) {
        *passed += s->report.cases[i].status == CP_STATUS_PASSED;
        *failed += s->report.cases[i].status == CP_STATUS_FAILED;
        *skipped += s->report.cases[i].status == CP_STATUS_SKIPPED;
        *inconclusive += s->report.cases[i].status == CP_STATUS_INCONCLUSIVE;
    }
}

int cp_session_close(cp_session *s)
{
    int first = 0;
    for (size_t i = 0; i < s->nsinks; i++) {
        int rc = s->sinks[i].close ? s->sinks[i].close(s->sinks[i].data, &s->report) : 0;
        if (rc < 0 && first == 0)
            first = rc;
    }
    return first;
}

void cp_session_free(cp_session *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nsinks; i++)
        if (s->sinks[i].release)
            s->sinks[i].release(s->sinks[i].data);
    for (size_t i = 0; i < s->report.ncases; i++)
        cp_case_result_free(&s->report.cases[i]);
    free(s->report.cases);
    free(s->sinks);
    free(s);
}

/* ---- built-in sinks ---- */

static int report_close(void *data, const cp_report *r)
{
    return cp_report_write(r, data);
}

static void free_data(void *data)
{
    free(data);
}

/* A sink whose data is a copy of `dir`; a NULL name when out of memory. */
static cp_sink dir_sink(const char *name, const char *dir,
                        int (*add_case)(void *, const cp_report *, const cp_case_result *),
                        int (*close)(void *, const cp_report *))
{
    char *copy = strdup(dir);
    return (cp_sink){.name = copy ? name : NULL, .add_case = add_case, .close = close,
                     .release = free_data, .data = copy};
}

cp_sink cp_sink_report(const char *dir)
{
    return dir_sink("report", dir, NULL, report_close);
}

static int traces_add_case(void *data, const cp_report *r, const cp_case_result *c)
{
    const char *dir = data;
    bool traced = false;
    for (size_t v = 0; v < c->nvariants; v++)
        traced = traced || c->variants[v].traced;
    if (!traced)
        return 0;
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/%s.trace.json", dir, c->name);
    int first = cp_trace_file_write(c, c->gpu_name[0] ? c->gpu_name : r->env.gpu_name, path);
    for (size_t v = 0; v < c->nvariants; v++) {
        if (!c->variants[v].traced)
            continue;
        int rc = cp_perfetto_write(dir, c->name, c->variants[v].name, &c->variants[v].trace);
        if (rc < 0 && first == 0)
            first = rc;
    }
    return first;
}

cp_sink cp_sink_traces(const char *dir)
{
    return dir_sink("traces", dir, traces_add_case, NULL);
}

typedef struct progress {
    FILE *out;
    size_t done, total;
} progress;

static int progress_add_case(void *data, const cp_report *r, const cp_case_result *c)
{
    progress *p = data;
    FILE *out = p->out;
    (void)r;
    fprintf(out, "[%zu/%zu] %-7s %-28s ", ++p->done, p->total, cp_status_name(c->status),
            c->name);
    if (c->gpu_name[0] && c->status != CP_STATUS_SKIPPED)
        fprintf(out, "GPU %d  ", c->device);
    if (c->status == CP_STATUS_SKIPPED || c->status == CP_STATUS_INCONCLUSIVE)
        fprintf(out, "(%s)", c->skip_reason);
    else if (c->error[0])
        fprintf(out, "(%s)", c->error);
    else if (c->nfigures)
        fprintf(out, "%s %.4g %s", c->figures[c->nfigures - 1].name,
                c->figures[c->nfigures - 1].value, c->figures[c->nfigures - 1].unit);
    for (size_t k = 0; k < c->nchecks; k++)
        if (c->checks[k].status == CP_CHECK_FAILED)
            fprintf(out, "\n        check failed: %s: expected %s, measured %s", c->checks[k].name,
                    c->checks[k].expected, c->checks[k].measured);
    fprintf(out, "\n");
    fflush(out);
    return 0;
}

cp_sink cp_sink_progress(FILE *out, size_t total)
{
    progress *p = calloc(1, sizeof *p);
    if (p) {
        p->out = out;
        p->total = total;
    }
    return (cp_sink){.name = p ? "progress" : NULL, .add_case = progress_add_case,
                     .release = free_data, .data = p};
}
