/*
 * The `cuproof` command line's dispatch: argv[1] names a command of the
 * table in commands.c, which also holds every command's help; its
 * function (one file per command, cmd_*.c) gets the rest. The helpers
 * the commands share are in args.c. It uses the library's public headers
 * only; nothing in the library includes it.
 */
#include "cli.h"

#include <cuproof/error.h>
#include <cuproof/version.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What a command printed is its output too: a stdout that could not take
 * it (a full disk, a closed pipe's reader gone) is a tool error, said on
 * stderr, not a success. Returns the worse of `status` and that. */
static int stdout_written(int status)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return status;
    fprintf(stderr, "cuproof: cannot write standard output: %s\n", strerror(errno));
    return cp_exit_worse(status, CP_EXIT_TOOL);
}

int cp_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        /* Every command, one line each: what a newcomer types first. */
        fprintf(stderr, "cuproof: missing command; one of:\n");
        for (size_t i = 0; i < cp_ncommands; i++)
            fprintf(stderr, "  %-9s %s\n", cp_commands[i].name, cp_commands[i].summary);
        fprintf(stderr, "cuproof help COMMAND (or cuproof COMMAND --help) tells more\n");
        return CP_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        cp_help_print(stdout, NULL);
        return stdout_written(CP_EXIT_OK);
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("cuproof %s\n", cp_version());
        return stdout_written(CP_EXIT_OK);
    }
    const cp_command *c = cp_command_find(cmd);
    if (!c)
        return cp_usage_error("unknown command '%s'", cmd);
    /* `cuproof CMD --help` is answered here, before the command parses
     * its arguments, so no command needs code of its own for it. */
    int status = CP_EXIT_OK;
    if (cp_help_wanted(argc - 2, argv + 2))
        cp_help_print(stdout, c);
    else
        status = c->run(argc - 2, argv + 2);
    return stdout_written(status);
}
