// ReduceSum, ReduceMean, ReduceMax, ReduceMin on CUDA (float32, int32, int64), the semantics of
// the CPU kernels (kernels/cpu/reduce.cc): axes from the `axes` attribute (ReduceSum up to opset
// 12, the others up to 17) or from the optional int64 input 1 (a host input: ReduceSum 13+, the
// others 18+, with noop_with_empty_axes); absent or empty axes reduce everything; keepdims.
// Here the input shape is collapsed (dims of size 1 dropped, neighbours of the same kind merged)
// into the plan reduce.cu runs: rows, [outer, n, inner] columns, or the general strided path.
// ArgMax, ArgMin (opsets 1-11, 12+ with select_last_index; float32, int32, int64 in, int64 out):
// the attributes and the [outer, n, inner] geometry are the CPU kernel's (cpu::ArgReduceShape,
// kernels/cpu/reduce_axes.h); the scans in arg_reduce.cu.
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/reduce_axes.h"
#include "kernels/cuda/kernel_def.h"
#include "kernels/cuda/reduce.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// Rows shorter than this fold with one thread each (the column kernel with inner 1) rather than
// a block each.
constexpr int64_t kMinBlockRow = 32;

// The plan for reducing the dims of `shape` where `mask` is true; UNIMPLEMENTED when more than
// kMaxReduceRank kept or reduced dims remain after merging.
absl::StatusOr<ReducePlan> MakePlan(const Shape& shape, const absl::InlinedVector<bool, 8>& mask,
                                    const CudaNode& node) {
  // pass 1: drop dims of size 1, merge neighbours of the same kind.
  absl::InlinedVector<int64_t, 8> dims;
  absl::InlinedVector<bool, 8> reduced;
  ReducePlan p;
  p.outputs = 1;
  p.reduced = 1;
  for (size_t d = 0; d < shape.rank(); ++d) {
    (mask[d] ? p.reduced : p.outputs) *= shape[d];
    if (shape[d] == 1) continue;
    if (!dims.empty() && reduced.back() == mask[d]) {
      dims.back() *= shape[d];
    } else {
      dims.push_back(shape[d]);
      reduced.push_back(mask[d]);
    }
  }
  // pass 2: the shapes the row and column kernels take.
  const size_t n = dims.size();
  auto is = [&](std::initializer_list<bool> kinds) {
    if (kinds.size() != n) return false;
    size_t i = 0;
    for (bool k : kinds) {
      if (reduced[i++] != k) return false;
    }
    return true;
  };
  if (n == 0 || is({false})) {  // nothing to fold: one value per output
    p.kind = ReducePlan::kColumns;
    p.outer = p.outputs;
  } else if (is({true}) || is({false, true})) {
    p.kind = p.reduced < kMinBlockRow ? ReducePlan::kColumns : ReducePlan::kRows;
    p.outer = n == 1 ? 1 : dims[0];
  } else if (is({true, false}) || is({false, true, false})) {
    p.kind = ReducePlan::kColumns;
    p.outer = n == 2 ? 1 : dims[0];
    p.inner = dims[n - 1];
  } else {
    // pass 3: the general path, kept and reduced dims with their input strides.
    p.kind = ReducePlan::kStrided;
    int64_t stride = 1;
    absl::InlinedVector<int64_t, 8> strides(n);
    for (size_t d = n; d-- > 0;) {
      strides[d] = stride;
      stride *= dims[d];
    }
    for (size_t d = 0; d < n; ++d) {
      int& rank = reduced[d] ? p.reduced_rank : p.kept_rank;
      if (rank == kMaxReduceRank) {
        return node.Unimplemented(absl::StrCat("input ", shape.ToString(), " reduces over more ",
                                               "than ", kMaxReduceRank, " separate dimensions"));
      }
      (reduced[d] ? p.reduced_dims : p.kept_dims)[rank] = dims[d];
      (reduced[d] ? p.reduced_strides : p.kept_strides)[rank] = strides[d];
      ++rank;
    }
  }
  return p;
}

class ReduceKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ReduceKernel>> Create(const KernelInfo& info) {
    ReduceOp op = ReduceOp::kSum;
    if (info.op_type() == "ReduceMean") op = ReduceOp::kMean;
    if (info.op_type() == "ReduceMax") op = ReduceOp::kMax;
    if (info.op_type() == "ReduceMin") op = ReduceOp::kMin;
    // ReduceSum from opset 13 reads its axes from input 1, the other ops from opset 18.
    const bool axes_input = info.opset() >= (op == ReduceOp::kSum ? 13 : 18);
    return std::unique_ptr<ReduceKernel>(new ReduceKernel(info, op, axes_input));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    absl::StatusOr<ElementType> type = ElementTypeOf(x->dtype());
    if (!type.ok()) return node_.Unimplemented(type.status().message());
    const Shape& shape = x->shape();

