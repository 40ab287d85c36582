#include "engine/quant_schemas.h"

#include <string>
#include <utility>
#include <vector>

#include "engine/domain.h"
#include "engine/schema_family.h"
#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"

namespace inferd::engine {
namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

const std::vector<std::string> kQuantized = {"tensor(uint8)", "tensor(int8)"};
const std::vector<std::string> kScale = {"tensor(float)"};

void RegisterAll();
SchemaFamily family("engine/quant_schemas.cc", RegisterAll);

OpSchema Schema(const char* name, onnx::InferenceFunction infer) {
  OpSchema s =
      family.New(name, kMicrosoftDomain, 1, "com.microsoft version 1, as ONNX Runtime defines it");
  s.TypeAndShapeInferenceFunction(std::move(infer));
  s.TypeConstraint("T", kQuantized, "").TypeConstraint("F", kScale, "");
  return s;
}

void SameAsInput0(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// QLinearAdd / QLinearMul: C is A's type, the broadcast of A's and B's shapes.
void Binary(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (onnx::hasInputShape(ctx, 0) && onnx::hasInputShape(ctx, 3)) {
    onnx::bidirectionalBroadcastShapeInference(
        onnx::getInputShape(ctx, 0), onnx::getInputShape(ctx, 3), *onnx::getOutputShape(ctx, 0));
  }
}

// QLinearGlobalAveragePool: [N, C, 1, ...] (channels_last 0) or [N, 1, ..., C].
void GlobalPool(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& in = onnx::getInputShape(ctx, 0);
  if (in.dim_size() < 3) fail_shape_inference("X must be [N, C, spatial...] (rank >= 3)");
  const bool last = onnx::getAttribute(ctx, "channels_last", 0) != 0;
  TensorShapeProto out = in;
  for (int d = 1; d < in.dim_size(); ++d) {
    const bool channel = last ? d == in.dim_size() - 1 : d == 1;
    if (!channel) {
      out.mutable_dim(d)->clear_dim_param();
      out.mutable_dim(d)->set_dim_value(1);
    }
  }
  onnx::updateOutputShape(ctx, 0, out);
}

// MatMulIntegerToFloat / DynamicQuantizeMatMul: float32 Y, numpy matmul of A's and B's shapes.
void MatMulToFloat(InferenceContext& ctx) {
  onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::FLOAT);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1)) return;
  const TensorShapeProto& a = onnx::getInputShape(ctx, 0);
  const TensorShapeProto& b = onnx::getInputShape(ctx, 1);
  if (a.dim_size() == 0 || b.dim_size() == 0) fail_shape_inference("A and B must have rank >= 1");
  const int ar = a.dim_size() >= 2 ? a.dim_size() - 2 : 0;
  const int br = b.dim_size() >= 2 ? b.dim_size() - 2 : 0;
  const int r = std::max(ar, br);
  TensorShapeProto out;
  for (int d = 0; d < r; ++d) {
    const int ia = d - (r - ar), ib = d - (r - br);
    const TensorShapeProto::Dimension* da = ia >= 0 ? &a.dim(ia) : nullptr;
    const TensorShapeProto::Dimension* db = ib >= 0 ? &b.dim(ib) : nullptr;
    auto one = [](const TensorShapeProto::Dimension* x) {
      return x == nullptr || (x->has_dim_value() && x->dim_value() == 1);
    };
    if (one(da) && db != nullptr) {
      *out.add_dim() = *db;
    } else if (da != nullptr) {
      *out.add_dim() = one(db) || da->has_dim_value() ? *da : *db;
    } else {
      out.add_dim()->set_dim_value(1);
    }
  }
  if (a.dim_size() >= 2) *out.add_dim() = a.dim(a.dim_size() - 2);
  if (b.dim_size() >= 2) *out.add_dim() = b.dim(b.dim_size() - 1);
  onnx::updateOutputShape(ctx, 0, out);
}

