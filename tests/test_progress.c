/*
 * The progress sink while cases run: on a terminal one line rewritten in
 * place, at most once per interval and cleared before the case's line; in
 * plain output (CI logs) nothing per run and one line per slow variant.
 * The style is given directly (progress_sink), so that what is written
 * does not depend on where the test runs; the last test checks the choice
 * cp_sink_progress makes on a real pseudo-terminal.
 */
#define _GNU_SOURCE
#include <cuproof/internal/session.h>
#include "reports/progress_sink.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A case result that the progress sink prints as a passed case on GPU 0. */
static cp_case_result passed_case(const char *name)
{
    cp_case_result c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    snprintf(c.gpu_name, sizeof c.gpu_name, "NVIDIA H100");
    c.status = CP_STATUS_PASSED;
    return c;
}

/* A session whose one progress sink writes into a memory buffer, and a
 * second sink without an on_run hook, which the session must step over. */
typedef struct bench {
    cp_session *s;
    FILE *out;
    char *text;
    size_t len;
} bench;

static void bench_open(bench *b, const progress_style *style)
{
    memset(b, 0, sizeof b[0]);
    b->out = open_memstream(&b->text, &b->len);
    cr_assert_not_null(b->out);
    b->s = cp_session_new();
    cr_assert_not_null(b->s);
    cr_assert_eq(cp_session_add_sink(b->s, progress_sink(b->out, 21, style)), 0);
    cr_assert_eq(cp_session_add_sink(b->s, (cp_sink){.name = "silent"}), 0);
}

/* What was written so far: the buffer stays the stream's until closed. */
static const char *bench_text(bench *b)
{
    cr_assert_eq(fflush(b->out), 0);
    return b->text;
}

static void bench_close(bench *b)
{
    cp_session_free(b->s);
    fclose(b->out);
    free(b->text);
}

static void heard(bench *b, const char *case_name, const char *variant, int index,
                  const char *phase, int run, int max_runs, double elapsed_s,
                  const cp_variant_result *result)
{
    cp_run_progress p = {.case_name = case_name, .variant = variant, .variant_index = index,
                         .nvariants = 8, .phase = phase, .run = run, .max_runs = max_runs,
                         .elapsed_s = elapsed_s, .result = result};
    cp_session_on_run(b->s, &p);
}

static void add_case(bench *b, const char *name)
{
    cp_case_result c = passed_case(name);
    cr_assert_eq(cp_session_add_case(b->s, &c), 0);
}

/* The line a case gets with no progress at all, as before the hook. */
static char *case_line_alone(const char *name)
{
    bench b;
    progress_style plain = {.terminal = false, .width = 80, .interval_s = 0.1, .slow_s = 10};
    bench_open(&b, &plain);
    add_case(&b, name);
    char *line = strdup(bench_text(&b));
    cr_assert_not_null(line);
    bench_close(&b);
    return line;
}

Test(progress, the_terminal_line_is_rewritten_at_most_ten_times_a_second_and_cleared)
{
    bench b;
    progress_style tty = {.terminal = true, .width = 200, .interval_s = 0.1, .slow_s = 10};
    bench_open(&b, &tty);
    cp_variant_result slow = {.nsamples = 50, .stopped_by = "noise"};
    heard(&b, "multi-kernel", "sync", 0, "warm-up", 1, 1, 0.0, NULL);
    heard(&b, "multi-kernel", "sync", 0, "timed", 1, 50, 0.3, NULL);  /* a new phase */
    heard(&b, "multi-kernel", "sync", 0, "timed", 2, 50, 0.35, NULL); /* too soon */
    heard(&b, "multi-kernel", "sync", 0, "timed", 3, 50, 0.42, NULL);
    heard(&b, "multi-kernel", "sync", 0, "timed", 4, 50, 0.5, NULL); /* too soon */
    heard(&b, "multi-kernel", "sync", 0, "done", 4, 50, 0.6, &slow);
    /* A new variant's first run is drawn however soon it comes. */
    heard(&b, "multi-kernel", "streams-pinned", 2, "timed", 1, 50, 0.01, NULL);
    heard(&b, "multi-kernel", "streams-pinned", 2, "traced", 1, 1, 0.02, NULL);
    heard(&b, "multi-kernel", "streams-pinned", 2, "done", 1, 50, 12.5, &slow);
    add_case(&b, "multi-kernel");
    char *alone = case_line_alone("multi-kernel");
    char expected[2048];
    snprintf(expected, sizeof expected, "%s%s%s%s%s%s",
             "\r[1/21] multi-kernel  sync (1/8)  warm-up run 1/1  0.0 s\033[K",
             "\r[1/21] multi-kernel  sync (1/8)  timed run 1/50  0.3 s\033[K",
             "\r[1/21] multi-kernel  sync (1/8)  timed run 3/50  0.4 s\033[K",
             "\r[1/21] multi-kernel  streams-pinned (3/8)  timed run 1/50  0.0 s\033[K",
             "\r[1/21] multi-kernel  streams-pinned (3/8)  traced run 1/1  0.0 s\033[K",
             "\r\033[K");
    strncat(expected, alone, sizeof expected - strlen(expected) - 1);
    cr_expect_str_eq(bench_text(&b), expected,
                     "no summary line on a terminal; the case's line as it always was");

    /* The next case starts afresh: its first variant's first run is drawn
     * under the next number, and its line clears it in turn. */
    size_t before = strlen(bench_text(&b));
    heard(&b, "vector-add", "sync", 0, "timed", 2, 3, 0.0, NULL);
    cr_expect_str_eq(bench_text(&b) + before,
                     "\r[2/21] vector-add  sync (1/8)  timed run 2/3  0.0 s\033[K");
    before = strlen(bench_text(&b));
    add_case(&b, "vector-add");
    cr_expect_eq(strncmp(bench_text(&b) + before, "\r\033[K[2/21] passed ", 17), 0, "%s",
                 bench_text(&b) + before);
    free(alone);
    bench_close(&b);
}

