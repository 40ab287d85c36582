// The unary ops on CUDA, float32 (the arithmetic is in unary.cu, the opsets the CPU kernels'):
//   Relu, Sigmoid, Tanh, Neg, Abs, Sqrt, Reciprocal, Exp, Log (6+), Erf (9+), Gelu (20+,
//   approximate "none" or "tanh"), Sin, Cos (7+), Floor, Ceil (1+), Round (11+);
//   LeakyRelu, Elu, Selu, HardSigmoid, Softplus (1+), HardSwish (14+): attributes read at
//   creation;
//   com.microsoft Gelu, FastGelu (optional bias), BiasGelu (bias), QuickGelu (alpha), version 1:
//   the bias [last dim of X] is added to X before the activation;
//   Clip, float32, int32, int64: min / max attributes (opsets 1-10), optional scalar inputs 1 and
//   2 (11+), read on the host (host inputs).
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"
#include "engine/cuda_kernel_context.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/kernel_def.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Tensor;

class UnaryKernel final : public engine::OpKernel {
 public:
  UnaryKernel(const KernelInfo& info, UnaryOp op, UnaryParams params = {})
      : node_(info.node_name()), op_(op), params_(params) {}

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda,
                            engine::CudaContextOf(ctx, node_));
    const Tensor* x = ctx.input(0);
    if (x == nullptr)
      return absl::InvalidArgumentError(absl::StrCat("node '", node_, "': no input"));
    if (x->dtype() != DataType::kFloat32) {
      return absl::UnimplementedError(absl::StrCat("node '", node_, "': element type ",
                                                   engine::DataTypeName(x->dtype()),
                                                   " has no CUDA kernel (float32 only)"));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), x->shape()));
    return CudaStatus(LaunchUnary(op_, x->data<float>(), y->mutable_data<float>(), x->NumElements(),
                                  cuda->cuda_stream(), params_),
                      absl::StrCat("node '", node_, "'"));
  }

 private:
  const std::string node_;
  const UnaryOp op_;
  const UnaryParams params_;
};

// com.microsoft's activations of X + bias (bias [last dim of X], absent for Gelu and QuickGelu,
// optional for FastGelu). The checks are the CPU kernel's (kernels/cpu/contrib_activation.cc).
enum class Bias { kNone, kOptional, kRequired };

class BiasUnaryKernel final : public engine::OpKernel {
 public:
  BiasUnaryKernel(const KernelInfo& info, UnaryOp op, Bias bias, UnaryParams params)
      : node_(info), op_(op), bias_(bias), params_(params) {}

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(cpu::CheckType(*x, DataType::kFloat32, 0, node_));
    const engine::Shape& shape = x->shape();
    const Tensor* bias = nullptr;
    if (bias_ == Bias::kRequired) {
      INFERD_ASSIGN_OR_RETURN(bias, cpu::RequiredInput(ctx, 1, node_));
    } else if (bias_ == Bias::kOptional && ctx.num_inputs() > 1) {
      bias = ctx.input(1);
    }
    UnaryParams params = params_;
    if (bias != nullptr) {
      if (shape.rank() == 0) {
        return node_.InvalidArgument("X must have rank >= 1 when a bias is given");
      }
      const int64_t d = shape[shape.rank() - 1];
      INFERD_RETURN_IF_ERROR(cpu::CheckType(*bias, DataType::kFloat32, 1, node_));
      if (bias->shape().rank() != 1 || bias->shape()[0] != d) {
        return node_.InvalidArgument(
            absl::StrCat("bias must be [", d, "] (X's last dim), got ", bias->shape().ToString()));
      }
      params.bias = bias->data<float>();
      params.bias_len = d;
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, shape));
    return node_.Launched(LaunchUnary(op_, x->data<float>(), y->mutable_data<float>(),
                                      x->NumElements(), cuda->cuda_stream(), params));
  }

 private:
  const CudaNode node_;
  const UnaryOp op_;
  const Bias bias_;
  const UnaryParams params_;
};

