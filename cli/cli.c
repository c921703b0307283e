/*
 * The `cuproof` command line: the dispatch to one file per command
 * (cmd_*.c) through the table of commands in commands.c, which also holds
 * every command's help, and the helpers the commands share. It uses the library's
 * public headers only; nothing in the library includes it.
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

int cp_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "cuproof: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see cuproof --help)\n");
    return CP_EXIT_USAGE;
}

int cp_input_error(int code)
{
    fprintf(stderr, "cuproof: %s\n", cp_last_error());
    return cp_exit_of_read(code);
}

int cp_tool_error(void)
{
    fprintf(stderr, "cuproof: %s\n", cp_last_error());
    return CP_EXIT_TOOL;
}

/* Parses a decimal integer in [lo, hi]; false for anything else. */
bool cp_parse_int(const char *s, int lo, int hi, int *out)
{
    if (!s || !*s)
        return false;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

/* Whether flag `arg` is one of the comma-separated flags of `flags`
 * ("--min-samples N, --max-samples N"); *value says whether a word
 * follows it there (it then takes a value). */
static bool names_flag(const char *flags, const char *arg, bool *value)
{
    size_t len = strlen(arg);
    for (const char *p = flags; p && *p;) {
        if (strncmp(p, arg, len) == 0 && (p[len] == ' ' || p[len] == ',' || p[len] == '\0')) {
            *value = p[len] == ' ';
            return true;
        }
        p = strstr(p, ", ");
        p = p ? p + 2 : NULL;
    }
    return false;
}

const cp_help_opt *cp_opt_row(const cp_help_opt *opts, const char *arg, bool *value)
{
    bool v = false;
    for (size_t i = 0; opts && opts[i].flags; i++)
        if (arg[0] == '-' && names_flag(opts[i].flags, arg, &v)) {
            if (value)
                *value = v;
            return &opts[i];
        }
    return NULL;
}

int cp_opt_unparsed(const char *opt)
{
    fprintf(stderr, "cuproof: %s is in the option table but no parser takes it (a bug: "
                    "tests/options_test.sh should have caught it)\n", opt);
    return CP_EXIT_TOOL;
}

int cp_arg_next(const cp_help_opt *opts, int argc, char **argv, int *i, cp_arg *out)
{
    const char *arg = argv[*i];
    memset(out, 0, sizeof *out);
    if (arg[0] != '-' || !arg[1]) {
        out->operand = arg;
        return CP_ARG_OPERAND;
    }
    bool value = false;
    out->row = cp_opt_row(opts, arg, &value);
    if (!out->row) {
        cp_usage_error("unknown option '%s'", arg);
        return CP_ARG_BAD;
    }
    out->opt = arg;
    out->valued = value;
    if (value && *i + 1 < argc)
        out->val = argv[++*i];
    return CP_ARG_OPTION;
}

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
