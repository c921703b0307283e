/* A traced program's per-process files, analysed and judged in bounded
 * memory (cuproof/program.h): held while they are few, streamed past
 * that through the analysis, a cuproof.rec file, and a second reading of
 * it for the Perfetto file, the timeline's summary and the scoped
 * expectations. */
#include <cuproof/internal/capture.h>
#include <cuproof/program.h>

#include <cuproof/error.h>
#include <cuproof/internal/proc.h>
#include <cuproof/internal/rec.h>
#include <cuproof/internal/steps.h>
#include <cuproof/internal/ranks.h>
#include <cuproof/summary.h>

#include "reports/jobs.h"
#include "reports/perfetto_pb.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

/* The first reading: the process files' records, held or streamed. */
typedef struct reading {
    const cp_program_opts *opts;
    uint64_t keep;
    cp_trace *meta; /* the reader's: processes, counts, names */
    cp_trace kept;  /* the records while they are held */
    bool streaming;
    cp_expect_judge *judge; /* the analysis and the scopes, once streaming */
    cp_rec_writer *rec;
    size_t rec_processes; /* processes described in the rec file so far */
    cp_summary_span span;
    const cp_expect_list *list; /* may be NULL */
    cp_program_info *info;
} reading;

/* One record into everything a streamed program feeds: the rec file
 * (after the processes it may name), the analysis, the summary's span and
 * what the scopes learn. */
static int stream_one(reading *r, const cp_activity *a)
{
    int rc = 0;
    while (rc == 0 && r->rec_processes < r->meta->nprocesses)
        rc = cp_rec_put_process(r->rec, &r->meta->processes[r->rec_processes++]);
    if (rc == 0)
        rc = cp_rec_put(r->rec, a);
    cp_summary_span_add(&r->span, a);
    if (rc == 0)
        rc = cp_expect_judge_record(r->judge, a);
    return rc;
}

/* Past the records to hold: the held ones go out first, then every
 * record as it is read. */
static int start_streaming(reading *r)
{
    cp_stream_opts so = {.timeline = r->opts->timeline};
    static const cp_expect_list none;
    int rc = cp_expect_judge_new(&r->judge, r->list ? r->list : &none, &so);
    if (rc == 0)
        rc = cp_rec_writer_open(&r->rec, r->info->rec_path);
    for (size_t i = 0; rc == 0 && i < r->kept.n; i++)
        rc = stream_one(r, &r->kept.items[i]);
    cp_trace_free(&r->kept);
    cp_trace_init(&r->kept);
    r->streaming = true;
    return rc;
}

static int on_record(void *ctx, const cp_activity *a)
{
    reading *r = ctx;
    r->info->records++;
    if (a->kind == CP_ACT_RANGE && a->name && strcmp(a->name, CP_CAPTURE_RANGE_NAME) == 0) {
        if (r->info->windows < CP_WINDOWS_LISTED)
            r->info->window_list[r->info->windows] =
                (struct cp_window_seen){a->process, a->correlation, a->start, a->end};
        r->info->windows++;
        r->info->window_ns += a->end > a->start ? a->end - a->start : 0;
    }
    if (a->start && a->start < r->info->first_ns)
        r->info->first_ns = a->start;
    if (r->streaming)
        return stream_one(r, a);
    if (cp_trace_add(&r->kept, a) < 0)
        return cp_failf(CP_ENOMEM, "out of memory holding a program's records");
    return r->kept.n > r->keep ? start_streaming(r) : 0;
}

/* The rec file's last records: the names the program gave its streams
 * (the reader knows them all only now), how each process ended, and the
 * counts. */
