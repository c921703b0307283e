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

#endif
