// The kernel interface: what a kernel sees when it is created (KernelInfo), what it sees when it
// runs (KernelContext), and what it implements (OpKernel).
//
// Memory contract (docs/arenas.md, "The output-slot contract"): a
// kernel asks for output *slot* N with MakeOutputTensor(N, type, shape); the runtime, not the
// kernel, decides the arena from the slot's planned role (declared graph output -> IOArena,
// intermediate -> ExecutionArena or its offset in the static plan). Temporaries and declared
// workspaces always come from the execution side, never from the IOArena.
//
// An OpKernel is created once per node at load and may serve several concurrent runs: Compute is
// const and must be thread-safe (a kernel that caches per-shape state guards it itself).
#ifndef INFERD_ENGINE_KERNEL_H_
#define INFERD_ENGINE_KERNEL_H_

#include <cstdint>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/data_type.h"
#include "engine/shape.h"
#include "engine/tensor.h"
#include "engine/thread_pool.h"
#include "onnx/onnx_pb.h"

namespace inferd::engine {

// Runs the subgraphs of a control-flow node (If's then_branch / else_branch): the subgraph reads
// outer-scope values by name, and its outputs become the node's outputs, made in the arenas of
// the node's output roles and handed over without a copy.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  // Runs the subgraph held by graph attribute `attribute` of the current node.
  virtual absl::Status RunSubgraph(absl::string_view attribute) = 0;
  // Loop / Scan bodies: runs the subgraph once with `inputs` bound to its declared inputs, in
  // order (borrowed: they must outlive the call), and moves its declared outputs into `outputs`
  // (resized to the subgraph's output count). An output computed inside is handed over as its
  // execution-arena buffer; one that is an input, outer value or weight returned as is comes
  // back as a copy in the execution arena, so every output owns its bytes. Inputs whose shapes
  // differ from those the subgraph declares, where its plan is static, are refused.
  virtual absl::Status RunSubgraphWith(absl::string_view attribute,
                                       absl::Span<const Tensor* const> inputs,
                                       std::vector<Tensor>& outputs) = 0;
  // Number of declared inputs / outputs of the subgraph (-1 when there is none of that name).
  virtual int SubgraphInputCount(absl::string_view attribute) const = 0;
  virtual int SubgraphOutputCount(absl::string_view attribute) const = 0;
};

// A workspace a kernel needs while it runs: `slot_id` is the kernel's own name for it.
struct WorkspaceRequirement {
  int slot_id = 0;
  size_t bytes = 0;
};

// What is known about one input or output of a node at load time.
struct KernelIoInfo {
  std::string name;  // value name ("" when an optional input/output is absent)
  bool present = false;
  DataType type = DataType::kUndefined;  // a sequence's or optional's: its element type
  ValueKind kind = ValueKind::kTensor;
  ShapeInfo shape;  // possibly partial
  // An initializer or folded Constant, else nullptr. Owned by the Model, which outlives every
  // kernel made from it: a kernel may keep the pointer (e.g. to prepack weights later).
  const Tensor* constant = nullptr;
};

class KernelInfo {
 public:
  KernelInfo(std::string node_name, std::string op_type, std::string domain, int opset,
             const std::vector<onnx::AttributeProto>* attributes, std::vector<KernelIoInfo> inputs,
             std::vector<KernelIoInfo> outputs, int intra_op_threads = 1);

  const std::string& node_name() const { return node_name_; }
  const std::string& op_type() const { return op_type_; }
  const std::string& domain() const { return domain_; }
  int opset() const { return opset_; }
  // Equal to KernelContext::threads().num_threads() in every run of the kernel.
  int intra_op_threads() const { return intra_op_threads_; }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // Out-of-range indices answer "absent".
  const KernelIoInfo& input(int i) const;
  const KernelIoInfo& output(int i) const;
  bool input_present(int i) const { return input(i).present; }

  // The node's attributes, owned by the graph (for a kernel that makes another from this info).
  const std::vector<onnx::AttributeProto>* attributes() const { return attributes_; }
  // Attributes. Getters with a default return it when the attribute is absent.
  bool HasAttribute(absl::string_view name) const { return FindAttribute(name) != nullptr; }
  const onnx::AttributeProto* FindAttribute(absl::string_view name) const;
  int64_t GetInt(absl::string_view name, int64_t default_value) const;
  float GetFloat(absl::string_view name, float default_value) const;
  std::string GetString(absl::string_view name, absl::string_view default_value) const;
  std::vector<int64_t> GetInts(absl::string_view name) const;  // empty when absent
  std::vector<float> GetFloats(absl::string_view name) const;
  std::vector<std::string> GetStrings(absl::string_view name) const;
  const onnx::TensorProto* GetTensor(absl::string_view name) const;  // nullptr when absent
  const onnx::GraphProto* GetGraph(absl::string_view name) const;
  // INVALID_ARGUMENT naming the node when a required attribute is absent.
  absl::StatusOr<int64_t> RequireInt(absl::string_view name) const;