static int close_rec(reading *r)
{
    int rc = 0;
    while (rc == 0 && r->rec_processes < r->meta->nprocesses)
        rc = cp_rec_put_process(r->rec, &r->meta->processes[r->rec_processes++]);
    for (size_t i = 0; rc == 0 && i < r->meta->nstream_names; i++)
        rc = cp_rec_put_stream_name(r->rec, &r->meta->stream_names[i]);
    for (size_t i = 0; rc == 0 && i < r->meta->nprocesses; i++)
        rc = cp_rec_put_process_end(r->rec, (uint32_t)i, &r->meta->processes[i]);
    cp_rec_end end = {
        .dropped_records = r->meta->dropped_records,
        .renamed_kernels = r->meta->renamed_kernels,
        .has_legacy_stream = r->meta->has_legacy_stream,
        .legacy_device = r->meta->legacy_device,
        .legacy_context = r->meta->legacy_context,
        .legacy_stream = r->meta->legacy_stream,
    };
    if (rc < 0) {
        cp_rec_writer_abandon(r->rec);
        r->rec = NULL;
        return rc;
    }
    rc = cp_rec_writer_close(r->rec, &end);
    r->rec = NULL;
    return rc;
}

/* A streamed program's Perfetto file, from the rec file the first
 * reading wrote, on a reader of its own. */
typedef struct perfetto_pass {
    const char *rec_path, *path;
    /* The reader's trace, which names the streams' lanes as the held
     * path's Perfetto file names them (the legacy stream, the names the
     * program gave): read only, beside the summary's pass. */
    const cp_trace *names;
    uint64_t origin;
    uint64_t unordered; /* slices too far out of order to be checked */
} perfetto_pass;

static int write_perfetto(void *ctx)
{
    perfetto_pass *p = ctx;
    int rc = 0;
    cp_rec_reader *in = NULL;
    FILE *f = NULL;
    cp_pb_writer *pb = NULL;
    CP_TRY(cp_rec_reader_open(&in, p->rec_path));
    if (!(f = fopen(p->path, "wb"))) {
        rc = cp_failf(CP_EIO, "cannot write %s: %s", p->path, strerror(errno));
        goto out;
    }
    if (!(pb = cp_pb_open(f, p->path, p->origin))) {
        rc = CP_ENOMEM;
        goto out;
    }
    cp_pb_name_streams(pb, p->names);
    cp_rec_item it;
    while ((rc = cp_rec_next(in, &it)) == 1) {
        rc = 0;
        if (it.type == CP_REC_PROCESS) {
            char label[300];
            rc = cp_pb_add_process(pb, it.process_index, it.process.pid,
                                   cp_process_label(&it.process, label, sizeof label));
        } else if (it.type == CP_REC_ACTIVITY) {
            rc = cp_pb_add_activity(pb, &it.activity);
        }
        if (rc < 0)
            goto out;
    }
out:
    if (pb) {
        int closed = cp_pb_close(pb, &p->unordered);
        rc = rc < 0 ? rc : closed;
    }
    if (f && fclose(f) != 0 && rc == 0)
        rc = cp_failf(CP_EIO, "cannot write %s: %s", p->path, strerror(errno));
    cp_rec_reader_close(in);
    return rc;
}

/* The timeline's summary and what each scope hands on, from the same rec
 * file. */
typedef struct summary_pass {
    reading *r;
    cp_summary *sum;
} summary_pass;

static int summarise(void *ctx)
{
    summary_pass *p = ctx;
    reading *r = p->r;
    const cp_metrics *m = cp_expect_judge_metrics(r->judge);
    cp_rec_reader *in = NULL;
    int rc = cp_rec_reader_open(&in, r->info->rec_path);
    cp_rec_item it;
    while (rc == 0 && (rc = cp_rec_next(in, &it)) == 1) {
        rc = 0;
        if (it.type != CP_REC_ACTIVITY)
            continue;
        cp_summary_add(p->sum, m, &it.activity);
        /* Every scope's part, when the judge has scopes to feed. */
        if (cp_expect_judge_second_pass(r->judge))
            rc = cp_expect_judge_record(r->judge, &it.activity);
    }
    char why[256];
    if (rc == 0 && cp_rec_truncated(in, why, sizeof why))
        rc = cp_failf(CP_EIO, "%s, written by this run, reads back short: %s", r->info->rec_path,
                      why);
    cp_rec_reader_close(in);
    return rc;
}

/* The second reading, of the rec file the first wrote: the Perfetto file
 * beside the timeline's summary and what each scope hands on (jobs.h:
 * each reads the file on its own and writes only its own). */
