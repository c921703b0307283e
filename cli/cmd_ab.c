/* cuproof ab A B [CASE...], or ab --exec -- PROGRAM_A ::: PROGRAM_B: two
 * builds, or two programs, in shuffled AB/BA pairs on this GPU, each
 * variant (a program's wall time and NVTX ranges) judged on its paired
 * ratios (cuproof/internal/ab.h); parse, the library's run, print. */
#include <cuproof/internal/ab.h>
#include "cli.h"

#include <cuproof/error.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] = "ab takes A B [CASE...] [--pairs N] [--min-pairs N] "
                            "[--threshold F] [--profile ci|full] [--out DIR] [--seed N], or "
                            "--exec [OPTIONS] -- PROGRAM_A... ::: PROGRAM_B...";

/* --exec's programs: argv from "--" split at ":::" (both non-empty), in
 * place. Returns -1, or the usage error's status. */
static int split_programs(int argc, char **argv, int at, char ***a, char ***b)
{
    int sep = -1;
    for (int i = at; i < argc && sep < 0; i++)
        if (strcmp(argv[i], ":::") == 0)
            sep = i;
    if (sep < 0 || sep == at || sep + 1 >= argc)
        return cp_usage_error("%s", "ab --exec wants -- PROGRAM_A [ARGS...] ::: PROGRAM_B "
                                    "[ARGS...]");
    argv[sep] = NULL; /* ends A's argv; B's ends at argv[argc], NULL by C */
    *a = &argv[at];
    *b = &argv[sep + 1];
    return -1;
}

/* cuproof ab: exit 0 when no variant of B is slower than A's by more than
 * the threshold, 1 when one is, 2 for bad usage, 3 when a variant stays
 * undecided after the pairs' budget, 5 for a build that cannot be run or
 * whose runs leave no report to read (the builds are the input), 6 when
 * the work directory cannot be written. */
int cp_cmd_ab(int argc, char **argv)
{
    bool exec = argc > 0 && strcmp(argv[0], "--exec") == 0;
    if (!exec && (argc < 2 || argv[0][0] == '-' || argv[1][0] == '-'))
        return cp_usage_error("%s", usage);
    char **cases = calloc((size_t)argc + 1, sizeof *cases);
    if (!cases) {
        fprintf(stderr, "cuproof: out of memory\n");
        return CP_EXIT_TOOL;
    }
    size_t ncases = 0;
    cp_ab_opts o = {.a = argv[0],
                    .b = argv[1],
                    .cases = cases,
                    .work_dir = "cuproof-ab",
                    .min_pairs = 5,
                    .max_pairs = 20,
                    .seed = (uint64_t)time(NULL),
                    .threshold = 0.05,
                    .min_effect = 0.02,
                    .max_time_s = 600,
                    .progress = stdout};
    int status = -1;
    char self[4096] = "";
    if (exec) {
        o.a = o.b = NULL;
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len > 0)
            self[len] = '\0';
        o.self = self;
    }
    const cp_help_opt *table = cp_opts_ab;
    for (int i = exec ? 1 : 2; i < argc && status < 0; i++) {
        if (exec && strcmp(argv[i], "--") == 0) {
            char **pa = NULL, **pb = NULL;
            status = split_programs(argc, argv, i + 1, &pa, &pb);
            o.exec_a = pa;
            o.exec_b = pb;
            break;
        }
        cp_arg g;
        int kind = cp_arg_next(table, argc, argv, &i, &g);
        const char *opt = g.opt, *val = g.val;
        if (kind == CP_ARG_BAD) {
            status = CP_EXIT_USAGE;
        } else if (kind == CP_ARG_OPERAND) {
            if (exec)
                status = cp_usage_error("%s", usage);
            else
                cases[ncases++] = (char *)g.operand;
        } else if (strcmp(opt, "--pairs") == 0) {
            if (!cp_parse_int(val, 2, 1000, &o.max_pairs))
                status = cp_usage_error("--pairs '%s': expected 2 to 1000", val ? val : "");
        } else if (strcmp(opt, "--min-pairs") == 0) {
            if (!cp_parse_int(val, 2, 1000, &o.min_pairs))
                status = cp_usage_error("--min-pairs '%s': expected 2 to 1000", val ? val : "");
        } else if (strcmp(opt, "--max-time") == 0) {
            char *end = NULL;
            o.max_time_s = val ? strtod(val, &end) : -1;
            if (!val || !end || *end || end == val || !(o.max_time_s >= 0 && o.max_time_s <= 1e6))
                status = cp_usage_error("--max-time wants seconds such as 600, got '%s'",
                                        val ? val : "");
        } else if (strcmp(opt, "--threshold") == 0) {
            char *end = NULL;
            o.threshold = val ? strtod(val, &end) : -1;
            if (!val || !end || *end || !(o.threshold >= 0 && o.threshold < 100))
                status = cp_usage_error("--threshold wants a fraction such as 0.05, got '%s'",
                                        val ? val : "");
        } else if (strcmp(opt, "--profile") == 0) {
            if (!val || (strcmp(val, "ci") != 0 && strcmp(val, "full") != 0))
                status = cp_usage_error("unknown profile '%s': use ci or full", val ? val : "");
            o.profile = val;
        } else if (strcmp(opt, "--out") == 0) {
            if (!val || !*val)
                status = cp_usage_error("%s", "--out needs a directory");
            o.work_dir = val;
        } else if (strcmp(opt, "--seed") == 0) {
            int seed;
            if (!cp_parse_int(val, 0, INT_MAX, &seed))
                status = cp_usage_error("--seed '%s': expected a number", val ? val : "");
            o.seed = (uint64_t)seed;
        } else if (strcmp(opt, "--exec") == 0) {
            status = cp_usage_error("%s", "--exec comes first: cuproof ab --exec [OPTIONS] -- "
                                          "PROGRAM_A... ::: PROGRAM_B...");
        } else {
            status = cp_opt_unparsed(opt);
        }
    }
    if (status < 0 && exec && !o.exec_a)
        status = cp_usage_error("%s", usage);
    if (status < 0 && o.min_pairs > o.max_pairs) {
        char why[96];
        snprintf(why, sizeof why, "--min-pairs %d is above --pairs %d", o.min_pairs, o.max_pairs);
        status = cp_usage_error("%s", why);
    }
    if (status >= 0) {
        free(cases);
        return status;
    }
    if (cp_make_dirs(o.work_dir) < 0) {
        free(cases);
        return cp_tool_error();
    }
    cp_ab_result r;
    int rc = cp_ab_run(&o, &r);
    if (rc < 0) {
        /* What is left to fail is a build's run or its report: the input's,
         * unless memory ran out. */
        fprintf(stderr, "cuproof ab: %s\n", cp_last_error());
        cp_ab_result_free(&r);
        free(cases);
        return cp_exit_of_read(rc);
    }
    cp_ab_print(&r, &o, stdout);
    status = cp_exit_of_verdicts(r.regressions, !r.all_decided);
    cp_ab_result_free(&r);
    free(cases);
    return status;
}
