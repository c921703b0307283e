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

/* One option in a command's help: its flags and what it does. */
typedef struct cp_help_opt {
    const char *flags;
    const char *text;
} cp_help_opt;

/* The table of commands (help.c): the dispatch walks it, and every form
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

/* Creates `dir` and its parents. Returns 0; CP_EIO when a component is not
 * a directory or cannot be created, or the directory is not writable;
 * CP_EINVAL for a path that is too long (cp_last_error says which). Every
 * command gives a failure here CP_EXIT_TOOL: an output it cannot write. */
int cp_make_dirs(const char *dir);

#endif
