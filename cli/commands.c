/*
 * The table of commands (cp_commands: each command's name, the function
 * that runs it, its synopsis, description and options) and the renderers
 * that print it. The option tables are the one list of each command's
 * options: the parsers read them (cp_arg_next, cli.c), a later pass of
 * run --runs K keeps the rows marked `kept`, and every form of the help
 * prints them.
 *
 *   cuproof help, cuproof --help       every command (text)
 *   cuproof help CMD, cuproof CMD --help   one command (text)
 *   cuproof help --man                 cuproof.1, troff: the build writes
 *                                      the man page with it (hidden)
 *   cuproof help --markdown            docs/cli.md (hidden; a test holds the
 *                                      committed page equal to it)
 *   cuproof help --options             the option tables as the parsers
 *                                      read them (hidden; for
 *                                      tests/options_test.sh)
 *
 * Why a table in C rather than a text file embedded at build time: the
 * exit statuses live in a C macro (CP_EXIT_MAP in cuproof/exit.h) that
 * only C can read without a second parser; the dispatch in cli.c walks
 * this same table, so a command cannot exist without its help; and the
 * binary that prints `cuproof help` is the one that writes the man page
 * and docs/cli.md, so the three forms come from one program and cannot
 * drift. Text is written as unwrapped prose and wrapped here (80 columns)
 * or by troff and the Markdown viewer.
 */
#include "cli.h"

#include <cuproof/version.h>

#include <stdio.h>
#include <string.h>

/* A row leaves its last field (`kept`) unset where it is false: a row is
 * its flags and text, as the help prints them. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* The options of each command are in options.c (cp_opts_*), which the
 * parsers read too. */

/* ---- The table ---- */

/* The environment variables a user may set (those cuproof exec sets for
 * the processes it traces are its own business and left out). */
static const cp_help_opt environment[] = {
    {"CUPROOF_REQUIRE_GPU=1", "test fails (exits 1) where it would be skipped for want of a "
                              "GPU: a GPU machine with a broken driver must not pass by "
                              "skipping; ci/gpu.sh sets it"},
    {"CUPROOF_NO_TRACE=1", "cases run untraced: the report says why, and every check that reads "
                           "a trace is skipped with that reason, never passed"},
    {"CUPROOF_PROGRESS=plain", "progress as plain lines, even on a terminal"},
    {"CUPROOF_CHECK_GPU_TIME=1", "a check of the GPU-time figure: every timed run judged on the "
                                 "GPU's time is traced too, and the report's series "
                                 "timed_gpu_ms, timed_cupti_span_ms and timed_cupti_own_ms hold "
                                 "its events against CUPTI's span and own busy time of the same "
                                 "run's work (ci/gpu-figure.py); its "
                                 "timings are the tracer's, never for a report to compare"},
    {"CUPROOF_ASLR=1", "run and test keep address-space randomisation; by default they start "
                       "themselves again without it (as setarch -R does), so that a host-bound "
                       "variant's time does not move with each process's layout; the report's "
                       "environment says which (address_layout), and compare warns when two "
                       "sides differ"},
    {"CUPROOF_CPU_AFFINITY=gpu", "run binds itself to the CPUs local to its GPU (NVML's CPU "
                                 "affinity, the GPU's NUMA node) before timing, so that no "
                                 "launch runs on a far socket; all (the default) leaves the "
                                 "scheduler's choice; the report's environment says which "
                                 "(cpu_affinity, cpus), and compare warns when two sides differ"},
    {"CUPROOF_SHARED_GPU=1", "other processes share the GPU: the report notes that its free "
                             "memory does not measure the case"},
    {"CUPROOF_CUPTI_BUFFER_KB, CUPROOF_CUPTI_MAX_BUFFERS",
     "the size of each CUPTI activity buffer in KiB, and the most buffers CUPTI is given; past "
     "them records are dropped, which fails the case"},
    {"CUPROOF_EXEC_FORMAT, CUPROOF_EXEC_API, CUPROOF_EXEC_KEEP_RECORDS",
     "the defaults of exec's --format, --api and --keep-records"},
    {"CUPROOF_EXEC_FOLLOW=0", "exec reads the traces after the program instead of while it runs "
                              "(for comparisons; report.json's tracing_cost counts the records "
                              "read during and after the run)"},
    {"CUPROOF_EXEC_KINDS", "a comma-separated list of the CUPTI record kinds exec traces "
                           "(kernel, memcpy, memset, runtime, driver, sync, stream, context, "
                           "device, marker, name, overhead; default all): a diagnostic of what each "
                           "costs (ci/bench/launch-bound.sh), whose verdicts read only what was "
                           "traced; a name not in the list traces nothing and gives no verdict"},
    {"CUPROOF_EXEC_HOOKS", "driver: exec hooks the flush before a device reset in the driver "
                           "(cuDevicePrimaryCtxReset) instead of the runtime (cudaDeviceReset); "
                           "none: it hooks no call (no flush before a reset, no cuProfilerStart "
                           "marks); diagnostics of what CUPTI's callbacks cost "
                           "(ci/bench/launch-bound.sh)"},
    {"CUPROOF_INJECT_LIB", "the injection library exec loads into the program (default: "
                           "libcuproof_inject.so beside libcuproof)"},
    {"CTEST_RESOURCE_GROUP_0_GPUS", "set by ctest's resource allocation (see gpus "
                                    "--ctest-spec): the GPU a test runs on"},
    {NULL, NULL},
};