    // The axes: attribute, or input 1 on the host (absent or empty: all, or none with
    // noop_with_empty_axes).
    cpu::Dims axes(axes_.begin(), axes_.end());
    if (axes_input_ && ctx.num_inputs() > 1 && ctx.input(1) != nullptr) {
      const Tensor& a = *ctx.input(1);
      INFERD_RETURN_IF_ERROR(cpu::CheckType(a, DataType::kInt64, 1, node_));
      INFERD_RETURN_IF_ERROR(cpu::ReadIndexVector(a, "axes", node_, &axes));
    }
    if (axes.empty() && noop_with_empty_axes_) {
      INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), shape));
      if (x->bytes() == 0) return absl::OkStatus();
      return node_.Launched(cudaMemcpyAsync(y->raw_mutable_data(), x->raw_data(), x->bytes(),
                                            cudaMemcpyDeviceToDevice, cuda->cuda_stream()));
    }
    INFERD_ASSIGN_OR_RETURN(const cpu::ReducedAxes reduced,
                            cpu::ReduceAxes(shape, axes, keepdims_, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), reduced.out_shape));
    INFERD_ASSIGN_OR_RETURN(const ReducePlan plan, MakePlan(shape, reduced.mask, node_));
    return node_.Launched(
        LaunchReduce(op_, *type, x->raw_data(), y->raw_mutable_data(), plan, cuda->cuda_stream()));
  }

 private:
  ReduceKernel(const KernelInfo& info, ReduceOp op, bool axes_input)
      : node_(info),
        op_(op),
        axes_input_(axes_input),
        keepdims_(info.GetInt("keepdims", 1) != 0),
        noop_with_empty_axes_(axes_input && info.GetInt("noop_with_empty_axes", 0) != 0),
        axes_(axes_input ? std::vector<int64_t>{} : info.GetInts("axes")) {}

  const CudaNode node_;
  const ReduceOp op_;
  const bool axes_input_;
  const bool keepdims_;
  const bool noop_with_empty_axes_;
  const std::vector<int64_t> axes_;  // from the attribute
};

class ArgReduceKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ArgReduceKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<ArgReduceKernel>(new ArgReduceKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    absl::StatusOr<ElementType> type = ElementTypeOf(x->dtype());
    if (!type.ok()) return node_.Unimplemented(type.status().message());
    INFERD_ASSIGN_OR_RETURN(const cpu::ArgReduceGeometry g,
                            cpu::ArgReduceShape(x->shape(), attrs_, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kInt64, g.out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    return node_.Launched(LaunchArgReduce(attrs_.max, attrs_.last, *type, x->raw_data(),
                                          y->mutable_data<int64_t>(), g.outer, g.n, g.inner,
                                          cuda->cuda_stream()));
  }

 private:
  explicit ArgReduceKernel(const KernelInfo& info)
      : node_(info), attrs_(cpu::ArgReduceAttributes::Read(info)) {}

  const CudaNode node_;
  const cpu::ArgReduceAttributes attrs_;
};

}  // namespace

std::vector<engine::KernelDef> ReduceKernelDefs() {
  const std::vector<DataType> types = {DataType::kFloat32, DataType::kInt32, DataType::kInt64};
  const auto f = cpu::FactoryOf<ReduceKernel>();
  std::vector<engine::KernelDef> defs;
  // ReduceSum 13+ and the others 18+: host input 1 (axes).
  defs.push_back(CudaDef(engine::kOnnxDomain, "ReduceSum", 1, 12, types, f));
  defs.push_back(CudaDef(engine::kOnnxDomain, "ReduceSum", 13, kMaxOpset, types, f, {1}));
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin"}) {
    defs.push_back(CudaDef(engine::kOnnxDomain, op, 1, 17, types, f));
    defs.push_back(CudaDef(engine::kOnnxDomain, op, 18, kMaxOpset, types, f, {1}));
  }
  // ArgMax, ArgMin: 1-11 first index; 12+ select_last_index (as the CPU registry splits them).
  for (const char* op : {"ArgMax", "ArgMin"}) {
    defs.push_back(
        CudaDef(engine::kOnnxDomain, op, 1, 11, types, cpu::FactoryOf<ArgReduceKernel>()));
    defs.push_back(
        CudaDef(engine::kOnnxDomain, op, 12, kMaxOpset, types, cpu::FactoryOf<ArgReduceKernel>()));
  }
  return defs;
}

}  // namespace inferd::kernels::cuda
