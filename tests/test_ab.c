/*
 * cuproof ab without a GPU: two fake builds (shell scripts that answer
 * `run --runs 1 --out DIR` with a report of chosen timings) run in
 * shuffled pairs. Every pair shares a drift of up to 10% (both runs of a
 * pair read it from the pair's number), as two runs back to back do on a
 * GPU, while pairs differ by it: a build against itself is never slower,
 * 10% more time in one build is caught, and a build that fails is an
 * error naming its log.
 */
#include <cuproof/error.h>
#include <cuproof/internal/ab.h>

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/cuproof-ab-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(ab, .init = make_dir, .fini = remove_dir);

/* A fake build at DIR/NAME: its variants' medians are BASE x the pair's
 * drift (uniform in [0.95, 1.05], from the pair's number) x `factor`,
 * five samples each within 1%; it exits `status`. The two builds of a
 * test share DIR/calls, which counts the runs, so that both runs of a
 * pair see one drift. */
static void fake_build_noisy(const char *name, double factor, int status, double own)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "#!/bin/bash\n"
            "out=\n"
            "while [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
            "mkdir -p \"$out\"\n"
            "n=$(cat '%s/calls' 2>/dev/null || echo 0); echo $((n + 1)) > '%s/calls'\n"
            "awk -v pair=$((n / 2)) -v call=$n -v f=%.6f -v own=%.6f 'BEGIN {\n"
            "  srand(pair * 7919 + 17); drift = 0.95 + 0.10 * rand(); srand(call * 31 + 5)\n"
            "  drift *= 1 + own * (rand() - 0.5)\n"
            "  printf \"{\\\"schema\\\":\\\"cuproof.report/1\\\",\\\"schema_version\\\":\\\"1.8\\\",\"\n"
            "  printf \"\\\"tool\\\":{\\\"name\\\":\\\"cuproof\\\",\\\"version\\\":\\\"fake\\\"},\"\n"
            "  printf \"\\\"profile\\\":\\\"ci\\\",\\\"env\\\":{\\\"gpu_name\\\":\\\"Fake\\\"},\"\n"
            "  printf \"\\\"cases\\\":[{\\\"name\\\":\\\"k\\\",\\\"status\\\":\\\"passed\\\",\\\"variants\\\":[\"\n"
            "  split(\"1.0 2.5 0.4\", base, \" \")\n"
            "  for (v = 1; v <= 3; v++) {\n"
            "    m = base[v] * drift * f\n"
            "    printf \"%%s{\\\"name\\\":\\\"v%%d\\\",\\\"timing\\\":{\\\"runs\\\":5,\\\"median_ms\\\":%%.6f,\\\"samples_ms\\\":[\", (v > 1 ? \",\" : \"\"), v, m\n"
            "    for (s = 0; s < 5; s++) printf \"%%s%%.6f\", (s ? \",\" : \"\"), m * (0.99 + 0.02 * rand())\n"
            "    printf \"]}}\"\n"
            "  }\n"
            "  printf \"]}]}\\n\"\n"
            "}' > \"$out/report.json\"\n"
            "exit %d\n",
            dir, dir, factor, own, status);
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
}

static void fake_build(const char *name, double factor, int status)
{
    fake_build_noisy(name, factor, status, 0);
}

static cp_ab_opts opts(const char *a, const char *b, char *path_a, char *path_b, char *work)
{
    sprintf(path_a, "%s/%s", dir, a);
    sprintf(path_b, "%s/%s", dir, b);
    sprintf(work, "%s/work", dir);
    return (cp_ab_opts){.a = path_a,
                        .b = path_b,
                        .work_dir = work,
                        .min_pairs = 5,
                        .max_pairs = 20,
                        .seed = 42,
                        .threshold = 0.05,
                        .min_effect = 0.02};
}

Test(ab, a_build_against_itself_is_never_slower)
{
    fake_build("a", 1.0, 0);
    char pa[128], pb[128], work[128];
    cp_ab_opts o = opts("a", "a", pa, pb, work);
    cp_ab_result r;
    cr_assert_eq(cp_ab_run(&o, &r), 0, "%s", cp_last_error());
    cr_expect_eq(r.nvariants, 3);
    cr_expect_eq(r.regressions, 0);
    for (size_t i = 0; i < r.nvariants; i++)
        cr_expect_neq(r.variants[i].verdict.verdict, CP_CMP_SLOWER, "%s: ratio %g",
                      r.variants[i].variant, r.variants[i].verdict.ratio);
    cr_expect(r.all_decided, "%d pairs", r.pairs);
    /* Decided early: no more pairs than the minimum needs. */
    cr_expect_leq(r.pairs, 10, "%d pairs", r.pairs);
    /* The order is drawn: both orders happen. */
    cr_expect(r.b_first > 0 && r.b_first < r.pairs, "%d of %d B first", r.b_first, r.pairs);
    cp_ab_result_free(&r);
}

