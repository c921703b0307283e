#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/proc.h>
#include <cuproof/rec.h>
#include <cuproof/report.h>

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
    if (rc < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        return CP_EXIT_FAILED;
    }
    if (fmt != FORMAT_REC && !variant)
        snprintf(path, sizeof path, "%s/%s.trace.%s", dir, case_name, suffixes[fmt]);
    printf("%s\n", path);
    return CP_EXIT_OK;
}

static bool is_program(const char *path)
{
    struct stat st;
    size_t n = strlen(path), k = strlen(".proc.jsonl");
    return (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) ||
           (n >= k && strcmp(path + n - k, ".proc.jsonl") == 0);
}

/* cuproof export TRACE DIR [--format json|proto|rec|auto]: every variant
 * of a recorded trace file as a Chrome trace (DIR/CASE.VARIANT.perfetto.json),
 * in Perfetto's protobuf format (DIR/CASE.VARIANT.perfetto-trace) or as a
 * cuproof.rec file (DIR/CASE.VARIANT.cprec); auto picks the protobuf for
 * variants of more than CP_PERFETTO_PROTO_RECORDS records, JSON otherwise. A
 * program's per-process files (a *.proc.jsonl file or a directory of
 * them) are merged into one trace, DIR/program.*. Exit 0, 1 when a file
 * cannot be read, parsed or written, 2 for bad usage. */
int cp_cmd_export(int argc, char **argv)
{
    const char *paths[2];
    int npaths = 0;
    format fmt = FORMAT_AUTO;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--format") == 0) {
            if (i + 1 == argc)
                return cp_usage_error("%s", "--format needs json, proto, rec or auto");
            const char *f = argv[++i];
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
        } else if (strncmp(argv[i], "--", 2) == 0) {
            return cp_usage_error("unknown export option '%s'", argv[i]);
        } else if (npaths < 2) {
            paths[npaths++] = argv[i];
        } else {
            npaths++;
        }
    }
    if (npaths != 2)
        return cp_usage_error("%s", "export takes a trace file and an output directory");
    if (is_program(paths[0])) {
        cp_trace t;
        cp_trace_init(&t);
        struct stat st;
        size_t nfiles = 1;
        int rc = stat(paths[0], &st) == 0 && S_ISDIR(st.st_mode)
                     ? cp_proc_read_dir(paths[0], &t, &nfiles)
                     : cp_proc_read(paths[0], &t);
        int status = CP_EXIT_OK;
        if (rc < 0 || nfiles == 0) {
            fprintf(stderr, "cuproof: %s\n",
                    rc < 0 ? cp_last_error() : "no *.proc.jsonl file in the directory");
            status = CP_EXIT_FAILED;
        } else if (cp_make_dirs(paths[1]) < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            status = CP_EXIT_FAILED;
        } else {
            status = write_one(paths[1], "program", NULL, &t, fmt);
        }
        cp_trace_free(&t);
        return status;
    }
    cp_trace_file f;
    if (cp_trace_file_read(paths[0], &f) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        return CP_EXIT_FAILED;
    }
    int status = CP_EXIT_OK;
    if (cp_make_dirs(paths[1]) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        status = CP_EXIT_FAILED;
    }
    for (size_t i = 0; i < f.nvariants && status == CP_EXIT_OK; i++)
        status = write_one(paths[1], f.case_name, f.variants[i].name, &f.variants[i].trace, fmt);
    cp_trace_file_free(&f);
    return status;
}
