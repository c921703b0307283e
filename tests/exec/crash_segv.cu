/*
 * crash_segv: a program that dies by a signal. It runs a few kernels and
 * copies, synchronises, waits long enough for the injection's periodic
 * flush to write those records out (three flush periods:
 * CUPROOF_EXEC_FLUSH_MS, 500 ms when unset; the ctest test sets 50), then
 * raises SIGSEGV. Core dumps are turned off first (RLIMIT_CORE 0, and not
 * dumpable), so that the test leaves no core file behind.
 *
 * Written for: `cuproof exec` exits 4 (the program failed), naming the
 * signal (SIGSEGV, "Segmentation fault"). Its `kernels >= 1` is met by the
 * flushed records; the process is reported truncated (no `end` line). The
 * wait matters: a file without a single device record would make the
 * launcher exit 3 (no device activity), which outranks 4.
 */
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define PROGRAM "crash_segv"
#include "exec_common.cuh"

enum { N = 1 << 20, ROUNDS = 4 };

int main(void)
{
    if (add_rounds(ROUNDS, N) != 0)
        return EXIT_FAILURE;
    printf("crash_segv: %d kernels, output right; now raising SIGSEGV on purpose\n", ROUNDS);
    fflush(stdout);
    wait_for_flush();

    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    fprintf(stderr, "crash_segv: still alive after raise(SIGSEGV)\n");
    return EXIT_FAILURE;
}
