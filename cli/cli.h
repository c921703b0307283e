/*
 * The `cuproof` command line, private to cli/: one file per command, each
 * taking the arguments after its name and returning the process's exit
 * status.
 */
#ifndef CUPROOF_CLI_H
#define CUPROOF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Exit statuses: CP_EXIT_* from the one table every command shares
 * (cuproof/exit.h). `test` exits 77 when its case was skipped and 1 when it
 * was inconclusive. */
#include <cuproof/exit.h>
/* cp_make_dirs, which every command that writes files uses. */
#include <cuproof/internal/file.h>

/* The whole command line: argv[1] names the command. */
int cp_cli_main(int argc, char **argv);

int cp_cmd_list(int argc, char **argv);
int cp_cmd_run(int argc, char **argv);
int cp_cmd_test(int argc, char **argv);
int cp_cmd_gpus(int argc, char **argv);
int cp_cmd_export(int argc, char **argv);
int cp_cmd_compare(int argc, char **argv);
int cp_cmd_ab(int argc, char **argv);
int cp_cmd_timeline(int argc, char **argv);
int cp_cmd_metrics(int argc, char **argv);
int cp_cmd_exec(int argc, char **argv);
int cp_cmd_check(int argc, char **argv);
int cp_cmd_replay(int argc, char **argv);
int cp_cmd_help(int argc, char **argv);

/* One option in a command's help and the one list its parser reads: its
 * flags, what it does, and whether a later pass of `run --runs K` keeps
 * it. `flags` is one flag or several, comma-separated ("--min-samples N,
 * --max-samples N"); a flag followed by a word there takes a value (the
 * next argument), so the help a user reads is what the parser does. The
 * same struct carries examples and environment variables (kept unset). */
typedef struct cp_help_opt {
    const char *flags;
    const char *text;
    bool kept;
} cp_help_opt;

/* The flags of a row's `flags`, one a call: from *p, the next flag (its
 * *len bytes at the pointer returned) and whether a word follows it there
 * (*value: it takes a value); *p moves past it. NULL after the last. The
 * one reading of that synopsis, for the parsers and the tables' dump. */
const char *cp_opt_flag(const char **p, size_t *len, bool *value);

/* The row of the option table `opts` (ending with {NULL}) that names
 * flag `arg`, or NULL; *value (may be NULL) says whether it takes a
 * value. */
const cp_help_opt *cp_opt_row(const cp_help_opt *opts, const char *arg, bool *value);

/* One argument of a command's line, as cp_arg_next read it. */
typedef struct cp_arg {
    const cp_help_opt *row; /* the option's row; NULL for an operand */
    const char *opt;        /* the option as given ("--repeat") */
    bool valued;            /* the table says it takes a value */
    const char *val;        /* its value; NULL when it takes none or none followed */
    const char *operand;    /* an operand (not an option) */
} cp_arg;

enum { CP_ARG_BAD = -1, CP_ARG_OPERAND = 0, CP_ARG_OPTION = 1 };

/* Reads argv[*i] against the option table `opts`: an option in the table
 * (CP_ARG_OPTION; its value is the next argument, *i advanced past it,
 * when the table says it takes one), an operand (CP_ARG_OPERAND: "-"
 * alone, or anything not starting with '-'), or an option the table lacks
 * (CP_ARG_BAD, after "unknown option 'X'" on stderr: the caller returns
 * CP_EXIT_USAGE). Every command parses through it, so no parser can take
 * an option its help does not show, nor take a value the help does not. */
int cp_arg_next(const cp_help_opt *opts, int argc, char **argv, int *i, cp_arg *out);

/* A parser's last branch, for an option of its table that no branch
 * took: says so (a bug) and returns CP_EXIT_TOOL. */
int cp_opt_unparsed(const char *opt);

/* Each command's option table (options.c), for its parser and its help. */
extern const cp_help_opt cp_opts_run[], cp_opts_test[], cp_opts_compare[], cp_opts_ab[],
    cp_opts_gpus[], cp_opts_export[], cp_opts_metrics[], cp_opts_check[], cp_opts_exec[],
    cp_opts_replay[];

/* The table of commands (commands.c): the dispatch walks it, and every form
 * of the help (cuproof help, cuproof.1, docs/cli.md) is printed from it. */
typedef struct cp_command {
    const char *name;
    const char *args;    /* the synopsis after "cuproof NAME" */
    const char *summary; /* one line, for the list of commands */
    int (*run)(int argc, char **argv);
    const char *text;        /* prose, unwrapped; paragraphs split by "\n\n" */
    const cp_help_opt *opts; /* ends with {NULL}; NULL for none */
    const cp_help_opt *examples; /* command line and what it does; ends with {NULL} */
    const char *exits;       /* when this command gives which status; NULL: the table says all */
} cp_command;

extern const cp_command cp_commands[];
extern const size_t cp_ncommands;

/* The command named `name`, or NULL. */
const cp_command *cp_command_find(const char *name);

/* Prints the help of command `c` (NULL: of every command) as text. */
void cp_help_print(FILE *out, const cp_command *c);

/* Whether the arguments after a command's name ask for its help: --help
 * or -h before any "--" (what follows "--" is exec's program's). */
bool cp_help_wanted(int argc, char **argv);

/* Prints "cuproof: " and the message (`fmt` with one string argument) with
 * a pointer to --help on stderr; returns CP_EXIT_USAGE. */
int cp_usage_error(const char *fmt, const char *arg);

/* Prints "cuproof: " and the last error (cp_last_error, which names the
 * file and where in it) on stderr, and returns the status of a reader's
 * failure `code` on a file the user gave (cp_exit_of_read: CP_EXIT_INPUT,
 * or CP_EXIT_TOOL when memory ran out). */
int cp_input_error(int code);

/* Prints "cuproof: " and the last error on stderr; returns CP_EXIT_TOOL:
 * cuproof could not do its part (an output it cannot write, out of
 * memory, the driver failing it). */
int cp_tool_error(void);

/* Parses a decimal integer in [lo, hi]; false for anything else. */
bool cp_parse_int(const char *s, int lo, int hi, int *out);


#endif
