/*
 * exit_early: a program that leaves without CUDA's teardown. It runs a few
 * kernels and copies, synchronises, waits long enough for the injection's
 * periodic flush to write those records out (three flush periods:
 * CUPROOF_EXEC_FLUSH_MS, 500 ms when unset; the ctest test sets 50), then
 * calls _exit(0): no atexit handlers, no CUDA or CUPTI teardown, so the
 * injection never writes its final `end` line.
 *
 * Written for: `kernels >= 1`, met by the records of the last flush, and
 * `cuproof exec` exits 0 (the program itself exited 0). The launcher must
 * report the process as truncated (its file has no `end` line: docs/formats.md,
 * "Per-process files"), with the last time its file accounts for; the
 * trace after that time is lost, which is why the program waits before
 * leaving. Without that wait the file could hold no device record at all,
 * and the launcher would then exit 3 (no device activity).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define PROGRAM "exit_early"
#include "exec_common.cuh"

enum { N = 1 << 20, ROUNDS = 4 };

int main(void)
{
    if (add_rounds(ROUNDS, N) != 0)
        return EXIT_FAILURE;
    printf("exit_early: %d kernels, output right; leaving by _exit(0)\n", ROUNDS);
    fflush(stdout); /* _exit does not flush stdio */
    wait_for_flush();
    _exit(0);
}