/* Two examples a command: the command line, and what it does. */
static const cp_help_opt list_examples[] = {
    {"cuproof list",
     "the cases, one per line"},
    {"cuproof list | grep conway",
     "the Game of Life cases alone"},
    {NULL, NULL},
};

static const cp_help_opt run_examples[] = {
    {"cuproof run multi-kernel --out out",
     "one case, its report in out/report.json and out/report.html"},
    {"cuproof run --profile ci --runs 3 --out runs/today",
     "every case three times, each pass after the first in a process of its own, for compare"},
    {NULL, NULL},
};

static const cp_help_opt test_examples[] = {
    {"cuproof test vector-add",
     "one case as a ctest test: its exit status is the case's (77 skipped)"},
    {"cuproof test multi-kernel --out out",
     "the same, keeping its report and traces"},
    {NULL, NULL},
};

static const cp_help_opt compare_examples[] = {
    {"cuproof compare runs/monday runs/today",
     "two run directories, variant by variant"},
    {"cuproof compare --old a --old b --new c --new d --html cmp.html",
     "two reports a side, and the page"},
    {NULL, NULL},
};

static const cp_help_opt ab_examples[] = {
    {"cuproof ab main/build/cuproof build/cuproof multi-kernel --pairs 20",
     "two builds in shuffled pairs on this GPU"},
    {"cuproof ab --exec -- ./old_app ::: ./new_app",
     "two programs, on their wall and NVTX range times"},
    {NULL, NULL},
};

static const cp_help_opt gpus_examples[] = {
    {"cuproof gpus",
     "the GPUs this machine has"},
    {"cuproof gpus --ctest-spec gpus.json",
     "ctest's resource spec, one slot per GPU"},
    {NULL, NULL},
};

static const cp_help_opt timeline_examples[] = {
    {"cuproof timeline out.html out/multi-kernel.trace.json",
     "one case's timelines as a page"},
    {"cuproof timeline all.html out/*.trace.json",
     "every case's"},
    {NULL, NULL},
};

static const cp_help_opt export_examples[] = {
    {"cuproof export out/multi-kernel.trace.json perfetto",
     "a Perfetto file per variant"},
    {"cuproof export out/multi-kernel.trace.json perfetto --format proto",
     "the same as Perfetto protobuf"},
    {NULL, NULL},
};

static const cp_help_opt metrics_examples[] = {
    {"cuproof metrics",
     "every metric and finding an expectation can name"},
    {"cuproof metrics --markdown",
     "the same as the Markdown tables of docs/DESIGN.md"},
    {NULL, NULL},
};

static const cp_help_opt check_examples[] = {
    {"cuproof check out/multi-kernel.trace.json --expect 'streams-pinned: peak_concurrent_kernels > 1'",
     "one expectation on a recorded case"},
    {"cuproof check cuproof-exec/proc --expect-file train.expect",
     "a file of expectations on a traced program's records"},
    {NULL, NULL},
};

static const cp_help_opt exec_examples[] = {
    {"cuproof exec --expect 'copy_kernel_overlap_ratio > 0.3' -- ./app",
     "trace a program and check it"},
    {"cuproof exec --range step --expect-file ddp.expect -- torchrun --nproc_per_node=2 train.py",
     "every rank of a job, inside its NVTX range step"},
    {NULL, NULL},
};

