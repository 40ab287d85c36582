// MatMulInteger and ConvInteger (opset 10): int8 / uint8 operands with zero points, exact int32
// results (what onnxruntime.quantization.quantize_dynamic writes); QLinearMatMul and QLinearConv
// (opset 10; QOperator format): the same int32 accumulation, then requantized (Requant below).
//
//   MatMulInteger: Y[.., m, n] = sum_k (A[.., m, k] - a_zp) * (B[.., k, n] - b_zp), numpy
//     matmul semantics (1-D promotion, batch broadcasting). a_zero_point: a scalar, per row of A
//     ([M], or A's batch dims + [M, 1]); b_zero_point: a scalar, per column of B ([N], or B's
//     batch dims + [1, N]).
//   ConvInteger: Conv's geometry (window.h: kernel_shape, strides, dilations, pads, auto_pad,
//     group), x_zero_point a scalar, w_zero_point a scalar or one per output channel [M];
//     padding contributes x_zero_point (so zero after the subtraction).
//
// How (own code, exact): both operands are first widened into int16 workspaces with their zero
// points subtracted (|value| <= 255), then accumulated in int32 (wrapping on overflow as ONNX
// Runtime's int32 accumulators do; K * 255 * 255 stays below 2^31 up to K = 33025). MatMul
// rows run in parallel with the inner loop over N (vectorized); Conv runs (image, output
// channel) planes in parallel, each output walking its window's taps over the group's channels.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/int8_matmul_primitive.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/quant_layout.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/shape_cache.h"
#include "kernels/cpu/window.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;
using Dims = absl::InlinedVector<int64_t, 8>;

enum Slot : int {
  kAWork = 0,
  kBWork = 1,
  kAccWork = 2,
  kQuantAWork = 3,
  kDnnlScratch = 4,  // the int8 primitive's scratchpad
  kShiftedB = 5,     // a uint8 B that is not constant, as int8 (b - 128)
  kSums = 6,         // row sums of A, column sums of B, the zero points as int32
};

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

absl::Status CheckOperand(const Tensor& t, const Tensor* zp, int index, int zp_index,
                          const NodeLabel& node) {
  if (!Is8Bit(t.dtype())) {
    return node.Unimplemented(absl::StrCat("input ", index, " is ", engine::DataTypeName(t.dtype()),
                                           "; supported are int8 and uint8"));
  }
  if (zp != nullptr) INFERD_RETURN_IF_ERROR(CheckType(*zp, t.dtype(), zp_index, node));
  return absl::OkStatus();
}

// Widens t into dst (int16) subtracting zero point zp_of(i) from element i.
template <typename ZpIndex>
void Widen(const Tensor& t, const Tensor* zp, int16_t* dst, ZpIndex zp_of,
           engine::ThreadPool& pool) {
  const int64_t n = t.NumElements();
  const bool is_signed = t.dtype() == DataType::kInt8;
  const auto* s8 = t.data<int8_t>();
  const auto* u8 = t.data<uint8_t>();
  pool.ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t z = zp == nullptr ? 0 : IntegerAt(*zp, zp_of(i));
      const int64_t v = is_signed ? s8[i] : u8[i];
      dst[i] = static_cast<int16_t>(v - z);
    }
  });
}

bool IsScalarLike(const Shape& s) { return s.NumElements() == 1 && s.rank() <= 1; }

// The requantization of QLinearMatMul / QLinearConv, per output parameter p (column or output
// channel): scale_p = in_scale * w_scale[p] / y_scale (in this order, in float32, as ONNX
// Runtime), y = saturate(round_half_even(acc * scale_p) + y_zero_point).
struct Requant {
  DataType out_type = DataType::kInt32;  // int32: no requantization (the *Integer ops)
  float in_scale = 1.0f, y_scale = 1.0f;
  const Tensor* w_scale = nullptr;
  bool per_param = false;
  int64_t y_zp = 0;

  static absl::StatusOr<Requant> Read(const KernelContext& ctx, int in_scale, int w_scale,
                                      int y_scale, int y_zp, int64_t params,
                                      const NodeLabel& node) {
    Requant r;
    const Tensor* t[3];
    const int idx[3] = {in_scale, w_scale, y_scale};
    for (int i = 0; i < 3; ++i) {
      INFERD_ASSIGN_OR_RETURN(t[i], RequiredInput(ctx, idx[i], node));
      const DataType st = t[i]->dtype();
      if (st != DataType::kFloat32 && st != DataType::kFloat16 && st != DataType::kBFloat16) {
        return node.InvalidArgument(
            absl::StrCat("input ", idx[i], " (a scale) is ", engine::DataTypeName(st)));
      }
      if (i != 1 && !IsScalarLike(t[i]->shape())) {
        return node.InvalidArgument(absl::StrCat("input ", idx[i], " (a scale) must be a ",
                                                 "scalar, got ", t[i]->shape().ToString()));
      }
    }
    r.in_scale = FloatAt(*t[0], 0);
    r.y_scale = FloatAt(*t[2], 0);
    r.w_scale = t[1];
    r.per_param = !IsScalarLike(t[1]->shape());
    if (r.per_param && t[1]->shape() != Shape{params}) {
      return node.InvalidArgument(absl::StrCat("input ", w_scale, " (scale) ",
                                               t[1]->shape().ToString(), " must be a scalar or [",
                                               params, "]"));
    }
    r.out_type = DataType::kUint8;
    const Tensor* zp = ctx.num_inputs() > y_zp ? ctx.input(y_zp) : nullptr;
    if (zp != nullptr) {
      if (!Is8Bit(zp->dtype()) || !IsScalarLike(zp->shape())) {
        return node.InvalidArgument(absl::StrCat("y_zero_point must be an int8 or uint8 ",
                                                 "scalar, got ", engine::DataTypeName(zp->dtype()),
                                                 " ", zp->shape().ToString()));
      }
      r.out_type = zp->dtype();
      r.y_zp = IntegerAt(*zp, 0);
    }
    return r;
  }

  float ScaleOf(int64_t p) const {
    return in_scale * FloatAt(*w_scale, per_param ? p : 0) / y_scale;
  }

  // acc[i] has parameter (i / run) % params.
  void Apply(const int32_t* acc, int64_t total, int64_t run, int64_t params,
             engine::ThreadPool& pool, Tensor& y) const {
    if (y.dtype() == DataType::kUint8) {
      Run(acc, total, run, params, pool, y.mutable_data<uint8_t>());
    } else {
      Run(acc, total, run, params, pool, y.mutable_data<int8_t>());
    }
  }

  template <typename Q>
  void Run(const int32_t* acc, int64_t total, int64_t run, int64_t params, engine::ThreadPool& pool,
           Q* dst) const {
    constexpr float lo = static_cast<float>(std::numeric_limits<Q>::min());
    constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
    const float zp = static_cast<float>(y_zp);
    pool.ParallelFor(total, 16384, [&](int64_t begin, int64_t end) {
      // Runs of `run` elements share a parameter: one scale per run, a plain inner loop.
      for (int64_t i = begin; i < end;) {
        const int64_t seg = i / run;
        const int64_t stop = std::min(end, (seg + 1) * run);
        const float s = ScaleOf(seg % params);
        for (int64_t j = i; j < stop; ++j) {
          float v = std::nearbyint(static_cast<float>(acc[j]) * s) + zp;
          v = v > hi ? hi : v;
          v = v >= lo ? v : lo;
          dst[j] = static_cast<Q>(v);
        }
        i = stop;
      }
    });
  }
};

