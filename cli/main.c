/* cuproof's entry point; everything else is in cli.c so tests can reach it. */
#include <cuproof/child.h>
#include "cli.h"

int main(int argc, char **argv)
{
    int status = 0;
    if (cp_child_dispatch(argc, argv, &status))
        return status;
    return cp_cli_main(argc, argv);
}
