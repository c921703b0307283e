/* The CPU references of the cases (declared in references.h). */
#include "references.h"

#include "../harness/case.h"

void cp_ref_vector_add(const float *a, const float *b, float *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        c[i] = a[i] + b[i];
}

float cp_ref_mult(float x)
{
    /* The kernel's arithmetic: `array[i] *= 2.0` promotes to double and
     * stores back as float; `/= 2.0` likewise. volatile keeps the compiler
     * from folding the round trip away. */
    volatile float v = x;
    for (int k = 0; k < 50; k++) {
        v = (float)((double)v * 2.0);
        v = (float)((double)v / 2.0);
    }
    return v;
}

uint64_t cp_ref_mult_inputs(float *in, size_t n, uint32_t seed, size_t check)
{
    uint64_t changed = 0;
    for (size_t i = 0; i < n; i++)
        in[i] = cp_rand_float(&seed, -4.0f, 4.0f);
    for (size_t i = 0; i < check && i < n; i++)
        changed += cp_ref_mult(in[i]) != in[i];
    return changed;
}

void cp_ref_conway_step(int *out, const int *in, int n)
{
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++) {
            int live = 0;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    if (dx || dy)
                        live += in[(x + dx + n) % n + ((y + dy + n) % n) * n];
            int cell = in[x + y * n];
            out[x + y * n] = cell ? (live == 2 || live == 3) : live == 3;
        }
}
