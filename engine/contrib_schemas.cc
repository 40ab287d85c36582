#include "engine/contrib_schemas.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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

using Types = std::vector<std::string>;
const Types kFloats = {"tensor(float)", "tensor(float16)", "tensor(double)", "tensor(bfloat16)"};
const Types kFloat = {"tensor(float)"};
const Types kInt32 = {"tensor(int32)"};

void RegisterAll();
SchemaFamily family("engine/contrib_schemas.cc", RegisterAll);

OpSchema Schema(const char* name, const char* domain, onnx::InferenceFunction infer) {
  OpSchema s = family.New(
      name, domain, 1,
      absl::StrCat(*domain ? domain : "ai.onnx", " version 1, as ONNX Runtime defines it"));
  s.TypeAndShapeInferenceFunction(std::move(infer));
  return s;
}

// Input `i`'s shape when it is known, else nullptr.
const TensorShapeProto* ShapeOf(InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs() || !onnx::hasInputShape(ctx, i)) return nullptr;
  return &onnx::getInputShape(ctx, i);
}

bool Present(InferenceContext& ctx, size_t i) {
  return i < ctx.getNumInputs() && ctx.getInputType(i) != nullptr;
}

// Output `o` has input `i`'s type and, when known, its shape.
void SameAs(InferenceContext& ctx, size_t i, size_t o) {
  if (o >= ctx.getNumOutputs()) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, i, o);
  if (onnx::hasInputShape(ctx, i)) onnx::propagateShapeFromInputToOutput(ctx, i, o);
}

void Elementwise(InferenceContext& ctx) { SameAs(ctx, 0, 0); }

// SkipLayerNormalization / SkipSimplifiedLayerNormalization: output and input_skip_bias_sum like
// the input; mean and inv_std_var float32 of the input's shape with the last dim 1.
void SkipNorm(InferenceContext& ctx) {
  SameAs(ctx, 0, 0);
  SameAs(ctx, 0, 3);
  const TensorShapeProto* in = ShapeOf(ctx, 0);
  for (size_t o : {1, 2}) {
    if (o >= ctx.getNumOutputs()) continue;
    onnx::updateOutputElemType(ctx, o, onnx::TensorProto::FLOAT);
    if (in == nullptr || in->dim_size() == 0) continue;
    TensorShapeProto s = *in;
    s.mutable_dim(s.dim_size() - 1)->set_dim_value(1);
    onnx::updateOutputShape(ctx, o, s);
  }
}

// SimplifiedLayerNormalization: Y like X; inv_std_var float32 with 1s from `axis` on.
void SimplifiedNorm(InferenceContext& ctx) {
  SameAs(ctx, 0, 0);
  if (ctx.getNumOutputs() < 2) return;
  onnx::updateOutputElemType(ctx, 1, onnx::TensorProto::FLOAT);
  const TensorShapeProto* in = ShapeOf(ctx, 0);
  if (in == nullptr) return;
  const int64_t rank = in->dim_size();
  int64_t axis = onnx::getAttribute(ctx, "axis", -1);
  if (axis < -rank || axis >= rank) fail_shape_inference("axis ", axis, " is out of range");
  if (axis < 0) axis += rank;
  TensorShapeProto s = *in;
  for (int64_t d = axis; d < rank; ++d) s.mutable_dim(static_cast<int>(d))->set_dim_value(1);
  onnx::updateOutputShape(ctx, 1, s);
}

// A dim of `shape`, or an unknown one.
TensorShapeProto::Dimension DimOf(const TensorShapeProto* shape, int i) {
  if (shape == nullptr || i >= shape->dim_size()) return {};
  return shape->dim(i);
}

TensorShapeProto::Dimension Known(int64_t v) {
  TensorShapeProto::Dimension d;
  d.set_dim_value(v);
  return d;
}

// past_sequence_length + sequence_length when both are known.
TensorShapeProto::Dimension Total(const TensorShapeProto::Dimension& past,
                                  const TensorShapeProto::Dimension& seq) {
  if (past.has_dim_value() && seq.has_dim_value()) {
    return Known(past.dim_value() + seq.dim_value());
  }
  return {};
}

void SetShape(InferenceContext& ctx, size_t o,
              std::initializer_list<TensorShapeProto::Dimension> dims) {
  TensorShapeProto s;
  for (const auto& d : dims) *s.add_dim() = d;
  onnx::updateOutputShape(ctx, o, s);
}

