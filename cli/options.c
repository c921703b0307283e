/*
 * Each command's options, the one list of them (cp_opts_*, cli.h): the
 * table of commands (commands.c) prints them in every form of the help,
 * the command's parser reads them through cp_arg_next (args.c), and a
 * later pass of run --runs K keeps the rows marked `kept`. Data alone, in
 * a file of its own, so that the parsers and the table of commands (which
 * names the parsers' commands) both reach it without calling each other.
 */
#include "cli.h"

#include <stddef.h>

/* A row leaves its last field (`kept`) unset where it is false: a row is
 * its flags and text, as the help prints them. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* run's and test's options; `kept`: a later pass of run --runs K, in a
 * process of its own, is run with them (cp_passes_opts.args). */
/* clang-format off */
#define RUN_OPTS_BEFORE                                                                     \
    {"--profile ci|full", "problem sizes: ci (small, the default) or full (the sources')", \
     true},                                                                                 \
    {"--repeat N", "exactly N timed runs per variant, 1..1000 (default for test: 3; for "   \
                   "run: the stopping rule below)", true}
#define RUN_OPTS_AFTER                                                                      \
    {"--min-samples N, --max-samples N, --max-noise F, --min-time S, --max-time S",        \
     "the stopping rule: timed runs until the median's relative standard error is at "    \
     "most F (ci: 5..50 runs, 0.02, 1 s; full: 5..100, 0.01, 5 s); the report says what " \
     "ended them", true},                                                                   \
    {"--warmup N", "untimed runs before them, 0..100 (default 1)", true},                  \
    {"--out DIR", "where report.json, report.html and traces go (default cuproof-out; "    \
                  "created if missing; test writes files only when given it)"},            \
    {"--no-trace", "skip the traced run of each variant", true},                           \
    {"--param NAME=VALUE", "override a case's size or count within its bounds "            \
                           "(repeatable; recorded in the report)", true}
/* clang-format on */

const cp_help_opt cp_opts_run[] = {
    RUN_OPTS_BEFORE,
    {"--runs K", "K passes over the selected cases, one after the other (1..100), the first in "
                 "this process and each later one in a process of its own (its report and "
                 "output in OUT/passes): each variant keeps every pass's samples, median, "
                 "clocks, device time and trace metrics apart (report.json timing.passes), so "
                 "that compare rests on runs, not samples; prints each variant's spread "
                 "between passes on the figure it is judged on and warns of a declared "
                 "expectation or a claim's window within 3 of its own"},
    {"--processes P", "each pass times its short cases (every variant under 50 ms) in P "
                      "processes, 1..8: its own and P - 1 more, untraced (OUT/passes/"
                      "pass-N-process-M); a pass's value is the median of its processes' (report."
                      "json processes_ms), on the GPU's time their mean (gpu_processes_ms), since "
                      "a short variant's time sits on a level each process draws"},
    RUN_OPTS_AFTER,
    {"--devices 0,1,...", "spread the cases over these GPUs (one at a time; run only)", true},
    {NULL, NULL},
};

const cp_help_opt cp_opts_test[] = {
    RUN_OPTS_BEFORE,
    RUN_OPTS_AFTER,
    {NULL, NULL},
};

const cp_help_opt cp_opts_compare[] = {
    {"--old PATH", "a report of the old side, or a run directory holding report.json; repeat "
                   "it for several runs (each report, or each pass of run --runs K, is one run); "
                   "with --new, instead of OLD.json NEW.json"},
    {"--new PATH", "a report or run directory of the new side, repeatable as --old"},
    {"--threshold F", "a variant slower by more than F (default 0.10) is a regression"},
    {"--host-threshold H",
     "a host-bound variant (its trace kept the GPU busy < 85% of its time) or an untraced one is "
     "noisy unless its change exceeds H (default 1.0, twice as slow)"},
    {"--format text|json", "how the comparison is printed (default text)"},
    {"--force", "compare across another GPU, driver or profile, which otherwise only informs"},
    {"--html OUT.html", "also write it as one self-contained page: a chart and tables"},
    {NULL, NULL},
};

const cp_help_opt cp_opts_ab[] = {
    {"--exec", "first: two programs instead of two builds, after -- and split by :::"},
    {"--pairs N", "at most N pairs (default 20): past them an undecided variant is noisy, with "
                  "the pairs that would decide it"},
    {"--min-pairs N", "at least N pairs before any verdict (default 5)"},
    {"--max-time S", "start no pair after S seconds (default 600): a variant then undecided "
                     "is noisy, with the pairs that would decide it; 0 for no limit"},
    {"--threshold F", "a variant of B slower than A's by more than F (default 0.05) is a "
                      "regression"},
    {"--profile ci|full", "the runs' problem sizes (default ci)"},
    {"--out DIR", "where each run's report and log go (default cuproof-ab)"},
    {"--seed N", "the pairs' order (default: the time)"},
    {NULL, NULL},
};

const cp_help_opt cp_opts_gpus[] = {
    {"--ctest-spec FILE", "write ctest's resource spec for the GPUs to FILE"},
    {"--slots N", "slots per GPU in that spec, 1..64 (default 1: no two tests share a GPU)"},
    {NULL, NULL},
};

