/*
 * cuproof exec's launcher without a GPU: a fake program (a shell) stands
 * in for a traced one by copying a trace recorded on the H100 into the
 * directory the launcher names (CUPROOF_EXEC_DIR), then exiting as it is
 * told. So the arguments, the environment the program gets, the refusal
 * beside another profiler, the merge, the verdicts and their exit codes,
 * the timeout and the forwarding of SIGTERM are all checked here.
 */
#include "gen_ranks.h"

#include <cuproof/exit.h>
#include <cuproof/error.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRACE CUPROOF_FIXTURES "/exec-h100/streams-graph-nvtx.proc.jsonl"
#define TRUNCATED CUPROOF_FIXTURES "/exec-h100/exit-early.proc.jsonl"
#define CAPTURED CUPROOF_FIXTURES "/exec-h200-capture/window/vm.3279.proc.jsonl"

static char output[65536];
static char out_dir[64];

static void make_out_dir(void)
{
    snprintf(out_dir, sizeof out_dir, "/tmp/cuproof-exec-test-XXXXXX");
    cr_assert_not_null(mkdtemp(out_dir));
}

static void remove_out_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out_dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(exec_cli, .init = make_out_dir, .fini = remove_out_dir);

/* Runs `cuproof exec --out OUT ARGS` (a shell fragment, with "%s" formats)
 * with every GPU hidden; returns its exit status, output in `output`. */
static int exec(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int exec(const char *fmt, ...)
{
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "CUDA_VISIBLE_DEVICES= '%s' exec --out '%s' %s 2>&1", CUPROOF_BIN,
             out_dir, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    int st = pclose(p);
    cr_assert(WIFEXITED(st), "cuproof exec did not exit normally: %s", output);
    return WEXITSTATUS(st);
}

/* OUT/NAME's text (its first MiB), in a buffer the next call reuses. */
static const char *out_file(const char *name)
{
    static char text[1 << 20];
    char path[160];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void expect_output(const char *needle)
{
    cr_expect_not_null(strstr(output, needle), "no '%s' in: %s", needle, output);
}

/* A fake program that writes `trace` as its process's file and exits with
 * the shell command `then`. */
#define FAKE(trace, then) \
    "-- sh -c 'cp \"" trace "\" \"$CUPROOF_EXEC_DIR/fake.1.proc.jsonl\"; " then "'"

Test(exec_cli, usage_errors_exit_2)
{
    cr_expect_eq(exec("%s", ""), 2, "%s", output);
    expect_output("exec needs a program after '--'");
    cr_expect_eq(exec("--expect 'kernels >' -- true"), 2);
    expect_output("line 1, column 10");
    cr_expect_eq(exec("--expect 'no_such_metric > 1' -- true"), 2);
    expect_output("unknown metric 'no_such_metric'");
    cr_expect_eq(exec("--expect 'streams-pinned: kernels > 1' -- true"), 2,
                 "a case's variant is no scope of a program");
    cr_expect_eq(exec("--frobnicate -- true"), 2);
    expect_output("unknown option");
    cr_expect_eq(exec("--timeout 0 -- true"), 2);
    /* A program that cannot be found or run is the command line's
     * mistake: exit 2, saying which (it was 6, a tool error). */
    cr_expect_eq(exec("-- /nonexistent/program"), 2, "%s", output);
    expect_output("exec: no program /nonexistent/program: No such file or directory");
    cr_expect_eq(exec("-- no-such-program-on-the-path"), 2, "%s", output);
    expect_output("exec: no program 'no-such-program-on-the-path' in PATH");
    cr_expect_eq(exec("-- /etc/passwd"), 2, "%s", output);
    expect_output("is not an executable file");
    /* The program without the -- before it: said so, not "unknown option". */
    cr_expect_eq(exec("--expect 'kernels > 1' true"), 2);
    expect_output("'true' is not an option: the program goes after --");
    cr_expect_eq(exec("--range"), 2);
    expect_output("--range needs a value");
    /* An expectation file is input (5), not the command line. */
    cr_expect_eq(exec("--expect-file /nonexistent/file -- true"), CP_EXIT_INPUT);
    expect_output("/nonexistent/file");
    cr_expect_eq(exec("--format xml -- true"), 2);
    expect_output("--format 'xml': expected jsonl or rec");
    cr_expect_eq(exec("--comm-pattern 'a*' -- true"), 2);
    expect_output("--comm-pattern 'a*': expected a kernel name's prefix");
    /* A capture window's SPEC is the command line's (cuproof/internal/capture.h). */
    cr_expect_eq(exec("--capture range:step@5-3 -- true"), 2);
    expect_output("the last occurrence comes before the first");
    cr_expect_eq(exec("--capture nvtx:step -- true"), 2);
    expect_output("not a capture form");
    cr_expect_eq(exec("--capture steps:step:1,1,0 -- true"), 2);
    expect_output("ACTIVE must be at least 1");
}

/* What the program's processes see in `var`: each option of `runs` (with
 * the value it must give), the value `env` set in the launcher's
 * environment gives by default, and a bad value there (`bad`) is a usage
 * error (2). The injection library reads the variable. */
static void option_reaches_the_processes(const char *var, const char *runs[][2], size_t n,
                                         const char *env, const char *bad)
{
    char cmd[1024], path[160], line[64] = "", program[256];
    snprintf(program, sizeof program,
             "-- sh -c 'echo $%s > \"$CUPROOF_EXEC_DIR/../seen.txt\"'", var);
    snprintf(path, sizeof path, "%s/seen.txt", out_dir);
    snprintf(cmd, sizeof cmd, "CUDA_VISIBLE_DEVICES= %s=%s '%s' exec --out '%s' -- true > "
             "/dev/null 2>&1", var, bad, CUPROOF_BIN, out_dir);
    cr_expect_eq(WEXITSTATUS(system(cmd)), 2, "%s=%s", var, bad);
    for (size_t i = 0; i < n; i++) {
        exec("%s %s", runs[i][0], program);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f);
        cr_assert_not_null(fgets(line, sizeof line, f));
        fclose(f);
        cr_expect(strncmp(line, runs[i][1], strlen(runs[i][1])) == 0, "%s: %s", runs[i][0], line);
    }
    snprintf(cmd, sizeof cmd, "CUDA_VISIBLE_DEVICES= %s=%s '%s' exec --out '%s' %s > /dev/null "
             "2>&1", var, env, CUPROOF_BIN, out_dir, program);
    cr_expect_eq(WEXITSTATUS(system(cmd)), 3, "no trace: no verdict (3)");
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(line, sizeof line, f));
    fclose(f);
    cr_expect(strncmp(line, env, strlen(env)) == 0, "from the environment: %s", line);
}

