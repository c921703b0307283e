/*
 * scale_unroll (seed 004): every element of data multiplied by scale, each
 * thread taking UNROLL elements a grid apart. UNROLL is given at compile
 * time (-DUNROLL=n), as the source formats it into the text; the grid is
 * ceil(n / (blockDim.x * UNROLL)) blocks.
 */
#ifndef UNROLL
#error "compile with -DUNROLL=<factor>"
#endif

extern "C" __global__ void scale_unroll(float *data, float scale, int n)
{
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
#pragma unroll
    for (int i = 0; i < UNROLL; ++i) {
        int offset = idx + i * gridDim.x * blockDim.x;
        if (offset < n)
            data[offset] *= scale;
    }
}
