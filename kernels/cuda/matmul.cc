// MatMul (opsets 1+) and Gemm (opsets 7+) on cuBLAS, float32. Row-major products are computed as
// their column-major transposes: Y^T = B^T * A^T, so no operand is copied or transposed.
//   MatMul: numpy semantics (1-D operands promoted and the added dimension removed, batch
//     dimensions broadcast). A batch of B that is one matrix folds A's batch into M (one GEMM);
//     batches of the same shape, or of one matrix on either side, are one strided-batched GEMM;
//     other broadcasts run one GEMM per output matrix.
//   Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast to [M, N] (gemm_bias.cu writes
//     beta * C into Y first, then cuBLAS accumulates onto it).
// cuBLAS's default math mode: full float32, no TF32.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"
#include "engine/cuda_kernel_context.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cuda/cublas_handle.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// cuBLAS takes dimensions as int.
absl::Status CheckInt(absl::string_view node, std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) {
    if (d > std::numeric_limits<int>::max()) {
      return absl::UnimplementedError(
          absl::StrCat("node '", node, "': dimension ", d, " exceeds cuBLAS's int range"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckFloat(absl::string_view node, const Tensor& t, int input) {
  if (t.dtype() != DataType::kFloat32) {
    return absl::UnimplementedError(absl::StrCat("node '", node, "': input ", input, " is ",
                                                 engine::DataTypeName(t.dtype()),
                                                 "; the CUDA kernel is float32 only"));
  }
  return absl::OkStatus();
}

// Row-major y[m x n] = alpha * a[m x k] * b[k x n] + beta * y, `batch` times with the given
// element strides (0: the same matrix for every batch).
absl::Status Gemm(cublasHandle_t h, int64_t batch, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, int64_t stride_a, const float* b, int64_t stride_b, float beta,
                  float* y, absl::string_view node) {
  INFERD_RETURN_IF_ERROR(CheckInt(node, {batch, m, n, k}));
  if (batch == 1) {
    return CublasStatus(
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                    static_cast<int>(k), &alpha, b, static_cast<int>(n), a, static_cast<int>(k),
                    &beta, y, static_cast<int>(n)),
        absl::StrCat("node '", node, "': cublasSgemm"));
  }
  return CublasStatus(
      cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n),
                                static_cast<int>(m), static_cast<int>(k), &alpha, b,
                                static_cast<int>(n), stride_b, a, static_cast<int>(k), stride_a,
                                &beta, y, static_cast<int>(n), m * n, static_cast<int>(batch)),
      absl::StrCat("node '", node, "': cublasSgemmStridedBatched"));
}

class MatMulKernel final : public engine::OpKernel {
 public:
  explicit MatMulKernel(const KernelInfo& info) : node_(info.node_name()) {}

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda,
                            engine::CudaContextOf(ctx, node_));
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (a == nullptr || b == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("node '", node_, "': needs two inputs"));
    }
    INFERD_RETURN_IF_ERROR(CheckFloat(node_, *a, 0));
    INFERD_RETURN_IF_ERROR(CheckFloat(node_, *b, 1));
    const Shape& sa = a->shape();
    const Shape& sb = b->shape();
    if (sa.rank() == 0 || sb.rank() == 0) {
      return absl::InvalidArgumentError(absl::StrCat("node '", node_, "': MatMul of a scalar"));
    }

    // pass 1: promote 1-D operands; M, K, N; broadcast the batch dimensions.
    std::vector<int64_t> da(sa.dims().begin(), sa.dims().end());
    std::vector<int64_t> db(sb.dims().begin(), sb.dims().end());
    if (sa.rank() == 1) da.insert(da.begin(), 1);
    if (sb.rank() == 1) db.push_back(1);
    const int64_t m = da[da.size() - 2], k = da.back(), n = db.back();
    if (db[db.size() - 2] != k) {
      return absl::InvalidArgumentError(absl::StrCat("node '", node_, "': shapes ", sa.ToString(),
                                                     " and ", sb.ToString(),
                                                     " do not multiply (inner dimensions differ)"));
    }
    const std::vector<int64_t> ba(da.begin(), da.end() - 2), bb(db.begin(), db.end() - 2);
    const size_t batch_rank = std::max(ba.size(), bb.size());
    std::vector<int64_t> pa(batch_rank, 1), pb(batch_rank, 1), batch(batch_rank, 1);
    std::copy(ba.begin(), ba.end(), pa.begin() + (batch_rank - ba.size()));
    std::copy(bb.begin(), bb.end(), pb.begin() + (batch_rank - bb.size()));
    for (size_t d = 0; d < batch_rank; ++d) {
      if (pa[d] != pb[d] && pa[d] != 1 && pb[d] != 1) {
        return absl::InvalidArgumentError(absl::StrCat("node '", node_, "': batch dimensions of ",
                                                       sa.ToString(), " and ", sb.ToString(),
                                                       " do not broadcast"));
      }
      batch[d] = pa[d] == 1 ? pb[d] : pa[d];
    }
    Shape out_shape(absl::MakeConstSpan(batch));
    if (sa.rank() > 1) out_shape.push_back(m);
    if (sb.rank() > 1) out_shape.push_back(n);
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    float* out = y->mutable_data<float>();
    if (k == 0) {
      return CudaStatus(cudaMemsetAsync(out, 0, y->bytes(), cuda->cuda_stream()),
                        absl::StrCat("node '", node_, "': cudaMemsetAsync"));
    }

    // pass 2: the fewest GEMM calls for this batch layout.
    INFERD_ASSIGN_OR_RETURN(cublasHandle_t h,
                            CublasHandleFor(cuda->cuda_device(), cuda->cuda_stream()));
    int64_t count = 1, count_a = 1, count_b = 1;
    for (size_t d = 0; d < batch_rank; ++d) {
      count *= batch[d];
      count_a *= pa[d];
      count_b *= pb[d];
    }
    const float* A = a->data<float>();
    const float* B = b->data<float>();
    if (count_b == 1) {  // one B: A's batch is more rows
      return Gemm(h, 1, count * m, n, k, 1.0f, A, 0, B, 0, 0.0f, out, node_);
    }
    if ((count_a == count || count_a == 1) && (count_b == count)) {
      return Gemm(h, count, m, n, k, 1.0f, A, count_a == 1 ? 0 : m * k, B, k * n, 0.0f, out, node_);
    }
    // pass 3: a general broadcast: one GEMM per output matrix.
    for (int64_t i = 0; i < count; ++i) {
      int64_t rest = i, ia = 0, ib = 0, step_a = 1, step_b = 1;
      for (size_t d = batch_rank; d-- > 0;) {
        const int64_t c = rest % batch[d];
        rest /= batch[d];
        ia += (pa[d] == 1 ? 0 : c) * step_a;
        ib += (pb[d] == 1 ? 0 : c) * step_b;
        step_a *= pa[d];
        step_b *= pb[d];
      }
      INFERD_RETURN_IF_ERROR(Gemm(h, 1, m, n, k, 1.0f, A + ia * m * k, 0, B + ib * k * n, 0, 0.0f,
                                  out + i * m * n, node_));
    }
    return absl::OkStatus();
  }

 private:
  const std::string node_;
};