static const cp_help_opt replay_examples[] = {
    {"cuproof replay samples/recordings",
     "rebuild a recorded run's report without a GPU"},
    {"cuproof replay samples/recordings --out replayed",
     "the same, writing the rebuilt report"},
    {NULL, NULL},
};

static const cp_help_opt help_examples[] = {
    {"cuproof help run",
     "one command's help"},
    {"cuproof help exit",
     "the exit statuses every command shares"},
    {"cuproof help --markdown > docs/cli.md",
     "every command's, as docs/cli.md holds it"},
    {NULL, NULL},
};

/* In the order `cuproof help` shows them. `exits` says when the command
 * gives which status; what each status means is the exit table's. */
const cp_command cp_commands[] = {
    {.name = "list",
     .args = "",
     .summary = "list the cases, one per line: name and title",
     .run = cp_cmd_list,
     .examples = list_examples,
     .text = "Lists the cases built into this executable, one per line: its name, then its "
             "title. Each case's declaration is checked as it is listed, with no GPU needed: its "
             "baseline, and its expectations' syntax, variants, metrics and findings; every "
             "error is said with its file, line and column.",
     .exits = "2 when a case is declared with errors."},
    {.name = "run",
     .args = "[CASE...] [OPTIONS]",
     .summary = "run the named cases (all when none are named)",
     .run = cp_cmd_run,
     .examples = run_examples,
     .text = "Runs the named cases, or every case when none is named: each variant's untimed "
             "warm-up runs, its timed runs and one traced run, its checks against the CPU "
             "reference and its claims against the trace.\n\n"
             "run writes report.json and report.html to the output directory, CASE.trace.json "
             "per case and, per traced variant, CASE.VARIANT.perfetto.json for ui.perfetto.dev.",
     .opts = cp_opts_run,
     .exits = "0 when every case passed or was skipped, 1 when one failed, 3 when none failed "
              "but one was inconclusive (a check its claim rests on could not be made), 6 when "
              "the output directory or the report cannot be written."},
    {.name = "test",
     .args = "CASE [OPTIONS]",
     .summary = "run one case as a ctest test",
     .run = cp_cmd_test,
     .examples = test_examples,
     .opts = cp_opts_test,
     .text = "Runs one case as run does, as a ctest test: three timed runs unless --repeat or "
             "the stopping rule's options say otherwise, and files only when --out is given. "
             "It takes run's options but --devices and --runs: ctest places each test on its "
             "GPU.",
     .exits = "the case's: 0 passed, 1 failed or inconclusive, 77 skipped (no GPU; 1 with "
              "CUPROOF_REQUIRE_GPU=1); 6 when --out cannot be written."},
    {.name = "compare",
     .args = "OLD.json NEW.json | --old PATH... --new PATH... [OPTIONS]",
     .summary = "compare reports, variant by variant",
     .run = cp_cmd_compare,
     .examples = compare_examples,
     .text = "Compares two reports (report.json of two runs), or several a side: per variant "
             "the ratio of medians, its 95% bootstrap interval, a rank test's p, a verdict "
             "(same, faster, slower, noisy) and the runs it rests on, then the checks, case "
             "statuses, claims and findings that changed. A variant is judged on the GPU's "
             "time (CUDA events, report schema 1.14; its traced runs' own busy time where the "
             "events hold waits) with its wall time beside it, or on wall time where its case "
             "says so (at --host-threshold) or a report predates GPU time; each verdict names "
             "its figure. Reports that time no variant in "
             "common (exec without --repeat) compare the rest.",
     .opts = cp_opts_compare,
     .exits = "1 when a variant is slower by more than the threshold or a check now fails "
              "(a report against itself: 0, whatever it holds); 5 for a report that cannot be "
              "read or parsed, or a file that is no cuproof report (each named, with its line "
              "and column; the others still compared); 6 for a page that cannot be written."},
    {.name = "ab",
     .args = "A B [CASE...] [OPTIONS] | --exec [OPTIONS] -- PROGRAM_A... ::: PROGRAM_B...",
     .summary = "run two builds in shuffled pairs and compare them, variant by variant",
     .run = cp_cmd_ab,
     .examples = ab_examples,
     .text = "Runs two builds of cuproof (two cuproof executables, or two install prefixes) on "
             "this GPU in pairs, each pair back to back in an order drawn at random (AB or BA), "
             "each run `run --runs 1` of the named cases (every case when none is named). "
             "Each variant is judged on the paired log ratios of its medians B / A, of the "
             "figure compare would judge (the GPU's time, else wall time): what "
             "drifts over minutes drifts within a pair far less than between runs minutes "
             "apart. Pairs are added until every variant is decided (slower, faster or the "
             "same within the threshold; the risk of a false verdict split over the looks) or "
             "the budget is spent. The mode for a pull request's CI job.\n\n"
             "With --exec, two programs instead: each run is `cuproof exec --repeat 1` of one, "
             "judged on its wall time and each NVTX range's.",
     .opts = cp_opts_ab,
     .exits = "0 when no variant of B is slower than A's by more than the threshold, 1 when "
              "one is, 3 when a variant is still undecided after the budget, 5 for a build that "
              "cannot be run or leaves no report, 6 when the work directory cannot be "
              "written."},
    {.name = "gpus",
     .args = "[OPTIONS]",
     .summary = "list the GPUs; write ctest's resource spec for them",
     .run = cp_cmd_gpus,
     .examples = gpus_examples,
     .text = "Lists the GPUs the CUDA runtime sees, one per line: index, name, compute "
             "capability, multiprocessors and memory.",
     .opts = cp_opts_gpus,
     .exits = "1 when there is no GPU; 6 when the driver fails or the spec cannot be "
              "written."},
    {.name = "timeline",
     .args = "OUT.html TRACE.json...",
     .summary = "a page of timelines drawn from recorded trace files",
     .run = cp_cmd_timeline,
     .examples = timeline_examples,
     .text = "Writes OUT.html, one self-contained page of timelines drawn from 1 to 64 recorded "
             "trace files (CASE.trace.json).",
     .exits = "5 when a trace cannot be read (each named, with its line and column; the others "
              "are still drawn), 6 when the page cannot be written."},
    {.name = "export",
     .args = "TRACE DIR [OPTIONS]",
     .summary = "write a recorded trace for ui.perfetto.dev",
     .run = cp_cmd_export,
     .examples = export_examples,
     .text = "Writes each variant of a recorded trace file (or a program's *.proc.jsonl files, "
             "merged, as DIR/program.*) to DIR, for ui.perfetto.dev or for check.",
     .opts = cp_opts_export,
     .exits = "5 when the trace cannot be read or parsed (named, with its line and column), 6 "
              "when a file cannot be written."},
    {.name = "metrics",
     .args = "[OPTIONS]",
     .summary = "the metrics and findings that expectations name",
     .run = cp_cmd_metrics,
     .examples = metrics_examples,
     .text = "Lists the metrics (name, unit, definition) and the findings (name, when raised) "
             "that expectations name.",
     .opts = cp_opts_metrics},
    {.name = "check",
     .args = "TRACE... [--expect EXPR]... [OPTIONS]",
     .summary = "check expectations on recorded traces",
     .run = cp_cmd_check,
     .examples = check_examples,
     .text = "Checks expectations on recorded traces: TRACE.json files (per variant, as a "
             "case's, with device(N) for each variant's part on GPU N); or a program's *.proc.jsonl files and directories of them, merged, with "
             "the scopes range(NAME), process(PID), device(N), rank(N) and collective(OP), "
             "every rank and "
             "rank spread, and --range NAME for the "
             "unscoped (the records are streamed, never held: twice for scopes); or "
             "cuproof.rec files (*.cprec, each a trace: streamed in bounded memory, twice for "
             "scopes). Without an expectation it prints what each trace measured, scope by "
             "scope as expectations name them (a case's variants; a program, each range, each "
             "device where it ran on several, each rank): every metric with its value and "
             "unit, and the findings, exit 0 (--format json for a program to read).",
     .opts = cp_opts_check,
     .exits = "0 every expectation held (without one: measured), 1 one failed, 2 bad usage or a "
              "malformed or unknown "
              "--expect, 3 a trace that holds no kernel, copy or memset, or lost records or was "
              "cut short (unless --allow-dropped); truncated processes are reported, not failed; "
              "5 a trace or an --expect-file that cannot be read or holds errors (each named, "
              "with its line and column; the other traces still checked)."},
    {.name = "exec",
     .args = "[OPTIONS] -- PROGRAM [ARGS...]",
     .summary = "trace an unmodified program and check it",
     .run = cp_cmd_exec,
     .examples = exec_examples,
     .text = "Runs an unmodified program with CUPTI injected into each of its processes, checks "
             "the expectations on the merged trace and writes the reports. Everything after -- "
             "belongs to the program, --help included.",
     .opts = cp_opts_exec,
     .exits = "0 every expectation held and the program succeeded, 1 an expectation failed, 2 "
              "bad usage, a malformed --expect, or a program that cannot be found or is not "
              "executable (checked before anything runs), 3 no verdict (another profiler holds CUPTI, no "
              "process used CUDA, no device activity, dropped records), 4 the program failed "
              "(non-zero exit, a signal, the timeout), 5 an --expect-file that cannot be read or "
              "holds errors, 6 an output directory it cannot write or a launch that failed; 77 "
              "with --skip-without-gpu and no GPU."},
    {.name = "replay",
     .args = "DIR [OPTIONS]",
     .summary = "rebuild the report of a recorded run without a GPU",
     .run = cp_cmd_replay,
     .examples = replay_examples,
     .text = "Rebuilds the report of a recorded run (a `run --out DIR` on a GPU machine) "
             "without a GPU: metrics, timings and declared checks recomputed from its traces "
             "and samples and held to the recording, the rest as recorded; labelled as a "
             "replay everywhere.",
     .opts = cp_opts_replay,
     .exits = "1 where the recomputed report differs from the recording; 5 when DIR/report.json, "
              "or a case's trace file, cannot be read (the case named and left out, the others "
              "replayed); 6 when OUT cannot be written."},
    {.name = "help",
     .args = "[COMMAND | exit]",
     .summary = "show this help, or one command's",
     .run = cp_cmd_help,
     .examples = help_examples,
     .text = "Shows the help of every command, or of COMMAND alone; `cuproof COMMAND --help` "
             "does the same, and points at the exit statuses every command shares, which "
             "`cuproof help exit` prints. The man page cuproof(1) holds the same text."},
};
const size_t cp_ncommands = sizeof cp_commands / sizeof cp_commands[0];