// The float output of MatMulIntegerToFloat / DynamicQuantizeMatMul: y = (a_scale * b_scale[n])
// * acc + bias[n] (the multiplier first, as ONNX Runtime's scale-bias output processor).
struct ToFloat {
  float a_scale = 1.0f;
  const Tensor* b_scale = nullptr;
  bool per_column = false;
  const float* bias = nullptr;  // [N] or nullptr

  static absl::StatusOr<ToFloat> Read(const KernelContext& ctx, int a_scale, int b_scale, int bias,
                                      int64_t n, const NodeLabel& node) {
    ToFloat t;
    if (a_scale >= 0) {
      INFERD_ASSIGN_OR_RETURN(const Tensor* as, RequiredInput(ctx, a_scale, node));
      if (as->dtype() != DataType::kFloat32 || !IsScalarLike(as->shape())) {
        return node.InvalidArgument("a_scale must be a float32 scalar");
      }
      t.a_scale = as->data<float>()[0];
    }
    INFERD_ASSIGN_OR_RETURN(t.b_scale, RequiredInput(ctx, b_scale, node));
    if (t.b_scale->dtype() != DataType::kFloat32) {
      return node.InvalidArgument("b_scale must be float32");
    }
    t.per_column = !IsScalarLike(t.b_scale->shape());
    if (t.per_column && t.b_scale->shape() != Shape{n}) {
      return node.InvalidArgument(absl::StrCat("b_scale ", t.b_scale->shape().ToString(),
                                               " must be a scalar or [N] = [", n, "]"));
    }
    const Tensor* b = bias >= 0 && ctx.num_inputs() > bias ? ctx.input(bias) : nullptr;
    if (b != nullptr) {
      if (b->dtype() != DataType::kFloat32 || b->shape() != Shape{n}) {
        return node.InvalidArgument(absl::StrCat("bias must be float32 [", n, "], got ",
                                                 engine::DataTypeName(b->dtype()), " ",
                                                 b->shape().ToString()));
      }
      t.bias = b->data<float>();
    }
    return t;
  }

  void Apply(const int32_t* acc, int64_t total, int64_t n, engine::ThreadPool& pool,
             float* y) const {
    const float* bs = b_scale->data<float>();
    pool.ParallelFor(total, 16384, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end;) {  // by rows of N: no division per element
        const int64_t row_start = i - i % n;
        const int64_t stop = std::min(end, row_start + n);
        for (int64_t j = i; j < stop; ++j) {
          const int64_t col = j - row_start;
          const float multiplier = a_scale * bs[per_column ? col : 0];
          y[j] = multiplier * static_cast<float>(acc[j]) + (bias == nullptr ? 0.0f : bias[col]);
        }
        i = stop;
      }
    });
  }
};

struct MatMulGeometry {
  Shape out;
  Shape a, b;  // promoted to rank >= 2
  int64_t m = 0, k = 0, n = 0;
  Dims batch;               // the output's batch dims
  Dims a_stride, b_stride;  // per batch dim, in matrices (0 where broadcast)
  int64_t a_batches = 1, b_batches = 1, out_batches = 1;
};

absl::StatusOr<MatMulGeometry> Geometry(const Shape& a, const Shape& b, const NodeLabel& node) {
  if (a.rank() == 0 || b.rank() == 0) {
    return node.InvalidArgument(
        absl::StrCat("inputs must have rank >= 1, got A ", a.ToString(), " and B ", b.ToString()));
  }
  MatMulGeometry g;
  g.a = a.rank() == 1 ? Shape{1, a[0]} : a;
  g.b = b.rank() == 1 ? Shape{b[0], 1} : b;
  g.m = g.a[g.a.rank() - 2];
  g.k = g.a[g.a.rank() - 1];
  g.n = g.b[g.b.rank() - 1];
  if (g.b[g.b.rank() - 2] != g.k) {
    return node.InvalidArgument(absl::StrCat("A ", a.ToString(), " and B ", b.ToString(),
                                             " do not match: A has ", g.k, " columns, B has ",
                                             g.b[g.b.rank() - 2], " rows"));
  }
  const size_t ar = g.a.rank() - 2, br = g.b.rank() - 2, r = std::max(ar, br);
  g.batch.assign(r, 1);
  g.a_stride.assign(r, 0);
  g.b_stride.assign(r, 0);
  int64_t as = 1, bs = 1;
  for (size_t d = r; d-- > 0;) {
    const int64_t da = d + ar >= r ? g.a[d + ar - r] : 1;
    const int64_t db = d + br >= r ? g.b[d + br - r] : 1;
    if (da != db && da != 1 && db != 1) {
      return node.InvalidArgument(absl::StrCat("batch dims of A ", a.ToString(), " and B ",
                                               b.ToString(), " do not broadcast"));
    }
    g.batch[d] = da == 1 ? db : da;
    g.a_stride[d] = da == 1 ? 0 : as;
    g.b_stride[d] = db == 1 ? 0 : bs;
    as *= da;
    bs *= db;
  }
  g.a_batches = as;
  g.b_batches = bs;
  for (int64_t d : g.batch) {
    g.out.push_back(d);
    g.out_batches *= d;
  }
  if (a.rank() > 1) g.out.push_back(g.m);
  if (b.rank() > 1) g.out.push_back(g.n);
  return g;
}

// How a MatMul kernel reads its inputs and what it writes:
//   kInteger  MatMulInteger (A, B, a_zero_point, b_zero_point) -> int32;
//   kQLinear  QLinearMatMul (a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
//             y_zero_point) -> the int32 result requantized (Requant: b_scale scalar or per
//             column, as ONNX Runtime's MLAS requantization);
//   kToFloat  com.microsoft MatMulIntegerToFloat (A, B, a_scale, b_scale, a_zero_point,
//             b_zero_point, bias) -> float32 acc * (a_scale * b_scale[n]) + bias[n];
//   kDynamic  com.microsoft DynamicQuantizeMatMul (A float32, B, b_scale, b_zero_point, bias):
//             A quantized to uint8 as DynamicQuantizeLinear does, then as kToFloat.
enum class MatMulMode { kInteger, kQLinear, kToFloat, kDynamic };

// Where the inputs are for a mode (-1: the mode has no such input).
struct MatMulInputs {
  int a, b, a_zp, b_zp, a_scale, b_scale, y_scale, y_zp, bias;
};
constexpr MatMulInputs InputsOf(MatMulMode mode) {
  switch (mode) {
    case MatMulMode::kInteger:
      return {0, 1, 2, 3, -1, -1, -1, -1, -1};
    case MatMulMode::kQLinear:
      return {0, 3, 2, 5, 1, 4, 6, 7, -1};
    case MatMulMode::kToFloat:
      return {0, 1, 4, 5, 2, 3, -1, -1, 6};
    case MatMulMode::kDynamic:
    default:
      return {0, 1, -1, 3, -1, 2, -1, -1, 4};
  }
}

const Tensor* OptionalInput(const KernelContext& ctx, int i) {
  return i >= 0 && ctx.num_inputs() > i ? ctx.input(i) : nullptr;
}

// Unsigned accumulation: wraps like two's complement int32 without undefined behaviour.
void RowTimesMatrix(const int16_t* a, const int16_t* b, int64_t k, int64_t n, int32_t* y) {
  auto* acc = reinterpret_cast<uint32_t*>(y);
  std::fill(acc, acc + n, 0u);
  for (int64_t kk = 0; kk < k; ++kk) {
    const int32_t av = a[kk];
    if (av == 0) continue;
    const int16_t* brow = b + kk * n;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<uint32_t>(av * brow[j]);
  }
}

// The oneDNN int8 product for one set of shapes (Int8MatMulPrimitive).
struct Int8Plan {
  std::shared_ptr<const Int8MatMulPrimitive> primitive;
};

