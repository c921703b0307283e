/* The session: one report, built case by case, handed to every sink. */
#include <cuproof/internal/tracefile.h>
#include <cuproof/internal/perfetto.h>
#include <cuproof/internal/session.h>

#include <cuproof/error.h>
#include "headline.h"
#include <cuproof/internal/report.h>
#include <cuproof/version.h>

#include "jobs.h"
#include "progress_sink.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

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

void cp_session_on_run(cp_session *s, const cp_run_progress *p)
{
    for (size_t i = 0; i < s->nsinks; i++)
        if (s->sinks[i].on_run)
            s->sinks[i].on_run(s->sinks[i].data, p);
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

void cp_session_print_counts(const cp_session *s, const char *out_dir, FILE *f)
{
    size_t np, nf, ns, ni;
    cp_session_counts(s, &np, &nf, &ns, &ni);
    size_t all = np + nf + ns + ni;
    fprintf(f, "cuproof: %zu case%s: %zu passed, %zu failed, %zu inconclusive, %zu skipped",
            all, all == 1 ? "" : "s", np, nf, ni, ns);
    if (out_dir)
        fprintf(f, "; report in %s/report.json and %s/report.html", out_dir, out_dir);
    fprintf(f, "\n");
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

/* One of the report's two files. */
typedef struct report_file {
    const cp_report *r;
    char path[4096];
    int (*write)(const cp_report *r, const char *path);
} report_file;

static int write_report_file(void *ctx)
{
    report_file *f = ctx;
    return f->write(f->r, f->path);
}

/* report.json (json.c) and report.html (html.c), each written by its
 * own format, side by side (jobs.h: they only read the report); the sink
 * is where the two meet. */
int cp_report_write(const cp_report *r, const char *dir)
{
    report_file files[2] = {{r, "", cp_report_json_write}, {r, "", cp_report_html_write}};
    snprintf(files[0].path, sizeof files[0].path, "%s/report.json", dir);
    snprintf(files[1].path, sizeof files[1].path, "%s/report.html", dir);
    cp_job jobs[2] = {{.run = write_report_file, .ctx = &files[0]},
                      {.run = write_report_file, .ctx = &files[1]}};
    return cp_jobs_run(jobs, 2);
}

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

/* A case's trace files: the merged trace file, and the Perfetto file of
 * each variant whose records were kept. */
typedef struct case_traces {
    const char *dir, *device;
    const cp_case_result *c;
} case_traces;

static int write_trace_file(void *ctx)
{
    const case_traces *t = ctx;
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/%s.trace.json", t->dir, t->c->name);
    return cp_trace_file_write(t->c, t->device, path);
}

static int write_perfetto_files(void *ctx)
{
    const case_traces *t = ctx;
    const cp_case_result *c = t->c;
    int first = 0;
    for (size_t v = 0; v < c->nvariants; v++) {
        if (!c->variants[v].traced || c->variants[v].summary)
            continue;
        int rc =
            cp_perfetto_write_auto(t->dir, c->name, c->variants[v].name, &c->variants[v].trace);
        if (rc < 0 && first == 0)
            first = rc;
    }
    return first;
}

/* A variant whose records were streamed (v->summary) has its files
 * written already, by whoever streamed them: only kept records are
 * written here, the trace file beside the Perfetto files (jobs.h: both
 * only read the case; each names the file it could not write). */
static int traces_add_case(void *data, const cp_report *r, const cp_case_result *c)
{
    bool kept = false;
    for (size_t v = 0; v < c->nvariants; v++)
        kept = kept || (c->variants[v].traced && !c->variants[v].summary);
    if (!kept)
        return 0;
    case_traces t = {data, c->gpu_name[0] ? c->gpu_name : r->env.gpu_name, c};
    cp_job jobs[2] = {{.run = write_trace_file, .ctx = &t},
                      {.run = write_perfetto_files, .ctx = &t}};
    return cp_jobs_run(jobs, 2);
}

cp_sink cp_sink_traces(const char *dir)
{
    return dir_sink("traces", dir, traces_add_case, NULL);
}

typedef struct progress {
    FILE *out;
    size_t done, total;
    progress_style style;
    /* The terminal's line: whether one is shown, and the variant (-1: none
     * yet in the case under way), phase and variant time it was last drawn
     * for, which decide when it is drawn again. */
    bool shown;
    int drawn_variant;
    char drawn_phase[16];
    double drawn_at_s;
} progress;

/* A variant's one line in plain output: how many timed runs it made, how
 * long it took in all (warm-up and traced run included) and what ended the
 * timed runs, as the report records it in timing.stopped_by. */
static void progress_slow_variant(progress *p, const cp_run_progress *r)
{
    const cp_variant_result *v = r->result;
    fprintf(p->out, "[%zu/%zu] %s  %s: %zu timed run%s in %.1f s (", p->done + 1, p->total,
            r->case_name, r->variant, v->nsamples, v->nsamples == 1 ? "" : "s", r->elapsed_s);
    if (strcmp(v->stopped_by, "fixed") == 0)
        fprintf(p->out, "a fixed count)\n");
    else
        fprintf(p->out, "stopped by %s)\n", v->stopped_by);
    fflush(p->out);
}

static void progress_on_run(void *data, const cp_run_progress *r)
{
    progress *p = data;
    if (strcmp(r->phase, "done") == 0) {
        if (!p->style.terminal && r->result && r->elapsed_s > p->style.slow_s)
            progress_slow_variant(p, r);
        return;
    }
    if (!p->style.terminal)
        return;
    /* The hook is called before each run, and nothing redraws the line
     * while a run goes on: a new variant or phase is always drawn, so that
     * a long first run does not sit under the previous one's line. */
    bool fresh = r->variant_index != p->drawn_variant || strcmp(r->phase, p->drawn_phase) != 0;
    if (!fresh && r->elapsed_s - p->drawn_at_s < p->style.interval_s)
        return;
    char line[512];
    snprintf(line, sizeof line, "[%zu/%zu] %s  %s (%d/%d)  %s run %d/%d  %.1f s", p->done + 1,
             p->total, r->case_name, r->variant, r->variant_index + 1, r->nvariants, r->phase,
             r->run, r->max_runs, r->elapsed_s);
    if (p->style.width > 1 && strlen(line) >= (size_t)p->style.width)
        line[p->style.width - 1] = '\0';
    fprintf(p->out, "\r%s\033[K", line);
    fflush(p->out);
    p->shown = true;
    p->drawn_variant = r->variant_index;
    snprintf(p->drawn_phase, sizeof p->drawn_phase, "%s", r->phase);
    p->drawn_at_s = r->elapsed_s;
}

static int progress_add_case(void *data, const cp_report *r, const cp_case_result *c)
{
    progress *p = data;
    FILE *out = p->out;
    /* The case's line replaces its progress, so that what stays on the
     * terminal is the same as without it. */
    if (p->shown)
        fprintf(out, "\r\033[K");
    p->shown = false;
    p->drawn_variant = -1;
    fprintf(out, "[%zu/%zu] %-7s %-28s ", ++p->done, p->total, cp_status_name(c->status),
            c->name);
    /* A replay runs on no GPU: it names the one the case was recorded on. */
    if (c->gpu_name[0] && c->status != CP_STATUS_SKIPPED)
        fprintf(out, r && r->replayed_from[0] ? "recorded on GPU %d  " : "GPU %d  ", c->device);
    if (c->status == CP_STATUS_SKIPPED || c->status == CP_STATUS_INCONCLUSIVE)
        fprintf(out, "(%s)", c->skip_reason);
    else if (c->error[0])
        fprintf(out, "(%s)", c->error);
    else if (c->nfigures) {
        /* Through the one table of units (cuproof/units.h): "launch call
         * 8.60 µs", not "launch call ms 0.0086 ms". */
        const cp_figure *f = &c->figures[c->nfigures - 1];
        char name[160], value[64];
        fprintf(out, "%s %s", cp_fmt_figure_name(f->name, f->unit, name, sizeof name),
                cp_fmt_value(f->value, f->unit, value, sizeof value));
    }
    for (size_t k = 0; k < c->nchecks; k++)
        if (c->checks[k].status == CP_CHECK_FAILED)
        {
            char measured[sizeof c->checks[k].measured];
            fprintf(out, "\n        check failed: %s: expected %s, measured %s",
                    c->checks[k].name, c->checks[k].expected,
                    cp_fmt_measured(c->checks[k].measured, measured, sizeof measured));
        }
    fprintf(out, "\n");
    fflush(out);
    return 0;
}

/* At the end, one line per case: its verdict and its headline, the
 * sentences a person reads first (reports/headline.h). A run of one case
 * has said it all in its line already. */
static int progress_close(void *data, const cp_report *r)
{
    progress *p = data;
    if (r->ncases < 2)
        return 0;
    fprintf(p->out, "\n%-12s %-28s %s\n", "verdict", "case", "headline");
    for (size_t i = 0; i < r->ncases; i++) {
        char headline[1024];
        cp_case_headline(&r->cases[i], headline, sizeof headline);
        fprintf(p->out, "%-12s %-28s %s\n", cp_status_name(r->cases[i].status), r->cases[i].name,
                headline);
    }
    fprintf(p->out, "\n");
    fflush(p->out);
    return 0;
}

cp_sink progress_sink(FILE *out, size_t total, const progress_style *style)
{
    progress *p = calloc(1, sizeof *p);
    if (p) {
        p->out = out;
        p->total = total;
        p->style = *style;
        p->drawn_variant = -1;
    }
    return (cp_sink){.name = p ? "progress" : NULL, .add_case = progress_add_case,
                     .close = progress_close, .on_run = progress_on_run, .release = free_data,
                     .data = p};
}

/* A variant that runs longer than this gets its line in plain output: most
 * take a second or two, so only the long ones show. */
#define PROGRESS_SLOW_S 10.0
/* Ten redraws a second read as live without flooding a slow terminal. */
#define PROGRESS_INTERVAL_S 0.1

cp_sink cp_sink_progress(FILE *out, size_t total)
{
    const char *mode = getenv("CUPROOF_PROGRESS");
    bool plain = mode && strcmp(mode, "plain") == 0;
    int fd = fileno(out);
    progress_style style = {.terminal = !plain && fd >= 0 && isatty(fd), .width = 80,
                            .interval_s = PROGRESS_INTERVAL_S, .slow_s = PROGRESS_SLOW_S};
    struct winsize ws;
    if (style.terminal && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        style.width = ws.ws_col;
    return progress_sink(out, total, &style);
}