/* The format reaches the program's processes (the library reads it), from
 * --format or, by default, from CUPROOF_EXEC_FORMAT. */
Test(exec_cli, the_format_reaches_the_processes)
{
    const char *runs[][2] = {{"--format rec", "rec"}, {"", "jsonl"}};
    option_reaches_the_processes("CUPROOF_EXEC_FORMAT", runs, 2, "rec", "xml");
}

/* The API filter is on unless --api all or CUPROOF_EXEC_API=all
 * turns it off; the library reads CUPROOF_EXEC_API. */
Test(exec_cli, the_api_filter_reaches_the_processes)
{
    const char *runs[][2] = {{"--api all", "all"}, {"--api filtered", "filtered"},
                             {"", "filtered"}};
    option_reaches_the_processes("CUPROOF_EXEC_API", runs, 3, "all", "some");
    cr_expect_eq(exec("--api some -- true"), 2);
    expect_output("--api 'some': expected filtered or all");
}

/* A process that wrote the rec form: the same verdicts as its JSON lines
 * give (the H100 trace, converted by export --format rec). */
Test(exec_cli, a_rec_form_trace_meets_its_expectations)
{
    char cmd[1024], rec[160];
    snprintf(cmd, sizeof cmd, "'%s' export '%s' '%s/conv' --format rec > /dev/null", CUPROOF_BIN,
             TRACE, out_dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(rec, sizeof rec, "%s/conv/program.cprec", out_dir);
    cr_expect_eq(exec("--format rec --expect 'kernels == 32' "
                      "--expect 'range(step): peak_concurrent_kernels > 1' "
                      "-- sh -c 'cp \"%s\" \"$CUPROOF_EXEC_DIR/fake.1.proc.cprec\"; exit 0'",
                      rec),
                 0, "%s", output);
    expect_output("passed  kernels == 32");
    expect_output("passed  range(step): peak_concurrent_kernels > 1");
    expect_output("2 of 2 expectations met");
}

Test(exec_cli, refuses_to_trace_beside_another_profiler)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "CUDA_INJECTION64_PATH=/opt/other/libtool.so '%s' exec --out '%s' -- true 2>&1",
             CUPROOF_BIN, out_dir);
    FILE *p = popen(cmd, "r");
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    int st = pclose(p);
    cr_expect_eq(WEXITSTATUS(st), 3, "%s", output);
    expect_output("another tool already injects into CUDA");
    snprintf(cmd, sizeof cmd, "NSYS_PROFILING_SESSION_ID=7 '%s' exec --out '%s' -- true 2>&1",
             CUPROOF_BIN, out_dir);
    p = popen(cmd, "r");
    n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    st = pclose(p);
    cr_expect_eq(WEXITSTATUS(st), 3, "%s", output);
    expect_output("Nsight Systems");
}

/* The program gets the injection library, the directory to write in, and
 * nothing of it leaks into the launcher's own environment. */
Test(exec_cli, the_program_gets_the_injection_variables)
{
    cr_expect_eq(exec("-- sh -c 'echo \"$CUDA_INJECTION64_PATH|$NVTX_INJECTION64_PATH|"
                      "$CUPROOF_EXEC_DIR|$CUPROOF_EXEC_RUN\" > \"$CUPROOF_EXEC_DIR/../env.txt\"'"),
                 3, "no trace: no verdict (3), %s", output);
    char path[128], line[4096] = "";
    snprintf(path, sizeof path, "%s/env.txt", out_dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(line, sizeof line, f));
    fclose(f);
    cr_expect_not_null(strstr(line, "libcuproof_inject.so|"), "%s", line);
    cr_expect_not_null(strstr(line, "libcuproof_inject.so|/"), "NVTX too: %s", line);
    cr_expect_not_null(strstr(line, "/proc|"), "%s", line);
    /* The run's id: the launcher's host, its pid and the start in ns. */
    const char *run = strrchr(line, '|');
    cr_assert_not_null(run);
    const char *dot = strrchr(run, '.');
    cr_expect(dot && dot > run + 1 && strspn(dot + 1, "0123456789") > 9, "a run id: %s", line);
    /* Nothing traced: said as this machine allows (no GPU here: the
     * program's CUDA calls could not run; with one: it used none). */
    cr_expect(strstr(output, "no process of the program initialised CUDA") ||
                  strstr(output, "no usable CUDA device on this machine"),
              "%s", output);
    /* And nothing said of what the trace does not hold (not "copies
     * overlapped kernels for 0% of copy time; up to 0 kernels at once"). */
    expect_output("no device work in the trace");
    cr_expect_null(strstr(output, "of copy time"), "%s", output);
    cr_expect_null(strstr(output, "up to 0 kernels"), "%s", output);
}

Test(exec_cli, a_recorded_trace_meets_its_expectations)
{
    cr_expect_eq(exec("--expect 'kernels == 32' --expect 'range(step): peak_concurrent_kernels > 1' "
                      "--expect 'range(step): no finding cuda_memcpy_async' " FAKE(TRACE, "exit 0")),
                 0, "%s", output);
    expect_output("passed  kernels == 32");
    expect_output("passed  range(step): peak_concurrent_kernels > 1");
    expect_output("3 of 3 expectations met");
    char path[128];
    struct stat st;
    snprintf(path, sizeof path, "%s/report.json", out_dir);
    cr_expect_eq(stat(path, &st), 0, "the report is written");
    snprintf(path, sizeof path, "%s/sh.trace.json", out_dir);
    cr_expect_eq(stat(path, &st), 0, "and the merged trace");
    /* The page calls the program's checks what they are. */
    const char *page = out_file("report.html");
    cr_expect_not_null(strstr(page, "<h3>Expectations</h3>"));
    /* Its one run was traced: no timing, rather than a median of 0 ms. */
    cr_expect_not_null(strstr(page, ">not timed</td>"));
    cr_expect_null(strstr(page, "<h3>Checks</h3>"));
}