/* A line longer than the terminal would wrap, and '\r' would then rewrite
 * only its last part: it is cut to one column less than the width. */
Test(progress, the_terminal_line_never_wraps)
{
    bench b;
    progress_style narrow = {.terminal = true, .width = 20, .interval_s = 0.1, .slow_s = 10};
    bench_open(&b, &narrow);
    heard(&b, "multi-kernel", "streams-pinned", 2, "timed", 12, 50, 4.2, NULL);
    cr_expect_str_eq(bench_text(&b), "\r[1/21] multi-kernel\033[K");
    bench_close(&b);
}

Test(progress, plain_output_has_the_case_lines_and_one_line_per_slow_variant)
{
    bench b;
    progress_style plain = {.terminal = false, .width = 80, .interval_s = 0.1, .slow_s = 0.5};
    bench_open(&b, &plain);
    cp_variant_result quick = {.nsamples = 5, .stopped_by = "noise"};
    cp_variant_result noisy = {.nsamples = 50, .stopped_by = "max_samples"};
    cp_variant_result fixed = {.nsamples = 1, .stopped_by = "fixed"};
    heard(&b, "multi-kernel", "sync", 0, "warm-up", 1, 1, 0.0, NULL);
    for (int run = 1; run <= 5; run++)
        heard(&b, "multi-kernel", "sync", 0, "timed", run, 50, 0.05 * run, NULL);
    heard(&b, "multi-kernel", "sync", 0, "done", 5, 50, 0.3, &quick);
    cr_expect_str_empty(bench_text(&b), "nothing per run, nor for a variant within the limit");
    heard(&b, "multi-kernel", "streams-pinned", 2, "timed", 1, 50, 0.0, NULL);
    heard(&b, "multi-kernel", "streams-pinned", 2, "traced", 1, 1, 0.7, NULL);
    heard(&b, "multi-kernel", "streams-pinned", 2, "done", 50, 50, 0.8, &noisy);
    heard(&b, "multi-kernel", "graph", 3, "done", 1, 1, 2.04, &fixed);
    /* "done" without a result is not the runner's, and says nothing. */
    heard(&b, "multi-kernel", "graph", 3, "done", 1, 1, 3, NULL);
    add_case(&b, "multi-kernel");
    char *alone = case_line_alone("multi-kernel");
    char expected[1024];
    snprintf(expected, sizeof expected, "%s%s%s",
             "[1/21] multi-kernel  streams-pinned: 50 timed runs in 0.8 s (stopped by "
             "max_samples)\n",
             "[1/21] multi-kernel  graph: 1 timed run in 2.0 s (a fixed count)\n", alone);
    cr_expect_str_eq(bench_text(&b), expected);
    free(alone);
    bench_close(&b);
}

/* Reads what the pseudo-terminal's other end has, waiting up to `ms` for
 * the first bytes. */
static size_t read_pty(int master, char *buf, size_t cap, int ms)
{
    size_t got = 0;
    struct pollfd pfd = {.fd = master, .events = POLLIN};
    while (got + 1 < cap && poll(&pfd, 1, got ? 50 : ms) > 0) {
        ssize_t n = read(master, buf + got, cap - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    return got;
}

/* cp_sink_progress asks the output: a terminal gets the line, a file or
 * pipe does not, and CUPROOF_PROGRESS=plain turns the line off. */
Test(progress, the_sink_asks_whether_its_output_is_a_terminal)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    cr_assert_geq(master, 0, "no pseudo-terminal to test with");
    cr_assert_eq(grantpt(master), 0);
    cr_assert_eq(unlockpt(master), 0);
    const char *name = ptsname(master);
    cr_assert_not_null(name);
    /* O_NOCTTY: the test's process must not take it as its terminal. */
    int slave = open(name, O_WRONLY | O_NOCTTY);
    cr_assert_geq(slave, 0);
    FILE *tty = fdopen(slave, "w");
    cr_assert_not_null(tty);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    cr_assert_not_null(mem);
    cp_run_progress p = {.case_name = "vector-add", .variant = "sync", .variant_index = 0,
                         .nvariants = 1, .phase = "timed", .run = 1, .max_runs = 3};
    char got[512];

    cr_assert_eq(unsetenv("CUPROOF_PROGRESS"), 0);
    cp_sink sink = cp_sink_progress(tty, 1);
    cr_assert_not_null(sink.name);
    sink.on_run(sink.data, &p);
    sink.release(sink.data);
    read_pty(master, got, sizeof got, 2000);
    cr_expect_str_eq(got, "\r[1/1] vector-add  sync (1/1)  timed run 1/3  0.0 s\033[K");

    sink = cp_sink_progress(mem, 1);
    cr_assert_not_null(sink.name);
    sink.on_run(sink.data, &p);
    sink.release(sink.data);
    cr_assert_eq(fflush(mem), 0);
    cr_expect_eq(len, 0, "not a terminal: nothing per run");

    cr_assert_eq(setenv("CUPROOF_PROGRESS", "plain", 1), 0);
    sink = cp_sink_progress(tty, 1);
    cr_assert_not_null(sink.name);
    sink.on_run(sink.data, &p);
    sink.release(sink.data);
    cr_expect_eq(read_pty(master, got, sizeof got, 200), 0, "forced plain: %s", got);
    cr_assert_eq(unsetenv("CUPROOF_PROGRESS"), 0);

    fclose(mem);
    free(text);
    fclose(tty);
    close(master);
}
