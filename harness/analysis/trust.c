/* The one trust rule (cuproof/trust.h): whether a trace can be judged,
 * and each reason it cannot in words of its own. */
#include <cuproof/trust.h>

#include <cuproof/exit.h>
#include <cuproof/internal/ranks.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Appends to a message, keeping it terminated when it is full. */
static void add(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static void distrust(cp_trust *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->why, sizeof out->why, fmt, ap);
    va_end(ap);
    out->trusted = false;
    out->exit = CP_EXIT_INCONCLUSIVE;
}

/* Rule 2: a process whose run id differs from the launcher's or, without
 * it, from the first process's that names one. A file that names no run
 * (a writer before run ids, a trace recorded elsewhere and copied in as
 * the exec tests do) is compared with nothing: it cannot say whose it is. */
static bool other_run(const cp_trust_in *in, cp_trust *out)
{
    const cp_trace *t = in->processes;
    bool launcher = in->run && in->run[0];
    const char *want = launcher ? in->run : NULL;
    for (size_t i = 0; t && i < t->nprocesses; i++) {
        const cp_process *p = &t->processes[i];
        if (!p->run[0])
            continue;
        if (!want)
            want = p->run;
        if (strcmp(p->run, want) == 0)
            continue;
        distrust(out, "the trace of process %u on %.64s (file %.64s.%u.proc.*) belongs to "
                      "another run: its run id is %.128s, %s %.128s; files of two runs in "
                      "one directory cannot be judged as one program",
                 p->pid, p->host, p->host, p->pid, p->run,
                 launcher ? "this run's is" : "the first file's is", want);
        return true;
    }
    return false;
}

/* Rule 2, where no file names a run and no launcher says which (a
 * directory of files from writers before run ids): a program is one tree
 * of processes, so two processes or more whose parents were not traced
 * (on their host) are separate programs, unless each is a rank of a job
 * (a launcher that did not use CUDA starts them). Quadratic in the
 * processes, as rule 3. */
static bool separate_programs(const cp_trust_in *in, cp_trust *out)
{
    const cp_trace *t = in->processes;
    if (!t || (in->run && in->run[0]))
        return false;
    for (size_t i = 0; i < t->nprocesses; i++)
        if (t->processes[i].run[0])
            return false;
    size_t roots = 0, unranked = 0;
    char named[600] = "";
    for (size_t i = 0; i < t->nprocesses; i++) {
        const cp_process *p = &t->processes[i];
        bool parent = false;
        for (size_t k = 0; k < t->nprocesses && !parent; k++)
            parent = k != i && t->processes[k].pid == p->ppid &&
                     strcmp(t->processes[k].host, p->host) == 0;
        if (parent)
            continue;
        roots++;
        unranked += cp_process_rank(p) < 0;
        if (roots <= 4)
            add(named, sizeof named, "%sprocess %u on %.64s (%.80s)", roots > 1 ? ", " : "",
                p->pid, p->host, p->command);
    }
    if (roots < 2 || unranked == 0)
        return false;
    if (roots > 4)
        add(named, sizeof named, " and %zu more", roots - 4);
    distrust(out, "the files hold %zu separate programs, not one: %s have no traced parent "
                  "and no run id says they are one run (files written before run ids); "
                  "judge one program's files at a time",
             roots, named);
    return true;
}

/* Rule 3: two processes of the trace with the same rank. Quadratic in
 * the processes, which are a job's ranks (hundreds at most). */
static bool same_rank(const cp_trace *t, cp_trust *out)
{
    for (size_t i = 0; t && i < t->nprocesses; i++) {
        int32_t r = cp_process_rank(&t->processes[i]);
        for (size_t k = 0; r >= 0 && k < i; k++) {
            if (cp_process_rank(&t->processes[k]) != r)
                continue;
            const cp_process *a = &t->processes[k], *b = &t->processes[i];
            distrust(out, "two processes claim rank %d: process %u on %.64s (%.31s) and process "
                          "%u on %.64s (%.31s); a rank's figures would mix them",
                     (int)r, a->pid, a->host, a->rank_var, b->pid, b->host, b->rank_var);
            return true;
        }
    }
    return false;
}

