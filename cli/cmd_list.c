/* cuproof list: the registered cases, one per line, each declaration
 * checked (cp_case_validate): a typo in a case's expectations is a usage
 * error here, on any machine, naming its file, line and column. */
#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/case.h>

#include <stdio.h>

int cp_cmd_list(int argc, char **argv)
{
    if (argc > 0)
        return cp_usage_error("list takes no arguments, got '%s'", argv[0]);
    int bad = 0;
    for (size_t i = 0; i < cp_registry_count(); i++) {
        const cp_case_def *d = cp_registry_at(i);
        printf("%-28s %s\n", cp_case_name(d), d->title ? d->title : "");
        if (cp_case_validate(d) < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            bad++;
        }
    }
    if (bad)
        fprintf(stderr, "cuproof: %d case%s declared with errors\n", bad, bad == 1 ? "" : "s");
    return bad ? CP_EXIT_USAGE : CP_EXIT_OK;
}
