// The PoolWindow (pool.h) of a windowed pool: the ONNX geometry of the CPU kernels (window.h)
// for x [N, C, spatial...], with up to kMaxPoolDims spatial dims placed last (fewer leave
// leading dims of size 1). Host code; a pure function.
#ifndef INFERD_KERNELS_CUDA_POOL_WINDOW_H_
#define INFERD_KERNELS_CUDA_POOL_WINDOW_H_

#include <cstdint>

#include "absl/types/span.h"
#include "kernels/cpu/window.h"
#include "kernels/cuda/pool.h"

namespace inferd::kernels::cuda {

// `x` has 1 to kMaxPoolDims spatial dims, `g` one entry per spatial dim (the caller checks).
inline PoolWindow ToPoolWindow(const cpu::WindowGeometry& g, absl::Span<const int64_t> x) {
  PoolWindow w;
  w.planes = x[0] * x[1];
  const size_t spatial = x.size() - 2, first = kMaxPoolDims - spatial;
  for (size_t i = 0; i < spatial; ++i) {
    w.in[first + i] = x[2 + i];
    w.out[first + i] = g.out[i];
    w.kernel[first + i] = g.kernel[i];
    w.stride[first + i] = g.strides[i];
    w.dilation[first + i] = g.dilations[i];
    w.pad_begin[first + i] = g.pad_begin[i];
    w.pad_end[first + i] = g.pad_end[i];
  }
  return w;
}

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_POOL_WINDOW_H_