// Attention: input [B, S, H], weights [H, Dq + Dk + Dv] -> output [B, S, Dv]; present
// [2, B, N, P + S, Dk / N] from past [2, B, N, P, Dk / N].
void AttentionShapes(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const TensorShapeProto* in = ShapeOf(ctx, 0);
  const TensorShapeProto* w = ShapeOf(ctx, 1);
  if (in != nullptr && in->dim_size() != 3) fail_shape_inference("input must be 3-D");
  if (w != nullptr && w->dim_size() != 2) fail_shape_inference("weights must be 2-D");
  const int64_t heads = onnx::getAttribute(ctx, "num_heads", 0);
  if (heads <= 0) fail_shape_inference("num_heads must be > 0");
  std::vector<int64_t> sizes;
  onnx::getRepeatedAttribute(ctx, "qkv_hidden_sizes", sizes);
  if (!sizes.empty() && sizes.size() != 3) fail_shape_inference("qkv_hidden_sizes needs 3 values");
  TensorShapeProto::Dimension v_hidden;
  int64_t k_hidden = -1;
  if (!sizes.empty()) {
    v_hidden = Known(sizes[2]);
    k_hidden = sizes[1];
  } else if (w != nullptr && w->dim(1).has_dim_value()) {
    if (w->dim(1).dim_value() % 3 != 0) fail_shape_inference("weights dim 1 is not 3 * hidden");
    v_hidden = Known(w->dim(1).dim_value() / 3);
    k_hidden = w->dim(1).dim_value() / 3;
  }
  SetShape(ctx, 0, {DimOf(in, 0), DimOf(in, 1), v_hidden});
  if (ctx.getNumOutputs() > 1 && Present(ctx, 4)) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 1);
    const TensorShapeProto* past = ShapeOf(ctx, 4);
    if (past != nullptr && past->dim_size() == 5) {
      SetShape(ctx, 1,
               {past->dim(0), past->dim(1), past->dim(2), Total(past->dim(3), DimOf(in, 1)),
                past->dim(4)});
    }
  } else if (ctx.getNumOutputs() > 1) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 1);
    SetShape(ctx, 1,
             {Known(2), DimOf(in, 0), Known(heads), DimOf(in, 1),
              k_hidden > 0 ? Known(k_hidden / heads) : TensorShapeProto::Dimension()});
  }
}

// MultiHeadAttention (3-D query, key and value): output [B, S, Dv]; present_key / present_value
// [B, N, P + L, head size].
void MultiHeadAttentionShapes(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const TensorShapeProto* q = ShapeOf(ctx, 0);
  const TensorShapeProto* k = ShapeOf(ctx, 1);
  const TensorShapeProto* v = ShapeOf(ctx, 2);
  const int64_t heads = onnx::getAttribute(ctx, "num_heads", 0);
  if (heads <= 0) fail_shape_inference("num_heads must be > 0");
  if (q == nullptr) return;
  TensorShapeProto::Dimension v_hidden = DimOf(q, 2);
  if (q->dim_size() == 3 && v != nullptr && v->dim_size() == 3) v_hidden = v->dim(2);
  if (q->dim_size() == 3) SetShape(ctx, 0, {q->dim(0), q->dim(1), v_hidden});
  for (size_t o : {1, 2}) {
    if (o >= ctx.getNumOutputs()) continue;
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, o);
    const TensorShapeProto* src = o == 1 ? k : v;
    const TensorShapeProto* past = ShapeOf(ctx, o == 1 ? 6 : 7);
    if (src == nullptr || src->dim_size() != 3 || q->dim_size() != 3) continue;
    TensorShapeProto::Dimension len = src->dim(1);
    if (past != nullptr && past->dim_size() == 4) {
      len = Total(past->dim(2), src->dim(1));
    } else if (Present(ctx, o == 1 ? 6 : 7)) {
      len = {};
    }
    TensorShapeProto::Dimension head;
    if (src->dim(2).has_dim_value()) head = Known(src->dim(2).dim_value() / heads);
    SetShape(ctx, o, {q->dim(0), Known(heads), len, head});
  }
}