static const char intro[] =
    "cuproof runs CUDA experiments as test cases: a CPU reference the GPU result must match, "
    "NVTX ranges around every phase, and a CUPTI activity trace from which it measures "
    "overlap, concurrency and idle time, then checks the claims made about them. It also "
    "traces unmodified programs (exec), checks recorded traces (check), compares reports "
    "(compare) and replays a recorded run without a GPU (replay).";

const cp_command *cp_command_find(const char *name)
{
    for (size_t i = 0; i < cp_ncommands; i++)
        if (strcmp(cp_commands[i].name, name) == 0)
            return &cp_commands[i];
    return NULL;
}

/* ---- Renderers ---- */

typedef enum { FMT_TEXT, FMT_MAN, FMT_MARKDOWN } fmt;

/* Text: lines end before column 80; prose is indented by INDENT, the tag
 * of an option or a status by TAG_INDENT, and its text by ITEM_INDENT. */
enum { WIDTH = 80, INDENT = 4, TAG_INDENT = 6, ITEM_INDENT = 30 };

/* Text: prints `s` (`n` bytes) wrapped to WIDTH with every line indented
 * by `indent`; `col` is the column the cursor already stands at (the first
 * line goes on from there, or starts afresh when nothing fits). */
static void wrap(FILE *out, const char *s, size_t n, int indent, int col)
{
    const char *end = s + n;
    bool first = true;
    while (s < end) {
        while (s < end && *s == ' ')
            s++;
        const char *w = s;
        while (s < end && *s != ' ')
            s++;
        int len = (int)(s - w);
        if (len == 0)
            break;
        if (!first && col + 1 + len > WIDTH - 1) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (!first) {
            fputc(' ', out);
            col++;
        } else if (col > indent && col + 1 + len > WIDTH - 1) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col < indent) {
            fprintf(out, "%*s", indent - col, "");
            col = indent;
        }
        fwrite(w, 1, (size_t)len, out);
        col += len;
        first = false;
    }
    fputc('\n', out);
}

