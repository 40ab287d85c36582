// The signal windows (opset 17), own code: HannWindow, HammingWindow, BlackmanWindow.
// Input: size, an int32 or int64 scalar; output [size] of output_datatype (float32 by default;
// float32 and float64 are served, other types are refused at load). periodic (1, default) divides
// by size, symmetric (0) by size - 1:
//   Hann      sin^2(pi n / D)
//   Hamming   25/46 - (21/46) cos(2 pi n / D)
//   Blackman  0.42 - 0.5 cos(2 pi n / D) + 0.08 cos(4 pi n / D)
// A symmetric window of size 1 is NaN (0 / 0), as defined. Computed in double. Immutable after
// creation: thread-safe.
#include <cmath>
#include <cstdint>
#include <memory>

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

enum class Window { kHann, kHamming, kBlackman };

class WindowKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<WindowKernel>> Create(const KernelInfo& info) {
    const auto type = static_cast<DataType>(info.GetInt("output_datatype", 1));
    if (type != DataType::kFloat32 && type != DataType::kFloat64) {
      return info.Error(absl::StrCat("output_datatype ", info.GetInt("output_datatype", 1),
                                     " is not supported (float32 and float64 are)"));
    }
    const Window w = info.op_type() == "HannWindow"      ? Window::kHann
                     : info.op_type() == "HammingWindow" ? Window::kHamming
                                                         : Window::kBlackman;
    return std::unique_ptr<WindowKernel>(
        new WindowKernel(info, w, type, info.GetInt("periodic", 1) != 0));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* size_t_, RequiredInput(ctx, 0, node_));
    if (size_t_->NumElements() != 1) {
      return node_.InvalidArgument(
          absl::StrCat("size must be a scalar, got ", size_t_->shape().ToString()));
    }
    int64_t size;
    if (size_t_->dtype() == DataType::kInt64) {
      size = size_t_->data<int64_t>()[0];
    } else if (size_t_->dtype() == DataType::kInt32) {
      size = size_t_->data<int32_t>()[0];
    } else {
      return node_.InvalidArgument("size must be int32 or int64");
    }
    if (size < 0) return node_.InvalidArgument(absl::StrCat("size must be >= 0, got ", size));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, type_, Shape{size}));
    const double denom = static_cast<double>(periodic_ ? size : size - 1);
    for (int64_t n = 0; n < size; ++n) {
      // A symmetric window of size 1 divides 0 by 0: NaN, as the definition (and ONNX Runtime).
      const double a = M_PI * static_cast<double>(n) / denom;
      double v;
      switch (window_) {
        case Window::kHann:
          v = std::sin(a) * std::sin(a);
          break;
        case Window::kHamming:
          v = 25.0 / 46.0 - (21.0 / 46.0) * std::cos(2 * a);
          break;
        default:
          v = 0.42 - 0.5 * std::cos(2 * a) + 0.08 * std::cos(4 * a);
          break;
      }
      if (type_ == DataType::kFloat32) {
        y->mutable_data<float>()[n] = static_cast<float>(v);
      } else {
        y->mutable_data<double>()[n] = v;
      }
    }
    return absl::OkStatus();
  }

 private:
  WindowKernel(const KernelInfo& info, Window w, DataType type, bool periodic)
      : node_(info), window_(w), type_(type), periodic_(periodic) {}

  const NodeLabel node_;
  const Window window_;
  const DataType type_;
  const bool periodic_;
};

}  // namespace

std::vector<engine::KernelDef> SignalWindowKernelDefs() {
  std::vector<engine::KernelDef> defs;
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    defs.push_back(CpuDef(engine::kOnnxDomain, op, 17, kMaxOpset,
                          {DataType::kInt32, DataType::kInt64}, FactoryOf<WindowKernel>()));
  }
  return defs;
}

}  // namespace inferd::kernels::cpu
