#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/report.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cuproof compare OLD NEW [--threshold F]: exit 0, 1 on regressions, 2 for
 * bad usage or files that are not comparable reports. */
int cp_cmd_compare(int argc, char **argv)
{
    double threshold = 0.10;
    if (argc == 4 && strcmp(argv[2], "--threshold") == 0) {
        char *end = NULL;
        threshold = strtod(argv[3], &end);
        if (!end || *end || !(threshold >= 0 && threshold < 100))
            return cp_usage_error("--threshold wants a fraction such as 0.1, got '%s'", argv[3]);
    } else if (argc != 2) {
        return cp_usage_error("%s", "compare takes OLD.json NEW.json [--threshold F]");
    }
    int regressions = 0;
    if (cp_compare_reports(argv[0], argv[1], threshold, stdout, &regressions) < 0)
        return cp_usage_error("%s", cp_last_error());
    if (regressions) {
        printf("cuproof: %d regression%s\n", regressions, regressions == 1 ? "" : "s");
        return CP_EXIT_FAILED;
    }
    return CP_EXIT_OK;
}

