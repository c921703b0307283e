/*
 * The passes of `cuproof run --runs K --processes P` (cuproof/internal/
 * passes.h): the first pass here, every case timed before any is traced;
 * each later pass in a process of its own; a pass's short cases timed in
 * more processes; every pass and process folded into the case's first.
 */
#include <cuproof/internal/passes.h>

#include <cuproof/error.h>
#include <cuproof/exit.h>
#include <cuproof/internal/file.h>
#include <cuproof/internal/margin.h>
#include <cuproof/internal/spawn.h>
#include "reports/pass_progress.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void say(const cp_passes_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A progress line, when the caller wants them. */
static void say(const cp_passes_opts *o, const char *fmt, ...)
{
    if (!o->progress)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(o->progress, fmt, ap);
    va_end(ap);
    fflush(o->progress);
}

static int out_of_memory(void)
{
    fprintf(stderr, "cuproof: out of memory\n");
    return CP_EXIT_TOOL;
}

bool cp_pass_short_case(const cp_case_result *c)
{
    if (!c || c->status == CP_STATUS_SKIPPED)
        return false;
    size_t timed = 0;
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_variant_result *v = &c->variants[i];
        if (!v->nsamples)
            continue;
        if (!(v->timing.median_ms < CP_PROCESS_SHORT_MS))
            return false;
        timed++;
    }
    return timed > 0;
}

/* The command line of a pass in another process: the kept options, then,
 * for a whole pass, the case names as the command line gave them (none:
 * every case); for a pass's short cases, "--no-trace" and those names.
 * `args` has room for o->nargs + o->ncases + 1. Returns the count. */
static size_t pass_args(const cp_passes_opts *o, const char *const *shorts, size_t nshort,
                        char **args)
{
    size_t n = 0;
    for (size_t i = 0; i < o->nargs; i++)
        args[n++] = o->args[i];
    if (shorts) {
        args[n++] = "--no-trace";
        for (size_t k = 0; k < nshort; k++)
            args[n++] = (char *)shorts[k];
    } else if (o->cases_given) {
        for (size_t k = 0; k < o->ncases; k++)
            args[n++] = (char *)o->cases[k];
    }
    return n;
}

/* --processes P: pass `pass`'s short cases (res[i] the pass's result of
 * selected case i, NULL when it has none) timed in P - 1 more processes
 * of their own, untraced, into OUT/passes/pass-N-process-M, each folded
 * into the pass's result (cp_case_result_add_process). Returns -1, or the
 * exit status when a process failed to leave a report. */
static int more_processes(const cp_passes_opts *o, cp_pass_progress *prog, int pass,
                          cp_case_result **res)
{
    if (o->processes < 2)
        return -1;
    const char **names = calloc(o->ncases + 1, sizeof *names);
    char **args = calloc(o->nargs + o->ncases + 2, sizeof *args);
    bool *is_short = calloc(o->ncases + 1, sizeof *is_short);
    int status = -1;
    if (!names || !args || !is_short) {
        status = out_of_memory();
        goto done;
    }
    /* Judged once, on the pass's own process: a fold changes a case's
     * timing, and every process must time and fold the same cases. */
    size_t nshort = 0;
    for (size_t i = 0; i < o->ncases; i++)
        if ((is_short[i] = cp_pass_short_case(res[i])))
            names[nshort++] = o->cases[i];
    if (!nshort)
        goto done;
    size_t n = pass_args(o, names, nshort, args);
    for (int m = 2; m <= o->processes && status < 0; m++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/passes/pass-%d-process-%d", o->out_dir, pass, m);
        cp_report r;
        pid_t pid = 0;
        char label[64], log[4200];
        snprintf(label, sizeof label, "pass %d, process %d of %d", pass, m, o->processes);
        snprintf(log, sizeof log, "%s.log", dir);
        /* Its cases were timed in the pass already: no share of the run. */
        cp_pass_progress_follow(prog, label, log, &pid, prog->done, 0);
        if (cp_make_dirs(dir) < 0 ||
            cp_pass_in_process(args, n, dir, &r, &pid, cp_pass_progress_poll, prog) < 0) {
            fprintf(stderr, "cuproof: pass %d, process %d: %s\n", pass, m, cp_last_error());
            status = CP_EXIT_TOOL;
            break;
        }
        say(o, "cuproof: pass %d, process %d of %d: %zu short case%s in process %d (%s.log)\n",
            pass, m, o->processes, nshort, nshort == 1 ? "" : "s", (int)pid, dir);
        for (size_t i = 0; i < o->ncases && status < 0; i++) {
            const cp_case_result *c = cp_report_case(&r, o->cases[i]);
            if (c && is_short[i] && cp_case_result_add_process(res[i], c, m) < 0) {
                fprintf(stderr, "cuproof: %s\n", cp_last_error());
                status = CP_EXIT_TOOL;
            }
        }
        cp_report_free(&r);
    }
done:
    free(names);
    free(args);
    free(is_short);
    return status;
}

