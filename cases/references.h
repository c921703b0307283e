/*
 * The CPU references of the cases, declared here so that tests/ can check
 * each one against known answers on a machine with no GPU: a wrong
 * reference must not be able to make a wrong kernel pass.
 */
#ifndef CUPROOF_CASES_REFERENCES_H
#define CUPROOF_CASES_REFERENCES_H

#include "../kernels/mandelbrot.h"

#include <stddef.h>
#include <stdint.h>

/* vector-add: c[i] = a[i] + b[i] in float arithmetic. */
void cp_ref_vector_add(const float *a, const float *b, float *c, size_t n);

/* multi-kernel: what mult_ker does to one element: 50 times, x * 2.0 then
 * / 2.0, each in double and stored back as float. */
float cp_ref_mult(float x);

/* The mult_ker cases' inputs: fills `in` with n floats drawn uniformly
 * from [-4, 4) by cp_rand_float from `seed`, any of which the kernel's
 * doubling leaves unchanged, and returns how many of the first `check` the
 * reference changes (0 when it agrees that they survive). */
uint64_t cp_ref_mult_inputs(float *in, size_t n, uint32_t seed, size_t check);

/* Game of Life: one generation of an n x n toroidal board of 0/1 cells:
 * a live cell survives with 2 or 3 live neighbours, a dead one is born
 * with exactly 3. `out` and `in` must not alias. */
void cp_ref_conway_step(int *out, const int *in, int n);

/* Game of Life: advances an n x n toroidal board by `generations`,
 * exactly, in time bounded by the board's cycle: the boards are recorded
 * until one repeats (a torus has finitely many states and small ones fall
 * into a cycle within thousands of generations), then whole cycles are
 * skipped. Boards that do not repeat within 2^18 generations are stepped
 * one by one. Returns 0, or CP_ENOMEM. */
int cp_ref_conway_run(int *board, int n, uint64_t generations);

/* grid-model: what grid_model_ker writes (kernels/grid_model.h) for an
 * n[0] x n[1] x n[2] array covered by blocks of block[0..2] threads. */
void cp_ref_grid_model(int *out, const int n[3], const int block[3]);

/* Mandelbrot: the iteration at which c = (cr, ci) escapes |z| > bound, or
 * max_iters, with the kernel's float operations in the kernel's order,
 * each rounded on its own. */
int cp_ref_mandel_point(float cr, float ci, int max_iters, float bound);

/* Mandelbrot over the pixels of `p`, as mandelbrot_ker lays them out. */
void cp_ref_mandelbrot(float *out, const cp_mandel_params *p);

/* ---- seed 004: run-time kernels and array operations ---- */

/* rtc-unroll: data[i] *= scale. */
void cp_ref_scale(float *data, size_t n, float scale);

/* custom-elementwise: the source's leaky ReLU, y = x > 0 ? x : slope * x. */
float cp_ref_leaky_relu(float x, float slope);

/* custom-elementwise: the source's piecewise scale: x * 0.5 below 0,
 * x * 2 below 1, else x * 0.1. */
float cp_ref_piecewise_scale(float x);

/* broadcast: out[r][c] = m[r][c] + v[c] for a rows x cols matrix. */
void cp_ref_broadcast_add(const float *m, const float *v, float *out, size_t rows, size_t cols);

/* broadcast: out[i][j][k] = t[i][j][k] * v[k] for a d0 x d1 x d2 tensor. */
void cp_ref_broadcast_mul3(const float *t, const float *v, float *out, size_t d0, size_t d1,
                           size_t d2);

/* indexing: out[i] = src[idx[i]] for n indices (each in range). */
void cp_ref_gather(const float *src, const int *idx, size_t n, float *out);

/* indexing: the elements of src greater than `threshold`, in order, into
 * out; returns how many (0 for an empty mask, n when all are selected). */
size_t cp_ref_compact(const float *src, size_t n, float threshold, float *out);

/* indexing: rows [r0, r1) and columns [c0, c1) of a matrix with `cols`
 * columns, row by row into out. */
void cp_ref_slice2d(const float *m, size_t cols, size_t r0, size_t r1, size_t c0, size_t c1,
                    float *out);

/* indexing: each column's mean, summed in float in row order, then divided
 * by rows (the order a one-thread-per-column kernel uses). */
void cp_ref_column_means(const float *m, size_t rows, size_t cols, float *means);

/* indexing: out[r][c] = m[r][c] - means[c]. */
void cp_ref_centre(const float *m, const float *means, float *out, size_t rows, size_t cols);

/* indexing: masked assignment, every negative element set to 0. */
void cp_ref_clamp_negative(float *m, size_t n);

#endif