class GemmKernel final : public engine::OpKernel {
 public:
  explicit GemmKernel(const KernelInfo& info)
      : node_(info.node_name()),
        trans_a_(info.GetInt("transA", 0) != 0),
        trans_b_(info.GetInt("transB", 0) != 0),
        alpha_(info.GetFloat("alpha", 1.0f)),
        beta_(info.GetFloat("beta", 1.0f)) {}

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda,
                            engine::CudaContextOf(ctx, node_));
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    const Tensor* c = ctx.num_inputs() > 2 ? ctx.input(2) : nullptr;
    if (a == nullptr || b == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("node '", node_, "': needs A and B"));
    }
    INFERD_RETURN_IF_ERROR(CheckFloat(node_, *a, 0));
    INFERD_RETURN_IF_ERROR(CheckFloat(node_, *b, 1));
    if (c != nullptr) INFERD_RETURN_IF_ERROR(CheckFloat(node_, *c, 2));
    if (a->shape().rank() != 2 || b->shape().rank() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("node '", node_, "': A ",
                                                     a->shape().ToString(), " and B ",
                                                     b->shape().ToString(), " must be 2-D"));
    }
    const int64_t m = trans_a_ ? a->shape()[1] : a->shape()[0];
    const int64_t k = trans_a_ ? a->shape()[0] : a->shape()[1];
    const int64_t kb = trans_b_ ? b->shape()[1] : b->shape()[0];
    const int64_t n = trans_b_ ? b->shape()[0] : b->shape()[1];
    if (k != kb) {
      return absl::InvalidArgumentError(absl::StrCat("node '", node_, "': op(A) is [", m, ",", k,
                                                     "] and op(B) is [", kb, ",", n, "]"));
    }
    // C broadcast to [M, N]: its element strides along rows and columns.
    int64_t row_stride = 0, col_stride = 0;
    if (c != nullptr) {
      const Shape& sc = c->shape();
      if (sc.rank() > 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", node_, "': C ", sc.ToString(), " has rank above 2"));
      }
      const int64_t cr = sc.rank() == 2 ? sc[0] : 1;
      const int64_t cc = sc.rank() >= 1 ? sc[sc.rank() - 1] : 1;
      if ((cr != 1 && cr != m) || (cc != 1 && cc != n)) {
        return absl::InvalidArgumentError(absl::StrCat("node '", node_, "': C ", sc.ToString(),
                                                       " does not broadcast to [", m, ",", n, "]"));
      }
      row_stride = cr == 1 ? 0 : cc;
      col_stride = cc == 1 ? 0 : 1;
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, Shape{m, n}));
    if (y->NumElements() == 0) return absl::OkStatus();
    float* out = y->mutable_data<float>();
    const cudaStream_t stream = cuda->cuda_stream();
    const bool bias = c != nullptr && beta_ != 0.0f;
    if (bias) {
      INFERD_RETURN_IF_ERROR(CudaStatus(
          LaunchBroadcastBias(c->data<float>(), row_stride, col_stride, beta_, out, m, n, stream),
          absl::StrCat("node '", node_, "': C")));
    } else if (k == 0) {
      return CudaStatus(cudaMemsetAsync(out, 0, y->bytes(), stream),
                        absl::StrCat("node '", node_, "': cudaMemsetAsync"));
    }
    if (k == 0) return absl::OkStatus();

    INFERD_RETURN_IF_ERROR(CheckInt(node_, {m, n, k}));
    INFERD_ASSIGN_OR_RETURN(cublasHandle_t h, CublasHandleFor(cuda->cuda_device(), stream));
    // Column-major: Y^T [n x m] = op(B)^T [n x k] * op(A)^T [k x m]. B stored row-major is B^T
    // column-major (leading dimension its row length), and likewise A.
    const float beta = bias ? 1.0f : 0.0f;
    const int lda = static_cast<int>(trans_a_ ? m : k);
    const int ldb = static_cast<int>(trans_b_ ? k : n);
    return CublasStatus(
        cublasSgemm(h, trans_b_ ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a_ ? CUBLAS_OP_T : CUBLAS_OP_N,
                    static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha_,
                    b->data<float>(), ldb, a->data<float>(), lda, &beta, out, static_cast<int>(n)),
        absl::StrCat("node '", node_, "': cublasSgemm"));
  }

 private:
  const std::string node_;
  const bool trans_a_, trans_b_;
  const float alpha_, beta_;
};

engine::KernelDef Def(const char* op_type, int since, engine::KernelFactory create) {
  engine::KernelDef def;
  def.domain = engine::kOnnxDomain;
  def.op_type = op_type;
  def.since_version = since;
  def.end_version = kMaxOpset;
  def.device_type = engine::DeviceKind::kCuda;
  def.types = {DataType::kFloat32};
  def.create = std::move(create);
  // No arena workspace: cuBLAS keeps its own with each handle (cublas_handle.h).
  def.estimate_workspace = [](const KernelInfo&) -> absl::StatusOr<size_t> { return 0; };
  return def;
}

}  // namespace

std::vector<engine::KernelDef> MatMulKernelDefs() {
  std::vector<engine::KernelDef> defs;
  defs.push_back(Def(
      "MatMul", 1, [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
        return std::make_unique<MatMulKernel>(info);
      }));
  defs.push_back(Def(
      "Gemm", 7, [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
        return std::make_unique<GemmKernel>(info);
      }));
  return defs;
}

}  // namespace inferd::kernels::cuda