/* troff: `s` with its backslashes and hyphens escaped (\- keeps options
 * copyable: a bare - may print as a typographic hyphen), and a leading
 * . or ' made literal so it is not read as a request. */
static void man_text(FILE *out, const char *s, size_t n)
{
    if (n > 0 && (*s == '.' || *s == '\''))
        fputs("\\&", out);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\')
            fputs("\\e", out);
        else if (s[i] == '-')
            fputs("\\-", out);
        else
            fputc(s[i], out);
    }
}

/* Markdown: `s` with what Markdown would read as markup escaped, except
 * inside `code spans`, which are kept as written. */
static void md_text(FILE *out, const char *s, size_t n)
{
    bool code = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '`')
            code = !code;
        else if (!code && strchr("\\*_<>[]|#", c))
            fputc('\\', out);
        fputc(c, out);
    }
}

/* A paragraph of prose in each format. */
static void para(FILE *out, fmt f, const char *s, size_t n)
{
    switch (f) {
    case FMT_TEXT:
        wrap(out, s, n, INDENT, 0);
        break;
    case FMT_MAN:
        fputs(".PP\n", out);
        man_text(out, s, n);
        fputc('\n', out);
        break;
    case FMT_MARKDOWN:
        md_text(out, s, n);
        fputc('\n', out);
        break;
    }
}

