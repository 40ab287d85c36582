#include "engine/onnx_schemas.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/onnx_schema_shapes.h"
#include "engine/schema_family.h"
#include "onnx/defs/schema.h"

namespace inferd::engine {
namespace {

using onnx::AttributeProto;
using onnx::OpSchema;
namespace shapes = schema_shapes;

using Types = std::vector<std::string>;

Types Join(std::initializer_list<Types> lists) {
  Types out;
  for (const Types& l : lists) out.insert(out.end(), l.begin(), l.end());
  return out;
}

const Types kFloats = {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"};
const Types kInts = {"tensor(int8)",  "tensor(int16)",  "tensor(int32)",  "tensor(int64)",
                     "tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)"};
const Types kNumeric = Join({kFloats, kInts});
const Types kAll = Join({kNumeric, {"tensor(bool)", "tensor(string)"}});
const Types kIndex = {"tensor(int32)", "tensor(int64)"};

void RegisterAll();
SchemaFamily family("engine/onnx_schemas.cc", RegisterAll);

// A new schema of the default domain.
OpSchema Schema(const char* name, int version, onnx::InferenceFunction infer) {
  OpSchema s = family.New(name, onnx::ONNX_DOMAIN, version, absl::StrCat("ONNX opset ", version));
  s.TypeAndShapeInferenceFunction(std::move(infer));
  return s;
}

// Optional attribute without a default value.
void OptAttr(OpSchema& s, const char* name, AttributeProto::AttributeType type) {
  s.Attr(name, "", type, /*required=*/false);
}

// Unary op T -> T of the same shape.
void Unary(const char* name, int version, const Types& types) {
  OpSchema s = Schema(name, version, shapes::SameAsInput);
  s.Input(0, "X", "", "T").Output(0, "Y", "", "T").TypeConstraint("T", types, "");
  family.Add(std::move(s));
}

// pass 1: opset 18.
void Reductions() {
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                         "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"}) {
    const bool extremum = std::string(op) == "ReduceMax" || std::string(op) == "ReduceMin";
    for (int version : extremum ? std::vector<int>{18, 20} : std::vector<int>{18}) {
      OpSchema s = Schema(op, version, shapes::Reduce);
      s.Input(0, "data", "", "T")
          .Input(1, "axes", "", "tensor(int64)", OpSchema::Optional)
          .Output(0, "reduced", "", "T")
          .Attr("keepdims", "", AttributeProto::INT, static_cast<int64_t>(1))
          .Attr("noop_with_empty_axes", "", AttributeProto::INT, static_cast<int64_t>(0))
          .TypeConstraint("T", version >= 20 ? Join({kNumeric, {"tensor(bool)"}}) : kNumeric, "");
      family.Add(std::move(s));
    }
  }
}

void PadResizeSplit() {
  for (int version : {18, 19}) {
    OpSchema pad = Schema("Pad", version, shapes::Pad);
    pad.Input(0, "data", "", "T")
        .Input(1, "pads", "", "tensor(int64)")
        .Input(2, "constant_value", "", "T", OpSchema::Optional)
        .Input(3, "axes", "", "Tind", OpSchema::Optional)
        .Output(0, "output", "", "T")
        .Attr("mode", "", AttributeProto::STRING, std::string("constant"))
        .TypeConstraint("T", kAll, "")
        .TypeConstraint("Tind", kIndex, "");
    family.Add(std::move(pad));
    OpSchema resize = Schema("Resize", version, shapes::Resize);
    resize.Input(0, "X", "", "T1")
        .Input(1, "roi", "", "T2", OpSchema::Optional)
        .Input(2, "scales", "", "tensor(float)", OpSchema::Optional)
        .Input(3, "sizes", "", "tensor(int64)", OpSchema::Optional)
        .Output(0, "Y", "", "T1")
        .Attr("antialias", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("coordinate_transformation_mode", "", AttributeProto::STRING,
              std::string("half_pixel"))
        .Attr("cubic_coeff_a", "", AttributeProto::FLOAT, -0.75f)
        .Attr("exclude_outside", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("extrapolation_value", "", AttributeProto::FLOAT, 0.0f)
        .Attr("keep_aspect_ratio_policy", "", AttributeProto::STRING, std::string("stretch"))
        .Attr("mode", "", AttributeProto::STRING, std::string("nearest"))
        .Attr("nearest_mode", "", AttributeProto::STRING, std::string("round_prefer_floor"))
        .TypeConstraint("T1", kAll, "")
        .TypeConstraint("T2", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "");
    OptAttr(resize, "axes", AttributeProto::INTS);
    family.Add(std::move(resize));
  }
  OpSchema split = Schema("Split", 18, shapes::Split);
  split.Input(0, "input", "", "T")
      .Input(1, "split", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "outputs", "", "T", OpSchema::Variadic)
      .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(0))
      .TypeConstraint("T", kAll, "");
  OptAttr(split, "num_outputs", AttributeProto::INT);
  family.Add(std::move(split));
  for (const char* op : {"ScatterElements", "ScatterND"}) {
    const bool elements = std::string(op) == "ScatterElements";
    OpSchema s = Schema(op, 18, shapes::SameAsInput);
    s.Input(0, "data", "", "T")
        .Input(1, "indices", "", elements ? "Tind" : "tensor(int64)")
        .Input(2, "updates", "", "T")
        .Output(0, "output", "", "T")
        .Attr("reduction", "", AttributeProto::STRING, std::string("none"))
        .TypeConstraint("T", kAll, "");
    if (elements) {
      s.Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(0));
      s.TypeConstraint("Tind", kIndex, "");
    }
    family.Add(std::move(s));
  }
}

// Window attributes of pooling and convolution ops.
void WindowAttrs(OpSchema& s) {
  s.Attr("auto_pad", "", AttributeProto::STRING, std::string("NOTSET"));
  OptAttr(s, "dilations", AttributeProto::INTS);
  OptAttr(s, "pads", AttributeProto::INTS);
  OptAttr(s, "strides", AttributeProto::INTS);
}

void Pools() {
  OpSchema lp = Schema("LpPool", 18, shapes::Pool);
  lp.Input(0, "X", "", "T").Output(0, "Y", "", "T").TypeConstraint("T", kFloats, "");
  lp.Attr("ceil_mode", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("kernel_shape", "", AttributeProto::INTS)
      .Attr("p", "", AttributeProto::INT, static_cast<int64_t>(2));
  WindowAttrs(lp);
  family.Add(std::move(lp));
  OpSchema avg = Schema("AveragePool", 19, shapes::Pool);
  avg.Input(0, "X", "", "T").Output(0, "Y", "", "T").TypeConstraint("T", kFloats, "");
  avg.Attr("ceil_mode", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("count_include_pad", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("kernel_shape", "", AttributeProto::INTS);
  WindowAttrs(avg);
  family.Add(std::move(avg));
}

void NewOps18() {
  for (int version : {18, 21}) {
    OpSchema gn = Schema("GroupNormalization", version, shapes::SameAsInput);
    gn.Input(0, "X", "", "T")
        .Input(1, "scale", "", "T")
        .Input(2, "bias", "", "T")
        .Output(0, "Y", "", "T")
        .Attr("epsilon", "", AttributeProto::FLOAT, 1e-5f)
        .Attr("num_groups", "", AttributeProto::INT)
        .TypeConstraint("T", kFloats, "");
    if (version >= 21) gn.Attr("stash_type", "", AttributeProto::INT, static_cast<int64_t>(1));
    family.Add(std::move(gn));
  }
  OpSchema col2im = Schema("Col2Im", 18, shapes::Col2Im);
  col2im.Input(0, "input", "", "T")
      .Input(1, "image_shape", "", "tensor(int64)")
      .Input(2, "block_shape", "", "tensor(int64)")
      .Output(0, "output", "", "T")
      .TypeConstraint("T", kAll, "");
  OptAttr(col2im, "dilations", AttributeProto::INTS);
  OptAttr(col2im, "pads", AttributeProto::INTS);
  OptAttr(col2im, "strides", AttributeProto::INTS);
  family.Add(std::move(col2im));
  OpSchema crop = Schema("CenterCropPad", 18, shapes::CenterCropPad);
  crop.Input(0, "input_data", "", "T")
      .Input(1, "shape", "", "Tind")
      .Output(0, "output_data", "", "T")
      .TypeConstraint("T", kAll, "")
      .TypeConstraint("Tind", kIndex, "");
  OptAttr(crop, "axes", AttributeProto::INTS);
  family.Add(std::move(crop));
  Unary("Mish", 18, kFloats);
  Unary("BitwiseNot", 18, kInts);
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    OpSchema s = Schema(op, 18, shapes::Broadcast);
    s.Input(0, "A", "", "T").Input(1, "B", "", "T").Output(0, "C", "", "T");
    s.TypeConstraint("T", kInts, "");
    family.Add(std::move(s));
  }
  const Types optional_types = {"optional(tensor(float))",      "optional(tensor(double))",
                                "optional(tensor(float16))",    "optional(tensor(int64))",
                                "optional(tensor(int32))",      "optional(tensor(int8))",
                                "optional(tensor(uint8))",      "optional(tensor(bool))",
                                "optional(tensor(string))",     "optional(seq(tensor(float)))",
                                "optional(seq(tensor(int64)))", "optional(seq(tensor(int32)))"};
  const Types element_types =
      Join({kAll,
            {"seq(tensor(float))", "seq(tensor(double))", "seq(tensor(float16))",
             "seq(tensor(int64))", "seq(tensor(int32))", "seq(tensor(int8))", "seq(tensor(uint8))",
             "seq(tensor(bool))", "seq(tensor(string))"}});
  OpSchema has = Schema("OptionalHasElement", 18, shapes::OptionalHasElement);
  has.Input(0, "input", "", "O", OpSchema::Optional)
      .Output(0, "output", "", "B")
      .TypeConstraint("O", Join({optional_types, element_types}), "")
      .TypeConstraint("B", {"tensor(bool)"}, "");
  family.Add(std::move(has));
  OpSchema get = Schema("OptionalGetElement", 18, shapes::OptionalGetElement);
  get.Input(0, "input", "", "O")
      .Output(0, "output", "", "V")
      .TypeConstraint("O", Join({optional_types, element_types}), "")
      .TypeConstraint("V", element_types, "");
  family.Add(std::move(get));
}

// pass 2: opset 19.
void Opset19() {
  OpSchema cast = Schema("Cast", 19, shapes::Cast);
  cast.Input(0, "input", "", "T1")
      .Output(0, "output", "", "T2")
      .Attr("to", "", AttributeProto::INT)
      .Attr("saturate", "", AttributeProto::INT, static_cast<int64_t>(1))
      .TypeConstraint("T1", kAll, "")
      .TypeConstraint("T2", kAll, "");
  family.Add(std::move(cast));
  OpSchema like = Schema("CastLike", 19, shapes::CastLike);
  like.Input(0, "input", "", "T1")
      .Input(1, "target_type", "", "T2")
      .Output(0, "output", "", "T2")
      .Attr("saturate", "", AttributeProto::INT, static_cast<int64_t>(1))
      .TypeConstraint("T1", kAll, "")
      .TypeConstraint("T2", kAll, "");
  family.Add(std::move(like));
  OpSchema equal = Schema("Equal", 19, shapes::BroadcastToBool);
  equal.Input(0, "A", "", "T").Input(1, "B", "", "T").Output(0, "C", "", "T1");
  equal.TypeConstraint("T", kAll, "").TypeConstraint("T1", {"tensor(bool)"}, "");
  family.Add(std::move(equal));
  OpSchema deform = Schema("DeformConv", 19, shapes::DeformConv);
  deform.Input(0, "X", "", "T")
      .Input(1, "W", "", "T")
      .Input(2, "offset", "", "T")
      .Input(3, "B", "", "T", OpSchema::Optional)
      .Input(4, "mask", "", "T", OpSchema::Optional)
      .Output(0, "Y", "", "T")
      .Attr("group", "", AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("offset_group", "", AttributeProto::INT, static_cast<int64_t>(1))
      .TypeConstraint("T", kFloats, "");
  OptAttr(deform, "kernel_shape", AttributeProto::INTS);
  OptAttr(deform, "dilations", AttributeProto::INTS);
  OptAttr(deform, "pads", AttributeProto::INTS);
  OptAttr(deform, "strides", AttributeProto::INTS);
  family.Add(std::move(deform));
}

// QuantizeLinear / DequantizeLinear of opsets 19 and 21 (float8 and int4 have no engine type,
// so the type lists stop at 8- and 16-bit integers).
void Quantization() {
  for (int version : {19, 21}) {
    const Types quantized =
        version >= 21 ? Types{"tensor(int8)", "tensor(uint8)", "tensor(int16)", "tensor(uint16)"}
                      : Types{"tensor(int8)", "tensor(uint8)"};
    OpSchema q = Schema("QuantizeLinear", version, shapes::Quantize);
    q.Input(0, "x", "", "T1")
        .Input(1, "y_scale", "", version >= 21 ? "T2" : "T1")
        .Input(2, "y_zero_point", "", version >= 21 ? "T3" : "T2", OpSchema::Optional)
        .Output(0, "y", "", version >= 21 ? "T3" : "T2")
        .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(1))
        .Attr("saturate", "", AttributeProto::INT, static_cast<int64_t>(1))
        .TypeConstraint("T1", Join({kFloats, {"tensor(int32)"}}), "");
    if (version >= 21) {
      q.Attr("block_size", "", AttributeProto::INT, static_cast<int64_t>(0))
          .Attr("output_dtype", "", AttributeProto::INT, static_cast<int64_t>(0))
          .TypeConstraint("T2", Join({kFloats, {"tensor(int32)"}}), "")
          .TypeConstraint("T3", quantized, "");
    } else {
      q.TypeConstraint("T2", quantized, "");
    }
    family.Add(std::move(q));
    OpSchema dq = Schema("DequantizeLinear", version, shapes::Dequantize);
    dq.Input(0, "x", "", "T1")
        .Input(1, "x_scale", "", "T2")
        .Input(2, "x_zero_point", "", "T1", OpSchema::Optional)
        .Output(0, "y", "", "T2")
        .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(1))
        .TypeConstraint("T1", Join({quantized, {"tensor(int32)"}}), "")
        .TypeConstraint("T2", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"}, "");
    if (version >= 21) dq.Attr("block_size", "", AttributeProto::INT, static_cast<int64_t>(0));
    family.Add(std::move(dq));
  }
}

// pass 3: opset 20.
void Opset20() {
  OpSchema grid = Schema("AffineGrid", 20, shapes::AffineGrid);
  grid.Input(0, "theta", "", "T1")
      .Input(1, "size", "", "T2")
      .Output(0, "grid", "", "T1")
      .Attr("align_corners", "", AttributeProto::INT, static_cast<int64_t>(0))
      .TypeConstraint("T1", kFloats, "")
      .TypeConstraint("T2", {"tensor(int64)"}, "");
  family.Add(std::move(grid));
  OpSchema dft = Schema("DFT", 20, shapes::Dft);
  dft.Input(0, "input", "", "T1")
      .Input(1, "dft_length", "", "T2", OpSchema::Optional)
      .Input(2, "axis", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "output", "", "T1")
      .Attr("inverse", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("onesided", "", AttributeProto::INT, static_cast<int64_t>(0))
      .TypeConstraint("T1", kFloats, "")
      .TypeConstraint("T2", kIndex, "");
  family.Add(std::move(dft));
  OpSchema gelu = Schema("Gelu", 20, shapes::SameAsInput);
  gelu.Input(0, "X", "", "T").Output(0, "Y", "", "T").TypeConstraint("T", kFloats, "");
  gelu.Attr("approximate", "", AttributeProto::STRING, std::string("none"));
  family.Add(std::move(gelu));
  OpSchema sample = Schema("GridSample", 20, shapes::GridSample);
  sample.Input(0, "X", "", "T1")
      .Input(1, "grid", "", "T2")
      .Output(0, "Y", "", "T1")
      .Attr("align_corners", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("mode", "", AttributeProto::STRING, std::string("linear"))
      .Attr("padding_mode", "", AttributeProto::STRING, std::string("zeros"))
      .TypeConstraint("T1", kAll, "")
      .TypeConstraint("T2", kFloats, "");
  family.Add(std::move(sample));
  OpSchema regex = Schema("RegexFullMatch", 20, shapes::RegexFullMatch);
  regex.Input(0, "X", "", "T1").Output(0, "Y", "", "T2");
  regex.TypeConstraint("T1", {"tensor(string)"}, "").TypeConstraint("T2", {"tensor(bool)"}, "");
  OptAttr(regex, "pattern", AttributeProto::STRING);
  family.Add(std::move(regex));
  OpSchema concat = Schema("StringConcat", 20, shapes::Broadcast);
  concat.Input(0, "X", "", "T").Input(1, "Y", "", "T").Output(0, "Z", "", "T");
  concat.TypeConstraint("T", {"tensor(string)"}, "");
  family.Add(std::move(concat));
  OpSchema split = Schema("StringSplit", 20, shapes::StringSplit);
  split.Input(0, "X", "", "T1").Output(0, "Y", "", "T2").Output(1, "Z", "", "T3");
  split.TypeConstraint("T1", {"tensor(string)"}, "")
      .TypeConstraint("T2", {"tensor(string)"}, "")
      .TypeConstraint("T3", {"tensor(int64)"}, "");
  OptAttr(split, "delimiter", AttributeProto::STRING);
  OptAttr(split, "maxsplit", AttributeProto::INT);
  family.Add(std::move(split));
}

// pass 4: ai.onnx.ml opset 5 (libonnx 1.12 stops at 3): TreeEnsemble. Y is [N, n_targets] of
// X's type.
void MlOpset5() {
  OpSchema s = family.New("TreeEnsemble", onnx::AI_ONNX_ML_DOMAIN, 5, "ai.onnx.ml opset 5");
  s.TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (!onnx::hasInputShape(ctx, 0)) return;
    const onnx::TensorShapeProto& x = onnx::getInputShape(ctx, 0);
    onnx::TensorShapeProto* y = onnx::getOutputShape(ctx, 0);
    if (x.dim_size() == 2) {
      *y->add_dim() = x.dim(0);
    } else {
      y->add_dim()->set_dim_value(1);
    }
    const onnx::AttributeProto* targets = ctx.getAttribute("n_targets");
    y->add_dim()->set_dim_value(targets != nullptr ? targets->i() : 1);
  });
  s.Input(0, "X", "", "T").Output(0, "Y", "", "T");
  s.TypeConstraint("T", {"tensor(float)", "tensor(double)", "tensor(float16)"}, "");
  s.Attr("aggregate_function", "", AttributeProto::INT, static_cast<int64_t>(1));
  s.Attr("post_transform", "", AttributeProto::INT, static_cast<int64_t>(0));
  for (const char* ints :
       {"leaf_targetids", "nodes_falseleafs", "nodes_falsenodeids", "nodes_featureids",
        "nodes_trueleafs", "nodes_truenodeids", "tree_roots"}) {
    s.Attr(ints, "", AttributeProto::INTS, /*required=*/true);
  }
  for (const char* tensor : {"leaf_weights", "nodes_modes", "nodes_splits"}) {
    s.Attr(tensor, "", AttributeProto::TENSOR, /*required=*/true);
  }
  OptAttr(s, "membership_values", AttributeProto::TENSOR);
  OptAttr(s, "nodes_hitrates", AttributeProto::TENSOR);
  OptAttr(s, "nodes_missing_value_tracks_true", AttributeProto::INTS);
  OptAttr(s, "n_targets", AttributeProto::INT);
  family.Add(std::move(s));
}

// ai.onnx.ml opset 4: LabelEncoder's tensor attributes and wider types (libonnx 1.12 knows 2).
void MlOpset4() {
  OpSchema s = family.New("LabelEncoder", onnx::AI_ONNX_ML_DOMAIN, 4, "ai.onnx.ml opset 4");
  s.TypeAndShapeInferenceFunction(shapes::LabelEncoder);
  const Types types = {"tensor(string)", "tensor(int64)", "tensor(float)",
                       "tensor(int32)",  "tensor(int16)", "tensor(double)"};
  s.Input(0, "X", "", "T1").Output(0, "Y", "", "T2");
  s.TypeConstraint("T1", types, "").TypeConstraint("T2", types, "");
  for (const char* name : {"keys_strings", "values_strings"}) {
    OptAttr(s, name, AttributeProto::STRINGS);
  }
  for (const char* name : {"keys_int64s", "values_int64s"}) OptAttr(s, name, AttributeProto::INTS);
  for (const char* name : {"keys_floats", "values_floats"}) {
    OptAttr(s, name, AttributeProto::FLOATS);
  }
  for (const char* name : {"keys_tensor", "values_tensor", "default_tensor"}) {
    OptAttr(s, name, AttributeProto::TENSOR);
  }
  s.Attr("default_string", "", AttributeProto::STRING, std::string("_Unused"));
  s.Attr("default_int64", "", AttributeProto::INT, static_cast<int64_t>(-1));
  s.Attr("default_float", "", AttributeProto::FLOAT, -0.0f);
  family.Add(std::move(s));
}

void RegisterAll() {
  // libonnx 1.12 accepts schemas of the default domain up to version 17 only. It has no setter
  // for a known domain's range: AddDomainToVersion replaces the entry (its assert that the
  // domain is new is compiled out: this file is built with NDEBUG, see engine/BUILD.bazel).
  onnx::OpSchemaRegistry::DomainToVersionRange::Instance().AddDomainToVersion(
      onnx::ONNX_DOMAIN, 1, kMaxOnnxOpset, kMaxOnnxOpset);
  // ai.onnx.ml likewise, from 3 to 5 (LabelEncoder 4 and TreeEnsemble 5, below; the other ml
  // schemas keep their libonnx versions).
  onnx::OpSchemaRegistry::DomainToVersionRange::Instance().AddDomainToVersion(
      onnx::AI_ONNX_ML_DOMAIN, 1, 5, 5);
  Reductions();
  PadResizeSplit();
  Pools();
  NewOps18();
  Opset19();
  Quantization();
  Opset20();
  MlOpset4();
  MlOpset5();
}

}  // namespace

void RegisterNewerOnnxSchemas() { family.Register(); }

std::vector<std::string> NewerOnnxSchemaNames() { return family.Names(); }

}  // namespace inferd::engine
