/*
 * no_gpu_work: a program that never touches the GPU (plain C, nothing of
 * CUDA linked), so the CUDA driver never loads the injection and there is
 * no per-process file, no device record.
 *
 * Written for: `cuproof exec` exits 3, no verdict, the trust rule ("no device activity"):
 * there is nothing to check an expectation against, which must not pass for
 * success, even though the program itself exits 0.
 */
#include <stdio.h>

int main(void)
{
    printf("no_gpu_work: this program does no GPU work\n");
    return 0;
}
