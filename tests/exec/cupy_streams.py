#!/usr/bin/env python3
"""cupy_streams: the seed's CUDA-streams program (seed 000 §3.3.1,
multi-kernel.py and multi-kernel_streams.py, also in seeds 001 and 002),
written for CuPy instead of PyCUDA, for `cuproof exec` to trace.

200 arrays of 1M float32 from numpy (ordinary, pageable host memory), each
put through the seed's mult_ker (every element multiplied by 2.0 and divided
by 2.0, 50 times: the identity, exactly), launched as the seed does with one
block of 64 threads.

  default   the streams version: a stream per array; every copy in
            (asynchronous, on the array's stream), then every kernel, then
            every copy out (asynchronous), then all streams synchronised;
  --serial  the serial version: one stream (the default one), blocking
            copies, as the seed's first program.

The timed part is inside an NVTX range, "streams" or "serial"
(cupy.cuda.nvtx); the wall-clock time is printed. Unlike the seed's streams
program, which stopped its clock before the asynchronous copies out had
finished, this one synchronises before reading the clock. Every output must
equal its input exactly (the seed checked np.allclose); exits 0 when all
do, 1 otherwise.

Expectations: cupy_streams.expect. Needs CuPy: the ctest test is
registered only where `python3 -c "import cupy"` works at configure time.
"""
import argparse
import ctypes
import sys
import time

try:
    import cupy
    import numpy as np
except ImportError as e:  # not registered as a test without it
    sys.exit(f"cupy_streams: needs CuPy and NumPy ({e})")

NUM_ARRAYS = 200
ARRAY_LEN = 1024**2

# The seed's kernel, as the seed wrote it, with extern "C" added: RawKernel
# looks the kernel up by its unmangled name.
MULT_KER = r'''
extern "C"
__global__ void mult_ker(float * array, int array_len)
{
     int thd = blockIdx.x*blockDim.x + threadIdx.x;
     int num_iters = array_len / blockDim.x;

     for(int j=0; j < num_iters; j++)
     {
         int i = j * blockDim.x + thd;

         for(int k = 0; k < 50; k++)
         {
              array[i] *= 2.0;
              array[i] /= 2.0;
         }
     }
}
'''


def host_ptr(a):
    """The address of a numpy array's memory, as CuPy's copies take it."""
    return ctypes.c_void_p(a.ctypes.data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serial", action="store_true",
                        help="one stream and blocking copies (the seed's first program)")
    args = parser.parse_args()

    mult_ker = cupy.RawKernel(MULT_KER, "mult_ker")
    rng = np.random.default_rng(2024)
    data = [rng.standard_normal(ARRAY_LEN).astype(np.float32) for _ in range(NUM_ARRAYS)]
    out = [np.empty_like(a) for a in data]  # pageable, as numpy's memory is
    nbytes = data[0].nbytes
    data_gpu = [cupy.empty(ARRAY_LEN, dtype=cupy.float32) for _ in range(NUM_ARRAYS)]
    length = np.int32(ARRAY_LEN)
    # Compile and load the kernel outside the timed part (the seed's
    # SourceModule compiled it before its clock started too).
    mult_ker((1,), (64,), (data_gpu[0], length))
    cupy.cuda.Device().synchronize()

    if args.serial:
        name = "serial"
        cupy.cuda.nvtx.RangePush(name)
        t_start = time.time()
        for k in range(NUM_ARRAYS):  # blocking copies in, as gpuarray.to_gpu
            data_gpu[k].data.copy_from_host(host_ptr(data[k]), nbytes)
        for k in range(NUM_ARRAYS):
            mult_ker((1,), (64,), (data_gpu[k], length))
        for k in range(NUM_ARRAYS):  # blocking copies out, as .get()
            data_gpu[k].data.copy_to_host(host_ptr(out[k]), nbytes)
        cupy.cuda.Device().synchronize()
        t_end = time.time()
        cupy.cuda.nvtx.RangePop()
    else:
        name = "streams"
        streams = [cupy.cuda.Stream() for _ in range(NUM_ARRAYS)]
        cupy.cuda.nvtx.RangePush(name)
        t_start = time.time()
        for k in range(NUM_ARRAYS):  # as gpuarray.to_gpu_async(stream=streams[k])
            data_gpu[k].data.copy_from_host_async(host_ptr(data[k]), nbytes, streams[k])
        for k in range(NUM_ARRAYS):
            with streams[k]:
                mult_ker((1,), (64,), (data_gpu[k], length))
        for k in range(NUM_ARRAYS):  # as .get_async(stream=streams[k])
            data_gpu[k].data.copy_to_host_async(host_ptr(out[k]), nbytes, streams[k])
        for s in streams:
            s.synchronize()
        t_end = time.time()
        cupy.cuda.nvtx.RangePop()

    wrong = [k for k in range(NUM_ARRAYS) if not np.array_equal(out[k], data[k])]
    print(f"cupy_streams: {name}: {NUM_ARRAYS} arrays of {ARRAY_LEN} floats, "
          f"total time {t_end - t_start:.6f} s")
    if wrong:
        print(f"cupy_streams: {name}: {len(wrong)} arrays came back wrong (first: {wrong[0]})",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
