// Ops that pass their input through: the output is an alias of the input (no copy when the plan
// allows it; OutputAliases declares it).
//   Identity  any fixed-size element type; a sequence or optional input is copied (its tensors
//             into execution-side buffers, docs/sequences.md).
//   Dropout   inference: output = input; the optional mask output is all true (opsets 10+: bool;
//             earlier: ones of the input's type). Training (opsets < 7: is_test = 0; 12+: the
//             training_mode input true) is UNIMPLEMENTED, except with ratio 0, where it is the
//             identity too.
#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "engine/domain.h"
#include "kernels/cpu/float16.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/unary_kernel.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Tensor;

class IdentityKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<IdentityKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<IdentityKernel>(new IdentityKernel(info));
  }

  std::vector<std::pair<int, int>> OutputAliases() const override {
    if (!tensor_) return {};
    return {{0, 0}};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    if (!x->is_tensor()) {
      INFERD_ASSIGN_OR_RETURN(Tensor copy, engine::CopyValue(ctx, *x));
      return ctx.SetOutput(0, std::move(copy));
    }
    return ctx.MakeOutputAlias(0, 0, x->shape()).status();
  }

 private:
  explicit IdentityKernel(const KernelInfo& info)
      : node_(info), tensor_(info.input(0).kind == engine::ValueKind::kTensor) {}
  const NodeLabel node_;
  const bool tensor_;  // the input is a tensor (not a sequence or optional): an alias
};

using DropoutTypes = TypeList<float, double, Float16, BFloat16>;

class DropoutKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<DropoutKernel>> Create(const KernelInfo& info) {
    const int opset = info.opset();
    if (opset < 7 && info.GetInt("is_test", 0) == 0) {
      // Opsets 1-6 train unless is_test is set; with ratio 0 training changes nothing.
      if (info.GetFloat("ratio", 0.5f) != 0.0f) {
        return absl::UnimplementedError(
            absl::StrCat(NodeLabel(info).prefix(), "training mode (is_test = 0) is not supported"));
      }
    }
    if (opset >= 12) {
      // A constant training_mode = true is refused at load unless ratio is a constant 0.
      const Tensor* training = info.input(2).constant;
      const Tensor* ratio = info.input(1).constant;
      const bool ratio_unknown = info.input_present(1) && ratio == nullptr;
      if (training != nullptr && !ratio_unknown) {
        INFERD_RETURN_IF_ERROR(CheckInference(NodeLabel(info), training, ratio));
      }
    }
    return std::unique_ptr<DropoutKernel>(new DropoutKernel(info, opset >= 10, opset >= 12));
  }

  std::vector<std::pair<int, int>> OutputAliases() const override { return {{0, 0}}; }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    if (training_input_) {
      INFERD_RETURN_IF_ERROR(CheckInference(node_, ctx.input(2), ctx.input(1)));
    }
    INFERD_RETURN_IF_ERROR(ctx.MakeOutputAlias(0, 0, x->shape()).status());
    if (ctx.num_outputs() < 2 || !ctx.output_wanted(1)) return absl::OkStatus();
    const DataType mask_type = bool_mask_ ? DataType::kBool : x->dtype();
    INFERD_ASSIGN_OR_RETURN(Tensor * mask, ctx.MakeOutputTensor(1, mask_type, x->shape()));
    if (bool_mask_) {
      std::memset(mask->raw_mutable_data(), 1, mask->bytes());
      return absl::OkStatus();
    }
    return Dispatch(DropoutTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T one;
      if constexpr (std::is_floating_point_v<T>) {
        one = T(1);
      } else {
        one = T::From(1.0f);
      }
      std::fill_n(mask->mutable_data<T>(), mask->NumElements(), one);
      return absl::OkStatus();
    });
  }

 private:
  DropoutKernel(const KernelInfo& info, bool bool_mask, bool training_input)
      : node_(info), bool_mask_(bool_mask), training_input_(training_input) {}

  // Opsets 12+: training_mode true is refused unless ratio is 0 (both optional inputs).
  static absl::Status CheckInference(const NodeLabel& node, const Tensor* training,
                                     const Tensor* r) {
    if (training == nullptr) return absl::OkStatus();
    INFERD_RETURN_IF_ERROR(CheckType(*training, DataType::kBool, 2, node));
    if (training->NumElements() != 1) {
      return node.InvalidArgument(
          absl::StrCat("training_mode must be a scalar, got shape ", training->shape().ToString()));
    }
    if (!training->data<bool>()[0]) return absl::OkStatus();
    float ratio = 0.5f;
    if (r != nullptr && r->NumElements() == 1) {
      Visit(TypeList<float, double, Float16>{}, r->dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T v = r->data<T>()[0];
        if constexpr (std::is_same_v<T, Float16>) {
          ratio = v.ToFloat();
        } else {
          ratio = static_cast<float>(v);
        }
      });
    }
    if (ratio == 0.0f) return absl::OkStatus();
    return node.Unimplemented("training_mode = true (random dropout) is not supported");
  }

  const NodeLabel node_;
  const bool bool_mask_;       // opsets 10+
  const bool training_input_;  // opsets 12+: ratio and training_mode are inputs
};

}  // namespace

std::vector<engine::KernelDef> PassThroughKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "Identity", 1, kMaxOpset, FixedSizeTypes(),
                 FactoryOf<IdentityKernel>()),
          CpuDef(engine::kOnnxDomain, "Dropout", 1, kMaxOpset, TypesOf(DropoutTypes{}),
                 FactoryOf<DropoutKernel>())};
}

}  // namespace inferd::kernels::cpu
