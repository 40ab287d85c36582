#include "engine/genai_schemas.h"

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

const std::vector<std::string> kOrtFloats = {"tensor(float)", "tensor(float16)",
                                             "tensor(bfloat16)"};

void RegisterAll();
SchemaFamily family("engine/genai_schemas.cc", RegisterAll);

OpSchema Schema(const char* name, const char* domain, int version) {
  return family.New(name, domain, version, "ONNX Runtime contrib op");
}

// Input `i`'s shape when known, else nullptr.
const TensorShapeProto* KnownShape(InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs() || !onnx::hasInputShape(ctx, static_cast<int>(i))) return nullptr;
  return &onnx::getInputShape(ctx, i);
}

// Output `o`: input `i`'s type and shape, with `last` replacing the last dim when > 0
// (-1: last dim unknown).
void CopyWithLastDim(InferenceContext& ctx, size_t i, size_t o, int64_t last) {
  if (i >= ctx.getNumInputs() || ctx.getInputType(i) == nullptr) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, i, o);
  const TensorShapeProto* s = KnownShape(ctx, i);
  if (s == nullptr) return;
  TensorShapeProto out = *s;
  if (out.dim_size() > 0 && last != 0) {
    auto* d = out.mutable_dim(out.dim_size() - 1);
    d->Clear();
    if (last > 0) d->set_dim_value(last);
  }
  onnx::updateOutputShape(ctx, o, out);
}

void MatMulNBits() {
  OpSchema s = Schema("MatMulNBits", kMicrosoftDomain, 1);
  s.Input(0, "A", "", "T1")
      .Input(1, "B", "", "T2")
      .Input(2, "scales", "", "T1")
      .Input(3, "zero_points", "", "T3", OpSchema::Optional)
      .Input(4, "g_idx", "", "T4", OpSchema::Optional)
      .Input(5, "bias", "", "T1", OpSchema::Optional)
      .Output(0, "Y", "", "T1")
      .Attr("K", "", AttributeProto::INT)
      .Attr("N", "", AttributeProto::INT)
      .Attr("bits", "", AttributeProto::INT, static_cast<int64_t>(4))
      .Attr("block_size", "", AttributeProto::INT)
      .Attr("accuracy_level", "", AttributeProto::INT, static_cast<int64_t>(0))
      .TypeConstraint("T1", kOrtFloats, "")
      .TypeConstraint("T2", {"tensor(uint8)"}, "")
      .TypeConstraint("T3",
                      {"tensor(uint8)", "tensor(float)", "tensor(float16)", "tensor(bfloat16)"}, "")
      .TypeConstraint("T4", {"tensor(int32)"}, "")
      .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
        const auto* n = ctx.getAttribute("N");
        CopyWithLastDim(ctx, 0, 0, n != nullptr && n->i() > 0 ? n->i() : -1);
      });
  family.Add(std::move(s));
}

