/* The Game of Life kernels of conway.h: conway_ker, one generation per
 * launch, and conway_sync_ker and conway_shared_ker, which iterate one
 * 32 x 32 block's board inside one launch, on global or shared memory. */
#include "conway.h"

/*
 * The source's kernel. The board's size is the grid's (blockDim * gridDim)
 * and its edges wrap around, so the launch shape defines the board.
 */
#define _X (threadIdx.x + blockIdx.x * blockDim.x)
#define _Y (threadIdx.y + blockIdx.y * blockDim.y)
#define _WIDTH (blockDim.x * gridDim.x)
#define _HEIGHT (blockDim.y * gridDim.y)
#define _XM(x) (((x) + _WIDTH) % _WIDTH)
#define _YM(y) (((y) + _HEIGHT) % _HEIGHT)
#define _INDEX(x, y) (_XM(x) + _YM(y) * _WIDTH)

__device__ static int nbrs(int x, int y, const int *in)
{
    return in[_INDEX(x - 1, y + 1)] + in[_INDEX(x - 1, y)] + in[_INDEX(x - 1, y - 1)] +
           in[_INDEX(x, y + 1)] + in[_INDEX(x, y - 1)] + in[_INDEX(x + 1, y + 1)] +
           in[_INDEX(x + 1, y)] + in[_INDEX(x + 1, y - 1)];
}

/* The rules, as the source's switch statements state them: a live cell
 * (1) survives with 2 or 3 live neighbours, a dead one (0) is born with
 * exactly 3; the source's in-kernel loops leave any other value 0. */
__device__ __forceinline__ static int rule(int cell, int n)
{
    return cell == 1 ? (n == 2 || n == 3) : (cell == 0 && n == 3);
}

extern "C" __global__ void conway_ker(int *lattice_out, const int *lattice)
{
    int x = _X, y = _Y;
    int cell = lattice[_INDEX(x, y)];
    /* The source writes nothing for a cell that is neither 0 nor 1. */
    if (cell == 0 || cell == 1)
        lattice_out[_INDEX(x, y)] = rule(cell, nbrs(x, y, lattice));
}

extern "C" cudaError_t cp_conway_launch(int *out, const int *in, int n, cudaStream_t stream)
{
    if (n <= 0 || n % 32 != 0)
        return cudaErrorInvalidValue;
    dim3 grid(n / 32, n / 32, 1), block(32, 32, 1);
    conway_ker<<<grid, block, 0, stream>>>(out, in);
    return cudaGetLastError();
}

/*
 * The source's in-kernel iteration (§3.2.2): one block of 32 x 32 threads,
 * one cell each, `iters` generations in place on global memory; the two
 * barriers keep every read of a generation before any write of the next.
 */
extern "C" __global__ void conway_sync_ker(int *lattice, int iters)
{
    int x = _X, y = _Y;
    for (int i = 0; i < iters; i++) {
        int cell_value = rule(lattice[_INDEX(x, y)], nbrs(x, y, lattice));
        __syncthreads();
        lattice[_INDEX(x, y)] = cell_value;
        __syncthreads();
    }
}

/* The same with the board in shared memory (§3.2.3): loaded once, iterated
 * there, written back at the end. */
extern "C" __global__ void conway_shared_ker(int *p_lattice, int iters)
{
    int x = _X, y = _Y;
    __shared__ int lattice[32 * 32];
    lattice[_INDEX(x, y)] = p_lattice[_INDEX(x, y)];
    __syncthreads();
    for (int i = 0; i < iters; i++) {
        int cell_value = rule(lattice[_INDEX(x, y)], nbrs(x, y, lattice));
        __syncthreads();
        lattice[_INDEX(x, y)] = cell_value;
        __syncthreads();
    }
    p_lattice[_INDEX(x, y)] = lattice[_INDEX(x, y)];
}

extern "C" cudaError_t cp_conway_block_launch(int *board, int iters, int shared,
                                              cudaStream_t stream)
{
    if (iters < 0)
        return cudaErrorInvalidValue;
    dim3 grid(1, 1, 1), block(32, 32, 1);
    if (shared)
        conway_shared_ker<<<grid, block, 0, stream>>>(board, iters);
    else
        conway_sync_ker<<<grid, block, 0, stream>>>(board, iters);
    return cudaGetLastError();
}
