#include "kernels/cpu/testing/kernel_runner.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/tensor.h"
#include "engine/thread_pool.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd::kernels::cpu::testing {
namespace {

using engine::DataType;
using engine::Shape;
using engine::Tensor;

// Storage for one buffer, 64-byte aligned like arena buffers.
class Buffer {
 public:
  explicit Buffer(size_t bytes) : storage_(bytes + 64) {}
  void* data() {
    auto p = reinterpret_cast<uintptr_t>(storage_.data());
    return storage_.data() + (64 - p % 64) % 64;
  }

 private:
  std::vector<unsigned char> storage_;
};

class RunnerContext final : public engine::KernelContext {
 public:
  RunnerContext(std::vector<const Tensor*> inputs, int num_outputs, engine::ThreadPool& pool,
                std::map<int, std::unique_ptr<Buffer>>& workspaces)
      : inputs_(std::move(inputs)), outputs_(num_outputs), pool_(pool), workspaces_(workspaces) {}

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* input(int i) const override {
    return i >= 0 && i < num_inputs() ? inputs_[i] : nullptr;
  }
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  bool output_wanted(int slot) const override { return slot >= 0 && slot < num_outputs(); }

  absl::StatusOr<Tensor*> MakeOutputTensor(int slot, DataType type, const Shape& shape) override {
    if (slot < 0 || slot >= num_outputs()) return absl::InvalidArgumentError("bad output slot");
    if (!outputs_[slot].empty()) return absl::InternalError("output allocated twice");
    std::optional<int64_t> n = engine::CheckedNumElements(shape.dims(), engine::ElementSize(type));
    if (!n) return absl::InvalidArgumentError("output shape overflows");
    buffers_.push_back(std::make_unique<Buffer>(*n * engine::ElementSize(type)));
    outputs_[slot] = Tensor::Borrowed(type, shape, buffers_.back()->data());
    return &outputs_[slot];
  }

  absl::StatusOr<Tensor*> MakeOutputAlias(int slot, int input_index, const Shape& shape) override {
    const Tensor* in = input(input_index);
    if (in == nullptr) return absl::InvalidArgumentError("aliased input is absent");
    if (slot < 0 || slot >= num_outputs()) return absl::InvalidArgumentError("bad output slot");
    if (!outputs_[slot].empty()) return absl::InternalError("output allocated twice");
    Tensor t = Tensor::Borrowed(in->dtype(), shape, in->raw_data());
    if (t.bytes() != in->bytes()) return absl::InvalidArgumentError("alias changes the size");
    outputs_[slot] = std::move(t);
    return &outputs_[slot];
  }

  absl::StatusOr<Tensor> MakeTemporaryTensor(DataType type, const Shape& shape) override {
    std::optional<int64_t> n = engine::CheckedNumElements(shape.dims(), engine::ElementSize(type));
    if (!n) return absl::InvalidArgumentError("temporary shape overflows");
    buffers_.push_back(std::make_unique<Buffer>(*n * engine::ElementSize(type)));
    return Tensor::Borrowed(type, shape, buffers_.back()->data());
  }

  absl::StatusOr<void*> GetWorkspace(int slot_id) override {
    auto it = workspaces_.find(slot_id);
    if (it == workspaces_.end()) {
      return absl::InternalError(absl::StrCat("workspace ", slot_id, " was not declared"));
    }
    return it->second->data();
  }

  engine::ThreadPool& threads() override { return pool_; }
  const std::vector<Tensor>& outputs() const { return outputs_; }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor> outputs_;
  engine::ThreadPool& pool_;
  std::map<int, std::unique_ptr<Buffer>>& workspaces_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

onnx::AttributeProto MakeAttr(const std::string& name, onnx::AttributeProto::AttributeType t) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(t);
  return a;
}

}  // namespace

const engine::KernelRegistry& CpuRegistry() {
  static const engine::KernelRegistry* const kRegistry = [] {
    auto* r = new engine::KernelRegistry();
    absl::Status s = RegisterCpuKernels(*r);
    if (!s.ok()) ADD_FAILURE() << s;
    return r;
  }();
  return *kRegistry;
}

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected,
                float tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  int reported = 0;
  for (size_t i = 0; i < actual.size() && reported < 5; ++i) {
    const bool both_nan = std::isnan(actual[i]) && std::isnan(expected[i]);
    if (!both_nan && !(std::abs(actual[i] - expected[i]) <= tolerance)) {
      ADD_FAILURE() << "element " << i << ": got " << actual[i] << ", expected " << expected[i]
                    << " (tolerance " << tolerance << ")";
      ++reported;
    }
  }
}

NodeSpec::NodeSpec(std::string op_type, int opset, std::string domain)
    : op_type_(std::move(op_type)), domain_(std::move(domain)), opset_(opset) {}

