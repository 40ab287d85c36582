// Conv (opsets 1+) and ConvTranspose (1+) on cuDNN, float32: 1-D, 2-D and 3-D, groups (depthwise
// included), strides, dilations, pads, auto_pad, ConvTranspose's output_padding and
// output_shape, optional bias (cudnnAddTensor after the convolution). The ONNX geometry is the
// CPU kernels' (window.h), mapped onto cuDNN by conv_geometry.h; the algorithm and workspace
// come from cudnn_conv.h, once per (device, input shapes), cached in the kernel. The workspace
// is the arena's (DeclareWorkspaceRequirements, slot 0): the kernel allocates no memory.
//
// The load-time estimate (KernelDef::estimate_workspace) builds the same plan from the
// KernelInfo's shapes on the current device, so it is exact; without a device it fails
// (FAILED_PRECONDITION), and the partitioner uses its heuristic.
#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"
#include "engine/cuda_kernel_context.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/shape_cache.h"
#include "kernels/cuda/conv_geometry.h"
#include "kernels/cuda/cudnn_conv.h"
#include "kernels/cuda/cudnn_handle.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

constexpr int kWorkspaceSlot = 0;

// The device the calling thread works on (the engine makes a node's device current before it
// asks for workspaces). FAILED_PRECONDITION without one.
absl::StatusOr<int> CurrentDevice() {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) {
    cudaGetLastError();  // not a launch's error: leave nothing for CudaLaunchStatus to find
    return CudaStatus(e, "cudaGetDevice");
  }
  return device;
}

// The one function behind Compute, DeclareWorkspaceRequirements and the load-time estimate.
// The node's own errors come before the device's (an estimate without a GPU reports a bad node
// as such).
absl::StatusOr<std::shared_ptr<const CudnnConvPlan>> BuildPlan(const ConvAttributes& attrs,
                                                               const Shape& x, const Shape& w,
                                                               const Shape* b,
                                                               const absl::StatusOr<int>& device,
                                                               const cpu::NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(ConvGeometry g, ComputeConvGeometry(attrs, x, w, b, node));
  if (!device.ok()) return device.status();
  return MakeCudnnConvPlan(g, b != nullptr, *device, node);
}

class ConvKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ConvKernel>> Create(const KernelInfo& info,
                                                            bool transposed) {
    INFERD_ASSIGN_OR_RETURN(ConvAttributes attrs, ConvAttributes::Read(info, transposed));
    return std::unique_ptr<ConvKernel>(new ConvKernel(info, std::move(attrs)));
  }

  static absl::StatusOr<size_t> EstimateWorkspace(const KernelInfo& info, bool transposed) {
    const cpu::NodeLabel node(info);
    INFERD_ASSIGN_OR_RETURN(ConvAttributes attrs, ConvAttributes::Read(info, transposed));
    std::vector<Shape> shapes;
    for (int i = 0; i < (info.input_present(2) ? 3 : 2); ++i) {
      std::optional<Shape> s = cpu::StaticInputShape(info, i);
      if (!s) return node.InvalidArgument("input shapes are not static");
      shapes.push_back(*std::move(s));
    }
    INFERD_ASSIGN_OR_RETURN(
        std::shared_ptr<const CudnnConvPlan> plan,
        BuildPlan(attrs, shapes[0], shapes[1], shapes.size() > 2 ? &shapes[2] : nullptr,
                  CurrentDevice(), node));
    return plan->workspace_bytes();
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda,
                            engine::CudaContextOf(ctx, node_name_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* w, cpu::RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(cpu::CheckType(*x, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(cpu::CheckType(*w, DataType::kFloat32, 1, node_));
    const Tensor* b = nullptr;
    if (has_bias_) {
      INFERD_ASSIGN_OR_RETURN(b, cpu::RequiredInput(ctx, 2, node_));
      INFERD_RETURN_IF_ERROR(cpu::CheckType(*b, DataType::kFloat32, 2, node_));
    }
    const int device = cuda->cuda_device();
    INFERD_ASSIGN_OR_RETURN(
        std::shared_ptr<const CudnnConvPlan> plan,
        PlanFor(x->shape(), w->shape(), b != nullptr ? &b->shape() : nullptr, device));
    INFERD_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.MakeOutputTensor(0, DataType::kFloat32, plan->geometry().out));
    if (y->NumElements() == 0) return absl::OkStatus();
    void* workspace = nullptr;
    if (plan->workspace_bytes() != 0) {
      absl::StatusOr<void*> ws = ctx.GetWorkspace(kWorkspaceSlot);
      if (!ws.ok()) {
        return node_.Internal(
            absl::StrCat("the ", plan->workspace_bytes(),
                         "-byte cuDNN workspace is unavailable: ", ws.status().message()));
      }
      workspace = *ws;
    }
    INFERD_ASSIGN_OR_RETURN(cudnnHandle_t h, CudnnHandleFor(device, cuda->cuda_stream()));
    return plan->Run(h, cuda->cuda_stream(), x->data<float>(), w->data<float>(),
                     b != nullptr ? b->data<float>() : nullptr, y->mutable_data<float>(), workspace,
                     node_);
  }

  // For the current device (the engine makes the node's device current first).
  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> input_shapes) const override {
    if (input_shapes.size() < (has_bias_ ? 3u : 2u)) return {};
    absl::StatusOr<int> device = CurrentDevice();
    if (!device.ok()) return {};
    absl::StatusOr<std::shared_ptr<const CudnnConvPlan>> plan =
        PlanFor(input_shapes[0], input_shapes[1], has_bias_ ? &input_shapes[2] : nullptr, *device);
    if (!plan.ok() || (*plan)->workspace_bytes() == 0) return {};  // Compute reports errors
    return {engine::WorkspaceRequirement{kWorkspaceSlot, (*plan)->workspace_bytes()}};
  }

 private:
  ConvKernel(const KernelInfo& info, ConvAttributes attrs)
      : node_(info),
        node_name_(info.node_name()),
        attrs_(std::move(attrs)),
        has_bias_(info.input_present(2)) {}

  // The cached plan for these shapes on `device` (the device ordinal takes the cache key's
  // thread-count place: an algorithm is chosen per GPU).
  absl::StatusOr<std::shared_ptr<const CudnnConvPlan>> PlanFor(const Shape& x, const Shape& w,
                                                               const Shape* b, int device) const {
    const Shape* refs[] = {&x, &w, b};
    return cache_.GetOrCreate(cpu::ShapeRefs(refs, b != nullptr ? 3 : 2), device,
                              [&] { return BuildPlan(attrs_, x, w, b, device, node_); });
  }

  const cpu::NodeLabel node_;
  const std::string node_name_;
  const ConvAttributes attrs_;
  const bool has_bias_;
  // Plans by (device, input shapes); thread-safe (its own mutex), bounded.
  mutable cpu::ShapeCache<CudnnConvPlan> cache_;
};

engine::KernelDef Def(const char* op_type, bool transposed) {
  engine::KernelDef def;
  def.domain = engine::kOnnxDomain;
  def.op_type = op_type;
  def.since_version = 1;
  def.end_version = kMaxOpset;
  def.device_type = engine::DeviceKind::kCuda;
  def.types = {DataType::kFloat32};
  def.create =
      [transposed](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    INFERD_ASSIGN_OR_RETURN(std::unique_ptr<ConvKernel> k, ConvKernel::Create(info, transposed));
    return std::unique_ptr<engine::OpKernel>(std::move(k));
  };
  def.estimate_workspace = [transposed](const KernelInfo& info) {
    return ConvKernel::EstimateWorkspace(info, transposed);
  };
  return def;
}

}  // namespace

std::vector<engine::KernelDef> ConvKernelDefs() {
  // As on the CPU: Conv's and ConvTranspose's later opsets only clarified padding rules or added
  // element types, so one definition each covers every version.
  return {Def("Conv", false), Def("ConvTranspose", true)};
}

}  // namespace inferd::kernels::cuda
