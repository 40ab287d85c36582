#include "kernels/cpu/rnn_common.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "kernels/cpu/fast_math.h"
#include "kernels/cpu/onednn_util.h"

namespace inferd::kernels::cpu {
namespace {

using engine::KernelInfo;
using engine::Shape;

struct ActivationName {
  const char* name;  // lower case
  ActivationKind kind;
  bool takes_alpha, takes_beta;
  float default_alpha, default_beta;
};

// The spec's list. Defaults are those of the ONNX operators of the same name (Affine and
// ScaledTanh were operators until opset 10 without defaults of their own: 1 and 0, 1 and 1 keep
// them the identity and tanh).
constexpr ActivationName kActivations[] = {
    {"relu", ActivationKind::kRelu, false, false, 0, 0},
    {"tanh", ActivationKind::kTanh, false, false, 0, 0},
    {"sigmoid", ActivationKind::kSigmoid, false, false, 0, 0},
    {"affine", ActivationKind::kAffine, true, true, 1.0f, 0.0f},
    {"leakyrelu", ActivationKind::kLeakyRelu, true, false, 0.01f, 0},
    {"thresholdedrelu", ActivationKind::kThresholdedRelu, true, false, 1.0f, 0},
    {"scaledtanh", ActivationKind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", ActivationKind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", ActivationKind::kElu, true, false, 1.0f, 0},
    {"softsign", ActivationKind::kSoftsign, false, false, 0, 0},
    {"softplus", ActivationKind::kSoftplus, false, false, 0, 0},
};

std::vector<std::string> DefaultActivations(RnnOp op) {
  switch (op) {
    case RnnOp::kLstm:
      return {"Sigmoid", "Tanh", "Tanh"};
    case RnnOp::kGru:
      return {"Sigmoid", "Tanh"};
    case RnnOp::kRnn:
      return {"Tanh"};
  }
  return {};
}

absl::Status ReadActivations(const KernelInfo& info, RnnAttributes& a) {
  const int per = a.activations_per_direction(), dirs = a.num_directions();
  std::vector<std::string> names = info.GetStrings("activations");
  if (names.empty()) {
    for (int d = 0; d < dirs; ++d) {
      for (const std::string& n : DefaultActivations(a.op)) names.push_back(n);
    }
  } else if (static_cast<int>(names.size()) == 2 * per && dirs == 1) {
    names.resize(per);  // RNN's schema lists ["Tanh", "Tanh"] as its default whatever the direction
  } else if (static_cast<int>(names.size()) == per && dirs == 2) {
    names.insert(names.end(), names.begin(), names.end());  // one list for both directions
  }
  if (static_cast<int>(names.size()) != per * dirs) {
    return info.Error(absl::StrCat("expected ", per * dirs, " activations (", per,
                                   " per direction), got ", names.size(), ": ",
                                   absl::StrJoin(names, ", ")));
  }
  const std::vector<float> alphas = info.GetFloats("activation_alpha");
  const std::vector<float> betas = info.GetFloats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    const std::string lower = absl::AsciiStrToLower(name);
    const ActivationName* found = nullptr;
    for (const ActivationName& e : kActivations) {
      if (lower == e.name) found = &e;
    }
    if (found == nullptr) {
      return info.Error(absl::StrCat(
          "unknown activation '", name,
          "' (expected Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
          "HardSigmoid, Elu, Softsign or Softplus)"));
    }
    Activation act{found->kind, found->default_alpha, found->default_beta};
    if (found->takes_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (found->takes_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    a.activations.push_back(act);
  }
  return absl::OkStatus();
}

// OK when `s` has these dims; else INVALID_ARGUMENT naming the input and the expected shape.
absl::Status ExpectShape(const Shape* s, const Shape& expected, const char* what,
                         const NodeLabel& node) {
  if (s == nullptr || *s == expected) return absl::OkStatus();
  return node.InvalidArgument(absl::StrCat("input ", what, " has shape ", s->ToString(),
                                           ", expected ", expected.ToString()));
}

// x[i] = activation(x[i]). `omp simd` (-fopenmp-simd): GCC's -O2 cost model leaves loops of
// unknown length scalar.
inline void Activate(const Activation& a, float* x, int64_t n) {
  const float alpha = a.alpha, beta = a.beta;
  switch (a.kind) {
    case ActivationKind::kRelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
      break;
    case ActivationKind::kTanh:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = FastTanh(x[i]);
      break;
    case ActivationKind::kSigmoid:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = FastSigmoid(x[i]);
      break;
    case ActivationKind::kAffine:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = alpha * x[i] + beta;
      break;
    case ActivationKind::kLeakyRelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0.0f ? x[i] : alpha * x[i];
      break;
    case ActivationKind::kThresholdedRelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > alpha ? x[i] : 0.0f;
      break;
    case ActivationKind::kScaledTanh:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = alpha * FastTanh(beta * x[i]);
      break;
    case ActivationKind::kHardSigmoid:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = std::min(std::max(alpha * x[i] + beta, 0.0f), 1.0f);
      break;
    case ActivationKind::kElu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0.0f ? x[i] : alpha * FastExpM1(x[i]);
      break;
    case ActivationKind::kSoftsign:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::fabs(x[i]));
      break;
    case ActivationKind::kSoftplus:
      // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x.
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        x[i] = std::max(x[i], 0.0f) + std::log1p(FastExp(-std::fabs(x[i])));
      }
      break;
  }
}

// The same compiled for AVX-512 (16 lanes instead of 8 for the gates' Sigmoid and Tanh), chosen
// at run time. Not GCC's target_clones: its ifunc resolver ran before ThreadSanitizer's runtime
// was up and crashed every TSan binary that linked the kernels at start.
__attribute__((target("avx512f"), flatten)) void ActivateAvx512(const Activation& a, float* x,
                                                                int64_t n) {
  Activate(a, x, n);
}

}  // namespace

