/* Deterministic inputs and bitwise comparison for CPU references. */
#include <cuproof/data.h>

#include <string.h>

uint64_t cp_count_bit_mismatches(const float *got, const float *want, size_t n)
{
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += memcmp(&got[i], &want[i], sizeof got[i]) != 0;
    return bad;
}

uint32_t cp_rand_next(uint32_t *state)
{
    uint32_t x = *state ? *state : 0x9e3779b9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

float cp_rand_float(uint32_t *state, float lo, float hi)
{
    /* 24 random bits give every float step in [0, 1). */
    float u = (float)(cp_rand_next(state) >> 8) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
}
