/*
 * The `cuproof` command line: the usage text, the dispatch to one file per
 * command (cmd_*.c), and the helpers they share. It uses the library's
 * public headers only; nothing in the library includes it.
 */
#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/version.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
    "usage: cuproof <command> [options]\n"
    "\n"
    "commands:\n"
    "  list                      list the cases, one per line: name and title\n"
    "  run [CASE...]             run the named cases (all when none are named)\n"
    "  compare OLD.json NEW.json [--threshold F] [--host-threshold H] [--format text|json]\n"
    "          [--force]         per variant the ratio of medians, its 95% bootstrap interval,\n"
    "                            a rank test's p and a verdict (same, faster, slower, noisy),\n"
    "                            then changed checks and claims; exit 1 when a variant is\n"
    "                            slower by more than F (default 0.10) or a check now fails;\n"
    "                            a host-bound variant (its trace kept the GPU busy < 85% of\n"
    "                            its time) or an untraced one is noisy unless its change\n"
    "                            exceeds H (default 1.0, twice as slow); another GPU, driver\n"
    "                            or profile only informs unless --force\n"
    "          [--html OUT.html] also write it as one self-contained page: a chart and tables\n"
    "  gpus [--ctest-spec FILE] [--slots N]\n"
    "                            list the GPUs; write ctest's resource spec for them\n"
    "  timeline OUT.html TRACE.json...\n"
    "                            a page of timelines drawn from recorded trace files\n"
    "  export TRACE DIR [--format json|proto|rec|auto]\n"
    "                            write each variant of a recorded trace file (or a program's\n"
    "                            *.proc.jsonl files, merged, as DIR/program.*) for\n"
    "                            ui.perfetto.dev: json, a Chrome trace\n"
    "                            (DIR/CASE.VARIANT.perfetto.json); proto, Perfetto's own\n"
    "                            format (DIR/CASE.VARIANT.perfetto-trace), under a third of\n"
    "                            the size, for big traces; auto (the default): proto for a\n"
    "                            variant of more than 200000 records, else json; or rec, a\n"
    "                            cuproof.rec file (DIR/CASE.VARIANT.cprec) for check\n"
    "  metrics [--markdown]      the metrics and findings that expectations name\n"
    "  check TRACE... [--expect EXPR]... [--expect-file F] [--range NAME] [--allow-dropped]\n"
    "                            check expectations on recorded traces: TRACE.json files\n"
    "                            (per variant, as a case's), or a program's *.proc.jsonl\n"
    "                            files and directories of them (merged; scopes range(NAME),\n"
    "                            process(PID), device(N); --range NAME scopes the unscoped;\n"
    "                            the records are streamed, never held: twice for scopes),\n"
    "                            or cuproof.rec files (*.cprec, each a trace: streamed in\n"
    "                            bounded memory, twice for scopes; a file cut short exits 3\n"
    "                            unless --allow-dropped)\n"
    "  exec [options] -- PROGRAM [ARGS...]\n"
    "                            run an unmodified program with CUPTI injected into each of\n"
    "                            its processes, check expectations on the merged trace and\n"
    "                            write the reports (see exec options)\n"
    "  replay DIR [--out OUT]    rebuild the report of a recorded run (a `run --out DIR` on a\n"
    "                            GPU machine) without a GPU: metrics, timings and declared\n"
    "                            checks recomputed from its traces and samples and held to\n"
    "                            the recording (exit 1 where they differ), the rest as\n"
    "                            recorded; labelled as a replay everywhere\n"
    "  help                      show this text\n"
    "\n"
    "run options:\n"
    "  --profile ci|full         problem sizes: ci (small, the default) or full (the sources')\n"
    "  --repeat N                exactly N timed runs per variant, 1..1000 (default for test: 3;\n"
    "                            for run: the stopping rule below)\n"
    "  --min-samples N, --max-samples N, --max-noise F, --min-time S, --max-time S\n"
    "                            the stopping rule: timed runs until the median's relative\n"
    "                            standard error is at most F (ci: 5..50 runs, 0.02, 1 s;\n"
    "                            full: 5..100, 0.01, 5 s); the report says what ended them\n"
    "  --warmup N                untimed runs before them, 0..100 (default 1)\n"
    "  --out DIR                 where report.json, report.html and traces go\n"
    "                            (default cuproof-out; created if missing)\n"
    "  --no-trace                skip the traced run of each variant\n"
    "  --param NAME=VALUE        override a case's size or count within its bounds\n"
    "                            (repeatable; recorded in the report)\n"
    "  --devices 0,1,...         spread the cases over these GPUs (one at a time)\n"
    "\n"
    "run writes CASE.trace.json and, per traced variant, CASE.VARIANT.perfetto.json.\n"
    "\n"
    "exec options:\n"
    "  --expect EXPR             an expectation (repeatable): [SCOPE:] METRIC OP NUMBER,\n"
    "                            [SCOPE:] [no] finding NAME; SCOPE range(NAME), process(PID)\n"
    "                            or device(N); none = the whole program\n"
    "  --expect-file F           expectations, one per line (# comments)\n"
    "  --range NAME              scope every unscoped expectation to NVTX ranges NAME\n"
    "  --out DIR                 reports, the merged trace and proc/ (default cuproof-exec)\n"
    "  --timeout S               kill the program after S seconds (it then failed)\n"
    "  --repeat N                then N timed runs, NVTX ranges alone recorded: the wall\n"
    "                            time and each range's durations as samples for compare\n"
    "  --allow-dropped           check a trace that lost records instead of refusing it\n"
    "  --keep-going              check the expectations even when the trace is not trusted\n"
    "  --skip-without-gpu        exit 77 (ctest's skip) when no GPU is visible\n"
    "  --format jsonl|rec        how each process writes its trace in proc/: JSON lines\n"
    "                            (HOST.PID.proc.jsonl, the default) or cuproof.rec\n"
    "                            (HOST.PID.proc.cprec: a fifth of the size, for long\n"
    "                            programs); CUPROOF_EXEC_FORMAT sets the default\n"
    "  --keep-records N          records held in memory at most (default 200000); past N\n"
    "                            they are streamed: analysed in bounded memory, written to\n"
    "                            OUT/PROGRAM.cprec and a Perfetto protobuf, drawn as a\n"
    "                            summary; CUPROOF_EXEC_KEEP_RECORDS sets the default\n"
    "\n"
    "Exit status: 0 all cases passed or were skipped, 1 a case failed, 2 bad usage, 3 none\n"
    "failed but one was inconclusive (a check its claim rests on could not be made).\n"
    "check: 0 every expectation held, 1 one failed, 2 bad usage or a malformed or unknown\n"
    "expectation, 3 a trace that cannot be read, holds no kernel, copy or memset, or lost\n"
    "records (unless --allow-dropped); truncated processes are reported, not failed.\n"
    "exec: 0 every expectation held and the program succeeded, 1 an expectation failed,\n"
    "2 bad usage or a malformed expectation, 3 tool error (another profiler holds CUPTI, no\n"
    "process used CUDA, no device activity, dropped records, an unreadable trace), 4 the\n"
    "program failed (non-zero exit, a signal, the timeout); the worst wins: 3, then 4, then 1;\n"
    "77 with --skip-without-gpu and no GPU.\n";


