/* The seeded random numbers of the statistics' simulations (the tests of
 * compare's and run's statistics, ci/bench/noisy_share.c): splitmix64, so
 * that a trial seeded alike draws alike on every machine. Each file that
 * includes it has its own state; a trial sets rng_state first. */
#ifndef CUPROOF_TEST_SEEDED_RNG_H
#define CUPROOF_TEST_SEEDED_RNG_H

#include <math.h>
#include <stdint.h>

static uint64_t rng_state;

/* Uniform on (0, 1), never 0 or 1. */
static inline double uniform01(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal (Box-Muller). */
static inline double normal(void)
{
    return sqrt(-2 * log(uniform01())) * cos(2 * M_PI * uniform01());
}

#endif
