#include "engine/model.h"

#include <climits>
#include <cstdlib>
#include <exception>
#include <set>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/schemas.h"
#include "google/protobuf/unknown_field_set.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace inferd::engine {
namespace {

constexpr int kNodeMetadataPropsField = 9;   // NodeProto.metadata_props (ONNX IR 10)
constexpr int64_t kMaxCheckerIrVersion = 8;  // what libonnx 1.12's checker knows
constexpr int64_t kMaxIrVersion = 10;

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// NodeProto.metadata_props is newer than libonnx 1.12: read it from the unknown fields.
std::map<std::string, std::string> NodeMetadata(const onnx::NodeProto& node) {
  std::map<std::string, std::string> out;
  const google::protobuf::UnknownFieldSet& unknown = node.GetReflection()->GetUnknownFields(node);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField& f = unknown.field(i);
    if (f.number() != kNodeMetadataPropsField ||
        f.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
      continue;
    }
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(f.length_delimited())) out[entry.key()] = entry.value();
  }
  return out;
}

// Names a subgraph (recursively) reads but does not define: its outer-scope inputs.
void CollectOuterNames(const onnx::GraphProto& g, std::set<std::string> defined,
                       std::vector<std::string>& out) {
  for (const auto& i : g.input()) defined.insert(i.name());
  for (const auto& i : g.initializer()) defined.insert(i.name());
  for (const auto& n : g.node()) {
    for (const std::string& in : n.input()) {
      if (!in.empty() && !defined.count(in)) {
        if (std::find(out.begin(), out.end(), in) == out.end()) out.push_back(in);
      }
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectOuterNames(a.g(), defined, out);
      for (const auto& sg : a.graphs()) CollectOuterNames(sg, defined, out);
    }
    for (const std::string& o : n.output()) defined.insert(o);
  }
  for (const auto& o : g.output()) {
    if (!defined.count(o.name()) && std::find(out.begin(), out.end(), o.name()) == out.end()) {
      out.push_back(o.name());
    }
  }
}

// A TensorProto for a Constant node's value (opset 1-17 forms).
absl::StatusOr<onnx::TensorProto> ConstantValue(const onnx::NodeProto& node) {
  if (node.attribute_size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Constant node '", node.name(), "' must have exactly one value attribute"));
  }
  const onnx::AttributeProto& a = node.attribute(0);
  onnx::TensorProto t;
  if (a.name() == "value" && a.has_t()) {
    t = a.t();
  } else if (a.name() == "value_float") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(a.f());
  } else if (a.name() == "value_floats") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(a.floats_size());
    for (float f : a.floats()) t.add_float_data(f);
  } else if (a.name() == "value_int") {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_int64_data(a.i());
  } else if (a.name() == "value_ints") {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(a.ints_size());
    for (int64_t i : a.ints()) t.add_int64_data(i);
  } else if (a.name() == "value_string") {
    t.set_data_type(onnx::TensorProto::STRING);
    t.add_string_data(a.s());
  } else if (a.name() == "value_strings") {
    t.set_data_type(onnx::TensorProto::STRING);
    t.add_dims(a.strings_size());
    for (const std::string& v : a.strings()) t.add_string_data(v);
  } else {
    return absl::UnimplementedError(absl::StrCat("Constant node '", node.name(), "': attribute '",
                                                 a.name(), "' is not supported (sparse value)"));
  }
  return t;
}