int cp_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "cuproof: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see cuproof --help)\n");
    return CP_EXIT_USAGE;
}

/* Parses a decimal integer in [lo, hi]; false for anything else. */
bool cp_parse_int(const char *s, int lo, int hi, int *out)
{
    if (!s || !*s)
        return false;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

/* Creates `dir` and its parents; fails when a component is not a directory
 * or cannot be created, or when the directory is not writable. */
int cp_make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return cp_failf(CP_EINVAL, "output directory path is too long");
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            struct stat st;
            if (stat(path, &st) != 0) {
                if (mkdir(path, 0777) != 0 && errno != EEXIST)
                    return cp_failf(CP_EIO, "cannot create output directory %s: %s", path,
                                    strerror(errno));
            } else if (!S_ISDIR(st.st_mode)) {
                return cp_failf(CP_EIO, "cannot create output directory %s: %s is not a directory",
                                dir, path);
            }
            *p = c;
            if (c == '\0')
                break;
        }
    }
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/.cuproof-write-test", dir);
    FILE *f = fopen(probe, "w");
    if (!f)
        return cp_failf(CP_EIO, "output directory %s is not writable: %s", dir, strerror(errno));
    fclose(f);
    remove(probe);
    return 0;
}


typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
    {"list", cp_cmd_list},         {"run", cp_cmd_run},         {"test", cp_cmd_test},
    {"gpus", cp_cmd_gpus},         {"export", cp_cmd_export},   {"compare", cp_cmd_compare},
    {"timeline", cp_cmd_timeline}, {"metrics", cp_cmd_metrics},   {"check", cp_cmd_check},
    {"exec", cp_cmd_exec},         {"replay", cp_cmd_replay},
};

int cp_cli_main(int argc, char **argv)
{
    if (argc < 2)
        return cp_usage_error("%s", "missing command: list, run or help");
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage, stdout);
        return CP_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("cuproof %s\n", cp_version());
        return CP_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].run(argc - 2, argv + 2);
    return cp_usage_error("unknown command '%s'", cmd);
}