void ApplyActivation(const Activation& a, float* x, int64_t n) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return ActivateAvx512(a, x, n);
  Activate(a, x, n);
}

absl::StatusOr<RnnAttributes> ReadRnnAttributes(RnnOp op, const KernelInfo& info) {
  RnnAttributes a;
  a.op = op;
  const std::string direction = info.GetString("direction", "forward");
  if (direction == "forward") {
    a.direction = RnnDirection::kForward;
  } else if (direction == "reverse") {
    a.direction = RnnDirection::kReverse;
  } else if (direction == "bidirectional") {
    a.direction = RnnDirection::kBidirectional;
  } else {
    return info.Error(
        absl::StrCat("direction '", direction, "' is not one of forward, reverse, bidirectional"));
  }
  if (info.HasAttribute("hidden_size")) {
    a.hidden_size = info.GetInt("hidden_size", 0);
    if (a.hidden_size <= 0) {
      return info.Error(absl::StrCat("hidden_size must be positive, got ", a.hidden_size));
    }
  }
  if (absl::Status s = ReadActivations(info, a); !s.ok()) return s;
  if (info.HasAttribute("clip")) {
    const float clip = info.GetFloat("clip", 0.0f);
    if (!(clip > 0.0f)) return info.Error(absl::StrCat("clip must be > 0, got ", clip));
    a.clip = clip;
  }
  if (op == RnnOp::kLstm) a.input_forget = info.GetInt("input_forget", 0) != 0;
  a.layout = info.opset() >= 14 ? static_cast<int>(info.GetInt("layout", 0)) : 0;
  if (a.layout != 0 && a.layout != 1) {
    return info.Error(absl::StrCat("layout must be 0 or 1, got ", a.layout));
  }
  if (op == RnnOp::kGru) a.linear_before_reset = info.GetInt("linear_before_reset", 0) != 0;
  return a;
}

Shape RnnGeometry::YShape() const {
  return layout == 0 ? Shape{seq, dirs, batch, hidden} : Shape{batch, seq, dirs, hidden};
}

Shape RnnGeometry::StateShape() const {
  return layout == 0 ? Shape{dirs, batch, hidden} : Shape{batch, dirs, hidden};
}

