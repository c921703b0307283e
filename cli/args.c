/*
 * What every command of the command line shares for its arguments and its
 * errors: the option tables read (cp_arg_next, against options.c), integers
 * parsed, and the messages and exit statuses of usage, input and tool
 * errors. Called by the commands and the table of commands, calling
 * neither.
 */
#include "cli.h"

#include <cuproof/error.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const char *cp_opt_flag(const char **p, size_t *len, bool *value)
{
    const char *flag = *p;
    if (!flag || !*flag)
        return NULL;
    *len = strcspn(flag, " ,");
    *value = flag[*len] == ' ';
    const char *next = strstr(flag, ", ");
    *p = next ? next + 2 : NULL;
    return flag;
}

/* Whether flag `arg` is one of the flags of `flags`; *value says whether
 * it takes a value there. */
static bool names_flag(const char *flags, const char *arg, bool *value)
{
    size_t len;
    for (const char *p = flags, *f; (f = cp_opt_flag(&p, &len, value));)
        if (strlen(arg) == len && strncmp(f, arg, len) == 0)
            return true;
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
