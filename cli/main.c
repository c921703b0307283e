/* cuproof's entry point; everything else is in cli.c so tests can reach it. */
#include <cuproof/child.h>
#include <cuproof/internal/layout.h>
#include "cli.h"

#include <string.h>

int main(int argc, char **argv)
{
    int status = 0;
    if (cp_child_dispatch(argc, argv, &status))
        return status;
    /* The commands that time cases do it in a fixed address-space layout
     * (internal/layout.h); here and not in cp_cli_main, which the tests
     * call inside their own executable. */
    if (argc > 1 && (strcmp(argv[1], "run") == 0 || strcmp(argv[1], "test") == 0))
        cp_layout_fix(argv);
    return cp_cli_main(argc, argv);
}
