/*
 * The `cuproof` command line, private to cli/: one file per command, each
 * taking the arguments after its name and returning the process's exit
 * status.
 */
#ifndef CUPROOF_CLI_H
#define CUPROOF_CLI_H

#include <stdbool.h>

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
int cp_cmd_timeline(int argc, char **argv);
int cp_cmd_metrics(int argc, char **argv);
int cp_cmd_exec(int argc, char **argv);
int cp_cmd_check(int argc, char **argv);
int cp_cmd_replay(int argc, char **argv);

/* Prints "cuproof: " and the message (`fmt` with one string argument) with
 * a pointer to --help on stderr; returns CP_EXIT_USAGE. */
int cp_usage_error(const char *fmt, const char *arg);

/* Parses a decimal integer in [lo, hi]; false for anything else. */
bool cp_parse_int(const char *s, int lo, int hi, int *out);

/* Creates `dir` and its parents. Returns 0; CP_EIO when a component is not
 * a directory or cannot be created, or the directory is not writable;
 * CP_EINVAL for a path that is too long (cp_last_error says which). */
int cp_make_dirs(const char *dir);

#endif
