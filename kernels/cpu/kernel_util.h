// Helpers shared by the CPU kernels: errors that name the node, axis and broadcast arithmetic,
// and shorthands for kernel definitions. Internal to //kernels/cpu. Value types and pure
// functions; thread-compatible.
#ifndef INFERD_KERNELS_CPU_KERNEL_UTIL_H_
#define INFERD_KERNELS_CPU_KERNEL_UTIL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/data_type.h"
#include "engine/kernel.h"
#include "engine/kernel_registry.h"
#include "engine/shape.h"

namespace inferd::kernels::cpu {

// The newest ai.onnx opset the loader accepts (engine/onnx_schemas.h). A definition that runs to
// kMaxOpset claims every later version of its operator: operators whose semantics changed in
// opsets 18-21 (Reduce*, Split, Pad, Resize, ScatterElements/ScatterND, AveragePool, ...) end
// their older definitions at the version before the change and register the newer forms.
// Opset 22 changed no operator's semantics (it added bfloat16 to the types of Conv, pooling, the
// RNNs, the trigonometric ops and others), so the opset-21 forms run it.
inline constexpr int kMaxOpset = 22;

// Every element type with a fixed size: what pure data-movement kernels accept.
const std::vector<engine::DataType>& FixedSizeTypes();

// Errors prefixed "node 'x' (Op): ", usable at run time when the KernelInfo is gone.
class NodeLabel {
 public:
  explicit NodeLabel(const engine::KernelInfo& info);
  NodeLabel(absl::string_view node_name, absl::string_view op_type);

  const std::string& prefix() const { return prefix_; }
  absl::Status InvalidArgument(absl::string_view message) const;
  absl::Status Unimplemented(absl::string_view message) const;
  absl::Status Internal(absl::string_view message) const;

 private:
  std::string prefix_;
};

// `axis` in [-rank, rank) made non-negative, or INVALID_ARGUMENT naming the node. `what` names
// the attribute in the message.
absl::StatusOr<int> NormalizeAxis(int64_t axis, int64_t rank, const NodeLabel& node,
                                  absl::string_view what = "axis");

// Numpy multidirectional broadcasting of two shapes.
absl::StatusOr<engine::Shape> BroadcastShapes(const engine::Shape& a, const engine::Shape& b,
                                              const NodeLabel& node);

// The static shape of input `i` when KernelInfo knows it, else nullopt.
std::optional<engine::Shape> StaticInputShape(const engine::KernelInfo& info, int i);

// A required input at run time, or INVALID_ARGUMENT naming the node.
absl::StatusOr<const engine::Tensor*> RequiredInput(const engine::KernelContext& ctx, int i,
                                                    const NodeLabel& node);
// The input's element type is `type`, or INVALID_ARGUMENT naming the node.
absl::Status CheckType(const engine::Tensor& t, engine::DataType type, int input_index,
                       const NodeLabel& node);

// Factory of a kernel type whose static Create(const KernelInfo&) returns
// StatusOr<std::unique_ptr<K>>.
template <typename K>
engine::KernelFactory FactoryOf() {
  return [](const engine::KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    absl::StatusOr<std::unique_ptr<K>> k = K::Create(info);
    if (!k.ok()) return k.status();
    return std::unique_ptr<engine::OpKernel>(std::move(k).value());
  };
}

// A cpu KernelDef.
engine::KernelDef CpuDef(absl::string_view domain, absl::string_view op_type, int since_version,
                         int end_version, std::vector<engine::DataType> types,
                         engine::KernelFactory create,
                         engine::WorkspaceEstimateFn estimate = nullptr);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_KERNEL_UTIL_H_