// QGemm: [M, N] from A ([M, K] or [K, M] with transA) and B ([K, N] or [N, K] with transB);
// y_zero_point's type when it is given, else uint8 with a y_scale (as QuantizeLinear), else
// float32.
void QGemmInfer(InferenceContext& ctx) {
  if (ctx.getNumInputs() > 8 && ctx.getInputType(8) != nullptr) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 8, 0);
  } else if (ctx.getNumInputs() > 7 && ctx.getInputType(7) != nullptr) {
    onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::UINT8);
  } else {
    onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::FLOAT);
  }
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 3)) return;
  const TensorShapeProto& a = onnx::getInputShape(ctx, 0);
  const TensorShapeProto& b = onnx::getInputShape(ctx, 3);
  if (a.dim_size() != 2 || b.dim_size() != 2) fail_shape_inference("A and B must be 2-D");
  const bool ta = onnx::getAttribute(ctx, "transA", 0) != 0;
  const bool tb = onnx::getAttribute(ctx, "transB", 0) != 0;
  TensorShapeProto out;
  *out.add_dim() = a.dim(ta ? 1 : 0);
  *out.add_dim() = b.dim(tb ? 0 : 1);
  onnx::updateOutputShape(ctx, 0, out);
}

// QLinearAveragePool: X's type; [N, C, out...] (or [N, out..., C] with channels_last), the
// spatial sizes as AveragePool's where X's are known and the pads explicit (NOTSET / VALID).
void AveragePoolInfer(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  if (rank < 3) fail_shape_inference("X must be [N, C, spatial...] (rank >= 3)");
  const bool last = onnx::getAttribute(ctx, "channels_last", 0) != 0;
  const int first = last ? 1 : 2, sd = rank - 2;
  std::vector<int64_t> kernel, strides, pads;
  if (const AttributeProto* a = ctx.getAttribute("kernel_shape")) {
    kernel.assign(a->ints().begin(), a->ints().end());
  }
  if (const AttributeProto* a = ctx.getAttribute("strides")) {
    strides.assign(a->ints().begin(), a->ints().end());
  }
  if (const AttributeProto* a = ctx.getAttribute("pads")) {
    pads.assign(a->ints().begin(), a->ints().end());
  }
  if (static_cast<int>(kernel.size()) != sd) {
    fail_shape_inference("kernel_shape needs ", sd, " dims");
  }
  const std::string auto_pad = onnx::getAttribute(ctx, "auto_pad", std::string("NOTSET"));
  const bool ceil = onnx::getAttribute(ctx, "ceil_mode", 0) != 0;
  TensorShapeProto out = in;
  for (int d = 0; d < sd; ++d) {
    auto* dim = out.mutable_dim(first + d);
    const auto& src = in.dim(first + d);
    const int64_t stride = static_cast<int>(strides.size()) == sd ? strides[d] : 1;
    if (!src.has_dim_value() || stride < 1) {
      dim->Clear();
      continue;
    }
    const int64_t x = src.dim_value();
    int64_t size = 0;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      size = (x + stride - 1) / stride;
    } else {
      const bool explicit_pads = auto_pad == "NOTSET" && static_cast<int>(pads.size()) == 2 * sd;
      const int64_t span = x + (explicit_pads ? pads[d] + pads[d + sd] : 0) - kernel[d];
      if (span < 0) fail_shape_inference("the window is larger than the padded input");
      size = (ceil ? (span + stride - 1) / stride : span / stride) + 1;
      if (ceil && (size - 1) * stride >= x + (explicit_pads ? pads[d] : 0)) --size;
    }
    dim->clear_dim_param();
    dim->set_dim_value(size);
  }
  onnx::updateOutputShape(ctx, 0, out);
}

