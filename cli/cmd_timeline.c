#include <cuproof/internal/file.h>
#include <cuproof/internal/tracefile.h>
#include "cli.h"

#include <cuproof/error.h>

#include <stdio.h>
#include <stdlib.h>

/* cuproof timeline OUT.html TRACE.json...: exit 0, 1 when a file cannot be
 * read or written, 2 for bad usage. */
int cp_cmd_timeline(int argc, char **argv)
{
    if (argc < 2 || argc - 1 > 64)
        return cp_usage_error("%s", "timeline takes OUT.html and 1 to 64 trace files");
    int n = argc - 1, status = CP_EXIT_OK, loaded = 0;
    cp_trace_file *files = calloc((size_t)n, sizeof *files);
    char *html = NULL;
    if (!files)
        return CP_EXIT_FAILED;
    for (; loaded < n; loaded++)
        if (cp_trace_file_read(argv[1 + loaded], &files[loaded]) < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            status = CP_EXIT_FAILED;
            goto out;
        }
    html = cp_trace_files_html(files, (size_t)n);
    if (!html || cp_write_file(argv[0], html) < 0) {
        fprintf(stderr, "cuproof: %s\n", html ? cp_last_error() : "out of memory");
        status = CP_EXIT_FAILED;
    }
out:
    for (int i = 0; i < loaded; i++)
        cp_trace_file_free(&files[i]);
    free(files);
    free(html);
    return status;
}

