// Pad on CUDA (pad.cu): the index arithmetic each thread runs, and its launcher, a plain C++
// declaration that pad_kernel.cc calls. The launcher enqueues one thread per output element on
// `stream` and returns the launch's error; it never synchronizes. Pointers are device memory.
#ifndef INFERD_KERNELS_CUDA_PAD_H_
#define INFERD_KERNELS_CUDA_PAD_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace inferd::kernels::cuda {

inline constexpr int kMaxPadRank = 8;

// The modes of kernels/cpu/pad_args.h's PadMode, in the same order.
enum class PadFill { kConstant, kEdge, kReflect, kWrap };

// Output coordinate o along a dim reads input coordinate o - begin (begin < 0: cropped), mapped
// into [0, in_dim) by the mode when it falls outside. Built by MakePadIndex (copy_index.h), which
// merges neighbouring dims that are not padded, so the rank is small.
struct PadIndex {
  int rank = 0;
  int64_t count = 0;  // output elements
  PadFill fill = PadFill::kConstant;
  int64_t out_dims[kMaxPadRank] = {};
  int64_t in_dims[kMaxPadRank] = {};
  int64_t in_strides[kMaxPadRank] = {};  // elements, row-major
  int64_t begin[kMaxPadRank] = {};
};

// Position i (relative to the input's start) of a dim of n > 0 elements, outside [0, n), mapped
// into it as kernels/cpu/pad.cc's MapIndex does: edge repeats the border, reflect mirrors without
// repeating it (again and again for pads wider than n), wrap is circular.
__host__ __device__ inline int64_t PadMapIndex(int64_t i, int64_t n, PadFill fill) {
  if (fill == PadFill::kWrap) return (i % n + n) % n;
  if (fill == PadFill::kEdge || n == 1) return i < 0 ? 0 : n - 1;
  const int64_t period = 2 * (n - 1);  // reflect: ... 2 1 | 0 1 2 .. n-1 | n-2 ...
  int64_t m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - m;
}

// The input element (offset in elements) that output element i reads, or -1 for the constant
// value: what each thread of LaunchPad computes, here so that a host test checks the same
// arithmetic against the CPU kernel (__host__ and __device__ are empty for the host compiler).
__host__ __device__ inline int64_t PadSource(const PadIndex& p, int64_t i) {
  int64_t rest = i, src = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    const int64_t o = rest % p.out_dims[d];
    rest /= p.out_dims[d];
    int64_t j = o - p.begin[d];
    if (j < 0 || j >= p.in_dims[d]) {
      if (p.fill == PadFill::kConstant) return -1;
      j = PadMapIndex(j, p.in_dims[d], p.fill);
    }
    src += j * p.in_strides[d];
  }
  return src;
}

// y[i] = x[PadSource(index, i)], or the constant whose bytes are the first elem_bytes bytes of
// `value` (elements of 1, 2, 4 or 8 bytes).
cudaError_t LaunchPad(int elem_bytes, const void* x, void* y, const PadIndex& index,
                      const unsigned char (&value)[8], cudaStream_t stream);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_PAD_H_
