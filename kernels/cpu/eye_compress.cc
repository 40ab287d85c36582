// Two small data-producing ops (own code):
//   EyeLike (opset 9)   a 2-D tensor shaped like the input with ones on diagonal k (0: main,
//                       > 0 above, < 0 below); element type from `dtype`, else the input's.
//   Compress (9, 11)    the slices of input along `axis` whose bool `condition` entry is true
//                       (no axis: the flattened input); condition may be shorter than the axis
//                       (missing entries are false), not longer. Any fixed-size element type.
// Immutable after creation: thread-safe.
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

const std::vector<DataType>& EyeTypes() {
  static const auto* types = new std::vector<DataType>{
      DataType::kFloat32, DataType::kFloat64, DataType::kInt8,  DataType::kInt16,
      DataType::kInt32,   DataType::kInt64,   DataType::kUint8, DataType::kUint16,
      DataType::kUint32,  DataType::kUint64,  DataType::kBool};
  return *types;
}

template <typename T>
void FillDiagonal(void* data, int64_t rows, int64_t cols, int64_t k) {
  T* y = static_cast<T*>(data);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c = r + k;
    if (c >= 0 && c < cols) y[r * cols + c] = static_cast<T>(1);
  }
}

class EyeLikeKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<EyeLikeKernel>> Create(const KernelInfo& info) {
    std::optional<DataType> dtype;
    if (info.HasAttribute("dtype")) {
      const DataType t = static_cast<DataType>(info.GetInt("dtype", 0));
      bool ok = false;
      for (DataType e : EyeTypes()) ok = ok || e == t;
      if (!ok) {
        return info.Error(absl::StrCat("dtype ", info.GetInt("dtype", 0), " is not supported"));
      }
      dtype = t;
    }
    return std::unique_ptr<EyeLikeKernel>(new EyeLikeKernel(info, dtype, info.GetInt("k", 0)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    if (x->shape().rank() != 2) {
      return node_.InvalidArgument(absl::StrCat("input must be 2-D, got ", x->shape().ToString()));
    }
    const DataType type = dtype_.value_or(x->dtype());
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, type, x->shape()));
    const int64_t rows = x->shape()[0], cols = x->shape()[1];
    if (y->NumElements() == 0) return absl::OkStatus();
    std::memset(y->raw_mutable_data(), 0, y->bytes());
    switch (type) {
      case DataType::kFloat32:
        FillDiagonal<float>(y->raw_mutable_data(), rows, cols, k_);
        break;
      case DataType::kFloat64:
        FillDiagonal<double>(y->raw_mutable_data(), rows, cols, k_);
        break;
      case DataType::kInt8:
      case DataType::kUint8:
      case DataType::kBool:
        FillDiagonal<uint8_t>(y->raw_mutable_data(), rows, cols, k_);
        break;
      case DataType::kInt16:
      case DataType::kUint16:
        FillDiagonal<uint16_t>(y->raw_mutable_data(), rows, cols, k_);
        break;
      case DataType::kInt32:
      case DataType::kUint32:
        FillDiagonal<uint32_t>(y->raw_mutable_data(), rows, cols, k_);
        break;
      case DataType::kInt64:
      case DataType::kUint64:
        FillDiagonal<uint64_t>(y->raw_mutable_data(), rows, cols, k_);
        break;
      default:
        return node_.Unimplemented(
            absl::StrCat("element type ", engine::DataTypeName(type), " is not supported"));
    }
    return absl::OkStatus();
  }

 private:
  EyeLikeKernel(const KernelInfo& info, std::optional<DataType> dtype, int64_t k)
      : node_(info), dtype_(dtype), k_(k) {}

  const NodeLabel node_;
  const std::optional<DataType> dtype_;
  const int64_t k_;
};

class CompressKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<CompressKernel>> Create(const KernelInfo& info) {
    std::optional<int64_t> axis;
    if (info.HasAttribute("axis")) axis = info.GetInt("axis", 0);
    return std::unique_ptr<CompressKernel>(new CompressKernel(info, axis));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* cond, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*cond, DataType::kBool, 1, node_));
    if (cond->shape().rank() != 1) {
      return node_.InvalidArgument(
          absl::StrCat("condition must be 1-D, got ", cond->shape().ToString()));
    }
    // Seen as [outer, len, inner] along the axis (no axis: [1, size, 1]).
    int64_t outer = 1, len = x->NumElements(), inner = 1;
    int axis = -1;
    if (axis_.has_value()) {
      INFERD_ASSIGN_OR_RETURN(axis, NormalizeAxis(*axis_, x->shape().rank(), node_));
      outer = x->shape().SizeBetween(0, axis);
      len = x->shape()[axis];
      inner = x->shape().SizeFrom(axis + 1);
    }
    const int64_t cond_len = cond->NumElements();
    if (cond_len > len) {
      return node_.InvalidArgument(absl::StrCat(
          "condition has ", cond_len, " entries, more than the ", len, " slices it selects from"));
    }
    const bool* c = cond->data<bool>();
    int64_t kept = 0;
    for (int64_t i = 0; i < cond_len; ++i) kept += c[i] ? 1 : 0;
    Shape out_shape({kept});
    if (axis >= 0) {
      std::vector<int64_t> dims(x->shape().dims().begin(), x->shape().dims().end());
      dims[axis] = kept;
      out_shape = Shape(dims);
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    const size_t row = static_cast<size_t>(inner) * engine::ElementSize(x->dtype());
    const auto* src = static_cast<const unsigned char*>(x->raw_data());
    auto* dst = static_cast<unsigned char*>(y->raw_mutable_data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < cond_len; ++i) {
        if (!c[i]) continue;
        std::memcpy(dst, src + (o * len + i) * row, row);
        dst += row;
      }
    }
    return absl::OkStatus();
  }

 private:
  CompressKernel(const KernelInfo& info, std::optional<int64_t> axis) : node_(info), axis_(axis) {}

  const NodeLabel node_;
  const std::optional<int64_t> axis_;
};

}  // namespace

std::vector<engine::KernelDef> EyeCompressKernelDefs() {
  return {
      CpuDef(engine::kOnnxDomain, "EyeLike", 9, kMaxOpset, EyeTypes(), FactoryOf<EyeLikeKernel>()),
      CpuDef(engine::kOnnxDomain, "Compress", 9, kMaxOpset, FixedSizeTypes(),
             FactoryOf<CompressKernel>())};
}

}  // namespace inferd::kernels::cpu
