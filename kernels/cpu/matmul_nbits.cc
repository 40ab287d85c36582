// com.microsoft MatMulNBits (ONNX Runtime's contrib op, written by its quantizer and by the
// onnxruntime-genai model builder for int4 weights): Y = A x dequant(B)^T (+ bias), float32.
//
//   A [..., K]; B uint8 [N, k_blocks, block_size / 2] (two 4-bit values a byte, the low nibble
//   first); scales float [N * k_blocks] (or [N, k_blocks]); zero_points optional: uint8 packed
//   two a byte ([N * ceil(k_blocks / 2)]) or float [N * k_blocks]; absent means 8. An element
//   is (q - zero_point) * scale. K need not be a multiple of block_size (the last block is
//   padded in B). accuracy_level 4 with constant B (and no float zero points) takes the int8
//   path (nbits_int8.h) at every M, as ONNX Runtime does (a prompt's rows 4 at a time); other
//   levels compute in float32.
//   bits other than 4 and g_idx (act-order) are refused at creation.
//
// Float paths (docs/genai-ops.md):
//   - M <= kDecodeRows (token-by-token decode): each column is dequantized on the fly and dotted
//     with A's rows (nbits_float.h: AVX-512 where the CPU has it, else AVX2 + FMA); the intra-op
//     pool splits N.
//   - larger M (prefill): panels of kPanel columns, each dequantized into a float32 workspace
//     and multiplied by a one-thread oneDNN sgemm, the intra-op threads taking panels in turn.
// The level-4 int8 path is nbits_int8.h.
// Workspaces are declared (block sums or the panel), so a warmed-up run allocates nothing.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "dnnl.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/nbits.h"
#include "kernels/cpu/nbits_float.h"
#include "kernels/cpu/nbits_int8.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;
using nbits::Int8Isa;

using nbits::kDecodeRows;
using nbits::Quant;

constexpr int64_t kPanel = 128;  // columns dequantized at a time on the GEMM path
constexpr int kDecodeSlot = 0;   // workspace slots: the float decode path's
constexpr int kPanelSlot = 1;
constexpr int kQuantASlot = 2;  // level 4: A's scales, scaled sums and int8 rows

class MatMulNBitsKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<MatMulNBitsKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(const int64_t k, info.RequireInt("K"));
    INFERD_ASSIGN_OR_RETURN(const int64_t n, info.RequireInt("N"));
    INFERD_ASSIGN_OR_RETURN(const int64_t block, info.RequireInt("block_size"));
    const int64_t bits = info.GetInt("bits", 4);
    if (bits != 4) {
      return info.Error(absl::StrCat("bits=", bits, " is not supported (only 4-bit weights)"));
    }
    if (k < 1 || n < 1 || k > (int64_t{1} << 31) || n > (int64_t{1} << 31)) {
      return info.Error(absl::StrCat("K and N must be in [1, 2^31], got K=", k, " N=", n));
    }
    if (block < 16 || block > 2048 || (block & (block - 1)) != 0) {
      return info.Error(absl::StrCat("block_size must be a power of two >= 16, got ", block));
    }
    if (info.input_present(4)) {
      return info.Error("g_idx (act-order group indices) is not supported");
    }
    for (int i : {0, 2, 5}) {
      const DataType t = info.input(i).type;
      if (info.input_present(i) && t != DataType::kUndefined && t != DataType::kFloat32) {
        return info.Error("only float32 A, scales and bias are supported");
      }
    }
    auto kernel = std::unique_ptr<MatMulNBitsKernel>(new MatMulNBitsKernel(info, k, n, block));
    // accuracy_level 4 with constant weights: int8 decode path, B repacked now.
    const Tensor* b = info.input_present(1) ? info.input(1).constant : nullptr;
    const int64_t blocks = (k + block - 1) / block;
    // Float zero points keep the float path, as in ONNX Runtime.
    const bool uint8_zp = !info.input_present(3) || info.input(3).type == DataType::kUint8;
    if (info.GetInt("accuracy_level", 0) == 4 && uint8_zp && b != nullptr &&
        b->dtype() == DataType::kUint8 && b->NumElements() == n * blocks * (block / 2)) {
      kernel->int8_ = true;
      kernel->isa_ = nbits::PickInt8Isa();
      // The SIMD paths need the scales and zero points too (repacked with B).
      const Tensor* scales = info.input(2).constant;
      const Tensor* zp = info.input_present(3) ? info.input(3).constant : nullptr;
      Quant q;
      q.b = b->data<uint8_t>();
      q.k = k;
      q.n = n;
      q.block = block;
      q.blocks = blocks;
      q.blob = block / 2;
      q.zp_row = (blocks + 1) / 2;
      const bool zp_ok =
          !info.input_present(3) ||
          (zp != nullptr && zp->dtype() == DataType::kUint8 && zp->NumElements() == n * q.zp_row);
      if (kernel->isa_ != Int8Isa::kScalar && scales != nullptr &&
          scales->dtype() == DataType::kFloat32 && scales->NumElements() == n * blocks && zp_ok) {
        q.scales = scales->data<float>();
        q.zp_packed = zp != nullptr ? zp->data<uint8_t>() : nullptr;
        kernel->packed_ = nbits::PackForInt8(q);
      } else {
        kernel->isa_ = Int8Isa::kScalar;
      }
    }
    return kernel;
  }

  size_t PersistentBytes() const override {
    return packed_.b.size() + (packed_.bs.size() + packed_.zs.size()) * sizeof(float);
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (shapes.empty() || shapes[0].rank() < 1) return {};
    const int64_t m = shapes[0].SizeBetween(0, shapes[0].rank() - 1);
    if (m <= 0) return {};
    if (int8_) {
      const int64_t bytes = m * blocks_ * (2 * sizeof(float) + block_);
      return {{kQuantASlot, static_cast<size_t>(bytes)}};
    }
    if (m <= kDecodeRows) {
      return {{kDecodeSlot,
               static_cast<size_t>(nbits::DecodeWorkspaceFloats(m, k_, blocks_)) * sizeof(float)}};
    }
    const int64_t buffers = std::min(panel_buffers_, (n_ + kPanel - 1) / kPanel);
    return {{kPanelSlot, static_cast<size_t>(buffers * std::min(n_, kPanel) * k_) * sizeof(float)}};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* scales, RequiredInput(ctx, 2, node_));
    const Tensor* zp = ctx.num_inputs() > 3 ? ctx.input(3) : nullptr;
    const Tensor* bias = ctx.num_inputs() > 5 ? ctx.input(5) : nullptr;
    if (ctx.num_inputs() > 4 && ctx.input(4) != nullptr) {
      return node_.Unimplemented("g_idx is not supported");
    }
    INFERD_RETURN_IF_ERROR(CheckType(*a, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*b, DataType::kUint8, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*scales, DataType::kFloat32, 2, node_));
    const Shape& as = a->shape();
    if (as.rank() < 1 || as[as.rank() - 1] != k_) {
      return node_.InvalidArgument(
          absl::StrCat("A must be [..., K=", k_, "], got ", as.ToString()));
    }
    const int64_t blob = block_ / 2;
    if (b->shape() != Shape{n_, blocks_, blob}) {
      return node_.InvalidArgument(absl::StrCat("B must be [N, k_blocks, block_size / 2] = [", n_,
                                                ", ", blocks_, ", ", blob, "], got ",
                                                b->shape().ToString()));
    }
    if (scales->NumElements() != n_ * blocks_) {
      return node_.InvalidArgument(absl::StrCat("scales must have N * k_blocks = ", n_ * blocks_,
                                                " values, got ", scales->shape().ToString()));
    }
    Quant q;
    q.b = b->data<uint8_t>();
    q.scales = scales->data<float>();
    q.k = k_;
    q.n = n_;
    q.block = block_;
    q.blocks = blocks_;
    q.blob = blob;
    q.zp_row = (blocks_ + 1) / 2;
    if (zp != nullptr) {
      if (zp->dtype() == DataType::kUint8) {
        if (zp->NumElements() != n_ * q.zp_row) {
          return node_.InvalidArgument(absl::StrCat("packed uint8 zero_points must have N * ",
                                                    "ceil(k_blocks / 2) = ", n_ * q.zp_row,
                                                    " values, got ", zp->shape().ToString()));
        }
        q.zp_packed = zp->data<uint8_t>();
      } else if (zp->dtype() == DataType::kFloat32) {
        if (zp->NumElements() != n_ * blocks_) {
          return node_.InvalidArgument(
              absl::StrCat("float zero_points must have N * k_blocks = ", n_ * blocks_,
                           " values, got ", zp->shape().ToString()));
        }
        q.zp_float = zp->data<float>();
      } else {
        return node_.InvalidArgument("zero_points must be uint8 (packed) or float32");
      }
    }
    if (bias != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckType(*bias, DataType::kFloat32, 5, node_));
      if (bias->NumElements() != n_) {
        return node_.InvalidArgument(absl::StrCat("bias must have N = ", n_, " values"));
      }
    }
    Shape out_shape = as;
    out_shape[as.rank() - 1] = n_;
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, out_shape));
    const int64_t m = as.SizeBetween(0, as.rank() - 1);
    if (m == 0) return absl::OkStatus();
    const float* av = a->data<float>();
    float* yv = y->mutable_data<float>();
    if (int8_) {
      if (q.zp_float != nullptr) {
        return node_.InvalidArgument("zero_points were declared uint8 but are float32");
      }
      INFERD_ASSIGN_OR_RETURN(void* ws, ctx.GetWorkspace(kQuantASlot));
      float* scale = static_cast<float*>(ws);
      float* scaled_sum = scale + m * blocks_;
      int8_t* qa = reinterpret_cast<int8_t*>(scaled_sum + m * blocks_);
      const int64_t row = blocks_ * block_;
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t blk = 0; blk < blocks_; ++blk) {
          const int64_t k0 = blk * block_, len = std::min(block_, k_ - k0);
          float* sc = scale + r * blocks_ + blk;
          const int32_t sum =
              nbits::QuantizeBlock(av + r * k_ + k0, len, block_, qa + r * row + k0, sc);
          scaled_sum[r * blocks_ + blk] = *sc * static_cast<float>(sum);
        }
      }
      // Rows in groups of kDecodeRows (a prompt's rows read B once a group); the pool splits
      // (row group, groups of 8 columns (SIMD) or columns (scalar)) pairs, 64K weights or more a
      // task.
      const bool groups = isa_ != Int8Isa::kScalar;
      const int64_t units = groups ? (n_ + nbits::kGroupCols - 1) / nbits::kGroupCols : n_;
      const int64_t row_groups = (m + kDecodeRows - 1) / kDecodeRows;
      const int64_t chunk = std::max<int64_t>(4, 65536 / (k_ * (groups ? nbits::kGroupCols : 1)));
      ctx.threads().ParallelFor(row_groups * units, chunk, [&](int64_t begin, int64_t end) {
        while (begin < end) {
          const int64_t g = begin / units, u0 = begin % units;
          const int64_t u1 = std::min(units, u0 + (end - begin));
          const int64_t r0 = g * kDecodeRows;
          nbits::Int8Args p;
          p.q = &q;
          p.packed = packed_.b.data();
          p.bs = packed_.bs.data();
          p.zs = packed_.zs.data();
          p.a = nbits::QuantA{qa + r0 * row, scale + r0 * blocks_, scaled_sum + r0 * blocks_, row};
          p.y = yv + r0 * n_;
          p.m = std::min(kDecodeRows, m - r0);
          nbits::Int8Run(isa_, p, u0, u1);
          begin += u1 - u0;
        }
      });
    } else if (m <= kDecodeRows) {
      INFERD_ASSIGN_OR_RETURN(void* ws, ctx.GetWorkspace(kDecodeSlot));
      const nbits::FloatDecode d =
          nbits::PrepareDecode(float_isa_, q, av, m, static_cast<float*>(ws), yv);
      const int64_t chunk = std::max<int64_t>(4, 65536 / k_);
      ctx.threads().ParallelFor(
          n_, chunk, [&](int64_t begin, int64_t end) { nbits::DecodeColumns(d, begin, end); });
    } else {
      // Each intra-op thread takes whole panels (the next one free), dequantizes it into its
      // own buffer and multiplies it with a one-thread sgemm. (Dequantizing on the pool and
      // then calling sgemm with OpenMP's own threads left the pool's workers spinning beside
      // OpenMP's: 2 threads were slower than 1.)
      INFERD_ASSIGN_OR_RETURN(void* ws, ctx.GetWorkspace(kPanelSlot));
      float* panels = static_cast<float*>(ws);
      const int64_t count = (n_ + kPanel - 1) / kPanel;
      const int64_t workers =
          std::min<int64_t>({ctx.threads().num_threads(), panel_buffers_, count});
      const int64_t stride = std::min(n_, kPanel) * k_;
      std::atomic<int64_t> next{0};
      std::atomic<int> failed{static_cast<int>(dnnl_success)};
      ctx.threads().ParallelFor(workers, 1, [&](int64_t begin, int64_t end) {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(1);
        for (int64_t t = begin; t < end; ++t) {
          float* panel = panels + t * stride;
          for (int64_t i; (i = next.fetch_add(1)) < count;) {
            const int64_t n0 = i * kPanel, nb = std::min(kPanel, n_ - n0);
            for (int64_t c = 0; c < nb; ++c)
              nbits::DequantizeColumn(float_isa_, q, n0 + c, panel + c * k_);
            const dnnl_status_t s =
                dnnl_sgemm('N', 'T', m, nb, k_, 1.0f, av, k_, panel, k_, 0.0f, yv + n0, n_);
            if (s != dnnl_success) failed.store(static_cast<int>(s));
          }
        }
        omp_set_num_threads(saved);
      });
      if (failed.load() != static_cast<int>(dnnl_success)) {
        return node_.Internal(absl::StrCat("dnnl_sgemm failed with status ", failed.load()));
      }
    }
    if (bias != nullptr) {
      const float* bv = bias->data<float>();
      for (int64_t r = 0; r < m; ++r) {
        float* yr = yv + r * n_;
#pragma omp simd
        for (int64_t c = 0; c < n_; ++c) yr[c] += bv[c];
      }
    }
    return absl::OkStatus();
  }

 private:
  MatMulNBitsKernel(const KernelInfo& info, int64_t k, int64_t n, int64_t block)
      : node_(info),
        k_(k),
        n_(n),
        block_(block),
        blocks_((k + block - 1) / block),
        panel_buffers_(std::max(1, info.intra_op_threads())),
        float_isa_(nbits::PickFloatIsa(k, block)) {}

  const NodeLabel node_;
  const int64_t k_, n_, block_, blocks_;
  const int64_t panel_buffers_;      // prefill panels in flight: one per intra-op thread
  const nbits::FloatIsa float_isa_;  // the float decode path's form
  // Level 4 (set once at creation).
  bool int8_ = false;
  Int8Isa isa_ = Int8Isa::kScalar;
  nbits::PackedInt8 packed_;  // for the SIMD paths (empty on the scalar one)
};

}  // namespace

std::vector<engine::KernelDef> MatMulNBitsKernelDefs() {
  return {CpuDef(engine::kMicrosoftDomain, "MatMulNBits", 1, kMaxOpset, {DataType::kFloat32},
                 FactoryOf<MatMulNBitsKernel>())};
}

}  // namespace inferd::kernels::cpu
