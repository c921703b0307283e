#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/report.h>

#include <stdio.h>
#include <string.h>

/* Above this many records a variant is written in Perfetto's protobuf
 * format under --format auto: its Chrome trace would take over 20 MB,
 * which the JSON importers of Perfetto and chrome://tracing read slowly
 * and, by a few hundred MB, not at all. */
#define AUTO_PROTO_RECORDS 200000

typedef enum { FORMAT_AUTO, FORMAT_JSON, FORMAT_PROTO } format;

/* cuproof export TRACE.json DIR [--format json|proto|auto]: every variant
 * of a recorded trace file as a Chrome trace (DIR/CASE.VARIANT.perfetto.json)
 * or in Perfetto's protobuf format (DIR/CASE.VARIANT.perfetto-trace); auto
 * picks the protobuf for variants of more than AUTO_PROTO_RECORDS records.
 * Exit 0, 1 when a file cannot be read, parsed or written, 2 for bad usage. */
int cp_cmd_export(int argc, char **argv)
{
    const char *paths[2];
    int npaths = 0;
    format fmt = FORMAT_AUTO;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--format") == 0) {
            if (i + 1 == argc)
                return cp_usage_error("%s", "--format needs json, proto or auto");
            const char *f = argv[++i];
            if (strcmp(f, "json") == 0)
                fmt = FORMAT_JSON;
            else if (strcmp(f, "proto") == 0)
                fmt = FORMAT_PROTO;
            else if (strcmp(f, "auto") == 0)
                fmt = FORMAT_AUTO;
            else
                return cp_usage_error("unknown export format '%s': use json, proto or auto", f);
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
    for (size_t i = 0; i < f.nvariants && status == CP_EXIT_OK; i++) {
        const cp_trace_variant *v = &f.variants[i];
        bool proto = fmt == FORMAT_PROTO || (fmt == FORMAT_AUTO && v->trace.n > AUTO_PROTO_RECORDS);
        int rc = proto ? cp_perfetto_pb_write(paths[1], f.case_name, v->name, &v->trace)
                       : cp_perfetto_write(paths[1], f.case_name, v->name, &v->trace);
        if (rc < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            status = CP_EXIT_FAILED;
        } else {
            printf("%s/%s.%s.%s\n", paths[1], f.case_name, v->name,
                   proto ? "perfetto-trace" : "perfetto.json");
        }
    }
    cp_trace_file_free(&f);
    return status;
}
