// ModelBuilder (tests only): builds small ONNX models in C++ for engine tests.
//
// Example:
//   ModelBuilder b(/*opset=*/17);
//   b.Input("x", DataType::kFloat32, {2, 3});
//   b.Initializer("w", Shape{3}, std::vector<float>{1, 2, 3});
//   b.Node("Add", {"x", "w"}, {"y"}, "add0");
//   b.Output("y", DataType::kFloat32, {2, 3});
//   absl::StatusOr<std::shared_ptr<const Model>> m = Model::Parse(b.Serialize(), "");
#ifndef INFERD_ENGINE_TESTING_MODEL_BUILDER_H_
#define INFERD_ENGINE_TESTING_MODEL_BUILDER_H_

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "engine/data_type.h"
#include "engine/shape.h"
#include "onnx/onnx_pb.h"

namespace inferd::engine::testing {

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 17, int ir_version = 8) {
    model_.set_ir_version(ir_version);
    model_.set_producer_name("inferd-test");
    auto* imp = model_.add_opset_import();
    imp->set_domain("");
    imp->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  ModelBuilder& ImportDomain(const std::string& domain, int version) {
    auto* imp = model_.add_opset_import();
    imp->set_domain(domain);
    imp->set_version(version);
    return *this;
  }
  // dims: -1 for a symbolic dim named "d<i>"; empty `dims` with known_rank=false: no shape.
  ModelBuilder& Input(const std::string& name, DataType t, const std::vector<int64_t>& dims) {
    SetType(model_.mutable_graph()->add_input(), name, t, dims);
    return *this;
  }
  ModelBuilder& Output(const std::string& name, DataType t, const std::vector<int64_t>& dims) {
    SetType(model_.mutable_graph()->add_output(), name, t, dims);
    return *this;
  }
  ModelBuilder& ValueInfo(const std::string& name, DataType t, const std::vector<int64_t>& dims) {
    SetType(model_.mutable_graph()->add_value_info(), name, t, dims);
    return *this;
  }
  template <typename T>
  ModelBuilder& Initializer(const std::string& name, const Shape& shape,
                            const std::vector<T>& values) {
    onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(static_cast<int>(DataTypeOf<T>::value));
    for (int64_t d : shape.dims()) t->add_dims(d);
    t->set_raw_data(
        std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
    return *this;
  }
  onnx::TensorProto* RawInitializer() { return model_.mutable_graph()->add_initializer(); }
  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "",
                        const std::string& domain = "") {
    onnx::NodeProto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  static void IntAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void IntsAttr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

  onnx::ModelProto& proto() { return model_; }
  std::string Serialize() const { return model_.SerializeAsString(); }

 private:
  static void SetType(onnx::ValueInfoProto* vi, const std::string& name, DataType t,
                      const std::vector<int64_t>& dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(static_cast<int>(t));
    auto* shape = tt->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (dims[i] >= 0) {
        d->set_dim_value(dims[i]);
      } else {
        d->set_dim_param("d" + std::to_string(i));
      }
    }
  }
  onnx::ModelProto model_;
};

}  // namespace inferd::engine::testing

#endif  // INFERD_ENGINE_TESTING_MODEL_BUILDER_H_
