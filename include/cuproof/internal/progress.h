/*
 * What the runner says while a case runs: one call per run of a variant,
 * so that a caller can show how far a long variant has come. Its own
 * header, because the runner makes these and the session's progress sink
 * shows them, and the reports layer may not include the runner's headers.
 *
 * Internal (include/cuproof/internal/): for cuproof's command line and
 * tests. Installed so that cuproof::main builds, but not part of the
 * stable API: it may change in any release.
 */
#ifndef CUPROOF_PROGRESS_H
#define CUPROOF_PROGRESS_H

#include "../result.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One run of a variant, about to start. `phase` is "warm-up", "timed" or
 * "traced", and `run` counts the runs of that phase from 1 to at most
 * `max_runs`: the warm-up count, the fixed count (repeat) or the stopping
 * rule's maximum for timed runs (the rule may stop sooner), 1 for the
 * traced run. After a variant's last run has ended well there is one more
 * call, phase "done", with `run` the number of timed runs made and
 * `result` the variant's result (NULL in every other phase): its
 * stopped_by says what ended them. `variant_index` counts from 0 among the
 * case's `nvariants`; a variant that does not run makes no call.
 * `elapsed_s` is the time since the variant's first run began. The
 * strings and `result` belong to the runner and last only for the call.
 */
typedef struct cp_run_progress {
    const char *case_name;
    const char *variant;
    int variant_index, nvariants;
    const char *phase;
    int run, max_runs;
    double elapsed_s;
    const cp_variant_result *result;
} cp_run_progress;

#ifdef __cplusplus
}
#endif

#endif
