/*
 * Whole files read and written, and output directories made, each
 * failure naming the path in
 * cp_last_error: the one place where reports, readers and the command
 * line touch the file system for a whole file.
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_FILE_H
#define CUPROOF_FILE_H

#include "../export.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes `text` to `path`. Returns 0 or CP_EIO (naming the path). */
CP_API int cp_write_file(const char *path, const char *text);

/* Reads a whole file into a malloc'd, NUL-terminated string; NULL with
 * cp_last_error set (CP_EIO, CP_ENOMEM) when it cannot. */
CP_API char *cp_read_file(const char *path);
/* The same, with the number of bytes read in *len (a NUL byte among them
 * shows as strlen(text) < *len). */
CP_API char *cp_read_file_len(const char *path, size_t *len);

/* Creates `dir` and its parents, and proves it writable. Returns 0;
 * CP_EIO when a component is not a directory or cannot be created, or the
 * directory is not writable; CP_EINVAL for a path that is too long
 * (cp_last_error says which). Every command gives a failure here
 * CP_EXIT_TOOL: an output it cannot write. */
CP_API int cp_make_dirs(const char *dir);

#ifdef __cplusplus
}
#endif

#endif
