/*
 * Progress of `run --runs K` while it goes (reports/pass_progress.h): the
 * first pass's cases said as they are timed and traced, each later pass's
 * log followed while its process runs, a line at least every
 * CP_PASS_QUIET_S seconds, and the time left estimated from the passes
 * done so far.
 */
#include "reports/pass_progress.h"

#include <cuproof/clock.h>
#include <cuproof/internal/progress.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

void cp_pass_progress_start(cp_pass_progress *p, FILE *out, int runs, bool split)
{
    memset(p, 0, sizeof *p);
    p->out = out;
    p->runs = runs > 1 ? runs : 1;
    p->split = split;
    p->start_ms = p->said_ms = cp_now_ms();
    p->quiet_s = CP_PASS_QUIET_S;
}

/* "about 2.5 min left", "about 40 s left", or "" before anything is done. */
static void time_left(const cp_pass_progress *p, double now, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!(p->done > 0) || p->done >= p->runs)
        return;
    double left_s = (now - p->start_ms) / 1e3 * (p->runs - p->done) / p->done;
    if (left_s >= 90)
        snprintf(buf, len, "; about %.1f min left", left_s / 60);
    else
        snprintf(buf, len, "; about %.0f s left", ceil(left_s));
}

void cp_pass_progress_say(cp_pass_progress *p, double done, const char *text)
{
    if (!p->out)
        return;
    double now = cp_now_ms();
    if (done > p->done)
        p->done = done;
    char left[48];
    time_left(p, now, left, sizeof left);
    if (p->bare)
        fprintf(p->out, "%s\n", text);
    else
        fprintf(p->out, "cuproof: %s: %s (%.0f s in%s)\n", p->label, text, (now - p->start_ms) / 1e3,
                left);
    fflush(p->out);
    p->said_ms = now;
}

void cp_pass_progress_follow(cp_pass_progress *p, const char *label, const char *log,
                             const pid_t *pid, double from, double share)
{
    snprintf(p->label, sizeof p->label, "%s", label);
    snprintf(p->log, sizeof p->log, "%s", log);
    p->read_to = 0;
    p->pid = pid;
    p->from = from;
    p->share = share;
    p->partial[0] = '\0';
}

/* One whole line of the followed log: a case's line is said, with the
 * share of the pass it closes: "[i/n] CASE timed: ..." (the pass's own
 * progress, the first half of a split pass), "[i/n] STATUS CASE ..." (the
 * case's verdict, after its traced run), or a slow variant's "[i/n] CASE
 * VARIANT: N timed runs ...", inside case i. */
static void line(cp_pass_progress *p, const char *text)
{
    unsigned i = 0, n = 0;
    if (sscanf(text, "[%u/%u]", &i, &n) != 2 || n == 0 || i == 0)
        return;
    double half = p->split ? 0.5 : 1, fraction;
    if (strstr(text, " timed: "))
        fraction = half * i / n;
    else if (strstr(text, " timed run") || strstr(text, "still running"))
        fraction = 0; /* inside a case: no share closed */
    else
        fraction = (1 - half) + half * i / n;
    cp_pass_progress_say(p, p->from + p->share * fraction, text);
}

void cp_pass_progress_on_run(void *progress, const cp_run_progress *r)
{
    cp_pass_progress *p = progress;
    if (!p->out || p->bare || (cp_now_ms() - p->said_ms) / 1e3 < p->quiet_s ||
        strcmp(r->phase, "done") == 0)
        return;
    char text[256];
    snprintf(text, sizeof text, "%s %s (%d/%d): %s run %d, still running", r->case_name, r->variant,
             r->variant_index + 1, r->nvariants, r->phase, r->run);
    cp_pass_progress_say(p, p->done, text);
}

void cp_pass_progress_poll(void *progress)
{
    cp_pass_progress *p = progress;
    if (!p->out || !p->log[0])
        return;
    FILE *f = fopen(p->log, "r");
    if (f && fseek(f, p->read_to, SEEK_SET) == 0) {
        char buf[1024];
        size_t have = strlen(p->partial);
        while (fgets(buf, sizeof buf, f)) {
            size_t len = strlen(buf);
            p->read_to += (long)len;
            bool whole = len && buf[len - 1] == '\n';
            if (whole)
                buf[--len] = '\0';
            /* A line cut where the process is still writing it waits for
             * its end (a longer one is said in pieces). */
            if (have + len < sizeof p->partial) {
                memcpy(p->partial + have, buf, len + 1);
                have += len;
            }
            if (whole || have + 1 >= sizeof p->partial) {
                line(p, p->partial);
                p->partial[0] = '\0';
                have = 0;
            }
        }
    }
    if (f)
        fclose(f);
    double now = cp_now_ms();
    if ((now - p->said_ms) / 1e3 >= p->quiet_s) {
        char text[96];
        snprintf(text, sizeof text, "still running in process %d", p->pid ? (int)*p->pid : 0);
        cp_pass_progress_say(p, p->done, text);
    }
}
