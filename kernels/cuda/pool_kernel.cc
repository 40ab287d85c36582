// MaxPool, AveragePool (opsets 1+), GlobalMaxPool, GlobalAveragePool (1+) on CUDA, float32, 1-D
// to 3-D: the window geometry is the CPU kernels' (window.h: kernel_shape, strides, pads,
// dilations, auto_pad, ceil_mode), count_include_pad as there; the arithmetic in pool.cu. No
// workspace. MaxPool's Indices output (and storage_order) is not supported: a node that uses
// output 1 is refused at creation (UNIMPLEMENTED), so the engine can leave it to the CPU.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"
#include "engine/cuda_kernel_context.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/window.h"
#include "kernels/cuda/pool.h"
#include "kernels/cuda/pool_window.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

enum class PoolKind { kMax, kAverage, kGlobalMax, kGlobalAverage };

bool IsGlobal(PoolKind k) { return k == PoolKind::kGlobalMax || k == PoolKind::kGlobalAverage; }

class PoolKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<PoolKernel>> Create(const KernelInfo& info, PoolKind kind) {
    const cpu::NodeLabel node(info);
    if (kind == PoolKind::kMax && info.output(1).present) {
      return node.Unimplemented(
          "output 1 (Indices) is not supported by the CUDA kernel; the CPU kernel has it");
    }
    if (info.GetInt("blocked_input", 0) != 0) {
      return node.Unimplemented("a channel-blocked input is a CPU layout");
    }
    auto k = std::unique_ptr<PoolKernel>(new PoolKernel(info, kind));
    if (IsGlobal(kind)) return k;
    INFERD_ASSIGN_OR_RETURN(k->window_, cpu::WindowAttributes::Read(info));
    if (k->window_.kernel_shape.empty()) {
      return info.Error("required attribute 'kernel_shape' is missing");
    }
    k->count_include_pad_ = info.GetInt("count_include_pad", 0) != 0;
    return k;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda,
                            engine::CudaContextOf(ctx, node_name_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(cpu::CheckType(*x, DataType::kFloat32, 0, node_));
    const Shape& s = x->shape();
    if (s.rank() < 3 || s.rank() > 2 + kMaxPoolDims) {
      return node_.InvalidArgument(absl::StrCat("input has shape ", s.ToString(),
                                                " but a rank-3, -4 or -5 input (N,C,spatial...) "
                                                "is expected"));
    }
    absl::Span<const int64_t> spatial = s.dims().subspan(2);
    Shape out{s[0], s[1]};
    if (IsGlobal(kind_)) {
      for (size_t i = 0; i < spatial.size(); ++i) out.push_back(1);
      INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, out));
      if (y->NumElements() == 0) return absl::OkStatus();
      if (s.NumElements() == 0) {
        return node_.InvalidArgument(
            absl::StrCat("global pooling of an empty plane: input ", s.ToString()));
      }
      return CudaStatus(LaunchGlobalPool(kind_ == PoolKind::kGlobalMax, x->data<float>(),
                                         y->mutable_data<float>(), s[0] * s[1], s.SizeFrom(2),
                                         cuda->cuda_stream()),
                        absl::StrCat(node_.prefix(), "pool.cu"));
    }
    INFERD_ASSIGN_OR_RETURN(cpu::WindowGeometry g,
                            cpu::ComputeWindow(window_, spatial, window_.kernel_shape, node_));
    for (int64_t o : g.out) out.push_back(o);
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, out));
    if (y->NumElements() == 0 || s.NumElements() == 0) return absl::OkStatus();
    const PoolWindow w = ToPoolWindow(g, s.dims());
    const PoolMode mode = kind_ == PoolKind::kMax ? PoolMode::kMax
                          : count_include_pad_    ? PoolMode::kAverageIncludePad
                                                  : PoolMode::kAverageExcludePad;
    return CudaStatus(
        LaunchPool(mode, w, x->data<float>(), y->mutable_data<float>(), cuda->cuda_stream()),
        absl::StrCat(node_.prefix(), "pool.cu"));
  }

 private:
  PoolKernel(const KernelInfo& info, PoolKind kind)
      : node_(info), node_name_(info.node_name()), kind_(kind) {}

  const cpu::NodeLabel node_;
  const std::string node_name_;
  const PoolKind kind_;
  // Set by Create, constant after (unused by the global pools).
  cpu::WindowAttributes window_;
  bool count_include_pad_ = false;
};

engine::KernelDef Def(const char* op_type, PoolKind kind) {
  engine::KernelDef def;
  def.domain = engine::kOnnxDomain;
  def.op_type = op_type;
  def.since_version = 1;
  def.end_version = kMaxOpset;
  def.device_type = engine::DeviceKind::kCuda;
  def.types = {DataType::kFloat32};
  def.create = [kind](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    INFERD_ASSIGN_OR_RETURN(std::unique_ptr<PoolKernel> k, PoolKernel::Create(info, kind));
    return std::unique_ptr<engine::OpKernel>(std::move(k));
  };
  def.estimate_workspace = [](const KernelInfo&) -> absl::StatusOr<size_t> { return 0; };
  return def;
}

}  // namespace

std::vector<engine::KernelDef> PoolKernelDefs() {
  // As on the CPU: later opsets only added attributes whose defaults keep the older behaviour
  // (AveragePool 19: dilations, read for every version) or element types.
  return {Def("MaxPool", PoolKind::kMax), Def("AveragePool", PoolKind::kAverage),
          Def("GlobalMaxPool", PoolKind::kGlobalMax),
          Def("GlobalAveragePool", PoolKind::kGlobalAverage)};
}

}  // namespace inferd::kernels::cuda