/* The paragraphs of `s`, split at blank lines ("\n\n"), a blank line
 * between them (troff's .PP makes its own). */
static void paras(FILE *out, fmt f, const char *s)
{
    for (bool first = true;; first = false) {
        const char *brk = strstr(s, "\n\n");
        size_t n = brk ? (size_t)(brk - s) : strlen(s);
        if (!first && f != FMT_MAN)
            fputc('\n', out);
        para(out, f, s, n);
        if (!brk)
            break;
        s = brk + 2;
    }
}

static void heading(FILE *out, fmt f, const char *title)
{
    switch (f) {
    case FMT_TEXT:
        fprintf(out, "\n%s\n", title);
        break;
    case FMT_MAN:
        fprintf(out, ".SH \"");
        man_text(out, title, strlen(title));
        fprintf(out, "\"\n");
        break;
    case FMT_MARKDOWN:
        fprintf(out, "\n## %s\n\n", title);
        break;
    }
}

/* A tagged item: an option, or an exit status. */
static void item(FILE *out, fmt f, const char *tag, const char *text)
{
    switch (f) {
    case FMT_TEXT: {
        fprintf(out, "%*s%s", TAG_INDENT, "", tag);
        int col = TAG_INDENT + (int)strlen(tag);
        if (col + 2 > ITEM_INDENT) { /* a long tag: its text on the lines below */
            fputc('\n', out);
            col = 0;
        } else {
            fprintf(out, "%*s", ITEM_INDENT - col, "");
            col = ITEM_INDENT;
        }
        wrap(out, text, strlen(text), ITEM_INDENT, col);
        break;
    }
    case FMT_MAN:
        fputs(".TP\n\\fB", out);
        man_text(out, tag, strlen(tag));
        fputs("\\fR\n", out);
        man_text(out, text, strlen(text));
        fputc('\n', out);
        break;
    case FMT_MARKDOWN:
        fprintf(out, "- `%s`: ", tag);
        md_text(out, text, strlen(text));
        fputc('\n', out);
        break;
    }
}

/* Lines kept as they are: synopses. */
static void verbatim(FILE *out, fmt f, const char *const *lines, size_t n, const char *lead)
{
    switch (f) {
    case FMT_TEXT:
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%*s%s%s\n", INDENT, "", lead, lines[i]);
        break;
    case FMT_MAN:
        fputs(".PP\n.nf\n", out);
        for (size_t i = 0; i < n; i++) {
            man_text(out, lead, strlen(lead));
            man_text(out, lines[i], strlen(lines[i]));
            fputc('\n', out);
        }
        fputs(".fi\n", out);
        break;
    case FMT_MARKDOWN:
        fputs("```\n", out);
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%s\n", lead, lines[i]);
        fputs("```\n", out);
        break;
    }
}

/* "cuproof NAME ARGS", the command's synopsis. */
static const char *synopsis(const cp_command *c, char *buf, size_t size)
{
    snprintf(buf, size, "cuproof %s%s%s", c->name, *c->args ? " " : "", c->args);
    return buf;
}

/* A titled list of a command's options or examples (none: nothing). */
static void items(FILE *out, fmt f, const char *title, const cp_help_opt *list)
{
    if (!list)
        return;
    if (f == FMT_TEXT)
        fprintf(out, "\n    %s:\n", title);
    else if (f == FMT_MARKDOWN)
        fprintf(out, "\n%s:\n\n", title);
    else
        fprintf(out, ".PP\n%s:\n", title);
    for (const cp_help_opt *o = list; o->flags; o++)
        item(out, f, o->flags, o->text);
}

