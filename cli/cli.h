/*
 * The `cuproof` command line, private to cli/: one file per command, each
 * taking the arguments after its name and returning the process's exit
 * status.
 */
#ifndef CUPROOF_CLI_H
#define CUPROOF_CLI_H

#include <stdbool.h>

/* Exit statuses: 0 every case passed or was skipped; 1 a case failed or the
 * report could not be written; 2 bad usage (the message names it); 3 no
 * case failed but one was inconclusive (an essential check not made).
 * `test` exits 77 when its case was skipped, ctest's SKIP_RETURN_CODE, and
 * 1 when it was inconclusive. */
enum {
    CP_EXIT_OK = 0,
    CP_EXIT_FAILED = 1,
    CP_EXIT_USAGE = 2,
    CP_EXIT_INCONCLUSIVE = 3,
    CP_EXIT_SKIPPED = 77
};

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
