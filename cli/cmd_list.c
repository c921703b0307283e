/* cuproof list: the registered cases, one per line. */
#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/case.h>

#include <stdio.h>

int cp_cmd_list(int argc, char **argv)
{
    if (argc > 0)
        return cp_usage_error("list takes no arguments, got '%s'", argv[0]);
    for (size_t i = 0; i < cp_registry_count(); i++) {
        const cp_case_def *d = cp_registry_at(i);
        printf("%-28s %s\n", cp_case_name(d), d->title ? d->title : "");
    }
    return CP_EXIT_OK;
}
