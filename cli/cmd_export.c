#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/report.h>

#include <stdio.h>

/* cuproof export TRACE.json DIR: every variant of a recorded trace file as
 * a Chrome trace. Exit 0, 1 when a file cannot be read, parsed or written,
 * 2 for bad usage. */
int cp_cmd_export(int argc, char **argv)
{
    if (argc != 2)
        return cp_usage_error("%s", "export takes a trace file and an output directory");
    cp_trace_file f;
    if (cp_trace_file_read(argv[0], &f) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        return CP_EXIT_FAILED;
    }
    int status = CP_EXIT_OK;
    if (cp_make_dirs(argv[1]) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        status = CP_EXIT_FAILED;
    }
    for (size_t i = 0; i < f.nvariants && status == CP_EXIT_OK; i++) {
        if (cp_perfetto_write(argv[1], f.case_name, f.variants[i].name, &f.variants[i].trace) < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            status = CP_EXIT_FAILED;
        } else {
            printf("%s/%s.%s.perfetto.json\n", argv[1], f.case_name, f.variants[i].name);
        }
    }
    cp_trace_file_free(&f);
    return status;
}

