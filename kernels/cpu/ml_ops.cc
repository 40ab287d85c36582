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
//   TreeEnsembleRegressor  (opsets 1, 3) per row of X [N, F]: every tree walked from its first
//                          node (in attribute order) through BRANCH_LEQ / LT / GTE / GT / EQ /
//                          NEQ nodes (a NaN feature goes to the true child when
//                          nodes_missing_value_tracks_true is 1, else the false child) to a
//                          LEAF; the leaves' target weights aggregated by SUM, AVERAGE (the
//                          sum over the number of trees), MIN or MAX (targets no leaf touches:
//                          0), plus base_values; post_transform NONE, LOGISTIC or SOFTMAX.
//                          Trees are checked at load (children exist, no cycle, every branch
//                          mode known); the *_as_tensor (double) attributes are refused.
//
// X may be float32, float64, int32 or int64 (Binarizer keeps the type). Own code, one thread.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

constexpr char kMlDomain[] = "ai.onnx.ml";
using MlTypes = TypeList<float, double, int32_t, int64_t>;

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
        return node_.InvalidArgument(absl::StrCat("index ", index[j], " is outside [0, ", last,
                                                  ") (X's last dim)"));
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

// X's rows: [C] is one row of C, [N, C] N rows; other ranks are refused.
absl::Status RowsOf(const Shape& s, const NodeLabel& node, int64_t* rows, int64_t* cols) {
  if (s.rank() == 1) {
    *rows = 1;
    *cols = s[0];
  } else if (s.rank() == 2) {
    *rows = s[0];
    *cols = s[1];
  } else {
    return node.InvalidArgument(absl::StrCat("X must be [C] or [N, C], got ", s.ToString()));
  }
  return absl::OkStatus();
}

// The input as float64 values (every element type of MlTypes).
absl::StatusOr<std::vector<double>> AsDoubles(const Tensor& x, const NodeLabel& node) {
  std::vector<double> v(x.NumElements());
  INFERD_RETURN_IF_ERROR(Dispatch(MlTypes{}, x.dtype(), node, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(x.data<T>()[i]);
    return absl::OkStatus();
  }));
  return v;
}

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
        return node_.InvalidArgument(absl::StrCat(v == &offset_ ? "offset" : "scale", " has ",
                                                  size, " values; X has ", c, " features"));
      }
    }
    INFERD_ASSIGN_OR_RETURN(std::vector<double> in, AsDoubles(*x, node_));
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
    INFERD_RETURN_IF_ERROR(RowsOf(x->shape(), node_, &rows, &cols));
    INFERD_ASSIGN_OR_RETURN(std::vector<double> in, AsDoubles(*x, node_));
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
    INFERD_RETURN_IF_ERROR(RowsOf(x->shape(), node_, &rows, &cols));
    const int64_t features = static_cast<int64_t>(coef_.size()) / targets_;
    if (cols != features) {
      return node_.InvalidArgument(absl::StrCat("X has ", cols, " features, the coefficients ",
                                                features));
    }
    INFERD_ASSIGN_OR_RETURN(std::vector<double> in, AsDoubles(*x, node_));
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

// The trees of a TreeEnsembleRegressor, flattened: per node its test, threshold, feature and the
// indices of its children; per leaf its (target, weight) pairs.
class TreeEnsemble {
 public:
  enum class Mode { kLeq, kLt, kGte, kGt, kEq, kNeq, kLeaf };
  enum class Aggregate { kSum, kAverage, kMin, kMax };