// EmbedLayerNormalization: output and embedding_sum [B, S, hidden]; mask_index [B] int32.
void EmbedLayerNormShapes(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  const TensorShapeProto* ids = ShapeOf(ctx, 0);
  const TensorShapeProto* word = ShapeOf(ctx, 2);
  if (ids != nullptr && ids->dim_size() != 2) fail_shape_inference("input_ids must be 2-D");
  if (word != nullptr && word->dim_size() != 2) {
    fail_shape_inference("word_embedding must be 2-D");
  }
  SetShape(ctx, 0, {DimOf(ids, 0), DimOf(ids, 1), DimOf(word, 1)});
  if (ctx.getNumOutputs() > 1) {
    onnx::updateOutputElemType(ctx, 1, onnx::TensorProto::INT32);
    SetShape(ctx, 1, {DimOf(ids, 0)});
  }
  if (ctx.getNumOutputs() > 2) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 2, 2);
    SetShape(ctx, 2, {DimOf(ids, 0), DimOf(ids, 1), DimOf(word, 1)});
  }
}

void Activations() {
  const char* ms = kMicrosoftDomain;
  OpSchema gelu = Schema("Gelu", ms, Elementwise);
  gelu.Input(0, "X", "", "T").Output(0, "Y", "", "T").TypeConstraint("T", kFloats, "");
  family.Add(std::move(gelu));
  OpSchema fast = Schema("FastGelu", ms, Elementwise);
  fast.Input(0, "X", "", "T")
      .Input(1, "bias", "", "T", OpSchema::Optional)
      .Output(0, "Y", "", "T")
      .TypeConstraint("T", kFloats, "");
  family.Add(std::move(fast));
  OpSchema bias_gelu = Schema("BiasGelu", ms, Elementwise);
  bias_gelu.Input(0, "A", "", "T").Input(1, "B", "", "T").Output(0, "C", "", "T");
  bias_gelu.TypeConstraint("T", kFloats, "");
  family.Add(std::move(bias_gelu));
  OpSchema quick = Schema("QuickGelu", ms, Elementwise);
  quick.Input(0, "X", "", "T").Output(0, "Y", "", "T").TypeConstraint("T", kFloats, "");
  quick.Attr("alpha", "", AttributeProto::FLOAT, 1.702f);
  family.Add(std::move(quick));
  OpSchema bias_add = Schema("BiasAdd", ms, Elementwise);
  bias_add.Input(0, "X", "", "T").Input(1, "bias", "", "T").Input(2, "skip", "", "T");
  bias_add.Output(0, "Y", "", "T").TypeConstraint("T", kFloats, "");
  family.Add(std::move(bias_add));
}

void Norms() {
  const char* ms = kMicrosoftDomain;
  for (bool simplified : {false, true}) {
    OpSchema s = Schema(simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization",
                        ms, SkipNorm);
    s.Input(0, "input", "", "T").Input(1, "skip", "", "T").Input(2, "gamma", "", "T");
    int next = 3;
    if (!simplified) s.Input(next++, "beta", "", "T", OpSchema::Optional);
    s.Input(next, "bias", "", "T", OpSchema::Optional)
        .Output(0, "output", "", "T")
        .Output(1, "mean", "", "U", OpSchema::Optional)
        .Output(2, "inv_std_var", "", "U", OpSchema::Optional)
        .Output(3, "input_skip_bias_sum", "", "T", OpSchema::Optional)
        .Attr("epsilon", "", AttributeProto::FLOAT, 1e-12f)
        .TypeConstraint("T", kFloats, "")
        .TypeConstraint("U", kFloat, "");
    family.Add(std::move(s));
  }
  // ORT registers SimplifiedLayerNormalization in the default domain (its exporters write it
  // there).
  OpSchema rms = Schema("SimplifiedLayerNormalization", onnx::ONNX_DOMAIN, SimplifiedNorm);
  rms.Input(0, "X", "", "T")
      .Input(1, "scale", "", "V")
      .Output(0, "Y", "", "V")
      .Output(1, "inv_std_var", "", "U", OpSchema::Optional)
      .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(-1))
      .Attr("epsilon", "", AttributeProto::FLOAT, 1e-5f)
      .Attr("stash_type", "", AttributeProto::INT, static_cast<int64_t>(1))
      .TypeConstraint("T", kFloats, "")
      .TypeConstraint("U", {"tensor(float)", "tensor(double)"}, "")
      .TypeConstraint("V", kFloats, "");
  family.Add(std::move(rms));

  OpSchema embed = Schema("EmbedLayerNormalization", ms, EmbedLayerNormShapes);
  embed.Input(0, "input_ids", "", "T1")
      .Input(1, "segment_ids", "", "T1", OpSchema::Optional)
      .Input(2, "word_embedding", "", "T")
      .Input(3, "position_embedding", "", "T")
      .Input(4, "segment_embedding", "", "T", OpSchema::Optional)
      .Input(5, "gamma", "", "T")
      .Input(6, "beta", "", "T")
      .Input(7, "mask", "", "T1", OpSchema::Optional)
      .Input(8, "position_ids", "", "T1", OpSchema::Optional)
      .Output(0, "output", "", "T")
      .Output(1, "mask_index", "", "T1", OpSchema::Optional)
      .Output(2, "embedding_sum", "", "T", OpSchema::Optional)
      .Attr("epsilon", "", AttributeProto::FLOAT, 1e-12f)
      .Attr("mask_index_type", "", AttributeProto::INT, /*required=*/false)
      .TypeConstraint("T1", kInt32, "")
      .TypeConstraint("T", {"tensor(float)", "tensor(float16)"}, "");
  family.Add(std::move(embed));
}

