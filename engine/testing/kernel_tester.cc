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
    if (type == DataType::kString) {  // heap strings, as in a session (docs/strings.md)
      outputs_[slot] = Tensor::Strings(shape, std::vector<std::string>(static_cast<size_t>(*n)));
      return &outputs_[slot];
    }
    INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h,
                            io_.Allocate(static_cast<size_t>(*n) * ElementSize(type)));
    outputs_[slot] = Tensor::Owned(type, shape, std::move(h));
    return &outputs_[slot];
  }

  // With `view_aliases` (RunKernel) an alias is a view of the input's bytes, as in a session;
  // without (KernelTester::Run) a copy in the IOArena, which outlives the tester's inputs.
  void set_view_aliases(bool v) { view_aliases_ = v; }

  absl::StatusOr<Tensor*> MakeOutputAlias(int slot, int input_index, const Shape& shape) override {
    const Tensor* in = input(input_index);
    if (in == nullptr) return absl::InvalidArgumentError("aliased input is absent");
    if (view_aliases_) {
      if (slot < 0 || slot >= num_outputs()) return absl::InvalidArgumentError("bad output slot");
      if (!outputs_[slot].empty()) return absl::InternalError("output allocated twice");
      Tensor t = Tensor::Borrowed(in->dtype(), shape, in->raw_data());
      if (t.bytes() != in->bytes()) return absl::InvalidArgumentError("alias changes the size");
      outputs_[slot] = std::move(t);
      return &outputs_[slot];
    }
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
    if (type == DataType::kString) {
      return Tensor::Strings(shape, std::vector<std::string>(static_cast<size_t>(*n)));
    }
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
  bool view_aliases_ = false;
};

onnx::AttributeProto NamedAttr(const std::string& name, onnx::AttributeProto::AttributeType t) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(t);
  return a;
}

}  // namespace