// Clip: bounds from the attributes (opsets 1-10, float only; integers are not clipped there, as
// on the CPU) or the optional scalar inputs 1 and 2 of X's type (11+, host inputs).
class ClipKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ClipKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<ClipKernel>(new ClipKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    absl::StatusOr<ElementType> type = ElementTypeOf(x->dtype());
    if (!type.ok()) return node_.Unimplemented(type.status().message());
    ClipBounds b;
    b.float_lo = std::numeric_limits<float>::lowest();
    b.float_hi = std::numeric_limits<float>::max();
    b.int_lo = *type == ElementType::kInt32 ? std::numeric_limits<int32_t>::min()
                                            : std::numeric_limits<int64_t>::min();
    b.int_hi = *type == ElementType::kInt32 ? std::numeric_limits<int32_t>::max()
                                            : std::numeric_limits<int64_t>::max();
    if (from_inputs_) {
      INFERD_RETURN_IF_ERROR(Bound(ctx, 1, *x, &b.float_lo, &b.int_lo));
      INFERD_RETURN_IF_ERROR(Bound(ctx, 2, *x, &b.float_hi, &b.int_hi));
    } else {
      b.float_lo = attr_lo_;
      b.float_hi = attr_hi_;
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), x->shape()));
    return node_.Launched(LaunchClip(*type, x->raw_data(), y->raw_mutable_data(), x->NumElements(),
                                     b, cuda->cuda_stream()));
  }

 private:
  explicit ClipKernel(const KernelInfo& info)
      : node_(info),
        from_inputs_(info.opset() >= 11),
        attr_lo_(info.GetFloat("min", std::numeric_limits<float>::lowest())),
        attr_hi_(info.GetFloat("max", std::numeric_limits<float>::max())) {}

  // Optional input `i` (a host input), one element of X's type, into the bound of X's kind.
  absl::Status Bound(const KernelContext& ctx, int i, const Tensor& x, float* float_bound,
                     int64_t* int_bound) const {
    const Tensor* t = i < ctx.num_inputs() ? ctx.input(i) : nullptr;
    if (t == nullptr) return absl::OkStatus();
    INFERD_RETURN_IF_ERROR(cpu::CheckType(*t, x.dtype(), i, node_));
    if (t->NumElements() != 1) {
      return node_.InvalidArgument(absl::StrCat(
          i == 1 ? "min" : "max", " must be a scalar, got shape ", t->shape().ToString()));
    }
    double value = 0;
    if (x.dtype() == DataType::kFloat32 && cpu::ReadScalarAsDouble(*t, &value)) {
      *float_bound = static_cast<float>(value);
    } else if (!cpu::ReadScalarAsInt64(*t, int_bound)) {
      return node_.Internal("cannot read the bound");
    }
    return absl::OkStatus();
  }

  const CudaNode node_;
  const bool from_inputs_;
  const float attr_lo_, attr_hi_;
};

engine::KernelDef Def(const char* op_type, UnaryOp op, int since_version = 6) {
  engine::KernelDef def;
  def.domain = engine::kOnnxDomain;
  def.op_type = op_type;
  def.since_version = since_version;
  def.end_version = kMaxOpset;
  def.device_type = engine::DeviceKind::kCuda;
  def.types = {DataType::kFloat32};
  def.create = [op](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    return std::make_unique<UnaryKernel>(info, op);
  };
  def.estimate_workspace = [](const KernelInfo&) -> absl::StatusOr<size_t> { return 0; };
  return def;
}

// An op whose attributes `read` turns into its parameters at creation.
template <typename Read>
engine::KernelDef ParamDef(const char* op_type, UnaryOp op, int since_version, Read read) {
  engine::KernelDef def = Def(op_type, op, since_version);
  def.create = [op,
                read](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    return std::make_unique<UnaryKernel>(info, op, read(info));
  };
  return def;
}

engine::KernelDef MicrosoftDef(const char* op_type, UnaryOp op, Bias bias) {
  return CudaDef(
      engine::kMicrosoftDomain, op_type, 1, 1, {DataType::kFloat32},
      [op, bias](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
        const float alpha = info.GetFloat("alpha", 1.702f);  // QuickGelu
        if (!std::isfinite(alpha)) return info.Error("alpha must be finite");
        return std::make_unique<BiasUnaryKernel>(info, op, bias, UnaryParams{alpha});
      });
}

}  // namespace

