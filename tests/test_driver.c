/* The driver table: resolved through the runtime, never by linking
 * libcuda. Here (no driver) it must fail cleanly, saying which symbol. */
#include "harness/driver.h"
#include "harness/error.h"

#include <criterion/criterion.h>
#include <string.h>

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