/* Pass `pass` (2 and later) of every selected case in a process of its
 * own (cp_pass_in_process), into OUT/passes/pass-N, timed in more
 * processes with --processes, each case folded into its first pass.
 * Returns -1, or the exit status when the pass failed to leave a report. */
static int pass_in_process(const cp_passes_opts *o, cp_pass_progress *prog, int pass,
                           cp_case_result *first)
{
    char **args = calloc(o->nargs + o->ncases + 2, sizeof *args);
    cp_case_result **res = calloc(o->ncases + 1, sizeof *res);
    char dir[4096];
    if (!args || !res) {
        free(args);
        free(res);
        return out_of_memory();
    }
    size_t n = pass_args(o, NULL, 0, args);
    snprintf(dir, sizeof dir, "%s/passes/pass-%d", o->out_dir, pass);
    cp_report r;
    pid_t pid = 0;
    char label[64], log[4200];
    snprintf(label, sizeof label, "pass %d of %d", pass, o->runs);
    snprintf(log, sizeof log, "%s.log", dir);
    cp_pass_progress_follow(prog, label, log, &pid, pass - 1, 1);
    int rc = cp_make_dirs(dir) < 0 ? -1
                                   : cp_pass_in_process(args, n, dir, &r, &pid,
                                                        cp_pass_progress_poll, prog);
    free(args);
    if (rc < 0) {
        free(res);
        fprintf(stderr, "cuproof: pass %d: %s\n", pass, cp_last_error());
        return CP_EXIT_TOOL;
    }
    say(o, "cuproof: pass %d of %d ran in process %d (%s.log)\n", pass, o->runs, (int)pid, dir);
    for (size_t i = 0; i < o->ncases; i++) {
        res[i] = (cp_case_result *)cp_report_case(&r, o->cases[i]);
        if (res[i])
            res[i]->pid = (int)pid;
    }
    int status = more_processes(o, prog, pass, res);
    for (size_t i = 0; i < o->ncases && rc == 0 && status < 0; i++)
        if (res[i]) /* else not run there: its first pass says why */
            rc = cp_case_result_add_pass(&first[i], res[i], pass);
    free(res);
    cp_report_free(&r);
    if (status >= 0)
        return status;
    if (rc < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        return CP_EXIT_TOOL;
    }
    return -1;
}

/* The session takes a case's result (and frees it); a failed case makes
 * the run fail. Returns -1, or CP_EXIT_TOOL, which *status becomes too,
 * when the session could not take it (its sink's reason on stderr). */
static int add_case(cp_session *s, cp_case_result *c, int *status)
{
    if (c->status == CP_STATUS_FAILED)
        *status = CP_EXIT_FAILED;
    if (cp_session_add_case(s, c) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        return *status = CP_EXIT_TOOL;
    }
    return -1;
}

/* The first pass, in this process: every case timed untraced first, then
 * each again, its timed runs lent, for its traced runs and checks (when
 * o->split), into first[]. With one pass of one process each case goes to
 * the session as soon as it ran (`direct`). Returns -1 or the exit
 * status. */