// The batch patterns the oneDNN path takes: each operand's batch is the output's or broadcast
// whole (size 1); partial broadcasts ([2, 1] x [1, 3]) stay on the own code.
bool DnnlShapes(const MatMulGeometry& g) {
  return g.m > 0 && g.n > 0 && g.k > 0 && g.out_batches > 0 &&
         (g.a_batches == 1 || g.a_batches == g.out_batches) &&
         (g.b_batches == 1 || g.b_batches == g.out_batches);
}

template <MatMulMode kMode>
class MatMulIntKernel final : public engine::OpKernel {
 public:
  static constexpr MatMulInputs kIn = InputsOf(kMode);
  static constexpr bool kQLinear = kMode == MatMulMode::kQLinear;
  static constexpr bool kFloatOut = kMode == MatMulMode::kToFloat || kMode == MatMulMode::kDynamic;
  static constexpr bool kDynamic = kMode == MatMulMode::kDynamic;

  static absl::StatusOr<std::unique_ptr<MatMulIntKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<MatMulIntKernel>(new MatMulIntKernel(info));
    // Constant B on the oneDNN path: its int8 form and column sums once (the primitive itself
    // is built per shape of A, prepacking B).
    const Tensor* cb = info.input(kIn.b).constant;
    if (k->dnnl_ && cb != nullptr && Is8Bit(cb->dtype()) && cb->shape().rank() >= 1 &&
        cb->NumElements() > 0) {
      const Shape& bs = cb->shape();
      const int64_t kk = bs.rank() == 1 ? bs[0] : bs[bs.rank() - 2];
      const int64_t n = bs.rank() == 1 ? 1 : bs[bs.rank() - 1];
      const int64_t batches = cb->NumElements() / (kk * n);
      k->b_col_sums_.assign(batches * n, 0);
      const bool u8 = cb->dtype() == DataType::kUint8;
      if (u8) k->shifted_b_.resize(cb->NumElements());
      for (int64_t bb = 0; bb < batches; ++bb) {
        for (int64_t r = 0; r < kk; ++r) {
          const int64_t row = (bb * kk + r) * n;
          for (int64_t j = 0; j < n; ++j) {
            const int32_t v = u8 ? cb->data<uint8_t>()[row + j] : cb->data<int8_t>()[row + j];
            k->b_col_sums_[bb * n + j] += v;
            if (u8) k->shifted_b_[row + j] = static_cast<int8_t>(v - 128);
          }
        }
      }
      k->constant_b_ = cb;
    }
    return k;
  }

  size_t PersistentBytes() const override {
    return shifted_b_.size() + b_col_sums_.size() * sizeof(int32_t) +
           cache_.SumBytes([](const Int8Plan& p) { return p.primitive->prepacked_bytes(); });
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (static_cast<int>(shapes.size()) <= kIn.b) return {};
    const std::optional<int64_t> a = CheckedProduct(shapes[kIn.a].dims());
    const std::optional<int64_t> b = CheckedProduct(shapes[kIn.b].dims());
    if (!a || !b) return {};
    if (dnnl_) {
      absl::StatusOr<MatMulGeometry> g = Geometry(shapes[kIn.a], shapes[kIn.b], node_);
      if (g.ok() && DnnlShapes(*g)) return DnnlWorkspace(shapes[kIn.a], shapes[kIn.b], *g, *a, *b);
    }
    std::vector<engine::WorkspaceRequirement> ws = {
        {kAWork, static_cast<size_t>(*a) * sizeof(int16_t)},
        {kBWork, static_cast<size_t>(*b) * sizeof(int16_t)}};
    if (kQLinear || kFloatOut) {
      absl::StatusOr<MatMulGeometry> g = Geometry(shapes[kIn.a], shapes[kIn.b], node_);
      if (!g.ok()) return {};
      const std::optional<int64_t> out = CheckedProduct(g->out.dims());
      if (!out) return {};
      ws.push_back({kAccWork, static_cast<size_t>(*out) * sizeof(int32_t)});
    }
    if (kDynamic) ws.push_back({kQuantAWork, static_cast<size_t>(*a)});
    return ws;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, kIn.a, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, kIn.b, node_));
    const Tensor* azp = OptionalInput(ctx, kIn.a_zp);
    const Tensor* bzp = OptionalInput(ctx, kIn.b_zp);
    if (kDynamic) {
      INFERD_RETURN_IF_ERROR(CheckType(*a, DataType::kFloat32, kIn.a, node_));
    } else {
      INFERD_RETURN_IF_ERROR(CheckOperand(*a, azp, kIn.a, kIn.a_zp, node_));
    }
    INFERD_RETURN_IF_ERROR(CheckOperand(*b, bzp, kIn.b, kIn.b_zp, node_));
    INFERD_ASSIGN_OR_RETURN(MatMulGeometry g, Geometry(a->shape(), b->shape(), node_));
    // The zero points' forms: scalar, per row of A / per column of B.
    const int64_t m = g.m, k = g.k, n = g.n;
    bool a_rows_per_batch = false, b_cols_per_batch = false;
    if (azp != nullptr && !IsScalarLike(azp->shape())) {
      Shape full(g.a.dims().subspan(0, g.a.rank() - 2));
      full.push_back(m);
      full.push_back(1);
      a_rows_per_batch = azp->shape() == full && g.a.rank() > 2;
      if (!a_rows_per_batch && azp->shape() != Shape{m}) {
        return node_.InvalidArgument(absl::StrCat("a_zero_point ", azp->shape().ToString(),
                                                  " must be a scalar, [M] = [", m, "] or ",
                                                  full.ToString()));
      }
    }
    if (bzp != nullptr && !IsScalarLike(bzp->shape())) {
      Shape full(g.b.dims().subspan(0, g.b.rank() - 2));
      full.push_back(1);
      full.push_back(n);
      b_cols_per_batch = bzp->shape() == full && g.b.rank() > 2;
      if (!b_cols_per_batch && bzp->shape() != Shape{n}) {
        return node_.InvalidArgument(absl::StrCat("b_zero_point ", bzp->shape().ToString(),
                                                  " must be a scalar, [N] = [", n, "] or ",
                                                  full.ToString()));
      }
    }
    Requant rq;
    ToFloat tf;
    DataType out_type = DataType::kInt32;
    if (kQLinear) {
      INFERD_ASSIGN_OR_RETURN(
          rq, Requant::Read(ctx, kIn.a_scale, kIn.b_scale, kIn.y_scale, kIn.y_zp, n, node_));
      out_type = rq.out_type;
    }
    if (kFloatOut) {
      INFERD_ASSIGN_OR_RETURN(tf, ToFloat::Read(ctx, kIn.a_scale, kIn.b_scale, kIn.bias, n, node_));
      out_type = DataType::kFloat32;
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, out_type, g.out));
    if (y->NumElements() == 0) return absl::OkStatus();
    int32_t* out = nullptr;
    if (kQLinear || kFloatOut) {
      INFERD_ASSIGN_OR_RETURN(void* acc, ctx.GetWorkspace(kAccWork));
      out = static_cast<int32_t*>(acc);
    } else {
      out = y->mutable_data<int32_t>();
    }
    // DynamicQuantizeMatMul: A to uint8 with its own scale and zero point.
    Tensor a_quant;
    uint8_t a_dyn_zp_value = 0;
    Tensor a_dyn_zp;
    if (kDynamic) {
      INFERD_ASSIGN_OR_RETURN(void* qa, ctx.GetWorkspace(kQuantAWork));
      float scale = 1.0f;
      DynamicQuantizeU8(a->data<float>(), a->NumElements(), static_cast<uint8_t*>(qa), &scale,
                        &a_dyn_zp_value, ctx.threads());
      tf.a_scale = scale;
      a_quant = Tensor::Borrowed(DataType::kUint8, a->shape(), qa);
      a_dyn_zp = Tensor::Borrowed(DataType::kUint8, Shape{}, &a_dyn_zp_value);
      a = &a_quant;
      azp = &a_dyn_zp;
    }
    if (k == 0) {
      std::fill(out, out + y->NumElements(), 0);
    } else {
      const bool a_signed = a->dtype() == DataType::kInt8;
      if (dnnl_ && DnnlShapes(g) && a_signed == a_signed_ && b->dtype() == b_type_) {
        INFERD_RETURN_IF_ERROR(
            MultiplyDnnl(ctx, *a, *b, azp, bzp, g, a_rows_per_batch, b_cols_per_batch, out));
      } else {
        INFERD_RETURN_IF_ERROR(
            Multiply(ctx, *a, *b, azp, bzp, g, a_rows_per_batch, b_cols_per_batch, out));
      }
    }
    if (kQLinear) {
      // Column j of every row has parameter j (per column) or 0.
      rq.Apply(out, y->NumElements(), /*run=*/1, /*params=*/n, ctx.threads(), *y);
    }
    if (kFloatOut) tf.Apply(out, y->NumElements(), n, ctx.threads(), y->mutable_data<float>());
    return absl::OkStatus();
  }

 private:
  explicit MatMulIntKernel(const KernelInfo& info)
      : node_(info),
        threads_(info.intra_op_threads()),
        a_signed_(!kDynamic && info.input(kIn.a).type == DataType::kInt8),
        b_type_(info.input(kIn.b).type),
        // The oneDNN path needs the operand types at load (its plan and workspace depend on
        // them) and a CPU that sums u8 x s8 products exactly.
        dnnl_(Int8MatMulPrimitive::Available() && Is8Bit(b_type_) &&
              (kDynamic || Is8Bit(info.input(kIn.a).type))) {}

  absl::StatusOr<std::shared_ptr<const Int8Plan>> PlanFor(const Shape& a, const Shape& b,
                                                          const MatMulGeometry& g) const {
    const Shape* shapes[] = {&a, &b};
    return cache_.GetOrCreate(
        ShapeRefs(shapes, 2), threads_, [&]() -> absl::StatusOr<std::shared_ptr<const Int8Plan>> {
          Int8MatMulSpec spec;
          spec.batch = g.out_batches;
          spec.batch_a = g.a_batches;
          spec.batch_b = g.b_batches;
          spec.m = g.m, spec.k = g.k, spec.n = g.n;
          spec.a_signed = a_signed_;
          if (constant_b_ != nullptr) {
            spec.constant_b = shifted_b_.empty() ? constant_b_->data<int8_t>() : shifted_b_.data();
          }
          auto plan = std::make_shared<Int8Plan>();
          INFERD_ASSIGN_OR_RETURN(plan->primitive,
                                  Int8MatMulPrimitive::Build(spec, threads_, node_));
          return std::shared_ptr<const Int8Plan>(std::move(plan));
        });
  }

  // Rows of A and columns of B (sums and zero points), as int32 in kSums.
  static int64_t SumsCount(const MatMulGeometry& g) {
    return 2 * (g.a_batches * g.m + g.b_batches * g.n);
  }

  std::vector<engine::WorkspaceRequirement> DnnlWorkspace(const Shape& as, const Shape& bs,
                                                          const MatMulGeometry& g, int64_t a,
                                                          int64_t b) const {
    absl::StatusOr<std::shared_ptr<const Int8Plan>> plan = PlanFor(as, bs, g);
    if (!plan.ok()) return {};
    std::vector<engine::WorkspaceRequirement> ws = {
        {kSums, static_cast<size_t>(SumsCount(g)) * sizeof(int32_t)}};
    const size_t scratch = (*plan)->primitive->scratchpad_bytes();
    if (scratch != 0) ws.push_back({kDnnlScratch, scratch});
    if (b_type_ == DataType::kUint8 && constant_b_ == nullptr) {
      ws.push_back({kShiftedB, static_cast<size_t>(b)});
    }
    if (kQLinear || kFloatOut) {
      const std::optional<int64_t> out = CheckedProduct(g.out.dims());
      if (!out) return {};
      ws.push_back({kAccWork, static_cast<size_t>(*out) * sizeof(int32_t)});
    }
    if (kDynamic) ws.push_back({kQuantAWork, static_cast<size_t>(a)});
    return ws;
  }

  // The product on oneDNN: P = A x B' (B' = B - 128 for uint8 B, else B), then per element
  //   acc = P + (c - zb[n]) * R[m] - za[m] * S[n] + K * za[m] * zb[n]
  // with c = 128 for uint8 B (else 0), R the row sums of A, S the column sums of B; in wrapping
  // 32-bit arithmetic, which equals the own code's wrapping sum of (a - za) * (b - zb).
  absl::Status MultiplyDnnl(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor* azp,
                            const Tensor* bzp, const MatMulGeometry& g, bool a_rows_per_batch,
                            bool b_cols_per_batch, int32_t* out) const {
    INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const Int8Plan> plan, PlanFor(a.shape(), b.shape(), g));
    const int64_t m = g.m, k = g.k, n = g.n;
    const int64_t a_rows = g.a_batches * m, b_cols = g.b_batches * n;
    const bool b_u8 = b.dtype() == DataType::kUint8;
    engine::ThreadPool& pool = ctx.threads();
    INFERD_ASSIGN_OR_RETURN(void* sums_ws, ctx.GetWorkspace(kSums));
    auto* row_sum = static_cast<int32_t*>(sums_ws);
    int32_t* col_sum = row_sum + a_rows;
    int32_t* za = col_sum + b_cols;
    int32_t* zb = za + a_rows;
    // B as int8.
    const int8_t* b8 = nullptr;
    const bool constant = constant_b_ != nullptr;
    if (constant) {
      b8 = b_u8 ? shifted_b_.data() : constant_b_->data<int8_t>();
    } else if (b_u8) {
      INFERD_ASSIGN_OR_RETURN(void* shifted, ctx.GetWorkspace(kShiftedB));
      auto* dst = static_cast<int8_t*>(shifted);
      const uint8_t* src = b.data<uint8_t>();
      pool.ParallelFor(b.NumElements(), 65536, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) dst[i] = static_cast<int8_t>(src[i] ^ 0x80u);
      });
      b8 = dst;
    } else {
      b8 = b.data<int8_t>();
    }
    void* scratch = nullptr;
    if (plan->primitive->scratchpad_bytes() != 0) {
      INFERD_ASSIGN_OR_RETURN(scratch, ctx.GetWorkspace(kDnnlScratch));
    }
    INFERD_RETURN_IF_ERROR(plan->primitive->Execute(pool, a.raw_data(), b8, out, scratch, node_));
    const uint32_t c = b_u8 ? 128u : 0u;
    if (azp == nullptr && bzp == nullptr && c == 0) return absl::OkStatus();
    // Sums and zero points.
    const bool a_signed = a.dtype() == DataType::kInt8;
    pool.ParallelFor(a_rows, std::max<int64_t>(1, 16384 / k), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int32_t sum = 0;
        if (a_signed) {
          const int8_t* row = a.data<int8_t>() + r * k;
          for (int64_t i = 0; i < k; ++i) sum += row[i];
        } else {
          const uint8_t* row = a.data<uint8_t>() + r * k;
          for (int64_t i = 0; i < k; ++i) sum += row[i];
        }
        row_sum[r] = sum;
        int64_t z = 0;
        if (azp != nullptr) {
          z = IsScalarLike(azp->shape()) ? IntegerAt(*azp, 0)
                                         : IntegerAt(*azp, a_rows_per_batch ? r : r % m);
        }
        za[r] = static_cast<int32_t>(z);
      }
    });
    if (constant) {
      std::copy(b_col_sums_.begin(), b_col_sums_.end(), col_sum);
    } else {
      std::fill(col_sum, col_sum + b_cols, 0);
      for (int64_t bb = 0; bb < g.b_batches; ++bb) {
        int32_t* cs = col_sum + bb * n;
        for (int64_t r = 0; r < k; ++r) {
          const int64_t row = (bb * k + r) * n;
          if (b_u8) {
            const uint8_t* src = b.data<uint8_t>() + row;
            for (int64_t j = 0; j < n; ++j) cs[j] += src[j];
          } else {
            const int8_t* src = b.data<int8_t>() + row;
            for (int64_t j = 0; j < n; ++j) cs[j] += src[j];
          }
        }
      }
    }
    for (int64_t col = 0; col < b_cols; ++col) {
      int64_t z = 0;
      if (bzp != nullptr) {
        z = IsScalarLike(bzp->shape()) ? IntegerAt(*bzp, 0)
                                       : IntegerAt(*bzp, b_cols_per_batch ? col : col % n);
      }
      zb[col] = static_cast<int32_t>(z);
    }
    // The correction, per output row.
    const uint32_t kk = static_cast<uint32_t>(k);
    pool.ParallelFor(g.out_batches * m, std::max<int64_t>(1, 16384 / n),
                     [&](int64_t begin, int64_t end) {
                       for (int64_t row = begin; row < end; ++row) {
                         const int64_t ob = row / m;
                         const int64_t ar = (g.a_batches == 1 ? 0 : ob * m) + row % m;
                         const int64_t bc = g.b_batches == 1 ? 0 : ob * n;
                         const uint32_t r = static_cast<uint32_t>(row_sum[ar]);
                         const uint32_t z = static_cast<uint32_t>(za[ar]);
                         const auto* s = reinterpret_cast<const uint32_t*>(col_sum + bc);
                         const auto* zc = reinterpret_cast<const uint32_t*>(zb + bc);
                         auto* y = reinterpret_cast<uint32_t*>(out + row * n);
#pragma omp simd
                         for (int64_t j = 0; j < n; ++j) {
                           y[j] += (c - zc[j]) * r - z * s[j] + kk * z * zc[j];
                         }
                       }
                     });
    return absl::OkStatus();
  }

  absl::Status Multiply(KernelContext& ctx, const Tensor& ta, const Tensor& tb, const Tensor* azp,
                        const Tensor* bzp, const MatMulGeometry& g, bool a_rows_per_batch,
                        bool b_cols_per_batch, int32_t* out) const {
    const Tensor* a = &ta;
    const Tensor* b = &tb;
    const int64_t m = g.m, k = g.k, n = g.n;
    INFERD_ASSIGN_OR_RETURN(void* aw, ctx.GetWorkspace(kAWork));
    INFERD_ASSIGN_OR_RETURN(void* bw, ctx.GetWorkspace(kBWork));
    auto* a16 = static_cast<int16_t*>(aw);
    auto* b16 = static_cast<int16_t*>(bw);
    const bool a_scalar = azp == nullptr || IsScalarLike(azp->shape());
    const bool b_scalar = bzp == nullptr || IsScalarLike(bzp->shape());
    Widen(
        *a, azp, a16,
        [&](int64_t i) -> int64_t {
          if (a_scalar) return 0;
          const int64_t row = i / k;  // batch * M + m
          return a_rows_per_batch ? row : row % m;
        },
        ctx.threads());
    Widen(
        *b, bzp, b16,
        [&](int64_t i) -> int64_t {
          if (b_scalar) return 0;
          return b_cols_per_batch ? (i / (k * n)) * n + i % n : i % n;
        },
        ctx.threads());
    // Rows of the output in parallel; each row: acc[n] += a[k] * b[k, n] over k.
    const size_t r = g.batch.size();
    ctx.threads().ParallelFor(g.out_batches * m, std::max<int64_t>(1, 4096 / (k * n + 1)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t row = begin; row < end; ++row) {
                                  int64_t rest = row / m, ab = 0, bb = 0;
                                  for (size_t d = r; d-- > 0;) {
                                    const int64_t i = rest % g.batch[d];
                                    rest /= g.batch[d];
                                    ab += i * g.a_stride[d];
                                    bb += i * g.b_stride[d];
                                  }
                                  const int16_t* arow = a16 + (ab * m + row % m) * k;
                                  const int16_t* bmat = b16 + bb * k * n;
                                  RowTimesMatrix(arow, bmat, k, n, out + row * n);
                                }
                              });
    return absl::OkStatus();
  }

  const NodeLabel node_;
  const int threads_;
  const bool a_signed_;    // A's type at load is int8 (uint8 for DynamicQuantizeMatMul)
  const DataType b_type_;  // B's type at load
  const bool dnnl_;        // the oneDNN path is open to this node (still shape-dependent)
  // Set at creation when B is constant and dnnl_: its int8 form (uint8 B only) and its column
  // sums per (batch, n).
  const Tensor* constant_b_ = nullptr;
  std::vector<int8_t> shifted_b_;
  std::vector<int32_t> b_col_sums_;
  mutable ShapeCache<Int8Plan> cache_;
};