  static absl::StatusOr<TreeEnsemble> Read(const KernelInfo& info, const NodeLabel& node) {
    for (const char* name : {"nodes_values_as_tensor", "base_values_as_tensor",
                             "target_weights_as_tensor", "nodes_hitrates_as_tensor"}) {
      if (info.HasAttribute(name)) {
        return node.Unimplemented(absl::StrCat("attribute ", name, " is not supported"));
      }
    }
    TreeEnsemble e;
    const std::vector<int64_t> tree_ids = info.GetInts("nodes_treeids");
    const std::vector<int64_t> node_ids = info.GetInts("nodes_nodeids");
    const std::vector<int64_t> features = info.GetInts("nodes_featureids");
    const std::vector<std::string> modes = info.GetStrings("nodes_modes");
    const std::vector<float> values = info.GetFloats("nodes_values");
    const std::vector<int64_t> true_ids = info.GetInts("nodes_truenodeids");
    const std::vector<int64_t> false_ids = info.GetInts("nodes_falsenodeids");
    std::vector<int64_t> missing = info.GetInts("nodes_missing_value_tracks_true");
    const size_t n = tree_ids.size();
    if (n == 0) return node.InvalidArgument("the ensemble has no nodes");
    if (missing.empty()) missing.assign(n, 0);
    for (size_t size : {node_ids.size(), features.size(), modes.size(), values.size(),
                        true_ids.size(), false_ids.size(), missing.size()}) {
      if (size != n) {
        return node.InvalidArgument(absl::StrCat("the nodes_* attributes must all have ", n,
                                                 " values (nodes_treeids), one has ", size));
      }
    }
    // (tree, node id) -> index; each tree's root is its first node.
    std::map<std::pair<int64_t, int64_t>, int64_t> index;
    for (size_t i = 0; i < n; ++i) {
      if (!index.emplace(std::make_pair(tree_ids[i], node_ids[i]), i).second) {
        return node.InvalidArgument(absl::StrCat("node (tree ", tree_ids[i], ", id ",
                                                 node_ids[i], ") appears twice"));
      }
      if (i == 0 || std::find(tree_ids.begin(), tree_ids.begin() + i, tree_ids[i]) ==
                        tree_ids.begin() + i) {
        e.roots_.push_back(static_cast<int64_t>(i));
      }
    }
    e.nodes_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      Node& nd = e.nodes_[i];
      static const std::pair<const char*, Mode> kModes[] = {
          {"BRANCH_LEQ", Mode::kLeq}, {"BRANCH_LT", Mode::kLt}, {"BRANCH_GTE", Mode::kGte},
          {"BRANCH_GT", Mode::kGt},   {"BRANCH_EQ", Mode::kEq}, {"BRANCH_NEQ", Mode::kNeq},
          {"LEAF", Mode::kLeaf}};
      bool known = false;
      for (const auto& [name, mode] : kModes) {
        if (modes[i] == name) {
          nd.mode = mode;
          known = true;
        }
      }
      if (!known) {
        return node.InvalidArgument(absl::StrCat("node ", i, " has mode \"", modes[i], "\""));
      }
      nd.threshold = values[i];
      nd.feature = features[i];
      nd.missing_true = missing[i] != 0;
      if (nd.mode == Mode::kLeaf) continue;
      if (nd.feature < 0) {
        return node.InvalidArgument(absl::StrCat("node ", i, " has feature ", nd.feature));
      }
      for (auto [id, child] : {std::make_pair(true_ids[i], &nd.true_child),
                               std::make_pair(false_ids[i], &nd.false_child)}) {
        auto it = index.find({tree_ids[i], id});
        if (it == index.end()) {
          return node.InvalidArgument(absl::StrCat("node ", i, " (tree ", tree_ids[i],
                                                   ") has no child with id ", id));
        }
        *child = it->second;
      }
    }
    // No cycles: a walk from a root visits at most the tree's node count.
    e.max_depth_ = static_cast<int64_t>(n);
    // Leaves' weights.
    const std::vector<int64_t> t_trees = info.GetInts("target_treeids");
    const std::vector<int64_t> t_nodes = info.GetInts("target_nodeids");
    const std::vector<int64_t> t_ids = info.GetInts("target_ids");
    const std::vector<float> t_weights = info.GetFloats("target_weights");
    e.targets_ = info.GetInt("n_targets", 1);
    if (e.targets_ <= 0) return node.InvalidArgument("n_targets must be positive");
    if (t_nodes.size() != t_trees.size() || t_ids.size() != t_trees.size() ||
        t_weights.size() != t_trees.size()) {
      return node.InvalidArgument("the target_* attributes must have the same length");
    }
    for (size_t j = 0; j < t_trees.size(); ++j) {
      auto it = index.find({t_trees[j], t_nodes[j]});
      if (it == index.end() || e.nodes_[it->second].mode != Mode::kLeaf) {
        return node.InvalidArgument(absl::StrCat("target ", j, " names (tree ", t_trees[j],
                                                 ", id ", t_nodes[j], "), which is no leaf"));
      }
      if (t_ids[j] < 0 || t_ids[j] >= e.targets_) {
        return node.InvalidArgument(absl::StrCat("target ", j, " has id ", t_ids[j],
                                                 ", outside [0, n_targets = ", e.targets_, ")"));
      }
      e.nodes_[it->second].weights.push_back({t_ids[j], t_weights[j]});
    }
    const std::string agg = info.GetString("aggregate_function", "SUM");
    if (agg == "SUM") {
      e.aggregate_ = Aggregate::kSum;
    } else if (agg == "AVERAGE") {
      e.aggregate_ = Aggregate::kAverage;
    } else if (agg == "MIN") {
      e.aggregate_ = Aggregate::kMin;
    } else if (agg == "MAX") {
      e.aggregate_ = Aggregate::kMax;
    } else {
      return node.InvalidArgument(absl::StrCat("aggregate_function \"", agg, "\" is unknown"));
    }
    e.base_ = info.GetFloats("base_values");
    if (!e.base_.empty() && static_cast<int64_t>(e.base_.size()) != e.targets_) {
      return node.InvalidArgument(absl::StrCat("base_values has ", e.base_.size(),
                                               " values, expected n_targets = ", e.targets_));
    }
    e.post_ = info.GetString("post_transform", "NONE");
    if (e.post_ != "NONE" && e.post_ != "LOGISTIC" && e.post_ != "SOFTMAX") {
      return node.Unimplemented(absl::StrCat("post_transform ", e.post_, " is not supported"));
    }
    return e;
  }

  int64_t targets() const { return targets_; }

  // One row of `features` values into out[targets].
  absl::Status Predict(const double* x, int64_t features, float* out,
                       const NodeLabel& node) const {
    std::vector<double> score(targets_, 0.0);
    std::vector<bool> touched(targets_, false);
    for (int64_t root : roots_) {
      int64_t i = root;
      for (int64_t steps = 0; nodes_[i].mode != Mode::kLeaf; ++steps) {
        const Node& nd = nodes_[i];
        if (steps >= max_depth_) return node.InvalidArgument("a tree has a cycle");
        if (nd.feature >= features) {
          return node.InvalidArgument(absl::StrCat("a node reads feature ", nd.feature,
                                                   "; X has ", features));
        }
        const double v = x[nd.feature], th = nd.threshold;
        bool go_true = false;
        if (std::isnan(v)) {
          go_true = nd.missing_true;
        } else {
          switch (nd.mode) {
            case Mode::kLeq: go_true = v <= th; break;
            case Mode::kLt: go_true = v < th; break;
            case Mode::kGte: go_true = v >= th; break;
            case Mode::kGt: go_true = v > th; break;
            case Mode::kEq: go_true = v == th; break;
            case Mode::kNeq: go_true = v != th; break;
            case Mode::kLeaf: break;
          }
        }
        i = go_true ? nd.true_child : nd.false_child;
      }
      for (const auto& [t, w] : nodes_[i].weights) {
        if (aggregate_ == Aggregate::kMin) {
          score[t] = touched[t] ? std::min(score[t], static_cast<double>(w)) : w;
        } else if (aggregate_ == Aggregate::kMax) {
          score[t] = touched[t] ? std::max(score[t], static_cast<double>(w)) : w;
        } else {
          score[t] += w;
        }
        touched[t] = true;
      }
    }
    for (int64_t t = 0; t < targets_; ++t) {
      if (aggregate_ == Aggregate::kAverage) score[t] /= static_cast<double>(roots_.size());
      if (!base_.empty()) score[t] += base_[t];
    }
    if (post_ == "LOGISTIC") {
      for (double& v : score) v = 1.0 / (1.0 + std::exp(-v));
    } else if (post_ == "SOFTMAX") {
      const double top = *std::max_element(score.begin(), score.end());
      double sum = 0.0;
      for (double& v : score) sum += (v = std::exp(v - top));
      for (double& v : score) v /= sum;
    }
    for (int64_t t = 0; t < targets_; ++t) out[t] = static_cast<float>(score[t]);
    return absl::OkStatus();
  }

 private:
  struct Node {
    Mode mode = Mode::kLeaf;
    double threshold = 0;
    int64_t feature = 0;
    bool missing_true = false;
    int64_t true_child = 0, false_child = 0;
    std::vector<std::pair<int64_t, float>> weights;  // a leaf's (target, weight)
  };
  std::vector<Node> nodes_;
  std::vector<int64_t> roots_;
  int64_t max_depth_ = 0;
  int64_t targets_ = 1;
  Aggregate aggregate_ = Aggregate::kSum;
  std::vector<float> base_;
  std::string post_;
};

class TreeEnsembleRegressorKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<TreeEnsembleRegressorKernel>> Create(
      const KernelInfo& info) {
    const NodeLabel node(info);
    INFERD_ASSIGN_OR_RETURN(TreeEnsemble e, TreeEnsemble::Read(info, node));
    return std::unique_ptr<TreeEnsembleRegressorKernel>(
        new TreeEnsembleRegressorKernel(info, std::move(e)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    int64_t rows = 0, cols = 0;
    INFERD_RETURN_IF_ERROR(RowsOf(x->shape(), node_, &rows, &cols));
    INFERD_ASSIGN_OR_RETURN(std::vector<double> in, AsDoubles(*x, node_));
    const int64_t targets = ensemble_.targets();
    INFERD_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.MakeOutputTensor(0, DataType::kFloat32, Shape{rows, targets}));
    float* out = y->mutable_data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      INFERD_RETURN_IF_ERROR(
          ensemble_.Predict(in.data() + r * cols, cols, out + r * targets, node_));
    }
    return absl::OkStatus();
  }

 private:
  TreeEnsembleRegressorKernel(const KernelInfo& info, TreeEnsemble e)
      : node_(info), ensemble_(std::move(e)) {}
  const NodeLabel node_;
  const TreeEnsemble ensemble_;
};

}  // namespace

std::vector<engine::KernelDef> MlKernelDefs() {
  const std::vector<DataType> types = TypesOf(MlTypes{});
  // None of these changed after its first version (TreeEnsembleRegressor's 3 only added the
  // *_as_tensor attributes, refused at creation), so one definition covers every ai.onnx.ml
  // opset.
  return {
      CpuDef(kMlDomain, "Binarizer", 1, kMaxOpset, types, FactoryOf<BinarizerKernel>()),
      CpuDef(kMlDomain, "ArrayFeatureExtractor", 1, kMaxOpset, types,
             FactoryOf<ArrayFeatureExtractorKernel>()),
      CpuDef(kMlDomain, "Scaler", 1, kMaxOpset, types, FactoryOf<ScalerKernel>()),
      CpuDef(kMlDomain, "Normalizer", 1, kMaxOpset, types, FactoryOf<NormalizerKernel>()),
      CpuDef(kMlDomain, "LinearRegressor", 1, kMaxOpset, types,
             FactoryOf<LinearRegressorKernel>()),
      CpuDef(kMlDomain, "TreeEnsembleRegressor", 1, kMaxOpset, types,
             FactoryOf<TreeEnsembleRegressorKernel>()),
  };
}

}  // namespace inferd::kernels::cpu
