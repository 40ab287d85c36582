#include "kernels/cpu/pool_indices.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;

// The geometry padded to 3 spatial dims (leading dims of size 1).
struct Window3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1},
          dilation[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  // Position step in the flat index per spatial dim (storage_order).
  int64_t step[3] = {0, 0, 0};
};

Window3 Pad3(const engine::Shape& x, const WindowGeometry& w, int64_t storage_order) {
  Window3 g;
  const size_t sp = x.rank() - 2;
  for (size_t i = 0; i < sp; ++i) {
    const size_t j = 3 - sp + i;
    g.in[j] = x[2 + i];
    g.out[j] = w.out[i];
    g.kernel[j] = w.kernel[i];
    g.stride[j] = w.strides[i];
    g.dilation[j] = w.dilations[i];
    g.pad[j] = w.pad_begin[i];
  }
  // Row-major: the last dim varies fastest; column-major: the first spatial dim does.
  int64_t s = 1;
  if (storage_order == 0) {
    for (int j = 2; j >= 0; --j) g.step[j] = s, s *= g.in[j];
  } else {
    for (int j = 3 - static_cast<int>(sp); j < 3; ++j) g.step[j] = s, s *= g.in[j];
    for (int j = 0; j < 3 - static_cast<int>(sp); ++j) g.step[j] = 0;
  }
  return g;
}

template <typename T>
void Pool(const T* x, const Window3& g, int64_t plane_begin, int64_t plane_end, T* y,
          int64_t* indices) {
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  for (int64_t p = plane_begin; p < plane_end; ++p) {
    const T* xp = x + p * in_plane;
    int64_t o = p * out_plane;
    for (int64_t od = 0; od < g.out[0]; ++od) {
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        for (int64_t ow = 0; ow < g.out[2]; ++ow, ++o) {
          bool found = false;
          T best{};
          int64_t best_at = 0;
          for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
            const int64_t d = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
            if (d < 0 || d >= g.in[0]) continue;
            for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
              const int64_t h = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
              if (h < 0 || h >= g.in[1]) continue;
              for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                const int64_t w = ow * g.stride[2] - g.pad[2] + kw * g.dilation[2];
                if (w < 0 || w >= g.in[2]) continue;
                const T v = xp[(d * g.in[1] + h) * g.in[2] + w];
                if (!found || v > best) {
                  found = true;
                  best = v;
                  best_at = d * g.step[0] + h * g.step[1] + w * g.step[2];
                }
              }
            }
          }
          y[o] = best;  // a window always covers an input element (ComputeWindow checks)
          if (indices != nullptr) indices[o] = p * in_plane + best_at;
        }
      }
    }
  }
}

template <typename T>
void PoolAll(const engine::Tensor& x, const Window3& g, engine::ThreadPool& pool, engine::Tensor& y,
             engine::Tensor* indices) {
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t work = y.NumElements() / std::max<int64_t>(planes, 1);
  const T* xd = x.data<T>();
  T* yd = y.mutable_data<T>();
  int64_t* id = indices != nullptr ? indices->mutable_data<int64_t>() : nullptr;
  pool.ParallelFor(planes, std::max<int64_t>(1, 4096 / std::max<int64_t>(work, 1)),
                   [&](int64_t begin, int64_t end) { Pool<T>(xd, g, begin, end, yd, id); });
}

}  // namespace

absl::Status MaxPoolWithIndices(const engine::Tensor& x, const WindowGeometry& window,
                                int64_t storage_order, engine::ThreadPool& pool, engine::Tensor& y,
                                engine::Tensor* indices, const NodeLabel& node) {
  const Window3 g = Pad3(x.shape(), window, storage_order);
  const bool found = Visit(MaxPoolTypes{}, x.dtype(), [&](auto tag) {
    PoolAll<typename decltype(tag)::type>(x, g, pool, y, indices);
  });
  if (found) return absl::OkStatus();
  return node.Unimplemented(absl::StrCat("MaxPool with Indices on ",
                                         engine::DataTypeName(x.dtype()), " is not supported"));
}

}  // namespace inferd::kernels::cpu