void Attentions() {
  const char* ms = kMicrosoftDomain;
  OpSchema att = Schema("Attention", ms, AttentionShapes);
  att.Input(0, "input", "", "T")
      .Input(1, "weights", "", "T")
      .Input(2, "bias", "", "T", OpSchema::Optional)
      .Input(3, "mask_index", "", "M", OpSchema::Optional)
      .Input(4, "past", "", "T", OpSchema::Optional)
      .Input(5, "attention_bias", "", "T", OpSchema::Optional)
      .Input(6, "past_sequence_length", "", "M", OpSchema::Optional)
      .Output(0, "output", "", "T")
      .Output(1, "present", "", "T", OpSchema::Optional)
      .Attr("num_heads", "", AttributeProto::INT, /*required=*/true)
      .Attr("unidirectional", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("qkv_hidden_sizes", "", AttributeProto::INTS, /*required=*/false)
      .Attr("past_present_share_buffer", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("do_rotary", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("rotary_embedding_dim", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("scale", "", AttributeProto::FLOAT, /*required=*/false)
      .Attr("mask_filter_value", "", AttributeProto::FLOAT, /*required=*/false)
      .TypeConstraint("T", {"tensor(float)", "tensor(float16)"}, "")
      .TypeConstraint("M", kInt32, "");
  family.Add(std::move(att));
  OpSchema mha = Schema("MultiHeadAttention", ms, MultiHeadAttentionShapes);
  mha.Input(0, "query", "", "T")
      .Input(1, "key", "", "T", OpSchema::Optional)
      .Input(2, "value", "", "T", OpSchema::Optional)
      .Input(3, "bias", "", "T", OpSchema::Optional)
      .Input(4, "key_padding_mask", "", "M", OpSchema::Optional)
      .Input(5, "attention_bias", "", "T", OpSchema::Optional)
      .Input(6, "past_key", "", "T", OpSchema::Optional)
      .Input(7, "past_value", "", "T", OpSchema::Optional)
      .Input(8, "past_sequence_length", "", "M", OpSchema::Optional)
      .Input(9, "cache_indirection", "", "M", OpSchema::Optional)
      .Output(0, "output", "", "T")
      .Output(1, "present_key", "", "T", OpSchema::Optional)
      .Output(2, "present_value", "", "T", OpSchema::Optional)
      .Output(3, "qk", "", "QK", OpSchema::Optional)
      .Attr("num_heads", "", AttributeProto::INT, /*required=*/true)
      .Attr("unidirectional", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("scale", "", AttributeProto::FLOAT, /*required=*/false)
      .Attr("mask_filter_value", "", AttributeProto::FLOAT, /*required=*/false)
      .TypeConstraint("T", {"tensor(float)", "tensor(float16)"}, "")
      .TypeConstraint("QK", {"tensor(float)", "tensor(float16)"}, "")
      .TypeConstraint("M", kInt32, "");
  family.Add(std::move(mha));
}

void RegisterAll() {
  SchemaFamily::EnsureMicrosoftDomain();
  Activations();
  Norms();
  Attentions();
}

}  // namespace

void RegisterContribSchemas() { family.Register(); }

std::vector<std::string> ContribSchemaNames() { return family.Names(); }

}  // namespace inferd::engine
