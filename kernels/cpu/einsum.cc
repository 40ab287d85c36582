// Einsum (opset 12; float32, float64) with one or two operands: letters, one "..." per term
// (broadcast across operands), repeated letters in a term (diagonals), an explicit output after
// "->" or the implicit one (ellipsis dims, then the letters used once, in ASCII order).
//
// Each operand is first seen as a strided view: a repeated letter becomes one dim whose stride is
// the sum of its strides (no copy) and size-1 dims are dropped (numpy broadcasting). Then:
//   - one operand: the output sums the view over the letters it lacks (transpose, diagonal,
//     trace and sums are this one loop);
//   - two operands: letters are batch (A, B, out), m (A, out), n (B, out), k (A, B) or summed in
//     one operand only. The product is a batched matrix multiply C[batch, m, n] = A[batch, m, k]
//     B[batch, k, n] on the views as they are when each group collapses to one stride (and, for
//     float32, the matrices are row- or column-major: oneDNN's dnnl_sgemm); otherwise the operand
//     is packed into [batch, m, k] / [batch, k, n] arena scratch first (summing one-operand
//     letters on the way), and C goes through scratch when the output's layout is not
//     [batch, m, n]. float64 uses plain loops.
// More than two operands are UNIMPLEMENTED.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "dnnl.h"
#include "engine/kernel.h"
#include "kernels/cpu/einsum_equation.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/strided_walk.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

constexpr int64_t kGrain = 16 * 1024;  // multiply-adds per thread, at least

// dst (contiguous over dst_dims) = for each position, the sum over sum_dims of the source; the
// source strides of both lists are given. Generic fallback (a walk step per element).
template <typename T>
void PackSum(const T* src, const Dims& dst_dims, const Dims& dst_src_strides, const Dims& sum_dims,
             const Dims& sum_strides, T* dst, engine::ThreadPool& pool) {
  const int64_t count = Product(dst_dims), sums = Product(sum_dims);
  if (count == 0) return;
  pool.ParallelFor(count, std::max<int64_t>(1, kGrain / std::max<int64_t>(sums, 1)),
                   [&](int64_t begin, int64_t end) {
                     StridedWalk d(dst_dims, dst_src_strides, begin);
                     for (int64_t i = begin; i < end; ++i, d.Next()) {
                       const T* base = src + d.offset();
                       if (sums == 1) {
                         dst[i] = base[0];
                         continue;
                       }
                       T acc = T(0);
                       StridedWalk s(sum_dims, sum_strides);
                       for (int64_t r = 0; r < sums; ++r, s.Next()) acc += base[s.offset()];
                       dst[i] = acc;
                     }
                   });
}

// One group (m, n or k) of letters seen in one tensor: collapsed to (size, stride) when the
// letters' strides allow it.
struct Collapsed {
  int64_t size = 1, stride = 0;
  bool ok = true;
};

Collapsed Collapse(const Dims& sizes, const Dims& strides) {
  Collapsed c;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (c.size == 1) {
      c.stride = strides[i];
    } else if (strides[i] != c.stride * c.size) {
      c.ok = false;
    }
    c.size *= sizes[i];
  }
  return c;
}

// Strides of `labels` in a view (0 where the view lacks the letter).
Dims StridesOf(const EinsumView& v, const LabelList& labels) {
  Dims s;
  for (int l : labels) s.push_back(v.StrideOf(l));
  return s;
}

// The batched product C[batch, m, n] = sum_k A[batch, m, k] * B[batch, k, n] over strided views.
struct Product3 {
  int64_t m = 1, n = 1, k = 1;
  int64_t a_m = 0, a_k = 0, b_k = 0, b_n = 0, c_m = 0, c_n = 0;
  Dims batch, a_batch, b_batch, c_batch;
};

// float32: dnnl_sgemm per batch item (row- or column-major operands, unit-stride C rows).
bool SgemmLayout(int64_t rows, int64_t cols, int64_t s_row, int64_t s_col, char* trans,
                 int64_t* ld) {
  if (cols == 1 || s_col == 1) {
    *trans = 'N';
    *ld = rows == 1 ? std::max<int64_t>(cols, 1) : s_row;
    return *ld >= cols;
  }
  if (rows == 1 || s_row == 1) {
    *trans = 'T';
    *ld = cols == 1 ? std::max<int64_t>(rows, 1) : s_col;
    return *ld >= rows;
  }
  return false;
}

