/*
 * cuproof ab (cuproof/internal/ab.h): two builds run in shuffled AB/BA
 * pairs, each run a child `cuproof run` writing its report, every
 * variant's paired log ratio kept, and pairs added until each verdict is
 * decided or the budget is spent. The statistics are compare_stats.h's.
 */
#include <cuproof/internal/ab.h>
#include <cuproof/internal/compare_stats.h>

#include <cuproof/clock.h>
#include <cuproof/error.h>
#include <cuproof/internal/report.h>
#include <cuproof/internal/spawn.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* splitmix64: the pairs' order, the same on every machine for a seed. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The executable of a build: BIN itself, or PREFIX/bin/cuproof. */
static void executable(const char *build, char *out, size_t len)
{
    struct stat st;
    if (stat(build, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(out, len, "%s/bin/cuproof", build);
    else
        snprintf(out, len, "%s", build);
}

static size_t count(char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

/* One run of side B (`b`) or A into `dir` (its output in dir.log): a
 * build's `run` of the cases, or `exec` of a program. */
static int run_build(const cp_ab_opts *o, char *const *cases, bool b, const char *dir)
{
    char exe[4096], log[4200];
    bool exec = o->exec_a != NULL;
    executable(exec ? o->self : b ? o->b : o->a, exe, sizeof exe);
    snprintf(log, sizeof log, "%s.log", dir);
    char *const *program = b ? o->exec_b : o->exec_a;
    size_t nargs = exec ? count(program) : count(cases);
    char **argv = calloc(nargs + 12, sizeof *argv);
    if (!argv)
        return cp_failf(CP_ENOMEM, "out of memory");
    size_t k = 0;
    argv[k++] = exe;
    argv[k++] = exec ? "exec" : "run";
    argv[k++] = exec ? "--repeat" : "--runs";
    argv[k++] = "1";
    argv[k++] = "--out";
    argv[k++] = (char *)dir;
    if (o->profile && !exec) {
        argv[k++] = "--profile";
        argv[k++] = (char *)o->profile;
    }
    if (exec)
        argv[k++] = "--";
    for (size_t i = 0; i < nargs; i++)
        argv[k++] = exec ? program[i] : cases[i];
    int status = 0, sig = 0;
    int rc = cp_spawn_logged(exe, argv, log, &status, &sig);
    free(argv);
    if (rc < 0)
        return rc;
    /* 0: every case passed; 1: one failed, but its variants were timed;
     * for a program, 3 too: no GPU work to judge, but its time. */
    if (status < 0 || (status > 1 && !(exec && status == 3)))
        return cp_failf(CP_EIO, "%s %s --out %s ended with %s %d (its output: %s)", exe,
                        exec ? "exec" : "run", dir, status < 0 ? "signal" : "exit status",
                        status < 0 ? sig : status, log);
    return 0;
}

/* A variant's median of the figure v is judged on; 0 when it has none. */
static double figure_ms(const cp_ab_variant *v, const cp_variant_result *r)
{
    if (v->judged_on == CP_WORK_GPU && v->by_busy)
        return (double)cp_variant_own_ns(r) / 1e6;
    if (v->judged_on == CP_WORK_GPU)
        return cp_variant_judged_on_gpu(r) ? r->gpu_timing.median_ms : 0;
    return r->timing.median_ms;
}

/* The change that matters for v: the host threshold for a variant judged
 * on wall time by its case, else the run's. */
static double threshold_of(const cp_ab_variant *v, const cp_ab_opts *o)
{
    return v->declared_wall ? CP_CMP_HOST_THRESHOLD : o->threshold;
}

/* The smallest change called a change for v (compare_stats.h). */
static double min_effect_of(const cp_ab_variant *v, const cp_ab_opts *o)
{
    return cp_cmp_min_effect(v->judged_on == CP_WORK_GPU, v->by_busy, o->min_effect);
}

/* The variants both reports timed, added on the first pair. */
static int list_variants(const cp_report *a, const cp_report *b, cp_ab_result *out)
{
    for (size_t i = 0; i < a->ncases; i++)
        for (size_t k = 0; k < a->cases[i].nvariants; k++) {
            const cp_variant_result *va = &a->cases[i].variants[k];
            const cp_variant_result *vb =
                cp_case_variant(cp_report_case(b, a->cases[i].name), va->name);
            if (!vb || va->timing.median_ms <= 0 || vb->timing.median_ms <= 0)
                continue;
            cp_ab_variant *p = realloc(out->variants, (out->nvariants + 1) * sizeof *p);
            if (!p)
                return cp_failf(CP_ENOMEM, "out of memory");
            out->variants = p;
            cp_ab_variant *v = &p[out->nvariants++];
            memset(v, 0, sizeof *v);
            snprintf(v->case_name, sizeof v->case_name, "%s", a->cases[i].name);
            snprintf(v->variant, sizeof v->variant, "%s", va->name);
            v->judged_on = cp_variant_judged_on_gpu(va) && cp_variant_judged_on_gpu(vb)
                               ? CP_WORK_GPU
                               : CP_WORK_WALL;
            v->declared_wall = cp_variant_declared_wall(va) && cp_variant_declared_wall(vb);
            v->by_busy = v->judged_on == CP_WORK_GPU &&
                         (cp_variant_judged_on_busy(va) || cp_variant_judged_on_busy(vb));
        }
    return 0;
}

/* Whether variant v's verdict is final: decided, and not for want of
 * pairs (noisy or single run). */
static bool settled(const cp_ab_variant *v)
{
    return v->verdict.decided && v->verdict.verdict != CP_CMP_NOISY &&
           v->verdict.verdict != CP_CMP_SINGLE_RUN;
}

/* One pair's log ratios into each variant not settled yet (a variant
 * missing from a run of this pair gets none this time). */
static int add_pair(const cp_report *a, const cp_report *b, cp_ab_result *out)
{
    for (size_t i = 0; i < out->nvariants; i++) {
        cp_ab_variant *v = &out->variants[i];
        if (settled(v))
            continue;
        const cp_variant_result *va = cp_case_variant(cp_report_case(a, v->case_name), v->variant);
        const cp_variant_result *vb = cp_case_variant(cp_report_case(b, v->case_name), v->variant);
        double ma = va ? figure_ms(v, va) : 0, mb = vb ? figure_ms(v, vb) : 0;
        if (!(ma > 0) || !(mb > 0))
            continue;
        double *p = realloc(v->log_ratios, (v->n + 1) * sizeof *p);
        if (!p)
            return cp_failf(CP_ENOMEM, "out of memory");
        v->log_ratios = p;
        p[v->n++] = log(mb / ma);
    }
    return 0;
}

/* Every variant's verdict so far (cp_pairs_decided: the sequential rule,
 * its risk split over the looks from min_pairs to max_pairs); whether
 * each is decided. */
static int judge(const cp_ab_opts *o, cp_ab_result *out)
{
    out->all_decided = true;
    out->regressions = 0;
    for (size_t i = 0; i < out->nvariants; i++) {
        cp_ab_variant *v = &out->variants[i];
        if (v->n == 0)
            continue;
        int rc = cp_pairs_decided(v->log_ratios, v->n, threshold_of(v, o), min_effect_of(v, o),
                                  (size_t)o->min_pairs, (size_t)o->max_pairs, &v->verdict);
        if (rc < 0)
            return rc;
        /* At the budget the rule stops undecided: noisy is no decision. */
        out->all_decided = out->all_decided && settled(v);
        out->regressions += v->verdict.verdict == CP_CMP_SLOWER &&
                            v->verdict.ratio - 1 > threshold_of(v, o);
    }
    return 0;
}

/* The names of the cases with a variant not settled, NULL-terminated, in
 * the first pair's order, into *cases (grown to room for every variant).
 * Returns 0 or CP_ENOMEM. */
static int undecided_cases(const cp_ab_result *out, char ***cases)
{
    char **list = realloc(*cases, (out->nvariants + 1) * sizeof *list);
    if (!list)
        return cp_failf(CP_ENOMEM, "out of memory");
    *cases = list;
    size_t n = 0;
    for (size_t i = 0; i < out->nvariants; i++) {
        const cp_ab_variant *v = &out->variants[i];
        bool listed = false;
        for (size_t k = 0; k < n && !listed; k++)
            listed = strcmp(list[k], v->case_name) == 0;
        if (!settled(v) && !listed)
            list[n++] = (char *)v->case_name;
    }
    list[n] = NULL;
    return 0;
}

/* The time budget spent: each variant not settled is noisy, with the
 * pairs that would decide it (the rule's estimate at the pairs it has,
 * as at the pair budget). Returns 0 or the rule's error. */
static int out_of_time(const cp_ab_opts *o, cp_ab_result *out)
{
    out->all_decided = true;
    for (size_t i = 0; i < out->nvariants; i++) {
        cp_ab_variant *v = &out->variants[i];
        if (settled(v) || v->n == 0)
            continue;
        out->all_decided = false;
        cp_pair_cmp est;
        size_t looks_from = v->n < (size_t)o->min_pairs ? v->n : (size_t)o->min_pairs;
        if (v->n >= 2) {
            int rc = cp_pairs_decided(v->log_ratios, v->n, threshold_of(v, o),
                                      min_effect_of(v, o), looks_from, v->n, &est);
            if (rc < 0)
                return rc;
            /* Decided at the pairs it has by a single look's risk: the
             * rule needs one more look at least. */
            size_t next = v->n + 1 > (size_t)o->min_pairs ? v->n + 1 : (size_t)o->min_pairs;
            v->verdict.pairs_needed = est.pairs_needed ? est.pairs_needed : next;
            v->verdict.pairs_capped = est.pairs_capped;
        }
        v->verdict.verdict = v->n >= 2 ? CP_CMP_NOISY : CP_CMP_SINGLE_RUN;
        v->verdict.decided = false;
    }
    return 0;
}

int cp_ab_run(const cp_ab_opts *o, cp_ab_result *out)
{
    memset(out, 0, sizeof *out);
    bool builds = o->a && o->b, programs = o->exec_a && o->exec_b && o->self &&
                                               o->exec_a[0] && o->exec_b[0];
    if (!(builds || programs) || !o->work_dir || o->min_pairs < 2 ||
        o->max_pairs < o->min_pairs)
        return cp_failf(CP_EINVAL, "ab needs two builds (or two programs and the cuproof that "
                                   "runs them), a work directory and 2 <= min pairs <= max "
                                   "pairs");
    if (mkdir(o->work_dir, 0755) < 0 && errno != EEXIST)
        return cp_failf(CP_EIO, "cannot create %s: %s", o->work_dir, strerror(errno));
    uint64_t state = o->seed;
    int rc = 0;
    double started = cp_now_ms();
    /* The cases of the next pair: those named (every one when none is),
     * then those with a variant not settled. Room for every variant's. */
    char **cases = NULL;
    for (int pair = 1; pair <= o->max_pairs && rc == 0; pair++) {
        if (pair > 1 && o->max_time_s > 0 && (cp_now_ms() - started) / 1e3 >= o->max_time_s) {
            out->time_spent = true;
            break;
        }
        char *const *these = o->cases;
        if (pair > 1 && !o->exec_a) {
            rc = undecided_cases(out, &cases);
            these = cases;
        }
        bool b_first = next_random(&state) >> 63;
        char dir_a[4096], dir_b[4096], path[4200];
        snprintf(dir_a, sizeof dir_a, "%s/p%d-a", o->work_dir, pair);
        snprintf(dir_b, sizeof dir_b, "%s/p%d-b", o->work_dir, pair);
        if (rc == 0)
            rc = b_first ? run_build(o, these, true, dir_b) : run_build(o, these, false, dir_a);
        if (rc == 0)
            rc = b_first ? run_build(o, these, false, dir_a) : run_build(o, these, true, dir_b);
        cp_report ra, rb;
        memset(&ra, 0, sizeof ra);
        memset(&rb, 0, sizeof rb);
        if (rc == 0) {
            snprintf(path, sizeof path, "%s/report.json", dir_a);
            rc = cp_report_read(path, &ra);
        }
        if (rc == 0) {
            snprintf(path, sizeof path, "%s/report.json", dir_b);
            rc = cp_report_read(path, &rb);
        }
        if (rc == 0 && pair == 1)
            rc = list_variants(&ra, &rb, out);
        if (rc == 0 && out->nvariants == 0)
            rc = cp_failf(CP_EINVAL, "the two builds timed no variant in common (%s, %s)",
                          dir_a, dir_b);
        if (rc == 0)
            rc = add_pair(&ra, &rb, out);
        cp_report_free(&ra);
        cp_report_free(&rb);
        if (rc < 0)
            break;
        out->pairs = pair;
        out->b_first += b_first;
        if (o->progress)
            fprintf(o->progress, "cuproof ab: pair %d of at most %d (%s first)\n", pair,
                    o->max_pairs, b_first ? "B" : "A");
        rc = judge(o, out);
        if (rc == 0 && pair >= o->min_pairs && out->all_decided)
            break;
    }
    free(cases);
    if (rc == 0 && out->time_spent)
        rc = out_of_time(o, out);
    return rc;
}

void cp_ab_print(const cp_ab_result *r, const cp_ab_opts *o, FILE *f)
{
    fprintf(f, "%d pairs (%d with B first); %s", r->pairs, r->b_first,
            r->all_decided ? "every variant decided" : "some variants undecided");
    if (r->time_spent)
        fprintf(f, "; the time budget of %g s was spent", o->max_time_s);
    fprintf(f, "\n");
    /* Regressions first, then the rest in the reports' order. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < r->nvariants; i++) {
            const cp_ab_variant *v = &r->variants[i];
            bool reg = v->verdict.verdict == CP_CMP_SLOWER &&
                       v->verdict.ratio - 1 > threshold_of(v, o);
            if (v->n == 0 || reg != (pass == 0))
                continue;
            fprintf(f, "%-7s %s/%s: B/A %.3f [%.3f, %.3f] over %zu pairs, %s",
                    cp_cmp_verdict_name(v->verdict.verdict), v->case_name, v->variant,
                    v->verdict.ratio, v->verdict.ci_low, v->verdict.ci_high, v->n,
                    v->judged_on == CP_WORK_GPU && v->by_busy ? "on GPU own busy time (traced)"
                    : v->judged_on == CP_WORK_GPU             ? "on GPU time"
                    : v->declared_wall          ? "on wall time at the host threshold"
                                                : "on wall time");
            if (v->verdict.verdict == CP_CMP_NOISY && v->verdict.pairs_needed)
                fprintf(f, " (about %zu pairs would decide%s)", v->verdict.pairs_needed,
                        v->verdict.pairs_capped ? ", or more" : "");
            fprintf(f, "%s\n", reg ? "  REGRESSION" : "");
        }
}

void cp_ab_result_free(cp_ab_result *r)
{
    for (size_t i = 0; i < r->nvariants; i++)
        free(r->variants[i].log_ratios);
    free(r->variants);
    memset(r, 0, sizeof *r);
}
