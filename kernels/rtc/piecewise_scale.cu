/* piecewise_scale (seed 004, CuPy RawKernel): x * 0.5 below 0, x * 2 below
 * 1, else x * 0.1, one thread per element. */
extern "C" __global__ void piecewise_scale(const float *x, float *y, int n)
{
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < n) {
        float val = x[idx];
        if (val < 0)
            y[idx] = val * 0.5f;
        else if (val < 1)
            y[idx] = val * 2.0f;
        else
            y[idx] = val * 0.1f;
    }
}