absl::Status MultiplyF32(const Product3& p, const float* a, const float* b, float* c,
                         KernelContext& ctx, const NodeLabel& node) {
  char ta, tb;
  int64_t lda, ldb;
  if (!SgemmLayout(p.m, p.k, p.a_m, p.a_k, &ta, &lda) ||
      !SgemmLayout(p.k, p.n, p.b_k, p.b_n, &tb, &ldb)) {
    return node.Internal("operand layout not usable by sgemm");
  }
  const int64_t ldc = p.m == 1 ? std::max<int64_t>(p.n, 1) : p.c_m;
  const int64_t batches = Product(p.batch);
  const int threads = ctx.threads().num_threads();
  // Many items: one thread each, in parallel; few: oneDNN's own threads inside each call.
  const bool over_batch = batches >= threads && threads > 1;
  dnnl_status_t status = dnnl_success;
  std::mutex mu;
  auto run = [&](int64_t begin, int64_t end, int omp_threads) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(omp_threads);
    StridedWalk wa(p.batch, p.a_batch, begin), wb(p.batch, p.b_batch, begin),
        wc(p.batch, p.c_batch, begin);
    for (int64_t i = begin; i < end; ++i, wa.Next(), wb.Next(), wc.Next()) {
      const dnnl_status_t s = dnnl_sgemm(ta, tb, p.m, p.n, p.k, 1.0f, a + wa.offset(), lda,
                                         b + wb.offset(), ldb, 0.0f, c + wc.offset(), ldc);
      if (s != dnnl_success) {
        std::lock_guard<std::mutex> lock(mu);
        status = s;
      }
    }
    omp_set_num_threads(saved);
  };
  if (over_batch) {
    ctx.threads().ParallelFor(batches, 1, [&](int64_t begin, int64_t end) { run(begin, end, 1); });
  } else {
    run(0, batches, threads);
  }
  if (status != dnnl_success) {
    return node.Internal(absl::StrCat("dnnl_sgemm failed with status ", static_cast<int>(status)));
  }
  return absl::OkStatus();
}

// Any type, any strides: plain loops, parallel over (batch, m) rows.
template <typename T>
void MultiplyLoops(const Product3& p, const T* a, const T* b, T* c, engine::ThreadPool& pool) {
  const int64_t batches = Product(p.batch), rows = batches * p.m;
  pool.ParallelFor(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(p.n * p.k, 1)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t r = begin; r < end; ++r) {
                       const int64_t bi = r / p.m, i = r % p.m;  // one division per row
                       StridedWalk wa(p.batch, p.a_batch, bi), wb(p.batch, p.b_batch, bi),
                           wc(p.batch, p.c_batch, bi);
                       const T* ar = a + wa.offset() + i * p.a_m;
                       const T* bb = b + wb.offset();
                       T* cr = c + wc.offset() + i * p.c_m;
                       for (int64_t j = 0; j < p.n; ++j) cr[j * p.c_n] = T(0);
                       for (int64_t q = 0; q < p.k; ++q) {
                         const T av = ar[q * p.a_k];
                         const T* br = bb + q * p.b_k;
                         for (int64_t j = 0; j < p.n; ++j) cr[j * p.c_n] += av * br[j * p.b_n];
                       }
                     }
                   });
}

class EinsumKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<EinsumKernel>> Create(const KernelInfo& info) {
    NodeLabel node(info);
    INFERD_ASSIGN_OR_RETURN(EinsumEquation eq,
                            EinsumEquation::Parse(info.GetString("equation", ""), node));
    if (eq.num_operands() != info.num_inputs()) {
      return node.InvalidArgument(absl::StrCat("the equation has ", eq.num_operands(),
                                               " operands but the node has ", info.num_inputs(),
                                               " inputs"));
    }
    if (eq.num_operands() > 2) {
      return node.Unimplemented(
          absl::StrCat(eq.num_operands(), " operands (at most 2 are supported)"));
    }
    return std::unique_ptr<EinsumKernel>(new EinsumKernel(info, std::move(eq)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    const int count = eq_.num_operands();
    const Tensor* in[2] = {nullptr, nullptr};
    Shape shapes[2];
    for (int i = 0; i < count; ++i) {
      INFERD_ASSIGN_OR_RETURN(in[i], RequiredInput(ctx, i, node_));
      shapes[i] = in[i]->shape();
      if (in[i]->dtype() != in[0]->dtype()) {
        INFERD_RETURN_IF_ERROR(CheckType(*in[i], in[0]->dtype(), i, node_));
      }
    }
    INFERD_ASSIGN_OR_RETURN(EinsumBinding bind,
                            eq_.Bind(absl::MakeConstSpan(shapes, count), node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, in[0]->dtype(), bind.out_shape));
    return Dispatch(FloatTypes{}, in[0]->dtype(), node_,
                    [&](auto tag) { return Run<typename decltype(tag)::type>(bind, in, *y, ctx); });
  }

 private:
  EinsumKernel(const KernelInfo& info, EinsumEquation eq) : node_(info), eq_(std::move(eq)) {}

  // The letter groups of a two-operand product (output order for batch / m / n, A's order
  // for k).
  struct LetterGroups {
    LabelList batch, m, n, k;
  };

  static LetterGroups GroupLetters(const EinsumBinding& bind, const EinsumView& out_view) {
    const EinsumView& va = bind.views[0];
    const EinsumView& vb = bind.views[1];
    LetterGroups g;
    for (int l : bind.out_labels) {
      const bool ia = va.Has(l), ib = vb.Has(l);
      if (ia && ib)
        g.batch.push_back(l);
      else if (ia)
        g.m.push_back(l);
      else if (ib)
        g.n.push_back(l);
    }
    for (int l : va.labels) {
      if (vb.Has(l) && !out_view.Has(l)) g.k.push_back(l);
    }
    return g;
  }

  // An operand of the product as [batch, rows, cols].
  template <typename T>
  struct Operand {
    const T* data = nullptr;
    Tensor tmp;  // the packed copy `data` points into, when one was needed
    Dims batch_strides;
    Collapsed rows, cols;
  };

  // The view `v` over `data` itself where the product can read it, else packed into an arena
  // temporary (summing the labels `only` it has).
  template <typename T>
  absl::StatusOr<Operand<T>> PrepareOperand(const EinsumBinding& bind, const LabelList& batch,
                                            const EinsumView& v, const LabelList& only,
                                            const LabelList& rows, const LabelList& cols,
                                            const T* data, KernelContext& ctx) const {
    const DataType type = engine::DataTypeOf<T>::value;
    Operand<T> op;
    op.data = data;
    op.rows = Collapse(bind.SizesOf(rows), StridesOf(v, rows));
    op.cols = Collapse(bind.SizesOf(cols), StridesOf(v, cols));
    char trans;
    int64_t ld;
    const bool usable =
        op.rows.ok && op.cols.ok &&
        (type != DataType::kFloat32 ||
         SgemmLayout(op.rows.size, op.cols.size, op.rows.stride, op.cols.stride, &trans, &ld));
    if (only.empty() && usable) {
      op.batch_strides = StridesOf(v, batch);
      return op;
    }
    const LabelList dst = Concat(Concat(batch, rows), cols);
    INFERD_ASSIGN_OR_RETURN(op.tmp, ctx.MakeTemporaryTensor(type, Shape(bind.SizesOf(dst))));
    PackSum<T>(data, bind.SizesOf(dst), StridesOf(v, dst), bind.SizesOf(only), StridesOf(v, only),
               op.tmp.template mutable_data<T>(), ctx.threads());
    op.data = op.tmp.template data<T>();
    const EinsumView packed = EinsumView::Contiguous(dst, bind);
    op.batch_strides = StridesOf(packed, batch);
    op.rows = Collapse(bind.SizesOf(rows), StridesOf(packed, rows));
    op.cols = Collapse(bind.SizesOf(cols), StridesOf(packed, cols));
    return op;
  }

  template <typename T>
  absl::Status Run(const EinsumBinding& bind, const Tensor* const* in, Tensor& y,
                   KernelContext& ctx) const {
    T* out = y.mutable_data<T>();
    const int64_t total = y.NumElements();
    if (total == 0) return absl::OkStatus();
    const DataType type = y.dtype();
    const LabelList& out_labels = bind.out_labels;
    const EinsumView out_view = EinsumView::Contiguous(out_labels, bind);
    if (eq_.num_operands() == 1) {
      // The output sums the view over the letters it lacks.
      const EinsumView& v = bind.views[0];
      const LabelList summed = v.LabelsNotIn(out_labels);
      PackSum<T>(in[0]->data<T>(), bind.SizesOf(out_labels), StridesOf(v, out_labels),
                 bind.SizesOf(summed), StridesOf(v, summed), out, ctx.threads());
      return absl::OkStatus();
    }
    const EinsumView& va = bind.views[0];
    const EinsumView& vb = bind.views[1];
    const LetterGroups g = GroupLetters(bind, out_view);
    const LabelList a_only = va.LabelsNotIn(Concat(out_labels, vb.labels));
    const LabelList b_only = vb.LabelsNotIn(Concat(out_labels, va.labels));
    if (Product(bind.SizesOf(g.k)) == 0 || va.Empty() || vb.Empty()) {
      std::fill(out, out + total, T(0));  // empty sums
      return absl::OkStatus();
    }
    INFERD_ASSIGN_OR_RETURN(Operand<T> a, PrepareOperand<T>(bind, g.batch, va, a_only, g.m, g.k,
                                                            in[0]->data<T>(), ctx));
    INFERD_ASSIGN_OR_RETURN(Operand<T> b, PrepareOperand<T>(bind, g.batch, vb, b_only, g.k, g.n,
                                                            in[1]->data<T>(), ctx));
    Product3 p;
    p.batch = bind.SizesOf(g.batch);
    p.a_batch = a.batch_strides;
    p.b_batch = b.batch_strides;
    // C: the output itself when its m and n groups collapse (n with unit stride), else scratch.
    Collapsed cm = Collapse(bind.SizesOf(g.m), StridesOf(out_view, g.m));
    Collapsed cn = Collapse(bind.SizesOf(g.n), StridesOf(out_view, g.n));
    T* c = out;
    Tensor c_tmp;
    const bool direct = cm.ok && cn.ok && (cn.size == 1 || cn.stride == 1);
    const EinsumView c_view = EinsumView::Contiguous(Concat(Concat(g.batch, g.m), g.n), bind);
    if (direct) {
      p.c_batch = StridesOf(out_view, g.batch);
    } else {
      INFERD_ASSIGN_OR_RETURN(c_tmp, ctx.MakeTemporaryTensor(type, Shape{total}));
      c = c_tmp.mutable_data<T>();
      p.c_batch = StridesOf(c_view, g.batch);
      cm = Collapse(bind.SizesOf(g.m), StridesOf(c_view, g.m));
      cn = Collapse(bind.SizesOf(g.n), StridesOf(c_view, g.n));
    }
    p.m = a.rows.size;
    p.k = a.cols.size;
    p.n = b.cols.size;
    p.a_m = a.rows.stride;
    p.a_k = a.cols.stride;
    p.b_k = b.rows.stride;
    p.b_n = b.cols.stride;
    p.c_m = cm.stride;
    p.c_n = cn.size == 1 ? 1 : cn.stride;
    if constexpr (std::is_same_v<T, float>) {
      INFERD_RETURN_IF_ERROR(MultiplyF32(p, a.data, b.data, c, ctx, node_));
    } else {
      MultiplyLoops<T>(p, a.data, b.data, c, ctx.threads());
    }
    if (!direct) {  // scratch [batch, m, n] -> the output's letter order
      PackSum<T>(c, bind.SizesOf(out_labels), StridesOf(c_view, out_labels), Dims(), Dims(), out,
                 ctx.threads());
    }
    return absl::OkStatus();
  }

  static LabelList Concat(const LabelList& a, const LabelList& b) {
    LabelList r = a;
    r.insert(r.end(), b.begin(), b.end());
    return r;
  }

  const NodeLabel node_;
  const EinsumEquation eq_;
};

}  // namespace

std::vector<engine::KernelDef> EinsumKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "Einsum", 12, kMaxOpset, TypesOf(FloatTypes{}),
                 FactoryOf<EinsumKernel>())};
}

}  // namespace inferd::kernels::cpu