/* Writes `from` (a fixture) into DIR/NAME with each occurrence of `a`
 * replaced by `b`. */
static void write_edited(const char *from, const char *dir, const char *name, const char *a,
                         const char *b)
{
    char path[256], line[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *in = fopen(from, "r"), *out = fopen(path, "w");
    cr_assert(in && out, "%s", path);
    while (fgets(line, sizeof line, in)) {
        char *at = strstr(line, a);
        if (at) {
            *at = '\0';
            fprintf(out, "%s%s%s", line, b, at + strlen(a));
        } else {
            fputs(line, out);
        }
    }
    fclose(in);
    fclose(out);
}

/* The number at `path` (dot-separated keys) of report.json, or NAN. */
static double report_number(const cJSON *root, const char *path)
{
    char keys[128];
    snprintf(keys, sizeof keys, "%s", path);
    const cJSON *o = root;
    for (char *k = strtok(keys, "."); k && o; k = strtok(NULL, "."))
        o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(k))
                             : cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(o) ? o->valuedouble : NAN;
}

/* What tracing cost goes into report.json's tracing_cost and one line of
 * the summary: the processes' counts where their files carry them, "not
 * recorded" (never 0) where a file of an earlier writer does not, and
 * the launcher's post-processing time. */
Test(exec_cli, the_tracing_cost_is_in_the_report_and_the_summary)
{
    char src[128];
    snprintf(src, sizeof src, "%s/src", out_dir);
    cr_assert_eq(mkdir(src, 0755), 0);
    write_edited(TRACE, src, "a.1.proc.jsonl", "\"why\":\"exit\"",
                 "\"api\":\"filtered\",\"api_records\":7,\"api_filtered\":1006,\"buffers\":3,"
                 "\"overhead_records\":2,\"overhead_ns\":{\"buffer_flush\":1500000},"
                 "\"why\":\"exit\"");
    write_edited(TRACE, src, "b.2.proc.jsonl", "\"pid\":1331,", "\"pid\":1332,");
    cr_expect_eq(exec("-- sh -c 'cp \"%s\"/*.proc.jsonl \"$CUPROOF_EXEC_DIR/\"'", src), 0, "%s",
                 output);
    expect_output("  tracing (1 of 2 processes recorded it): 353 records (0 dropped), 7 API calls "
                  "recorded, 1006 call kinds filtered, CUPTI overhead 1.50 ms, 3 buffers; "
                  "post-processing ");
    /* The whole post-processing, and the part report.json holds. */
    expect_output(" before writing the report), ");
    char *text = strdup(out_file("report.json"));
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root);
    cr_expect_str_eq(cJSON_GetObjectItem(root, "schema_version")->valuestring, "1.18");
    const cJSON *cost = cJSON_GetObjectItem(root, "tracing_cost");
    cr_assert_not_null(cost, "no tracing_cost in report.json");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(cost, "recorded")));
    cr_expect_str_eq(cJSON_GetObjectItem(cost, "api")->valuestring, "filtered");
    static const struct {
        const char *path;
        double want;
    } fields[] = {{"tracing_cost.processes", 2},         {"tracing_cost.processes_recorded", 1},
                  {"tracing_cost.records", 353},         {"tracing_cost.dropped", 0},
                  {"tracing_cost.api_records", 7},       {"tracing_cost.api_filtered", 1006},
                  {"tracing_cost.buffers", 3},           {"tracing_cost.overhead_records", 2},
                  {"tracing_cost.cupti_overhead_ms", 1.5},
                  {"tracing_cost.cupti_overhead_ms_by_kind.buffer_flush", 1.5},
                  {"tracing_cost.per_process.0.pid", 1331},
                  {"tracing_cost.per_process.0.buffers", 3},
                  {"tracing_cost.per_process.1.pid", 1332}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        cr_expect_eq(report_number(root, fields[i].path), fields[i].want, "%s: %g",
                     fields[i].path, report_number(root, fields[i].path));
    cr_expect_gt(report_number(root, "tracing_cost.postprocess_ms"), 0);
    /* The old file's process: not recorded, and no figure stands for it. */
    const cJSON *old = cJSON_GetArrayItem(cJSON_GetObjectItem(cost, "per_process"), 1);
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(old, "recorded")));
    cr_expect_null(cJSON_GetObjectItem(old, "records"));
    cJSON_Delete(root);
    free(text);

    /* Only files of an earlier writer: nothing recorded, said so. */
    cr_expect_eq(exec(FAKE(TRACE, "exit 0")), 0, "%s", output);
    expect_output("  tracing: cost not recorded (trace files from an earlier cuproof), 0 dropped; "
                  "post-processing ");
    root = cJSON_Parse(out_file("report.json"));
    cr_assert_not_null(root);
    cost = cJSON_GetObjectItem(root, "tracing_cost");
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(cost, "recorded")));
    cr_expect_null(cJSON_GetObjectItem(cost, "records"), "unknown, not 0");
    cr_expect_null(cJSON_GetObjectItem(cost, "cupti_overhead_ms"));
    cr_expect_gt(report_number(root, "tracing_cost.postprocess_ms"), 0);
    cJSON_Delete(root);
}

/* A fake program that writes `trace` as its process's file FILE over
 * about two and a half seconds (ten pieces, 0.25 s apart: a piece ends
 * inside a line or a record), as a traced process's flushes come, and
 * exits. The pauses are long beside the launcher's 50 ms polls, so that
 * "most read while it ran" holds on a loaded machine too (at 0.1 s it
 * failed once under ctest -j2 on two cores). */
#define SLOW(trace, file)                                                                          \
    "-- sh -c 'f=\"$CUPROOF_EXEC_DIR/" file "\"; n=$(wc -c < \"" trace "\"); s=$((n / 10 + 1)); "  \
    "i=0; while [ $i -lt $n ]; do tail -c +$((i + 1)) \"" trace "\" | head -c $s >> \"$f\"; "      \
    "i=$((i + s)); sleep 0.25; done'"
