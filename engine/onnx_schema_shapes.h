// Type and shape inference functions of the opset 18-21 schemas inferd registers into libonnx
// (engine/onnx_schemas.h). Each reads what the node's inputs and attributes say at load (input
// shapes, constant inputs such as axes or sizes) and writes the output types, and the output
// shapes as far as they are known: a dim is set only when it is certain, never guessed, since the
// static memory plan sizes buffers from these shapes. Invalid attributes fail inference with
// onnx's fail_shape_inference, which the loader reports with the node's name.
// Internal to engine/. Stateless; thread-safe.
#ifndef INFERD_ENGINE_ONNX_SCHEMA_SHAPES_H_
#define INFERD_ENGINE_ONNX_SCHEMA_SHAPES_H_

#include "onnx/defs/shape_inference.h"

namespace inferd::engine::schema_shapes {

using onnx::InferenceContext;

// Output 0 has input 0's type and shape (elementwise ops).
void SameAsInput(InferenceContext& ctx);
// Output 0: input 0's type, the broadcast shape of every input.
void Broadcast(InferenceContext& ctx);
// Output 0: bool, the broadcast shape of the inputs (comparisons).
void BroadcastToBool(InferenceContext& ctx);

// ReduceL1 ... ReduceSumSquare of opset 18 (and ReduceMax / ReduceMin of 20): `axes` input,
// keepdims, noop_with_empty_axes.
void Reduce(InferenceContext& ctx);
// Pad 18 and 19: pads and axes inputs.
void Pad(InferenceContext& ctx);
// Resize 18 and 19: roi / scales / sizes inputs, the axes attribute, keep_aspect_ratio_policy.
void Resize(InferenceContext& ctx);
// Split 18: the split input or num_outputs (the last chunk smaller when uneven).
void Split(InferenceContext& ctx);
// LpPool 18 and AveragePool 19: kernel_shape, strides, pads or auto_pad, dilations, ceil_mode.
void Pool(InferenceContext& ctx);
// Col2Im 18: [N, C * prod(block_shape), L] -> [N, C, image_shape...].
void Col2Im(InferenceContext& ctx);
// CenterCropPad 18: the shape input gives the sizes of `axes`.
void CenterCropPad(InferenceContext& ctx);
// DeformConv 19: a convolution's output shape.
void DeformConv(InferenceContext& ctx);
// AffineGrid 20: size [N, C, H, W] -> [N, H, W, 2]; [N, C, D, H, W] -> [N, D, H, W, 3].
void AffineGrid(InferenceContext& ctx);
// DFT 20: dft_length and axis as inputs, onesided, complex output (last dim 2).
void Dft(InferenceContext& ctx);
// GridSample 20: [N, C, spatial...] sampled at grid [N, out spatial..., r] -> [N, C, out...].
void GridSample(InferenceContext& ctx);
// QuantizeLinear 19 / 21: output type from output_dtype, the zero point, or uint8.
void Quantize(InferenceContext& ctx);
// DequantizeLinear 19 / 21: output type of the scale.
void Dequantize(InferenceContext& ctx);
// Cast 19 (to), CastLike 19 (the second input's type); shape of input 0.
void Cast(InferenceContext& ctx);
void CastLike(InferenceContext& ctx);
// StringSplit 20: Y [X..., max splits] string, Z = X's shape int64.
void StringSplit(InferenceContext& ctx);
// ai.onnx.ml LabelEncoder 4: Y has X's shape and the type of the values_* attribute given.
void LabelEncoder(InferenceContext& ctx);
// RegexFullMatch 20: bool of X's shape.
void RegexFullMatch(InferenceContext& ctx);
// OptionalHasElement 18 (bool scalar), OptionalGetElement 18 (the element's type).
void OptionalHasElement(InferenceContext& ctx);
void OptionalGetElement(InferenceContext& ctx);

}  // namespace inferd::engine::schema_shapes

#endif  // INFERD_ENGINE_ONNX_SCHEMA_SHAPES_H_
