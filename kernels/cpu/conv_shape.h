// Input shape checks Conv and ConvTranspose share, on every device (the CPU kernels and the
// cuDNN ones run the same checks, so a node is refused alike wherever it runs). Pure functions.
#ifndef INFERD_KERNELS_CPU_CONV_SHAPE_H_
#define INFERD_KERNELS_CPU_CONV_SHAPE_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "engine/shape.h"
#include "kernels/cpu/kernel_util.h"

namespace inferd::kernels::cpu {

// Checks Conv and ConvTranspose share, in this order around their channel checks: x is
// [N, C, spatial...] of rank 3-5 and w has x's rank ...
inline absl::Status CheckConvRanks(const engine::Shape& x, const engine::Shape& w,
                                   const NodeLabel& node) {
  if (x.rank() < 3 || x.rank() > 5) {
    return node.InvalidArgument(absl::StrCat("input 0 has shape ", x.ToString(),
                                             " but a rank-3, -4 or -5 input (N,C,spatial...) is "
                                             "expected"));
  }
  if (w.rank() != x.rank()) {
    return node.InvalidArgument(absl::StrCat("input 1 has shape ", w.ToString(), " but a rank-",
                                             x.rank(), " weight is expected"));
  }
  return absl::OkStatus();
}

// ... then kernel_shape, when given, is w's spatial dims and the bias, when present, [filters].
inline absl::Status CheckKernelAndBias(const engine::Shape& w,
                                       const std::vector<int64_t>& kernel_shape,
                                       const engine::Shape* b, int64_t filters,
                                       const NodeLabel& node) {
  absl::Span<const int64_t> kernel = w.dims().subspan(2);
  if (!kernel_shape.empty() &&
      !std::equal(kernel.begin(), kernel.end(), kernel_shape.begin(), kernel_shape.end())) {
    return node.InvalidArgument(
        absl::StrCat("kernel_shape does not match the weight's shape ", w.ToString()));
  }
  if (b != nullptr && (b->rank() != 1 || (*b)[0] != filters)) {
    return node.InvalidArgument(
        absl::StrCat("bias has shape ", b->ToString(), ", expected [", filters, "]"));
  }
  return absl::OkStatus();
}

// Conv: x's channels are W[1] * group and the filters W[0] a multiple of group.
inline absl::Status CheckConvChannels(const engine::Shape& x, const engine::Shape& w, int64_t group,
                                      const NodeLabel& node) {
  if (x[1] != w[1] * group || w[0] % group != 0) {
    return node.InvalidArgument(absl::StrCat("input ", x.ToString(), " and weight ", w.ToString(),
                                             " do not match for group ", group,
                                             ": expected C = W[1] * group and W[0] % group == 0"));
  }
  return absl::OkStatus();
}

// ConvTranspose: W[0] is x's channels, a multiple of group.
inline absl::Status CheckConvTransposeChannels(const engine::Shape& x, const engine::Shape& w,
                                               int64_t group, const NodeLabel& node) {
  if (w[0] != x[1] || x[1] % group != 0) {
    return node.InvalidArgument(absl::StrCat("input ", x.ToString(), " and weight ", w.ToString(),
                                             " do not match for group ", group,
                                             ": expected W[0] = C and C % group == 0"));
  }
  return absl::OkStatus();
}

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_CONV_SHAPE_H_