/* One that writes all of it as it exits: copied under another name, then
 * renamed by the program's last act (exec mv), so that the launcher cannot
 * find the file before the program ends but by a window of microseconds
 * (a plain cp before the shell's exit left it milliseconds, which a
 * loaded machine's poll once fell into). */
#define AT_EXIT(trace, file)                                                                       \
    "-- sh -c 'sleep 0.3; cp \"" trace "\" \"$CUPROOF_EXEC_DIR/partial\"; "                            \
    "exec mv \"$CUPROOF_EXEC_DIR/partial\" \"$CUPROOF_EXEC_DIR/" file "\"'"

#define REC_TRACE CUPROOF_FIXTURES "/exec-h100-threads/nvtx-ranges.proc.cprec"
/* A rec file is open while the process its name gives runs: a pid no
 * process has, so that the launcher does not wait for it after the
 * program. */

/* Whether report.json says most of the records were read while the
 * program ran; *during and *after get its figures. */
static bool most_read_during_run(double *during, double *after)
{
    char *text = strdup(out_file("report.json"));
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root);
    *during = report_number(root, "tracing_cost.records_read_during_run");
    *after = report_number(root, "tracing_cost.records_read_after_exit");
    cJSON_Delete(root);
    free(text);
    return *during > *after;
}

/* exec of a captured trace (the H200's nvtx_ranges, steps 2 and 3 of 5,
 * --capture range:step@2-3): judged over its window, the window's share
 * of the run said, and report.json listing it (its process, its first
 * occurrence, its length). The list read the case's trace after the
 * session had taken it: every exec with a window crashed on the H200,
 * which only a test through exec itself could see. */
Test(exec_cli, a_captured_trace_is_judged_and_its_windows_listed)
{
    /* Without its run id: the fake's run is another. */
    char src[128];
    snprintf(src, sizeof src, "%s/src", out_dir);
    cr_assert_eq(mkdir(src, 0755), 0);
    write_edited(CAPTURED, src, "vm.3279.proc.jsonl", ",\"run\":\"vm.3274.1795957297951000360\"", "");
    cr_expect_eq(exec("--capture range:step@2-3 --expect 'per step: kernels >= 16' "
                      "--expect 'range(step): kernels == 32' "
                      "-- sh -c 'cp \"%s\"/*.proc.jsonl \"$CUPROOF_EXEC_DIR/\"'", src),
                 0, "%s", output);
    expect_output("passed  per step: kernels >= 16");
    expect_output("inside 1 capture window (");
    cJSON *root = cJSON_Parse(out_file("report.json"));
    cr_assert_not_null(root);
    const cJSON *cap = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "tracing_cost"), "capture");
    cr_assert_not_null(cap, "no tracing_cost.capture");
    cr_expect_str_eq(cJSON_GetObjectItem(cap, "spec")->valuestring, "range:step@2-3");
    cr_expect_eq(report_number(root, "tracing_cost.capture.windows"), 1);
    cr_expect_eq(report_number(root, "tracing_cost.capture.list.0.pid"), 3279);
    cr_expect_eq(report_number(root, "tracing_cost.capture.list.0.first_occurrence"), 2);
    /* The fixture's window: open at 327257743 ns, closed at 388284089. */
    cr_expect(fabs(report_number(root, "tracing_cost.capture.list.0.length_ms") - 61.026) < 0.001,
              "%g", report_number(root, "tracing_cost.capture.list.0.length_ms"));
    cJSON_Delete(root);
}

/* NCCL's own account through exec (the two ranks recorded on two H200s,
 * tests/fixtures/exec-h200x2-nccl, their run id taken out): the
 * collectives matched by communicator, and the sizes judged. */
Test(exec_cli, nccls_own_account_is_judged)
{
    char src[128];
    snprintf(src, sizeof src, "%s/src", out_dir);
    cr_assert_eq(mkdir(src, 0755), 0);
    static const char *ranks[] = {"rank0", "rank1"};
    for (int r = 0; r < 2; r++) {
        char from[256], name[64];
        snprintf(from, sizeof from, "%s/exec-h200x2-nccl/%s.proc.jsonl", CUPROOF_FIXTURES, ranks[r]);
        snprintf(name, sizeof name, "vm.%d.proc.jsonl", 3648 + r);
        write_edited(from, src, name, ",\"run\":\"vm.3598.1795968107480267516\"", "");
    }
    cr_expect_eq(exec("--expect 'collective(AllReduce): bytes == 33554432' "
                      "--expect 'collective(SendRecv): busbw_gbps > 0' "
                      "-- sh -c 'cp \"%s\"/*.proc.jsonl \"$CUPROOF_EXEC_DIR/\"'", src),
                 0, "%s", output);
    expect_output("11 collectives matched (by NCCL's communicators and the order of their calls)");
    expect_output("passed  collective(AllReduce): bytes == 33554432");
    /* The page's and report.json's table say it too. */
    const char *page = out_file("report.html");
    cr_expect_not_null(strstr(page, "<th>Messages</th><th>Bus GB/s</th>"));
    cr_expect_not_null(strstr(page, "<td>33.6 MB</td>"));
    cr_expect_not_null(strstr(page, "<th>Message (bytes)</th>"));
    cJSON *root = cJSON_Parse(out_file("report.json"));
    cr_assert_not_null(root);
    const cJSON *rows;
    const cJSON *cases = cJSON_GetObjectItem(root, "cases");
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cases, 0), "variants"), 0);
    const cJSON *tr = cJSON_GetObjectItem(v, "trace");
    rows = cJSON_GetObjectItem(cJSON_GetObjectItem(tr, "metrics") ? cJSON_GetObjectItem(tr, "metrics") : tr,
                               "collectives_by_operation");
    cr_assert_not_null(rows, "no collectives_by_operation");
    bool seen = false;
    for (const cJSON *r = rows->child; r; r = r->next)
        if (strcmp(cJSON_GetObjectItem(r, "operation")->valuestring, "AllReduce") == 0) {
            seen = true;
            cr_expect_eq(cJSON_GetObjectItem(r, "bytes")->valuedouble, 33554432);
            cr_expect_gt(cJSON_GetObjectItem(r, "busbw_gbps")->valuedouble, 0);
        }
    cr_expect(seen);
    /* 1.17: by message size, the 1 MiB and 4 MiB all-reduces apart. */
    const cJSON *sizes = cJSON_GetObjectItem(cJSON_GetObjectItem(tr, "metrics") ? cJSON_GetObjectItem(tr, "metrics") : tr,
                                             "collectives_by_size");
    cr_assert_not_null(sizes, "no collectives_by_size");
    int buckets = 0;
    for (const cJSON *r = sizes->child; r; r = r->next)
        if (strcmp(cJSON_GetObjectItem(r, "operation")->valuestring, "AllReduce") == 0 &&
            (cJSON_GetObjectItem(r, "size_from_bytes")->valuedouble == 1048576 ||
             cJSON_GetObjectItem(r, "size_from_bytes")->valuedouble == 4194304)) {
            buckets++;
            /* 1 MiB: 3 calls and the second group's one on each rank. */
            double from = cJSON_GetObjectItem(r, "size_from_bytes")->valuedouble;
            cr_expect_eq(cJSON_GetObjectItem(r, "count")->valuedouble, from == 1048576 ? 8 : 6);
        }
    cr_expect_eq(buckets, 2);
    const cJSON *table = cJSON_GetObjectItem(v, "ranks");
    cr_expect_str_eq(cJSON_GetObjectItem(table, "matched_by")->valuestring,
                     "by NCCL's communicators and the order of their calls");
    cJSON_Delete(root);
    /* The merged trace file keeps the payloads: judged from it alone. */
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "'%s' check '%s/sh.trace.json' --expect 'collective(AllReduce): bytes == 33554432' "
             "> /dev/null 2>&1",
             CUPROOF_BIN, out_dir);
    cr_expect_eq(system(cmd), 0, "%s", cmd);
}

