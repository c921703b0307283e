/* Device selection: ctest's resource variable and the no-GPU path. */
#include "harness/device.h"
#include "harness/error.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

Test(device, resource_value_plain)
{
    int d = -1;
    cr_assert_eq(cp_parse_resource_gpus("id:3,slots:1", &d), 0);
    cr_expect_eq(d, 3);
}

Test(device, resource_value_slots_first)
{
    int d = -1;
    cr_assert_eq(cp_parse_resource_gpus("slots:2,id:1", &d), 0);
    cr_expect_eq(d, 1);
}

Test(device, resource_value_several_allocations_takes_first)
{
    int d = -1;
    cr_assert_eq(cp_parse_resource_gpus("id:2,slots:1;id:5,slots:1", &d), 0);
    cr_expect_eq(d, 2);
}

Test(device, resource_value_malformed)
{
    int d = 42;
    const char *bad[] = {"", "slots:1", "id:", "id:x,slots:1", "id:-1,slots:1",
                         "id:1x,slots:1", "gpuid:1", "id:99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(cp_parse_resource_gpus(bad[i], &d), CP_EINVAL, "accepted '%s'", bad[i]);
        cr_expect_neq(strstr(cp_last_error(), "CTEST_RESOURCE_GROUP_0_GPUS"), NULL,
                      "error for '%s' does not name the variable: %s", bad[i], cp_last_error());
    }
    cr_expect_eq(cp_parse_resource_gpus(NULL, &d), CP_EINVAL);
    cr_expect_eq(d, 42, "the output is untouched on error");
}

/* With every GPU hidden the environment says so, with the runtime's reason,
 * and the run can go on to skip its GPU cases. */
Test(device, hidden_gpus_mean_no_device)
{
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    cp_env env;
    cr_assert_eq(cp_env_discover(&env), 0);
    cr_expect_not(env.has_device);
    cr_expect_eq(env.device_count, 0);
    cr_expect_neq(strstr(env.no_device_reason, "no CUDA device"), NULL, "%s",
                  env.no_device_reason);
    cr_expect_neq(env.host[0], '\0');
    cr_expect_gt(env.runtime_version, 0);
}
