/*
 * The exit contract, held by a table: every command driven through each
 * fault that can happen on a machine without a GPU, each row the exit
 * status the one table (cuproof/exit.h) gives it and what the message
 * must name (the file, and where in it). Rows that need a GPU are not
 * here: they would be skipped. Every command the bare `cuproof` lists
 * gets its --help (0) and an unknown option (2) without a row of its own,
 * so that a new command cannot be left out.
 */
#include <cuproof/exit.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char output[1 << 17];
static char dir[64]; /* the rows' scratch directory */

/* Runs the shell command `cmd` with every GPU hidden (the same result on
 * machines with and without one); stdout and stderr land in `output`.
 * Returns the exit status. */
static int sh(const char *cmd)
{
    char full[4096];
    /* The braces: a row's own redirection of stdout (> /dev/full) leaves
     * its stderr here. */
    snprintf(full, sizeof full, "cd '%s' && export CUDA_VISIBLE_DEVICES= && { %s ; } 2>&1", dir,
             cmd);
    FILE *p = popen(full, "r");
    cr_assert_not_null(p);
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    int st = pclose(p);
    cr_assert(WIFEXITED(st), "'%s' did not exit normally: %s", cmd, output);
    return WEXITSTATUS(st);
}

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

/* The inputs every row draws on, in a fresh directory: bad JSON, JSON cut
 * short, a trace with no device work, an expectation file with an error,
 * a per-process file that is no JSON, a recording whose report is bad and
 * one whose case trace is missing, and one of no case; the fixtures are
 * good inputs. An output that cannot be written is one under /proc or
 * under a file (good.expect/...): neither is writable even as root, as a
 * read-only directory would be. */
static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/cuproof-exit-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    put("bad.json", "{\"schema\": \"cuproof.trace/1\",\n \"case\": }\n");
    put("cut.json", "{\"schema\": \"cuproof.trace/1\", \"case\": \"x\", \"variants\": [\n"
                    " {\"name\"");
    put("idle.trace.json", "{\"schema\":\"cuproof.trace/1\",\"case\":\"idle\",\"variants\":"
                           "[{\"name\":\"v\",\"dropped_records\":0,\"origin_ns\":\"0\","
                           "\"activities\":[]}]}\n");
    put("typo.expect", "kernels > 0\nkernals > 1\n");
    put("good.expect", "kernels > 0\n");
    cr_assert_eq(mkdir(strcat(strcpy(output, dir), "/prog"), 0755), 0);
    put("prog/h.7.proc.jsonl", "{\"k\":\"begin\",\n");
    cr_assert_eq(mkdir(strcat(strcpy(output, dir), "/rec-bad"), 0755), 0);
    put("rec-bad/report.json", "{\"schema\": [1, 2\n");
    cr_assert_eq(mkdir(strcat(strcpy(output, dir), "/rec-empty"), 0755), 0);
    put("rec-empty/report.json", "{\"schema\": \"cuproof.report/1\", \"cases\": []}\n");
    cr_assert_eq(mkdir(strcat(strcpy(output, dir), "/rec-ghost"), 0755), 0);
    put("rec-ghost/report.json", "{\"schema\": \"cuproof.report/1\", \"cases\": [{\"name\": "
                                 "\"ghost\", \"status\": \"passed\", \"variants\": [{\"name\": "
                                 "\"v\", \"trace\": {}}]}]}\n");
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

#define B "'" CUPROOF_BIN "' "
#define FIX CUPROOF_FIXTURES "/"
#define TRACE FIX "multi-kernel-h100.trace.json"
#define REPORT FIX "report-h100-full.json"
#define EARLIER FIX "report-h100-full-earlier.json"

/* One row: the command (a shell fragment, run in the scratch directory),
 * the status the table gives it, and up to two texts its output must hold
 * (the file named, where in it, and what still happened). */
typedef struct row {
    const char *cmd;
    int status;
    const char *says, *also;
} row;

