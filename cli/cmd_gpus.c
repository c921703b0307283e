/* cuproof gpus: the GPUs the CUDA runtime sees, and ctest's resource spec
 * for them. */
#include <cuproof/internal/file.h>
#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/device.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cuproof gpus [--ctest-spec FILE] [--slots N]: lists the GPUs the runtime
 * sees and writes ctest's resource spec for them. Exit 0; 1 with no GPU
 * (what it checks: scripts ask `cuproof gpus` whether one is here); 2 for
 * bad usage; 6 when the driver fails it or the spec cannot be written. */
int cp_cmd_gpus(int argc, char **argv)
{
    const char *spec = NULL;
    int slots = 1;
    const cp_help_opt *table = cp_opts_gpus;
    for (int i = 0; i < argc; i++) {
        cp_arg g;
        int kind = cp_arg_next(table, argc, argv, &i, &g);
        const char *opt = g.opt, *val = g.val;
        if (kind == CP_ARG_BAD)
            return CP_EXIT_USAGE;
        if (kind == CP_ARG_OPERAND)
            return cp_usage_error("gpus takes [--ctest-spec FILE] [--slots N], got '%s'",
                                  g.operand);
        if (strcmp(opt, "--ctest-spec") == 0) {
            if (!val || !*val)
                return cp_usage_error("%s", "--ctest-spec needs a file");
            spec = val;
        } else if (strcmp(opt, "--slots") == 0) {
            if (!cp_parse_int(val, 1, 64, &slots))
                return cp_usage_error("--slots '%s': expected an integer from 1 to 64",
                                      val ? val : "");
        } else {
            return cp_opt_unparsed(opt);
        }
    }
    cp_env env;
    if (cp_env_discover(&env) < 0)
        return cp_tool_error();
    if (!env.has_device) {
        fprintf(stderr, "cuproof: %s\n", env.no_device_reason);
        return CP_EXIT_FAILED;
    }
    for (int d = 0; d < env.device_count; d++) {
        if (cp_env_use_device(&env, d) < 0)
            return cp_tool_error();
        printf("%d  %s  sm_%d%d  %d SMs  %.1f GiB\n", d, env.gpu_name, env.cc_major,
               env.cc_minor, env.sm_count, (double)env.total_mem / (1 << 30));
    }
    if (!spec)
        return CP_EXIT_OK;
    char *json = cp_ctest_spec_json(env.device_count, slots);
    int rc = json ? cp_write_file(spec, json) : cp_failf(CP_ENOMEM, "out of memory");
    free(json);
    if (rc < 0)
        return cp_tool_error();
    printf("cuproof: resource spec for %d GPUs (%d slots each) in %s\n", env.device_count, slots,
           spec);
    return CP_EXIT_OK;
}

