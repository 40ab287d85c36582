// com.microsoft QGemm (what onnxruntime.quantization writes for Gemm in QOperator format, and
// what the QDQ fusion makes of DQ -> Gemm [-> Q]):
//
//   inputs  A, a_scale, a_zero_point, B, b_scale, b_zero_point, C?, y_scale?, y_zero_point?
//   attrs   alpha (1.0), transA (0), transB (0)
//   acc[m, n] = sum_k (A'[m, k] - za) * (B'[k, n] - zb[n]) + C[m, n]   (exact, wrapping int32)
//   with y_scale:    Y = saturate(round_half_even(acc * s[n]) + y_zero_point) of y_zero_point's
//                    type (uint8, zero point 0, without one: as QuantizeLinear),
//                    s[n] = alpha * a_scale * b_scale[n] / y_scale (this order, float32)
//   without:         Y = (alpha * a_scale * b_scale[n]) * acc   (float32)
//
// A' is A or A^T ([M, K]), B' is B or B^T ([K, N]); a_scale and a_zero_point are scalars,
// b_scale and b_zero_point scalars or one per column of B' ([N]); C is int32, unidirectionally
// broadcast to [M, N] (a scalar, [N], [1, N], [M, 1] or [M, N]).
//
// How: on CPUs with VNNI the product is Int8MatMulPrimitive's (a constant B transposed, shifted
// to int8 and summed per column once at load; zero points corrected with row and column sums as
// integer_matmul.cc does); elsewhere own code on int16 operands with the zero points
// subtracted. Both are exact; the requantization is QLinearMatMul's order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/int8_matmul_primitive.h"
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

enum In : int { kA, kAScale, kAZp, kB, kBScale, kBZp, kC, kYScale, kYZp };

enum Slot : int {
  kARows = 0,    // A' as 8-bit [M, K] (transA), or as int16 minus its zero point (own code)
  kBCols = 1,    // B' as int8 [K, N] (oneDNN), or as int16 minus its zero points (own code)
  kAcc = 2,      // int32 [M, N] (quantized output only: a float Y holds its own sums)
  kSums = 3,     // row sums of A', column sums of B', zero points per column
  kScratch = 4,  // the int8 primitive's scratchpad
  kScales = 5,   // the output multiplier per column (float32 [N])
};

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }
bool IsScalarLike(const Shape& s) { return s.NumElements() == 1 && s.rank() <= 1; }

const Tensor* OptionalInput(const KernelContext& ctx, int i) {
  return ctx.num_inputs() > i ? ctx.input(i) : nullptr;
}

int32_t Element8(const void* data, bool is_signed, int64_t i) {
  return is_signed ? static_cast<const int8_t*>(data)[i] : static_cast<const uint8_t*>(data)[i];
}

struct GemmShape {
  int64_t m = 0, k = 0, n = 0;
};

struct QGemmPlan {
  std::shared_ptr<const Int8MatMulPrimitive> primitive;
};

class QGemmKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<QGemmKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<QGemmKernel>(new QGemmKernel(info));
    // A constant B on the oneDNN path: B' as int8 (uint8 shifted by -128) and its column sums.
    const Tensor* cb = info.input(kB).constant;
    if (k->dnnl_ && cb != nullptr && Is8Bit(cb->dtype()) && cb->shape().rank() == 2 &&
        cb->NumElements() > 0) {
      const int64_t rows = cb->shape()[0], cols = cb->shape()[1];
      const int64_t kk = k->trans_b_ ? cols : rows, n = k->trans_b_ ? rows : cols;
      const bool u8 = cb->dtype() == DataType::kUint8;
      k->b8_.resize(cb->NumElements());
      k->b_col_sums_.assign(n, 0);
      for (int64_t r = 0; r < kk; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          const int64_t src = k->trans_b_ ? j * kk + r : r * n + j;
          const int32_t v = Element8(cb->raw_data(), !u8, src);
          k->b_col_sums_[j] += v;
          k->b8_[r * n + j] = static_cast<int8_t>(u8 ? v - 128 : v);
        }
      }
      k->constant_b_ = cb;
    }
    return k;
  }

  size_t PersistentBytes() const override {
    return b8_.size() + b_col_sums_.size() * sizeof(int32_t) +
           cache_.SumBytes([](const QGemmPlan& p) { return p.primitive->prepacked_bytes(); });
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (static_cast<int>(shapes.size()) <= kB) return {};
    absl::StatusOr<GemmShape> s = ShapeOf(shapes[kA], shapes[kB]);
    if (!s.ok()) return {};
    const std::optional<int64_t> mk = CheckedMul(s->m, s->k);
    const std::optional<int64_t> kn = CheckedMul(s->k, s->n);
    const std::optional<int64_t> mn = CheckedMul(s->m, s->n);
    if (!mk || !kn || !mn) return {};
    std::vector<engine::WorkspaceRequirement> ws = {
        {kScales, static_cast<size_t>(s->n) * sizeof(float)}};
    if (quantized_out_) ws.push_back({kAcc, static_cast<size_t>(*mn) * sizeof(int32_t)});
    if (UseDnnl(*s)) {
      absl::StatusOr<std::shared_ptr<const QGemmPlan>> plan = PlanFor(shapes[kA], shapes[kB], *s);
      if (!plan.ok()) return {};
      if (trans_a_) ws.push_back({kARows, static_cast<size_t>(*mk)});
      if (constant_b_ == nullptr) ws.push_back({kBCols, static_cast<size_t>(*kn)});
      ws.push_back({kSums, static_cast<size_t>(s->m + 2 * s->n) * sizeof(int32_t)});
      const size_t scratch = (*plan)->primitive->scratchpad_bytes();
      if (scratch != 0) ws.push_back({kScratch, scratch});
    } else {
      ws.push_back({kARows, static_cast<size_t>(*mk) * sizeof(int16_t)});
      ws.push_back({kBCols, static_cast<size_t>(*kn) * sizeof(int16_t)});
    }
    return ws;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, kA, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, kB, node_));
    for (const auto& [t, index] : {std::pair{a, kA}, std::pair{b, kB}}) {
      if (!Is8Bit(t->dtype())) {
        return node_.InvalidArgument(absl::StrCat("input ", index, " is ",
                                                  engine::DataTypeName(t->dtype()),
                                                  "; QGemm takes int8 or uint8"));
      }
    }
    INFERD_ASSIGN_OR_RETURN(const GemmShape s, ShapeOf(a->shape(), b->shape()));
    // Zero points: A's a scalar, B's a scalar or [N]; each of its operand's type.
    const Tensor* azp = OptionalInput(ctx, kAZp);
    const Tensor* bzp = OptionalInput(ctx, kBZp);
    if (azp != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckType(*azp, a->dtype(), kAZp, node_));
      if (!IsScalarLike(azp->shape())) {
        return node_.InvalidArgument(
            absl::StrCat("a_zero_point must be a scalar, got ", azp->shape().ToString()));
      }
    }
    if (bzp != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckType(*bzp, b->dtype(), kBZp, node_));
      if (!IsScalarLike(bzp->shape()) && bzp->shape() != Shape{s.n}) {
        return node_.InvalidArgument(absl::StrCat("b_zero_point ", bzp->shape().ToString(),
                                                  " must be a scalar or [N] = [", s.n, "]"));
      }
    }
    // Scales: the output's per column multiplier.
    INFERD_ASSIGN_OR_RETURN(const Tensor* as, RequiredInput(ctx, kAScale, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* bs, RequiredInput(ctx, kBScale, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*as, DataType::kFloat32, kAScale, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*bs, DataType::kFloat32, kBScale, node_));
    if (!IsScalarLike(as->shape())) {
      return node_.InvalidArgument(
          absl::StrCat("a_scale must be a scalar, got ", as->shape().ToString()));
    }
    const bool per_column = !IsScalarLike(bs->shape());
    if (per_column && bs->shape() != Shape{s.n}) {
      return node_.InvalidArgument(absl::StrCat("b_scale ", bs->shape().ToString(),
                                                " must be a scalar or [N] = [", s.n, "]"));
    }
    const Tensor* ys = OptionalInput(ctx, kYScale);
    const Tensor* yzp = OptionalInput(ctx, kYZp);
    DataType out_type = DataType::kFloat32;
    float y_scale = 1.0f;
    int32_t y_zp = 0;
    if ((ys != nullptr) != quantized_out_) {
      return node_.InvalidArgument("y_scale must be present in every run or in none");
    }
    if (ys != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckType(*ys, DataType::kFloat32, kYScale, node_));
      if (!IsScalarLike(ys->shape())) {
        return node_.InvalidArgument(
            absl::StrCat("y_scale must be a scalar, got ", ys->shape().ToString()));
      }
      // Y's type is the zero point's; without one uint8 with zero point 0, as QuantizeLinear.
      if (yzp != nullptr && (!Is8Bit(yzp->dtype()) || !IsScalarLike(yzp->shape()))) {
        return node_.InvalidArgument(
            absl::StrCat("y_zero_point must be an int8 or uint8 scalar, got ",
                         engine::DataTypeName(yzp->dtype()), " ", yzp->shape().ToString()));
      }
      y_scale = ys->data<float>()[0];
      y_zp = yzp == nullptr ? 0 : static_cast<int32_t>(IntegerAt(*yzp, 0));
      out_type = yzp == nullptr ? DataType::kUint8 : yzp->dtype();
    } else if (yzp != nullptr) {
      return node_.InvalidArgument("y_zero_point is given without y_scale");
    }
    const Tensor* c = OptionalInput(ctx, kC);
    if (c != nullptr) INFERD_RETURN_IF_ERROR(CheckBias(*c, s));

    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, out_type, Shape{s.m, s.n}));
    if (y->NumElements() == 0) return absl::OkStatus();
    int32_t* acc = nullptr;
    if (out_type == DataType::kFloat32) {
      acc = static_cast<int32_t*>(y->raw_mutable_data());  // the sums, converted in place
    } else {
      INFERD_ASSIGN_OR_RETURN(void* w, ctx.GetWorkspace(kAcc));
      acc = static_cast<int32_t*>(w);
    }
    const int32_t za = azp == nullptr ? 0 : static_cast<int32_t>(IntegerAt(*azp, 0));
    if (s.k == 0) {
      std::fill(acc, acc + y->NumElements(), 0);
    } else if (UseDnnl(s) && (a->dtype() == DataType::kInt8) == a_signed_ &&
               b->dtype() == b_type_) {
      INFERD_RETURN_IF_ERROR(MultiplyDnnl(ctx, *a, *b, za, bzp, s, acc));
    } else {
      INFERD_RETURN_IF_ERROR(Multiply(ctx, *a, *b, za, bzp, s, acc));
    }
    if (c != nullptr) AddBias(*c, s, acc);

    // The output, per column n: mul[n] = alpha * a_scale * b_scale[n] (/ y_scale).
    INFERD_ASSIGN_OR_RETURN(void* scales_ws, ctx.GetWorkspace(kScales));
    auto* mul = static_cast<float*>(scales_ws);
    const float a_scale = as->data<float>()[0];
    const float* b_scale = bs->data<float>();
    const int64_t n = s.n;
    for (int64_t j = 0; j < n; ++j) {
      mul[j] = alpha_ * a_scale * b_scale[per_column ? j : 0];
      if (ys != nullptr) mul[j] /= y_scale;
    }
    if (out_type == DataType::kFloat32) {
      // In place: each int32 sum is read once, then its float written over it.
      ctx.threads().ParallelFor(s.m, std::max<int64_t>(1, 16384 / n), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t j = 0; j < n; ++j) {
            int32_t* cell = acc + r * n + j;
            const float v = mul[j] * static_cast<float>(*cell);
            std::memcpy(cell, &v, sizeof(v));
          }
        }
      });
    } else if (out_type == DataType::kUint8) {
      Requantize(acc, s, mul, y_zp, ctx.threads(), y->mutable_data<uint8_t>());
    } else {
      Requantize(acc, s, mul, y_zp, ctx.threads(), y->mutable_data<int8_t>());
    }
    return absl::OkStatus();
  }

 private:
  explicit QGemmKernel(const KernelInfo& info)
      : node_(info),
        threads_(info.intra_op_threads()),
        alpha_(info.GetFloat("alpha", 1.0f)),
        trans_a_(info.GetInt("transA", 0) != 0),
        trans_b_(info.GetInt("transB", 0) != 0),
        quantized_out_(info.input_present(kYScale)),
        a_signed_(info.input(kA).type == DataType::kInt8),
        b_type_(info.input(kB).type),
        dnnl_(Int8MatMulPrimitive::Available() && Is8Bit(info.input(kA).type) && Is8Bit(b_type_)) {}

  bool UseDnnl(const GemmShape& s) const { return dnnl_ && s.m > 0 && s.n > 0 && s.k > 0; }

  absl::StatusOr<GemmShape> ShapeOf(const Shape& a, const Shape& b) const {
    if (a.rank() != 2 || b.rank() != 2) {
      return node_.InvalidArgument(
          absl::StrCat("A and B must be 2-D, got A ", a.ToString(), " and B ", b.ToString()));
    }
    GemmShape s;
    s.m = trans_a_ ? a[1] : a[0];
    s.k = trans_a_ ? a[0] : a[1];
    s.n = trans_b_ ? b[0] : b[1];
    const int64_t kb = trans_b_ ? b[1] : b[0];
    if (kb != s.k) {
      return node_.InvalidArgument(absl::StrCat("A ", a.ToString(), (trans_a_ ? " (transA)" : ""),
                                                " has K = ", s.k, " but B ", b.ToString(),
                                                (trans_b_ ? " (transB)" : ""), " has K = ", kb));
    }
    return s;
  }

  // C: int32, a scalar, [N], [1, N], [M, 1] or [M, N].
  absl::Status CheckBias(const Tensor& c, const GemmShape& s) const {
    INFERD_RETURN_IF_ERROR(CheckType(c, DataType::kInt32, kC, node_));
    const Shape& cs = c.shape();
    bool ok = cs.rank() <= 2;
    if (ok && cs.rank() >= 1) {
      const int64_t cols = cs[cs.rank() - 1], rows = cs.rank() == 2 ? cs[0] : 1;
      ok = (cols == 1 || cols == s.n) && (rows == 1 || rows == s.m);
    }
    if (!ok) {
      return node_.InvalidArgument(absl::StrCat(
          "C ", cs.ToString(), " does not broadcast to [M, N] = [", s.m, ", ", s.n, "]"));
    }
    return absl::OkStatus();
  }

  static void AddBias(const Tensor& c, const GemmShape& s, int32_t* acc) {
    const Shape& cs = c.shape();
    const int64_t cols = cs.rank() >= 1 ? cs[cs.rank() - 1] : 1;
    const int64_t rows = cs.rank() == 2 ? cs[0] : 1;
    const int32_t* bias = c.data<int32_t>();
    auto* y = reinterpret_cast<uint32_t*>(acc);  // wrapping, as the sums
    for (int64_t r = 0; r < s.m; ++r) {
      const int32_t* br = bias + (rows == 1 ? 0 : r * cols);
      uint32_t* yr = y + r * s.n;
      for (int64_t j = 0; j < s.n; ++j) yr[j] += static_cast<uint32_t>(br[cols == 1 ? 0 : j]);
    }
  }

  template <typename Q>
  static void Requantize(const int32_t* acc, const GemmShape& s, const float* mul, int32_t y_zp,
                         engine::ThreadPool& pool, Q* dst) {
    constexpr float lo = static_cast<float>(std::numeric_limits<Q>::min());
    constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
    const float zp = static_cast<float>(y_zp);
    const int64_t n = s.n;
    pool.ParallelFor(s.m, std::max<int64_t>(1, 16384 / n), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          float v = std::nearbyint(static_cast<float>(acc[r * n + j]) * mul[j]) + zp;
          v = v > hi ? hi : v;
          v = v >= lo ? v : lo;
          dst[r * n + j] = static_cast<Q>(v);
        }
      }
    });
  }

  absl::StatusOr<std::shared_ptr<const QGemmPlan>> PlanFor(const Shape& a, const Shape& b,
                                                           const GemmShape& s) const {
    const Shape* shapes[] = {&a, &b};
    return cache_.GetOrCreate(
        ShapeRefs(shapes, 2), threads_, [&]() -> absl::StatusOr<std::shared_ptr<const QGemmPlan>> {
          Int8MatMulSpec spec;
          spec.m = s.m, spec.k = s.k, spec.n = s.n;
          spec.a_signed = a_signed_;
          if (constant_b_ != nullptr) spec.constant_b = b8_.data();
          auto plan = std::make_shared<QGemmPlan>();
          INFERD_ASSIGN_OR_RETURN(plan->primitive,
                                  Int8MatMulPrimitive::Build(spec, threads_, node_));
          return std::shared_ptr<const QGemmPlan>(std::move(plan));
        });
  }

  // oneDNN: P = A' x B8 (B8 = B' - 128 for uint8 B), then per element
  //   acc = P + (c - zb[n]) * R[m] - za * S[n] + K * za * zb[n]
  // (c = 128 for uint8 B, else 0; R the row sums of A', S the column sums of B'), in wrapping
  // 32-bit arithmetic: exactly the sum of (a - za) * (b - zb[n]).
  absl::Status MultiplyDnnl(KernelContext& ctx, const Tensor& a, const Tensor& b, int32_t za,
                            const Tensor* bzp, const GemmShape& s, int32_t* out) const {
    INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const QGemmPlan> plan,
                            PlanFor(a.shape(), b.shape(), s));
    const int64_t m = s.m, k = s.k, n = s.n;
    const bool a_signed = a.dtype() == DataType::kInt8;
    const bool b_u8 = b.dtype() == DataType::kUint8;
    engine::ThreadPool& pool = ctx.threads();
    INFERD_ASSIGN_OR_RETURN(void* sums_ws, ctx.GetWorkspace(kSums));
    auto* row_sum = static_cast<int32_t*>(sums_ws);
    int32_t* col_sum = row_sum + m;
    int32_t* zb = col_sum + n;
    // A' rows (transposed into the workspace for transA).
    const void* a_rows = a.raw_data();
    if (trans_a_) {
      INFERD_ASSIGN_OR_RETURN(void* w, ctx.GetWorkspace(kARows));
      const auto* src = static_cast<const uint8_t*>(a.raw_data());  // bytes: [K, M]
      auto* dst = static_cast<uint8_t*>(w);
      pool.ParallelFor(m, std::max<int64_t>(1, 16384 / k), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t i = 0; i < k; ++i) dst[r * k + i] = src[i * m + r];
        }
      });
      a_rows = dst;
    }
    // B' as int8 [K, N] and its column sums.
    const int8_t* b8 = nullptr;
    if (constant_b_ != nullptr) {
      b8 = b8_.data();
      std::copy(b_col_sums_.begin(), b_col_sums_.end(), col_sum);
    } else {
      INFERD_ASSIGN_OR_RETURN(void* w, ctx.GetWorkspace(kBCols));
      auto* dst = static_cast<int8_t*>(w);
      std::fill(col_sum, col_sum + n, 0);
      for (int64_t r = 0; r < k; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          const int32_t v = Element8(b.raw_data(), !b_u8, trans_b_ ? j * k + r : r * n + j);
          col_sum[j] += v;
          dst[r * n + j] = static_cast<int8_t>(b_u8 ? v - 128 : v);
        }
      }
      b8 = dst;
    }
    void* scratch = nullptr;
    if (plan->primitive->scratchpad_bytes() != 0) {
      INFERD_ASSIGN_OR_RETURN(scratch, ctx.GetWorkspace(kScratch));
    }
    INFERD_RETURN_IF_ERROR(plan->primitive->Execute(pool, a_rows, b8, out, scratch, node_));
    const uint32_t c = b_u8 ? 128u : 0u;
    for (int64_t r = 0; r < m; ++r) {
      int32_t sum = 0;
      for (int64_t i = 0; i < k; ++i) sum += Element8(a_rows, a_signed, r * k + i);
      row_sum[r] = sum;
    }
    for (int64_t j = 0; j < n; ++j) {
      zb[j] = bzp == nullptr
                  ? 0
                  : static_cast<int32_t>(IntegerAt(*bzp, IsScalarLike(bzp->shape()) ? 0 : j));
    }
    const uint32_t kk = static_cast<uint32_t>(k), z = static_cast<uint32_t>(za);
    pool.ParallelFor(m, std::max<int64_t>(1, 16384 / n), [&](int64_t r0, int64_t r1) {
      const auto* sc = reinterpret_cast<const uint32_t*>(col_sum);
      const auto* zc = reinterpret_cast<const uint32_t*>(zb);
      for (int64_t r = r0; r < r1; ++r) {
        const uint32_t rs = static_cast<uint32_t>(row_sum[r]);
        auto* y = reinterpret_cast<uint32_t*>(out + r * n);
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) y[j] += (c - zc[j]) * rs - z * sc[j] + kk * z * zc[j];
      }
    });
    return absl::OkStatus();
  }

  // Own code: A' and B' widened to int16 with their zero points subtracted (|v| <= 255), then
  // each output row accumulated over K in wrapping 32-bit sums.
  absl::Status Multiply(KernelContext& ctx, const Tensor& a, const Tensor& b, int32_t za,
                        const Tensor* bzp, const GemmShape& s, int32_t* out) const {
    const int64_t m = s.m, k = s.k, n = s.n;
    INFERD_ASSIGN_OR_RETURN(void* aw, ctx.GetWorkspace(kARows));
    INFERD_ASSIGN_OR_RETURN(void* bw, ctx.GetWorkspace(kBCols));
    auto* a16 = static_cast<int16_t*>(aw);
    auto* b16 = static_cast<int16_t*>(bw);
    const bool a_signed = a.dtype() == DataType::kInt8;
    const bool b_signed = b.dtype() == DataType::kInt8;
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t i = 0; i < k; ++i) {
        const int32_t v = Element8(a.raw_data(), a_signed, trans_a_ ? i * m + r : r * k + i);
        a16[r * k + i] = static_cast<int16_t>(v - za);
      }
    }
    const bool b_scalar = bzp == nullptr || IsScalarLike(bzp->shape());
    for (int64_t r = 0; r < k; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        const int32_t v = Element8(b.raw_data(), b_signed, trans_b_ ? j * k + r : r * n + j);
        const int64_t zj = bzp == nullptr ? 0 : IntegerAt(*bzp, b_scalar ? 0 : j);
        b16[r * n + j] = static_cast<int16_t>(v - zj);
      }
    }
    ctx.threads().ParallelFor(m, std::max<int64_t>(1, 4096 / (k * n + 1)),
                              [&](int64_t r0, int64_t r1) {
                                for (int64_t r = r0; r < r1; ++r) {
                                  auto* y = reinterpret_cast<uint32_t*>(out + r * n);
                                  std::fill(y, y + n, 0u);
                                  for (int64_t i = 0; i < k; ++i) {
                                    const int32_t av = a16[r * k + i];
                                    if (av == 0) continue;
                                    const int16_t* brow = b16 + i * n;
#pragma omp simd
                                    for (int64_t j = 0; j < n; ++j)
                                      y[j] += static_cast<uint32_t>(av * brow[j]);
                                  }
                                }
                              });
    return absl::OkStatus();
  }

  const NodeLabel node_;
  const int threads_;
  const float alpha_;
  const bool trans_a_, trans_b_;
  const bool quantized_out_;  // y_scale is given: Y is 8-bit (else float32)
  const bool a_signed_;       // A's type at load is int8
  const DataType b_type_;     // B's type at load
  const bool dnnl_;           // the oneDNN path is open (VNNI, 8-bit types known at load)
  // Set at creation when B is constant and dnnl_: B' as int8 [K, N], its column sums [N].
  const Tensor* constant_b_ = nullptr;
  std::vector<int8_t> b8_;
  std::vector<int32_t> b_col_sums_;
  mutable ShapeCache<QGemmPlan> cache_;
};

}  // namespace

std::vector<engine::KernelDef> QGemmKernelDefs() {
  return {CpuDef(engine::kMicrosoftDomain, "QGemm", 1, 1, {DataType::kUint8, DataType::kInt8},
                 FactoryOf<QGemmKernel>())};
}

}  // namespace inferd::kernels::cpu
