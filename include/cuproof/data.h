/*
 * Data helpers for CPU references: deterministic inputs, so that the CPU
 * and the GPU see the same data on every machine, and a comparison that
 * counts differing bit patterns.
 */
#ifndef CUPROOF_DATA_H
#define CUPROOF_DATA_H

#include "export.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Counts elements whose bit patterns differ (NaN payloads included), so a
 * poisoned element never compares equal by accident. */
CP_API uint64_t cp_count_bit_mismatches(const float *got, const float *want, size_t n);

/* Deterministic inputs: a xorshift generator, so CPU and GPU see the same
 * data on every machine. */
CP_API uint32_t cp_rand_next(uint32_t *state);
/* Uniform float in [lo, hi). */
CP_API float cp_rand_float(uint32_t *state, float lo, float hi);

#ifdef __cplusplus
}
#endif

#endif
