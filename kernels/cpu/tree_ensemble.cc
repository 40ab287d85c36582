// TreeEnsembleRegressor (ai.onnx.ml opsets 1+) and TreeEnsemble (ai.onnx.ml 5).
//
// TreeEnsembleRegressor, per row of X [N, F] (or [F]): every tree walked from its first node
// (in attribute order) through BRANCH_LEQ / LT / GTE / GT / EQ / NEQ nodes to a LEAF (a node's
// test is "comparison holds, or the feature is NaN and nodes_missing_value_tracks_true is 1", as
// ONNX Runtime: a NaN goes to the false child unless tracked, except that NaN != th holds);
// the leaves' target weights aggregated by SUM, AVERAGE (the sum over the number of trees), MIN
// or MAX (targets no leaf touches: 0), plus base_values; post_transform NONE, LOGISTIC or
// SOFTMAX; float32 [N, n_targets]. Trees are checked at load (children exist, every target
// names a leaf, every branch mode known); a cycle is caught at run time (a walk longer than the
// node count); the *_as_tensor (double) attributes are refused.
//
// TreeEnsemble (opset 5) encodes the same trees differently: interior nodes (nodes_* arrays,
// nodes_modes a uint8 tensor: 0 LEQ, 1 LT, 2 GTE, 3 GT, 4 EQ, 5 NEQ, 6 MEMBER) whose children are
// node or leaf indices (nodes_trueleafs / nodes_falseleafs say which), leaves (leaf_targetids,
// leaf_weights: one target and weight each), tree_roots; MEMBER tests set membership, the sets
// read from membership_values in node order, each ended by a NaN. A root whose two children are
// the same leaf is a one-leaf tree. Aggregates as above, output in X's type (float32, float64);
// a target no leaf touches is 0 for every aggregate, as ONNX Runtime (the ONNX reference starts
// MIN / MAX at the type's largest / lowest value); post_transform NONE (0) only.
//
// Own code, one thread, double arithmetic for the comparisons (exact for float32 features and
// thresholds).
#include "kernels/cpu/tree_ensemble.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/float16.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/ml_util.h"
#include "kernels/cpu/type_dispatch.h"
#include "onnx/onnx_pb.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

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
        return node.InvalidArgument(
            absl::StrCat("node (tree ", tree_ids[i], ", id ", node_ids[i], ") appears twice"));
      }
      if (i == 0 ||
          std::find(tree_ids.begin(), tree_ids.begin() + i, tree_ids[i]) == tree_ids.begin() + i) {
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
          return node.InvalidArgument(
              absl::StrCat("node ", i, " (tree ", tree_ids[i], ") has no child with id ", id));
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
        return node.InvalidArgument(absl::StrCat("target ", j, " names (tree ", t_trees[j], ", id ",
                                                 t_nodes[j], "), which is no leaf"));
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
  absl::Status Predict(const double* x, int64_t features, float* out, const NodeLabel& node) const {
    std::vector<double> score(targets_, 0.0);
    std::vector<bool> touched(targets_, false);
    for (int64_t root : roots_) {
      int64_t i = root;
      for (int64_t steps = 0; nodes_[i].mode != Mode::kLeaf; ++steps) {
        const Node& nd = nodes_[i];
        if (steps >= max_depth_) return node.InvalidArgument("a tree has a cycle");
        if (nd.feature >= features) {
          return node.InvalidArgument(
              absl::StrCat("a node reads feature ", nd.feature, "; X has ", features));
        }
        const double v = x[nd.feature], th = nd.threshold;
        bool go_true = false;
        if (std::isnan(v)) {
          go_true = nd.missing_true || nd.mode == Mode::kNeq;  // NaN != th holds
        } else {
          switch (nd.mode) {
            case Mode::kLeq:
              go_true = v <= th;
              break;
            case Mode::kLt:
              go_true = v < th;
              break;
            case Mode::kGte:
              go_true = v >= th;
              break;
            case Mode::kGt:
              go_true = v > th;
              break;
            case Mode::kEq:
              go_true = v == th;
              break;
            case Mode::kNeq:
              go_true = v != th;
              break;
            case Mode::kLeaf:
              break;
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
    INFERD_RETURN_IF_ERROR(MlRowsOf(x->shape(), node_, &rows, &cols));
    INFERD_ASSIGN_OR_RETURN(std::vector<double> in, MlAsDoubles(*x, node_));
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

// ---------------------------------------------------------------------------------------------
// TreeEnsemble (opset 5).

// A tensor attribute's values as double (float, double, float16, uint8, int32, int64), or an
// error naming it.
absl::StatusOr<std::vector<double>> TensorAttr(const KernelInfo& info, const char* name,
                                               bool required, const NodeLabel& node) {
  const onnx::TensorProto* t = info.GetTensor(name);
  if (t == nullptr) {
    if (required) return node.InvalidArgument(absl::StrCat("attribute '", name, "' is required"));
    return std::vector<double>{};
  }
  int64_t n = 1;
  for (int64_t d : t->dims()) n *= d;
  std::vector<double> v;
  const std::string& raw = t->raw_data();
  const bool has_raw = t->has_raw_data();
  auto from_raw = [&](auto zero, size_t size) -> absl::Status {
    using T = decltype(zero);
    if (raw.size() != static_cast<size_t>(n) * size) {
      return node.InvalidArgument(
          absl::StrCat("attribute '", name, "' has ", raw.size(), " raw bytes for ", n, " values"));
    }
    for (int64_t i = 0; i < n; ++i) {
      T x;
      std::memcpy(&x, raw.data() + i * size, size);
      if constexpr (std::is_same_v<T, uint16_t>) {
        v.push_back(HalfToFloat(x));
      } else {
        v.push_back(static_cast<double>(x));
      }
    }
    return absl::OkStatus();
  };
  switch (t->data_type()) {
    case onnx::TensorProto::FLOAT:
      if (has_raw) {
        INFERD_RETURN_IF_ERROR(from_raw(0.0f, 4));
      } else {
        v.assign(t->float_data().begin(), t->float_data().end());
      }
      break;
    case onnx::TensorProto::DOUBLE:
      if (has_raw) {
        INFERD_RETURN_IF_ERROR(from_raw(0.0, 8));
      } else {
        v.assign(t->double_data().begin(), t->double_data().end());
      }
      break;
    case onnx::TensorProto::FLOAT16:
      if (has_raw) {
        INFERD_RETURN_IF_ERROR(from_raw(uint16_t{0}, 2));
      } else {
        for (int32_t b : t->int32_data()) v.push_back(HalfToFloat(static_cast<uint16_t>(b)));
      }
      break;
    case onnx::TensorProto::UINT8:
      if (has_raw) {
        INFERD_RETURN_IF_ERROR(from_raw(uint8_t{0}, 1));
      } else {
        v.assign(t->int32_data().begin(), t->int32_data().end());
      }
      break;
    default:
      return node.InvalidArgument(
          absl::StrCat("attribute '", name, "' has element type ", t->data_type()));
  }
  if (static_cast<int64_t>(v.size()) != n) {
    return node.InvalidArgument(
        absl::StrCat("attribute '", name, "' holds ", v.size(), " values for ", n, " elements"));
  }
  return v;
}

class TreeEnsemble5Kernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<TreeEnsemble5Kernel>> Create(const KernelInfo& info) {
    const NodeLabel node(info);
    auto k = std::unique_ptr<TreeEnsemble5Kernel>(new TreeEnsemble5Kernel(info));
    INFERD_ASSIGN_OR_RETURN(k->splits_, TensorAttr(info, "nodes_splits", true, node));
    INFERD_ASSIGN_OR_RETURN(std::vector<double> modes, TensorAttr(info, "nodes_modes", true, node));
    INFERD_ASSIGN_OR_RETURN(k->leaf_weights_, TensorAttr(info, "leaf_weights", true, node));
    INFERD_ASSIGN_OR_RETURN(std::vector<double> members,
                            TensorAttr(info, "membership_values", false, node));
    k->features_ = info.GetInts("nodes_featureids");
    k->true_ids_ = info.GetInts("nodes_truenodeids");
    k->false_ids_ = info.GetInts("nodes_falsenodeids");
    k->true_leaf_ = info.GetInts("nodes_trueleafs");
    k->false_leaf_ = info.GetInts("nodes_falseleafs");
    k->missing_ = info.GetInts("nodes_missing_value_tracks_true");
    k->leaf_targets_ = info.GetInts("leaf_targetids");
    k->roots_ = info.GetInts("tree_roots");
    k->targets_ = info.GetInt("n_targets", 1);
    k->aggregate_ = info.GetInt("aggregate_function", 1);
    const size_t n = k->splits_.size();
    if (k->missing_.empty()) k->missing_.assign(n, 0);
    for (size_t size :
         {modes.size(), k->features_.size(), k->true_ids_.size(), k->false_ids_.size(),
          k->true_leaf_.size(), k->false_leaf_.size(), k->missing_.size()}) {
      if (size != n) {
        return node.InvalidArgument(absl::StrCat("the nodes_* attributes must all have ", n,
                                                 " values (nodes_splits), one has ", size));
      }
    }
    const size_t leaves = k->leaf_weights_.size();
    if (k->leaf_targets_.size() != leaves) {
      return node.InvalidArgument("leaf_targetids and leaf_weights differ in length");
    }
    if (k->targets_ <= 0) return node.InvalidArgument("n_targets must be positive");
    if (k->aggregate_ < 0 || k->aggregate_ > 3) {
      return node.InvalidArgument(
          absl::StrCat("aggregate_function ", k->aggregate_, " is not 0 to 3"));
    }
    if (info.GetInt("post_transform", 0) != 0) {
      return node.Unimplemented("post_transform other than NONE (0) is not supported");
    }
    for (int64_t t : k->leaf_targets_) {
      if (t < 0 || t >= k->targets_) {
        return node.InvalidArgument(
            absl::StrCat("leaf target ", t, " is outside [0, ", k->targets_, ")"));
      }
    }
    k->modes_.resize(n);
    k->sets_.resize(n);
    size_t next_member = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!(modes[i] >= 0 && modes[i] <= 6)) {
        return node.InvalidArgument(absl::StrCat("node ", i, " has mode ", modes[i]));
      }
      k->modes_[i] = static_cast<int>(modes[i]);
      if (k->features_[i] < 0) {
        return node.InvalidArgument(absl::StrCat("node ", i, " has feature ", k->features_[i]));
      }
      for (auto [id, leaf] : {std::make_pair(k->true_ids_[i], k->true_leaf_[i]),
                              std::make_pair(k->false_ids_[i], k->false_leaf_[i])}) {
        const size_t limit = leaf != 0 ? leaves : n;
        if (id < 0 || static_cast<size_t>(id) >= limit) {
          return node.InvalidArgument(absl::StrCat("node ", i, " has child ", id, ", outside [0, ",
                                                   limit, ") ", leaf != 0 ? "leaves" : "nodes"));
        }
      }
      if (k->modes_[i] == 6) {  // MEMBER: the next NaN-terminated run of membership_values
        bool ended = false;
        while (next_member < members.size()) {
          const double m = members[next_member++];
          if (std::isnan(m)) {
            ended = true;
            break;
          }
          k->sets_[i].insert(m);
        }
        if (!ended) {
          return node.InvalidArgument(
              absl::StrCat("membership_values has no NaN-terminated set for MEMBER node ", i));
        }
      }
    }
    for (int64_t r : k->roots_) {
      if (r < 0 || static_cast<size_t>(r) >= n) {
        return node.InvalidArgument(absl::StrCat("tree root ", r, " is outside [0, ", n, ")"));
      }
    }
    if (k->roots_.empty()) return node.InvalidArgument("tree_roots is empty");
    return k;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    int64_t rows = 0, cols = 0;
    INFERD_RETURN_IF_ERROR(MlRowsOf(x->shape(), node_, &rows, &cols));
    if (x->dtype() != DataType::kFloat32 && x->dtype() != DataType::kFloat64) {
      return node_.Unimplemented(absl::StrCat("X of type ", engine::DataTypeName(x->dtype()),
                                              " is not supported (float32, float64)"));
    }
    INFERD_ASSIGN_OR_RETURN(std::vector<double> in, MlAsDoubles(*x, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), Shape{rows, targets_}));
    const bool f32 = x->dtype() == DataType::kFloat32;
    std::vector<double> score(targets_);
    std::vector<bool> touched(targets_);
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = in.data() + r * cols;
      std::fill(score.begin(), score.end(), 0.0);
      std::fill(touched.begin(), touched.end(), false);
      for (int64_t root : roots_) {
        INFERD_ASSIGN_OR_RETURN(int64_t leaf, Walk(root, row, cols));
        const double w = leaf_weights_[leaf];
        const int64_t t = leaf_targets_[leaf];
        double& s = score[t];
        switch (aggregate_) {
          case 0:
            s += w / static_cast<double>(roots_.size());
            break;
          case 1:
            s += w;
            break;
          case 2:
            s = touched[t] ? std::min(s, w) : w;
            break;
          default:
            s = touched[t] ? std::max(s, w) : w;
            break;
        }
        touched[t] = true;
      }
      for (int64_t t = 0; t < targets_; ++t) {
        if (f32) {
          y->mutable_data<float>()[r * targets_ + t] = static_cast<float>(score[t]);
        } else {
          y->mutable_data<double>()[r * targets_ + t] = score[t];
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  explicit TreeEnsemble5Kernel(const KernelInfo& info) : node_(info) {}

  // The leaf a row reaches from node `root`.
  absl::StatusOr<int64_t> Walk(int64_t root, const double* row, int64_t cols) const {
    int64_t i = root;
    // A root whose children are the same leaf is a one-leaf tree.
    if (true_leaf_[i] != 0 && false_leaf_[i] != 0 && true_ids_[i] == false_ids_[i]) {
      return true_ids_[i];
    }
    for (size_t steps = 0; steps <= splits_.size(); ++steps) {
      if (features_[i] >= cols) {
        return node_.InvalidArgument(
            absl::StrCat("node ", i, " reads feature ", features_[i], "; X has ", cols));
      }
      const double v = row[features_[i]], th = splits_[i];
      bool go_true = false;
      if (std::isnan(v)) {
        go_true = missing_[i] != 0 || modes_[i] == 5;  // NaN != th holds
      } else {
        switch (modes_[i]) {
          case 0:
            go_true = v <= th;
            break;
          case 1:
            go_true = v < th;
            break;
          case 2:
            go_true = v >= th;
            break;
          case 3:
            go_true = v > th;
            break;
          case 4:
            go_true = v == th;
            break;
          case 5:
            go_true = v != th;
            break;
          default:
            go_true = sets_[i].count(v) != 0;
            break;
        }
      }
      const int64_t next = go_true ? true_ids_[i] : false_ids_[i];
      if ((go_true ? true_leaf_[i] : false_leaf_[i]) != 0) return next;
      i = next;
    }
    return node_.InvalidArgument("a tree has a cycle");
  }

  const NodeLabel node_;
  std::vector<double> splits_, leaf_weights_;
  std::vector<int> modes_;
  std::vector<std::set<double>> sets_;  // MEMBER nodes' sets
  std::vector<int64_t> features_, true_ids_, false_ids_, true_leaf_, false_leaf_, missing_;
  std::vector<int64_t> leaf_targets_, roots_;
  int64_t targets_ = 1;
  int64_t aggregate_ = 1;  // 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX
};

}  // namespace

std::vector<engine::KernelDef> TreeEnsembleKernelDefs() {
  const std::vector<DataType> types = TypesOf(MlTypes{});
  return {
      // 3 only added the *_as_tensor (double) attributes, refused at creation.
      CpuDef(kMlDomain, "TreeEnsembleRegressor", 1, kMaxOpset, types,
             FactoryOf<TreeEnsembleRegressorKernel>()),
      CpuDef(kMlDomain, "TreeEnsemble", 5, kMaxOpset, {DataType::kFloat32, DataType::kFloat64},
             FactoryOf<TreeEnsemble5Kernel>()),
  };
}

}  // namespace inferd::kernels::cpu
