/*
 * "Did you mean": the known name nearest a misspelt one, and the list of
 * the known names (harness/analysis/names.c), which every hint of the
 * command line and the expectation grammar uses. Internal
 * (include/cuproof/internal/).
 */
#ifndef CUPROOF_INTERNAL_NAMES_H
#define CUPROOF_INTERNAL_NAMES_H

#include "../export.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The name nearest to `name` among n items `stride` bytes apart whose
 * first member is a `const char *` name (an array of names: stride
 * sizeof(char *)), when it is near enough to be a typo of it (at most 2
 * edits, or a fifth of its length; a swap of two neighbours is one
 * edit); NULL when none is. */
CP_API const char *cp_nearest_name(const char *name, const void *items, size_t n, size_t stride);

/* The names of the same n items into `out` (len bytes), comma-separated,
 * cut at len: the list a hint gives when no name is near. */
CP_API void cp_list_names(const void *items, size_t n, size_t stride, char *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif
