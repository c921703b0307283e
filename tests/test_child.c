/* Child processes of cases (<cuproof/child.h>): this test binary starts
 * itself again in a case's child role, reads what the child wrote and
 * gets its exit status; a child that hangs is killed. */
#include <cuproof/case.h>
#include <cuproof/child.h>
#include <cuproof/error.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int echo_child(int argc, char **argv)
{
    if (argc == 1 && strcmp(argv[0], "hang") == 0)
        sleep(30);
    if (argc == 1 && strcmp(argv[0], "abort") == 0)
        abort();
    for (int i = 0; i < argc; i++)
        printf("%s;", argv[i]);
    fflush(stdout);
    return 3;
}

static int no_run(cp_ctx *ctx, const cp_variant *v)
{
    return 0;
}

CUPROOF_CASE(selftest_child, .cpu_only = true, .variants = CP_VARIANTS("a"), .run = no_run,
             .child = echo_child);

static void read_all(int fd, char *buf, size_t len)
{
    size_t got = 0;
    ssize_t r;
    while (got < len - 1 && (r = read(fd, buf + got, len - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = '\0';
    close(fd);
}

Test(child, runs_the_case_role_and_returns_its_status)
{
    char *args[] = {"one", "two", NULL};
    pid_t pid;
    int fd, status = -1;
    cr_assert_eq(cp_child_spawn("selftest-child", args, &pid, &fd), 0, "%s", cp_last_error());
    char buf[256];
    read_all(fd, buf, sizeof buf);
    cr_assert_eq(cp_child_wait(pid, 10000, &status), 0, "%s", cp_last_error());
    cr_expect_eq(status, 3);
    cr_expect_str_eq(buf, "one;two;");
}

Test(child, unknown_role_and_hung_child)
{
    int status = 0;
    char *argv[] = {"x", CP_CHILD_FLAG, "no-such-case", NULL};
    cr_expect(cp_child_dispatch(3, argv, &status));
    cr_expect_eq(status, 2);
    char *plain[] = {"x", "run", NULL};
    cr_expect_not(cp_child_dispatch(2, plain, &status));
    char *args[] = {"hang", NULL};
    pid_t pid;
    int fd;
    cr_assert_eq(cp_child_spawn("selftest-child", args, &pid, &fd), 0);
    cr_expect_eq(cp_child_wait(pid, 300, &status), CP_ETIMEDOUT);
    cr_expect_not_null(strstr(cp_last_error(), "killed"), "%s", cp_last_error());
    close(fd);
}

/* A child that dies by a signal is told apart from one that timed out. */
Test(child, a_signal_is_not_a_timeout)
{
    char *args[] = {"abort", NULL};
    pid_t pid;
    int fd, status = -1;
    cr_assert_eq(cp_child_spawn("selftest-child", args, &pid, &fd), 0, "%s", cp_last_error());
    cr_expect_eq(cp_child_wait(pid, 10000, &status), CP_EIO);
    cr_expect_not_null(strstr(cp_last_error(), "signal 6"), "%s", cp_last_error());
    cr_expect_eq(status, -1, "no exit status for a child a signal ended");
    close(fd);
}

/* Reading a child's pipe is bounded: a hung child's silence ends at the
 * timeout, a short answer at end of file, each with what arrived. */
Test(child, reads_are_bounded_in_time)
{
    char *args[] = {"hang", NULL};
    pid_t pid;
    int fd, status = 0;
    char buf[64];
    size_t got = 99;
    cr_assert_eq(cp_child_spawn("selftest-child", args, &pid, &fd), 0);
    cr_expect_eq(cp_child_read(fd, buf, sizeof buf, 200, &got), CP_ETIMEDOUT);
    cr_expect_eq(got, 0);
    cr_expect_not_null(strstr(cp_last_error(), "within 200 ms"), "%s", cp_last_error());
    cr_expect_eq(cp_child_wait(pid, 100, &status), CP_ETIMEDOUT);
    close(fd);

    char *two[] = {"one", "two", NULL};
    cr_assert_eq(cp_child_spawn("selftest-child", two, &pid, &fd), 0);
    cr_expect_eq(cp_child_read(fd, buf, sizeof buf, 10000, &got), CP_EIO, "fewer than asked");
    cr_expect_eq(got, 8, "one;two; arrived");
    cr_expect_not_null(strstr(cp_last_error(), "closed its pipe"), "%s", cp_last_error());
    cr_expect_eq(cp_child_wait(pid, 10000, &status), 0);
    close(fd);

    cr_assert_eq(cp_child_spawn("selftest-child", two, &pid, &fd), 0);
    cr_expect_eq(cp_child_read(fd, buf, 8, 10000, &got), 0, "%s", cp_last_error());
    cr_expect_eq(memcmp(buf, "one;two;", 8), 0);
    cr_expect_eq(cp_child_wait(pid, 10000, &status), 0);
    close(fd);
}