// ConvInteger's geometry for one run.
struct ConvGeometry {
  int64_t n = 0, c = 0, m = 0, group = 1, cg = 0, mg = 0;
  Dims in, kernel, out, strides, dilations, pad_begin;
  int64_t in_plane = 1, out_plane = 1, taps = 1;
};

// ConvInteger (int32 out) and QLinearConv (the int32 result plus the int32 bias B requantized
// per output channel, as QLinearMatMul's columns).
template <bool kQLinear>
class ConvIntKernel final : public engine::OpKernel {
 public:
  // Input indices: ConvInteger (x, w, x_zp, w_zp); QLinearConv (x, x_scale, x_zp, w, w_scale,
  // w_zp, y_scale, y_zp, B).
  static constexpr int kX = 0, kXzp = 2, kW = kQLinear ? 3 : 1, kWzp = kQLinear ? 5 : 3;
  static constexpr int kXScale = 1, kWScale = 4, kYScale = 6, kYzp = 7, kBias = 8;

  static absl::StatusOr<std::unique_ptr<ConvIntKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(WindowAttributes window, WindowAttributes::Read(info));
    const int64_t group = info.GetInt("group", 1);
    if (group < 1) return info.Error(absl::StrCat("group must be >= 1, got ", group));
    auto k = std::unique_ptr<ConvIntKernel>(new ConvIntKernel(info, window, group));
    // The oneDNN path (im2col + the int8 matmul, W as the left operand so that the product
    // is already [M, positions]) for constant weights of 1-D / 2-D convolutions: W as int8
    // (uint8 shifted by -128) and each output channel's sum of it, once.
    const Tensor* cw = info.input(kW).constant;
    const DataType xt = info.input(kX).type;
    if (Int8MatMulPrimitive::Available() && Is8Bit(xt) && cw != nullptr && Is8Bit(cw->dtype()) &&
        (cw->shape().rank() == 3 || cw->shape().rank() == 4) && cw->NumElements() > 0 &&
        cw->shape()[0] % group == 0) {
      const int64_t m = cw->shape()[0], mg = m / group, kc = cw->NumElements() / m;
      if (mg >= 2 && kc >= 8) {
        const bool u8 = cw->dtype() == DataType::kUint8;
        k->wt_.resize(cw->NumElements());
        k->w_sums_.assign(m, 0);
        for (int64_t i = 0; i < cw->NumElements(); ++i) {
          const int32_t v = u8 ? cw->data<uint8_t>()[i] - 128 : cw->data<int8_t>()[i];
          k->wt_[i] = static_cast<int8_t>(v);
          k->w_sums_[i / kc] += v;
        }
        k->w_u8_ = u8;
        k->x_signed_ = xt == DataType::kInt8;
        k->constant_w_ = cw;
      }
    }
    return k;
  }

  size_t PersistentBytes() const override {
    return wt_.size() + w_sums_.size() * sizeof(int32_t) +
           cache_.SumBytes([](const Int8Plan& p) { return p.primitive->prepacked_bytes(); });
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (static_cast<int>(shapes.size()) <= kW) return {};
    const std::optional<int64_t> x = CheckedProduct(shapes[kX].dims());
    const std::optional<int64_t> w = CheckedProduct(shapes[kW].dims());
    if (!x || !w) return {};
    if (constant_w_ != nullptr) {
      ConvGeometry g;
      if (Plan(shapes[kX], shapes[kW], &g).ok() && DnnlConv(g, shapes[kW])) {
        return DnnlWorkspace(shapes[kX], g);
      }
    }
    std::vector<engine::WorkspaceRequirement> ws = {
        {kAWork, static_cast<size_t>(*x) * sizeof(int16_t)},
        {kBWork, static_cast<size_t>(*w) * sizeof(int16_t)}};
    if (kQLinear) {
      ConvGeometry g;
      if (!Plan(shapes[kX], shapes[kW], &g).ok()) return {};
      const std::optional<int64_t> out =
          CheckedProduct({g.n, g.m, g.out_plane == 0 ? 1 : g.out_plane});
      if (!out) return {};
      ws.push_back({kAccWork, static_cast<size_t>(*out) * sizeof(int32_t)});
    }
    return ws;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, kX, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, kW, node_));
    const Tensor* xzp = ctx.num_inputs() > kXzp ? ctx.input(kXzp) : nullptr;
    const Tensor* wzp = ctx.num_inputs() > kWzp ? ctx.input(kWzp) : nullptr;
    INFERD_RETURN_IF_ERROR(CheckOperand(*x, xzp, kX, kXzp, node_));
    INFERD_RETURN_IF_ERROR(CheckOperand(*w, wzp, kW, kWzp, node_));
    ConvGeometry g;
    INFERD_RETURN_IF_ERROR(Plan(x->shape(), w->shape(), &g));
    if (xzp != nullptr && !IsScalarLike(xzp->shape())) {
      return node_.Unimplemented(
          absl::StrCat("x_zero_point must be a scalar, got ", xzp->shape().ToString()));
    }
    const bool w_per_channel = wzp != nullptr && !IsScalarLike(wzp->shape());
    if (w_per_channel && wzp->shape() != Shape{g.m}) {
      return node_.InvalidArgument(absl::StrCat("w_zero_point ", wzp->shape().ToString(),
                                                " must be a scalar or [M] = [", g.m, "]"));
    }
    Requant rq;
    const int32_t* bias = nullptr;
    if (kQLinear) {
      INFERD_ASSIGN_OR_RETURN(rq, Requant::Read(ctx, kXScale, kWScale, kYScale, kYzp, g.m, node_));
      const Tensor* b = ctx.num_inputs() > kBias ? ctx.input(kBias) : nullptr;
      if (b != nullptr) {
        INFERD_RETURN_IF_ERROR(CheckType(*b, DataType::kInt32, kBias, node_));
        if (b->shape() != Shape{g.m}) {
          return node_.InvalidArgument(
              absl::StrCat("B ", b->shape().ToString(), " must be [", g.m, "]"));
        }
        bias = b->data<int32_t>();
      }
    }
    Shape out_shape{g.n, g.m};
    for (int64_t o : g.out) out_shape.push_back(o);
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, rq.out_type, out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    int32_t* acc = nullptr;
    if (kQLinear) {
      INFERD_ASSIGN_OR_RETURN(void* a, ctx.GetWorkspace(kAccWork));
      acc = static_cast<int32_t*>(a);
    } else {
      acc = y->mutable_data<int32_t>();
    }
    if (DnnlConv(g, w->shape())) {
      // The workspace was declared for this path: an x of another type than at load is refused.
      if ((x->dtype() == DataType::kInt8) != x_signed_ || w->dtype() != constant_w_->dtype()) {
        return node_.InvalidArgument(absl::StrCat("x is ", engine::DataTypeName(x->dtype()),
                                                  ", not the type the model declared"));
      }
      INFERD_RETURN_IF_ERROR(RunDnnl(ctx, *x, xzp, wzp, w_per_channel, g, bias, acc));
    } else {
      INFERD_RETURN_IF_ERROR(RunOwn(ctx, *x, *w, xzp, wzp, w_per_channel, g, bias, acc));
    }
    if (kQLinear) {
      rq.Apply(acc, y->NumElements(), /*run=*/g.out_plane, /*params=*/g.m, ctx.threads(), *y);
    }
    return absl::OkStatus();
  }

 private:
  // The exact own code: widen both operands to int16, walk each output's window.
  absl::Status RunOwn(KernelContext& ctx, const Tensor& tx, const Tensor& tw, const Tensor* xzp,
                      const Tensor* wzp, bool w_per_channel, const ConvGeometry& g,
                      const int32_t* bias, int32_t* acc) const {
    const Tensor* x = &tx;
    const Tensor* w = &tw;
    INFERD_ASSIGN_OR_RETURN(void* xw, ctx.GetWorkspace(kAWork));
    INFERD_ASSIGN_OR_RETURN(void* ww, ctx.GetWorkspace(kBWork));
    auto* x16 = static_cast<int16_t*>(xw);
    auto* w16 = static_cast<int16_t*>(ww);
    const int64_t per_filter = g.cg * g.taps;
    Widen(
        *x, xzp, x16, [](int64_t) -> int64_t { return 0; }, ctx.threads());
    Widen(
        *w, wzp, w16, [&](int64_t i) -> int64_t { return w_per_channel ? i / per_filter : 0; },
        ctx.threads());
    if (g.in.size() == 2) {
      Run2D(g, x16, w16, bias, acc, ctx.threads());
    } else {
      Run(g, x16, w16, bias, acc, ctx.threads());
    }
    return absl::OkStatus();
  }

  // Whether a node with constant weights takes the oneDNN path for this geometry.
  bool DnnlConv(const ConvGeometry& g, const Shape& w) const {
    return constant_w_ != nullptr && w == constant_w_->shape() && g.out_plane > 0 && g.n > 0;
  }

  absl::StatusOr<std::shared_ptr<const Int8Plan>> PlanFor(const Shape& x,
                                                          const ConvGeometry& g) const {
    const Shape* shapes[] = {&x};
    return cache_.GetOrCreate(
        ShapeRefs(shapes, 1), threads_, [&]() -> absl::StatusOr<std::shared_ptr<const Int8Plan>> {
          Int8MatMulSpec spec;  // [Mg, Kc] x [Kc, P] per group
          spec.batch = spec.batch_a = spec.batch_b = g.group;
          spec.m = g.mg, spec.k = g.cg * g.taps, spec.n = g.out_plane;
          spec.a_signed = true;
          auto plan = std::make_shared<Int8Plan>();
          INFERD_ASSIGN_OR_RETURN(plan->primitive,
                                  Int8MatMulPrimitive::Build(spec, threads_, node_));
          return std::shared_ptr<const Int8Plan>(std::move(plan));
        });
  }

  std::vector<engine::WorkspaceRequirement> DnnlWorkspace(const Shape& x,
                                                          const ConvGeometry& g) const {
    absl::StatusOr<std::shared_ptr<const Int8Plan>> plan = PlanFor(x, g);
    if (!plan.ok()) return {};
    const std::optional<int64_t> col = CheckedProduct({g.group, g.cg, g.taps, g.out_plane});
    const std::optional<int64_t> out = CheckedProduct({g.n, g.m, g.out_plane, 4});
    if (!col || !out) return {};
    std::vector<engine::WorkspaceRequirement> ws = {
        {kAWork, static_cast<size_t>(*col)},
        {kSums, static_cast<size_t>(g.group * g.out_plane) * sizeof(int32_t)}};
    const size_t scratch = (*plan)->primitive->scratchpad_bytes();
    if (scratch != 0) ws.push_back({kDnnlScratch, scratch});
    if (kQLinear) ws.push_back({kAccWork, static_cast<size_t>(*out)});
    return ws;
  }

  // Per image: im2col into col[group, C/group * taps, P] as int8 (x - 128 for uint8 x; x's zero
  // point where the window leaves x) with its column sums Sx, the int8 matmul
  // acc = W' x col per group straight into [M, P], then with cx, cw = 128 for uint8 x / w:
  //   acc += (cw - zw[oc]) * Sx[p] + (cx - zx) * Sw[oc] + Kc * (cx - zx) * (cw - zw[oc]) + B[oc]
  // which is the exact sum of (x - zx) * (w - zw) in wrapping 32-bit arithmetic.
  absl::Status RunDnnl(KernelContext& ctx, const Tensor& x, const Tensor* xzp, const Tensor* wzp,
                       bool w_per_channel, const ConvGeometry& g, const int32_t* bias,
                       int32_t* acc) const {
    INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const Int8Plan> plan, PlanFor(x.shape(), g));
    INFERD_ASSIGN_OR_RETURN(void* col_ws, ctx.GetWorkspace(kAWork));
    INFERD_ASSIGN_OR_RETURN(void* sums_ws, ctx.GetWorkspace(kSums));
    void* scratch = nullptr;
    if (plan->primitive->scratchpad_bytes() != 0) {
      INFERD_ASSIGN_OR_RETURN(scratch, ctx.GetWorkspace(kDnnlScratch));
    }
    auto* col = static_cast<int8_t*>(col_ws);
    auto* col_sum = static_cast<int32_t*>(sums_ws);
    const int64_t zx = xzp == nullptr ? 0 : IntegerAt(*xzp, 0);
    const uint8_t flip = x_signed_ ? 0 : 0x80;  // uint8 -> int8 by -128: flip the top bit
    const int8_t pad = static_cast<int8_t>(static_cast<uint8_t>(zx) ^ flip);
    const int64_t kc = g.cg * g.taps, P = g.out_plane;
    // 1-D as 2-D with a height of 1.
    const bool two = g.in.size() == 2;
    const int64_t ih = two ? g.in[0] : 1, iw = g.in.back(), oh = two ? g.out[0] : 1;
    const int64_t ow = g.out.back(), kh = two ? g.kernel[0] : 1, kw = g.kernel.back();
    const int64_t sh = two ? g.strides[0] : 1, sw = g.strides.back();
    const int64_t dh = two ? g.dilations[0] : 1, dw = g.dilations.back();
    const int64_t ph = two ? g.pad_begin[0] : 0, pw = g.pad_begin.back();
    engine::ThreadPool& pool = ctx.threads();
    const uint32_t cx = x_signed_ ? 0u : 128u, cw = w_u8_ ? 128u : 0u;
    const uint32_t dx = cx - static_cast<uint32_t>(zx);
    for (int64_t img = 0; img < g.n; ++img) {
      const auto* xi = static_cast<const uint8_t*>(x.raw_data()) + img * g.c * g.in_plane;
      // pass 1: im2col, one row (group, channel, tap) at a time.
      pool.ParallelFor(
          g.group * kc, std::max<int64_t>(1, 16384 / P), [&](int64_t begin, int64_t end) {
            for (int64_t row = begin; row < end; ++row) {
              const int64_t gi = row / kc, r = row % kc, ci = r / g.taps, t = r % g.taps;
              const int64_t a = t / kw, b = t % kw;
              const uint8_t* plane = xi + (gi * g.cg + ci) * g.in_plane;
              int8_t* dst = col + row * P;
              const auto [r0, r1] = ValidRange(a * dh - ph, sh, ih, oh);
              const auto [c0, c1] = ValidRange(b * dw - pw, sw, iw, ow);
              for (int64_t y = 0; y < oh; ++y) {
                int8_t* d = dst + y * ow;
                if (y < r0 || y >= r1) {
                  std::fill(d, d + ow, pad);
                  continue;
                }
                const uint8_t* src = plane + (y * sh + a * dh - ph) * iw + b * dw - pw;
                std::fill(d, d + c0, pad);
                for (int64_t c = c0; c < c1; ++c) d[c] = static_cast<int8_t>(src[c * sw] ^ flip);
                std::fill(d + c1, d + ow, pad);
              }
            }
          });
      // pass 2: the column sums, per group.
      pool.ParallelFor(g.group, 1, [&](int64_t begin, int64_t end) {
        for (int64_t gi = begin; gi < end; ++gi) {
          int32_t* cs = col_sum + gi * P;
          std::fill(cs, cs + P, 0);
          for (int64_t r = 0; r < kc; ++r) {
            const int8_t* src = col + (gi * kc + r) * P;
            for (int64_t p = 0; p < P; ++p) cs[p] += src[p];
          }
        }
      });
      // pass 3: the product per group, straight into this image's [M, P].
      int32_t* out = acc + img * g.m * P;
      INFERD_RETURN_IF_ERROR(plan->primitive->Execute(pool, wt_.data(), col, out, scratch, node_));
      // pass 4: the correction.
      pool.ParallelFor(g.m, std::max<int64_t>(1, 16384 / P), [&](int64_t begin, int64_t end) {
        for (int64_t oc = begin; oc < end; ++oc) {
          const int64_t gi = oc / g.mg;
          const uint32_t zw =
              static_cast<uint32_t>(wzp == nullptr ? 0 : IntegerAt(*wzp, w_per_channel ? oc : 0));
          const uint32_t fw = cw - zw;
          const uint32_t base = (bias == nullptr ? 0u : static_cast<uint32_t>(bias[oc])) +
                                dx * static_cast<uint32_t>(w_sums_[oc]) +
                                static_cast<uint32_t>(kc) * dx * fw;
          const auto* cs = reinterpret_cast<const uint32_t*>(col_sum) + gi * P;
          auto* d = reinterpret_cast<uint32_t*>(out) + oc * P;
#pragma omp simd
          for (int64_t p = 0; p < P; ++p) d[p] += fw * cs[p] + base;
        }
      });
    }
    return absl::OkStatus();
  }

  ConvIntKernel(const KernelInfo& info, WindowAttributes window, int64_t group)
      : node_(info), window_(std::move(window)), group_(group), threads_(info.intra_op_threads()) {}

  absl::Status Plan(const Shape& x, const Shape& w, ConvGeometry* g) const {
    if (x.rank() < 3 || w.rank() != x.rank()) {
      return node_.InvalidArgument(absl::StrCat("x must be [N, C, spatial...] and w [M, C/group,",
                                                " kernel...] of the same rank, got x ",
                                                x.ToString(), " and w ", w.ToString()));
    }
    const size_t sd = x.rank() - 2;
    g->n = x[0], g->c = x[1], g->m = w[0], g->group = group_;
    if (g->c % group_ != 0 || g->m % group_ != 0 || w[1] != g->c / group_) {
      return node_.InvalidArgument(absl::StrCat("x ", x.ToString(), " and w ", w.ToString(),
                                                " do not match group ", group_,
                                                " (C and M divisible by it, w[1] = C / group)"));
    }
    g->cg = g->c / group_;
    g->mg = g->m / group_;
    const std::vector<int64_t> spatial(x.dims().begin() + 2, x.dims().end());
    const std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
    if (!window_.kernel_shape.empty() && window_.kernel_shape != kernel) {
      return node_.InvalidArgument(absl::StrCat("kernel_shape does not match w ", w.ToString()));
    }
    INFERD_ASSIGN_OR_RETURN(WindowGeometry wg, ComputeWindow(window_, spatial, kernel, node_));
    g->in.assign(spatial.begin(), spatial.end());
    g->kernel.assign(kernel.begin(), kernel.end());
    g->out.assign(wg.out.begin(), wg.out.end());
    g->strides.assign(wg.strides.begin(), wg.strides.end());
    g->dilations.assign(wg.dilations.begin(), wg.dilations.end());
    g->pad_begin.assign(wg.pad_begin.begin(), wg.pad_begin.end());
    for (size_t d = 0; d < sd; ++d) {
      g->in_plane *= g->in[d];
      g->out_plane *= g->out[d];
      g->taps *= g->kernel[d];
    }
    return absl::OkStatus();
  }

  // The first output index o along a dim with o * stride + offset >= 0, and one past the last
  // with o * stride + offset < in (clamped to [0, out]).
  static std::pair<int64_t, int64_t> ValidRange(int64_t offset, int64_t stride, int64_t in,
                                                int64_t out) {
    int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
    int64_t hi = in - offset <= 0 ? 0 : (in - offset - 1) / stride + 1;
    lo = std::min(lo, out);
    hi = std::max(lo, std::min(hi, out));
    return {lo, hi};
  }

  // 2-D convolutions (the depthwise ones above all): per output plane, each tap adds
  // w * (a shifted, strided view of the input plane) to the rows it reaches, so the inner loop
  // runs along an output row with no bounds test. Same wrapping sums as Run.
  static void Run2D(const ConvGeometry& g, const int16_t* x, const int16_t* w, const int32_t* bias,
                    int32_t* y, engine::ThreadPool& pool) {
    const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1];
    const int64_t kh = g.kernel[0], kw = g.kernel[1];
    pool.ParallelFor(g.n * g.m, 1, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const int64_t img = plane / g.m, oc = plane % g.m, grp = oc / g.mg;
        const int16_t* xg = x + (img * g.c + grp * g.cg) * g.in_plane;
        const int16_t* wf = w + oc * g.cg * g.taps;
        uint32_t* dst = reinterpret_cast<uint32_t*>(y) + plane * g.out_plane;
        std::fill(dst, dst + g.out_plane, bias == nullptr ? 0u : static_cast<uint32_t>(bias[oc]));
        for (int64_t ci = 0; ci < g.cg; ++ci) {
          const int16_t* xp = xg + ci * g.in_plane;
          for (int64_t a = 0; a < kh; ++a) {
            const int64_t row_off = a * g.dilations[0] - g.pad_begin[0];
            const auto [r0, r1] = ValidRange(row_off, g.strides[0], ih, oh);
            for (int64_t b = 0; b < kw; ++b) {
              const int32_t wv = wf[ci * g.taps + a * kw + b];
              if (wv == 0) continue;
              const int64_t col_off = b * g.dilations[1] - g.pad_begin[1];
              const auto [c0, c1] = ValidRange(col_off, g.strides[1], iw, ow);
              const int64_t sw = g.strides[1];
              for (int64_t r = r0; r < r1; ++r) {
                const int16_t* src = xp + (r * g.strides[0] + row_off) * iw + col_off;
                uint32_t* d = dst + r * ow;
#pragma omp simd
                for (int64_t c = c0; c < c1; ++c) {
                  d[c] += static_cast<uint32_t>(wv * int32_t{src[c * sw]});
                }
              }
            }
          }
        }
      }
    });
  }

  static void Run(const ConvGeometry& g, const int16_t* x, const int16_t* w, const int32_t* bias,
                  int32_t* y, engine::ThreadPool& pool) {
    const size_t sd = g.in.size();
    pool.ParallelFor(g.n * g.m, 1, [&](int64_t begin, int64_t end) {
      Dims pos(sd), start(sd), tap(sd);
      for (int64_t plane = begin; plane < end; ++plane) {
        const int64_t img = plane / g.m, oc = plane % g.m, grp = oc / g.mg;
        const int16_t* xg = x + (img * g.c + grp * g.cg) * g.in_plane;
        const int16_t* wf = w + oc * g.cg * g.taps;
        uint32_t* dst = reinterpret_cast<uint32_t*>(y) + plane * g.out_plane;
        for (int64_t o = 0; o < g.out_plane; ++o) {
          int64_t rest = o;
          for (size_t d = sd; d-- > 0;) {
            pos[d] = rest % g.out[d];
            rest /= g.out[d];
            start[d] = pos[d] * g.strides[d] - g.pad_begin[d];
            tap[d] = 0;
          }
          uint32_t acc = bias == nullptr ? 0u : static_cast<uint32_t>(bias[oc]);
          for (int64_t t = 0; t < g.taps; ++t) {
            int64_t offset = 0;
            bool inside = true;
            for (size_t d = 0; d < sd && inside; ++d) {
              const int64_t c = start[d] + tap[d] * g.dilations[d];
              inside = c >= 0 && c < g.in[d];
              offset = offset * g.in[d] + c;
            }
            if (inside) {
              for (int64_t ci = 0; ci < g.cg; ++ci) {
                acc += static_cast<uint32_t>(int32_t{xg[ci * g.in_plane + offset]} *
                                             int32_t{wf[ci * g.taps + t]});
              }
            }
            for (size_t d = sd; d-- > 0;) {  // odometer over the window
              if (++tap[d] < g.kernel[d]) break;
              tap[d] = 0;
            }
          }
          dst[o] = acc;
        }
      }
    });
  }

  const NodeLabel node_;
  const WindowAttributes window_;
  const int64_t group_;
  const int threads_;
  // Set at creation when the oneDNN path is open (constant 8-bit w, known x type, VNNI): W^T
  // per group as int8 (uint8 w shifted by -128), the sum of each output channel's w.
  const Tensor* constant_w_ = nullptr;
  bool w_u8_ = false, x_signed_ = false;
  std::vector<int8_t> wt_;
  std::vector<int32_t> w_sums_;
  mutable ShapeCache<Int8Plan> cache_;
};

}  // namespace

