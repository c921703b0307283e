/*
 * The rules a program's verdict rests on, each shown to decide: the one
 * trust rule (every reason in its order, its own message, the warnings),
 * the one scope rule of --range, the one exit table ("the worst wins"),
 * and cp_program_judge on recorded programs: the verdict, the checks it
 * builds and the exit status, without printing or a command line.
 */
#include <cuproof/error.h>
#include <cuproof/exit.h>
#include <cuproof/expect.h>
#include <cuproof/program.h>
#include <cuproof/trust.h>

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static cp_trust judge(cp_trust_in in)
{
    cp_trust t;
    cp_trust_judge(&in, &t);
    return t;
}

/* Each reason alone makes the trace untrusted with its own words; a clean
 * trace is trusted with no warning. */
Test(trust, each_reason_has_its_verdict_and_words)
{
    cp_trust t = judge((cp_trust_in){.what = "x", .traced_files = 1, .device_work = 5});
    cr_expect(t.trusted);
    cr_expect_eq(t.exit, CP_EXIT_OK);
    cr_expect_str_empty(t.why);
    cr_expect_str_empty(t.warning);

    t = judge((cp_trust_in){.what = "x", .traced_files = 0, .dir = "out/proc", .device_work = 5});
    cr_expect_not(t.trusted);
    cr_expect_eq(t.exit, CP_EXIT_INCONCLUSIVE);
    cr_expect(strstr(t.why, "no process of the program initialised CUDA (no trace in out/proc)"),
              "%s", t.why);

    cp_trace procs;
    cp_trace_init(&procs);
    cp_process p = {.pid = 42, .ended = true};
    snprintf(p.command, sizeof p.command, "python3 train.py");
    snprintf(p.why, sizeof p.why, "cupti unavailable: held by nsys");
    cr_assert_geq(cp_trace_add_process(&procs, &p), 0);
    t = judge((cp_trust_in){.what = "x", .traced_files = 1, .processes = &procs, .device_work = 5});
    cr_expect_not(t.trusted);
    cr_expect(strstr(t.why, "process 42 (python3 train.py) was not traced: cupti unavailable"),
              "%s", t.why);
    /* Left untraced on purpose (CUPROOF_EXEC_KINDS naming no kind): no
     * verdict either, with the injection's reason. */
    snprintf(procs.processes[0].why, sizeof procs.processes[0].why,
             CP_WHY_NOT_TRACED ": CUPROOF_EXEC_KINDS names 'kernal', not a kind");
    t = judge((cp_trust_in){.what = "x", .traced_files = 1, .processes = &procs, .device_work = 5});
    cr_expect_not(t.trusted);
    cr_expect(strstr(t.why, "process 42 (python3 train.py) was not traced: CUPROOF_EXEC_KINDS names "
                            "'kernal', not a kind"),
              "%s", t.why);
    cp_trace_free(&procs);

    t = judge((cp_trust_in){.what = "the trace a.cprec", .traced_files = SIZE_MAX});
    cr_expect_not(t.trusted);
    cr_expect(strstr(t.why, "no device activity at all: no kernel, copy or memset in the trace "
                            "a.cprec"), "%s", t.why);

    t = judge((cp_trust_in){.what = "x", .traced_files = SIZE_MAX, .device_work = 1, .dropped = 12});
    cr_expect_not(t.trusted);
    cr_expect(strstr(t.why, "CUPTI dropped 12 records: the metrics may miss work"), "%s", t.why);

    t = judge((cp_trust_in){.what = "x", .traced_files = SIZE_MAX, .device_work = 1,
                            .cut_short = true, .cut_why = "a.cprec ends inside a record"});
    cr_expect_not(t.trusted);
    cr_expect(strstr(t.why, "a.cprec ends inside a record: the metrics may miss work"), "%s",
              t.why);
}

/* The first reason in the rule's order is the one named; accepted losses
 * and truncated processes are warnings, never silence. */
Test(trust, the_order_and_the_warnings)
{
    cp_trust t = judge((cp_trust_in){.what = "x", .traced_files = SIZE_MAX, .dropped = 3,
                                     .cut_short = true});
    cr_expect(strstr(t.why, "no device activity at all"), "no work is named first: %s", t.why);
    cr_expect(strstr(t.why, "(it was cut short)"), "%s", t.why);

    t = judge((cp_trust_in){.what = "x", .traced_files = SIZE_MAX, .device_work = 1, .dropped = 3,
                            .cut_short = true, .cut_why = "cut", .allow_dropped = true});
    cr_expect(t.trusted);
    cr_expect(strstr(t.warning, "CUPTI dropped 3 records"), "%s", t.warning);
    cr_expect(strstr(t.warning, "cut; the metrics may miss work"), "%s", t.warning);

    cp_trace procs;
    cp_trace_init(&procs);
    cp_process p = {.pid = 7, .ended = false};
    cr_assert_geq(cp_trace_add_process(&procs, &p), 0);
    t = judge((cp_trust_in){.what = "x", .traced_files = 1, .processes = &procs, .device_work = 1});
    cr_expect(t.trusted);
    cr_expect(strstr(t.warning, "1 process truncated"), "%s", t.warning);
    cp_trace_free(&procs);
}

