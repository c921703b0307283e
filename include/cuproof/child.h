/*
 * Cases that need fresh processes (CUDA must not be used in a child forked
 * from a process that already initialised it) start this same executable
 * again with a hidden role: `<exe> --cuproof-child CASE ARGS...` runs the
 * case's .child entry and exits. cuproof and every test binary call
 * cp_child_dispatch first thing in main.
 */
#ifndef CUPROOF_CHILD_H
#define CUPROOF_CHILD_H

#include "export.h"

#include <stdbool.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CP_CHILD_FLAG "--cuproof-child"

/* When argv asks for a child role, runs that case's .child entry with the
 * arguments after the case name, stores its exit status (2 for an unknown
 * case or one without a child entry) and returns true; else false. */
CP_API bool cp_child_dispatch(int argc, char **argv, int *status);

/* Starts this executable as a child of case `name` with the NULL-terminated
 * `args`, its standard output on a pipe whose read end is *fd. Returns 0,
 * or CP_EIO with the reason in cp_last_error. */
CP_API int cp_child_spawn(const char *name, char *const args[], pid_t *pid, int *fd);

/* Reads from a child's pipe until `bytes` arrived, the child closed its end
 * or timeout_ms passed in all, so that a child that hangs cannot hang its
 * parent. Stores the bytes read in *got. Returns 0 when all `bytes`
 * arrived, CP_ETIMEDOUT at the timeout, or CP_EIO at end of file or on a
 * read error; cp_last_error says what arrived and why it stopped. */
CP_API int cp_child_read(int fd, void *buf, size_t bytes, int timeout_ms, size_t *got);

/* Waits up to timeout_ms for a child; a late one is killed. Returns 0 with
 * its exit status, CP_ETIMEDOUT when it was late and killed, or CP_EIO when
 * a signal ended it or waitpid failed (cp_last_error says which). */
CP_API int cp_child_wait(pid_t pid, int timeout_ms, int *exit_status);

#ifdef __cplusplus
}
#endif

#endif
