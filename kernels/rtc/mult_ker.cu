/*
 * mult_ker (seed 000 §3.3.1, 001, 002), as the sources wrote it: each
 * element multiplied by 2.0 and divided by 2.0, 50 times. 2.0 is a double,
 * so every step converts to double and back, part of the load the sources
 * measured. Its indexing is only right for one block (thd is global but
 * the stride is blockDim.x), which is how the sources launch it.
 *
 * This file is compiled twice: by nvcc, included from kernels/mult.cu, and
 * at run time by NVRTC from the copy embedded in the binary (host-threads
 * compiles it in every thread, as the source's SourceModule did).
 */
extern "C" __global__ void mult_ker(float *array, int array_len)
{
    int thd = blockIdx.x * blockDim.x + threadIdx.x;
    int num_iters = array_len / blockDim.x;

    for (int j = 0; j < num_iters; j++) {
        int i = j * blockDim.x + thd;

        for (int k = 0; k < 50; k++) {
            array[i] *= 2.0;
            array[i] /= 2.0;
        }
    }
}
