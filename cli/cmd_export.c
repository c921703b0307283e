/* cuproof export: a recorded trace (a case's trace file, or a program's
 * per-process files) written for ui.perfetto.dev or for check. */
#include <cuproof/internal/tracefile.h>
#include <cuproof/internal/perfetto.h>
#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/internal/proc.h>
#include <cuproof/internal/rec.h>

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

typedef enum { FORMAT_AUTO, FORMAT_JSON, FORMAT_PROTO, FORMAT_REC } format;

static const char *const suffixes[] = {"", "perfetto.json", "perfetto-trace", "cprec"};

/* One trace in the chosen format: DIR/STEM.SUFFIX. */
static int write_one(const char *dir, const char *case_name, const char *variant,
                     const cp_trace *t, format fmt)
{
    if (fmt == FORMAT_AUTO)
        fmt = t->n > CP_PERFETTO_PROTO_RECORDS ? FORMAT_PROTO : FORMAT_JSON;
    int rc;
    char path[4096];
    if (variant)
        snprintf(path, sizeof path, "%s/%s.%s.%s", dir, case_name, variant, suffixes[fmt]);
    else
        snprintf(path, sizeof path, "%s/%s.%s", dir, case_name, suffixes[fmt]);
    if (fmt == FORMAT_REC)
        rc = cp_rec_write_trace(path, t);
    else if (fmt == FORMAT_PROTO)
        rc = cp_perfetto_pb_write(dir, case_name, variant ? variant : "trace", t);
    else
        rc = cp_perfetto_write(dir, case_name, variant ? variant : "trace", t);
    if (rc < 0)
        return cp_tool_error();
    if (fmt != FORMAT_REC && !variant)
        snprintf(path, sizeof path, "%s/%s.trace.%s", dir, case_name, suffixes[fmt]);
    printf("%s\n", path);
    return CP_EXIT_OK;
}

/* A program's activities into a rec file as they are read: each process
 * record goes out before the first activity that names it. */
typedef struct to_rec {
    cp_rec_writer *w;
    const cp_trace *meta;
    size_t processes; /* written so far */
    bool write_failed; /* the output's fault, not the input's */
} to_rec;

static int put_processes(to_rec *x)
{
    int rc = 0;
    while (rc == 0 && x->processes < x->meta->nprocesses)
        rc = cp_rec_put_process(x->w, &x->meta->processes[x->processes++]);
    return rc;
}

static int put_activity(void *ctx, const cp_activity *a)
{
    to_rec *x = ctx;
    int rc = put_processes(x);
    if (rc == 0)
        rc = cp_rec_put(x->w, a);
    x->write_failed |= rc < 0;
    return rc;
}

/* A program's per-process files to DIR/program.cprec in one pass, never
 * holding their records: the way to bring an exec'd program of any length
 * to `cuproof check`. */
static int program_to_rec(const char *in, bool dir, const char *out_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/program.cprec", out_dir);
    cp_trace meta;
    cp_trace_init(&meta);
    to_rec x = {.meta = &meta};
    size_t nfiles = 1;
    int rc = cp_rec_writer_open(&x.w, path);
    if (rc < 0)
        return cp_tool_error();
    rc = dir ? cp_proc_stream_dir(in, &meta, &nfiles, put_activity, &x)
             : cp_proc_stream(in, &meta, put_activity, &x);
    if (rc == 0 && nfiles == 0)
        rc = cp_failf(CP_EIO, "%s holds no *.proc.jsonl file", in);
    /* Up to here a failure is the input's, unless writing failed. */
    bool input_failed = rc < 0 && !x.write_failed;
    if (rc == 0)
        rc = put_processes(&x);
    /* The streams' names, known only once every file is read. */
    for (size_t i = 0; rc == 0 && i < meta.nstream_names; i++)
        rc = cp_rec_put_stream_name(x.w, &meta.stream_names[i]);
    for (size_t i = 0; rc == 0 && i < meta.nprocesses; i++)
        rc = cp_rec_put_process_end(x.w, (uint32_t)i, &meta.processes[i]);
    if (rc == 0) {
        cp_rec_end end = {.dropped_records = meta.dropped_records};
        rc = cp_rec_writer_close(x.w, &end);
    } else {
        cp_rec_writer_abandon(x.w);
    }
    cp_trace_free(&meta);
    if (rc < 0)
        return input_failed ? cp_input_error(rc) : cp_tool_error();
    printf("%s\n", path);
    return CP_EXIT_OK;
}