Test(ab, ten_percent_more_time_is_slower)
{
    fake_build("a", 1.0, 0);
    fake_build("b", 1.10, 0);
    char pa[128], pb[128], work[128];
    cp_ab_opts o = opts("a", "b", pa, pb, work);
    cp_ab_result r;
    cr_assert_eq(cp_ab_run(&o, &r), 0, "%s", cp_last_error());
    cr_assert_eq(r.nvariants, 3);
    for (size_t i = 0; i < r.nvariants; i++) {
        cr_expect_eq(r.variants[i].verdict.verdict, CP_CMP_SLOWER, "%s: ratio %g [%g, %g]",
                     r.variants[i].variant, r.variants[i].verdict.ratio,
                     r.variants[i].verdict.ci_low, r.variants[i].verdict.ci_high);
        cr_expect(fabs(r.variants[i].verdict.ratio - 1.10) < 0.02, "ratio %g",
                  r.variants[i].verdict.ratio);
    }
    cr_expect_eq(r.regressions, 3);
    cp_ab_result_free(&r);
}

Test(ab, a_build_that_fails_is_an_error_naming_its_log)
{
    fake_build("a", 1.0, 0);
    fake_build("broken", 1.0, 3);
    char pa[128], pb[128], work[128];
    cp_ab_opts o = opts("a", "broken", pa, pb, work);
    cp_ab_result r;
    cr_expect_eq(cp_ab_run(&o, &r), CP_EIO);
    cr_expect_not_null(strstr(cp_last_error(), "exit status 3"), "%s", cp_last_error());
    cr_expect_not_null(strstr(cp_last_error(), ".log"), "%s", cp_last_error());
    cp_ab_result_free(&r);
    o.min_pairs = 1;
    cr_expect_eq(cp_ab_run(&o, &r), CP_EINVAL);
    cp_ab_result_free(&r);
}

/* Runs that move on their own by up to 60% (each run, not each pair):
 * the budget of pairs is spent undecided, said as noisy with the pairs
 * that would decide, and not "every variant decided". */
Test(ab, an_undecided_variant_is_noisy_at_the_budget)
{
    fake_build_noisy("a", 1.0, 0, 0.6);
    char pa[128], pb[128], work[128];
    cp_ab_opts o = opts("a", "a", pa, pb, work);
    o.max_pairs = 7;
    cp_ab_result r;
    cr_assert_eq(cp_ab_run(&o, &r), 0, "%s", cp_last_error());
    cr_expect_eq(r.pairs, 7);
    cr_expect_not(r.all_decided);
    int noisy = 0;
    for (size_t i = 0; i < r.nvariants; i++) {
        cr_expect_neq(r.variants[i].verdict.verdict, CP_CMP_SLOWER);
        noisy += r.variants[i].verdict.verdict == CP_CMP_NOISY;
        if (r.variants[i].verdict.verdict == CP_CMP_NOISY)
            cr_expect_gt(r.variants[i].verdict.pairs_needed, 7);
    }
    cr_expect_gt(noisy, 0);
    cp_ab_result_free(&r);
}

/* The time budget: no pair starts once it is spent. Spent after the
 * first pair, every variant is undecided, so noisy (never a verdict on
 * fewer pairs than the rule looks at) with the pairs that would decide
 * it, and the result says the budget stopped it; the control: without a
 * budget the same builds are decided. */
Test(ab, a_spent_time_budget_stops_the_pairs_undecided)
{
    fake_build("a", 1.0, 0);
    char pa[128], pb[128], work[128];
    cp_ab_opts o = opts("a", "a", pa, pb, work);
    o.max_time_s = 1e-6;
    cp_ab_result r;
    cr_assert_eq(cp_ab_run(&o, &r), 0, "%s", cp_last_error());
    cr_expect_eq(r.pairs, 1);
    cr_expect(r.time_spent);
    cr_expect_not(r.all_decided);
    for (size_t i = 0; i < r.nvariants; i++)
        cr_expect_eq(r.variants[i].verdict.verdict, CP_CMP_SINGLE_RUN, "one pair: %s",
                     r.variants[i].variant);
    cp_ab_result_free(&r);
    o.max_time_s = 0;
    cr_assert_eq(cp_ab_run(&o, &r), 0, "%s", cp_last_error());
    cr_expect_not(r.time_spent);
    cr_expect(r.all_decided);
    cp_ab_result_free(&r);
}

/* A pair runs only the cases with a variant still undecided: the fake
 * builds record the cases each run was asked for. Two cases named; the
 * quiet one (no noise of its own) is decided at the fifth pair, the noisy
 * one is not, so the later runs name it alone; the quiet one's variants
 * took no pair after they were decided. */