void RotaryEmbedding() {
  OpSchema s = Schema("RotaryEmbedding", kMicrosoftDomain, 1);
  s.Input(0, "input", "", "T")
      .Input(1, "position_ids", "", "M")
      .Input(2, "cos_cache", "", "T")
      .Input(3, "sin_cache", "", "T")
      .Output(0, "output", "", "T")
      .Attr("interleaved", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("is_packed_batching", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("num_heads", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("rotary_embedding_dim", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("scale", "", AttributeProto::FLOAT, 1.0f)
      .TypeConstraint("T", kOrtFloats, "")
      .TypeConstraint("M", {"tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  family.Add(std::move(s));
}

void GroupQueryAttention() {
  OpSchema s = Schema("GroupQueryAttention", kMicrosoftDomain, 1);
  s.Input(0, "query", "", "T")
      .Input(1, "key", "", "T", OpSchema::Optional)
      .Input(2, "value", "", "T", OpSchema::Optional)
      .Input(3, "past_key", "", "T", OpSchema::Optional)
      .Input(4, "past_value", "", "T", OpSchema::Optional)
      .Input(5, "seqlens_k", "", "M")
      .Input(6, "total_sequence_length", "", "M")
      .Input(7, "cos_cache", "", "T", OpSchema::Optional)
      .Input(8, "sin_cache", "", "T", OpSchema::Optional)
      .Input(9, "position_ids", "", "tensor(int64)", OpSchema::Optional)
      .Input(10, "attention_bias", "", "T", OpSchema::Optional)
      .Input(11, "head_sink", "", "T", OpSchema::Optional)
      .Output(0, "output", "", "T")
      .Output(1, "present_key", "", "T")
      .Output(2, "present_value", "", "T")
      .Output(3, "output_qk", "", "T", OpSchema::Optional)
      .Attr("num_heads", "", AttributeProto::INT)
      .Attr("kv_num_heads", "", AttributeProto::INT)
      .Attr("scale", "", AttributeProto::FLOAT, 0.0f)
      .Attr("softcap", "", AttributeProto::FLOAT, 0.0f)
      .Attr("local_window_size", "", AttributeProto::INT, static_cast<int64_t>(-1))
      .Attr("do_rotary", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("rotary_interleaved", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("smooth_softmax", "", AttributeProto::INT, static_cast<int64_t>(-1))
      .Attr("qk_output", "", AttributeProto::INT, static_cast<int64_t>(0))
      .TypeConstraint("T", kOrtFloats, "")
      .TypeConstraint("M", {"tensor(int32)"}, "")
      .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
        const auto* heads = ctx.getAttribute("num_heads");
        const auto* kv_heads = ctx.getAttribute("kv_num_heads");
        if (heads == nullptr || kv_heads == nullptr || heads->i() < 1 || kv_heads->i() < 1) {
          fail_shape_inference("num_heads and kv_num_heads must be positive");
        }
        for (size_t o = 0; o < 3 && o < ctx.getNumOutputs(); ++o) {
          onnx::propagateElemTypeFromInputToOutput(ctx, 0, o);
        }
        const TensorShapeProto* q = KnownShape(ctx, 0);
        if (q == nullptr || q->dim_size() != 3) return;
        const bool packed = !onnx::hasInputShape(ctx, 1) && ctx.getInputType(1) == nullptr;
        int64_t head_size = -1;
        const auto& last = q->dim(2);
        if (last.has_dim_value()) {
          const int64_t parts = packed ? heads->i() + 2 * kv_heads->i() : heads->i();
          if (last.dim_value() % parts != 0) {
            fail_shape_inference("query's last dim does not split into heads");
          }
          head_size = last.dim_value() / parts;
        }
        TensorShapeProto out;
        *out.add_dim() = q->dim(0);
        *out.add_dim() = q->dim(1);
        if (head_size > 0)
          out.add_dim()->set_dim_value(head_size * heads->i());
        else
          out.add_dim();
        onnx::updateOutputShape(ctx, 0, out);
        // present: [B, kv_num_heads, max(total, past), head_size]; the length is known only at
        // run time (total_sequence_length is an input).
        TensorShapeProto present;
        *present.add_dim() = q->dim(0);
        present.add_dim()->set_dim_value(kv_heads->i());
        present.add_dim();
        if (head_size > 0)
          present.add_dim()->set_dim_value(head_size);
        else
          present.add_dim();
        for (size_t o = 1; o < 3 && o < ctx.getNumOutputs(); ++o) {
          onnx::updateOutputShape(ctx, o, present);
        }
      });
  family.Add(std::move(s));
}

// Output: indices' shape followed by data's dims after the gather axis (0), the last one
// unpacked (two 4-bit values a byte).
void GatherBlockQuantized() {
  OpSchema s = Schema("GatherBlockQuantized", kMicrosoftDomain, 1);
  s.Input(0, "data", "", "T1")
      .Input(1, "indices", "", "Tind")
      .Input(2, "scales", "", "T2")
      .Input(3, "zero_points", "", "T1", OpSchema::Optional)
      .Output(0, "output", "", "T2")
      .Attr("gather_axis", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("quantize_axis", "", AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("block_size", "", AttributeProto::INT, static_cast<int64_t>(128))
      .Attr("bits", "", AttributeProto::INT, static_cast<int64_t>(4))
      .TypeConstraint("T1", {"tensor(uint8)"}, "")
      .TypeConstraint("T2", kOrtFloats, "")
      .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
        const TensorShapeProto* data = KnownShape(ctx, 0);
        const TensorShapeProto* indices = KnownShape(ctx, 1);
        const auto* axis = ctx.getAttribute("gather_axis");
        if (data == nullptr || indices == nullptr || data->dim_size() < 2 ||
            (axis != nullptr && axis->i() != 0)) {
          return;
        }
        const auto* bits = ctx.getAttribute("bits");
        const int64_t per_byte = bits == nullptr || bits->i() == 4 ? 2 : 1;
        TensorShapeProto out = *indices;
        for (int d = 1; d < data->dim_size(); ++d) {
          auto* dim = out.add_dim();
          const auto& src = data->dim(d);
          if (d + 1 < data->dim_size()) {
            *dim = src;
          } else if (src.has_dim_value()) {
            dim->set_dim_value(src.dim_value() * per_byte);
          }
        }
        onnx::updateOutputShape(ctx, 0, out);
      });
  family.Add(std::move(s));
}

void RegisterAll() {
  SchemaFamily::EnsureMicrosoftDomain();
  MatMulNBits();
  RotaryEmbedding();
  GroupQueryAttention();
  GatherBlockQuantized();
}

}  // namespace

void RegisterGenAiSchemas() { family.Register(); }

std::vector<std::string> GenAiSchemaNames() { return family.Names(); }

}  // namespace inferd::engine