static int first_pass(const cp_passes_opts *o, cp_pass_progress *prog, cp_session *s,
                      bool direct, cp_case_result *first, cp_case_result *timed, int *status)
{
    int rc = -1;
    bool lost = false;
    size_t lost_at = o->ncases; /* the case whose timing lost the device */
    /* Progress in steps of a case's timing and of its traced run. */
    double steps = (double)o->ncases * (o->split ? 2 : 1);
    char text[256];
    for (size_t i = 0; o->split && i < o->ncases && rc < 0 && !lost; i++) {
        rc = o->run(o->ctx, i, true, NULL, &timed[i], &lost);
        if (lost)
            lost_at = i;
        snprintf(text, sizeof text, "[%zu/%zu] %s timed: %s", i + 1, o->ncases, o->cases[i],
                 cp_status_name(timed[i].status));
        cp_pass_progress_say(prog, (double)(i + 1) / steps, text);
    }
    for (size_t i = 0; i < o->ncases && rc < 0; i++) {
        if (i == lost_at) {
            /* The device was lost while this case was timed: that is its
             * result; every other case is not run (o->run says why), since
             * none can be traced now. */
            first[i] = timed[i];
            memset(&timed[i], 0, sizeof timed[i]);
        } else {
            rc = o->run(o->ctx, i, false, o->split ? &timed[i] : NULL, &first[i], &lost);
        }
        first[i].pid = (int)getpid();
        /* Said before the session takes the result (and empties it); a
         * bare pass's verdict line is its progress sink's. */
        snprintf(text, sizeof text, "[%zu/%zu] %s %s: %s", i + 1, o->ncases, o->cases[i],
                 o->split ? "traced" : "run", cp_status_name(first[i].status));
        if (!prog->bare)
            cp_pass_progress_say(prog, (steps - (double)o->ncases + (double)(i + 1)) / steps,
                                 text);
        if (direct && rc < 0)
            rc = add_case(s, &first[i], status);
    }
    return rc;
}

int cp_passes_run(const cp_passes_opts *o, cp_session *s, int *status)
{
    int passes = o->runs > 1 ? o->runs : 1;
    bool direct = passes == 1 && o->processes < 2;
    size_t n = o->ncases ? o->ncases : 1;
    cp_case_result *first = calloc(n, sizeof *first);
    cp_case_result *timed = calloc(n, sizeof *timed);
    if (!first || !timed) {
        free(first);
        free(timed);
        return out_of_memory();
    }
    if (passes > 1)
        say(o, "cuproof: pass 1 of %d in this process (%d)\n", passes, (int)getpid());
    /* One pass of one process: the session's progress sink shows each case
     * as it ends; else the cases reach it at the end, and this says them.
     * A pass run by another's (CP_PASS_PROGRESS_ENV) says them bare. The
     * progress is a sink too, so that it hears every run (a long case is
     * never silent); the session frees it. */
    cp_pass_progress *prog = calloc(1, sizeof *prog);
    const char *env = getenv(CP_PASS_PROGRESS_ENV);
    bool child = direct && env && strcmp(env, "1") == 0;
    if (!prog) {
        free(first);
        free(timed);
        return out_of_memory();
    }
    cp_pass_progress_start(prog, direct && !child ? NULL : o->progress, passes, o->split);
    prog->bare = child;
    snprintf(prog->label, sizeof prog->label, "pass 1 of %d", passes);
    if (cp_session_add_sink(s, (cp_sink){.name = "pass progress",
                                         .on_run = cp_pass_progress_on_run,
                                         .release = free,
                                         .data = prog}) < 0) {
        free(first);
        free(timed);
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        return CP_EXIT_TOOL;
    }
    int rc = first_pass(o, prog, s, direct, first, timed, status);
    if (rc < 0 && o->processes > 1) {
        cp_case_result **res = calloc(o->ncases + 1, sizeof *res);
        for (size_t i = 0; res && i < o->ncases; i++)
            res[i] = &first[i];
        rc = res ? more_processes(o, prog, 1, res) : out_of_memory();
        free(res);
    }
    for (int pass = 2; pass <= passes && rc < 0; pass++)
        rc = pass_in_process(o, prog, pass, first);
    for (size_t i = 0; !direct && i < o->ncases; i++) {
        if (rc < 0)
            add_case(s, &first[i], status);
        else
            cp_case_result_free(&first[i]);
    }
    for (size_t i = 0; i < o->ncases; i++)
        cp_case_result_free(&timed[i]);
    free(timed);
    free(first);
    return rc;
}

