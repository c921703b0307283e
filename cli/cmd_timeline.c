/* cuproof timeline: recorded trace files drawn on one page, each file
 * that cannot be read named and left off. */
#include <cuproof/internal/file.h>
#include <cuproof/internal/tracefile.h>
#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/exit.h>

#include <stdio.h>
#include <stdlib.h>

/* cuproof timeline OUT.html TRACE.json...: exit 0; 5 when a trace cannot
 * be read (each named, the others still drawn); 6 when the page cannot be
 * written; 2 for bad usage. */
int cp_cmd_timeline(int argc, char **argv)
{
    if (argc < 2 || argc - 1 > 64)
        return cp_usage_error("%s", "timeline takes OUT.html and 1 to 64 trace files");
    int n = argc - 1, status = CP_EXIT_OK, loaded = 0;
    cp_trace_file *files = calloc((size_t)n, sizeof *files);
    char *html = NULL;
    if (!files) {
        fprintf(stderr, "cuproof: out of memory\n");
        return CP_EXIT_TOOL;
    }
    /* Every file read; one that cannot be is named and left off the page. */
    int good = 0;
    for (; loaded < n; loaded++) {
        int rc = cp_trace_file_read(argv[1 + loaded], &files[good]);
        if (rc < 0)
            status = cp_exit_worse(status, cp_input_error(rc));
        else
            good++;
    }
    loaded = good;
    if (!good)
        goto out;
    html = cp_trace_files_html(files, (size_t)good);
    if (!html || cp_write_file(argv[0], html) < 0) {
        fprintf(stderr, "cuproof: %s\n", html ? cp_last_error() : "out of memory");
        status = cp_exit_worse(status, CP_EXIT_TOOL);
    }
out:
    for (int i = 0; i < loaded; i++)
        cp_trace_file_free(&files[i]);
    free(files);
    free(html);
    return status;
}

