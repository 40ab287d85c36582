#include "engine/testing/kernel_tester.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/copy.h"
#include "memory/system_allocator.h"

namespace inferd::engine::testing {
namespace {

class TestContext final : public KernelContext {
 public:
  TestContext(std::vector<const Tensor*> inputs, int num_outputs, std::vector<bool> unwanted,
              memory::ExecutionArena& exec, memory::IOArena& io, ThreadPool& pool,
              std::map<int, memory::AllocationHandle>& workspaces)
      : inputs_(std::move(inputs)),
        outputs_(num_outputs),
        unwanted_(std::move(unwanted)),
        exec_(exec),
        io_(io),
        pool_(pool),
        workspaces_(workspaces) {}

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* input(int i) const override {
    return (i >= 0 && i < num_inputs()) ? inputs_[i] : nullptr;
  }
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  bool output_wanted(int slot) const override {
    return slot >= 0 && slot < num_outputs() && !unwanted_[slot];
  }

  absl::StatusOr<Tensor*> MakeOutputTensor(int slot, DataType type, const Shape& shape) override {
    if (slot < 0 || slot >= num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat("output slot ", slot, " out of range"));
    }
    if (!outputs_[slot].empty()) {
      return absl::InternalError(absl::StrCat("output slot ", slot, " allocated twice"));
    }
    std::optional<int64_t> n = CheckedNumElements(shape.dims(), ElementSize(type));
    if (!n) return absl::InvalidArgumentError("output shape overflows");
    INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h,
                            io_.Allocate(static_cast<size_t>(*n) * ElementSize(type)));
    outputs_[slot] = Tensor::Owned(type, shape, std::move(h));
    return &outputs_[slot];
  }

  absl::StatusOr<Tensor*> MakeOutputAlias(int slot, int input_index, const Shape& shape) override {
    const Tensor* in = input(input_index);
    if (in == nullptr) return absl::InvalidArgumentError("aliased input is absent");
    INFERD_ASSIGN_OR_RETURN(Tensor * out, MakeOutputTensor(slot, in->dtype(), shape));
    if (out->bytes() != in->bytes()) {
      return absl::InvalidArgumentError(absl::StrCat("alias of ", in->bytes(), " bytes as ",
                                                     shape.ToString(), " changes the size"));
    }
    CopyPayload(out->raw_mutable_data(), in->raw_data(), in->bytes());
    return out;
  }

  absl::StatusOr<Tensor> MakeTemporaryTensor(DataType type, const Shape& shape) override {
    std::optional<int64_t> n = CheckedNumElements(shape.dims(), ElementSize(type));
    if (!n) return absl::InvalidArgumentError("temporary shape overflows");
    INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h,
                            exec_.Allocate(static_cast<size_t>(*n) * ElementSize(type)));
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

  std::vector<Tensor> TakeOutputs() { return std::move(outputs_); }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor> outputs_;
  std::vector<bool> unwanted_;
  memory::ExecutionArena& exec_;
  memory::IOArena& io_;
  ThreadPool& pool_;
  std::map<int, memory::AllocationHandle>& workspaces_;
};

onnx::AttributeProto MakeAttr(const std::string& name, onnx::AttributeProto::AttributeType t) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(t);
  return a;
}

}  // namespace

KernelTester::KernelTester(std::string op_type, int opset, std::string domain)
    : op_type_(std::move(op_type)), domain_(std::move(domain)), opset_(opset) {}

KernelTester& KernelTester::Attr(const onnx::AttributeProto& a) {
  attributes_.push_back(a);
  return *this;
}

KernelTester& KernelTester::Attr(const std::string& name, int64_t v) {
  onnx::AttributeProto a = MakeAttr(name, onnx::AttributeProto::INT);
  a.set_i(v);
  return Attr(a);
}