/* After --runs K: each variant's spread between its passes, the figure a
 * timing threshold must stay above, and each declared expectation's
 * metric over the traced passes, warned about when its bound lies within
 * its spread (cp_case_margins). */
void cp_passes_print_spread(const cp_report *r, int runs, FILE *out, FILE *warn)
{
    fprintf(out,
            "cuproof: between-run spread of each variant's value over %d passes, on the figure "
            "it is judged on:\n",
            runs);
    for (size_t i = 0; i < r->ncases; i++)
        for (size_t k = 0; k < r->cases[i].nvariants; k++) {
            const cp_variant_result *v = &r->cases[i].variants[k];
            double sd, span;
            const char *figure;
            if (cp_variant_run_spread(v, &sd, &span, &figure))
                fprintf(out, "  %s/%s: %.1f%% on %s (largest/smallest %.3f)\n", r->cases[i].name,
                        v->name, 100 * sd, figure, span);
        }
    enum { CAP = 256 };
    cp_case_margin *m = malloc(CAP * sizeof *m);
    size_t tight = 0;
    bool said = false;
    for (size_t i = 0; m && i < r->ncases; i++) {
        size_t n = cp_case_margins(&r->cases[i], m, CAP);
        if (n && !said)
            fprintf(out, "cuproof: each declared expectation's metric over the traced passes "
                         "(mean, sd, and the bound's distance in sds):\n");
        said |= n > 0;
        for (size_t k = 0; k < n; k++) {
            fprintf(out, "  %s: %s: %.4g, sd %.2g over %zu: %s by %.1f sd\n", r->cases[i].name,
                    m[k].check, m[k].margin.mean, m[k].margin.sd, m[k].margin.runs,
                    m[k].margin.spreads >= 0 ? "holds" : "fails", fabs(m[k].margin.spreads));
            tight += m[k].margin.tight;
        }
        for (size_t k = 0; k < n; k++)
            if (m[k].margin.tight)
                fprintf(warn,
                        "cuproof: warning: %s: '%s' %s by %.1f of its spread between runs "
                        "(under %g): another run can %s it\n",
                        r->cases[i].name, m[k].check, m[k].margin.spreads >= 0 ? "holds" : "fails",
                        fabs(m[k].margin.spreads), CP_MARGIN_SPREADS,
                        m[k].margin.spreads >= 0 ? "fail" : "pass");
    }
    if (tight)
        fprintf(warn, "cuproof: %zu expectation%s within %g of %s spread between runs\n", tight,
                tight == 1 ? "" : "s", CP_MARGIN_SPREADS, tight == 1 ? "its" : "their");
    /* A claim's window is a threshold too: its nearest bound within the
     * spread of what the passes measured can change its verdict. */
    for (size_t i = 0; i < r->ncases; i++)
        for (size_t k = 0; k < r->cases[i].nclaims; k++) {
            const cp_claim_result *c = &r->cases[i].claims[k];
            double mean, sd, bound, spreads;
            if (!cp_claim_spread(c, &mean, &sd, &bound, &spreads))
                continue;
            const char *gap = strcmp(c->window.unit, "x") == 0 ? "" : " ";
            fprintf(out,
                    "  %s: claim \"%.60s\": %.4g%s%s, sd %.2g over %zu passes; its window's "
                    "bound %.4g is %.1f sd away\n",
                    r->cases[i].name, c->text, mean, gap, c->window.unit, sd, c->npass_values,
                    bound, spreads);
            if (spreads < CP_MARGIN_SPREADS)
                fprintf(warn,
                        "cuproof: warning: %s: claim \"%.60s\": its window's bound %.4g%s%s "
                        "lies within %.1f of the passes' spread (%.4g, sd %.2g): another run "
                        "can change its verdict\n",
                        r->cases[i].name, c->text, bound, gap, c->window.unit, spreads, mean, sd);
        }
}