std::vector<engine::KernelDef> UnaryKernelDefs() {
  std::vector<engine::KernelDef> defs;
  defs.push_back(Def("Relu", UnaryOp::kRelu));
  defs.push_back(Def("Sigmoid", UnaryOp::kSigmoid));
  defs.push_back(Def("Tanh", UnaryOp::kTanh));
  defs.push_back(Def("Neg", UnaryOp::kNeg));
  defs.push_back(Def("Abs", UnaryOp::kAbs));
  defs.push_back(Def("Sqrt", UnaryOp::kSqrt));
  defs.push_back(Def("Reciprocal", UnaryOp::kReciprocal));
  defs.push_back(Def("Exp", UnaryOp::kExp));
  defs.push_back(Def("Log", UnaryOp::kLog));
  defs.push_back(Def("Erf", UnaryOp::kErf, 9));
  // Gelu: the form from the `approximate` attribute, read at creation.
  engine::KernelDef gelu = Def("Gelu", UnaryOp::kGelu, 20);
  gelu.create = [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    const std::string mode = info.GetString("approximate", "none");
    if (mode != "none" && mode != "tanh") {
      return info.Error(absl::StrCat("approximate must be 'none' or 'tanh', got '", mode, "'"));
    }
    return std::make_unique<UnaryKernel>(info,
                                         mode == "tanh" ? UnaryOp::kGeluTanh : UnaryOp::kGelu);
  };
  defs.push_back(std::move(gelu));
  defs.push_back(Def("Sin", UnaryOp::kSin, 7));
  defs.push_back(Def("Cos", UnaryOp::kCos, 7));
  defs.push_back(Def("Floor", UnaryOp::kFloor, 1));
  defs.push_back(Def("Ceil", UnaryOp::kCeil, 1));
  defs.push_back(Def("Round", UnaryOp::kRound, 11));
  // The activations with attributes, defaults as ONNX (and the CPU kernels) have them.
  defs.push_back(ParamDef("LeakyRelu", UnaryOp::kLeakyRelu, 1, [](const KernelInfo& info) {
    return UnaryParams{info.GetFloat("alpha", 0.01f)};
  }));
  defs.push_back(ParamDef("Elu", UnaryOp::kElu, 1, [](const KernelInfo& info) {
    return UnaryParams{info.GetFloat("alpha", 1.0f)};
  }));
  defs.push_back(ParamDef("Selu", UnaryOp::kSelu, 1, [](const KernelInfo& info) {
    return UnaryParams{info.GetFloat("alpha", 1.67326319217681884765625f), 0.0f,
                       info.GetFloat("gamma", 1.05070102214813232421875f)};
  }));
  defs.push_back(ParamDef("HardSigmoid", UnaryOp::kHardSigmoid, 1, [](const KernelInfo& info) {
    return UnaryParams{info.GetFloat("alpha", 0.2f), info.GetFloat("beta", 0.5f)};
  }));
  defs.push_back(Def("HardSwish", UnaryOp::kHardSwish, 14));
  defs.push_back(Def("Softplus", UnaryOp::kSoftplus, 1));
  // com.microsoft, version 1.
  defs.push_back(MicrosoftDef("Gelu", UnaryOp::kGelu, Bias::kNone));
  defs.push_back(MicrosoftDef("FastGelu", UnaryOp::kGeluTanh, Bias::kOptional));
  defs.push_back(MicrosoftDef("BiasGelu", UnaryOp::kGelu, Bias::kRequired));
  defs.push_back(MicrosoftDef("QuickGelu", UnaryOp::kQuickGelu, Bias::kNone));
  // Clip: from opset 11 the bounds are host inputs 1 and 2.
  const std::vector<DataType> clip_types = {DataType::kFloat32, DataType::kInt32, DataType::kInt64};
  defs.push_back(
      CudaDef(engine::kOnnxDomain, "Clip", 1, 10, clip_types, cpu::FactoryOf<ClipKernel>()));
  defs.push_back(CudaDef(engine::kOnnxDomain, "Clip", 11, kMaxOpset, clip_types,
                         cpu::FactoryOf<ClipKernel>(), {1, 2}));
  return defs;
}

}  // namespace inferd::kernels::cuda
