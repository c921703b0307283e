/* The `cuproof` command line. */
#ifndef CUPROOF_CLI_H
#define CUPROOF_CLI_H

/* Exit statuses: 0 every case passed or was skipped; 1 a case failed or the
 * report could not be written; 2 bad usage (the message names it). */
enum { CP_EXIT_OK = 0, CP_EXIT_FAILED = 1, CP_EXIT_USAGE = 2 };

int cp_cli_main(int argc, char **argv);

#endif