onnx::AttributeProto IntAttr(const std::string& name, int64_t v) {
  onnx::AttributeProto a = NamedAttr(name, onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto FloatAttr(const std::string& name, float v) {
  onnx::AttributeProto a = NamedAttr(name, onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

onnx::AttributeProto StringAttr(const std::string& name, const std::string& v) {
  onnx::AttributeProto a = NamedAttr(name, onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}

onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto a = NamedAttr(name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}

onnx::AttributeProto FloatsAttr(const std::string& name, const std::vector<float>& v) {
  onnx::AttributeProto a = NamedAttr(name, onnx::AttributeProto::FLOATS);
  for (float x : v) a.add_floats(x);
  return a;
}

onnx::AttributeProto StringsAttr(const std::string& name, const std::vector<std::string>& v) {
  onnx::AttributeProto a = NamedAttr(name, onnx::AttributeProto::STRINGS);
  for (const std::string& x : v) a.add_strings(x);
  return a;
}

KernelTester::KernelTester(std::string op_type, int opset, std::string domain)
    : op_type_(std::move(op_type)), domain_(std::move(domain)), opset_(opset) {}

KernelTester& KernelTester::Attr(const onnx::AttributeProto& a) {
  attributes_.push_back(a);
  return *this;
}

KernelTester& KernelTester::Attr(const std::string& name, int64_t v) {
  return Attr(IntAttr(name, v));
}

KernelTester& KernelTester::Attr(const std::string& name, float v) {
  return Attr(FloatAttr(name, v));
}

KernelTester& KernelTester::Attr(const std::string& name, const std::string& v) {
  return Attr(StringAttr(name, v));
}

KernelTester& KernelTester::Attr(const std::string& name, const std::vector<int64_t>& v) {
  return Attr(IntsAttr(name, v));
}

KernelTester& KernelTester::Attr(const std::string& name, const std::vector<float>& v) {
  return Attr(FloatsAttr(name, v));
}

KernelTester& KernelTester::Attr(const std::string& name, const std::vector<std::string>& v) {
  return Attr(StringsAttr(name, v));
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

KernelTester& KernelTester::Input(const TestTensor& t, bool shape_known_at_load, bool constant) {
  RawInput(t.type, t.shape, t.bytes.data(), t.bytes.size(), constant);
  inputs_.back()->shape_known = shape_known_at_load;
  return *this;
}

KernelTester& KernelTester::DeviceType(DeviceKind device_type) {
  device_type_ = device_type;
  return *this;
}

KernelInfo KernelTester::Info() const {
  std::vector<KernelIoInfo> in_info, out_info;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const InputSpec& s = *inputs_[i];
    KernelIoInfo info;
    info.present = s.present;
    if (s.present) {
      info.name = absl::StrCat("input_", i);
      info.type = s.type;
      info.shape = s.shape_known ? ShapeInfo::FromShape(s.shape) : ShapeInfo::Unknown();
      if (s.constant) info.constant = &s.tensor;
    }
    in_info.push_back(std::move(info));
  }
  for (int i = 0; i < num_outputs_; ++i) {
    KernelIoInfo info;
    info.present = i >= static_cast<int>(unwanted_.size()) || !unwanted_[i];
    if (info.present) info.name = absl::StrCat("output_", i);
    if (i < static_cast<int>(output_types_.size())) info.type = output_types_[i];
    out_info.push_back(std::move(info));
  }
  return KernelInfo(absl::StrCat("test_", op_type_), op_type_, domain_, opset_, &attributes_,
                    std::move(in_info), std::move(out_info), threads_);
}

const KernelDef* KernelTester::Find(const KernelRegistry& registry) const {
  std::vector<DataType> in_types, out_types = output_types_;
  out_types.resize(num_outputs_, DataType::kUndefined);
  for (const auto& spec : inputs_) in_types.push_back(spec->type);
  return registry.Find(domain_, op_type_, opset_, device_type_, in_types, out_types);
}

absl::StatusOr<size_t> KernelTester::Estimate(const KernelRegistry& registry) const {
  const KernelDef* def = Find(registry);
  if (def == nullptr) return absl::NotFoundError(absl::StrCat("no kernel for ", op_type_));
  if (!def->estimate_workspace) {
    return absl::NotFoundError(absl::StrCat(op_type_, " has no workspace estimate"));
  }
  return def->estimate_workspace(Info());
}

absl::StatusOr<std::unique_ptr<OpKernel>> KernelTester::Create(
    const KernelRegistry& registry) const {
  const KernelDef* def = Find(registry);
  if (def == nullptr) return absl::NotFoundError(absl::StrCat("no kernel for ", op_type_));
  return def->create(Info());
}

absl::StatusOr<std::vector<Tensor>> KernelTester::Run(const KernelRegistry& registry) {
  auto sys = std::make_shared<memory::CpuSystemAllocator>();
  exec_ = std::make_unique<memory::ExecutionArena>(sys);
  io_ = std::make_unique<memory::IOArena>(sys);
  unwanted_.resize(num_outputs_, false);

  std::vector<const Tensor*> in_tensors;
  std::vector<Shape> in_shapes;
  for (const auto& s : inputs_) {
    in_tensors.push_back(s->present ? &s->tensor : nullptr);
    in_shapes.push_back(s->present ? s->shape : Shape());
  }
  KernelInfo info = Info();
  const KernelDef* def = Find(registry);
  if (def == nullptr) {
    std::vector<DataType> in_types, out_types = output_types_;
    out_types.resize(num_outputs_, DataType::kUndefined);
    for (const auto& spec : inputs_) in_types.push_back(spec->type);
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

absl::StatusOr<std::vector<TestTensor>> RunKernel(const OpKernel& kernel,
                                                  const std::vector<const TestTensor*>& inputs,
                                                  int num_outputs, int threads) {
  std::vector<Tensor> views;
  views.reserve(inputs.size());
  std::vector<const Tensor*> ptrs;
  std::vector<Shape> shapes;
  for (const TestTensor* t : inputs) {
    if (t == nullptr) {
      views.emplace_back();
      ptrs.push_back(nullptr);
      shapes.emplace_back();
    } else {
      views.push_back(Tensor::Borrowed(t->type, t->shape, t->bytes.data()));
      ptrs.push_back(&views.back());
      shapes.push_back(t->shape);
    }
  }
  auto sys = std::make_shared<memory::CpuSystemAllocator>();
  memory::ExecutionArena exec(sys);
  memory::IOArena io(sys);
  std::map<int, memory::AllocationHandle> workspaces;
  for (const WorkspaceRequirement& w : kernel.DeclareWorkspaceRequirements(shapes)) {
    INFERD_ASSIGN_OR_RETURN(workspaces[w.slot_id], exec.Allocate(w.bytes));
  }
  ThreadPool pool(threads);
  TestContext ctx(std::move(ptrs), num_outputs, std::vector<bool>(num_outputs, false), exec, io,
                  pool, workspaces);
  ctx.set_view_aliases(true);
  INFERD_RETURN_IF_ERROR(kernel.Compute(ctx));
  std::vector<TestTensor> out;
  for (const Tensor& t : ctx.TakeOutputs()) {
    TestTensor o;
    o.type = t.dtype();
    o.shape = t.shape();
    o.bytes.resize(t.empty() ? 0 : t.bytes());
    if (!o.bytes.empty()) std::memcpy(o.bytes.data(), t.raw_data(), o.bytes.size());
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace inferd::engine::testing