/* One rule in exec and check for a trusted trace with an undecided
 * expectation beside a failed one: one rank of the two recorded, so the
 * collectives cannot be judged (inconclusive), and an expectation that
 * fails: the failure stands (1), as a case's does (DESIGN.md,
 * "Verdicts"); the undecided line says inconclusive, not skipped. Alone,
 * the undecided line is no verdict (3). check ranked it above the failure
 * before. */
Test(exec_cli, a_failure_stands_beside_an_undecided_expectation_as_in_check)
{
    char src[128];
    snprintf(src, sizeof src, "%s/src", out_dir);
    cr_assert_eq(mkdir(src, 0755), 0);
    char from[256];
    snprintf(from, sizeof from, "%s/exec-h200x2-nccl/rank0.proc.jsonl", CUPROOF_FIXTURES);
    write_edited(from, src, "vm.3648.proc.jsonl", ",\"run\":\"vm.3598.1795968107480267516\"", "");
    cr_expect_eq(exec("--expect 'collectives >= 1' --expect 'kernels == 0' "
                      "-- sh -c 'cp \"%s\"/*.proc.jsonl \"$CUPROOF_EXEC_DIR/\"'", src),
                 1, "%s", output);
    expect_output("inconclusive collectives >= 1 (");
    expect_output("failed  kernels == 0 (measured ");
    cr_expect_null(strstr(output, "skipped collectives"), "%s", output);
    cr_expect_eq(exec("--expect 'collectives >= 1' "
                      "-- sh -c 'cp \"%s\"/*.proc.jsonl \"$CUPROOF_EXEC_DIR/\"'", src),
                 3, "%s", output);
    static const struct {
        const char *expect;
        int status;
    } checks[] = {{"--expect 'collectives >= 1' --expect 'kernels == 0'", 1},
                  {"--expect 'collectives >= 1'", 3}};
    for (size_t i = 0; i < 2; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "'%s' check '%s/vm.3648.proc.jsonl' %s > /dev/null 2>&1",
                 CUPROOF_BIN, src, checks[i].expect);
        int rc = system(cmd);
        cr_expect_eq(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, checks[i].status, "%s", cmd);
    }
}

/* The launcher reads the traces while the program writes them, so that
 * after it only the rest is left to read. A program that writes its
 * records over a second has most of them read while it ran, said in
 * report.json and on the tracing line; one that writes them all as it
 * exits has almost none, so the check can fail. Both forms, and past the
 * records to hold: JSON lines still read while it ran (spilled), rec read
 * after it, with the reason in the report. */
Test(exec_cli, the_records_are_read_while_the_program_runs)
{
    static const struct {
        const char *format, *slow, *at_exit;
    } forms[] = {{"", SLOW(TRACE, "fake.1.proc.jsonl"), AT_EXIT(TRACE, "fake.1.proc.jsonl")},
                 {"--format rec ", SLOW(REC_TRACE, "fake.2147483647.proc.cprec"),
                  AT_EXIT(REC_TRACE, "fake.2147483647.proc.cprec")}};
    for (size_t i = 0; i < 2; i++) {
        double during = 0, after = 0;
        cr_expect_eq(exec("%s--expect 'kernels >= 1' %s", forms[i].format, forms[i].slow), 0, "%s",
                     output);
        cr_expect(most_read_during_run(&during, &after), "%s: %g during, %g after", forms[i].format,
                  during, after);
        cr_expect_gt(during + after, 100, "%s", forms[i].format);
        expect_output(" of the records read while the program ran");
        cr_expect_eq(exec("%s--expect 'kernels >= 1' %s", forms[i].format, forms[i].at_exit), 0,
                     "%s", output);
        cr_expect_not(most_read_during_run(&during, &after), "%s: %g during, %g after",
                      forms[i].format, during, after);
    }
    /* Past the records to hold. */
    double during = 0, after = 0;
    cr_expect_eq(exec("--keep-records 50 %s", SLOW(TRACE, "fake.1.proc.jsonl")), 0, "%s", output);
    cr_expect(most_read_during_run(&during, &after), "%g during, %g after", during, after);
    cr_expect_eq(
        exec("--format rec --keep-records 50 %s", SLOW(REC_TRACE, "fake.2147483647.proc.cprec")), 0,
        "%s", output);
    cr_expect_eq(most_read_during_run(&during, &after), false);
    cr_expect_eq(during, 0);
    expect_output("past the 50 records held");
    cr_expect_not_null(strstr(out_file("report.json"), "\"read_after_exit_why\":"));
}

