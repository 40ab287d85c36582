// Where the quantization parameters (scale, zero point) of each element of a tensor are, for
// QuantizeLinear / DequantizeLinear: per tensor, per axis or blocked (quantize.cc), and reading
// one parameter as float / int64 whatever its element type. A value type made per run from the
// run's tensors (it points into them); thread-compatible, const methods safe to share.
//
// The tensor is seen as rows of `inner` contiguous elements (inner = product of the dims after
// `axis`; one row for per-tensor). Per tensor and per axis a whole row shares one parameter
// (RowParam); blocked, element j of row r has parameter BlockParam(r, j) + 0, and the following
// elements of the row the following parameters.
#ifndef INFERD_KERNELS_CPU_QUANT_LAYOUT_H_
#define INFERD_KERNELS_CPU_QUANT_LAYOUT_H_

#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/status/statusor.h"
#include "engine/kernel.h"
#include "engine/shape.h"
#include "engine/tensor.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/kernel_util.h"

namespace inferd::kernels::cpu {

struct QuantLayout {
  enum class Mode { kPerTensor, kPerAxis, kBlocked };
  Mode mode = Mode::kPerTensor;
  int64_t inner = 1;       // elements per row
  int64_t axis_dim = 1;    // x's dim at `axis` (per axis, blocked)
  int64_t block_size = 0;  // blocked
  int64_t blocks = 1;      // ceil(axis_dim / block_size) (blocked)
  const engine::Tensor* scale = nullptr;
  const engine::Tensor* zero_point = nullptr;  // may be nullptr (zero)

  // Checks the scale's (and zero point's) shape against x's and the attributes; opset < 13
  // allows only per tensor, block_size > 0 selects blocked (opset 21).
  static absl::StatusOr<QuantLayout> Make(const engine::Shape& x, const engine::Tensor& scale,
                                          const engine::Tensor* zero_point, int64_t axis,
                                          int64_t block_size, int opset, const NodeLabel& node);

  bool blocked() const { return mode == Mode::kBlocked; }
  int64_t RowParam(int64_t row) const { return mode == Mode::kPerTensor ? 0 : row % axis_dim; }
  int64_t BlockParam(int64_t row, int64_t j) const {
    const int64_t outer = row / axis_dim, a = row % axis_dim;
    return (outer * blocks + a / block_size) * inner + j;
  }
  float Scale(int64_t p) const;
  int64_t ZeroPoint(int64_t p) const;
};

// DynamicQuantizeLinear's uint8 quantization of x[0, n) (as ONNX Runtime): range [min(0, min x),
// max(0, max x)], scale = range / 255 (1 for an empty range), zero point
// round_half_even(clamp(-min / scale, 0, 255)), y = saturate(round_half_even(x / scale) + zp).
void DynamicQuantizeU8(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zero_point,
                       engine::ThreadPool& pool);
// Its two halves, on the calling thread: the scale and zero point of x[0, n), then y.
void DynamicQuantizeParamsU8(const float* x, int64_t n, float* scale, uint8_t* zero_point);
void QuantizeU8(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* y);

// Element `i` of an integer tensor (int8, uint8, int16, uint16, int32) as int64.
int64_t IntegerAt(const engine::Tensor& t, int64_t i);
// Element `i` of a float32 / float16 / bfloat16 tensor as float.
float FloatAt(const engine::Tensor& t, int64_t i);

// A per-tensor scale and zero point read from a node's inputs (the com.microsoft QLinear* ops):
// input `scale` a float32 scalar (or [1]), input `zero_point` (optional: 0 when absent or past
// the node's inputs) a scalar (or [1]) of `type`. INVALID_ARGUMENT naming the input otherwise.
struct ScalarQuant {
  float scale = 1.0f;
  int32_t zero_point = 0;

  static absl::StatusOr<ScalarQuant> Read(const engine::KernelContext& ctx, int scale,
                                          int zero_point, engine::DataType type,
                                          const NodeLabel& node);

  float Dequantize(int32_t v) const { return static_cast<float>(v - zero_point) * scale; }
  // saturate(round_half_even(v / scale) + zero_point), in float32 as ONNX Runtime.
  template <typename T>
  T Quantize(float v) const {
    constexpr float lo = static_cast<float>(std::numeric_limits<T>::min());
    constexpr float hi = static_cast<float>(std::numeric_limits<T>::max());
    float q = std::nearbyint(v / scale) + static_cast<float>(zero_point);
    q = q > hi ? hi : q;
    q = q >= lo ? q : lo;
    return static_cast<T>(q);
  }
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_QUANT_LAYOUT_H_
