/*
 * The exit statuses of every cuproof command, in one table (CP_EXIT_MAP):
 * the command line returns them, `cuproof help` and the man page print
 * them from here, and a library user who judges a program (program.h)
 * gets the same numbers. When several apply, the worst wins, in the
 * order of cp_exit_worse: 3, then 4, then 1, then 0 (77 only alone).
 */
#ifndef CUPROOF_EXIT_H
#define CUPROOF_EXIT_H

#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* XX(NAME, status, what it means): one row per status. */
#define CP_EXIT_MAP(XX)                                                                    \
    XX(OK, 0, "success: every case passed or was skipped, every expectation held")         \
    XX(FAILED, 1, "a case, check or expectation failed, or compare found a regression")    \
    XX(USAGE, 2, "bad usage: an unknown command, case or option, a malformed number or "   \
                 "expectation (its line and column named)")                                \
    XX(INCONCLUSIVE, 3, "no verdict could be made: an essential check not made, or a "     \
                        "trace that cannot be trusted or read (records dropped, a file "   \
                        "cut short, no device work, CUPTI held by another tool, hosts "    \
                        "whose clocks could not be aligned)")                              \
    XX(PROGRAM, 4, "exec: the traced program failed (a non-zero exit, a signal, "          \
                   "the timeout)")                                                         \
    XX(SKIPPED, 77, "skipped: no GPU, or fewer than the program needs (ctest's "           \
                    "SKIP_RETURN_CODE); `test`, and `exec` with --skip-without-gpu or "     \
                    "--need-gpus, only")

typedef enum cp_exit {
#define CP_EXIT_ENUM_(name, value, text) CP_EXIT_##name = value,
    CP_EXIT_MAP(CP_EXIT_ENUM_)
#undef CP_EXIT_ENUM_
} cp_exit;

/* What a status means (the map's text), or NULL for a status not in it. */
CP_API const char *cp_exit_meaning(int status);

/* The worse of two statuses by the rule above: 3 beats 4 beats 1 beats 0;
 * 2 (usage) beats all; 77 only when both are 77. */
CP_API int cp_exit_worse(int a, int b);

#ifdef __cplusplus
}
#endif

#endif