// Orders the graph's nodes so each comes after the producers of its inputs (the ONNX checker
// refuses unsorted graphs, and real exports ship them). Nodes that can never become ready (an
// undefined input, a cycle) keep their relative order at the end, for the checker to report.
void SortGraphProto(onnx::GraphProto* g) {
  std::set<std::string> available;
  for (const auto& i : g->input()) available.insert(i.name());
  for (const auto& i : g->initializer()) available.insert(i.name());
  std::set<std::string> produced_here;
  for (const auto& n : g->node()) produced_here.insert(n.output().begin(), n.output().end());
  const int n = g->node_size();
  std::vector<std::vector<std::string>> needs(n);
  for (int i = 0; i < n; ++i) {
    const onnx::NodeProto& node = g->node(i);
    for (const std::string& in : node.input()) {
      if (!in.empty()) needs[i].push_back(in);
    }
    std::vector<std::string> outer;
    for (const auto& a : node.attribute()) {
      if (a.has_g()) CollectOuterNames(a.g(), {}, outer);
      for (const auto& sg : a.graphs()) CollectOuterNames(sg, {}, outer);
    }
    for (const std::string& name : outer) {
      if (produced_here.count(name)) needs[i].push_back(name);  // else from an enclosing graph
    }
  }
  std::vector<int> order;
  std::vector<bool> placed(n, false);
  bool progress = true;
  while (progress && static_cast<int>(order.size()) < n) {
    progress = false;
    for (int i = 0; i < n; ++i) {
      if (placed[i]) continue;
      bool ready = true;
      for (const std::string& name : needs[i]) {
        if (!available.count(name) && produced_here.count(name)) {
          ready = false;
          break;
        }
      }
      if (!ready) continue;
      placed[i] = true;
      order.push_back(i);
      progress = true;
      for (const std::string& out : g->node(i).output()) available.insert(out);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (!placed[i]) order.push_back(i);
  }
  bool sorted = true;
  for (int i = 0; i < n; ++i) sorted = sorted && order[i] == i;
  if (sorted) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Reserve(n);
  for (int i : order) *nodes.Add() = std::move(*g->mutable_node(i));
  g->mutable_node()->Swap(&nodes);
}

// The checker resolves external data locations against the working directory: point them at
// the model's directory for the check, and restore them afterwards.
class ExternalLocationsForChecker {
 public:
  ExternalLocationsForChecker(onnx::GraphProto* g, const std::string& model_dir) {
    if (model_dir.empty()) return;
    for (auto& t : *g->mutable_initializer()) {
      if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
      for (auto& e : *t.mutable_external_data()) {
        if (e.key() == "location" && !e.value().empty() && e.value()[0] != '/') {
          saved_.emplace_back(&e, e.value());
          e.set_value(absl::StrCat(model_dir, "/", e.value()));
        }
      }
    }
  }
  ~ExternalLocationsForChecker() {
    for (auto& [entry, value] : saved_) entry->set_value(value);
  }

 private:
  std::vector<std::pair<onnx::StringStringEntryProto*, std::string>> saved_;
};

// The name of an ONNX element type the engine has no DataType for.
std::string UnsupportedTypeName(int32_t type) {
  switch (type) {
    case 14:
      return "complex64";
    case 15:
      return "complex128";
    case 17:
      return "float8e4m3fn";
    case 18:
      return "float8e4m3fnuz";
    case 19:
      return "float8e5m2";
    case 20:
      return "float8e5m2fnuz";
    case 21:
      return "uint4";
    case 22:
      return "int4";
    case 23:
      return "float4e2m1";
    default:
      return absl::StrCat("element type ", type);
  }
}

// Element types the engine cannot hold, named with where they appear (inputs, outputs, value
// infos and initializers of the graph and its subgraphs), so the model is refused with an
// UNIMPLEMENTED that says so before the checker (which knows fewer types) sees it.
void CollectUnsupportedTypes(const onnx::GraphProto& g, std::vector<std::string>& out) {
  auto check = [&](const onnx::TypeProto& t, const std::string& name) {
    if (!t.has_tensor_type()) return;
    const int32_t e = t.tensor_type().elem_type();
    if (e != 0 && !IsKnownDataType(e)) {
      out.push_back(absl::StrCat("'", name, "' (", UnsupportedTypeName(e), ")"));
    }
  };
  for (const auto& v : g.input()) check(v.type(), v.name());
  for (const auto& v : g.output()) check(v.type(), v.name());
  for (const auto& v : g.value_info()) check(v.type(), v.name());
  for (const auto& t : g.initializer()) {
    if (!IsKnownDataType(t.data_type())) {
      out.push_back(
          absl::StrCat("initializer '", t.name(), "' (", UnsupportedTypeName(t.data_type()), ")"));
    }
  }
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectUnsupportedTypes(a.g(), out);
      for (const auto& sg : a.graphs()) CollectUnsupportedTypes(sg, out);
    }
  }
}

// Nodes of the default ONNX domain for which no schema exists at the model's opset (an operator
// newer than inferd's registrations, or a misspelled one), as "Op (node 'n')", recursively.
void CollectUnknownOps(const onnx::GraphProto& g, int opset, std::vector<std::string>& out) {
  for (const auto& n : g.node()) {
    if (NormalizeDomain(n.domain()).empty() &&
        onnx::OpSchemaRegistry::Schema(n.op_type(), opset, onnx::ONNX_DOMAIN) == nullptr) {
      out.push_back(absl::StrCat(n.op_type(), " (node '", n.name(), "')"));
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectUnknownOps(a.g(), opset, out);
      for (const auto& sg : a.graphs()) CollectUnknownOps(sg, opset, out);
    }
  }
}