/* One command: its description, options, examples and exit statuses (the
 * caller prints its synopsis). */
static void command_body(FILE *out, fmt f, const cp_command *c)
{
    paras(out, f, c->text);
    items(out, f, "options", c->opts);
    items(out, f, "examples", c->examples);
    if (c->exits) {
        char text[1024];
        snprintf(text, sizeof text, "Exit status: %s", c->exits);
        if (f != FMT_MAN)
            fputc('\n', out);
        para(out, f, text, strlen(text));
    }
}

/* The note above the statuses: the order in which the worst wins, read
 * from cp_exit_worse itself so that the help cannot state another rule. */
static void worst_first(char *buf, size_t size)
{
    int v[] = {
#define CP_EXIT_VALUE_(name, value, text) value,
        CP_EXIT_MAP(CP_EXIT_VALUE_)
#undef CP_EXIT_VALUE_
    };
    size_t n = sizeof v / sizeof v[0];
    for (size_t i = 1; i < n; i++) /* insertion sort, worst first */
        for (size_t k = i; k > 0 && cp_exit_worse(v[k], v[k - 1]) == v[k] && v[k] != v[k - 1];
             k--) {
            int t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
    size_t used = (size_t)snprintf(buf, size, "The same numbers for every command (one table, "
                                               "cuproof/exit.h); when several apply, the worst "
                                               "wins, in this order:");
    /* 77 ranks below success, but it means "nothing ran", so it is said
     * apart. */
    for (size_t i = 0; i < n && used < size; i++)
        if (v[i] != CP_EXIT_SKIPPED)
            used += (size_t)snprintf(buf + used, size - used, "%s %d", i ? "," : "", v[i]);
    if (used < size)
        snprintf(buf + used, size - used, "; %d only when everything was skipped.",
                 CP_EXIT_SKIPPED);
}

/* EXIT STATUS, from the one table every command shares (cuproof/exit.h). */
static void exit_statuses(FILE *out, fmt f)
{
    heading(out, f, "EXIT STATUS");
    if (f == FMT_MARKDOWN) {
        char note[256];
        worst_first(note, sizeof note);
        para(out, f, note, strlen(note));
        fputc('\n', out);
        fputs("| status | meaning |\n|---|---|\n", out);
#define CP_EXIT_ROW_(name, value, text)                                                            \
    fprintf(out, "| %d | ", value), md_text(out, text, strlen(text)), fputs(" |\n", out);
        CP_EXIT_MAP(CP_EXIT_ROW_)
#undef CP_EXIT_ROW_
    } else {
        char note[256];
        worst_first(note, sizeof note);
        para(out, f, note, strlen(note));
        if (f == FMT_TEXT)
            fputc('\n', out);
#define CP_EXIT_ITEM_(name, value, text) item(out, f, #value, text);
        CP_EXIT_MAP(CP_EXIT_ITEM_)
#undef CP_EXIT_ITEM_
    }
}

/* The synopsis of every command; `lead` (or NULL) comes first. */
static void synopses(FILE *out, fmt f, const char *lead)
{
    const char *lines[sizeof cp_commands / sizeof cp_commands[0] + 3];
    char bufs[sizeof cp_commands / sizeof cp_commands[0]][160];
    size_t n = 0;
    if (lead)
        lines[n++] = lead;
    for (size_t i = 0; i < cp_ncommands; i++)
        lines[n++] = synopsis(&cp_commands[i], bufs[i], sizeof bufs[i]);
    lines[n++] = "cuproof COMMAND --help";
    lines[n++] = "cuproof --version";
    verbatim(out, f, lines, n, "");
}

/* The first line of the synopsis; the text form prints it as "usage: ...",
 * the man page under SYNOPSIS. */
#define USAGE "cuproof COMMAND [ARGS...]"

/* Everything: the text of `cuproof help`, cuproof.1 and docs/cli.md. */
static void all(FILE *out, fmt f)
{
    switch (f) {
    case FMT_TEXT:
        fputs("usage: " USAGE "\n\n", out);
        synopses(out, f, NULL);
        break;
    case FMT_MAN:
        fprintf(out,
                ".\\\" Generated by `cuproof help --man` from cli/commands.c; do not edit.\n"
                ".TH CUPROOF 1 \"\" \"cuproof %s\" \"cuproof manual\"\n"
                ".nh\n.ad l\n"
                ".SH NAME\ncuproof \\- a test-and-profiling harness for CUDA\n"
                ".SH SYNOPSIS\n",
                CUPROOF_VERSION_STRING);
        synopses(out, f, USAGE);
        break;
    case FMT_MARKDOWN:
        fputs("<!-- Generated by `cuproof help --markdown` from cli/commands.c; do not edit.\n"
              "     Refresh: build/default/cuproof help --markdown > docs/cli.md -->\n"
              "# The cuproof command line\n\n"
              "The same text as `cuproof help` and the man page cuproof(1).\n\n"
              "| command | what it does |\n|---|---|\n",
              out);
        for (size_t i = 0; i < cp_ncommands; i++) {
            fprintf(out, "| [`%s`](#cuproof-%s) | ", cp_commands[i].name, cp_commands[i].name);
            md_text(out, cp_commands[i].summary, strlen(cp_commands[i].summary));
            fputs(" |\n", out);
        }
        heading(out, f, "SYNOPSIS");
        synopses(out, f, USAGE);
        break;
    }
    heading(out, f, "DESCRIPTION");
    paras(out, f, intro);
    for (size_t i = 0; i < cp_ncommands; i++) {
        char title[64];
        snprintf(title, sizeof title, "cuproof %s", cp_commands[i].name);
        heading(out, f, title);
        char buf[160];
        const char *line = synopsis(&cp_commands[i], buf, sizeof buf);
        verbatim(out, f, &line, 1, "");
        if (f != FMT_MAN)
            fputc('\n', out);
        command_body(out, f, &cp_commands[i]);
    }
    exit_statuses(out, f);
    heading(out, f, "ENVIRONMENT");
    if (f == FMT_TEXT)
        fputc('\n', out);
    for (const cp_help_opt *e = environment; e->flags; e++)
        item(out, f, e->flags, e->text);
}

void cp_help_print(FILE *out, const cp_command *c)
{
    if (!c) {
        all(out, FMT_TEXT);
        return;
    }
    fputs("usage: ", out);
    char buf[160];
    fprintf(out, "%s\n\n", synopsis(c, buf, sizeof buf));
    command_body(out, FMT_TEXT, c);
    /* The one table is not repeated under every command: pointed at. */
    heading(out, FMT_TEXT, "EXIT STATUS");
    const char *shared = "The numbers above are the ones every command shares; when several "
                         "apply, the worst wins: cuproof help exit prints the table.";
    para(out, FMT_TEXT, shared, strlen(shared));
}

bool cp_help_wanted(int argc, char **argv)
{
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    return false;
}

/* cuproof help --options (hidden): each command's option table as the
 * parsers read it, a line per flag: COMMAND, FLAG, "value" or "-", "kept"
 * or "-" (tests/options_test.sh holds the parsers to it). */
static void options(FILE *out)
{
    size_t len;
    bool value;
    for (size_t i = 0; i < cp_ncommands; i++)
        for (const cp_help_opt *o = cp_commands[i].opts; o && o->flags; o++)
            for (const char *p = o->flags, *f; (f = cp_opt_flag(&p, &len, &value));)
                fprintf(out, "%s\t%.*s\t%s\t%s\n", cp_commands[i].name, (int)len, f,
                        value ? "value" : "-", o->kept ? "kept" : "-");
}

/* cuproof help [COMMAND | exit | --man | --markdown | --options] */
int cp_cmd_help(int argc, char **argv)
{
    if (argc > 1)
        return cp_usage_error("help takes at most one command, got '%s'", argv[1]);
    if (argc == 0) {
        cp_help_print(stdout, NULL);
        return CP_EXIT_OK;
    }
    if (strcmp(argv[0], "--man") == 0) {
        all(stdout, FMT_MAN);
        return CP_EXIT_OK;
    }
    if (strcmp(argv[0], "--markdown") == 0) {
        all(stdout, FMT_MARKDOWN);
        return CP_EXIT_OK;
    }
    if (strcmp(argv[0], "--options") == 0) {
        options(stdout);
        return CP_EXIT_OK;
    }
    if (strcmp(argv[0], "exit") == 0) {
        exit_statuses(stdout, FMT_TEXT);
        return CP_EXIT_OK;
    }
    const cp_command *c = cp_command_find(argv[0]);
    if (!c)
        return cp_usage_error("help: unknown command '%s' (cuproof help lists them)", argv[0]);
    cp_help_print(stdout, c);
    return CP_EXIT_OK;
}