/* The worst wins: usage, then a tool error, then bad input, then
 * inconclusive, then the program, then a failed expectation, then
 * success; skipped only alone. A reader's failure is the input's unless
 * memory ran out. */
Test(exit, the_worst_wins_and_every_status_means_something)
{
    cr_expect_eq(cp_exit_worse(CP_EXIT_FAILED, CP_EXIT_INCONCLUSIVE), CP_EXIT_INCONCLUSIVE);
    cr_expect_eq(cp_exit_worse(CP_EXIT_INCONCLUSIVE, CP_EXIT_PROGRAM), CP_EXIT_INCONCLUSIVE);
    cr_expect_eq(cp_exit_worse(CP_EXIT_PROGRAM, CP_EXIT_FAILED), CP_EXIT_PROGRAM);
    cr_expect_eq(cp_exit_worse(CP_EXIT_OK, CP_EXIT_FAILED), CP_EXIT_FAILED);
    cr_expect_eq(cp_exit_worse(CP_EXIT_SKIPPED, CP_EXIT_OK), CP_EXIT_OK);
    cr_expect_eq(cp_exit_worse(CP_EXIT_SKIPPED, CP_EXIT_SKIPPED), CP_EXIT_SKIPPED);
    cr_expect_eq(cp_exit_worse(CP_EXIT_USAGE, CP_EXIT_INCONCLUSIVE), CP_EXIT_USAGE);
    cr_expect_eq(cp_exit_worse(CP_EXIT_INPUT, CP_EXIT_INCONCLUSIVE), CP_EXIT_INPUT);
    cr_expect_eq(cp_exit_worse(CP_EXIT_FAILED, CP_EXIT_INPUT), CP_EXIT_INPUT);
    cr_expect_eq(cp_exit_worse(CP_EXIT_INPUT, CP_EXIT_TOOL), CP_EXIT_TOOL);
    cr_expect_eq(cp_exit_worse(CP_EXIT_TOOL, CP_EXIT_USAGE), CP_EXIT_USAGE);
    cr_expect_eq(cp_exit_of_read(CP_EIO), CP_EXIT_INPUT);
    cr_expect_eq(cp_exit_of_read(CP_EPARSE), CP_EXIT_INPUT);
    cr_expect_eq(cp_exit_of_read(CP_ENOMEM), CP_EXIT_TOOL);
    int statuses[] = {0, 1, 2, 3, 4, 5, 6, 77};
    for (size_t i = 0; i < 8; i++)
        cr_expect_not_null(cp_exit_meaning(statuses[i]), "status %d", statuses[i]);
    cr_expect_null(cp_exit_meaning(7));
    /* Verdicts on trusted input: a failure stands beside an undecided
     * one; undecided alone is no verdict. */
    cr_expect_eq(cp_exit_of_verdicts(1, 1), CP_EXIT_FAILED);
    cr_expect_eq(cp_exit_of_verdicts(0, 2), CP_EXIT_INCONCLUSIVE);
    cr_expect_eq(cp_exit_of_verdicts(0, 0), CP_EXIT_OK);
}

/* --range scopes the unscoped expectations, says so in their text, and
 * leaves a scoped one alone. */
Test(scope, range_scopes_only_the_unscoped)
{
    cp_expect_list l = {0};
    cr_assert_eq(cp_expect_parse("kernels >= 1\ndevice(0): copies >= 1\n", 1, &l), 0);
    cr_assert_eq(cp_expect_scope_range(&l, "step"), 0);
    cr_expect_str_eq(l.items[0].scope, "range");
    cr_expect_str_eq(l.items[0].scope_arg, "step");
    cr_expect_str_eq(l.items[0].text, "range(step): kernels >= 1");
    cr_expect_str_eq(l.items[1].scope, "device");
    cr_expect_str_eq(l.items[1].text, "device(0): copies >= 1");
    cr_assert_eq(cp_expect_scope_range(&l, NULL), 0);
    cr_expect_str_eq(l.items[0].text, "range(step): kernels >= 1");
    cp_expect_list_free(&l);
}

static char *argv_of[] = {"/usr/bin/train", "--epochs", "1", NULL};

/* Why the machine of judge_dir has no GPU; NULL: it has one. */
static const char *no_device_here;

static int judge_dir(const char *dir, const char *expect, const cp_program_run *run,
                     cp_case_result *c, cp_judgement *j)
{
    static char out[64];
    snprintf(out, sizeof out, "/tmp/cuproof-judge-XXXXXX");
    cr_assert_not_null(mkdtemp(out));
    cp_expect_list l = {0};
    cr_assert_eq(cp_expect_parse(expect, 1, &l), 0);
    cp_judge_opts o = {.expect = &l,
                       .argv = argv_of,
                       .program = {.out_dir = out},
                       .no_device = no_device_here};
    memset(c, 0, sizeof *c);
    int rc = cp_program_judge(dir, &o, run, NULL, c, j);
    cp_expect_list_free(&l);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
    cr_expect_eq(system(cmd), 0);
    return rc;
}