static int second_pass(reading *r, cp_variant_result *v)
{
    int rc = 0;
    cp_summary *sum = calloc(1, sizeof *sum);
    if (!sum)
        return cp_failf(CP_ENOMEM, "out of memory for a timeline summary");
    CP_TRY(cp_summary_init(sum, cp_expect_judge_metrics(r->judge), &r->span, CP_SUMMARY_BINS));
    summary_pass sp = {r, sum};
    perfetto_pass pp = {r->info->rec_path, r->info->perfetto_path, r->meta,
                        r->info->first_ns == UINT64_MAX ? 0 : r->info->first_ns, 0};
    cp_job jobs[2] = {{.run = summarise, .ctx = &sp}, {.run = write_perfetto, .ctx = &pp}};
    rc = cp_jobs_run(jobs, 2);
    r->info->perfetto_unordered = pp.unordered;
out:
    if (rc < 0) {
        cp_summary_free(sum);
        free(sum);
    } else {
        v->summary = sum;
    }
    return rc;
}

/* The held records become the variant's trace, with what the reader's
 * trace learnt beside them: its processes (a few) and counts. They were
 * held apart because the reader keeps a file's ranges at the end of its
 * own trace while the file is read. */
static int judge_kept(reading *r, const cp_expect_list *list, cp_variant_result *v,
                      cp_program_check *checks)
{
    for (size_t i = 0; i < v->trace.nprocesses; i++)
        if (cp_trace_add_process(&r->kept, &v->trace.processes[i]) < 0)
            return cp_failf(CP_ENOMEM, "out of memory holding a program's records");
    r->kept.dropped_records = v->trace.dropped_records;
    r->kept.renamed_kernels = v->trace.renamed_kernels;
    r->kept.has_legacy_stream = v->trace.has_legacy_stream;
    r->kept.legacy_device = v->trace.legacy_device;
    r->kept.legacy_context = v->trace.legacy_context;
    r->kept.legacy_stream = v->trace.legacy_stream;
    if (cp_trace_copy_stream_names(&r->kept, &v->trace) < 0)
        return CP_ENOMEM;
    cp_trace_free(&v->trace);
    v->trace = r->kept;
    cp_trace_init(&r->kept);
    if (cp_timeline_analyse(&v->trace, &r->opts->timeline, &v->metrics) < 0)
        return cp_failf(CP_ENOMEM, "out of memory analysing a program's records");
    for (size_t i = 0; list && i < list->n; i++) {
        checks[i].measured[0] = '\0';
        int rc = cp_expect_eval_trace(&list->items[i], &v->trace, &r->opts->timeline,
                                      &checks[i].ok, checks[i].measured,
                                      sizeof checks[i].measured);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* One reading of the files (cp_program_analyse's), with each host's times
 * put `offsets` (NULL: none) later and, when `ranks` is set, every record
 * into it. */
static int analyse_once(const char *dir, const cp_expect_list *list, const cp_program_opts *opts,
                        cp_variant_result *v, cp_program_check *checks, cp_program_info *info,
                        const int64_t *offsets, size_t noffsets, cp_ranks_builder *ranks)
{
    int rc = 0;
    memset(info, 0, sizeof *info);
    info->first_ns = UINT64_MAX;
    const char *out = opts->out_dir ? opts->out_dir : ".";
    const char *name = opts->name ? opts->name : "program";
    snprintf(info->rec_path, sizeof info->rec_path, "%s/%s.cprec", out, name);
    snprintf(info->perfetto_path, sizeof info->perfetto_path, "%s/%s.%s.perfetto-trace", out, name,
             opts->variant ? opts->variant : "program");
    reading r = {
        .opts = opts,
        .keep = opts->keep_records ? opts->keep_records : CP_PROGRAM_KEEP_RECORDS,
        .meta = &v->trace,
        .span = CP_SUMMARY_SPAN_INIT,
        .list = list,
        .info = info,
    };
    /* Every record placed first: its host's devices and clock. */
    cp_placer placer = {.meta = &v->trace,
                        .offsets = offsets,
                        .noffsets = noffsets,
                        .ranks = ranks,
                        .next = on_record,
                        .next_ctx = &r};
    cp_trace_init(&r.kept);
    if (opts->follow)
        CP_TRY(cp_follower_stream(opts->follow, &v->trace, &info->nfiles, cp_placer_record, &placer,
                                  &info->records_during_run, info->follow_why,
                                  sizeof info->follow_why));
    else
        CP_TRY(cp_proc_stream_dir(dir, &v->trace, &info->nfiles, cp_placer_record, &placer));
    if (!r.streaming) {
        rc = judge_kept(&r, list, v, checks);
        goto out;
    }
    info->streamed = true;
    CP_TRY(close_rec(&r));
    CP_TRY(cp_expect_judge_between(r.judge, &v->trace));
    CP_TRY(second_pass(&r, v));
    for (size_t i = 0; list && i < list->n; i++) {
        checks[i].measured[0] = '\0';
        CP_TRY(cp_expect_judge_verdict(r.judge, i, &checks[i].ok, checks[i].measured,
                                       sizeof checks[i].measured));
    }
    cp_metrics_free(&v->metrics);
    cp_expect_judge_take_metrics(r.judge, &v->metrics);
out:
    if (r.rec)
        cp_rec_writer_abandon(r.rec);
    cp_expect_judge_free(r.judge);
    cp_trace_free(&r.kept);
    cp_placer_free(&placer);
    /* A streamed file left by a failure would read as a program's trace:
     * it goes, and the paths say that nothing was written. */
    if (rc < 0 && r.streaming) {
        remove(info->rec_path);
        remove(info->perfetto_path);
    }
    if (rc < 0 || !r.streaming)
        info->rec_path[0] = info->perfetto_path[0] = '\0';
    return rc;
}

/* A reading's result given up before the next. */
static void discard(cp_variant_result *v)
{
    cp_trace_free(&v->trace);
    cp_trace_init(&v->trace);
    cp_metrics_free(&v->metrics);
    memset(&v->metrics, 0, sizeof v->metrics);
    cp_summary_free(v->summary);
    free(v->summary);
    v->summary = NULL;
}

/* One reading of a program's files, with each host's times moved by
 * `offsets` (NULL: none) and, when `ranks` is set, every record into it;
 * `drop` gives a reading's result up before the next. */
typedef struct program_reader {
    int (*read)(void *ctx, const int64_t *offsets, size_t noffsets, cp_ranks_builder *ranks);
    void (*drop)(void *ctx);
    void *ctx;
    cp_trace *meta; /* the reading's processes, refilled in place */
} program_reader;

/* The readings the hosts' clocks need, for exec and check alike: a first
 * with every record into the ranks' table; when the hosts' clocks
 * disagree, merged on them cross-host figures are wrong, so the first is
 * given up and a second reads the files with the offsets on (and the
 * processes' last times moved). *ranks is set (NULL without ranks) and
 * the caller's to free, even on an error. */
static int read_aligned(const program_reader *r, const cp_timeline_opts *t, cp_ranks **ranks)
{
    cp_ranks_builder *b = NULL;
    int64_t *offsets = NULL;
    *ranks = NULL;
    int rc = cp_ranks_builder_new(&b, t);
    if (rc == 0)
        rc = r->read(r->ctx, NULL, 0, b);
    if (rc == 0)
        rc = cp_ranks_builder_finish(b, r->meta, ranks);
    cp_ranks_builder_free(b);
    if (rc == 0 && cp_ranks_need_alignment(*ranks)) {
        if (!(offsets = cp_ranks_offsets(*ranks)))
            rc = CP_ENOMEM;
        if (rc == 0) {
            r->drop(r->ctx);
            rc = r->read(r->ctx, offsets, (*ranks)->nhosts, NULL);
        }
        if (rc == 0)
            rc = cp_ranks_shift_processes(r->meta, offsets, (*ranks)->nhosts);
    }
    free(offsets);
    return rc;
}

/* Whether expectation `e` asks for a figure across ranks: a program-wide
 * metric (the collectives', the straggler's) or the straggler finding.
 * `ranks` counts the ranks that are there, which no match or alignment
 * changes. */
static bool across_ranks(const cp_expectation *e)
{
    return e->kind == CP_EXPECT_COMPARE
               ? cp_metric_is_program_wide(e->name) && strcmp(e->name, "ranks") != 0
               : strcmp(e->name, "straggler") == 0;
}

/* Whether expectation `e` cannot be judged (why in `why`): it asks for a
 * figure across ranks or on every rank and a rank has no trace or the
 * ranks are not one job; it asks
 * for one across ranks, or spans hosts, and the collectives could not be
 * matched; or its part may span hosts that could not be aligned. */
static bool undecided(const cp_expectation *e, const cp_ranks *r, char *why, size_t len)
{
    if ((across_ranks(e) || e->every_rank) &&
        (cp_ranks_incomplete(r, why, len) || cp_ranks_not_one_job(r, why, len)))
        return true;
    if ((across_ranks(e) || (r && r->nhosts > 1 && cp_expect_crosses_hosts(e))) &&
        cp_ranks_unmatched(r, why, len))
        return true;
    return cp_expect_crosses_hosts(e) && cp_ranks_unaligned(r, why, len);
}

/* cp_program_analyse's reading, for read_aligned. */
typedef struct analysis {
    const char *dir;
    const cp_expect_list *list;
    const cp_program_opts *opts;
    cp_variant_result *v;
    cp_program_check *checks;
    cp_program_info *info;
} analysis;

static int analysis_read(void *ctx, const int64_t *offsets, size_t noffsets,
                         cp_ranks_builder *ranks)
{
    analysis *a = ctx;
    return analyse_once(a->dir, a->list, a->opts, a->v, a->checks, a->info, offsets, noffsets,
                        ranks);
}

static void analysis_drop(void *ctx)
{
    discard(((analysis *)ctx)->v);
}

int cp_program_analyse(const char *dir, const cp_expect_list *list, const cp_program_opts *opts,
                       cp_variant_result *v, cp_program_check *checks, cp_program_info *info)
{
    analysis a = {dir, list, opts, v, checks, info};
    program_reader r = {analysis_read, analysis_drop, &a, &v->trace};
    cp_ranks *ranks = NULL;
    int rc = read_aligned(&r, &opts->timeline, &ranks);
    if (rc == 0 && ranks) {
        cp_ranks_put_metrics(ranks, &v->metrics);
        /* Expectations on the program-wide figures, which the reading's
         * analysis has not: unscoped (cp_expect_validate_program), so the
         * program's metrics answer them. */
        for (size_t i = 0; list && i < list->n; i++) {
            const cp_expectation *e = &list->items[i];
            if (e->per_step && !info->streamed)
                /* Again, with each collective's arrival: the straggler per step. */
                rc = cp_step_eval_trace_arrivals(e, &v->trace, &opts->timeline, ranks->arrivals,
                                                 ranks->narrivals, &checks[i].ok,
                                                 checks[i].measured, sizeof checks[i].measured);
            else if (e->per_step && across_ranks(e)) {
                snprintf(checks[i].measured, sizeof checks[i].measured,
                         "the straggler per step is not measured on a streamed trace yet: judge "
                         "it with `cuproof check` on the program's .cprec file");
                checks[i].ok = false;
                checks[i].undecided = true;
            } else if (!e->per_step && cp_metric_is_program_wide(e->name))
                checks[i].ok = cp_expect_eval(e, &v->metrics, checks[i].measured,
                                              sizeof checks[i].measured);
            if (rc < 0)
                break;
        }
    }
    for (size_t i = 0; rc == 0 && list && i < list->n; i++)
        if (undecided(&list->items[i], ranks, checks[i].measured, sizeof checks[i].measured)) {
            checks[i].ok = false;
            checks[i].undecided = true;
        }
    if (rc < 0)
        cp_ranks_free(ranks);
    else
        v->ranks = ranks;
    return rc;
}

/* ---- A program's trace judged straight from its files (cuproof check) ---- */

/* Where the records come from: the paths, as what. */
typedef struct sources {
    const char *const *paths;
    size_t n;
    bool rec;
} sources;

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* One pass over every path into `fn`; `meta` gets the processes on the
 * first (NULL for a rec file's second, whose meta is known). */
static int read_sources(const sources *src, cp_trace *meta, cp_activity_fn fn, void *ctx,
                        cp_program_stream *out)
{
    for (size_t i = 0; i < src->n; i++) {
        const char *path = src->paths[i];
        int rc;
        if (src->rec) {
            bool *cut = meta ? &out->truncated : NULL;
            rc = cp_rec_stream(path, meta, fn, ctx, cut, meta ? out->why : NULL,
                               meta ? sizeof out->why : 0);
        } else if (is_dir(path)) {
            size_t n = 0;
            rc = cp_proc_stream_dir(path, meta, &n, fn, ctx);
            if (rc == 0 && n == 0)
                rc = cp_failf(CP_ENOENT, "%s holds no *.proc.jsonl file (nor *.proc.cprec)", path);
            out->files += n;
        } else {
            rc = cp_proc_stream(path, meta, fn, ctx);
            out->files++;
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The judge's one or two passes, each record placed (with `offsets` on,
 * and into `ranks` on the first pass when set). */
static int judge_passes(const sources *src, const cp_expect_list *list, const cp_stream_opts *so,
                        cp_program_stream *out, const int64_t *offsets, size_t noffsets,
                        cp_ranks_builder *ranks)
{
    static const cp_expect_list none;
    cp_trace again;
    cp_trace_init(&again);
    int rc = cp_expect_judge_new(&out->judge, list ? list : &none, so);
    cp_placer p = {.meta = &out->meta,
                   .offsets = offsets,
                   .noffsets = noffsets,
                   .ranks = ranks,
                   .next = cp_expect_judge_record,
                   .next_ctx = out->judge};
    out->files = 0;
    if (rc == 0)
        rc = read_sources(src, &out->meta, cp_placer_record, &p, out);
    if (rc == 0)
        rc = cp_expect_judge_between(out->judge, &out->meta);
    if (rc == 0 && cp_expect_judge_second_pass(out->judge)) {
        /* The processes are known: the placer reads them from the first
         * pass's meta, the reader refills a spare one. */
        size_t files = out->files;
        p.ranks = NULL;
        rc = read_sources(src, src->rec ? NULL : &again, cp_placer_record, &p, out);
        out->files = files;
    }
    cp_placer_free(&p);
    cp_trace_free(&again);
    return rc;
}

/* cp_program_stream_judge's reading, for read_aligned. */
typedef struct judging {
    const sources *src;
    const cp_expect_list *list;
    const cp_stream_opts *opts;
    cp_program_stream *out;
} judging;

static int judging_read(void *ctx, const int64_t *offsets, size_t noffsets,
                        cp_ranks_builder *ranks)
{
    judging *j = ctx;
    return judge_passes(j->src, j->list, j->opts, j->out, offsets, noffsets, ranks);
}

static void judging_drop(void *ctx)
{
    cp_program_stream *out = ((judging *)ctx)->out;
    cp_expect_judge_free(out->judge);
    out->judge = NULL;
    cp_trace_free(&out->meta);
    cp_trace_init(&out->meta);
    out->truncated = false;
    out->why[0] = '\0';
}

int cp_program_stream_judge(const char *const *paths, size_t n, bool rec,
                            const cp_expect_list *list, const cp_stream_opts *opts,
                            cp_program_stream *out)
{
    memset(out, 0, sizeof *out);
    cp_trace_init(&out->meta);
    sources src = {.paths = paths, .n = n, .rec = rec};
    judging j = {&src, list, opts, out};
    program_reader r = {judging_read, judging_drop, &j, &out->meta};
    int rc = read_aligned(&r, opts ? &opts->timeline : NULL, &out->ranks);
    if (rc == 0)
        cp_expect_judge_put_ranks(out->judge, out->ranks);
    return rc;
}

int cp_program_stream_verdict(cp_program_stream *s, const cp_expect_list *list, size_t k,
                              cp_program_check *out)
{
    memset(out, 0, sizeof *out);
    if (k < list->n && undecided(&list->items[k], s->ranks, out->measured, sizeof out->measured)) {
        out->undecided = true;
        return 0;
    }
    return cp_expect_judge_verdict(s->judge, k, &out->ok, out->measured, sizeof out->measured);
}

void cp_program_stream_free(cp_program_stream *s)
{
    cp_expect_judge_free(s->judge);
    cp_trace_free(&s->meta);
    cp_ranks_free(s->ranks);
    memset(s, 0, sizeof *s);
}
