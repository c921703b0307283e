/*
 * The exit statuses of every cuproof command, in one table (CP_EXIT_MAP):
 * the command line returns them, `cuproof help` and the man page print
 * them from here, and a library user who judges a program (program.h)
 * gets the same numbers.
 *
 * When several apply, the worst wins (cp_exit_worse): 2, then 6, then 5,
 * then 3, then 4, then 1, then 0; 77 only alone. The rule: the earlier a
 * status stops the work, the worse it is. Usage stops it before anything
 * is read; a tool error means cuproof itself may have left any part
 * undone; bad input means a file asked for was not judged at all (the
 * good ones still were); inconclusive means a trace was read but cannot
 * be trusted; then the program's failure, then a verdict that failed. So
 * a command given a good and a bad file exits 5 even when the good one
 * fails a check (whose verdict it prints).
 */
#ifndef CUPROOF_EXIT_H
#define CUPROOF_EXIT_H

#include "export.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* XX(NAME, status, what it means): one row per status. */
#define CP_EXIT_MAP(XX)                                                                    \
    XX(OK, 0, "success: every case passed or was skipped, every expectation held")         \
    XX(FAILED, 1, "a case, check or expectation failed, or compare found a regression")    \
    XX(USAGE, 2, "bad usage: an unknown command, case or option, a malformed number or "   \
                 "--expect text (its line and column named)")                              \
    XX(INCONCLUSIVE, 3, "no verdict could be made: an essential check not made, or a "     \
                        "trace read but not to be trusted (records dropped, a cuproof.rec "\
                        "file cut short, no device work, CUPTI held by another tool, "     \
                        "hosts whose clocks could not be aligned), or ab's pairs spent "   \
                        "undecided")                                                       \
    XX(PROGRAM, 4, "exec: the traced program failed (a non-zero exit, a signal, "          \
                   "the timeout)")                                                         \
    XX(INPUT, 5, "bad input: a file given cannot be read or parsed (missing, unreadable, " \
                 "not JSON, cut short, of another schema, an expectation file with "       \
                 "errors, a build that cannot be run): each is named, with its line and "  \
                 "column where known, and the other files are still judged")               \
    XX(TOOL, 6, "tool error: cuproof could not do its job for a reason that is not the "   \
                "input's (an output it cannot write, out of memory, the driver or CUPTI "  \
                "failing cuproof itself)")                                                 \
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

/* The worse of two statuses by the rule above: 2 beats 6 beats 5 beats 3
 * beats 4 beats 1 beats 0; 77 only when both are 77. */
CP_API int cp_exit_worse(int a, int b);

/* The status of verdicts on input that can be trusted (DESIGN.md,
 * "Verdicts"): 1 when one failed, else 3 when one could not be decided
 * (an essential check not made, collectives not matched, hosts not
 * aligned), else 0. A failure measured on a trusted trace stands beside
 * an undecided verdict; an untrusted trace is 3 by the trust rule, before
 * any verdict (cp_exit_worse). exec, check, run, replay and ab decide so. */
CP_API int cp_exit_of_verdicts(size_t failed, size_t undecided);

/* The status of a reader's failure on a file the user gave: out of
 * memory is cuproof's own (CP_EXIT_TOOL); anything else (CP_EIO: missing
 * or unreadable, CP_EPARSE: not what it should be) is the input's
 * (CP_EXIT_INPUT). One place, so that no command decides it alone. */
CP_API int cp_exit_of_read(int code);

#ifdef __cplusplus
}
#endif

#endif