// Dims of a ShapeInfo, -1 where unknown (what CheckShapeBounds skips).
std::vector<int64_t> KnownDims(const ShapeInfo& shape) {
  std::vector<int64_t> dims;
  dims.reserve(shape.dims.size());
  for (const DimInfo& d : shape.dims) dims.push_back(d.value);
  return dims;
}

// The shape bounds (engine/shape.h) for one value; the error names the value and its shape.
absl::Status CheckValueShape(const Value& v, const std::string& where) {
  if (!v.shape.rank_known) return absl::OkStatus();
  const std::vector<int64_t> dims = KnownDims(v.shape);
  absl::Status bounds = CheckShapeBounds(dims, ElementSize(v.type));
  if (bounds.ok()) return bounds;
  const std::string shape = v.shape.dims.size() <= kMaxShapeRank
                                ? v.shape.ToString()
                                : absl::StrCat("of rank ", v.shape.dims.size());
  return absl::InvalidArgumentError(
      absl::StrCat(where, ": value '", v.name, "' has shape ", shape, " of ", DataTypeName(v.type),
                   ": ", bounds.message(), "; the model is refused before any kernel is made"));
}

// Load-time validation, after shape inference and before any kernel exists: every value whose
// rank is known (weights, inputs, inferred intermediates and outputs, in subgraphs too) is within
// the shape bounds, so the sizes the partitioner, the planner and the kernels compute from these
// shapes cannot overflow, and oneDNN never sees a dim it truncates.
absl::Status CheckGraphShapes(const Graph& graph, const std::string& where) {
  for (const Value& v : graph.values) INFERD_RETURN_IF_ERROR(CheckValueShape(v, where));
  for (const Node& n : graph.nodes) {
    for (const auto& [attribute, sub] : n.subgraphs) {
      INFERD_RETURN_IF_ERROR(CheckGraphShapes(
          *sub, absl::StrCat(where, ", subgraph '", attribute, "' of node '", n.name, "'")));
    }
  }
  return absl::OkStatus();
}

// A fixed (or, through the session, maximum) input shape from the config, checked before it
// reaches shape inference.
absl::Status CheckFixedShape(const std::string& where, const std::string& name,
                             const onnx::ValueInfoProto& input, const std::vector<int64_t>& dims) {
  const size_t element = ElementSize(static_cast<DataType>(input.type().tensor_type().elem_type()));
  for (int64_t d : dims) {
    if (d < 0) return absl::OkStatus();  // reported with the dim's index by the caller
  }
  absl::Status bounds = CheckShapeBounds(dims, element);
  if (bounds.ok()) return bounds;
  return absl::InvalidArgumentError(absl::StrCat(where, ": fixed shape for '", name, "' ",
                                                 ShapeForMessage(dims), ": ", bounds.message()));
}

}  // namespace

ShapeInfo ShapeInfoFromType(const onnx::TypeProto& type) {
  ShapeInfo info;
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return info;
  info.rank_known = true;
  for (const auto& d : type.tensor_type().shape().dim()) {
    DimInfo dim;
    if (d.has_dim_value() && d.dim_value() >= 0) dim.value = d.dim_value();
    if (d.has_dim_param()) dim.symbol = d.dim_param();
    info.dims.push_back(std::move(dim));
  }
  return info;
}

int Model::opset(absl::string_view domain) const {
  auto it = opsets_.find(NormalizeDomain(domain));
  return it == opsets_.end() ? 0 : it->second;
}

absl::StatusOr<std::shared_ptr<const Model>> Model::Load(const std::string& path,
                                                         const ModelLoadOptions& options) {
  INFERD_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file, MappedFile::Open(path));
  if (file->size() > static_cast<uint64_t>(INT_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path, "' is ", file->size(),
        " bytes; ONNX files over 2 GiB cannot be parsed: store the weights as external data"));
  }
  std::shared_ptr<Model> model(new Model(DirName(path)));
  model->path_ = path;
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real) != nullptr && DirName(real) != DirName(path)) {
    model->weights_.set_linked_model_dir(DirName(real));
  }
  model->proto_ = std::make_unique<onnx::ModelProto>();
  if (!model->proto_->ParseFromArray(file->data(), static_cast<int>(file->size()))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path, "' is not a valid ONNX model (protobuf parsing failed: truncated or corrupt)"));
  }
  INFERD_RETURN_IF_ERROR(model->Build(options));
  return std::shared_ptr<const Model>(std::move(model));
}

