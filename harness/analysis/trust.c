/* The one trust rule (cuproof/trust.h): whether a trace can be judged,
 * and each reason it cannot in words of its own. */
#include <cuproof/trust.h>

#include <cuproof/exit.h>

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
    if (in->traced_files == 0) {
        distrust(out, "no process of the program initialised CUDA (no trace in %.600s): nothing "
                      "was traced",
                 in->dir && *in->dir ? in->dir : what);
        return;
    }
    for (size_t i = 0; t && i < t->nprocesses; i++)
        if (strncmp(t->processes[i].why, CP_WHY_CUPTI_UNAVAILABLE,
                    sizeof CP_WHY_CUPTI_UNAVAILABLE - 1) == 0) {
            distrust(out, "process %u (%.200s) was not traced: %.600s", t->processes[i].pid,
                     t->processes[i].command, t->processes[i].why);
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
    if (truncated)
        add(out->warning, sizeof out->warning,
            "%s%zu process%s truncated (no end record): work after its last flush is missing",
            out->warning[0] ? "; " : "", truncated, truncated == 1 ? "" : "es");
}
