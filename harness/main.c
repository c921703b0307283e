/* cuproof's entry point; everything else is in cli.c so tests can reach it. */
#include "cli.h"

int main(int argc, char **argv)
{
    return cp_cli_main(argc, argv);
}
