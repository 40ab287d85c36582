#include "engine/constant_folding.h"

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/execution_plan.h"
#include "engine/rewrite_util.h"
#include "engine/thread_pool.h"
#include "memory/execution_arena.h"
#include "memory/system_allocator.h"

namespace inferd::engine {
namespace {

using rewrite::FindAttribute;
using rewrite::IsOnnxOp;

// Ops whose result is not a function of their inputs, and ops a later rewrite must see.
bool NeverFolded(const Node& n) {
  static const std::set<std::string>* const kOps = new std::set<std::string>{
      // not deterministic
      "Bernoulli", "Dropout", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform",
      "RandomUniformLike",
      // the QDQ fusion (engine/qdq_fusion.h) matches DequantizeLinear(constant W); folding it
      // would turn a quantized MatMul / Conv into a float one, with other results
      "DequantizeLinear", "DynamicQuantizeLinear", "QuantizeLinear",
      // control flow (also caught by its subgraphs) and the one op the loader folds itself
      "Constant", "If", "Loop", "Scan"};
  return !n.subgraphs.empty() || kOps->count(n.op_type) > 0;
}

// The kernel run at load: inputs are weights, outputs and scratch come from an arena over host
// memory with a byte limit, and the outputs may take at most `max_output_bytes` together.
class HostContext final : public KernelContext {
 public:
  HostContext(std::vector<const Tensor*> inputs, std::vector<bool> wanted,
              memory::ExecutionArena& arena, ThreadPool& pool,
              std::map<int, memory::AllocationHandle>& workspaces, uint64_t max_output_bytes)
      : inputs_(std::move(inputs)),
        wanted_(std::move(wanted)),
        outputs_(wanted_.size()),
        arena_(arena),
        pool_(pool),
        workspaces_(workspaces),
        max_output_bytes_(max_output_bytes) {}

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* input(int i) const override {
    return i >= 0 && i < num_inputs() ? inputs_[i] : nullptr;
  }
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  bool output_wanted(int slot) const override {
    return slot >= 0 && slot < num_outputs() && wanted_[slot];
  }

  absl::StatusOr<Tensor*> MakeOutputTensor(int slot, DataType type, const Shape& shape) override {
    if (slot < 0 || slot >= num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat("output slot ", slot, " out of range"));
    }
    if (!outputs_[slot].empty()) {
      return absl::InternalError(absl::StrCat("output slot ", slot, " made twice"));
    }
    const size_t element = ElementSize(type);
    const std::optional<int64_t> n = CheckedNumElements(shape.dims(), element);
    if (element == 0 || !n) {
      return absl::InvalidArgumentError(absl::StrCat("output ", slot, " of ", DataTypeName(type),
                                                     " ", ShapeForMessage(shape.dims()),
                                                     " cannot be folded"));
    }
    const uint64_t bytes = static_cast<uint64_t>(*n) * element;
    const std::optional<uint64_t> total = CheckedAdd(output_bytes_, bytes);
    if (!total || *total > max_output_bytes_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("outputs over ", max_output_bytes_, " bytes are not folded"));
    }
    output_bytes_ = *total;
    INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h,
                            arena_.Allocate(static_cast<size_t>(bytes > 0 ? bytes : 1)));
    outputs_[slot] = Tensor::Owned(type, shape, std::move(h));
    return &outputs_[slot];
  }

  absl::StatusOr<Tensor*> MakeOutputAlias(int slot, int input_index, const Shape& shape) override {
    const Tensor* in = input(input_index);
    if (in == nullptr) return absl::InvalidArgumentError("aliased input is absent");
    INFERD_ASSIGN_OR_RETURN(Tensor * out, MakeOutputTensor(slot, in->dtype(), shape));
    if (out->bytes() != in->bytes()) {
      return absl::InvalidArgumentError(absl::StrCat("an alias of ", in->bytes(), " bytes as ",
                                                     shape.ToString(), " changes the size"));
    }
    if (in->bytes() > 0) std::memcpy(out->raw_mutable_data(), in->raw_data(), in->bytes());
    return out;
  }

  absl::StatusOr<Tensor> MakeTemporaryTensor(DataType type, const Shape& shape) override {
    const std::optional<int64_t> n = CheckedNumElements(shape.dims(), ElementSize(type));
    if (ElementSize(type) == 0 || !n) {
      return absl::InvalidArgumentError("temporary shape overflows");
    }
    const size_t bytes = static_cast<size_t>(*n) * ElementSize(type);
    INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h, arena_.Allocate(bytes > 0 ? bytes : 1));
    return Tensor::Owned(type, shape, std::move(h));
  }

  absl::StatusOr<void*> GetWorkspace(int slot_id) override {
    auto it = workspaces_.find(slot_id);
    if (it == workspaces_.end()) {
      return absl::InternalError(absl::StrCat("workspace ", slot_id, " was not declared"));
    }
    return it->second.data();
  }

  ThreadPool& threads() override { return pool_; }

  std::vector<Tensor>& outputs() { return outputs_; }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<bool> wanted_;
  std::vector<Tensor> outputs_;
  memory::ExecutionArena& arena_;
  ThreadPool& pool_;
  std::map<int, memory::AllocationHandle>& workspaces_;
  const uint64_t max_output_bytes_;
  uint64_t output_bytes_ = 0;
};