static bool is_program(const char *path)
{
    struct stat st;
    return (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) || cp_proc_is_trace_file(path);
}

/* cuproof export TRACE DIR [--format json|proto|rec|auto]: every variant
 * of a recorded trace file as a Chrome trace (DIR/CASE.VARIANT.perfetto.json),
 * in Perfetto's protobuf format (DIR/CASE.VARIANT.perfetto-trace) or as a
 * cuproof.rec file (DIR/CASE.VARIANT.cprec); auto picks the protobuf for
 * variants of more than CP_PERFETTO_PROTO_RECORDS records, JSON otherwise. A
 * program's per-process files (a *.proc.jsonl file or a directory of
 * them) are merged into one trace, DIR/program.* (as rec in one pass,
 * holding no records). Exit 0; 2 for bad usage; 5 when the trace cannot
 * be read or parsed (named, with its line and column); 6 when a file
 * cannot be written. */
int cp_cmd_export(int argc, char **argv)
{
    const char *paths[2];
    int npaths = 0;
    format fmt = FORMAT_AUTO;
    const cp_help_opt *table = cp_opts_export;
    for (int i = 0; i < argc; i++) {
        cp_arg g;
        int kind = cp_arg_next(table, argc, argv, &i, &g);
        const char *opt = g.opt, *f = g.val;
        if (kind == CP_ARG_BAD)
            return CP_EXIT_USAGE;
        if (kind == CP_ARG_OPERAND) {
            if (npaths < 2)
                paths[npaths] = g.operand;
            npaths++;
        } else if (strcmp(opt, "--format") == 0) {
            if (!f)
                return cp_usage_error("%s", "--format needs json, proto, rec or auto");
            if (strcmp(f, "json") == 0)
                fmt = FORMAT_JSON;
            else if (strcmp(f, "proto") == 0)
                fmt = FORMAT_PROTO;
            else if (strcmp(f, "rec") == 0)
                fmt = FORMAT_REC;
            else if (strcmp(f, "auto") == 0)
                fmt = FORMAT_AUTO;
            else
                return cp_usage_error("unknown export format '%s': use json, proto, rec or auto",
                                      f);
        } else {
            return cp_opt_unparsed(opt);
        }
    }
    if (npaths != 2)
        return cp_usage_error("%s", "export takes a trace file and an output directory");
    if (is_program(paths[0]) && fmt == FORMAT_REC) {
        struct stat st;
        if (cp_make_dirs(paths[1]) < 0)
            return cp_tool_error();
        return program_to_rec(paths[0], stat(paths[0], &st) == 0 && S_ISDIR(st.st_mode),
                              paths[1]);
    }
    if (is_program(paths[0])) {
        cp_trace t;
        cp_trace_init(&t);
        struct stat st;
        size_t nfiles = 1;
        int rc = stat(paths[0], &st) == 0 && S_ISDIR(st.st_mode)
                     ? cp_proc_read_dir(paths[0], &t, &nfiles)
                     : cp_proc_read(paths[0], &t);
        int status = CP_EXIT_OK;
        if (rc == 0 && nfiles == 0)
            rc = cp_failf(CP_EIO, "%s holds no *.proc.jsonl file", paths[0]);
        if (rc < 0) {
            status = cp_input_error(rc);
        } else if (cp_make_dirs(paths[1]) < 0) {
            status = cp_tool_error();
        } else {
            status = write_one(paths[1], "program", NULL, &t, fmt);
        }
        cp_trace_free(&t);
        return status;
    }
    cp_trace_file f;
    int rc = cp_trace_file_read(paths[0], &f);
    if (rc < 0)
        return cp_input_error(rc);
    int status = CP_EXIT_OK;
    if (cp_make_dirs(paths[1]) < 0)
        status = cp_tool_error();
    for (size_t i = 0; i < f.nvariants && status == CP_EXIT_OK; i++)
        status = write_one(paths[1], f.case_name, f.variants[i].name, &f.variants[i].trace, fmt);
    cp_trace_file_free(&f);
    return status;
}
