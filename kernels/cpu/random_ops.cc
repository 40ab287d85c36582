// The random operators: RandomUniform, RandomNormal (opset 1; shape from the `shape`
// attribute), RandomUniformLike, RandomNormalLike (1; input 0's shape), Bernoulli (15;
// y = u < p ? 1 : 0 per element of the probabilities p) and Multinomial (7; `sample_size` class
// indices per row of unnormalized log-probabilities).
//
// Reproducibility: with the `seed` attribute, every run starts a generator from that seed, so
// the same node and inputs give the same output in every run and every process (a seeded
// random op is a deterministic function, and kernels stay stateless, so concurrent runs need no
// lock). Without it, every run draws a fresh seed (std::random_device mixed with a counter).
// The values cannot match another runtime's (numpy's, ONNX Runtime's) generator: the node tests
// of these ops are checked by their properties (tests/conformance), the distributions by
// random_ops_test.
//
// Own code: 64-bit Mersenne Twister (std::mt19937_64, fully specified by the C++ standard);
// uniform doubles from its top 53 bits; normals by Box-Muller; one thread.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/float16.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/random_source.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {

namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

using RandomFloatTypes = TypeList<float, double, Float16>;
using BernoulliTypes = TypeList<float, double, Float16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                uint16_t, uint32_t, uint64_t, bool>;

template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return Float16::From(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
double ToDouble(T v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return v.ToFloat();
  } else {
    return static_cast<double>(v);
  }
}

// The `seed` attribute, if any.
std::optional<uint64_t> SeedOf(const KernelInfo& info) {
  if (!info.HasAttribute("seed")) return std::nullopt;
  return RandomSource::SeedFromAttribute(info.GetFloat("seed", 0.0f));
}

// `dtype` of a random op: the attribute, else `fallback`; one of `allowed`.
template <typename List>
absl::StatusOr<DataType> DtypeOf(const KernelInfo& info, DataType fallback, List list) {
  const int64_t v = info.GetInt("dtype", static_cast<int64_t>(fallback));
  for (DataType t : TypesOf(list)) {
    if (static_cast<int64_t>(t) == v) return t;
  }
  return NodeLabel(info).Unimplemented(absl::StrCat("dtype ", v, " is not supported"));
}

enum class Kind { kUniform, kNormal };

// RandomUniform / RandomNormal (kLike false) and their *Like forms.
template <Kind kKind, bool kLike>
class RandomKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<RandomKernel>> Create(const KernelInfo& info) {
    const NodeLabel node(info);
    DataType fallback = DataType::kFloat32;
    if (kLike) {
      const DataType in = info.input(0).type;
      fallback = in == DataType::kFloat64 || in == DataType::kFloat16 ? in : DataType::kFloat32;
      if (!info.HasAttribute("dtype") && in != DataType::kUndefined && in != fallback) {
        return node.InvalidArgument(absl::StrCat("without dtype the output takes the input's ",
                                                 "type, which must be a float type, got ",
                                                 engine::DataTypeName(in)));
      }
    }
    INFERD_ASSIGN_OR_RETURN(DataType dtype, DtypeOf(info, fallback, RandomFloatTypes{}));
    Shape shape;
    if (!kLike) {
      if (!info.HasAttribute("shape")) return node.InvalidArgument("attribute 'shape' is required");
      for (int64_t d : info.GetInts("shape")) {
        if (d < 0) {
          return node.InvalidArgument(absl::StrCat("shape has a negative dim ", d));
        }
        shape.push_back(d);
      }
      if (!CheckedProduct(shape.dims())) return node.InvalidArgument("shape overflows");
    }
    const double a =
        kKind == Kind::kUniform ? info.GetFloat("low", 0.0f) : info.GetFloat("mean", 0.0f);
    const double b =
        kKind == Kind::kUniform ? info.GetFloat("high", 1.0f) : info.GetFloat("scale", 1.0f);
    if (kKind == Kind::kUniform && !(a <= b)) {
      return node.InvalidArgument(absl::StrCat("low ", a, " must not exceed high ", b));
    }
    return std::unique_ptr<RandomKernel>(new RandomKernel(info, dtype, shape, a, b));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    Shape shape = shape_;
    if (kLike) {
      INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
      shape = x->shape();
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, dtype_, shape));
    RandomSource rng(seed_);
    return Dispatch(RandomFloatTypes{}, dtype_, node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = y->mutable_data<T>();
      for (int64_t i = 0; i < y->NumElements(); ++i) {
        const double v =
            kKind == Kind::kUniform ? a_ + (b_ - a_) * rng.Uniform() : a_ + b_ * rng.Normal();
        out[i] = FromDouble<T>(v);
      }
      return absl::OkStatus();
    });
  }

 private:
  RandomKernel(const KernelInfo& info, DataType dtype, Shape shape, double a, double b)
      : node_(info), dtype_(dtype), shape_(std::move(shape)), a_(a), b_(b), seed_(SeedOf(info)) {}

  const NodeLabel node_;
  const DataType dtype_;
  const Shape shape_;   // not kLike
  const double a_, b_;  // uniform: low, high; normal: mean, scale
  const std::optional<uint64_t> seed_;
};

class BernoulliKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<BernoulliKernel>> Create(const KernelInfo& info) {
    const DataType in = info.input(0).type;
    INFERD_ASSIGN_OR_RETURN(
        DataType dtype,
        DtypeOf(info, in == DataType::kUndefined ? DataType::kFloat32 : in, BernoulliTypes{}));
    return std::unique_ptr<BernoulliKernel>(new BernoulliKernel(info, dtype));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* p, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, dtype_, p->shape()));
    RandomSource rng(seed_);
    return Dispatch(RandomFloatTypes{}, p->dtype(), node_, [&](auto ptag) {
      using P = typename decltype(ptag)::type;
      const P* prob = p->data<P>();
      for (int64_t i = 0; i < p->NumElements(); ++i) {
        const double v = ToDouble(prob[i]);
        if (!(v >= 0.0 && v <= 1.0)) {
          return node_.InvalidArgument(
              absl::StrCat("input element ", i, " is ", v, ", not a probability in [0, 1]"));
        }
      }
      return Dispatch(BernoulliTypes{}, dtype_, node_, [&](auto ytag) {
        using Y = typename decltype(ytag)::type;
        Y* out = y->mutable_data<Y>();
        for (int64_t i = 0; i < p->NumElements(); ++i) {
          out[i] = FromDouble<Y>(rng.Uniform() < ToDouble(prob[i]) ? 1.0 : 0.0);
        }
        return absl::OkStatus();
      });
    });
  }

 private:
  BernoulliKernel(const KernelInfo& info, DataType dtype)
      : node_(info), dtype_(dtype), seed_(SeedOf(info)) {}

  const NodeLabel node_;
  const DataType dtype_;
  const std::optional<uint64_t> seed_;
};

class MultinomialKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<MultinomialKernel>> Create(const KernelInfo& info) {
    const NodeLabel node(info);
    const int64_t dtype = info.GetInt("dtype", static_cast<int64_t>(DataType::kInt32));
    if (dtype != static_cast<int64_t>(DataType::kInt32) &&
        dtype != static_cast<int64_t>(DataType::kInt64)) {
      return node.InvalidArgument(absl::StrCat("dtype must be int32 or int64, got ", dtype));
    }
    const int64_t samples = info.GetInt("sample_size", 1);
    if (samples < 0) {
      return node.InvalidArgument(absl::StrCat("sample_size must be >= 0, got ", samples));
    }
    return std::unique_ptr<MultinomialKernel>(
        new MultinomialKernel(info, static_cast<DataType>(dtype), samples));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    if (x->shape().rank() != 2 || x->shape()[1] == 0) {
      return node_.InvalidArgument(absl::StrCat("input must be [batch_size, class_size] with ",
                                                "class_size > 0, got ", x->shape().ToString()));
    }
    const int64_t batch = x->shape()[0], classes = x->shape()[1];
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, dtype_, {batch, samples_}));
    RandomSource rng(seed_);
    std::vector<double> cumulative(classes);
    return Dispatch(RandomFloatTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int64_t r = 0; r < batch; ++r) {
        // Cumulative softmax of the row (shifted by its maximum).
        const T* row = x->data<T>() + r * classes;
        double top = -INFINITY;
        for (int64_t c = 0; c < classes; ++c) top = std::max(top, ToDouble(row[c]));
        double total = 0.0;
        for (int64_t c = 0; c < classes; ++c) {
          total += std::isfinite(top) ? std::exp(ToDouble(row[c]) - top) : 0.0;
          cumulative[c] = total;
        }
        if (!(total > 0.0) || !std::isfinite(total)) {
          return node_.InvalidArgument(absl::StrCat("row ", r, " has no finite probability"));
        }
        for (int64_t s = 0; s < samples_; ++s) {
          const double u = rng.Uniform() * total;
          const int64_t c = std::min<int64_t>(
              classes - 1,
              std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
          if (dtype_ == DataType::kInt32) {
            y->mutable_data<int32_t>()[r * samples_ + s] = static_cast<int32_t>(c);
          } else {
            y->mutable_data<int64_t>()[r * samples_ + s] = c;
          }
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  MultinomialKernel(const KernelInfo& info, DataType dtype, int64_t samples)
      : node_(info), dtype_(dtype), samples_(samples), seed_(SeedOf(info)) {}

  const NodeLabel node_;
  const DataType dtype_;
  const int64_t samples_;
  const std::optional<uint64_t> seed_;
};

}  // namespace

std::vector<engine::KernelDef> RandomKernelDefs() {
  const std::vector<DataType> floats = TypesOf(RandomFloatTypes{});
  return {
      // No input: the type list is the output's.
      CpuDef(engine::kOnnxDomain, "RandomUniform", 1, kMaxOpset, {},
             FactoryOf<RandomKernel<Kind::kUniform, false>>()),
      CpuDef(engine::kOnnxDomain, "RandomNormal", 1, kMaxOpset, {},
             FactoryOf<RandomKernel<Kind::kNormal, false>>()),
      CpuDef(engine::kOnnxDomain, "RandomUniformLike", 1, kMaxOpset, {},
             FactoryOf<RandomKernel<Kind::kUniform, true>>()),
      CpuDef(engine::kOnnxDomain, "RandomNormalLike", 1, kMaxOpset, {},
             FactoryOf<RandomKernel<Kind::kNormal, true>>()),
      CpuDef(engine::kOnnxDomain, "Bernoulli", 15, kMaxOpset, floats, FactoryOf<BernoulliKernel>()),
      CpuDef(engine::kOnnxDomain, "Multinomial", 7, kMaxOpset, floats,
             FactoryOf<MultinomialKernel>()),
  };
}

}  // namespace inferd::kernels::cpu