/* Past --keep-records (or CUPROOF_EXEC_KEEP_RECORDS) the records are
 * streamed: the same verdicts and measured values, a rec file and a
 * Perfetto protobuf instead of the merged trace, a page that draws the
 * summary, and a rec file that check judges alike. */
Test(exec_cli, past_the_records_to_hold_the_records_are_streamed)
{
    const char *expect = "--expect 'kernels == 32' --expect 'range(step): peak_concurrent_kernels > 1' "
                         "--expect 'range(step): copy_kernel_overlap_ratio > 0.99' ";
    static char held[sizeof output];
    cr_expect_eq(exec("%s" FAKE(TRACE, "exit 0"), expect), 1, "%s", output);
    memcpy(held, output, sizeof held);
    cr_expect_null(strstr(held, "streamed"), "%s", held);
    cr_expect_eq(exec("--keep-records 0 -- true"), 2, "%s", output);
    expect_output("--keep-records '0'");
    const char *how[] = {"--keep-records 1 ", "--keep-records 200 "};
    for (int i = 0; i < 3; i++) {
        char cmd[2048], path[160];
        struct stat st;
        snprintf(cmd, sizeof cmd, "rm -rf '%s'/*", out_dir);
        cr_assert_eq(system(cmd), 0);
        if (i < 2) {
            cr_expect_eq(exec("%s%s" FAKE(TRACE, "exit 0"), how[i], expect), 1, "%s", output);
        } else {
            setenv("CUPROOF_EXEC_KEEP_RECORDS", "1", 1);
            cr_expect_eq(exec("%s" FAKE(TRACE, "exit 0"), expect), 1, "%s", output);
            unsetenv("CUPROOF_EXEC_KEEP_RECORDS");
        }
        expect_output("329 records streamed through the analysis");
        /* Every verdict line of the held run is in the streamed one. */
        for (const char *line = strstr(held, "  passed  "); line; line = strchr(line + 1, '\n')) {
            const char *start = line[0] == '\n' ? line + 1 : line;
            const char *end = strchr(start, '\n');
            if (!end || (strncmp(start, "  passed", 8) != 0 && strncmp(start, "  failed", 8) != 0))
                continue;
            char want[512];
            snprintf(want, sizeof want, "%.*s", (int)(end - start), start);
            if (strstr(want, "process ") || strstr(want, "program succeeded"))
                continue;
            expect_output(want);
        }
        expect_output("failed  range(step): copy_kernel_overlap_ratio > 0.99");
        snprintf(path, sizeof path, "%s/sh.cprec", out_dir);
        cr_expect_eq(stat(path, &st), 0, "%s", path);
        snprintf(path, sizeof path, "%s/sh.program.perfetto-trace", out_dir);
        cr_expect_eq(stat(path, &st), 0, "%s", path);
        snprintf(path, sizeof path, "%s/sh.trace.json", out_dir);
        cr_expect_neq(stat(path, &st), 0, "no merged trace of records not held");
        const char *page = out_file("report.html");
        cr_expect_not_null(strstr(page, "\"summary\":{\"bins\":1000"), "the page draws the summary");
        cr_expect_not_null(strstr(page, "sh.program.perfetto-trace"), "and links the protobuf");
        const char *json = strstr(out_file("report.json"), "\"records_streamed\":");
        cr_expect_not_null(json, "report.json says the records were streamed");
        if (json)
            cr_expect_eq(strtol(json + 19, NULL, 10), 329, "%s", json);
        /* The rec file is a trace check reads: the same verdict. */
        snprintf(cmd, sizeof cmd, "'%s' check '%s/sh.cprec' --expect 'range(step): "
                 "peak_concurrent_kernels > 1' --expect 'kernels == 32' > /dev/null 2>&1",
                 CUPROOF_BIN, out_dir);
        cr_expect_eq(WEXITSTATUS(system(cmd)), 0, "check on the streamed rec file");
    }
}

Test(exec_cli, a_failing_expectation_exits_1)
{
    cr_expect_eq(exec("--expect 'range(step): peak_concurrent_kernels > 500' " FAKE(TRACE, "exit 0")),
                 1, "%s", output);
    expect_output("failed  range(step): peak_concurrent_kernels > 500");
    cr_expect_eq(exec("--range no-such-range --expect 'kernels >= 1' " FAKE(TRACE, "exit 0")), 1,
                 "an expectation on a scope that does not exist fails: %s", output);
}

Test(exec_cli, a_failed_program_exits_4_and_the_worst_wins)
{
    cr_expect_eq(exec("--expect 'kernels >= 1' " FAKE(TRACE, "exit 3")), 4, "%s", output);
    expect_output("exit status 3");
    cr_expect_eq(exec("--expect 'kernels >= 1' " FAKE(TRACE, "kill -SEGV $$")), 4, "%s", output);
    expect_output("Segmentation fault");
    /* A failed expectation and a failed program: the program's 4. */
    cr_expect_eq(exec("--expect 'kernels > 1000' " FAKE(TRACE, "exit 3")), 4, "%s", output);
    expect_output("failed  kernels > 1000");
    /* No trace and a failed program: no verdict, 3. */
    cr_expect_eq(exec("-- sh -c 'exit 3'"), 3, "%s", output);
}

Test(exec_cli, a_truncated_trace_is_reported_and_no_work_is_a_tool_error)
{
    cr_expect_eq(exec("--expect 'kernels >= 1' " FAKE(TRUNCATED, "exit 0")), 3, "%s", output);
    expect_output("trace truncated");
    expect_output("no device activity at all");
    expect_output("not checked");
}

/* No verdict (exit 3) is said the same everywhere (issue 41, item 2):
 * the last line of output says why; report.json's status and the page's
 * counts say inconclusive (they said failed, in red); nothing was traced,
 * so no "earlier cuproof" is blamed for an unrecorded cost; and with
 * --keep-going an expectation that held on the untrusted trace is judged,
 * never passed. */