/* A recorded program: met and failed expectations give 0 and 1; a failed
 * run gives 4 over a failed expectation; an empty directory gives 3 with
 * the first rule's words; the case is named after the program. */
Test(judge, a_recorded_program_is_judged_without_a_command_line)
{
    cp_case_result c;
    cp_judgement j;
    cp_program_run ok = {.status = 0};
    cr_assert_eq(judge_dir(CUPROOF_FIXTURES "/exec/program", "kernels >= 1\n", &ok, &c, &j), 0);
    cr_expect(j.trust.trusted, "%s", j.trust.why);
    cr_expect_eq(j.exit, CP_EXIT_OK);
    cr_expect_eq(j.met, 1);
    cr_expect_str_eq(c.name, "train");
    cr_expect_str_eq(c.title, "/usr/bin/train --epochs 1");
    cr_expect_str_eq(c.checks[0].name, "the program succeeded");
    cr_expect_eq(c.status, CP_STATUS_PASSED);
    cp_case_result_free(&c);

    cr_assert_eq(judge_dir(CUPROOF_FIXTURES "/exec/program", "kernels > 1000000\n", &ok, &c, &j),
                 0);
    cr_expect_eq(j.exit, CP_EXIT_FAILED);
    cr_expect_eq(j.met, 0);
    cr_expect_eq(c.status, CP_STATUS_FAILED);
    cp_case_result_free(&c);

    cp_program_run crashed = {.signal = 11};
    cr_assert_eq(judge_dir(CUPROOF_FIXTURES "/exec/program", "kernels > 1000000\n", &crashed, &c,
                           &j), 0);
    cr_expect_eq(j.exit, CP_EXIT_PROGRAM);
    cr_expect(j.program_failed);
    cp_case_result_free(&c);

    char empty[] = "/tmp/cuproof-judge-empty-XXXXXX";
    cr_assert_not_null(mkdtemp(empty));
    cr_assert_eq(judge_dir(empty, "kernels >= 1\n", &ok, &c, &j), 0);
    cr_expect_eq(j.exit, CP_EXIT_INCONCLUSIVE);
    cr_expect_not(j.checked);
    cr_expect(strstr(j.trust.why, "no process of the program initialised CUDA"), "%s",
              j.trust.why);
    /* The report says what the exit status says (issue 41, item 2: it
     * said "failed" under exit 3): inconclusive, and why. */
    cr_expect_eq(c.status, CP_STATUS_INCONCLUSIVE);
    cr_expect(strstr(c.skip_reason, "no process of the program initialised CUDA"), "%s",
              c.skip_reason);
    cr_expect_eq(c.error[0], '\0', "%s", c.error);
    cp_case_result_free(&c);
    /* On a machine without a usable GPU, the program's CUDA calls failed
     * before anything could trace them: said so, and the expectation
     * stays in the report, not checked, with why. */
    no_device_here = "no CUDA device: cudaErrorInsufficientDriver";
    cr_assert_eq(judge_dir(empty, "kernels >= 1\n", &ok, &c, &j), 0);
    no_device_here = NULL;
    cr_expect_eq(j.exit, CP_EXIT_INCONCLUSIVE);
    cr_expect(strstr(j.trust.why, "no usable CUDA device on this machine (no CUDA device: "
                                  "cudaErrorInsufficientDriver)"),
              "%s", j.trust.why);
    const cp_check_result *kept = NULL;
    for (size_t i = 0; i < c.nchecks; i++)
        if (strcmp(c.checks[i].name, "kernels >= 1") == 0)
            kept = &c.checks[i];
    cr_assert_not_null(kept, "the expectation is in the report");
    cr_expect_eq(kept->status, CP_CHECK_SKIPPED);
    cr_expect_str_eq(kept->measured, "not checked");
    cr_expect(strstr(kept->skip_reason, "not checked: no usable CUDA device"), "%s",
              kept->skip_reason);
    cp_case_result_free(&c);
    rmdir(empty);
}

/* A process that could not have CUPTI makes the whole program untrusted,
 * whatever the others recorded. */
Test(judge, a_process_without_cupti_makes_it_inconclusive)
{
    cp_case_result c;
    cp_judgement j;
    cp_program_run ok = {.status = 0};
    cr_assert_eq(judge_dir(CUPROOF_FIXTURES "/exec/unavailable", "kernels >= 1\n", &ok, &c, &j),
                 0);
    cr_expect_eq(j.exit, CP_EXIT_INCONCLUSIVE);
    cr_expect(strstr(j.trust.why, "was not traced: cupti unavailable"), "%s", j.trust.why);
    cp_case_result_free(&c);
}