static const row rows[] = {
    /* run and test: the output directory is theirs to write. */
    {B "run --out /proc/cuproof-x", CP_EXIT_TOOL, "/proc/cuproof-x", NULL},
    {B "run --out good.expect/out", CP_EXIT_TOOL, "good.expect/out", NULL},
    {B "run no-such-case", CP_EXIT_USAGE, "no-such-case", NULL},
    {B "run --repeat many", CP_EXIT_USAGE, "many", NULL},
    {"CUPROOF_CPU_AFFINITY=numa " B "run", CP_EXIT_USAGE, "CUPROOF_CPU_AFFINITY=numa", NULL},
    {B "test broadcast --out /proc/cuproof-x", CP_EXIT_TOOL, "/proc/cuproof-x", NULL},
    {B "test broadcast", CP_EXIT_SKIPPED, "skipped", NULL},
    /* list, metrics, help: their output is stdout. */
    {B "list > /dev/full", CP_EXIT_TOOL, "standard output", NULL},
    {B "metrics > /dev/full", CP_EXIT_TOOL, "standard output", NULL},
    {B "help > /dev/full", CP_EXIT_TOOL, "standard output", NULL},
    {B "help no-such-command", CP_EXIT_USAGE, "no-such-command", NULL},
    {B "gpus", CP_EXIT_FAILED, "cuproof: ", NULL},
    /* check: traces and expectation files are input; --expect is usage. */
    {B "check missing.json --expect 'kernels > 0'", CP_EXIT_INPUT, "missing.json", NULL},
    {B "check bad.json --expect 'kernels > 0'", CP_EXIT_INPUT, "bad.json: not valid JSON at line 2, column",
     NULL},
    {B "check cut.json --expect 'kernels > 0'", CP_EXIT_INPUT, "cut.json: not valid JSON", "cut short"},
    {B "check " TRACE " bad.json --expect 'kernels > 0'", CP_EXIT_INPUT, "bad.json",
     "passed  sync: kernels > 0"},
    {B "check " TRACE " missing.json --expect 'kernels > 100000'", CP_EXIT_INPUT, "missing.json",
     "failed  sync: kernels > 100000"},
    {B "check " TRACE " --expect 'kernels > 100000'", CP_EXIT_FAILED, "failed  sync", NULL},
    {B "check idle.trace.json --expect 'kernels > 0'", CP_EXIT_INCONCLUSIVE, "idle.trace.json",
     NULL},
    {B "check " TRACE " idle.trace.json --expect 'kernels > 0'", CP_EXIT_INCONCLUSIVE,
     "idle.trace.json", "passed  sync: kernels > 0"},
    {B "check " TRACE " --expect-file missing.expect", CP_EXIT_INPUT, "missing.expect", NULL},
    {B "check " TRACE " --expect-file typo.expect", CP_EXIT_INPUT, "typo.expect", "line 2"},
    {B "check " TRACE " --expect 'kernals > 0'", CP_EXIT_USAGE, "--expect", "kernals"},
    {B "check " TRACE " --expect 'kernels >'", CP_EXIT_USAGE, "--expect", "column"},
    {B "check prog --expect 'kernels > 0'", CP_EXIT_INPUT, "h.7.proc.jsonl:1", NULL},
    /* exec: its expectation files are input; its output directory is its own. */
    {B "exec --expect-file missing.expect -- true", CP_EXIT_INPUT, "missing.expect", NULL},
    {B "exec --expect-file typo.expect -- true", CP_EXIT_INPUT, "typo.expect", "line 2"},
    {B "exec --expect 'kernels >' -- true", CP_EXIT_USAGE, "--expect", NULL},
    {B "exec --out /proc/cuproof-x -- true", CP_EXIT_TOOL, "/proc/cuproof-x", NULL},
    {B "exec --out good.expect/out -- true", CP_EXIT_TOOL, "good.expect/out", NULL},
    /* timeline and export: traces in, files out. */
    {B "timeline page.html missing.json", CP_EXIT_INPUT, "missing.json", NULL},
    {B "timeline page.html " TRACE " bad.json && test -s page.html", CP_EXIT_INPUT,
     "bad.json: not valid JSON at line 2", NULL},
    {B "timeline /proc/cuproof-x.html " TRACE, CP_EXIT_TOOL, "/proc/cuproof-x.html", NULL},
    {B "timeline good.expect/page.html " TRACE, CP_EXIT_TOOL, "good.expect/page.html", NULL},
    {B "export missing.json out", CP_EXIT_INPUT, "missing.json", NULL},
    {B "export cut.json out", CP_EXIT_INPUT, "cut.json: not valid JSON", "line 2"},
    {B "export prog out", CP_EXIT_INPUT, "h.7.proc.jsonl:1", NULL},
    {B "export " TRACE " /proc/cuproof-x", CP_EXIT_TOOL, "/proc/cuproof-x", NULL},
    {B "export " TRACE " good.expect", CP_EXIT_TOOL, "good.expect", NULL},
    /* compare: reports in, a page out; each bad report named, the rest compared. */
    {B "compare missing.json " REPORT, CP_EXIT_INPUT, "missing.json", NULL},
    {B "compare bad.json " REPORT, CP_EXIT_INPUT, "bad.json: not valid JSON at line 2, column",
     NULL},
    {B "compare bad.json missing.json", CP_EXIT_INPUT, "bad.json", "missing.json"},
    {B "compare " TRACE " " REPORT, CP_EXIT_INPUT, "is not a cuproof report", NULL},
    {B "compare --old " REPORT " --old bad.json --new " REPORT, CP_EXIT_INPUT, "bad.json",
     "1 report could not be read"},
    {B "compare --old " EARLIER " --old missing.json --new " REPORT, CP_EXIT_INPUT,
     "missing.json", "regression"},
    {B "compare " EARLIER " " REPORT, CP_EXIT_FAILED, "regression", NULL},
    {B "compare " REPORT " " REPORT " --html /proc/cuproof-x.html", CP_EXIT_TOOL,
     "/proc/cuproof-x.html", NULL},
    {B "compare " REPORT " " REPORT " --threshold lots", CP_EXIT_USAGE, "lots", NULL},
    /* ab: the builds are its input; its work directory is its own. */
    {B "ab /no/such/a /no/such/b --out ab --pairs 2 --min-pairs 2", CP_EXIT_INPUT, "/no/such/",
     NULL},
    {B "ab /no/such/a /no/such/b --out /proc/cuproof-x", CP_EXIT_TOOL, "/proc/cuproof-x", NULL},
    {B "ab --pairs 2 --min-pairs 3 a b", CP_EXIT_USAGE, "ab takes", NULL},
    /* replay: a recording in, a report out. */
    {B "replay missing-dir", CP_EXIT_INPUT, "missing-dir/report.json", NULL},
    {B "replay rec-bad", CP_EXIT_INPUT, "rec-bad/report.json: not valid JSON", "line 2"},
    {B "replay rec-bad --out /proc/cuproof-x", CP_EXIT_INPUT, "rec-bad/report.json", NULL},
    {B "replay rec-ghost --out out", CP_EXIT_INPUT, "rec-ghost/ghost.trace.json",
     "case ghost left out"},
    {B "replay rec-empty --out /proc/cuproof-x", CP_EXIT_TOOL, "/proc/cuproof-x", NULL},
    {B "replay rec-empty --out out", CP_EXIT_OK, "0 cases", NULL},
};

