/*
 * The main of every test binary. Beyond Criterion's own main it maps two
 * outcomes onto ctest:
 *  - every test that ran was skipped (no GPU here): exit 77, which ctest
 *    reports as skipped through SKIP_RETURN_CODE, never as passed;
 *  - no test ran at all (a --filter that matches nothing, i.e. a ctest
 *    entry that no longer names a test): exit 1, a failure.
 */
#include <cuproof/child.h>

#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>
#include <unistd.h>

/* Test binaries of the analysis layer do not link the runner, where child
 * roles live: the reference is weak, and null there. */
#pragma weak cp_child_dispatch

enum { SKIP_RETURN_CODE = 77 };

static size_t ran, skipped, passed;

ReportHook(POST_TEST)(struct criterion_test_stats *stats)
{
    ran++;
    if (stats->test_status == CR_STATUS_SKIPPED)
        skipped++;
    else if (stats->test_status == CR_STATUS_PASSED)
        passed++;
}

int main(int argc, char *argv[])
{
    /* A case's child process (<cuproof/child.h>) runs no tests, and leaves
     * without Criterion's exit handlers, which belong to the parent. */
    int status = 0;
    if (cp_child_dispatch && cp_child_dispatch(argc, argv, &status)) {
        fflush(NULL);
        _exit(status);
    }
    struct criterion_test_set *tests = criterion_initialize();
    int result = 0;
    if (criterion_handle_args(argc, argv, true)) {
        result = !criterion_run_all_tests(tests);
        if (result == 0 && ran == 0) {
            fprintf(stderr, "test_main: no test matched; a stale filter is a failure\n");
            result = 1;
        } else if (result == 0 && passed == 0 && skipped > 0) {
            fprintf(stderr, "test_main: all %zu tests skipped\n", skipped);
            result = SKIP_RETURN_CODE;
        }
    }
    criterion_finalize(tests);
    return result;
}
