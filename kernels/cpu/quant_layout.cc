#include "kernels/cpu/quant_layout.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/cpu/float16.h"

namespace inferd::kernels::cpu {

using engine::DataType;
using engine::Shape;
using engine::Tensor;

int64_t IntegerAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kUint8:
    case DataType::kUint4:  // one per byte
      return t.data<uint8_t>()[i];
    case DataType::kInt8:
    case DataType::kInt4:  // one per byte, sign-extended
      return t.data<int8_t>()[i];
    case DataType::kUint16:
      return t.data<uint16_t>()[i];
    case DataType::kInt16:
      return t.data<int16_t>()[i];
    case DataType::kInt32:
      return t.data<int32_t>()[i];
    default:
      return 0;  // callers check the type first
  }
}

float FloatAt(const Tensor& t, int64_t i) {
  const auto* bits = static_cast<const uint16_t*>(t.raw_data());
  switch (t.dtype()) {
    case DataType::kFloat32:
      return t.data<float>()[i];
    case DataType::kFloat16:
      return HalfToFloat(bits[i]);
    case DataType::kBFloat16:
      return BFloat16ToFloat(bits[i]);
    default:
      return 0.0f;  // callers check the type first
  }
}

void DynamicQuantizeParamsU8(const float* x, int64_t n, float* scale, uint8_t* zero_point) {
  // NaN compares false and is skipped, in every lane as in a sequential loop.
  float lo = 0.0f, hi = 0.0f;
#pragma omp simd reduction(min : lo) reduction(max : hi)
  for (int64_t i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  const float s = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  *scale = s;
  *zero_point =
      static_cast<uint8_t>(std::nearbyint(std::max(0.0f, std::min(255.0f, 0.0f - lo / s))));
}

void QuantizeU8(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* y) {
  const float zv = zero_point;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    float v = std::nearbyint(x[i] / scale) + zv;
    v = v > 255.0f ? 255.0f : v;
    v = v >= 0.0f ? v : 0.0f;  // NaN too
    y[i] = static_cast<uint8_t>(static_cast<int32_t>(v));
  }
}

void DynamicQuantizeU8(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zero_point,
                       engine::ThreadPool& pool) {
  DynamicQuantizeParamsU8(x, n, scale, zero_point);
  const float s = *scale;
  const uint8_t zp = *zero_point;
  pool.ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
    QuantizeU8(x + begin, end - begin, s, zp, y + begin);
  });
}

float QuantLayout::Scale(int64_t p) const { return FloatAt(*scale, p); }

int64_t QuantLayout::ZeroPoint(int64_t p) const {
  return zero_point == nullptr ? 0 : IntegerAt(*zero_point, p);
}

absl::StatusOr<QuantLayout> QuantLayout::Make(const Shape& x, const Tensor& scale,
                                              const Tensor* zero_point, int64_t axis,
                                              int64_t block_size, int opset,
                                              const NodeLabel& node) {
  const DataType st = scale.dtype();
  if (st != DataType::kFloat32 && st != DataType::kFloat16 && st != DataType::kBFloat16) {
    return node.Unimplemented(absl::StrCat("scale of type ", engine::DataTypeName(st),
                                           " is not supported (float32, float16, bfloat16)"));
  }
  // A scalar and a [1] are the same single parameter (ORT's quantizer writes both).
  const auto single = [](const Shape& s) { return s.NumElements() == 1 && s.rank() <= 1; };
  if (zero_point != nullptr && zero_point->shape() != scale.shape() &&
      !(single(zero_point->shape()) && single(scale.shape()))) {
    return node.InvalidArgument(
        absl::StrCat("the zero point's shape ", zero_point->shape().ToString(),
                     " differs from the scale's ", scale.shape().ToString()));
  }
  QuantLayout l;
  l.scale = &scale;
  l.zero_point = zero_point;
  const Shape& s = scale.shape();
  const bool one = s.NumElements() == 1 && s.rank() <= 1;
  if (block_size == 0 && one) {
    l.inner = x.NumElements();
    return l;
  }
  if (opset < 13) {
    return node.InvalidArgument(
        absl::StrCat("the scale must be a scalar before opset 13, got ", s.ToString()));
  }
  if (x.rank() == 0) {
    return node.InvalidArgument(
        absl::StrCat("a scalar x needs a scalar scale, got ", s.ToString()));
  }
  INFERD_ASSIGN_OR_RETURN(int a, NormalizeAxis(axis, static_cast<int64_t>(x.rank()), node));
  l.axis_dim = x[a];
  l.inner = x.SizeFrom(a + 1);
  if (block_size == 0) {
    if (s.rank() != 1 || s[0] != x[a]) {
      return node.InvalidArgument(absl::StrCat("per-axis quantization along axis ", a, " of x ",
                                               x.ToString(), " needs a 1-D scale of ", x[a],
                                               " values, got ", s.ToString()));
    }
    l.mode = Mode::kPerAxis;
    return l;
  }
  if (opset < 21) {
    return node.InvalidArgument("block_size is an attribute from opset 21");
  }
  l.mode = Mode::kBlocked;
  l.block_size = block_size;
  l.blocks = x[a] / block_size + (x[a] % block_size != 0 ? 1 : 0);
  bool ok = s.rank() == x.rank();
  for (size_t d = 0; ok && d < x.rank(); ++d) {
    ok = s[d] == (static_cast<int>(d) == a ? l.blocks : x[d]);
  }
  if (!ok) {
    Shape want = x;
    want[a] = l.blocks;
    return node.InvalidArgument(absl::StrCat(
        "blocked quantization (axis ", a, ", block_size ", block_size, ") of x ", x.ToString(),
        " needs a scale of shape ", want.ToString(), ", got ", s.ToString()));
  }
  return l;
}

absl::StatusOr<ScalarQuant> ScalarQuant::Read(const engine::KernelContext& ctx, int scale,
                                              int zero_point, engine::DataType type,
                                              const NodeLabel& node) {
  ScalarQuant q;
  INFERD_ASSIGN_OR_RETURN(const engine::Tensor* s, RequiredInput(ctx, scale, node));
  if (s->dtype() != engine::DataType::kFloat32 || s->NumElements() != 1 || s->shape().rank() > 1) {
    return node.InvalidArgument(absl::StrCat("input ", scale, " (a scale) must be a float32 ",
                                             "scalar, got ", engine::DataTypeName(s->dtype()), " ",
                                             s->shape().ToString()));
  }
  q.scale = s->data<float>()[0];
  const engine::Tensor* z = ctx.num_inputs() > zero_point ? ctx.input(zero_point) : nullptr;
  if (z != nullptr) {
    if (z->dtype() != type || z->NumElements() != 1 || z->shape().rank() > 1) {
      return node.InvalidArgument(absl::StrCat(
          "input ", zero_point, " (a zero point) must be a ", engine::DataTypeName(type),
          " scalar, got ", engine::DataTypeName(z->dtype()), " ", z->shape().ToString()));
    }
    q.zero_point = static_cast<int32_t>(IntegerAt(*z, 0));
  }
  return q;
}

}  // namespace inferd::kernels::cpu