const cp_help_opt cp_opts_export[] = {
    {"--format json|proto|rec|auto",
     "json, a Chrome trace (DIR/CASE.VARIANT.perfetto.json); proto, Perfetto's own format "
     "(DIR/CASE.VARIANT.perfetto-trace), under a third of the size, for big traces; rec, a "
     "cuproof.rec file (DIR/CASE.VARIANT.cprec) for check; auto (the default): proto for a "
     "variant of more than 200000 records, else json"},
    {NULL, NULL},
};

const cp_help_opt cp_opts_metrics[] = {
    {"--markdown", "print them as the Markdown tables of docs/DESIGN.md"},
    {NULL, NULL},
};

/* Expectations are written the same way for check and exec. */
/* clang-format off */
#define EXPECT_OPTS                                                                        \
    {"--expect EXPR", "an expectation (repeatable): [SCOPE:] METRIC OP NUMBER, [SCOPE:] "  \
                      "[no] finding NAME; SCOPE range(NAME), process(PID), device(N) or "  \
                      "rank(N), which may precede one other (rank(1) range(step):), or "   \
                      "collective(OP) with its own metrics (collective(AllGather): "        \
                      "exposed_share < 0.3); "                                             \
                      "none = the whole program; 'every rank:' or 'rank spread:' first "   \
                      "judges each rank or the largest minus the smallest; 'per step:' "   \
                      "each occurrence of NVTX range step alone (per step(NAME) p95: "     \
                      "step_ns < 2e7 judges the p95); `cuproof "                           \
                      "metrics` lists the metrics and findings"},                          \
    {"--expect-file F", "expectations, one per line (# comments; a line "                   \
                        "'#! comm-pattern: PREFIX' sets the communication pattern)"},      \
    {"--range NAME", "scope every unscoped expectation to NVTX ranges NAME"},              \
    {"--comm-pattern PREFIX", "kernels whose demangled name starts with PREFIX are "       \
                              "communication (default nccl, case-sensitive; wins over a "  \
                              "file's directive): the comm_* and exposed_comm_* metrics"}
/* clang-format on */

const cp_help_opt cp_opts_check[] = {
    EXPECT_OPTS,
    {"--allow-dropped", "check a trace that lost records or was cut short instead of refusing it"},
    {"--format text|json", "without an expectation: how what the traces measured is printed "
                           "(default text)"},
    {NULL, NULL},
};

const cp_help_opt cp_opts_exec[] = {
    EXPECT_OPTS,
    {"--out DIR", "reports, the merged trace and proc/ (default cuproof-exec)"},
    {"--timeout S", "kill the program after S seconds (it then failed)"},
    {"--repeat N", "then N timed runs, NVTX ranges alone recorded: the wall time and each "
                   "range's durations as samples for compare"},
    {"--allow-dropped", "check a trace that lost records instead of refusing it"},
    {"--keep-going", "check the expectations even when the trace is not trusted"},
    {"--trace-only", "trace into OUT/proc and judge nothing: one rank's share of a job that "
                     "srun or mpirun starts (every rank's files in one shared OUT), judged "
                     "afterwards by `cuproof check OUT/proc`; exit 0, or 4 when the program "
                     "failed"},
    {"--skip-without-gpu", "exit 77 (ctest's skip) when no GPU is visible"},
    {"--need-gpus N", "exit 77 (skipped, with the reason) when fewer than N GPUs are "
                      "visible; with N > 1 the program sees them all"},
    {"--format jsonl|rec",
     "how each process writes its trace in proc/: JSON lines (HOST.PID.proc.jsonl, the "
     "default) or cuproof.rec (HOST.PID.proc.cprec: a fifth of the size, for long programs); "
     "CUPROOF_EXEC_FORMAT sets the default"},
    {"--api filtered|all",
     "which CUDA API calls the processes record: by default only those an analysis reads "
     "(launches, copies, memsets, synchronisation, event records and waits, allocation and "
     "free), since each recorded call costs the program time on its own thread; all records "
     "every call (for a timeline that shows every query); CUPROOF_EXEC_API sets the default"},
    {"--keep-records N",
     "records held in memory at most (default 200000); past N they are streamed: analysed in "
     "bounded memory, written to OUT/PROGRAM.cprec and a Perfetto protobuf, drawn as a "
     "summary; CUPROOF_EXEC_KEEP_RECORDS sets the default"},
    {"--capture SPEC",
     "trace only inside capture windows, so that the program pays for tracing only where it "
     "is judged: range:NAME (every occurrence of the NVTX range NAME), range:NAME@K or "
     "range:NAME@K-L (its K-th to L-th in each process), steps:NAME:WAIT,WARMUP,ACTIVE[,REPEAT] "
     "(the PyTorch profiler's schedule over the occurrences; warm-up steps traced, not "
     "judged), profiler-api (between "
     "cudaProfilerStart and cudaProfilerStop) or after:S,for:D (D seconds from S seconds "
     "after tracing began); the expectations are judged over the windows, and a window that "
     "never opened is exit 3"},
    {NULL, NULL},
};

const cp_help_opt cp_opts_replay[] = {
    {"--out OUT", "where the rebuilt report goes (default cuproof-out)"},
    {NULL, NULL},
};
