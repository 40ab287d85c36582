// KernelRegistry: kernels keyed by (domain, op, opset range, device type, element type).
// Registration is explicit (RegisterCpuKernels(registry)), never by static initializers.
// A registry is filled once at start-up and then only read: lookups are thread-safe then.
//
// Example:
//   KernelRegistry registry;
//   RegisterCpuKernels(registry);
//   const KernelDef* def = registry.Find("", "Conv", 13, "cpu", input_types, output_types);
//   if (def == nullptr) return registry.Explain("", "Conv", 13, "cpu", input_types,
//                                               output_types, node_name);
#ifndef INFERD_ENGINE_KERNEL_REGISTRY_H_
#define INFERD_ENGINE_KERNEL_REGISTRY_H_

#include <climits>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/data_type.h"
#include "engine/domain.h"
#include "engine/kernel.h"

namespace inferd::engine {

using KernelFactory = std::function<absl::StatusOr<std::unique_ptr<OpKernel>>(const KernelInfo&)>;
// Workspace bytes from a node's attributes and input shapes, without a kernel instance (used by
// the partitioner's budget). May fail when shapes are unknown; callers then fall back to a
// heuristic.
using WorkspaceEstimateFn = std::function<absl::StatusOr<size_t>(const KernelInfo&)>;

struct KernelDef {
  std::string domain;  // kOnnxDomain or kInferdDomain
  std::string op_type;
  int since_version = 1;
  int end_version = INT_MAX;  // inclusive
  std::string device_type = "cpu";
  // Element types accepted on input `type_input` (output 0 when it is -1); empty: any type.
  std::vector<DataType> types;
  int type_input = 0;
  KernelFactory create;
  WorkspaceEstimateFn estimate_workspace;  // optional
};

class KernelRegistry {
 public:
  // Refuses a definition that overlaps an existing one (same key, intersecting opsets and types).
  absl::Status Register(KernelDef def);

  // The kernel for a node with these input / output element types (kUndefined for absent ones),
  // or nullptr. Each def is keyed on the type of its `type_input` (output 0 when -1).
  const KernelDef* Find(absl::string_view domain, absl::string_view op_type, int opset,
                        absl::string_view device_type, absl::Span<const DataType> input_types,
                        absl::Span<const DataType> output_types) const;
  // Why Find returned nullptr, as a message a user can act on (op unknown, opset out of range,
  // element type unsupported), for the node named `node_name`.
  absl::Status Explain(absl::string_view domain, absl::string_view op_type, int opset,
                       absl::string_view device_type, absl::Span<const DataType> input_types,
                       absl::Span<const DataType> output_types, absl::string_view node_name) const;
  bool HasOp(absl::string_view domain, absl::string_view op_type) const;
  // Every (domain, op_type) registered, for reports.
  std::vector<std::pair<std::string, std::string>> Ops() const;
  size_t size() const;

 private:
  using Key = std::pair<std::string, std::string>;  // domain, op
  std::map<Key, std::vector<KernelDef>, std::less<>> defs_;
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_KERNEL_REGISTRY_H_