std::vector<engine::KernelDef> IntegerMatMulKernelDefs() {
  const std::vector<DataType> types = {DataType::kUint8, DataType::kInt8};
  return {
      CpuDef(engine::kOnnxDomain, "MatMulInteger", 10, kMaxOpset, types,
             FactoryOf<MatMulIntKernel<MatMulMode::kInteger>>()),
      CpuDef(engine::kOnnxDomain, "ConvInteger", 10, kMaxOpset, types,
             FactoryOf<ConvIntKernel<false>>()),
      CpuDef(engine::kOnnxDomain, "QLinearMatMul", 10, kMaxOpset, types,
             FactoryOf<MatMulIntKernel<MatMulMode::kQLinear>>()),
      CpuDef(engine::kMicrosoftDomain, "MatMulIntegerToFloat", 1, 1, types,
             FactoryOf<MatMulIntKernel<MatMulMode::kToFloat>>()),
      CpuDef(engine::kMicrosoftDomain, "DynamicQuantizeMatMul", 1, 1, {DataType::kFloat32},
             FactoryOf<MatMulIntKernel<MatMulMode::kDynamic>>()),
      CpuDef(engine::kOnnxDomain, "QLinearConv", 10, kMaxOpset, types,
             FactoryOf<ConvIntKernel<true>>()),
  };
}

}  // namespace inferd::kernels::cpu
