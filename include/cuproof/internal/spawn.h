/*
 * cuproof started again as a child process, its output in a log file:
 * what `cuproof ab` runs each build with, and the passes after the first
 * of `cuproof run --runs K`, each in a process of its own (a
 * host-bound variant moves between processes by more than the passes of
 * one process show, so each run is a process).
 */
#ifndef CUPROOF_INTERNAL_SPAWN_H
#define CUPROOF_INTERNAL_SPAWN_H

#include "../export.h"
#include "report.h"

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs `exe` with the NULL-terminated argv (argv[0] included), its
 * standard output and error into `log`, and waits for it: *status gets
 * its exit status, or -1 when a signal ended it (*signal_no gets which;
 * may be NULL). Returns 0, or CP_EIO when it could not be started. */
CP_API int cp_spawn_logged(const char *exe, char *const argv[], const char *log, int *status,
                           int *signal_no);

/*
 * One later pass of `cuproof run --runs K`: this executable run again as
 * `run ARGS --out DIR` (ARGS the run's own options and cases, less --runs
 * and --out), its output in DIR.log; *report gets the report it wrote
 * (free with cp_report_free) and *pid its process; DIR keeps only that
 * report.json (the pass's traces are the first pass's to write, in the
 * run's own directory). A pass that wrote no
 * report (killed, or a usage error) is CP_EIO naming its exit and log.
 * `on_wait` (may be NULL) is called with `ctx` about every 200 ms while
 * the pass runs and once after it ended: the log is there to read.
 * Returns 0 or a negative CP_E* code.
 */
CP_API int cp_pass_in_process(char *const args[], size_t nargs, const char *dir,
                              cp_report *report, pid_t *pid, void (*on_wait)(void *ctx),
                              void *ctx);

#ifdef __cplusplus
}
#endif

#endif
