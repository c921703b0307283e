#include <cuproof/internal/compare.h>
#include "cli.h"

#include <cuproof/internal/compare_stats.h>
#include <cuproof/error.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "compare takes OLD.json NEW.json [--threshold F] "
                            "[--host-threshold F] [--format text|json] [--force] "
                            "[--html OUT.html]";

/* cuproof compare OLD NEW [--threshold F] [--host-threshold F]
 * [--format text|json] [--force] [--html OUT.html]:
 * exit 0, 1 on regressions, 2 for bad usage, files that are not
 * comparable reports, or a page that cannot be written. */
int cp_cmd_compare(int argc, char **argv)
{
    const char *html = NULL;
    cp_compare_options opt = {.threshold = 0.10,
                              .min_effect = CP_CMP_MIN_EFFECT,
                              .host_threshold = CP_CMP_HOST_THRESHOLD};
    if (argc < 2 || argv[0][0] == '-' || argv[1][0] == '-')
        return cp_usage_error("%s", usage);
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--threshold") == 0 && i + 1 < argc) {
            char *end = NULL;
            opt.threshold = strtod(argv[++i], &end);
            if (!end || *end || end == argv[i] || !(opt.threshold >= 0 && opt.threshold < 100))
                return cp_usage_error("--threshold wants a fraction such as 0.1, got '%s'",
                                      argv[i]);
        } else if (strcmp(argv[i], "--host-threshold") == 0 && i + 1 < argc) {
            char *end = NULL;
            opt.host_threshold = strtod(argv[++i], &end);
            if (!end || *end || end == argv[i] ||
                !(opt.host_threshold >= 0 && opt.host_threshold < 100))
                return cp_usage_error("--host-threshold wants a fraction such as 1.0, got '%s'",
                                      argv[i]);
        } else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "json") == 0)
                opt.json = true;
            else if (strcmp(argv[i], "text") == 0)
                opt.json = false;
            else
                return cp_usage_error("--format wants text or json, got '%s'", argv[i]);
        } else if (strcmp(argv[i], "--force") == 0) {
            opt.force = true;
        } else if (strcmp(argv[i], "--html") == 0) {
            if (i + 1 == argc || argv[i + 1][0] == '-' || argv[i + 1][0] == '\0')
                return cp_usage_error("%s", "--html wants the page's file name, such as "
                                            "compare.html");
            html = argv[++i];
        } else {
            return cp_usage_error("%s", usage);
        }
    }
    int regressions = 0;
    /* The page first: a path it cannot be written to stops the command
     * before anything reaches stdout. */
    if (html && cp_compare_reports_html(argv[0], argv[1], &opt, html, &regressions) < 0)
        return cp_usage_error("%s", cp_last_error());
    if (cp_compare_reports_opts(argv[0], argv[1], &opt, stdout, &regressions) < 0)
        return cp_usage_error("%s", cp_last_error());
    if (regressions) {
        /* With --format json, stdout holds the JSON alone. */
        fprintf(opt.json ? stderr : stdout, "cuproof: %d regression%s\n", regressions,
                regressions == 1 ? "" : "s");
        return CP_EXIT_FAILED;
    }
    return CP_EXIT_OK;
}
