#include "engine/kv_cache_rewrite.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"

namespace inferd::engine {
namespace {

// One path from a present to the MatMul that reads it: the layout ops in order, then the MatMul.
struct Chain {
  std::vector<int> ops;
  int matmul = -1;
  int expand = -1;  // the repeat_kv Expand among `ops`, if any
  bool transpose = false;
  float scale = 1.f;
};

// Everything one Concat's rewrite touches.
struct CachePlan {
  int concat = -1;
  int past = -1, fresh = -1, present = -1;
  std::vector<Chain> chains;
  std::vector<std::pair<int, int>> shape_readers;  // (value read, Shape node)
  std::vector<int> past_shape_readers;             // Shape nodes reading the past input
};

bool IsOp(const Node& n, absl::string_view op) { return n.domain.empty() && n.op_type == op; }

absl::Status Refuse(const Node& n, absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat("KV-cache rewrite: node '", n.name, "' (", n.op_type, ") ", why));
}

const onnx::AttributeProto* FindAttr(const Node& n, absl::string_view name) {
  for (const onnx::AttributeProto& a : n.attributes) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::vector<int64_t> IntsAttr(const Node& n, absl::string_view name) {
  const onnx::AttributeProto* a = FindAttr(n, name);
  if (a == nullptr) return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

// The int64 values of a weight input, or nullopt.
std::optional<std::vector<int64_t>> WeightInts(const Graph& g, int v) {
  if (v < 0 || g.values[v].initializer == nullptr) return std::nullopt;
  const Tensor& t = *g.values[v].initializer;
  if (t.dtype() != DataType::kInt64) return std::nullopt;
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.NumElements());
}

// The Shape readers of `v` go to plan.shape_readers; returns its one other reader (node, input
// index), or (-1, -1) when there is none; an error when there are several.
absl::StatusOr<std::pair<int, int>> SoleDataReader(const Graph& g, int v, CachePlan& plan) {
  std::pair<int, int> reader{-1, -1};
  for (const auto& [node, input] : g.values[v].consumers) {
    if (IsOp(g.nodes[node], "Shape")) {
      plan.shape_readers.emplace_back(v, node);
    } else if (reader.first >= 0) {
      return Refuse(g.nodes[node], absl::StrCat("is a second reader of '", g.values[v].name,
                                                "' on the way to the attention MatMul"));
    } else {
      reader = {node, input};
    }
  }
  return reader;
}

// Follows the layout ops from the present's reader (node, input) to the MatMul.
absl::StatusOr<Chain> FollowChain(const Graph& g, int node, int input, CachePlan& plan) {
  Chain c;
  int transposes = 0;
  while (true) {
    const Node& n = g.nodes[node];
    if (IsOp(n, "MatMul")) {
      if (input != 1) return Refuse(n, "reads the cache as its first operand");
      c.matmul = node;
      break;
    }
    const size_t k = c.ops.size();
    if (IsOp(n, "Unsqueeze") && k == 0 && input == 0) {
      std::vector<int64_t> axes = IntsAttr(n, "axes");
      if (n.inputs.size() > 1) axes = WeightInts(g, n.inputs[1]).value_or(std::vector<int64_t>{});
      if (axes != std::vector<int64_t>{2}) return Refuse(n, "is not repeat_kv's Unsqueeze(2)");
    } else if (IsOp(n, "Expand") && k == 1 && IsOp(g.nodes[c.ops[0]], "Unsqueeze") && input == 0) {
      c.expand = node;
    } else if (IsOp(n, "Reshape") && k == 2 && c.expand >= 0 && input == 0) {
    } else if (IsOp(n, "Transpose") && input == 0 && (k == 0 || c.expand < 0 || k >= 3)) {
      if (IntsAttr(n, "perm") != std::vector<int64_t>{0, 1, 3, 2} || ++transposes > 1) {
        return Refuse(n, "is not a transpose of the last two dims");
      }
      c.transpose = true;
    } else if (IsOp(n, "Mul") && (k == 0 || c.expand < 0 || k >= 3)) {
      const int other = n.inputs[1 - input];
      const Tensor* w = other >= 0 ? g.values[other].initializer : nullptr;
      if (w == nullptr || w->dtype() != DataType::kFloat32 || w->NumElements() != 1) {
        return Refuse(n, "multiplies the cache by something else than a scalar weight");
      }
      c.scale *= *w->data<float>();
    } else {
      return Refuse(n, "reads the cache and is not a layout op the rewrite knows");
    }
    c.ops.push_back(node);
    const int out = n.outputs[0];
    if (g.values[out].is_graph_output) return Refuse(n, "makes a graph output of the cache");
    INFERD_ASSIGN_OR_RETURN(std::tie(node, input), SoleDataReader(g, out, plan));
    if (node < 0) return Refuse(n, "leads to no MatMul");
  }
  if (c.expand >= 0 && c.ops.size() < 3) return Refuse(g.nodes[c.expand], "is not repeat_kv's");
  return c;
}

absl::StatusOr<CachePlan> PlanConcat(const Graph& g, int concat) {
  const Node& n = g.nodes[concat];
  CachePlan plan;
  plan.concat = concat;
  plan.past = n.inputs[0];
  plan.fresh = n.inputs[1];
  plan.present = n.outputs[0];
  const Value& past = g.values[plan.past];
  if (past.type != DataType::kFloat32 || !past.shape.rank_known || past.shape.dims.size() != 4) {
    return Refuse(n, "concatenates a past that is not float [batch, heads, past, head_dim]");
  }
  for (const auto& [reader, input] : past.consumers) {
    if (reader == concat) continue;
    if (!IsOp(g.nodes[reader], "Shape")) return Refuse(g.nodes[reader], "reads the past input");
    plan.past_shape_readers.push_back(reader);
  }
  for (const auto& [reader, input] : g.values[plan.present].consumers) {
    if (IsOp(g.nodes[reader], "Shape")) {
      plan.shape_readers.emplace_back(plan.present, reader);
      continue;
    }
    INFERD_ASSIGN_OR_RETURN(Chain c, FollowChain(g, reader, input, plan));
    plan.chains.push_back(std::move(c));
  }
  if (plan.chains.empty()) return Refuse(n, "makes a present no MatMul reads");
  return plan;
}

onnx::AttributeProto IntAttr(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto StringAttr(const std::string& name, const std::string& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}

onnx::AttributeProto FloatAttr(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

Node FusedFrom(const Node& original, absl::string_view suffix, absl::string_view op) {
  Node f;
  f.name = FusedNodeName(original.name, suffix);
  f.op_type = std::string(op);
  f.domain = kInferdDomain;
  f.opset = 1;
  f.metadata = original.metadata;
  f.device = original.device;
  return f;
}

// Builds the rewrite of one planned Concat: new nodes into `added`, replaced ones marked in
// `remove`.
class Builder {
 public:
  Builder(Graph& g, int past_length) : g_(g), past_length_(past_length) {}

  std::string Apply(const CachePlan& p, std::vector<Node>& added, std::vector<bool>& remove) {
    const Node& concat = g_.nodes[p.concat];
    Node append = FusedFrom(concat, kKvCacheAppendSuffix, "KvCacheAppend");
    append.inputs = {p.past, p.fresh, past_length_};
    const int present_shape = ShapeValue(p.present);
    append.outputs = {present_shape};
    const std::string append_name = append.name;
    added.push_back(std::move(append));
    remove[p.concat] = true;
    for (int reader : p.past_shape_readers) {
      const Node& s = g_.nodes[reader];
      Node f = FusedFrom(s, kKvCacheShapeSuffix, "KvCacheShape");
      f.attributes = {StringAttr("of", "past")};
      f.inputs = {p.past, past_length_};
      f.outputs = s.outputs;
      added.push_back(std::move(f));
      remove[reader] = true;
    }
    for (const Chain& c : p.chains) {
      int in_shape = present_shape;
      for (int op : c.ops) {
        const Node& n = g_.nodes[op];
        Node f = FusedFrom(n, kKvCacheShapeSuffix, "KvCacheShape");
        f.attributes = n.attributes;
        f.attributes.push_back(StringAttr("of", n.op_type));
        f.inputs = {in_shape};
        if (n.inputs.size() > 1) {
          // Mul's other operand, Expand's / Reshape's shape, Unsqueeze's axes.
          f.inputs.push_back(IsOp(n, "Mul") && n.inputs[0] != -1 &&
                                     g_.values[n.inputs[0]].initializer != nullptr
                                 ? n.inputs[0]
                                 : n.inputs[1]);
        }
        in_shape = ShapeValue(n.outputs[0]);
        f.outputs = {in_shape};
        added.push_back(std::move(f));
        remove[op] = true;
      }
      const Node& mm = g_.nodes[c.matmul];
      Node f = FusedFrom(mm, kKvCacheMatMulSuffix, "KvCacheMatMul");
      f.inputs = {mm.inputs[0], p.past, present_shape, in_shape,
                  c.expand >= 0 ? shape_of_.at(g_.nodes[c.expand].outputs[0]) : -1};
      f.outputs = mm.outputs;
      f.attributes = {IntAttr("transpose_b", c.transpose ? 1 : 0), FloatAttr("scale", c.scale)};
      added.push_back(std::move(f));
      remove[c.matmul] = true;
    }
    for (const auto& [value, reader] : p.shape_readers) {
      const Node& s = g_.nodes[reader];
      Node f = FusedFrom(s, kKvCacheShapeSuffix, "KvCacheShape");
      f.attributes = s.attributes;
      f.attributes.push_back(StringAttr("of", "Shape"));
      f.inputs = {ShapeValue(value)};
      f.outputs = s.outputs;
      added.push_back(std::move(f));
      remove[reader] = true;
    }
    return append_name;
  }

 private:
  // The int64 value holding the shape of `v` (made once).
  int ShapeValue(int v) {
    auto it = shape_of_.find(v);
    if (it != shape_of_.end()) return it->second;
    Value s;
    s.name = g_.values[v].name + "/shape";
    s.type = DataType::kInt64;
    s.shape.rank_known = true;
    s.shape.dims = {DimInfo{
        g_.values[v].shape.rank_known ? static_cast<int64_t>(g_.values[v].shape.dims.size()) : -1,
        ""}};
    const int index = g_.AddValue(std::move(s));
    shape_of_[v] = index;
    return index;
  }

  Graph& g_;
  const int past_length_;
  std::map<int, int> shape_of_;
};

// GroupQueryAttention's inputs and outputs (com.microsoft, ONNX Runtime's contrib op).
constexpr int kGqaPastKey = 3, kGqaPastValue = 4, kGqaPresentKey = 1, kGqaPresentValue = 2;

bool IsGqa(const Node& n) {
  return n.domain == kMicrosoftDomain && n.op_type == "GroupQueryAttention";
}

// The GroupQueryAttention form (see the header): binds each (past input, present output) pair of
// every GroupQueryAttention node. NOT_FOUND when the graph has no such node.
absl::StatusOr<KvCacheRewrite> BindGqaCaches(Graph& g) {
  struct Pair {
    int node, past, present;
  };
  std::vector<Pair> pairs;
  std::set<int> pasts;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!IsGqa(n)) continue;
    for (auto [in, out] :
         {std::pair{kGqaPastKey, kGqaPresentKey}, std::pair{kGqaPastValue, kGqaPresentValue}}) {
      const int past = in < static_cast<int>(n.inputs.size()) ? n.inputs[in] : -1;
      const int present = out < static_cast<int>(n.outputs.size()) ? n.outputs[out] : -1;
      if (past < 0 || present < 0) return Refuse(n, "has no past or present key / value");
      const Value& pv = g.values[past];
      const Value& qv = g.values[present];
      if (!pv.is_graph_input || !qv.is_graph_output) {
        return Refuse(n,
                      "reads a past that is not a graph input or writes a present that is "
                      "not a graph output");
      }
      if (!pasts.insert(past).second || g.values[past].consumers.size() != 1) {
        return Refuse(n, absl::StrCat("past '", pv.name, "' has other readers"));
      }
      if (!qv.consumers.empty()) {
        return Refuse(n, absl::StrCat("present '", qv.name, "' is read inside the graph"));
      }
      if (!pv.shape.rank_known || pv.shape.dims.size() != 4) {
        return Refuse(n, absl::StrCat("past '", pv.name, "' is not 4-D"));
      }
      pairs.push_back({static_cast<int>(i), past, present});
    }
  }
  if (pairs.empty()) return absl::NotFoundError("no GroupQueryAttention node");
  KvCacheRewrite result;
  result.past_length_input = false;
  result.form = "GroupQueryAttention";
  for (const Pair& p : pairs) {
    Node& node = g.nodes[p.node];
    if (FindAttr(node, kSharedKvBufferAttribute) == nullptr) {
      node.attributes.push_back(IntAttr(kSharedKvBufferAttribute, 1));
    }
    Value& past = g.values[p.past];
    Value& present = g.values[p.present];
    past.shape.dims[2] = DimInfo{-1, "kv_capacity"};
    if (present.shape.rank_known && present.shape.dims.size() == 4) {
      present.shape.dims[2] = DimInfo{-1, "kv_capacity"};
    }
    present.is_graph_output = false;
    g.outputs.erase(std::remove(g.outputs.begin(), g.outputs.end(), p.present), g.outputs.end());
    result.blocks.push_back({past.name, present.name, g.nodes[p.node].name});
  }
  // In graph input order, as the Concat form reports them.
  std::vector<KvCacheRewrite::Block> ordered;
  for (int v : g.inputs) {
    for (const KvCacheRewrite::Block& b : result.blocks) {
      if (b.input == g.values[v].name) ordered.push_back(b);
    }
  }
  result.blocks = std::move(ordered);
  INFERD_RETURN_IF_ERROR(g.Validate());
  return result;
}

}  // namespace

absl::StatusOr<KvCacheRewrite> RewriteKvCacheInPlace(Graph& g) {
  g.RebuildEdges();
  for (const Node& n : g.nodes) {
    if (IsGqa(n)) return BindGqaCaches(g);
  }
  // pass 1: plan every Concat of a past input along the sequence axis; refuse before changing
  // anything.
  std::vector<CachePlan> plans;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!IsOp(n, "Concat") || n.inputs.size() != 2 || n.inputs[0] < 0 || n.inputs[1] < 0) continue;
    if (!g.values[n.inputs[0]].is_graph_input) continue;
    const onnx::AttributeProto* axis = FindAttr(n, "axis");
    if (axis == nullptr || (axis->i() != 2 && axis->i() != -2)) continue;
    INFERD_ASSIGN_OR_RETURN(CachePlan p, PlanConcat(g, static_cast<int>(i)));
    plans.push_back(std::move(p));
  }
  if (plans.empty()) {
    return absl::NotFoundError(
        "KV-cache rewrite: no Concat of a past input along the sequence axis");
  }
  std::set<int> seen;
  for (const CachePlan& p : plans) {
    for (const Chain& c : p.chains) {
      if (!seen.insert(c.matmul).second) {
        return Refuse(g.nodes[c.matmul], "reads two caches");
      }
    }
  }
  // pass 2: the past-length input, the fused nodes, the blocks' symbolic capacity.
  if (g.FindValue(kKvPastLengthInput) >= 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("KV-cache rewrite: the graph already has a value '", kKvPastLengthInput, "'"));
  }
  Value len;
  len.name = kKvPastLengthInput;
  len.type = DataType::kInt64;
  len.shape.rank_known = true;
  len.is_graph_input = true;
  const int past_length = g.AddValue(std::move(len));
  g.inputs.push_back(past_length);
  KvCacheRewrite result;
  result.form = "KvCacheAppend";
  Builder builder(g, past_length);
  std::vector<Node> added;
  std::vector<bool> remove(g.nodes.size(), false);
  for (const CachePlan& p : plans) {
    const std::string append = builder.Apply(p, added, remove);
    Value& past = g.values[p.past];
    past.shape.dims[2] = DimInfo{-1, "kv_capacity"};
    Value& present = g.values[p.present];
    result.blocks.push_back({past.name, present.name, append});
    result.matmuls += static_cast<int>(p.chains.size());
    if (present.is_graph_output) {
      present.is_graph_output = false;
      g.outputs.erase(std::remove(g.outputs.begin(), g.outputs.end(), p.present), g.outputs.end());
    }
  }
  // pass 3: splice, sort, check.
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size() + added.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!remove[i]) nodes.push_back(std::move(g.nodes[i]));
  }
  for (Node& n : added) nodes.push_back(std::move(n));
  g.nodes = std::move(nodes);
  INFERD_RETURN_IF_ERROR(g.TopologicalSort());
  INFERD_RETURN_IF_ERROR(g.Validate());
  return result;
}

}  // namespace inferd::engine
