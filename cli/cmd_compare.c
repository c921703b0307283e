/* cuproof compare: parse, read each side's reports (each that cannot be
 * read named, the rest compared), build one comparison, print it as a
 * table, JSON or a page. */
#include <cuproof/internal/compare.h>
#include "cli.h"

#include <cuproof/internal/compare_stats.h>
#include <cuproof/error.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "compare takes OLD.json NEW.json, or --old PATH... --new PATH... "
                            "(reports or run directories) [--threshold F] "
                            "[--host-threshold F] [--format text|json] [--force] "
                            "[--html OUT.html]";

/* cuproof compare OLD NEW | --old PATH [--old PATH...] --new PATH
 * [--new PATH...] [--threshold F] [--host-threshold F]
 * [--format text|json] [--force] [--html OUT.html]:
 * exit 0, 1 on regressions, 2 for bad usage, 5 for a report that cannot be
 * read or parsed (each named; the others still compared), 6 for a page
 * that cannot be written. Each report is read once; the table, the JSON
 * and the page print the same comparison. */
int cp_cmd_compare(int argc, char **argv)
{
    const char *html = NULL;
    cp_compare_options opt = {.threshold = 0.10,
                              .min_effect = CP_CMP_MIN_EFFECT,
                              .host_threshold = CP_CMP_HOST_THRESHOLD};
    /* Every list holds at most argc paths. */
    const char **olds = calloc((size_t)argc + 1, sizeof *olds);
    const char **news = calloc((size_t)argc + 1, sizeof *news);
    const char **positional = calloc((size_t)argc + 1, sizeof *positional);
    size_t n_old = 0, n_new = 0, n_pos = 0;
    int rc = CP_EXIT_OK;
    if (!olds || !news || !positional) {
        fprintf(stderr, "cuproof: out of memory\n");
        rc = CP_EXIT_TOOL;
        goto out;
    }
    const cp_help_opt *table = cp_opts_compare;
    for (int i = 0; i < argc; i++) {
        cp_arg g;
        int kind = cp_arg_next(table, argc, argv, &i, &g);
        const char *flag = g.opt, *val = g.val;
        char *end = NULL;
        if (kind == CP_ARG_BAD) {
            rc = CP_EXIT_USAGE;
            goto out;
        }
        if (kind == CP_ARG_OPERAND) {
            if (i >= 2 || n_pos != (size_t)i) {
                rc = cp_usage_error("%s", usage);
                goto out;
            }
            /* OLD and NEW come first, as they always have. */
            positional[n_pos++] = g.operand;
        } else if (strcmp(flag, "--old") == 0 || strcmp(flag, "--new") == 0) {
            if (!val || val[0] == '-' || val[0] == '\0') {
                rc = cp_usage_error("%s wants a report.json or a run directory", flag);
                goto out;
            }
            if (flag[2] == 'o')
                olds[n_old++] = val;
            else
                news[n_new++] = val;
        } else if (strcmp(flag, "--threshold") == 0 || strcmp(flag, "--host-threshold") == 0) {
            bool host = flag[2] == 'h';
            double x = val ? strtod(val, &end) : -1;
            if (!val || !end || *end || end == val || !(x >= 0 && x < 100)) {
                rc = cp_usage_error(host ? "--host-threshold wants a fraction such as 1.0, got '%s'"
                                         : "--threshold wants a fraction such as 0.1, got '%s'",
                                    val ? val : "");
                goto out;
            }
            *(host ? &opt.host_threshold : &opt.threshold) = x;
        } else if (strcmp(flag, "--format") == 0) {
            if (!val || (strcmp(val, "json") != 0 && strcmp(val, "text") != 0)) {
                rc = cp_usage_error("--format wants text or json, got '%s'", val ? val : "");
                goto out;
            }
            opt.json = strcmp(val, "json") == 0;
        } else if (strcmp(flag, "--force") == 0) {
            opt.force = true;
        } else if (strcmp(flag, "--html") == 0) {
            if (!val || val[0] == '-' || val[0] == '\0') {
                rc = cp_usage_error("%s", "--html wants the page's file name, such as "
                                          "compare.html");
                goto out;
            }
            html = val;
        } else {
            rc = cp_opt_unparsed(flag);
            goto out;
        }
    }
    if (n_pos && (n_old || n_new)) {
        char why[512];
        snprintf(why, sizeof why, "compare takes OLD NEW or --old/--new, not both: '%s' given "
                                  "with --%s",
                 positional[0], n_old ? "old" : "new");
        rc = cp_usage_error("%s", why);
        goto out;
    }
    if (n_old || n_new) {
        if (!n_old || !n_new) {
            rc = cp_usage_error("%s", n_old ? "--old without --new: each side needs at least "
                                              "one report"
                                            : "--new without --old: each side needs at least "
                                              "one report");
            goto out;
        }
    } else if (n_pos == 2) {
        olds[n_old++] = positional[0];
        news[n_new++] = positional[1];
    } else {
        rc = cp_usage_error("%s", usage);
        goto out;
    }
    cp_comparison c;
    cp_errors bad = {0};
    int loaded = cp_compare_files(olds, n_old, news, n_new, &opt, &c, &bad);
    if (loaded < 0) {
        /* A side with no report left, each unreadable one named; or out of
         * memory. */
        rc = cp_input_error(loaded);
        goto out;
    }
    if (bad.n) {
        /* Named before the comparison of the rest, which leaves them out. */
        cp_errors_finish(&bad);
        fprintf(stderr, "cuproof: %s\ncuproof: %d report%s could not be read (named above) and "
                        "%s left out of the comparison\n",
                cp_last_error(), bad.n, bad.n == 1 ? "" : "s", bad.n == 1 ? "is" : "are");
    }
    /* The page first: a path it cannot be written to stops the command
     * before anything reaches stdout. */
    int printed = html ? cp_compare_write_html(&c, html) : 0;
    if (printed == 0)
        printed = opt.json ? cp_compare_print_json(&c, stdout) : cp_compare_print_text(&c, stdout);
    int regressions = c.regressions;
    cp_comparison_free(&c);
    if (printed < 0) {
        rc = cp_tool_error();
    } else if (regressions) {
        /* With --format json, stdout holds the JSON alone. */
        /* The JSON out first: a reader that merges the streams gets it whole. */
        fflush(stdout);
        fprintf(opt.json ? stderr : stdout, "cuproof: %d regression%s\n", regressions,
                regressions == 1 ? "" : "s");
        rc = CP_EXIT_FAILED;
    }
    if (bad.n)
        rc = cp_exit_worse(rc, CP_EXIT_INPUT);
out:
    free(olds);
    free(news);
    free(positional);
    return rc;
}
