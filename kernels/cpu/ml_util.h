// What the ai.onnx.ml kernels (ml_ops.cc, tree_ensemble.cc) share: the domain, the element types
// of their X inputs, X read as rows of features, and X's values as float64.
#ifndef INFERD_KERNELS_CPU_ML_UTIL_H_
#define INFERD_KERNELS_CPU_ML_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/shape.h"
#include "engine/tensor.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {

inline constexpr char kMlDomain[] = "ai.onnx.ml";
using MlTypes = TypeList<float, double, int32_t, int64_t>;

// X's rows: [F] is one row of F features, [N, F] N rows; other ranks are INVALID_ARGUMENT.
absl::Status MlRowsOf(const engine::Shape& s, const NodeLabel& node, int64_t* rows, int64_t* cols);

// The values of `x` (an element type of MlTypes) as float64.
absl::StatusOr<std::vector<double>> MlAsDoubles(const engine::Tensor& x, const NodeLabel& node);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_ML_UTIL_H_