class Folder {
 public:
  Folder(Graph& g, const KernelRegistry& registry, DerivedWeights& derived,
         const ConstantFoldingOptions& options)
      : g_(g),
        registry_(registry),
        derived_(derived),
        options_(options),
        arena_(std::make_shared<memory::CpuSystemAllocator>(
            "cpu:0", static_cast<size_t>(options.max_scratch_bytes))),
        pool_(1) {}

  absl::StatusOr<int> Run() {
    INFERD_RETURN_IF_ERROR(g_.TopologicalSort());
    // pass 1: the values that must keep being computed (graph outputs, read in a subgraph).
    pinned_.assign(g_.values.size(), false);
    for (int v : g_.outputs) pinned_[v] = true;
    for (size_t v = 0; v < g_.values.size(); ++v) {
      if (g_.values[v].is_graph_output) pinned_[v] = true;
    }
    for (const Node& n : g_.nodes) {
      for (int v : n.implicit_inputs) {
        if (v >= 0) pinned_[v] = true;
      }
    }
    // pass 2: fold, in topological order.
    std::vector<bool> keep(g_.nodes.size(), true);
    int removed = 0;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      if (!OutputsFoldable(g_.nodes[i])) continue;
      if (FoldShape(i) || FoldShapeGather(i) || FoldIdentity(i) || FoldByKernel(i)) {
        keep[i] = false;
        ++removed;
      }
    }
    if (removed == 0) return 0;
    // pass 3: Shapes whose every reader was folded (Gather(Shape(x), i)) are dropped.
    for (size_t i = g_.nodes.size(); i-- > 0;) {
      const Node& n = g_.nodes[i];
      if (!keep[i] || !IsOnnxOp(n, "Shape") || n.outputs.size() != 1 || n.outputs[0] < 0) {
        continue;
      }
      const Value& out = g_.values[n.outputs[0]];
      if (pinned_[n.outputs[0]] || out.consumers.empty()) continue;
      bool read = false;
      for (const auto& [reader, slot] : out.consumers) read = read || keep[reader];
      if (!read) {
        keep[i] = false;
        ++removed;
      }
    }
    g_.RemoveNodes(keep);
    INFERD_RETURN_IF_ERROR(g_.Validate());
    return removed;
  }

 private:
  bool IsWeight(int v) const { return v >= 0 && g_.values[v].initializer != nullptr; }

  // Every output can become a weight: present values, none pinned, plain tensors of a fixed-size
  // type (or a type inference left unknown).
  bool OutputsFoldable(const Node& n) const {
    if (n.outputs.empty() || !n.domain.empty() || NeverFolded(n)) return false;
    bool any = false;
    for (int v : n.outputs) {
      if (v < 0) continue;
      const Value& val = g_.values[v];
      if (pinned_[v] || val.kind != ValueKind::kTensor || val.type == DataType::kString) {
        return false;
      }
      any = true;
    }
    return any;
  }

  void Bind(int v, const Tensor* w) {
    Value& val = g_.values[v];
    val.initializer = w;
    val.type = w->dtype();
    val.shape = ShapeInfo::FromShape(w->shape());
  }

  // An int64 weight of `shape` holding `values`.
  bool SetInt64Weight(int v, const Shape& shape, const std::vector<int64_t>& values) {
    void* data = nullptr;
    absl::StatusOr<const Tensor*> w = derived_.NewTensor(DataType::kInt64, shape, &data);
    if (!w.ok()) return false;
    if (!values.empty()) std::memcpy(data, values.data(), values.size() * sizeof(int64_t));
    Bind(v, *w);
    return true;
  }

  // The dims of `v`, as far as they are known (a weight's are); nullopt when its rank is not.
  std::optional<std::vector<DimInfo>> Dims(int v) const {
    if (v < 0) return std::nullopt;
    const Value& val = g_.values[v];
    if (val.initializer != nullptr) return ShapeInfo::FromShape(val.initializer->shape()).dims;
    if (val.kind != ValueKind::kTensor || !val.shape.rank_known) return std::nullopt;
    return val.shape.dims;
  }

  // The dims Shape node `n` reads: [start, end) of its input's (opset 15's attributes, clamped
  // as the operator defines), or nullopt when the input's rank is unknown.
  std::optional<std::vector<DimInfo>> ShapeSlice(const Node& n) const {
    if (n.inputs.size() != 1) return std::nullopt;
    std::optional<std::vector<DimInfo>> dims = Dims(n.inputs[0]);
    if (!dims) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(dims->size());
    auto clamp = [rank](int64_t i) {
      if (i < 0) i += rank;
      return i < 0 ? int64_t{0} : (i > rank ? rank : i);
    };
    const int64_t start = clamp(rewrite::IntAttribute(n, "start", 0));
    const int64_t end = clamp(rewrite::IntAttribute(n, "end", rank));
    if (end <= start) return std::vector<DimInfo>{};
    return std::vector<DimInfo>(dims->begin() + start, dims->begin() + end);
  }

  // Shape(x) and Size(x) whose dims are all known.
  bool FoldShape(size_t i) {
    const Node& n = g_.nodes[i];
    const bool shape = IsOnnxOp(n, "Shape"), size = IsOnnxOp(n, "Size");
    if ((!shape && !size) || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
    std::optional<std::vector<DimInfo>> dims =
        shape ? ShapeSlice(n) : (n.inputs.size() == 1 ? Dims(n.inputs[0]) : std::nullopt);
    if (!dims) return false;
    std::vector<int64_t> values;
    for (const DimInfo& d : *dims) {
      if (!d.known()) return false;
      values.push_back(d.value);
    }
    if (shape) {
      return SetInt64Weight(n.outputs[0], Shape{static_cast<int64_t>(values.size())}, values);
    }
    const std::optional<int64_t> count = CheckedProduct(values);
    return count && SetInt64Weight(n.outputs[0], Shape{}, {*count});
  }

  // Gather(Shape(x), constant indices) (axis 0) whose gathered dims are known, while Shape(x)
  // itself is not (a symbolic batch dim elsewhere).
  bool FoldShapeGather(size_t i) {
    const Node& n = g_.nodes[i];
    if (!IsOnnxOp(n, "Gather") || n.inputs.size() != 2 || n.outputs.size() != 1 ||
        n.outputs[0] < 0 || n.inputs[0] < 0 || !IsWeight(n.inputs[1])) {
      return false;
    }
    const int producer = g_.values[n.inputs[0]].producer;
    if (producer < 0 || !IsOnnxOp(g_.nodes[producer], "Shape")) return false;
    const int64_t axis = rewrite::IntAttribute(n, "axis", 0);
    if (axis != 0 && axis != -1) return false;
    std::optional<std::vector<DimInfo>> dims = ShapeSlice(g_.nodes[producer]);
    if (!dims) return false;
    const Tensor& indices = *g_.values[n.inputs[1]].initializer;
    const int64_t count = static_cast<int64_t>(dims->size());
    std::vector<int64_t> values;
    for (int64_t k = 0; k < indices.NumElements(); ++k) {
      int64_t at;
      if (indices.dtype() == DataType::kInt64) {
        at = indices.data<int64_t>()[k];
      } else if (indices.dtype() == DataType::kInt32) {
        at = indices.data<int32_t>()[k];
      } else {
        return false;
      }
      if (at < 0) at += count;
      if (at < 0 || at >= count || !(*dims)[at].known()) return false;  // the kernel's error
      values.push_back((*dims)[at].value);
    }
    return SetInt64Weight(n.outputs[0], indices.shape(), values);
  }

  // Identity of a weight reads the weight itself.
  bool FoldIdentity(size_t i) {
    const Node& n = g_.nodes[i];
    if (!IsOnnxOp(n, "Identity") || n.inputs.size() != 1 || n.outputs.size() != 1 ||
        n.outputs[0] < 0 || !IsWeight(n.inputs[0])) {
      return false;
    }
    const Tensor* w = g_.values[n.inputs[0]].initializer;
    if (!w->is_tensor()) return false;
    Bind(n.outputs[0], w);
    return true;
  }

  // A node whose inputs are all weights, run once by its CPU kernel.
  bool FoldByKernel(size_t i) {
    const Node& n = g_.nodes[i];
    if (n.inputs.empty() || !n.implicit_inputs.empty()) return false;
    std::vector<const Tensor*> inputs;
    std::vector<DataType> in_types, out_types;
    std::vector<KernelIoInfo> in_info, out_info;
    bool any_input = false;
    for (int v : n.inputs) {
      KernelIoInfo io;
      if (v >= 0) {
        const Value& val = g_.values[v];
        if (val.initializer == nullptr || !val.initializer->is_tensor() ||
            val.initializer->dtype() == DataType::kString) {
          return false;
        }
        io.name = val.name;
        io.present = true;
        io.type = val.initializer->dtype();
        io.shape = ShapeInfo::FromShape(val.initializer->shape());
        io.constant = val.initializer;
        any_input = true;
      }
      inputs.push_back(io.constant);
      in_types.push_back(io.type);
      in_info.push_back(std::move(io));
    }
    if (!any_input) return false;
    // Outputs whose size inference already knows to be over the limit are not tried.
    uint64_t known_bytes = 0;
    std::vector<bool> wanted;
    for (int v : n.outputs) {
      KernelIoInfo io = KernelIoOf(g_, v);
      if (v >= 0) {
        const Value& val = g_.values[v];
        if (std::optional<Shape> s = val.shape.ToShape(); s && ElementSize(val.type) > 0) {
          const std::optional<int64_t> count = CheckedNumElements(s->dims(), ElementSize(val.type));
          if (!count) return false;
          known_bytes = SaturatingAdd<uint64_t>(
              known_bytes, static_cast<uint64_t>(*count) * ElementSize(val.type));
        }
      }
      wanted.push_back(v >= 0);
      out_types.push_back(io.type);
      out_info.push_back(std::move(io));
    }
    if (known_bytes > options_.max_output_bytes) return false;
    const KernelDef* def =
        registry_.Find(n.domain, n.op_type, n.opset, DeviceKind::kCpu, in_types, out_types);
    if (def == nullptr) return false;
    KernelInfo info(n.name, n.op_type, n.domain, n.opset, &n.attributes, std::move(in_info),
                    std::move(out_info), /*intra_op_threads=*/1);
    absl::StatusOr<std::unique_ptr<OpKernel>> kernel = def->create(info);
    if (!kernel.ok()) return false;
    // The kernel's workspaces, then one run.
    std::vector<Shape> shapes;
    for (const Tensor* t : inputs) shapes.push_back(t != nullptr ? t->shape() : Shape{});
    std::map<int, memory::AllocationHandle> workspaces;
    for (const WorkspaceRequirement& w : (*kernel)->DeclareWorkspaceRequirements(shapes)) {
      absl::StatusOr<memory::AllocationHandle> h = arena_.Allocate(w.bytes > 0 ? w.bytes : 1);
      if (!h.ok()) return false;
      workspaces[w.slot_id] = *std::move(h);
    }
    HostContext ctx(std::move(inputs), wanted, arena_, pool_, workspaces,
                    options_.max_output_bytes);
    if (!(*kernel)->Compute(ctx).ok()) return false;
    // Every output made, a plain tensor of the type and shape the graph says; copied into the
    // session's weights only when all are.
    std::vector<Tensor>& outs = ctx.outputs();
    std::vector<const Tensor*> weights(n.outputs.size(), nullptr);
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const int v = n.outputs[k];
      if (v < 0) continue;
      const Value& val = g_.values[v];
      if (outs[k].empty() || !outs[k].is_tensor() ||
          (val.type != DataType::kUndefined && outs[k].dtype() != val.type) ||
          (val.shape.rank_known && !val.shape.Matches(outs[k].shape()))) {
        return false;
      }
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k] < 0) continue;
      void* data = nullptr;
      absl::StatusOr<const Tensor*> w = derived_.NewTensor(outs[k].dtype(), outs[k].shape(), &data);
      if (!w.ok()) return false;
      if (outs[k].bytes() > 0) std::memcpy(data, outs[k].raw_data(), outs[k].bytes());
      weights[k] = *w;
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k] >= 0) Bind(n.outputs[k], weights[k]);
    }
    return true;
  }

  Graph& g_;
  const KernelRegistry& registry_;
  DerivedWeights& derived_;
  const ConstantFoldingOptions options_;
  memory::ExecutionArena arena_;  // outlives every tensor made from it (they live in a call)
  ThreadPool pool_;
  std::vector<bool> pinned_;  // by value: a graph output or read inside a subgraph
};

}  // namespace

absl::StatusOr<int> FoldConstants(Graph& graph, const KernelRegistry& registry,
                                  DerivedWeights& derived, const ConstantFoldingOptions& options) {
  Folder folder(graph, registry, derived, options);
  return folder.Run();
}

}  // namespace inferd::engine