void RegisterAll() {
  SchemaFamily::EnsureMicrosoftDomain();
  for (const char* op : {"QLinearAdd", "QLinearMul"}) {
    OpSchema s = Schema(op, Binary);
    s.Input(0, "A", "", "T")
        .Input(1, "A_scale", "", "F")
        .Input(2, "A_zero_point", "", "T", OpSchema::Optional)
        .Input(3, "B", "", "T")
        .Input(4, "B_scale", "", "F")
        .Input(5, "B_zero_point", "", "T", OpSchema::Optional)
        .Input(6, "C_scale", "", "F")
        .Input(7, "C_zero_point", "", "T", OpSchema::Optional)
        .Output(0, "C", "", "T");
    family.Add(std::move(s));
  }
  for (const char* op : {"QLinearSigmoid", "QLinearLeakyRelu"}) {
    OpSchema s = Schema(op, SameAsInput0);
    s.Input(0, "X", "", "T")
        .Input(1, "X_scale", "", "F")
        .Input(2, "X_zero_point", "", "T", OpSchema::Optional)
        .Input(3, "Y_scale", "", "F")
        .Input(4, "Y_zero_point", "", "T", OpSchema::Optional)
        .Output(0, "Y", "", "T");
    if (std::string(op) == "QLinearLeakyRelu") {
      s.Attr("alpha", "", AttributeProto::FLOAT, 0.01f);
    }
    family.Add(std::move(s));
  }
  OpSchema pool = Schema("QLinearGlobalAveragePool", GlobalPool);
  pool.Input(0, "X", "", "T")
      .Input(1, "x_scale", "", "F")
      .Input(2, "x_zero_point", "", "T")
      .Input(3, "y_scale", "", "F")
      .Input(4, "y_zero_point", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("channels_last", "", AttributeProto::INT, static_cast<int64_t>(0));
  family.Add(std::move(pool));
  // QLinearConcat: Y is the first input's type, its shape the inputs' joined along `axis`.
  OpSchema concat = Schema("QLinearConcat", [](InferenceContext& ctx) {
    if (ctx.getNumInputs() < 5 || ctx.getInputType(2) == nullptr) return;
    onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
    const onnx::AttributeProto* axis_attr = ctx.getAttribute("axis");
    if (axis_attr == nullptr) fail_shape_inference("attribute 'axis' is required");
    TensorShapeProto out;
    for (size_t i = 2; i < ctx.getNumInputs(); i += 3) {
      if (!onnx::hasInputShape(ctx, i)) return;
      const TensorShapeProto& s = onnx::getInputShape(ctx, i);
      const int rank = s.dim_size();
      const int64_t axis = axis_attr->i() < 0 ? axis_attr->i() + rank : axis_attr->i();
      if (axis < 0 || axis >= rank) fail_shape_inference("axis is out of range");
      if (i == 2) {
        out = s;
        continue;
      }
      if (s.dim_size() != out.dim_size()) fail_shape_inference("inputs differ in rank");
      auto* d = out.mutable_dim(static_cast<int>(axis));
      const auto& e = s.dim(static_cast<int>(axis));
      if (d->has_dim_value() && e.has_dim_value()) {
        d->set_dim_value(d->dim_value() + e.dim_value());
      } else {
        d->Clear();
      }
    }
    onnx::updateOutputShape(ctx, 0, out);
  });
  concat.Attr("axis", "", AttributeProto::INT, /*required=*/true)
      .Input(0, "Y_scale", "", "F")
      .Input(1, "Y_zero_point", "", "T")
      .Input(2, "inputs", "", "TV", OpSchema::Variadic, /*is_homogeneous=*/false)
      .Output(0, "Y", "", "T")
      .TypeConstraint("TV", {"tensor(uint8)", "tensor(int8)", "tensor(float)"}, "");
  family.Add(std::move(concat));
  // These two have their own type constraints (not Schema's T and F).
  const char* kOrt = "com.microsoft version 1, as ONNX Runtime defines it";
  OpSchema to_float = family.New("MatMulIntegerToFloat", kMicrosoftDomain, 1, kOrt);
  to_float.TypeAndShapeInferenceFunction(MatMulToFloat);
  to_float.Input(0, "A", "", "T1")
      .Input(1, "B", "", "T2")
      .Input(2, "a_scale", "", "T3")
      .Input(3, "b_scale", "", "T3")
      .Input(4, "a_zero_point", "", "T1", OpSchema::Optional)
      .Input(5, "b_zero_point", "", "T2", OpSchema::Optional)
      .Input(6, "bias", "", "T3", OpSchema::Optional)
      .Output(0, "Y", "", "T3")
      .TypeConstraint("T1", kQuantized, "")
      .TypeConstraint("T2", kQuantized, "")
      .TypeConstraint("T3", kScale, "");
  family.Add(std::move(to_float));
  OpSchema dynamic = family.New("DynamicQuantizeMatMul", kMicrosoftDomain, 1, kOrt);
  dynamic.TypeAndShapeInferenceFunction(MatMulToFloat);
  dynamic.Input(0, "A", "", "T1")
      .Input(1, "B", "", "T2")
      .Input(2, "b_scale", "", "T1")
      .Input(3, "b_zero_point", "", "T2", OpSchema::Optional)
      .Input(4, "bias", "", "T1", OpSchema::Optional)
      .Output(0, "Y", "", "T1")
      .TypeConstraint("T1", kScale, "")
      .TypeConstraint("T2", kQuantized, "");
  family.Add(std::move(dynamic));
  OpSchema qgemm = family.New("QGemm", kMicrosoftDomain, 1, kOrt);
  qgemm.TypeAndShapeInferenceFunction(QGemmInfer);
  qgemm.Input(0, "A", "", "TA")
      .Input(1, "a_scale", "", "T")
      .Input(2, "a_zero_point", "", "TA")
      .Input(3, "B", "", "TB")
      .Input(4, "b_scale", "", "T")
      .Input(5, "b_zero_point", "", "TB")
      .Input(6, "C", "", "TC", OpSchema::Optional)
      .Input(7, "y_scale", "", "T", OpSchema::Optional)
      .Input(8, "y_zero_point", "", "TYZ", OpSchema::Optional)
      .Output(0, "Y", "", "TY")
      .Attr("alpha", "", AttributeProto::FLOAT, 1.0f)
      .Attr("transA", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("transB", "", AttributeProto::INT, static_cast<int64_t>(0))
      .TypeConstraint("T", kScale, "")
      .TypeConstraint("TA", kQuantized, "")
      .TypeConstraint("TB", kQuantized, "")
      .TypeConstraint("TC", {"tensor(int32)"}, "")
      .TypeConstraint("TYZ", kQuantized, "")
      .TypeConstraint("TY", {"tensor(float)", "tensor(uint8)", "tensor(int8)"}, "");
  family.Add(std::move(qgemm));
  OpSchema softmax = Schema("QLinearSoftmax", SameAsInput0);
  softmax.Input(0, "X", "", "T")
      .Input(1, "X_scale", "", "F")
      .Input(2, "x_zero_point", "", "T", OpSchema::Optional)
      .Input(3, "y_scale", "", "F")
      .Input(4, "y_zero_point", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("axis", "", AttributeProto::INT, /*required=*/false)
      .Attr("opset", "", AttributeProto::INT, /*required=*/true);
  family.Add(std::move(softmax));
  OpSchema avg = Schema("QLinearAveragePool", AveragePoolInfer);
  avg.Input(0, "X", "", "T")
      .Input(1, "x_scale", "", "F")
      .Input(2, "x_zero_point", "", "T", OpSchema::Optional)
      .Input(3, "y_scale", "", "F")
      .Input(4, "y_zero_point", "", "T", OpSchema::Optional)
      .Output(0, "Y", "", "T")
      .Attr("auto_pad", "", AttributeProto::STRING, std::string("NOTSET"))
      .Attr("kernel_shape", "", AttributeProto::INTS, /*required=*/true)
      .Attr("strides", "", AttributeProto::INTS, /*required=*/false)
      .Attr("pads", "", AttributeProto::INTS, /*required=*/false)
      .Attr("ceil_mode", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("count_include_pad", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("channels_last", "", AttributeProto::INT, static_cast<int64_t>(0));
  family.Add(std::move(avg));
}

}  // namespace

void RegisterQuantSchemas() { family.Register(); }

std::vector<std::string> QuantSchemaNames() { return family.Names(); }

}  // namespace inferd::engine