Test(exec_cli, exit_3_reads_as_inconclusive_everywhere)
{
    cr_expect_eq(exec("--expect 'kernels >= 1' -- true"), 3, "%s", output);
    const char *last = output + strlen(output);
    while (last > output && last[-1] == '\n')
        last--;
    while (last > output && last[-1] != '\n')
        last--;
    cr_expect_eq(strncmp(last, "inconclusive: ", 14), 0, "last line: %s", last);
    expect_output("  tracing: no process traced; post-processing ");
    cr_expect_null(strstr(output, "earlier cuproof"), "%s", output);
    cJSON *root = cJSON_Parse(out_file("report.json"));
    cr_assert_not_null(root);
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "cases"), 0);
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(c, "status")), "inconclusive");
    cJSON_Delete(root);
    const char *page = out_file("report.html");
    cr_expect_not_null(strstr(page, "data-failed=\"0\" data-inconclusive=\"1\""), "the page");

    cr_expect_eq(exec("--keep-going --expect 'kernels >= 1' -- sh -c 'cp " CUPROOF_FIXTURES
                      "/exec/ranks-twice/*.proc.jsonl \"$CUPROOF_EXEC_DIR/\"'"),
                 3, "%s", output);
    expect_output("  judged  kernels >= 1 (measured ");
    expect_output("), but the program's verdict is inconclusive\n");
    cr_expect_null(strstr(output, "passed  kernels"), "%s", output);
}

Test(exec_cli, the_timeout_kills_the_program)
{
    time_t t0 = time(NULL);
    cr_expect_eq(exec("--timeout 1 " FAKE(TRACE, "sleep 60")), 4, "%s", output);
    cr_expect_lt(time(NULL) - t0, 20, "killed, not waited for");
    expect_output("killed after the timeout");
}

/* SIGTERM sent to the launcher (a CI runner's timeout) reaches the
 * program, which can still leave its trace. */
Test(exec_cli, sigterm_is_forwarded_to_the_program)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "CUDA_VISIBLE_DEVICES= '%s' exec --out '%s' -- sh -c 'trap \"cp \\\"" TRACE
             "\\\" \\\"$CUPROOF_EXEC_DIR/fake.1.proc.jsonl\\\"; exit 5\" TERM; "
             "while :; do sleep 0.05; done' > '%s/log.txt' 2>&1",
             CUPROOF_BIN, out_dir, out_dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        setpgid(0, 0); /* away from Criterion's group: only the launcher gets the signal */
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    /* The shell above execs nothing itself: find the launcher, its child. */
    usleep(800000);
    char find[128], pids[256] = "";
    snprintf(find, sizeof find, "pgrep -P %d", (int)pid);
    FILE *p = popen(find, "r");
    cr_assert_not_null(fgets(pids, sizeof pids, p), "the launcher is not running");
    pclose(p);
    pid_t launcher = (pid_t)strtol(pids, NULL, 10);
    cr_assert_gt(launcher, 0);
    cr_assert_eq(kill(launcher, SIGTERM), 0);
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFEXITED(st));
    cr_expect_eq(WEXITSTATUS(st), 4, "the program left with 5: it failed");
    char log[128];
    snprintf(log, sizeof log, "%s/log.txt", out_dir);
    FILE *f = fopen(log, "r");
    cr_assert_not_null(f);
    size_t n = fread(output, 1, sizeof output - 1, f);
    output[n] = '\0';
    fclose(f);
    expect_output("exit status 5");
    expect_output("kernels");
}

/* The seed's streams program on CuPy, traced by cuproof exec on the H100
 * and checked here with cuproof check: the streams version runs kernels
 * concurrently from pageable memory (so its copies barely overlap them, and
 * the finding says why); the serial version is the control that fails the
 * concurrency expectation. */
Test(exec_cli, the_recorded_cupy_seed_program_checks_on_any_machine)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "'%s' check '" CUPROOF_FIXTURES "/exec-h100/cupy-streams.trace.json' "
             "--expect 'program: peak_concurrent_kernels > 1' "
             "--expect 'program: finding cuda_memcpy_async' "
             "--expect 'program: copy_kernel_overlap_ratio < 0.1' 2>&1",
             CUPROOF_BIN);
    FILE *p = popen(cmd, "r");
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    cr_expect_eq(WEXITSTATUS(pclose(p)), 0, "%s", output);
    expect_output("measured 128 kernels");
    snprintf(cmd, sizeof cmd,
             "'%s' check '" CUPROOF_FIXTURES "/exec-h100/cupy-serial.trace.json' "
             "--expect 'program: peak_concurrent_kernels > 1' 2>&1",
             CUPROOF_BIN);
    p = popen(cmd, "r");
    n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    cr_expect_eq(WEXITSTATUS(pclose(p)), 1, "the serial control fails it: %s", output);
}

/* --repeat N: N more runs with NVTX ranges alone, whose wall times and
 * range durations become timing samples that compare reads. */
Test(exec_cli, repeat_keeps_wall_and_range_samples_for_compare)
{
    cr_expect_eq(exec("--repeat 3 " FAKE(TRACE, "exit 0")), 0, "%s", output);
    expect_output("3 timed runs: median");
    expect_output("range step: 9 samples");
    char report[128], copy[160], cmd[512];
    snprintf(report, sizeof report, "%s/report.json", out_dir);
    snprintf(copy, sizeof copy, "%s/old-report.json", out_dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", report, copy);
    cr_assert_eq(system(cmd), 0);
    cr_expect_eq(exec("--repeat 3 " FAKE(TRACE, "exit 0")), 0, "%s", output);
    snprintf(cmd, sizeof cmd, "'%s' compare '%s' '%s' 2>&1", CUPROOF_BIN, copy, report);
    FILE *p = popen(cmd, "r");
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    int st = pclose(p);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) <= 1, "%s", output);
    expect_output("range:step");
    expect_output("program");
}

/* A process whose injection could not have CUPTI (another tool took it)
 * writes why in its end record: a tool error naming the process, however
 * well the other processes were traced. */
Test(exec_cli, a_process_that_could_not_be_traced_is_a_tool_error)
{
    cr_expect_eq(exec("--expect 'kernels >= 1' -- sh -c 'cp \"" TRACE "\" \"" CUPROOF_FIXTURES
                      "/exec/unavailable/h.77.proc.jsonl\" \"$CUPROOF_EXEC_DIR/\"'"),
                 3, "%s", output);
    expect_output("process 77 (child) was not traced: cupti unavailable: held by nsys");
}