  // "node 'x' (Conv): <message>" for errors a kernel reports at creation.
  absl::Status Error(absl::string_view message) const;

 private:
  std::string node_name_, op_type_, domain_;
  int opset_;
  const std::vector<onnx::AttributeProto>* attributes_;
  std::vector<KernelIoInfo> inputs_, outputs_;
  int intra_op_threads_;
};

class DeviceStream;  // engine/device_runtime.h

class KernelContext {
 public:
  virtual ~KernelContext() = default;

  virtual int num_inputs() const = 0;
  // nullptr when input `i` is an absent optional input.
  virtual const Tensor* input(int i) const = 0;
  virtual int num_outputs() const = 0;
  // False for an optional output the graph does not use (the kernel may skip it).
  virtual bool output_wanted(int slot) const = 0;

  // Allocates output `slot` in the arena its planned role says. The tensor stays owned by the
  // runtime; the kernel writes into it.
  virtual absl::StatusOr<Tensor*> MakeOutputTensor(int slot, DataType type, const Shape& shape) = 0;
  // Output `slot` is input `input_index` seen with `shape` (same byte size): no byte is copied
  // when the plan allows aliasing; otherwise the runtime allocates and copies.
  virtual absl::StatusOr<Tensor*> MakeOutputAlias(int slot, int input_index,
                                                  const Shape& shape) = 0;
  // Output `slot` becomes `value` (control flow: a tensor a subgraph made): an execution-arena
  // buffer is handed over when the slot's role is an intermediate; otherwise the runtime makes
  // the output in the slot's arena and copies the bytes. A sequence or optional is handed over
  // the same way, tensor by tensor (docs/sequences.md).
  // (Default: make the output and copy; a sequence or optional is refused.)
  virtual absl::Status SetOutput(int slot, Tensor value);
  // Scratch memory from the execution side; released when the returned tensor is destroyed.
  virtual absl::StatusOr<Tensor> MakeTemporaryTensor(DataType type, const Shape& shape) = 0;
  // The workspace this kernel declared with DeclareWorkspaceRequirements, for `slot_id`.
  virtual absl::StatusOr<void*> GetWorkspace(int slot_id) = 0;

  virtual ThreadPool& threads() = 0;
  // Runs subgraphs of control-flow nodes; nullptr where the runtime has none.
  virtual SubgraphRunner* subgraphs() { return nullptr; }
  // The run's stream on the device this kernel runs on (engine/device_runtime.h); nullptr on a
  // host device. A device kernel enqueues its work there and never synchronizes.
  virtual DeviceStream* device_stream() const { return nullptr; }
  // The run's stream on the device input `i` lives on; nullptr when it is host memory (a host
  // device's value, a graph input, a weight, a device kernel's host input).
  virtual DeviceStream* input_stream(int i) const { return nullptr; }
};

// A copy of `value` (a tensor, a sequence or an optional) in which every tensor owns a buffer
// from ctx.MakeTemporaryTensor (the execution side): for a kernel that hands on a value it does
// not own (SequenceInsert extends a copy of its input; Identity of a sequence).
absl::StatusOr<Tensor> CopyValue(KernelContext& ctx, const Tensor& value);

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual absl::Status Compute(KernelContext& ctx) const = 0;
  // Workspaces needed for these input shapes (exact where the kernel can know). Called at load
  // for the static plan when every shape is known, and per run otherwise.
  virtual std::vector<WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> input_shapes) const {
    return {};
  }
  // (output slot, input index) pairs this kernel produces with KernelContext::MakeOutputAlias in
  // every run (view ops such as Reshape; known at creation). The plan lets such an output share
  // its input's buffer; an alias the plan did not allow is copied by the runtime instead.
  virtual std::vector<std::pair<int, int>> OutputAliases() const { return {}; }
  // Bytes the kernel holds for its whole life outside the arenas (weights prepacked into a
  // library's layout, caches). The session adds them up per device, so memory reports are whole.
  virtual size_t PersistentBytes() const { return 0; }
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_KERNEL_H_