absl::StatusOr<std::shared_ptr<const Model>> Model::Parse(absl::string_view bytes,
                                                          const std::string& model_dir,
                                                          const ModelLoadOptions& options) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError("model bytes over 2 GiB cannot be parsed");
  }
  std::shared_ptr<Model> model(new Model(model_dir));
  model->path_ = "<memory>";
  model->proto_ = std::make_unique<onnx::ModelProto>();
  if (!model->proto_->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        "not a valid ONNX model (protobuf parsing failed: truncated or corrupt)");
  }
  INFERD_RETURN_IF_ERROR(model->Build(options));
  return std::shared_ptr<const Model>(std::move(model));
}

absl::Status Model::Build(const ModelLoadOptions& options) {
  onnx::ModelProto& m = *proto_;
  const std::string where = absl::StrCat("model '", path_, "'");
  if (!m.has_graph()) return absl::InvalidArgumentError(absl::StrCat(where, " has no graph"));
  if (m.ir_version() < 3 || m.ir_version() > kMaxIrVersion) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": IR version ", m.ir_version(),
                                                   " is not supported (3 to ", kMaxIrVersion, ")"));
  }

  // pass 1: opsets (a model whose nodes are all of other domains may import no default one),
  // element types, and operators of the default domain that no schema describes.
  for (const auto& imp : m.opset_import()) {
    opsets_[NormalizeDomain(imp.domain())] = static_cast<int>(imp.version());
  }
  RegisterInferdSchemas();
  const int onnx_opset = opset("");
  if (opsets_.count("") && (onnx_opset < options.min_opset || onnx_opset > options.max_opset)) {
    return absl::UnimplementedError(absl::StrCat(where, " imports opset ", onnx_opset,
                                                 " of the default ONNX domain; inferd supports ",
                                                 options.min_opset, " to ", options.max_opset));
  }
  std::vector<std::string> unsupported;
  CollectUnsupportedTypes(m.graph(), unsupported);
  if (!unsupported.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        where, " uses element types inferd has no type for: ", absl::StrJoin(unsupported, ", ")));
  }
  CollectUnknownOps(m.graph(), onnx_opset, unsupported);
  if (!unsupported.empty()) {
    return absl::UnimplementedError(
        absl::StrCat(where, ": no operator of that name exists in ", "ONNX opset ", onnx_opset,
                     " as inferd knows it: ", absl::StrJoin(unsupported, ", ")));
  }

  // pass 2: the ONNX checker (libonnx 1.12 knows IR up to 8; newer IR only adds types and
  // fields we check ourselves, so it is checked as IR 8).
  const int64_t ir = m.ir_version();
  SortGraphProto(m.mutable_graph());
  try {
    ExternalLocationsForChecker locations(m.mutable_graph(), weights_.model_dir());
    if (ir > kMaxCheckerIrVersion) m.set_ir_version(kMaxCheckerIrVersion);
    onnx::checker::check_model(m);
    m.set_ir_version(ir);
  } catch (const std::exception& e) {
    m.set_ir_version(ir);
    return absl::InvalidArgumentError(absl::StrCat(where, " failed the ONNX checker: ", e.what()));
  }

  // pass 3: fixed input shapes, then shape inference with data propagation.
  std::set<std::string> initializer_names;
  for (const auto& t : m.graph().initializer()) initializer_names.insert(t.name());
  for (const auto& [name, dims] : options.fixed_input_shapes) {
    onnx::ValueInfoProto* input = nullptr;
    for (auto& in : *m.mutable_graph()->mutable_input()) {
      if (in.name() == name) input = &in;
    }
    if (input == nullptr || initializer_names.count(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": fixed shape given for '", name, "', which is not a graph input"));
    }
    INFERD_RETURN_IF_ERROR(CheckFixedShape(where, name, *input, dims));
    auto* shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() != static_cast<int>(dims.size())) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": input '", name, "' has rank ",
                                                     shape->dim_size(), ", fixed shape has rank ",
                                                     dims.size()));
    }
    for (int d = 0; d < shape->dim_size(); ++d) {
      auto* dim = shape->mutable_dim(d);
      if (dims[d] < 0 || (dim->has_dim_value() && dim->dim_value() != dims[d])) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": fixed shape for '", name, "' sets dim ", d, " to ", dims[d],
            " but the model has ", dim->has_dim_value() ? absl::StrCat(dim->dim_value()) : "?"));
      }
      dim->set_dim_value(dims[d]);
    }
  }
  // Shape inference. libonnx 1.12's own functions have a few bugs (MaxPool with ceil_mode keeps
  // a last window that starts in the padding, fixed in later ONNX releases): where its inferred
  // shape contradicts a shape the model declares, the declared shapes of intermediates and
  // outputs are dropped (their element types kept) and inference runs once more, so such a
  // model still loads; the kernels compute the true shapes at run time.
  auto infer = [&]() -> std::string {
    try {
      onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*error_mode=*/0,
                                       /*enable_data_propagation=*/true);
      if (ir > kMaxCheckerIrVersion) m.set_ir_version(kMaxCheckerIrVersion);
      onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts);
      m.set_ir_version(ir);
      return "";
    } catch (const std::exception& e) {
      m.set_ir_version(ir);
      return e.what();
    }
  };
  std::string inference_error = infer();
  if (!inference_error.empty() &&
      inference_error.find("Inferred shape and existing shape differ") != std::string::npos) {
    m.mutable_graph()->clear_value_info();
    for (auto& out : *m.mutable_graph()->mutable_output()) {
      if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
    }
    inference_error = infer();
  }
  if (!inference_error.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": shape inference failed: ", inference_error));
  }

  // pass 4-6: the IR (and the IR of every subgraph, recursively).
  INFERD_RETURN_IF_ERROR(BuildGraph(m.graph(), /*outer=*/nullptr, &graph_));
  // pass 7: every shape known at load is within the engine's bounds.
  return CheckGraphShapes(graph_, where);
}