NodeSpec& NodeSpec::Attr(const std::string& name, int64_t v) {
  attributes_.push_back(MakeAttr(name, onnx::AttributeProto::INT));
  attributes_.back().set_i(v);
  return *this;
}

NodeSpec& NodeSpec::Attr(const std::string& name, float v) {
  attributes_.push_back(MakeAttr(name, onnx::AttributeProto::FLOAT));
  attributes_.back().set_f(v);
  return *this;
}

NodeSpec& NodeSpec::Attr(const std::string& name, const std::string& v) {
  attributes_.push_back(MakeAttr(name, onnx::AttributeProto::STRING));
  attributes_.back().set_s(v);
  return *this;
}

NodeSpec& NodeSpec::Attr(const std::string& name, const std::vector<int64_t>& v) {
  attributes_.push_back(MakeAttr(name, onnx::AttributeProto::INTS));
  for (int64_t x : v) attributes_.back().add_ints(x);
  return *this;
}

NodeSpec& NodeSpec::Input(const TestTensor& t, bool shape_known, bool constant) {
  auto spec = std::make_unique<InputSpec>();
  spec->present = true;
  spec->shape_known = shape_known;
  spec->constant = constant;
  spec->tensor = t;
  spec->view =
      std::make_unique<Tensor>(Tensor::Borrowed(t.type, t.shape, spec->tensor.bytes.data()));
  inputs_.push_back(std::move(spec));
  return *this;
}

NodeSpec& NodeSpec::AbsentInput() {
  inputs_.push_back(std::make_unique<InputSpec>());
  return *this;
}

NodeSpec& NodeSpec::Outputs(int n) {
  num_outputs_ = n;
  return *this;
}

NodeSpec& NodeSpec::Threads(int n) {
  threads_ = n;
  return *this;
}

engine::KernelInfo NodeSpec::Info() const {
  std::vector<engine::KernelIoInfo> ins, outs;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const InputSpec& s = *inputs_[i];
    engine::KernelIoInfo io;
    io.present = s.present;
    if (s.present) {
      io.name = absl::StrCat("input_", i);
      io.type = s.tensor.type;
      io.shape = s.shape_known ? engine::ShapeInfo::FromShape(s.tensor.shape)
                               : engine::ShapeInfo::Unknown();
      if (s.constant) io.constant = s.view.get();
    }
    ins.push_back(std::move(io));
  }
  for (int i = 0; i < num_outputs_; ++i) {
    engine::KernelIoInfo io;
    io.present = true;
    io.name = absl::StrCat("output_", i);
    outs.push_back(std::move(io));
  }
  return engine::KernelInfo(absl::StrCat("test_", op_type_), op_type_, domain_, opset_,
                            &attributes_, std::move(ins), std::move(outs), threads_);
}

const engine::KernelDef* NodeSpec::Find(const engine::KernelRegistry& registry) const {
  std::vector<DataType> in_types, out_types(num_outputs_, DataType::kUndefined);
  for (const auto& s : inputs_) in_types.push_back(s->tensor.type);
  return registry.Find(domain_, op_type_, opset_, "cpu", in_types, out_types);
}

absl::StatusOr<size_t> NodeSpec::Estimate(const engine::KernelRegistry& registry) const {
  const engine::KernelDef* def = Find(registry);
  if (def == nullptr) return absl::NotFoundError(absl::StrCat("no kernel for ", op_type_));
  if (!def->estimate_workspace) {
    return absl::NotFoundError(absl::StrCat(op_type_, " has no workspace estimate"));
  }
  return def->estimate_workspace(Info());
}

absl::StatusOr<std::unique_ptr<engine::OpKernel>> NodeSpec::Create(
    const engine::KernelRegistry& registry) const {
  const engine::KernelDef* def = Find(registry);
  if (def == nullptr) return absl::NotFoundError(absl::StrCat("no kernel for ", op_type_));
  return def->create(Info());
}

absl::StatusOr<std::vector<TestTensor>> RunKernel(const engine::OpKernel& kernel,
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
  std::map<int, std::unique_ptr<Buffer>> workspaces;
  for (const engine::WorkspaceRequirement& w : kernel.DeclareWorkspaceRequirements(shapes)) {
    workspaces[w.slot_id] = std::make_unique<Buffer>(w.bytes);
  }
  engine::ThreadPool pool(threads);
  RunnerContext ctx(std::move(ptrs), num_outputs, pool, workspaces);
  INFERD_RETURN_IF_ERROR(kernel.Compute(ctx));
  std::vector<TestTensor> out;
  for (const Tensor& t : ctx.outputs()) {
    TestTensor o;
    o.type = t.dtype();
    o.shape = t.shape();
    o.bytes.resize(t.empty() ? 0 : t.bytes());
    if (!o.bytes.empty()) std::memcpy(o.bytes.data(), t.raw_data(), o.bytes.size());
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace inferd::kernels::cpu::testing
