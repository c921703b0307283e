/* Device selection: ctest's resource variable and the no-GPU path. */
#include <cuproof/device.h>
#include <cuproof/error.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
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

Test(device, device_lists)
{
    int ids[4], n = -1;
    cr_assert_eq(cp_parse_device_list("0,1,3", 4, ids, 4, &n), 0);
    cr_expect_eq(n, 3);
    cr_expect(ids[0] == 0 && ids[1] == 1 && ids[2] == 3);
    cr_assert_eq(cp_parse_device_list("2", 4, ids, 4, &n), 0);
    cr_expect(n == 1 && ids[0] == 2);
    const char *bad[] = {"", "0,", ",0", "0,,1", "a", "1.5", "-1", "0,4", "1,1", "0 1", "0,1,2,3,0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(cp_parse_device_list(bad[i], 4, ids, 4, &n), CP_EINVAL, "accepted '%s'",
                     bad[i]);
        cr_expect_neq(strstr(cp_last_error(), "--devices"), NULL, "'%s': %s", bad[i],
                      cp_last_error());
    }
    cr_expect_eq(cp_parse_device_list("0,1,2", 4, ids, 2, &n), CP_EINVAL, "more than max");
    cr_expect_neq(strstr(cp_last_error(), "more than 2"), NULL, "%s", cp_last_error());
    cr_expect_neq(strstr((cp_parse_device_list("7", 2, ids, 4, &n), cp_last_error()),
                         "does not exist"), NULL);
}

/* The spec ctest reads: version 1.0, one local entry, the GPUs by id with
 * their slots; parsed back as JSON. */
Test(device, ctest_resource_spec)
{
    char *s = cp_ctest_spec_json(2, 1);
    cr_assert_not_null(s);
    cJSON *j = cJSON_Parse(s);
    cr_assert_not_null(j, "not JSON: %s", s);
    const cJSON *v = cJSON_GetObjectItem(j, "version");
    cr_expect_eq(cJSON_GetObjectItem(v, "major")->valueint, 1);
    cr_expect_eq(cJSON_GetObjectItem(v, "minor")->valueint, 0);
    const cJSON *local = cJSON_GetObjectItem(j, "local");
    cr_assert_eq(cJSON_GetArraySize(local), 1);
    const cJSON *gpus = cJSON_GetObjectItem(cJSON_GetArrayItem(local, 0), "gpus");
    cr_assert_eq(cJSON_GetArraySize(gpus), 2);
    for (int i = 0; i < 2; i++) {
        const cJSON *g = cJSON_GetArrayItem(gpus, i);
        char id[8];
        snprintf(id, sizeof id, "%d", i);
        cr_expect_str_eq(cJSON_GetObjectItem(g, "id")->valuestring, id, "ids are strings");
        cr_expect_eq(cJSON_GetObjectItem(g, "slots")->valueint, 1);
    }
    cJSON_Delete(j);
    free(s);
    s = cp_ctest_spec_json(0, 4);
    cr_expect_str_eq(s, "{\"version\":{\"major\":1,\"minor\":0},\"local\":[{\"gpus\":[]}]}\n");
    free(s);
    cr_expect_null(cp_ctest_spec_json(2, 0));
    cr_expect_null(cp_ctest_spec_json(-1, 1));
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

/* A shared GPU gives the reason free-memory checks are skipped; unset or
 * "0", the checks are made. */
Test(device, shared_gpu_setting)
{
    cp_env env;
    unsetenv("CUPROOF_SHARED_GPU");
    cp_env_read_settings(&env);
    cr_expect_str_empty(env.shared_gpu);
    setenv("CUPROOF_SHARED_GPU", "1", 1);
    cp_env_read_settings(&env);
    cr_expect_not_null(strstr(env.shared_gpu, "CUPROOF_SHARED_GPU"));
    setenv("CUPROOF_SHARED_GPU", "0", 1);
    cp_env_read_settings(&env);
    cr_expect_str_empty(env.shared_gpu, "0 means not shared");
    unsetenv("CUPROOF_SHARED_GPU");
}