namespace {

bool IsConstantNode(const onnx::NodeProto& np) {
  return np.op_type() == "Constant" && NormalizeDomain(np.domain()).empty();
}

// A weight value for the tensor `w`, named `name`.
Value WeightValue(const std::string& name, const Tensor* w) {
  Value v;
  v.name = name;
  v.type = w->dtype();
  v.shape = ShapeInfo::FromShape(w->shape());
  v.initializer = w;
  return v;
}

// The value kind and element type of an ONNX type: a tensor, a sequence of tensors, or an
// optional of either (docs/sequences.md). False for what the engine cannot hold (maps, sparse
// tensors, sequences of sequences).
bool ValueKindOf(const onnx::TypeProto& t, ValueKind* kind, DataType* type) {
  if (t.has_tensor_type()) {
    *kind = ValueKind::kTensor;
    *type = static_cast<DataType>(t.tensor_type().elem_type());
    return true;
  }
  const onnx::TypeProto* inner = nullptr;
  if (t.has_sequence_type()) {
    *kind = ValueKind::kSequence;
    inner = &t.sequence_type().elem_type();
  } else if (t.has_optional_type()) {
    *kind = ValueKind::kOptional;
    inner = &t.optional_type().elem_type();
    if (inner->has_sequence_type()) inner = &inner->sequence_type().elem_type();
  }
  if (inner == nullptr || !inner->has_tensor_type()) return false;
  *type = static_cast<DataType>(inner->tensor_type().elem_type());
  return true;
}

// Graph inputs the caller feeds (initializers listed as inputs excluded).
absl::Status AddInputs(const onnx::GraphProto& g, const std::string& where, Graph& graph) {
  std::set<std::string> initializer_names;
  for (const auto& t : g.initializer()) initializer_names.insert(t.name());
  for (const auto& in : g.input()) {
    if (initializer_names.count(in.name())) continue;  // IR < 4 lists weights as inputs too
    Value v;
    if (!ValueKindOf(in.type(), &v.kind, &v.type)) {
      return absl::UnimplementedError(absl::StrCat(
          where, ": input '", in.name(),
          "' is not a tensor, a sequence of tensors or an optional (maps are not supported)"));
    }
    if (graph.FindValue(in.name()) >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": input '", in.name(), "' is declared twice"));
    }
    v.name = in.name();
    v.shape = ShapeInfoFromType(in.type());
    v.is_graph_input = true;
    graph.inputs.push_back(graph.AddValue(std::move(v)));
  }
  return absl::OkStatus();
}

