// KernelRegistry: kernels keyed by (domain, op, device kind), then opset range and element type.
// Registration is explicit (RegisterCpuKernels(registry)), never by static initializers.
// A registry is filled once at start-up and then only read: lookups are thread-safe then.
//
// A CUDA kernel registers beside its CPU sibling with the same op, opsets and types and
// `device_type = DeviceKind::kCuda`; Find picks by the device kind the node is assigned to.
//
// Example:
//   KernelRegistry registry;
//   RegisterCpuKernels(registry);
//   const KernelDef* def = registry.Find("", "Conv", 13, "cpu", input_types, output_types);
//   if (def == nullptr) return registry.Explain("", "Conv", 13, "cpu", input_types,
//                                               output_types, node_name);
//   std::cout << FormatKernelTable(registry);  // what `inferctl ops` prints
#ifndef INFERD_ENGINE_KERNEL_REGISTRY_H_
#define INFERD_ENGINE_KERNEL_REGISTRY_H_

#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/data_type.h"
#include "engine/domain.h"
#include "engine/kernel.h"

namespace inferd::engine {

// The kind of device a kernel runs on: a device name's part before ':' ("cuda" for "cuda:1").
// A checked value: from a name, anything but "cpu" and "cuda" is kInvalid, which Register refuses
// and Find never matches. It converts implicitly from a name, so callers may pass "cpu" or a
// std::string such as partition::DeviceType(device). A trivially copyable value type.
class DeviceKind {
 public:
  enum Value : uint8_t { kCpu, kCuda, kInvalid };

  constexpr DeviceKind(Value value = kCpu) : value_(value) {}  // NOLINT: implicit on purpose
  DeviceKind(absl::string_view name);                          // NOLINT
  DeviceKind(const char* name) : DeviceKind(absl::string_view(name)) {}         // NOLINT
  DeviceKind(const std::string& name) : DeviceKind(absl::string_view(name)) {}  // NOLINT

  Value value() const { return value_; }
  bool valid() const { return value_ != kInvalid; }
  // "cpu", "cuda", or "invalid".
  absl::string_view name() const;

  friend bool operator==(DeviceKind a, DeviceKind b) { return a.value_ == b.value_; }
  friend bool operator!=(DeviceKind a, DeviceKind b) { return a.value_ != b.value_; }
  friend bool operator<(DeviceKind a, DeviceKind b) { return a.value_ < b.value_; }

 private:
  Value value_;
};

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
  DeviceKind device_type = DeviceKind::kCpu;
  // Element types accepted on input `type_input` (output 0 when it is -1); empty: any type.
  std::vector<DataType> types;
  int type_input = 0;
  KernelFactory create;
  WorkspaceEstimateFn estimate_workspace;  // optional
  // Inputs a kernel of a non-host device reads on the host (a Reshape's shape, a Slice's starts,
  // a Resize's scales: what it needs before it can launch). The engine binds them in host memory
  // (weights as they are, values made on a device copied to the host first). Ignored for "cpu".
  std::vector<int> host_inputs;
  // Inputs that may be float16 / bfloat16 2-D weights while the kernel computes in the def's
  // float type (MatMul's and Gemm's B): the precision widening pass leaves such weights in half
  // precision instead of converting them to float32 (docs/half-precision.md "Half weights").
  std::vector<int> half_weight_inputs;
};

class KernelRegistry {
 public:
  // Refuses a definition that overlaps an existing one (same domain, op and device kind,
  // intersecting opsets and types), and one with an invalid device kind.
  absl::Status Register(KernelDef def);

  // The kernel for a node with these input / output element types (kUndefined for absent ones),
  // or nullptr. Each def is keyed on the type of its `type_input` (output 0 when -1).
  const KernelDef* Find(absl::string_view domain, absl::string_view op_type, int opset,
                        DeviceKind device_type, absl::Span<const DataType> input_types,
                        absl::Span<const DataType> output_types) const;
  // Why Find returned nullptr, as a message a user can act on (op unknown, no kernel for the
  // device, opset out of range, element type unsupported), for the node named `node_name`.
  absl::Status Explain(absl::string_view domain, absl::string_view op_type, int opset,
                       DeviceKind device_type, absl::Span<const DataType> input_types,
                       absl::Span<const DataType> output_types, absl::string_view node_name) const;
  // Whether any device has a kernel for the op.
  bool HasOp(absl::string_view domain, absl::string_view op_type) const;
  // Every (domain, op_type) registered on any device, sorted, each once, for reports.
  std::vector<std::pair<std::string, std::string>> Ops() const;
  // Every definition, in a stable order: by domain, op, device kind, then opset range and types.
  // Pointers valid while the registry lives and is not registered into.
  std::vector<const KernelDef*> Defs() const;
  size_t size() const;

 private:
  struct Key {
    std::string domain, op;
    DeviceKind device;
    bool operator<(const Key& o) const {
      if (domain != o.domain) return domain < o.domain;
      if (op != o.op) return op < o.op;
      return device < o.device;
    }
  };
  std::map<Key, std::vector<KernelDef>> defs_;
};

// The registry as a text table, one definition per line in Defs() order, under a header line:
//   DOMAIN   OP       OPSETS  DEVICE  TYPES
//   ai.onnx  Add      1-17    cpu     float32, float64, int8, ...
//   ai.onnx  Cast     6+      cpu     bool, float32, ... (on output 0)
// OPSETS "13+" has no upper bound; TYPES "any" accepts every element type; "(on input N)" or
// "(on output 0)" says which value's type is checked when it is not input 0.
std::string FormatKernelTable(const KernelRegistry& registry);

// The same as a JSON array, one object per definition:
//   [{"domain": "ai.onnx", "op": "Add", "since_version": 1, "end_version": 17, "device": "cpu",
//     "types": ["float32", ...], "type_input": 0}, ...]
// "end_version" is null when unbounded; "types" is [] for any type; "type_input" -1 is output 0.
std::string FormatKernelJson(const KernelRegistry& registry);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_KERNEL_REGISTRY_H_
