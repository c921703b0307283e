/* Array operations of seed 004 (CuPy broadcasting and indexing), as
 * kernels: each launcher returns cudaErrorInvalidValue for empty shapes,
 * else the launch's error. */
#ifndef CUPROOF_KERNELS_ARRAYS_H
#define CUPROOF_KERNELS_ARRAYS_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[r][c] = m[r][c] + v[c] (a rows x cols matrix plus a row vector). */
cudaError_t cp_broadcast_add_launch(const float *m, const float *v, float *out, int rows,
                                    int cols, cudaStream_t stream);

/* out[i][j][k] = t[i][j][k] * v[k] over d0 x d1 x d2. */
cudaError_t cp_broadcast_mul3_launch(const float *t, const float *v, float *out, int d0, int d1,
                                     int d2, cudaStream_t stream);

/* out[i] = m[rows_idx[i] * cols + cols_idx[i]] for n index pairs. */
cudaError_t cp_gather2d_launch(const float *m, int cols, const int *rows_idx,
                               const int *cols_idx, float *out, int n, cudaStream_t stream);

/* Rows [r0, r1) and columns [c0, c1) of a matrix with `cols` columns. */
cudaError_t cp_slice2d_launch(const float *m, int cols, int r0, int r1, int c0, int c1,
                              float *out, cudaStream_t stream);

/* means[c]: column c summed in row order in float, over rows (one thread a
 * column, the CPU reference's order). */
cudaError_t cp_column_means_launch(const float *m, int rows, int cols, float *means,
                                   cudaStream_t stream);

/* out[r][c] = m[r][c] - means[c]. */
cudaError_t cp_centre_launch(const float *m, const float *means, float *out, int rows, int cols,
                             cudaStream_t stream);

/* m[i] = 0 where m[i] < 0. */
cudaError_t cp_clamp_negative_launch(float *m, int n, cudaStream_t stream);

/* data[i] *= scale: the runtime-compiled side of zero-copy-interop. */
cudaError_t cp_scale_launch(float *data, int n, float scale, cudaStream_t stream);

/*
 * Stream compaction: the elements of in greater than threshold, in order,
 * into out, and their count into *count (device memory), by CUB's
 * DeviceSelect. `temp` is scratch of *temp_bytes; call once with temp NULL
 * to learn the size.
 */
cudaError_t cp_compact_launch(void *temp, size_t *temp_bytes, const float *in, float *out,
                              int *count, int n, float threshold, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