// A subgraph reads values of its enclosing graphs by name: they enter it as outer-scope values,
// bound from the parent's run when the subgraph runs.
absl::Status AddOuterScopeValues(const onnx::GraphProto& g, const Graph& outer,
                                 const std::string& where, Graph& graph) {
  std::vector<std::string> outer_names;
  CollectOuterNames(g, {}, outer_names);
  for (const std::string& name : outer_names) {
    const int pv = outer.FindValue(name);
    if (pv < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " reads '", name, "', which no enclosing graph defines"));
    }
    Value v;
    v.name = name;
    v.type = outer.values[pv].type;
    v.kind = outer.values[pv].kind;
    v.shape = outer.values[pv].shape;
    v.is_graph_input = true;
    v.outer_scope = true;
    graph.AddValue(std::move(v));
  }
  return absl::OkStatus();
}

// A unique node name: the model's, or "<name or op>_<k>" when it has none or repeats one.
std::string UniqueNodeName(const onnx::NodeProto& np, std::set<std::string>& node_names,
                           int& generated) {
  std::string name = np.name();
  if (name.empty() || node_names.count(name)) {
    do {
      name = absl::StrCat(np.name().empty() ? np.op_type() : np.name(), "_", generated++);
    } while (node_names.count(name));
  }
  node_names.insert(name);
  return name;
}

// The node's output values, typed where inference found their types.
absl::Status AddNodeOutputs(const onnx::NodeProto& np,
                            const std::map<std::string, const onnx::TypeProto*>& types,
                            const std::string& where, Node& node, Graph& graph) {
  for (const std::string& out : np.output()) {
    if (out.empty()) {
      node.outputs.push_back(-1);
      continue;
    }
    if (graph.FindValue(out) >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": value '", out, "' is produced twice (node '", node.name, "')"));
    }
    Value v;
    v.name = out;
    auto t = types.find(out);
    if (t != types.end() && ValueKindOf(*t->second, &v.kind, &v.type)) {
      v.shape = ShapeInfoFromType(*t->second);
    }
    node.outputs.push_back(graph.AddValue(std::move(v)));
  }
  return absl::OkStatus();
}

// Each node's inputs and the outer-scope values its subgraphs read, once every output exists:
// files need not be sorted.
absl::Status ResolveNodeInputs(const onnx::GraphProto& g, const std::string& where, Graph& graph) {
  for (int k = 0, n = 0; k < g.node_size(); ++k) {
    const onnx::NodeProto& np = g.node(k);
    if (IsConstantNode(np)) continue;
    Node& node = graph.nodes[n++];
    for (const std::string& in : np.input()) {
      if (in.empty()) {
        node.inputs.push_back(-1);
        continue;
      }
      const int v = graph.FindValue(in);
      if (v < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": node '", node.name, "' reads '", in,
                         "', which is no graph input, initializer, or output of any node"));
      }
      node.inputs.push_back(v);
    }
    std::vector<std::string> outer;
    for (const auto& a : np.attribute()) {
      if (a.has_g()) CollectOuterNames(a.g(), {}, outer);
      for (const auto& sg : a.graphs()) CollectOuterNames(sg, {}, outer);
    }
    for (const std::string& name : outer) {
      const int v = graph.FindValue(name);
      if (v < 0) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": a subgraph of node '", node.name,
                                                       "' reads '", name,
                                                       "', which is defined nowhere"));
      }
      node.implicit_inputs.push_back(v);
    }
  }
  return absl::OkStatus();
}

absl::Status MarkGraphOutputs(const onnx::GraphProto& g, const std::string& where, Graph& graph) {
  for (const auto& out : g.output()) {
    const int v = graph.FindValue(out.name());
    if (v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": graph output '", out.name(), "' is produced by no node"));
    }
    graph.values[v].is_graph_output = true;
    graph.outputs.push_back(v);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Model::BuildGraph(const onnx::GraphProto& g, const Graph* outer, Graph* out) {
  Graph& graph = *out;
  const std::string where = absl::StrCat("model '", path_, "'", outer ? ", subgraph '" : "",
                                         outer ? g.name() : "", outer ? "'" : "");
  // pass 4: values for weights, inputs, and the types / shapes inference found.
  INFERD_RETURN_IF_ERROR(AddInitializers(g, where, graph));
  INFERD_RETURN_IF_ERROR(AddInputs(g, where, graph));
  if (outer != nullptr) INFERD_RETURN_IF_ERROR(AddOuterScopeValues(g, *outer, where, graph));
  // pass 5: nodes (Constant nodes become weights), their inputs, the graph outputs.
  INFERD_RETURN_IF_ERROR(AddNodes(g, where, graph));
  INFERD_RETURN_IF_ERROR(ResolveNodeInputs(g, where, graph));
  INFERD_RETURN_IF_ERROR(MarkGraphOutputs(g, where, graph));
  // pass 6: subgraphs (If branches), then topological order (exports are not always sorted).
  INFERD_RETURN_IF_ERROR(BuildSubgraphs(g, graph));
  INFERD_RETURN_IF_ERROR(graph.TopologicalSort());
  return graph.Validate();
}

