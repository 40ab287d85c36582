#include "engine/kernel.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace inferd::engine {

KernelInfo::KernelInfo(std::string node_name, std::string op_type, std::string domain, int opset,
                       const std::vector<onnx::AttributeProto>* attributes,
                       std::vector<KernelIoInfo> inputs, std::vector<KernelIoInfo> outputs,
                       int intra_op_threads)
    : node_name_(std::move(node_name)),
      op_type_(std::move(op_type)),
      domain_(std::move(domain)),
      opset_(opset),
      attributes_(attributes),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      intra_op_threads_(intra_op_threads) {}

const KernelIoInfo& KernelInfo::input(int i) const {
  static const KernelIoInfo kAbsent;
  return (i >= 0 && i < num_inputs()) ? inputs_[i] : kAbsent;
}

const KernelIoInfo& KernelInfo::output(int i) const {
  static const KernelIoInfo kAbsent;
  return (i >= 0 && i < num_outputs()) ? outputs_[i] : kAbsent;
}

const onnx::AttributeProto* KernelInfo::FindAttribute(absl::string_view name) const {
  if (attributes_ == nullptr) return nullptr;
  for (const onnx::AttributeProto& a : *attributes_) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t KernelInfo::GetInt(absl::string_view name, int64_t default_value) const {
  const onnx::AttributeProto* a = FindAttribute(name);
  return a != nullptr ? a->i() : default_value;
}

float KernelInfo::GetFloat(absl::string_view name, float default_value) const {
  const onnx::AttributeProto* a = FindAttribute(name);
  return a != nullptr ? a->f() : default_value;
}

std::string KernelInfo::GetString(absl::string_view name, absl::string_view default_value) const {
  const onnx::AttributeProto* a = FindAttribute(name);
  return a != nullptr ? a->s() : std::string(default_value);
}

std::vector<int64_t> KernelInfo::GetInts(absl::string_view name) const {
  const onnx::AttributeProto* a = FindAttribute(name);
  if (a == nullptr) return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<float> KernelInfo::GetFloats(absl::string_view name) const {
  const onnx::AttributeProto* a = FindAttribute(name);
  if (a == nullptr) return {};
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

std::vector<std::string> KernelInfo::GetStrings(absl::string_view name) const {
  const onnx::AttributeProto* a = FindAttribute(name);
  if (a == nullptr) return {};
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

const onnx::TensorProto* KernelInfo::GetTensor(absl::string_view name) const {
  const onnx::AttributeProto* a = FindAttribute(name);
  return (a != nullptr && a->has_t()) ? &a->t() : nullptr;
}

const onnx::GraphProto* KernelInfo::GetGraph(absl::string_view name) const {
  const onnx::AttributeProto* a = FindAttribute(name);
  return (a != nullptr && a->has_g()) ? &a->g() : nullptr;
}

absl::StatusOr<int64_t> KernelInfo::RequireInt(absl::string_view name) const {
  const onnx::AttributeProto* a = FindAttribute(name);
  if (a == nullptr) return Error(absl::StrCat("required attribute '", name, "' is missing"));
  return a->i();
}

absl::Status KernelInfo::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(
      absl::StrCat("node '", node_name_, "' (", op_type_, "): ", message));
}

absl::Status KernelContext::SetOutput(int slot, Tensor value) {
  if (!value.is_tensor()) {
    return absl::UnimplementedError("this runtime holds no sequence or optional values");
  }
  absl::StatusOr<Tensor*> out = MakeOutputTensor(slot, value.dtype(), value.shape());
  if (!out.ok()) return out.status();
  if (value.is_string()) {
    std::copy_n(value.data<std::string>(), value.NumElements(),
                (*out)->mutable_data<std::string>());
    return absl::OkStatus();
  }
  if (value.bytes() > 0) std::memcpy((*out)->raw_mutable_data(), value.raw_data(), value.bytes());
  return absl::OkStatus();
}

}  // namespace inferd::engine

namespace inferd::engine {

absl::StatusOr<Tensor> CopyValue(KernelContext& ctx, const Tensor& value) {
  if (value.is_string()) return Tensor::StringsCopy(value, value.shape());
  if (value.is_tensor()) {
    absl::StatusOr<Tensor> copy = ctx.MakeTemporaryTensor(value.dtype(), value.shape());
    if (!copy.ok()) return copy.status();
    if (value.bytes() > 0) std::memcpy(copy->raw_mutable_data(), value.raw_data(), value.bytes());
    return copy;
  }
  std::vector<Tensor> items;
  items.reserve(value.items().size());
  for (const Tensor& item : value.items()) {
    absl::StatusOr<Tensor> copy = CopyValue(ctx, item);
    if (!copy.ok()) return copy.status();
    items.push_back(std::move(*copy));
  }
  if (value.is_sequence()) return Tensor::Sequence(value.dtype(), std::move(items));
  if (items.empty()) return Tensor::OptionalNone(value.dtype());
  return Tensor::OptionalOf(std::move(items[0]));
}

}  // namespace inferd::engine