void cp_trust_judge(const cp_trust_in *in, cp_trust *out)
{
    memset(out, 0, sizeof *out);
    out->trusted = true;
    out->exit = CP_EXIT_OK;
    const char *what = in->what && *in->what ? in->what : "the trace";
    const cp_trace *t = in->processes;
    size_t truncated = 0;
    for (size_t i = 0; t && i < t->nprocesses; i++)
        truncated += !t->processes[i].ended;
    if (in->traced_files == 0 && in->no_device && *in->no_device) {
        /* The program may well have tried: on a machine without a usable
         * driver or GPU its CUDA calls fail before CUPTI can trace them. */
        distrust(out, "no usable CUDA device on this machine (%.500s): the program's CUDA calls "
                      "could not run, so no process was traced",
                 in->no_device);
        return;
    }
    if (in->traced_files == 0) {
        distrust(out, "no process of the program initialised CUDA (no trace in %.600s): nothing "
                      "was traced",
                 in->dir && *in->dir ? in->dir : what);
        return;
    }
    if (other_run(in, out) || separate_programs(in, out) || same_rank(t, out))
        return;
    char apart[512];
    if (cp_ranks_not_one_job(in->ranks, apart, sizeof apart)) {
        distrust(out, "not one job: %.500s", apart);
        return;
    }
    for (size_t i = 0; t && i < t->nprocesses; i++) {
        const char *why = t->processes[i].why;
        bool on_purpose = strncmp(why, CP_WHY_NOT_TRACED ": ", sizeof CP_WHY_NOT_TRACED + 1) == 0;
        if (on_purpose ||
            strncmp(why, CP_WHY_CUPTI_UNAVAILABLE, sizeof CP_WHY_CUPTI_UNAVAILABLE - 1) == 0) {
            distrust(out, "process %u (%.200s) was not traced: %.600s", t->processes[i].pid,
                     t->processes[i].command, on_purpose ? why + sizeof CP_WHY_NOT_TRACED + 1 : why);
            return;
        }
    }
    if (in->capture && in->windows == 0) {
        distrust(out, "the capture window '%.200s' never opened: nothing of the program was "
                      "traced where it is judged (did the program push that NVTX range on the "
                      "default domain, that many times, or call cudaProfilerStart?)",
                 in->capture);
        return;
    }
    if (in->device_work == 0) {
        distrust(out, "no device activity at all: no kernel, copy or memset in %.600s%s", what,
                 in->cut_short ? " (it was cut short)"
                 : truncated   ? " (a truncated process may have lost its work)"
                               : "");
        return;
    }
    if (in->dropped && !in->allow_dropped) {
        distrust(out, "CUPTI dropped %llu records: the metrics may miss work, so the results "
                      "cannot be trusted (--allow-dropped accepts them)",
                 (unsigned long long)in->dropped);
        return;
    }
    if (in->cut_short && !in->allow_dropped) {
        distrust(out, "%.600s: the metrics may miss work, so the results cannot be trusted "
                      "(--allow-dropped accepts it)",
                 in->cut_why && *in->cut_why ? in->cut_why : "the file was cut short");
        return;
    }
    if (in->dropped)
        add(out->warning, sizeof out->warning,
            "CUPTI dropped %llu records; the metrics may miss work (--allow-dropped)",
            (unsigned long long)in->dropped);
    if (in->cut_short)
        add(out->warning, sizeof out->warning, "%s%.600s; the metrics may miss work (--allow-dropped)",
            out->warning[0] ? "; " : "", in->cut_why && *in->cut_why ? in->cut_why : "the file was cut short");
    if (truncated) {
        add(out->warning, sizeof out->warning,
            "%s%zu process%s truncated (no end record): work after its last flush is missing",
            out->warning[0] ? "; " : "", truncated, truncated == 1 ? "" : "es");
        /* Which ranks, so that a job's missing rank is named. */
        size_t named = 0;
        for (size_t i = 0; t && i < t->nprocesses; i++) {
            int32_t r = cp_process_rank(&t->processes[i]);
            if (t->processes[i].ended || r < 0)
                continue;
            add(out->warning, sizeof out->warning, "%srank %d: process %u",
                named++ ? ", " : " (", (int)r, t->processes[i].pid);
        }
        if (named)
            add(out->warning, sizeof out->warning, ")");
    }
}