/* The recorded program's kernels are _Z4spinPfii: compute by default (no
 * communication), communication under --comm-pattern spin (the demangled
 * name is spin(float*, int, int)), held and streamed alike. */
Test(exec_cli, comm_pattern_classifies_kernels)
{
    cr_expect_eq(exec("--expect 'comm_busy_ns == 0' " FAKE(TRACE, "exit 0")), 0, "%s", output);
    cr_expect_null(strstr(output, "  communication "), "no line without communication");
    const char *how[] = {"", "--keep-records 1 "};
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(exec("%s--comm-pattern spin --expect 'comm_busy_ns > 0' "
                          "--expect 'range(step): comm_busy_ns > 0' " FAKE(TRACE, "exit 0"),
                          how[i]),
                     0, "%s", output);
        expect_output("  communication ");
        expect_output("% of it under compute, ");
        cr_expect_eq(exec("%s--comm-pattern _Z4 --expect 'comm_busy_ns > 0' " FAKE(TRACE, "exit 0"),
                          how[i]),
                     1, "the mangling is no part of the name: %s", output);
    }
}

/* A program written for several GPUs: a bad count is usage (2); with the
 * GPUs hidden, a skip that says why (77), never a run that fails. */
Test(exec_cli, a_program_of_several_gpus_is_skipped_on_fewer)
{
    cr_expect_eq(exec("--need-gpus 0 -- true"), 2, "%s", output);
    expect_output("--need-gpus '0': expected a count of GPUs");
    cr_expect_eq(exec("--need-gpus 2 -- true"), 77, "%s", output);
    expect_output("cuproof exec: skipped:");
}

/* One rank's share of a job that srun or mpirun starts: traced, judged by
 * nobody (its expectations refused), its exit the program's; the run id
 * comes from the job, so that every rank's exec writes the same one. */
Test(exec_cli, trace_only_takes_its_run_id_from_the_job)
{
    cr_expect_eq(exec("--trace-only --expect 'kernels > 1' -- true"), 2, "%s", output);
    expect_output("--trace-only judges nothing");
    const char *jobs[][2] = {{"SLURM_JOB_ID=42 SLURM_STEP_ID=3", "run slurm.42.3"},
                             {"PMIX_NAMESPACE=ns7", "run pmix.ns7"},
                             {"CUPROOF_EXEC_RUN=mine SLURM_JOB_ID=42", "run mine"}};
    for (int i = 0; i < 3; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "env -u SLURM_JOB_ID -u PMIX_NAMESPACE -u OMPI_MCA_ess_base_jobid %s "
                 "CUDA_VISIBLE_DEVICES= '%s' exec --out '%s' --trace-only -- sh -c "
                 "'echo $CUPROOF_EXEC_RUN > \"$CUPROOF_EXEC_DIR/../run.txt\"' 2>&1",
                 jobs[i][0], CUPROOF_BIN, out_dir);
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p);
        size_t n = fread(output, 1, sizeof output - 1, p);
        output[n] = '\0';
        cr_expect_eq(WEXITSTATUS(pclose(p)), 0, "%s", output);
        expect_output(jobs[i][1]);
        char want[64];
        snprintf(want, sizeof want, "%s\n", jobs[i][1] + 4);
        cr_expect_str_eq(out_file("run.txt"), want);
    }
    cr_expect_eq(exec("--trace-only -- sh -c 'exit 5'"), 4, "%s", output);
}

/* A job on two hosts, one of which ran no collective: its clock cannot be
 * put on the other's, so what spans hosts is not judged (exit 3, the host
 * named) while each rank's own figures are. The files are the generator's
 * (tests/gen_ranks.h), copied in by the fake program; the run id is theirs
 * (CUPROOF_EXEC_RUN), so that only the hosts decide. */
Test(exec_cli, hosts_not_aligned_leave_cross_host_expectations_undecided)
{
    char gen[64];
    snprintf(gen, sizeof gen, "/tmp/cuproof-exec-hosts-XXXXXX");
    cr_assert_not_null(mkdtemp(gen));
    gen_ranks_opts o = GEN_RANKS_OPTS_INIT;
    o.records = 4000;
    o.ranks = 4;
    o.hosts = 2;
    o.clock_offset_ns = 3000000;
    o.no_collectives_host = 1;
    cr_assert_eq(gen_ranks_write(gen, &o), 0, "%s", cp_last_error());
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "CUPROOF_EXEC_RUN=gen-ranks.4 CUDA_VISIBLE_DEVICES= '%s' exec --out '%s' "
             "--expect 'kernels > 0' --expect 'every rank: kernels > 0' "
             "-- sh -c 'cp %s/*.proc.cprec \"$CUPROOF_EXEC_DIR\"/' 2>&1",
             CUPROOF_BIN, out_dir, gen);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    int st = pclose(p);
    cr_expect_eq(WEXITSTATUS(st), 3, "%s", output);
    expect_output("hosts not aligned: sim-host-1 shares no collective with sim-host-0");
    expect_output("passed  every rank: kernels > 0");
    cr_expect_null(strstr(output, "another run"), "%s", output);
    /* The same files with every host communicating: judged, exit 0. */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/* '%s'/*", gen, out_dir);
    cr_expect_eq(system(cmd), 0);
    o.no_collectives_host = -1;
    cr_assert_eq(gen_ranks_write(gen, &o), 0, "%s", cp_last_error());
    snprintf(cmd, sizeof cmd,
             "CUPROOF_EXEC_RUN=gen-ranks.4 CUDA_VISIBLE_DEVICES= '%s' exec --out '%s' "
             "--expect 'kernels > 0' --expect 'hosts == 2' "
             "-- sh -c 'cp %s/*.proc.cprec \"$CUPROOF_EXEC_DIR\"/' 2>&1",
             CUPROOF_BIN, out_dir, gen);
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    cr_expect_eq(WEXITSTATUS(pclose(p)), 0, "%s", output);
    expect_output("host sim-host-1: clock put on sim-host-0's by -3.0");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", gen);
    cr_expect_eq(system(cmd), 0);
}
