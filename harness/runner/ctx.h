/* The context a case's callbacks receive: private to the runner layer,
 * cases read it through the accessors in case.h. */
#ifndef CUPROOF_RUNNER_CTX_H
#define CUPROOF_RUNNER_CTX_H

#include <cuproof/case.h>
#include <cuproof/internal/runner.h>

/* What setup said about one variant. */
typedef struct cp_variant_setting {
    /* The fraction of compared elements that may differ from the CPU
     * reference, and why; 0 unless cp_allow_mismatches. */
    double allowed_fraction;
    char allowed_reason[160];
    bool expect_leak; /* leaks device memory on purpose (a negative control) */
    char skip[160];   /* why it does not run in this profile; "" when it runs */
    /* Why its timed runs are judged on wall time (cp_time_wall; "": on
     * the GPU's time) and whether its body is held behind a gate
     * (cp_time_gated). */
    char figure_why[160];
    bool gated;
} cp_variant_setting;

struct cp_ctx {
    const cp_case_def *def;
    cp_profile profile;
    const cp_env *env;
    void *state; /* the case's own, from cp_state_new; the runner frees it */
    cp_case_result *result;
    int open_phases; /* cp_phase_begin minus cp_phase_end; the runner closes leftovers */
    int nvariants;
    cp_variant_setting *settings; /* one per variant, by index */
    const cp_run_opts *opts;      /* the run's options: parameter overrides */
    bool *param_read;             /* per override: whether the case read it */
    char param_names[256];        /* the parameters the case asked for */
    /* The non-blocking streams its bodies leave work on (cp_time_streams). */
    void *streams[CP_TIME_MAX_STREAMS];
    size_t nstreams;
};

/* The number of variants a case declares. */
int cp_case_variant_count(const cp_case_def *def);

#endif