absl::Status Model::AddInitializers(const onnx::GraphProto& g, const std::string& where,
                                    Graph& graph) {
  for (const auto& t : g.initializer()) {
    if (graph.FindValue(t.name()) >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": initializer '", t.name(), "' is defined twice"));
    }
    INFERD_ASSIGN_OR_RETURN(const Tensor* w,
                            weights_.Add(t, absl::StrCat("initializer '", t.name(), "'")));
    graph.AddValue(WeightValue(t.name(), w));
  }
  if (g.sparse_initializer_size() > 0) {
    return absl::UnimplementedError(absl::StrCat(where, ": sparse initializers are not supported"));
  }
  return absl::OkStatus();
}

absl::Status Model::FoldConstant(const onnx::NodeProto& np, const std::string& where,
                                 Graph& graph) {
  INFERD_ASSIGN_OR_RETURN(onnx::TensorProto t, ConstantValue(np));
  if (np.output_size() != 1 || graph.FindValue(np.output(0)) >= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": Constant node '", np.name(), "' must define one new output"));
  }
  t.set_name(np.output(0));
  folded_.push_back(std::move(t));
  INFERD_ASSIGN_OR_RETURN(
      const Tensor* w, weights_.Add(folded_.back(), absl::StrCat("Constant '", np.output(0), "'")));
  graph.AddValue(WeightValue(np.output(0), w));
  return absl::OkStatus();
}

absl::Status Model::AddNodes(const onnx::GraphProto& g, const std::string& where, Graph& graph) {
  std::map<std::string, const onnx::TypeProto*> types;
  for (const auto& vi : g.value_info()) types[vi.name()] = &vi.type();
  for (const auto& vi : g.output()) types[vi.name()] = &vi.type();
  std::set<std::string> node_names;
  int generated = 0;
  for (int k = 0; k < g.node_size(); ++k) {
    const onnx::NodeProto& np = g.node(k);
    if (IsConstantNode(np)) {
      INFERD_RETURN_IF_ERROR(FoldConstant(np, where, graph));
      continue;
    }
    Node node;
    node.name = UniqueNodeName(np, node_names, generated);
    node.op_type = np.op_type();
    node.domain = NormalizeDomain(np.domain());
    node.opset = opset(node.domain);
    if (node.opset == 0 && opsets_.count(node.domain) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": node '", node.name,
                                                     "' uses domain '", np.domain(),
                                                     "', which the model does not import"));
    }
    node.attributes.assign(np.attribute().begin(), np.attribute().end());
    for (const auto& a : np.attribute()) {
      if (a.graphs_size() > 0) {
        return absl::UnimplementedError(absl::StrCat(where, ": node '", node.name,
                                                     "' has a list of graphs in attribute '",
                                                     a.name(), "', which is not supported"));
      }
    }
    node.metadata = NodeMetadata(np);
    INFERD_RETURN_IF_ERROR(AddNodeOutputs(np, types, where, node, graph));
    graph.nodes.push_back(std::move(node));
  }
  return absl::OkStatus();
}

absl::Status Model::BuildSubgraphs(const onnx::GraphProto& g, Graph& graph) {
  for (int k = 0, n = 0; k < g.node_size(); ++k) {
    const onnx::NodeProto& np = g.node(k);
    if (IsConstantNode(np)) continue;
    Node& node = graph.nodes[n++];
    for (const auto& a : np.attribute()) {
      if (!a.has_g()) continue;
      auto sub = std::make_shared<Graph>();
      INFERD_RETURN_IF_ERROR(BuildGraph(a.g(), &graph, sub.get()));
      node.subgraphs[a.name()] = std::move(sub);
    }
  }
  return absl::OkStatus();
}

}  // namespace inferd::engine
