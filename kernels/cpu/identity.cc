// Ops that pass their input through: the output is an alias of the input (no copy when the plan
// allows it; OutputAliases declares it).
//   Identity  any fixed-size element type; a sequence or optional input is copied (its tensors
//             into execution-side buffers, docs/sequences.md).
//   Dropout   inference: output = input; the optional mask output is all true (opsets 10+: bool;
//             earlier: ones of the input's type). Training (opsets 12+: the training_mode input
//             true, ratio in [0, 1)): mask = u >= ratio for u uniform in [0, 1), output =
//             mask ? x / (1 - ratio) : 0, from random_source.h's generator (the `seed`
//             attribute makes every run the same). Opsets < 7 with is_test = 0 are
//             UNIMPLEMENTED unless ratio is 0.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "engine/domain.h"
#include "kernels/cpu/float16.h"
#include "kernels/cpu/movement_types.h"
#include "kernels/cpu/random_source.h"
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
    // Opsets 12+ may train when the training_mode input is given and not a constant false.
    bool may_train = false;
    if (opset >= 12 && info.input_present(2)) {
      const Tensor* training = info.input(2).constant;
      may_train = training == nullptr || training->NumElements() != 1 ||
                  training->dtype() != DataType::kBool || training->data<bool>()[0];
    }
    std::optional<uint64_t> seed;
    if (info.HasAttribute("seed")) {
      seed = RandomSource::SeedFromAttribute(info.GetFloat("seed", 0.0f));
    }
    return std::unique_ptr<DropoutKernel>(
        new DropoutKernel(info, opset >= 10, opset >= 12, may_train, seed));
  }

  // Training makes a new output, so the alias is declared only for a node that cannot train
  // (an undeclared alias in an inference run is copied by the runtime).
  std::vector<std::pair<int, int>> OutputAliases() const override {
    if (may_train_) return {};
    return {{0, 0}};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    float ratio = 0.0f;
    bool training = false;
    if (training_input_) {
      INFERD_ASSIGN_OR_RETURN(training, Training(node_, ctx.input(2), ctx.input(1), &ratio));
    }
    if (training) return Train(ctx, *x, ratio);
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
  DropoutKernel(const KernelInfo& info, bool bool_mask, bool training_input, bool may_train,
                std::optional<uint64_t> seed)
      : node_(info),
        bool_mask_(bool_mask),
        training_input_(training_input),
        may_train_(may_train),
        seed_(seed) {}

  // Opsets 12+: whether this run trains (training_mode true and ratio not 0); the ratio.
  static absl::StatusOr<bool> Training(const NodeLabel& node, const Tensor* training,
                                       const Tensor* r, float* ratio) {
    if (training == nullptr) return false;
    INFERD_RETURN_IF_ERROR(CheckType(*training, DataType::kBool, 2, node));
    if (training->NumElements() != 1) {
      return node.InvalidArgument(
          absl::StrCat("training_mode must be a scalar, got shape ", training->shape().ToString()));
    }
    if (!training->data<bool>()[0]) return false;
    *ratio = 0.5f;
    if (r != nullptr) {
      if (r->NumElements() != 1) {
        return node.InvalidArgument(
            absl::StrCat("ratio must be a scalar, got shape ", r->shape().ToString()));
      }
      const bool known =
          Visit(TypeList<float, double, Float16, BFloat16>{}, r->dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T v = r->data<T>()[0];
            if constexpr (std::is_floating_point_v<T>) {
              *ratio = static_cast<float>(v);
            } else {
              *ratio = v.ToFloat();
            }
          });
      if (!known) {
        return node.InvalidArgument(
            absl::StrCat("ratio of type ", engine::DataTypeName(r->dtype()), " is not a float"));
      }
    }
    if (!(*ratio >= 0.0f && *ratio < 1.0f)) {
      return node.InvalidArgument(absl::StrCat("ratio must be in [0, 1), got ", *ratio));
    }
    return *ratio != 0.0f;
  }

  absl::Status Train(KernelContext& ctx, const Tensor& x, float ratio) const {
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x.dtype(), x.shape()));
    Tensor* mask = nullptr;
    if (ctx.num_outputs() >= 2 && ctx.output_wanted(1)) {
      INFERD_ASSIGN_OR_RETURN(mask, ctx.MakeOutputTensor(1, DataType::kBool, x.shape()));
    }
    RandomSource rng(seed_);
    const double scale = 1.0 / (1.0 - static_cast<double>(ratio));
    return Dispatch(DropoutTypes{}, x.dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data<T>();
      T* out = y->mutable_data<T>();
      bool* keep_out = mask == nullptr ? nullptr : mask->mutable_data<bool>();
      for (int64_t i = 0; i < x.NumElements(); ++i) {
        const bool keep = rng.Uniform() >= ratio;
        if (keep_out != nullptr) keep_out[i] = keep;
        if constexpr (std::is_floating_point_v<T>) {
          out[i] = keep ? static_cast<T>(in[i] * scale) : T(0);
        } else {
          out[i] = T::From(keep ? static_cast<float>(in[i].ToFloat() * scale) : 0.0f);
        }
      }
      return absl::OkStatus();
    });
  }

  const NodeLabel node_;
  const bool bool_mask_;       // opsets 10+
  const bool training_input_;  // opsets 12+: ratio and training_mode are inputs
  const bool may_train_;       // training_mode is given and not a constant false
  const std::optional<uint64_t> seed_;
};

}  // namespace

std::vector<engine::KernelDef> PassThroughKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "Identity", 1, kMaxOpset, MovementTypes(),
                 FactoryOf<IdentityKernel>()),
          CpuDef(engine::kOnnxDomain, "Dropout", 1, kMaxOpset, TypesOf(DropoutTypes{}),
                 FactoryOf<DropoutKernel>())};
}

}  // namespace inferd::kernels::cpu
