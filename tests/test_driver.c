/* The driver table: resolved through the runtime, never by linking
 * libcuda. Here (no driver) it must fail cleanly, saying which symbol. */
#include <cuproof/driver.h>
#include <cuproof/error.h>

#include <criterion/criterion.h>
#include <string.h>

static unsigned seen_grid, seen_block;
static CUresult launch_result;

static CUresult CUDAAPI fake_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                   unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                   CUstream s, void **args, void **extra)
{
    seen_grid = gx * gy * gz;
    seen_block = bx * by * bz;
    return launch_result;
}

Test(driver, without_a_driver_the_table_fails_cleanly)
{
    const cp_driver *d = cp_driver_get();
    if (d) {
        /* A machine with a driver: every entry is there. */
        cr_expect_not_null(d->CtxCreate);
        cr_expect_not_null(d->LaunchKernel);
        return;
    }
    cr_expect_not_null(strstr(cp_last_error(), "cuGetErrorName"), "%s", cp_last_error());
    cr_expect_null(cp_driver_get(), "the failure is remembered");
}

Test(driver, errors_name_the_call)
{
    cr_expect_eq(cp_check_cu(CUDA_SUCCESS, "f.c", 1, "cuInit(0)"), 0);
    cr_expect_eq(cp_check_cu(CUDA_ERROR_INVALID_VALUE, "f.c", 7, "cuMemAlloc(&p, 0)"), CP_ECUDA);
    cr_expect_not_null(strstr(cp_last_error(), "f.c:7"), "%s", cp_last_error());
    cr_expect_not_null(strstr(cp_last_error(), "cuMemAlloc(&p, 0)"), "%s", cp_last_error());
}

/* cp_cu_launch on a stand-in table (no driver here): the shape reaches the
 * driver as a 1D launch, a driver error comes back as CP_ECUDA naming the
 * call, and missing pieces are refused before any call. */
Test(driver, launch_passes_the_shape_and_names_the_failed_call)
{
    cp_driver fake = {.LaunchKernel = fake_launch};
    CUfunction fn = (CUfunction)&fake;
    void *args[] = {NULL};
    launch_result = CUDA_SUCCESS;
    cr_expect_eq(cp_cu_launch(&fake, fn, "mult_ker", 3, 64, NULL, args), 0, "%s",
                 cp_last_error());
    cr_expect_eq(seen_grid, 3);
    cr_expect_eq(seen_block, 64);
    launch_result = CUDA_ERROR_INVALID_VALUE;
    cr_expect_eq(cp_cu_launch(&fake, fn, "mult_ker", 3, 64, NULL, args), CP_ECUDA);
    cr_expect_not_null(strstr(cp_last_error(), "LaunchKernel"), "%s", cp_last_error());
    cr_expect_eq(cp_cu_launch(NULL, fn, "mult_ker", 1, 1, NULL, args), CP_EINVAL);
    cr_expect_eq(cp_cu_launch(&fake, NULL, "mult_ker", 1, 1, NULL, args), CP_EINVAL);
    cr_expect_eq(cp_cu_launch(&fake, fn, NULL, 1, 1, NULL, args), CP_EINVAL);
}
