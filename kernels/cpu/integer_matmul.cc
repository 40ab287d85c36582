// MatMulInteger and ConvInteger (opset 10): int8 / uint8 operands with zero points, exact int32
// results (what onnxruntime.quantization.quantize_dynamic writes); QLinearMatMul and QLinearConv
// (opset 10; QOperator format): the same int32 accumulation, then requantized (Requant below).
//
//   MatMulInteger: Y[.., m, n] = sum_k (A[.., m, k] - a_zp) * (B[.., k, n] - b_zp), numpy
//     matmul semantics (1-D promotion, batch broadcasting). a_zero_point: a scalar, per row of A
//     ([M], or A's batch dims + [M, 1]); b_zero_point: a scalar, per column of B ([N], or B's
//     batch dims + [1, N]).
//
// How (own code, exact): both operands are first widened into int16 workspaces with their zero
// points subtracted (|value| <= 255), then accumulated in int32 (wrapping on overflow as ONNX
// Runtime's int32 accumulators do; K * 255 * 255 stays below 2^31 up to K = 33025). Rows run in
// parallel with the inner loop over N (vectorized). ConvInteger / QLinearConv: integer_conv.cc.
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
#include "kernels/cpu/int8_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/quant_layout.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/shape_cache.h"

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

using namespace int8;  // NOLINT: the shared 8-bit helpers

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

}  // namespace

std::vector<engine::KernelDef> IntegerMatMulKernelDefs() {
  const std::vector<DataType> types = {DataType::kUint8, DataType::kInt8};
  return {
      CpuDef(engine::kOnnxDomain, "MatMulInteger", 10, kMaxOpset, types,
             FactoryOf<MatMulIntKernel<MatMulMode::kInteger>>()),
      CpuDef(engine::kOnnxDomain, "QLinearMatMul", 10, kMaxOpset, types,
             FactoryOf<MatMulIntKernel<MatMulMode::kQLinear>>()),
      CpuDef(engine::kMicrosoftDomain, "MatMulIntegerToFloat", 1, 1, types,
             FactoryOf<MatMulIntKernel<MatMulMode::kToFloat>>()),
      CpuDef(engine::kMicrosoftDomain, "DynamicQuantizeMatMul", 1, 1, {DataType::kFloat32},
             FactoryOf<MatMulIntKernel<MatMulMode::kDynamic>>()),
  };
}

}  // namespace inferd::kernels::cpu
