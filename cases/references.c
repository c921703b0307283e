/* The CPU references of the cases (declared in references.h). */
#include "references.h"

#include <cuproof/case.h>
#include <cuproof/error.h>
#include "../kernels/grid_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* A board packed one bit per cell, for comparing and hashing states. */
static void pack(uint64_t *bits, const int *board, size_t cells)
{
    memset(bits, 0, (cells + 63) / 64 * sizeof *bits);
    for (size_t i = 0; i < cells; i++)
        if (board[i])
            bits[i / 64] |= 1ull << (i % 64);
}

static void unpack(int *board, const uint64_t *bits, size_t cells)
{
    for (size_t i = 0; i < cells; i++)
        board[i] = (int)((bits[i / 64] >> (i % 64)) & 1);
}

static uint64_t fnv1a(const uint64_t *bits, size_t words)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < words; i++) {
        h ^= bits[i];
        h *= 1099511628211ull;
    }
    return h;
}

#define CYCLE_CAP (1u << 18)

int cp_ref_conway_run(int *board, int n, uint64_t generations)
{
    int rc = 0;
    size_t cells = (size_t)n * n, words = (cells + 63) / 64;
    size_t table_size = 2 * (size_t)CYCLE_CAP;
    int *next = malloc(cells * sizeof *next);
    uint64_t *history = malloc((size_t)CYCLE_CAP * words * sizeof *history);
    uint32_t *table = malloc(table_size * sizeof *table); /* history index + 1; 0 is empty */
    if (!next || !history || !table) {
        rc = cp_failf(CP_ENOMEM, "out of memory for the Game of Life reference");
        goto out;
    }
    memset(table, 0, table_size * sizeof *table);
    uint64_t t = 0;
    for (; t < generations && t < CYCLE_CAP; t++) {
        uint64_t *state = history + (size_t)t * words;
        pack(state, board, cells);
        size_t slot = fnv1a(state, words) % table_size;
        for (; table[slot]; slot = (slot + 1) % table_size) {
            uint64_t first = table[slot] - 1;
            if (memcmp(history + first * words, state, words * sizeof *state) == 0) {
                /* Boards first..t-1 repeat forever with period t - first. */
                uint64_t at = first + (generations - t) % (t - first);
                unpack(board, history + at * words, cells);
                goto out;
            }
        }
        table[slot] = (uint32_t)t + 1;
        cp_ref_conway_step(next, board, n);
        memcpy(board, next, cells * sizeof *next);
    }
    for (; t < generations; t++) {
        cp_ref_conway_step(next, board, n);
        memcpy(board, next, cells * sizeof *next);
    }
out:
    free(next);
    free(history);
    free(table);
    return rc;
}

void cp_ref_grid_model(int *out, const int n[3], const int block[3])
{
    for (int z = 0; z < n[2]; z++)
        for (int y = 0; y < n[1]; y++)
            for (int x = 0; x < n[0]; x++) {
                int index = x + n[0] * (y + n[1] * z);
                int *o = out + (size_t)index * CP_GRID_FIELDS;
                o[CP_GRID_BX] = x / block[0];
                o[CP_GRID_BY] = y / block[1];
                o[CP_GRID_BZ] = z / block[2];
                o[CP_GRID_TX] = x % block[0];
                o[CP_GRID_TY] = y % block[1];
                o[CP_GRID_TZ] = z % block[2];
                o[CP_GRID_INDEX] = index;
            }
}

int cp_ref_mandel_point(float cr, float ci, int max_iters, float bound)
{
    float zr = 0.0f, zi = 0.0f;
    for (int j = 0; j < max_iters; j++) {
        float nr = (zr * zr - zi * zi) + cr;
        float ni = (zr * zi + zi * zr) + ci;
        zr = nr;
        zi = ni;
        if (sqrtf(zr * zr + zi * zi) > bound)
            return j;
    }
    return max_iters;
}

void cp_ref_mandelbrot(float *out, const cp_mandel_params *p)
{
    float step_r = (p->real_high - p->real_low) / (float)(p->width - 1);
    float step_i = (p->imag_high - p->imag_low) / (float)(p->height - 1);
    for (int y = 0; y < p->height; y++)
        for (int x = 0; x < p->width; x++) {
            float cr = p->real_low + (float)x * step_r;
            float ci = p->imag_high - (float)y * step_i;
            out[x + (size_t)y * p->width] =
                (float)cp_ref_mandel_point(cr, ci, p->max_iters, p->upper_bound);
        }
}

void cp_ref_scale(float *data, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        data[i] *= scale;
}

float cp_ref_leaky_relu(float x, float slope)
{
    return x > 0 ? x : slope * x;
}

float cp_ref_piecewise_scale(float x)
{
    if (x < 0)
        return x * 0.5f;
    if (x < 1)
        return x * 2.0f;
    return x * 0.1f;
}

void cp_ref_broadcast_add(const float *m, const float *v, float *out, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            out[r * cols + c] = m[r * cols + c] + v[c];
}

void cp_ref_broadcast_mul3(const float *t, const float *v, float *out, size_t d0, size_t d1,
                           size_t d2)
{
    for (size_t i = 0; i < d0 * d1; i++)
        for (size_t k = 0; k < d2; k++)
            out[i * d2 + k] = t[i * d2 + k] * v[k];
}

void cp_ref_gather(const float *src, const int *idx, size_t n, float *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = src[idx[i]];
}

size_t cp_ref_compact(const float *src, size_t n, float threshold, float *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (src[i] > threshold)
            out[k++] = src[i];
    return k;
}

void cp_ref_slice2d(const float *m, size_t cols, size_t r0, size_t r1, size_t c0, size_t c1,
                    float *out)
{
    size_t k = 0;
    for (size_t r = r0; r < r1; r++)
        for (size_t c = c0; c < c1; c++)
            out[k++] = m[r * cols + c];
}

void cp_ref_column_means(const float *m, size_t rows, size_t cols, float *means)
{
    for (size_t c = 0; c < cols; c++) {
        float sum = 0.0f;
        for (size_t r = 0; r < rows; r++)
            sum += m[r * cols + c];
        means[c] = sum / (float)rows;
    }
}

void cp_ref_centre(const float *m, const float *means, float *out, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            out[r * cols + c] = m[r * cols + c] - means[c];
}

void cp_ref_clamp_negative(float *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i] < 0)
            m[i] = 0.0f;
}