TestSuite(exit_contract, .init = setup, .fini = teardown);

Test(exit_contract, every_command_through_each_fault)
{
    bool seen[256] = {0};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *r = &rows[i];
        int got = sh(r->cmd);
        seen[r->status & 255] = true;
        cr_expect_eq(got, r->status, "'%s' exited %d, the table says %d (%s): %s", r->cmd, got,
                     r->status, cp_exit_meaning(r->status), output);
        cr_expect_not_null(strstr(output, r->says), "'%s': the message lacks '%s': %s", r->cmd,
                           r->says, output);
        if (r->also)
            cr_expect_not_null(strstr(output, r->also), "'%s': the output lacks '%s': %s",
                               r->cmd, r->also, output);
    }
    /* Every status of the table that a machine without a GPU can give is
     * in some row (4, the program failed, needs a traced program). */
    int statuses[] = {CP_EXIT_FAILED, CP_EXIT_USAGE,  CP_EXIT_INCONCLUSIVE,
                      CP_EXIT_INPUT,  CP_EXIT_TOOL,   CP_EXIT_SKIPPED};
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
        cr_expect(seen[statuses[i]], "no row gives status %d", statuses[i]);
}

/* The commands, as the bare `cuproof` lists them ("  NAME  summary"). */
static size_t commands(char names[][16], size_t cap)
{
    cr_assert_eq(sh(B), CP_EXIT_USAGE);
    size_t n = 0;
    for (char *line = output; *line && n < cap;) {
        char name[16];
        if (line[0] == ' ' && line[1] == ' ' && sscanf(line, " %15[a-z]", name) == 1)
            strcpy(names[n++], name);
        char *next = strchr(line, '\n');
        if (!next)
            break;
        line = next + 1;
    }
    return n;
}

Test(exit_contract, every_command_answers_help_and_refuses_an_unknown_option)
{
    char names[32][16];
    size_t n = commands(names, 32);
    cr_assert_geq(n, 13, "the bare cuproof listed %zu commands: %s", n, output);
    bool rows_cover[32] = {0};
    for (size_t i = 0; i < n; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, B "%s --help", names[i]);
        cr_expect_eq(sh(cmd), CP_EXIT_OK, "'%s': %s", cmd, output);
        cr_expect_not_null(strstr(output, "EXIT STATUS"), "'%s': %s", cmd, output);
        /* The one table is pointed at, not repeated under every command
         * (it was 35 lines of each help). */
        cr_expect_not_null(strstr(output, "cuproof help exit prints the table"), "'%s': %s", cmd,
                           output);
        cr_expect_null(strstr(output, "tool error: cuproof"), "'%s': %s", cmd, output);
        snprintf(cmd, sizeof cmd, B "%s --no-such-option", names[i]);
        cr_expect_eq(sh(cmd), CP_EXIT_USAGE, "'%s': %s", cmd, output);
        cr_expect_not_null(strstr(output, "cuproof"), "'%s': %s", cmd, output);
        /* And every command has a row of its own in the faults' table. */
        char key[32];
        snprintf(key, sizeof key, "' %s", names[i]);
        for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++)
            rows_cover[i] |= strstr(rows[k].cmd, key) != NULL;
        cr_expect(rows_cover[i], "no fault row drives '%s'", names[i]);
    }
}