KernelTester& KernelTester::Attr(const std::string& name, float v) {
  onnx::AttributeProto a = MakeAttr(name, onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return Attr(a);
}

KernelTester& KernelTester::Attr(const std::string& name, const std::string& v) {
  onnx::AttributeProto a = MakeAttr(name, onnx::AttributeProto::STRING);
  a.set_s(v);
  return Attr(a);
}

KernelTester& KernelTester::Attr(const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto a = MakeAttr(name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return Attr(a);
}

KernelTester& KernelTester::Attr(const std::string& name, const std::vector<float>& v) {
  onnx::AttributeProto a = MakeAttr(name, onnx::AttributeProto::FLOATS);
  for (float x : v) a.add_floats(x);
  return Attr(a);
}

KernelTester& KernelTester::Attr(const std::string& name, const std::vector<std::string>& v) {
  onnx::AttributeProto a = MakeAttr(name, onnx::AttributeProto::STRINGS);
  for (const std::string& x : v) a.add_strings(x);
  return Attr(a);
}

KernelTester& KernelTester::RawInput(DataType type, const Shape& shape, const void* data,
                                     size_t bytes, bool constant) {
  auto spec = std::make_unique<InputSpec>();
  spec->present = true;
  spec->constant = constant;
  spec->type = type;
  spec->shape = shape;
  // Over-allocate so the view can be 64-byte aligned like arena and weight data.
  spec->bytes.resize(bytes + 64);
  auto* base = spec->bytes.data();
  auto* aligned = base + ((64 - reinterpret_cast<uintptr_t>(base) % 64) % 64);
  if (bytes > 0) std::memcpy(aligned, data, bytes);
  spec->tensor = Tensor::Borrowed(type, shape, aligned);
  inputs_.push_back(std::move(spec));
  return *this;
}

KernelTester& KernelTester::AbsentInput() {
  inputs_.push_back(std::make_unique<InputSpec>());
  return *this;
}

KernelTester& KernelTester::Outputs(int n) {
  num_outputs_ = n;
  return *this;
}

KernelTester& KernelTester::UnwantedOutput(int slot) {
  if (static_cast<int>(unwanted_.size()) <= slot) unwanted_.resize(slot + 1, false);
  unwanted_[slot] = true;
  return *this;
}

KernelTester& KernelTester::OutputType(int slot, DataType type) {
  if (static_cast<int>(output_types_.size()) <= slot) {
    output_types_.resize(slot + 1, DataType::kUndefined);
  }
  output_types_[slot] = type;
  return *this;
}

KernelTester& KernelTester::Threads(int n) {
  threads_ = n;
  return *this;
}

KernelTester& KernelTester::DeviceType(std::string device_type) {
  device_type_ = std::move(device_type);
  return *this;
}

absl::StatusOr<std::vector<Tensor>> KernelTester::Run(const KernelRegistry& registry) {
  auto sys = std::make_shared<memory::CpuSystemAllocator>();
  exec_ = std::make_unique<memory::ExecutionArena>(sys);
  io_ = std::make_unique<memory::IOArena>(sys);
  unwanted_.resize(num_outputs_, false);

  std::vector<KernelIoInfo> in_info, out_info;
  std::vector<const Tensor*> in_tensors;
  std::vector<Shape> in_shapes;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const InputSpec& s = *inputs_[i];
    KernelIoInfo info;
    info.present = s.present;
    if (s.present) {
      info.name = absl::StrCat("input_", i);
      info.type = s.type;
      info.shape = ShapeInfo::FromShape(s.shape);
      if (s.constant) info.constant = &s.tensor;
    }
    in_info.push_back(std::move(info));
    in_tensors.push_back(s.present ? &s.tensor : nullptr);
    in_shapes.push_back(s.present ? s.shape : Shape());
  }
  for (int i = 0; i < num_outputs_; ++i) {
    KernelIoInfo info;
    info.present = !unwanted_[i];
    if (info.present) info.name = absl::StrCat("output_", i);
    if (i < static_cast<int>(output_types_.size())) info.type = output_types_[i];
    out_info.push_back(std::move(info));
  }
  std::vector<DataType> in_types, out_types = output_types_;
  out_types.resize(num_outputs_, DataType::kUndefined);
  for (const auto& spec : inputs_) in_types.push_back(spec->type);
  KernelInfo info(absl::StrCat("test_", op_type_), op_type_, domain_, opset_, &attributes_,
                  std::move(in_info), std::move(out_info), threads_);
  const KernelDef* def =
      registry.Find(domain_, op_type_, opset_, device_type_, in_types, out_types);
  if (def == nullptr) {
    return registry.Explain(domain_, op_type_, opset_, device_type_, in_types, out_types,
                            info.node_name());
  }
  INFERD_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, def->create(info));

  std::map<int, memory::AllocationHandle> workspaces;
  workspace_bytes_ = 0;
  for (const WorkspaceRequirement& w : kernel->DeclareWorkspaceRequirements(in_shapes)) {
    INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h, exec_->Allocate(w.bytes));
    workspace_bytes_ += w.bytes;
    workspaces[w.slot_id] = std::move(h);
  }
  ThreadPool pool(threads_);
  TestContext ctx(std::move(in_tensors), num_outputs_, unwanted_, *exec_, *io_, pool, workspaces);
  INFERD_RETURN_IF_ERROR(kernel->Compute(ctx));
  return ctx.TakeOutputs();
}

}  // namespace inferd::engine::testing
