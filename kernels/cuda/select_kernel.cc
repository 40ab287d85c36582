// Gather, Cast and Where on CUDA, the semantics of the CPU kernels (kernels/cpu/gather.cc,
// cast.cc, compare_logical.cc); the device code is in gather.cu, cast.cu and where.cu. No host
// inputs: Gather's indices are read on the device.
//   Gather  any fixed-size type, int32 or int64 indices (negative from the end). The CPU kernel
//           refuses an index out of range; here such an index gives zeros (the kernel cannot
//           report it without the host waiting).
//   Cast    float32, float16, int32, int64, uint8 and bool, each to each (opsets 6+); a cast to
//           the input's own type is a copy.
//   Where   bool condition, X and Y of any fixed-size type, numpy broadcasting of all three.
#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cuda/broadcast_index.h"
#include "kernels/cuda/kernel_def.h"
#include "kernels/cuda/movement.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class GatherKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<GatherKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<GatherKernel>(new GatherKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* data, cpu::RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* indices, cpu::RequiredInput(ctx, 1, node_));
    const size_t elem = engine::ElementSize(data->dtype());
    if (elem != 1 && elem != 2 && elem != 4 && elem != 8) {
      return cpu::UnsupportedType(data->dtype(), node_);
    }
    if (indices->dtype() != DataType::kInt32 && indices->dtype() != DataType::kInt64) {
      return node_.InvalidArgument(absl::StrCat("indices have element type ",
                                                engine::DataTypeName(indices->dtype()),
                                                ", expected int32 or int64"));
    }
    const Shape& ds = data->shape();
    if (ds.rank() == 0) return node_.InvalidArgument("data must have rank >= 1, got a scalar");
    INFERD_ASSIGN_OR_RETURN(int axis, cpu::NormalizeAxis(axis_, ds.rank(), node_));
    Shape out_shape;
    for (int i = 0; i < axis; ++i) out_shape.push_back(ds[i]);
    for (int64_t d : indices->shape().dims()) out_shape.push_back(d);
    for (size_t i = axis + 1; i < ds.rank(); ++i) out_shape.push_back(ds[i]);
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, data->dtype(), out_shape));
    return node_.Launched(LaunchGather(
        static_cast<int>(elem), data->raw_data(), indices->raw_data(),
        indices->dtype() == DataType::kInt64, out->raw_mutable_data(), ds.SizeBetween(0, axis),
        ds[axis], indices->NumElements(), ds.SizeFrom(axis + 1), cuda->cuda_stream()));
  }

 private:
  explicit GatherKernel(const KernelInfo& info) : node_(info), axis_(info.GetInt("axis", 0)) {}

  const CudaNode node_;
  const int64_t axis_;
};

std::optional<CastType> CastTypeOf(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return CastType::kFloat32;
    case DataType::kFloat16:
      return CastType::kFloat16;
    case DataType::kInt32:
      return CastType::kInt32;
    case DataType::kInt64:
      return CastType::kInt64;
    case DataType::kUint8:
      return CastType::kUint8;
    case DataType::kBool:
      return CastType::kBool;
    default:
      return std::nullopt;
  }
}

const std::vector<DataType>& CastTypes() {
  static const auto* types =
      new std::vector<DataType>{DataType::kFloat32, DataType::kFloat16, DataType::kInt32,
                                DataType::kInt64,   DataType::kUint8,   DataType::kBool};
  return *types;
}

class CastKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<CastKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(int64_t to, info.RequireInt("to"));
    const cpu::NodeLabel node(info);
    if (!engine::IsKnownDataType(static_cast<int32_t>(to)) ||
        !CastTypeOf(static_cast<DataType>(to))) {
      return node.Unimplemented(absl::StrCat("cast to element type ", to,
                                             " has no CUDA kernel (float32, float16, int32, "
                                             "int64, uint8 and bool have)"));
    }
    return std::unique_ptr<CastKernel>(new CastKernel(info, static_cast<DataType>(to)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    const std::optional<CastType> from = CastTypeOf(x->dtype());
    if (!from) return cpu::UnsupportedType(x->dtype(), node_);
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, to_, x->shape()));
    if (x->dtype() == to_) {
      if (y->bytes() == 0) return absl::OkStatus();
      return node_.Launched(cudaMemcpyAsync(y->raw_mutable_data(), x->raw_data(), y->bytes(),
                                            cudaMemcpyDeviceToDevice, cuda->cuda_stream()));
    }
    return node_.Launched(LaunchCast(*from, *CastTypeOf(to_), x->raw_data(), y->raw_mutable_data(),
                                     x->NumElements(), cuda->cuda_stream()));
  }

 private:
  CastKernel(const KernelInfo& info, DataType to) : node_(info), to_(to) {}

  const CudaNode node_;
  const DataType to_;
};

class WhereKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<WhereKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<WhereKernel>(new WhereKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* c, cpu::RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* y, cpu::RequiredInput(ctx, 2, node_));
    INFERD_RETURN_IF_ERROR(cpu::CheckType(*c, DataType::kBool, 0, node_));
    INFERD_RETURN_IF_ERROR(cpu::CheckType(*y, x->dtype(), 2, node_));
    const size_t elem = engine::ElementSize(x->dtype());
    if (elem != 1 && elem != 2 && elem != 4 && elem != 8) {
      return cpu::UnsupportedType(x->dtype(), node_);
    }
    Shape out_shape;
    absl::StatusOr<WhereIndex> index =
        MakeWhereIndex(c->shape(), x->shape(), y->shape(), out_shape);
    if (!index.ok()) {
      return absl::Status(index.status().code(),
                          absl::StrCat(node_.prefix(), index.status().message()));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    return node_.Launched(LaunchWhere(static_cast<int>(elem), c->data<bool>(), x->raw_data(),
                                      y->raw_data(), out->raw_mutable_data(), *index,
                                      cuda->cuda_stream()));
  }

 private:
  explicit WhereKernel(const KernelInfo& info) : node_(info) {}

  const CudaNode node_;
};

}  // namespace

std::vector<engine::KernelDef> SelectKernelDefs() {
  engine::KernelDef where = CudaDef(engine::kOnnxDomain, "Where", 9, kMaxOpset,
                                    cpu::FixedSizeTypes(), cpu::FactoryOf<WhereKernel>());
  where.type_input = 1;  // keyed on X: the condition is always bool
  std::vector<engine::KernelDef> defs;
  defs.push_back(CudaDef(engine::kOnnxDomain, "Gather", 1, kMaxOpset, cpu::FixedSizeTypes(),
                         cpu::FactoryOf<GatherKernel>()));
  defs.push_back(CudaDef(engine::kOnnxDomain, "Cast", 6, kMaxOpset, CastTypes(),
                         cpu::FactoryOf<CastKernel>()));
  defs.push_back(std::move(where));
  return defs;
}

}  // namespace inferd::kernels::cuda
