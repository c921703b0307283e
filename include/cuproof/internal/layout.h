/*
 * The address-space layout of the processes that time cases.
 * Internal: `cuproof run` and `test` call it before anything else.
 *
 * With address-space randomisation each process places its heap, stack
 * and mappings at new addresses, and a host-bound variant's time moves
 * with them: on the H100, invocations of the same cases spread by 12% to
 * 18% (broadcast, custom-elementwise, rtc-unroll: pageable copies and
 * small launches) and by 3% to 5% with randomisation off, and compare
 * called 33% of the variants noisy against 40% over 132 pairs of runs
 * each, interleaved (samples/h100-layout). LLVM's benchmarking guide
 * gives the same advice (`setarch $(uname -m) -R`). A fixed layout is one layout: a
 * build whose layout happens to be slow stays slow, which is why the
 * report records it and compare says when two sides differ in it.
 */
#ifndef CUPROOF_INTERNAL_LAYOUT_H
#define CUPROOF_INTERNAL_LAYOUT_H

#include "../export.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variable that keeps randomisation: CUPROOF_ASLR=1. */
#define CP_ASLR_ENV "CUPROOF_ASLR"

/* This process's layout as cp_env.address_layout names it: "fixed"
 * (randomisation off), "random", or "" when the kernel does not say. */
CP_API const char *cp_layout_now(void);

/*
 * Makes this process's layout fixed: when randomisation is on, it is
 * not asked to stay on (CP_ASLR_ENV unset or not "1") and the kernel
 * lets it be turned off (personality(2) ADDR_NO_RANDOMIZE, which the
 * passes and ab's children inherit), the executable is started again
 * with the same `argv` (/proc/self/exe) and this call does not return.
 * Otherwise it returns and the process runs as it is: its report then
 * says "random".
 */
CP_API void cp_layout_fix(char **argv);

#ifdef __cplusplus
}
#endif

#endif
