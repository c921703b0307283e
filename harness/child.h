/*
 * Cases that need fresh processes (CUDA must not be used in a child forked
 * from a process that already initialised it) start this same executable
 * again with a hidden role: `<exe> --cuproof-child CASE ARGS...` runs the
 * case's .child entry and exits. cuproof and every test binary call
 * cp_child_dispatch first thing in main.
 */
#ifndef CUPROOF_CHILD_H
#define CUPROOF_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

#define CP_CHILD_FLAG "--cuproof-child"

/* When argv asks for a child role, runs that case's .child entry with the
 * arguments after the case name, stores its exit status (2 for an unknown
 * case or one without a child entry) and returns true; else false. */
bool cp_child_dispatch(int argc, char **argv, int *status);

/* Starts this executable as a child of case `name` with the NULL-terminated
 * `args`, its standard output on a pipe whose read end is *fd. Returns 0,
 * or CP_EIO with the reason in cp_last_error. */
int cp_child_spawn(const char *name, char *const args[], pid_t *pid, int *fd);

/* Waits up to timeout_ms for a child; a late one is killed. Returns 0 with
 * its exit status, or CP_EIO when it was killed by a signal or timed out
 * (cp_last_error says which). */
int cp_child_wait(pid_t pid, int timeout_ms, int *exit_status);

#endif