absl::StatusOr<RnnGeometry> ComputeRnnGeometry(const RnnAttributes& attrs,
                                               absl::Span<const Shape* const> shapes,
                                               const NodeLabel& node) {
  auto shape = [&](int i) -> const Shape* {
    return i < static_cast<int>(shapes.size()) ? shapes[i] : nullptr;
  };
  const Shape *x = shape(kX), *w = shape(kW), *r = shape(kR);
  if (x == nullptr || w == nullptr || r == nullptr) {
    return node.InvalidArgument("inputs X, W and R are required");
  }
  if (x->rank() != 3) {
    return node.InvalidArgument(absl::StrCat("input X must be 3-D, got ", x->ToString()));
  }
  if (r->rank() != 3) {
    return node.InvalidArgument(absl::StrCat("input R must be 3-D, got ", r->ToString()));
  }
  RnnGeometry g;
  g.layout = attrs.layout;
  g.dirs = attrs.num_directions();
  g.gates = attrs.gates();
  g.seq = attrs.layout == 0 ? (*x)[0] : (*x)[1];
  g.batch = attrs.layout == 0 ? (*x)[1] : (*x)[0];
  g.input = (*x)[2];
  g.hidden = attrs.hidden_size > 0 ? attrs.hidden_size : (*r)[2];
  if (g.hidden <= 0) return node.InvalidArgument("hidden size (R's last dim) must be positive");
  const std::optional<int64_t> gc = CheckedMul<int64_t>(g.gates, g.hidden);
  const std::optional<int64_t> gc2 = gc ? CheckedMul<int64_t>(2, *gc) : std::nullopt;
  const std::optional<int64_t> c3 = CheckedMul<int64_t>(3, g.hidden);
  if (!gc2 || !c3)
    return node.InvalidArgument(absl::StrCat("hidden_size ", g.hidden, " is too large"));
  const int64_t d = g.dirs, n = g.batch, c = g.hidden;
  INFERD_RETURN_IF_ERROR(ExpectShape(w, Shape{d, *gc, g.input}, "W", node));
  INFERD_RETURN_IF_ERROR(ExpectShape(r, Shape{d, *gc, c}, "R", node));
  INFERD_RETURN_IF_ERROR(ExpectShape(shape(kB), Shape{d, *gc2}, "B", node));
  INFERD_RETURN_IF_ERROR(ExpectShape(shape(kSequenceLens), Shape{n}, "sequence_lens", node));
  INFERD_RETURN_IF_ERROR(ExpectShape(shape(kInitialH), g.StateShape(), "initial_h", node));
  if (attrs.op == RnnOp::kLstm) {
    INFERD_RETURN_IF_ERROR(ExpectShape(shape(kInitialC), g.StateShape(), "initial_c", node));
    INFERD_RETURN_IF_ERROR(ExpectShape(shape(kP), Shape{d, *c3}, "P", node));
  }
  // Y and the workspace's largest region (the input projections, T * N * D * G * C) must fit.
  const Shape y = g.YShape();
  if (!engine::CheckedNumElements(y.dims(), sizeof(float)) ||
      !engine::CheckedNumElements({g.seq, n, d, *gc}, sizeof(float))) {
    return node.InvalidArgument(
        absl::StrCat("output Y ", y.ToString(), " with ", g.gates, " gates is too large"));
  }
  return g;
}

RnnSplit SplitRecurrence(const RnnGeometry& g, int threads) {
  const double work =
      2.0 * double(g.seq) * double(g.batch) * double(g.hidden) * double(g.gate_width()) * g.dirs;
  const int parts = PartCount(threads, work, g.dirs * std::max<int64_t>(1, g.batch));
  RnnSplit split;
  split.chunks = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(parts / g.dirs, g.batch)));
  split.parallel = parts > 1;
  return split;
}

absl::Status RunRnnParts(engine::ThreadPool& pool, bool parallel, int parts,
                         absl::FunctionRef<absl::Status(int part, int slot)> run) {
  ScopedOmpThreads one(1);
  if (parallel && parts > 1) {
    return RunParts(pool, parts, [&](int part, int slot) {
      ScopedOmpThreads one_here(1);
      return run(part, slot);
    });
  }
  for (int part = 0; part < parts; ++part) INFERD_RETURN_IF_ERROR(run(part, 0));
  return absl::OkStatus();
}

absl::Status CheckSequenceLens(const int32_t* lens, int64_t batch, int64_t seq,
                               const NodeLabel& node) {
  for (int64_t i = 0; i < batch; ++i) {
    if (lens[i] < 0 || lens[i] > seq) {
      return node.InvalidArgument(absl::StrCat("sequence_lens[", i, "] is ", lens[i],
                                               ", outside [0, ", seq, "] (the sequence length)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace inferd::kernels::cpu