Test(ab, later_pairs_run_only_the_undecided_cases)
{
    char path[128];
    snprintf(path, sizeof path, "%s/two", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "#!/bin/bash\n"
            "out=; cases=\n"
            "while [ $# -gt 0 ]; do case $1 in --out) out=$2; shift;; --*) shift;; "
            "*) cases=\"$cases $1\";; esac; shift; done\n"
            "echo \"$cases\" >> '%s/asked'\n"
            "mkdir -p \"$out\"\n"
            "n=$(cat '%s/calls' 2>/dev/null || echo 0); echo $((n + 1)) > '%s/calls'\n"
            "awk -v call=$n 'BEGIN { srand(call * 31 + 5)\n"
            "  printf \"{\\\"schema\\\":\\\"cuproof.report/1\\\",\\\"schema_version\\\":\\\"1.8\\\",\"\n"
            "  printf \"\\\"profile\\\":\\\"ci\\\",\\\"env\\\":{\\\"gpu_name\\\":\\\"Fake\\\"},\\\"cases\\\":[\"\n"
            "  q = 1.0 * (0.999 + 0.002 * rand()); w = 2.0 * (0.6 + 0.8 * rand())\n"
            "  printf \"{\\\"name\\\":\\\"quiet\\\",\\\"status\\\":\\\"passed\\\",\\\"variants\\\":[{\\\"name\\\":\\\"v\\\",\\\"timing\\\":{\\\"runs\\\":1,\\\"median_ms\\\":%%.6f}}]},\", q\n"
            "  printf \"{\\\"name\\\":\\\"noisy\\\",\\\"status\\\":\\\"passed\\\",\\\"variants\\\":[{\\\"name\\\":\\\"v\\\",\\\"timing\\\":{\\\"runs\\\":1,\\\"median_ms\\\":%%.6f}}]}]}\\n\", w\n"
            "}' > \"$out/report.json\"\n",
            dir, dir, dir);
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
    char pa[128], pb[128], work[128];
    cp_ab_opts o = opts("two", "two", pa, pb, work);
    o.max_pairs = 8;
    char *cases[] = {"quiet", "noisy", NULL};
    o.cases = cases;
    cp_ab_result r;
    cr_assert_eq(cp_ab_run(&o, &r), 0, "%s", cp_last_error());
    cr_assert_eq(r.nvariants, 2);
    cr_expect_eq(r.pairs, 8);
    const cp_ab_variant *quiet = &r.variants[0], *noisy = &r.variants[1];
    cr_expect_str_eq(quiet->case_name, "quiet");
    cr_expect_eq(quiet->verdict.verdict, CP_CMP_SAME);
    cr_expect_eq(quiet->n, 5, "no pair after it was decided: %zu", quiet->n);
    cr_expect_eq(noisy->n, 8);
    cp_ab_result_free(&r);
    snprintf(path, sizeof path, "%s/asked", dir);
    f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[256];
    int runs = 0, both = 0, alone = 0;
    while (fgets(line, sizeof line, f)) {
        runs++;
        both += strcmp(line, " run quiet noisy\n") == 0;
        alone += strcmp(line, " run noisy\n") == 0;
    }
    fclose(f);
    cr_expect_eq(runs, 16);
    cr_expect_eq(both, 10, "the first five pairs name both cases");
    cr_expect_eq(alone, 6, "the last three the undecided one alone");
}

/* Two programs instead of two builds (ab --exec): each run is `cuproof
 * exec --repeat 1` of one, judged on its wall time (the report's
 * "program" variant). A program that sleeps twice as long is slower; a
 * program against itself is not. Without a GPU exec exits 3 (no GPU
 * work), which still times the program. */
Test(ab, two_programs_are_compared_on_their_wall_time)
{
    char *const fast[] = {"sh", "-c", "sleep 0.05", NULL};
    /* 4x the sleep, so that process start-up on a loaded machine (tens of
     * ms on each side) cannot pull the ratio near 1. */
    char *const slow[] = {"sh", "-c", "sleep 0.2", NULL};
    char work[128];
    snprintf(work, sizeof work, "%s/work", dir);
    cp_ab_opts o = {.exec_a = fast,
                    .exec_b = slow,
                    .self = CUPROOF_BIN,
                    .work_dir = work,
                    .min_pairs = 5,
                    .max_pairs = 8,
                    .seed = 3,
                    .threshold = 0.05,
                    .min_effect = 0.02};
    cp_ab_result r;
    cr_assert_eq(cp_ab_run(&o, &r), 0, "%s", cp_last_error());
    const cp_ab_variant *wall = NULL;
    for (size_t i = 0; i < r.nvariants; i++)
        if (strcmp(r.variants[i].variant, "program") == 0)
            wall = &r.variants[i];
    cr_assert_not_null(wall, "%zu variants", r.nvariants);
    cr_expect_eq(wall->verdict.verdict, CP_CMP_SLOWER, "ratio %g", wall->verdict.ratio);
    cr_expect(wall->verdict.ratio > 1.5 && wall->verdict.ratio < 4.5, "ratio %g",
              wall->verdict.ratio);
    cp_ab_result_free(&r);
    o.exec_b = fast;
    /* The same program: start-up jitter under load is not a 10% change. */
    o.min_effect = 0.1;
    cr_assert_eq(cp_ab_run(&o, &r), 0, "%s", cp_last_error());
    for (size_t i = 0; i < r.nvariants; i++)
        cr_expect_neq(r.variants[i].verdict.verdict, CP_CMP_SLOWER, "%s: ratio %g",
                      r.variants[i].variant, r.variants[i].verdict.ratio);
    cr_expect_eq(r.regressions, 0);
    cp_ab_result_free(&r);
}
