// Data-movement operators on string tensors (docs/strings.md): Identity, Reshape, Flatten,
// Squeeze, Unsqueeze, Concat, Gather, GatherElements, GatherND, Slice, Split, Transpose, Expand,
// Tile and Where run their numeric kernels on element *indices*: each string input becomes an
// int64 tensor numbering its elements (inputs numbered one after the other), the numeric kernel
// moves the numbers, and each output number is replaced by the string it names. Every output
// element of these operators is a copy of some input element, so that is exact. A view (Reshape,
// Squeeze, Identity...) is passed to the runtime as a view of the strings, no copy.
// The index tensors are execution-side temporaries. Immutable after creation: thread-safe.
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// What the numeric kernel sees: string inputs replaced by index tensors, its outputs made as
// int64 temporaries (kept here), everything else passed to the run's context.
class IndexContext final : public KernelContext {
 public:
  IndexContext(KernelContext& real, std::vector<Tensor>& indices)
      : real_(real),
        indices_(indices),
        outputs_(static_cast<size_t>(real.num_outputs())),
        viewed_(static_cast<size_t>(real.num_outputs()), false) {}

  int num_inputs() const override { return real_.num_inputs(); }
  const Tensor* input(int i) const override {
    if (i >= 0 && static_cast<size_t>(i) < indices_.size() && !indices_[i].empty()) {
      return &indices_[i];
    }
    return real_.input(i);
  }
  int num_outputs() const override { return real_.num_outputs(); }
  bool output_wanted(int slot) const override { return real_.output_wanted(slot); }

  absl::StatusOr<Tensor*> MakeOutputTensor(int slot, DataType type, const Shape& shape) override {
    if (slot < 0 || slot >= num_outputs()) {
      return absl::InternalError(absl::StrCat("output slot ", slot, " out of range"));
    }
    if (type != DataType::kInt64) {
      return absl::InternalError(
          absl::StrCat("string path: output ", slot, " made as ", engine::DataTypeName(type)));
    }
    INFERD_ASSIGN_OR_RETURN(outputs_[slot], real_.MakeTemporaryTensor(type, shape));
    return &outputs_[slot];
  }
  absl::StatusOr<Tensor*> MakeOutputAlias(int slot, int input_index, const Shape& shape) override {
    // A view of a string input: the runtime views the strings themselves.
    if (slot >= 0 && slot < num_outputs() && input_index >= 0 &&
        static_cast<size_t>(input_index) < indices_.size() && !indices_[input_index].empty()) {
      INFERD_ASSIGN_OR_RETURN(Tensor * out, real_.MakeOutputAlias(slot, input_index, shape));
      viewed_[slot] = true;
      return out;
    }
    return absl::InternalError("string path: a view of an input that holds no strings");
  }
  absl::Status SetOutput(int slot, Tensor value) override {
    if (slot < 0 || slot >= num_outputs() || !value.is_tensor() ||
        value.dtype() != DataType::kInt64) {
      return absl::InternalError("string path: unexpected output value");
    }
    outputs_[slot] = std::move(value);
    return absl::OkStatus();
  }
  absl::StatusOr<Tensor> MakeTemporaryTensor(DataType type, const Shape& shape) override {
    return real_.MakeTemporaryTensor(type, shape);
  }
  absl::StatusOr<void*> GetWorkspace(int slot_id) override { return real_.GetWorkspace(slot_id); }
  engine::ThreadPool& threads() override { return real_.threads(); }

  std::vector<Tensor>& outputs() { return outputs_; }
  bool viewed(int slot) const { return viewed_[slot]; }

 private:
  KernelContext& real_;
  std::vector<Tensor>& indices_;
  std::vector<Tensor> outputs_;
  std::vector<bool> viewed_;
};

class StringMovementKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<engine::OpKernel>> Create(
      const KernelInfo& info, const engine::KernelFactory& numeric) {
    // The numeric kernel is made for int64 where the node has strings (constants among them are
    // not shown to it: their values are strings).
    std::vector<engine::KernelIoInfo> inputs, outputs;
    for (int i = 0; i < info.num_inputs(); ++i) {
      engine::KernelIoInfo io = info.input(i);
      if (io.present && io.type == DataType::kString) {
        io.type = DataType::kInt64;
        io.constant = nullptr;
      }
      inputs.push_back(std::move(io));
    }
    for (int i = 0; i < info.num_outputs(); ++i) {
      engine::KernelIoInfo io = info.output(i);
      if (io.type == DataType::kString) io.type = DataType::kInt64;
      outputs.push_back(std::move(io));
    }
    KernelInfo inner_info(info.node_name(), info.op_type(), info.domain(), info.opset(),
                          info.attributes(), std::move(inputs), std::move(outputs),
                          info.intra_op_threads());
    INFERD_ASSIGN_OR_RETURN(std::unique_ptr<engine::OpKernel> inner, numeric(inner_info));
    return std::unique_ptr<engine::OpKernel>(new StringMovementKernel(info, std::move(inner)));
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> input_shapes) const override {
    return inner_->DeclareWorkspaceRequirements(input_shapes);
  }
  std::vector<std::pair<int, int>> OutputAliases() const override {
    return inner_->OutputAliases();
  }

  absl::Status Compute(KernelContext& ctx) const override {
    // pass 1: number the elements of every string input, one input after the other.
    std::vector<const std::string*> pool;
    std::vector<Tensor> indices(static_cast<size_t>(ctx.num_inputs()));
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (t == nullptr || !t->is_string()) continue;
      INFERD_ASSIGN_OR_RETURN(indices[i], ctx.MakeTemporaryTensor(DataType::kInt64, t->shape()));
      int64_t* idx = indices[i].mutable_data<int64_t>();
      const std::string* s = t->data<std::string>();
      for (int64_t k = 0; k < t->NumElements(); ++k) {
        idx[k] = static_cast<int64_t>(pool.size());
        pool.push_back(s + k);
      }
    }
    // pass 2: the numeric kernel moves the numbers.
    IndexContext inner_ctx(ctx, indices);
    INFERD_RETURN_IF_ERROR(inner_->Compute(inner_ctx));
    // pass 3: each output number becomes the string it names.
    for (int slot = 0; slot < ctx.num_outputs(); ++slot) {
      const Tensor& idx = inner_ctx.outputs()[slot];
      if (inner_ctx.viewed(slot) || idx.empty()) continue;
      INFERD_ASSIGN_OR_RETURN(Tensor * out,
                              ctx.MakeOutputTensor(slot, DataType::kString, idx.shape()));
      const int64_t* p = idx.data<int64_t>();
      std::string* dst = out->mutable_data<std::string>();
      for (int64_t k = 0; k < idx.NumElements(); ++k) {
        if (p[k] < 0 || static_cast<size_t>(p[k]) >= pool.size()) {
          return node_.Internal("string path: an output element names no input element");
        }
        dst[k] = *pool[static_cast<size_t>(p[k])];
      }
    }
    return absl::OkStatus();
  }

 private:
  StringMovementKernel(const KernelInfo& info, std::unique_ptr<engine::OpKernel> inner)
      : node_(info), inner_(std::move(inner)) {}

  const NodeLabel node_;
  const std::unique_ptr<engine::OpKernel> inner_;  // the numeric kernel, made for int64
};

}  // namespace

std::vector<engine::KernelDef> StringMovementKernelDefs() {
  // Operators whose every output element is a copy of an input element.
  const std::set<std::string> kMovement = {"Identity",  "Reshape", "Flatten", "Squeeze",
                                           "Unsqueeze", "Concat",  "Gather",  "GatherElements",
                                           "GatherND",  "Slice",   "Split",   "Transpose",
                                           "Expand",    "Tile",    "Where"};
  std::vector<engine::KernelDef> defs;
  for (auto* family : {PassThroughKernelDefs, ShapeKernelDefs, ViewKernelDefs, GatherKernelDefs,
                       GatherNdKernelDefs, SliceKernelDefs, SplitKernelDefs, TransposeKernelDefs,
                       ExpandTileKernelDefs, CompareLogicalKernelDefs}) {
    for (engine::KernelDef& def : family()) {
      if (kMovement.count(def.op_type) == 0) continue;
      engine::KernelFactory numeric = std::move(def.create);
      def.types = {DataType::kString};
      def.create = [numeric](const KernelInfo& info) {
        return StringMovementKernel::Create(info, numeric);
      };
      def.estimate_workspace = nullptr;
      defs.push_back(std::move(def));
    }
  }
  return defs;
}

}  // namespace inferd::kernels::cpu
