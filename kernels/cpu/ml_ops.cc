// Numeric operators of the ai.onnx.ml domain (opset 1), what scikit-learn converters write
// around a model (string forms belong elsewhere):
//
//   Binarizer              Y = X > threshold ? 1 : 0, X's type
//   ArrayFeatureExtractor  X[..., indices] along the last axis; X [N...] -> [N..., len], a 1-D X
//                          gives [1, len] (as ONNX Runtime); indices int64, checked in range
//   Scaler                 Y = (X - offset) * scale as float32, offset / scale one value or one
//                          per feature (X's last dim)
//   Normalizer             each row of X ([C] or [N, C]) divided by max x ("MAX", signed: the
//                          spec's formula and ONNX Runtime's), sum |x| ("L1") or
//                          sqrt(sum x^2) ("L2"), as float32; a row whose divisor is 0 stays as
//                          it is (as ONNX Runtime)
//   LinearRegressor        Y[n, t] = sum_c X[n, c] * coefficients[t * C + c] + intercepts[t],
//                          float32 [N, targets]; post_transform NONE only
//   TreeEnsembleRegressor, TreeEnsemble: tree_ensemble.cc
//
// X may be float32, float64, int32 or int64 (Binarizer keeps the type). Own code, one thread.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/ml_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/tree_ensemble.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class BinarizerKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<BinarizerKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<BinarizerKernel>(new BinarizerKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), x->shape()));
    return Dispatch(MlTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x->data<T>();
      T* out = y->mutable_data<T>();
      for (int64_t i = 0; i < x->NumElements(); ++i) {
        out[i] = static_cast<double>(in[i]) > threshold_ ? T(1) : T(0);
      }
      return absl::OkStatus();
    });
  }

 private:
  explicit BinarizerKernel(const KernelInfo& info)
      : node_(info), threshold_(info.GetFloat("threshold", 0.0f)) {}
  const NodeLabel node_;
  const double threshold_;
};

class ArrayFeatureExtractorKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ArrayFeatureExtractorKernel>> Create(
      const KernelInfo& info) {
    return std::unique_ptr<ArrayFeatureExtractorKernel>(new ArrayFeatureExtractorKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* idx, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*idx, DataType::kInt64, 1, node_));
    const Shape& xs = x->shape();
    if (xs.rank() == 0) return node_.InvalidArgument("X must have rank >= 1, got a scalar");
    const int64_t last = xs[xs.rank() - 1];
    const int64_t k = idx->NumElements();
    const int64_t* index = idx->data<int64_t>();
    for (int64_t j = 0; j < k; ++j) {
      if (index[j] < 0 || index[j] >= last) {
        return node_.InvalidArgument(
            absl::StrCat("index ", index[j], " is outside [0, ", last, ") (X's last dim)"));
      }
    }
    Shape ys;
    if (xs.rank() == 1) {
      ys = Shape{1, k};
    } else {
      ys = Shape(xs.dims().subspan(0, xs.rank() - 1));
      ys.push_back(k);
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), ys));
    const size_t elem = engine::ElementSize(x->dtype());
    if (elem == 0) {
      return node_.Unimplemented(
          absl::StrCat("X of type ", engine::DataTypeName(x->dtype()), " is not supported"));
    }
    const int64_t rows = last == 0 ? 0 : x->NumElements() / last;
    const auto* src = static_cast<const unsigned char*>(x->raw_data());
    auto* dst = static_cast<unsigned char*>(y->raw_mutable_data());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < k; ++j) {
        std::copy_n(src + (r * last + index[j]) * elem, elem, dst + (r * k + j) * elem);
      }
    }
    return absl::OkStatus();
  }

 private:
  explicit ArrayFeatureExtractorKernel(const KernelInfo& info) : node_(info) {}
  const NodeLabel node_;
};

class ScalerKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ScalerKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<ScalerKernel>(
        new ScalerKernel(info, info.GetFloats("offset"), info.GetFloats("scale")));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const int64_t c = x->shape().rank() == 0 ? 1 : x->shape()[x->shape().rank() - 1];
    for (const auto* v : {&offset_, &scale_}) {
      const int64_t size = static_cast<int64_t>(v->size());
      if (size > 1 && size != c) {
        return node_.InvalidArgument(absl::StrCat(v == &offset_ ? "offset" : "scale", " has ", size,
                                                  " values; X has ", c, " features"));
      }
    }
    INFERD_ASSIGN_OR_RETURN(std::vector<double> in, MlAsDoubles(*x, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, x->shape()));
    float* out = y->mutable_data<float>();
    for (size_t i = 0; i < in.size(); ++i) {
      const size_t f = c == 0 ? 0 : i % c;
      const float off = offset_.empty() ? 0.0f : offset_[offset_.size() == 1 ? 0 : f];
      const float sc = scale_.empty() ? 1.0f : scale_[scale_.size() == 1 ? 0 : f];
      out[i] = (static_cast<float>(in[i]) - off) * sc;
    }
    return absl::OkStatus();
  }

 private:
  ScalerKernel(const KernelInfo& info, std::vector<float> offset, std::vector<float> scale)
      : node_(info), offset_(std::move(offset)), scale_(std::move(scale)) {}
  const NodeLabel node_;
  const std::vector<float> offset_, scale_;
};

class NormalizerKernel final : public engine::OpKernel {
 public:
  enum class Norm { kMax, kL1, kL2 };

  static absl::StatusOr<std::unique_ptr<NormalizerKernel>> Create(const KernelInfo& info) {
    const std::string norm = info.GetString("norm", "MAX");
    Norm n;
    if (norm == "MAX") {
      n = Norm::kMax;
    } else if (norm == "L1") {
      n = Norm::kL1;
    } else if (norm == "L2") {
      n = Norm::kL2;
    } else {
      return NodeLabel(info).InvalidArgument(
          absl::StrCat("norm must be MAX, L1 or L2, got \"", norm, "\""));
    }
    return std::unique_ptr<NormalizerKernel>(new NormalizerKernel(info, n));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    int64_t rows = 0, cols = 0;
    INFERD_RETURN_IF_ERROR(MlRowsOf(x->shape(), node_, &rows, &cols));
    INFERD_ASSIGN_OR_RETURN(std::vector<double> in, MlAsDoubles(*x, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, x->shape()));
    float* out = y->mutable_data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = in.data() + r * cols;
      double d = norm_ == Norm::kMax && cols > 0 ? row[0] : 0.0;
      for (int64_t j = 0; j < cols; ++j) {
        if (norm_ == Norm::kMax) d = std::max(d, row[j]);
        if (norm_ == Norm::kL1) d += std::fabs(row[j]);
        if (norm_ == Norm::kL2) d += row[j] * row[j];
      }
      if (norm_ == Norm::kL2) d = std::sqrt(d);
      for (int64_t j = 0; j < cols; ++j) {
        out[r * cols + j] = static_cast<float>(d == 0.0 ? row[j] : row[j] / d);
      }
    }
    return absl::OkStatus();
  }

 private:
  NormalizerKernel(const KernelInfo& info, Norm norm) : node_(info), norm_(norm) {}
  const NodeLabel node_;
  const Norm norm_;
};

class LinearRegressorKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<LinearRegressorKernel>> Create(const KernelInfo& info) {
    const NodeLabel node(info);
    const int64_t targets = info.GetInt("targets", 1);
    const std::vector<float> coef = info.GetFloats("coefficients");
    const std::vector<float> intercepts = info.GetFloats("intercepts");
    if (targets <= 0 || coef.empty() || coef.size() % targets != 0) {
      return node.InvalidArgument(absl::StrCat("coefficients (", coef.size(),
                                               " values) must be targets (", targets,
                                               ") rows of the feature count"));
    }
    if (!intercepts.empty() && static_cast<int64_t>(intercepts.size()) != targets) {
      return node.InvalidArgument(absl::StrCat("intercepts has ", intercepts.size(),
                                               " values, expected targets = ", targets));
    }
    const std::string post = info.GetString("post_transform", "NONE");
    if (post != "NONE") {
      return node.Unimplemented(absl::StrCat("post_transform ", post, " is not supported"));
    }
    return std::unique_ptr<LinearRegressorKernel>(
        new LinearRegressorKernel(info, targets, coef, intercepts));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    int64_t rows = 0, cols = 0;
    INFERD_RETURN_IF_ERROR(MlRowsOf(x->shape(), node_, &rows, &cols));
    const int64_t features = static_cast<int64_t>(coef_.size()) / targets_;
    if (cols != features) {
      return node_.InvalidArgument(
          absl::StrCat("X has ", cols, " features, the coefficients ", features));
    }
    INFERD_ASSIGN_OR_RETURN(std::vector<double> in, MlAsDoubles(*x, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.MakeOutputTensor(0, DataType::kFloat32, Shape{rows, targets_}));
    float* out = y->mutable_data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t t = 0; t < targets_; ++t) {
        float acc = intercepts_.empty() ? 0.0f : intercepts_[t];
        for (int64_t c = 0; c < cols; ++c) {
          acc += static_cast<float>(in[r * cols + c]) * coef_[t * cols + c];
        }
        out[r * targets_ + t] = acc;
      }
    }
    return absl::OkStatus();
  }

 private:
  LinearRegressorKernel(const KernelInfo& info, int64_t targets, std::vector<float> coef,
                        std::vector<float> intercepts)
      : node_(info),
        targets_(targets),
        coef_(std::move(coef)),
        intercepts_(std::move(intercepts)) {}
  const NodeLabel node_;
  const int64_t targets_;
  const std::vector<float> coef_, intercepts_;
};

}  // namespace

std::vector<engine::KernelDef> MlKernelDefs() {
  const std::vector<DataType> types = TypesOf(MlTypes{});
  // None of these changed after its first version (TreeEnsembleRegressor's 3 only added the
  // *_as_tensor attributes, refused at creation), so one definition covers every ai.onnx.ml
  // opset.
  std::vector<engine::KernelDef> defs = {
      CpuDef(kMlDomain, "Binarizer", 1, kMaxOpset, types, FactoryOf<BinarizerKernel>()),
      CpuDef(kMlDomain, "ArrayFeatureExtractor", 1, kMaxOpset, types,
             FactoryOf<ArrayFeatureExtractorKernel>()),
      CpuDef(kMlDomain, "Scaler", 1, kMaxOpset, types, FactoryOf<ScalerKernel>()),
      CpuDef(kMlDomain, "Normalizer", 1, kMaxOpset, types, FactoryOf<NormalizerKernel>()),
      CpuDef(kMlDomain, "LinearRegressor", 1, kMaxOpset, types, FactoryOf<LinearRegressorKernel>()),
  };
  for (engine::KernelDef& d : TreeEnsembleKernelDefs()) defs.push_back(std::move(d));
  return defs;
}

absl::Status MlRowsOf(const Shape& s, const NodeLabel& node, int64_t* rows, int64_t* cols) {
  if (s.rank() == 1) {
    *rows = 1;
    *cols = s[0];
  } else if (s.rank() == 2) {
    *rows = s[0];
    *cols = s[1];
  } else {
    return node.InvalidArgument(absl::StrCat("X must be [F] or [N, F], got ", s.ToString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> MlAsDoubles(const Tensor& x, const NodeLabel& node) {
  std::vector<double> v(x.NumElements());
  INFERD_RETURN_IF_ERROR(Dispatch(MlTypes{}, x.dtype(), node, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(x.data<T>()[i]);
    return absl::OkStatus();
  }));
  return v;
}

}  // namespace inferd::kernels::cpu
