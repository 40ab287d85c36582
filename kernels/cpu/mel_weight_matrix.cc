// MelWeightMatrix (opset 17), own code: the [dft_length / 2 + 1, num_mel_bins] matrix of
// triangular filters that maps a onesided magnitude spectrum to mel bands. Inputs: num_mel_bins,
// dft_length, sample_rate (int32 / int64 scalars), lower_edge_hertz, upper_edge_hertz (float32 /
// float64 scalars); output_datatype (float32 default, or float64).
// The mel scale is mel(f) = 2595 log10(1 + f / 700). num_mel_bins + 2 edges are spaced evenly in
// mel from the lower edge, step (mel(upper) - mel(lower)) / (num_mel_bins + 2) (the step the
// ONNX reference and its node test use), mapped back to Hertz and to spectrogram bins
// floor((dft_length + 1) * f / sample_rate). Filter i rises from edge i to edge i + 1 (a single
// 1 when they coincide) and falls to edge i + 2. The mel edges and step are computed in the
// inputs' float type, the rest in double, as the reference does. Immutable after creation:
// thread-safe.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class MelWeightMatrixKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<MelWeightMatrixKernel>> Create(const KernelInfo& info) {
    const auto type = static_cast<DataType>(info.GetInt("output_datatype", 1));
    if (type != DataType::kFloat32 && type != DataType::kFloat64) {
      return info.Error(absl::StrCat("output_datatype ", info.GetInt("output_datatype", 1),
                                     " is not supported (float32 and float64 are)"));
    }
    return std::unique_ptr<MelWeightMatrixKernel>(new MelWeightMatrixKernel(info, type));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    int64_t ints[3];
    const char* names[3] = {"num_mel_bins", "dft_length", "sample_rate"};
    for (int i = 0; i < 3; ++i) {
      INFERD_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, i, node_));
      if (t->NumElements() != 1) {
        return node_.InvalidArgument(absl::StrCat(names[i], " must be a scalar"));
      }
      if (t->dtype() == DataType::kInt64) {
        ints[i] = t->data<int64_t>()[0];
      } else if (t->dtype() == DataType::kInt32) {
        ints[i] = t->data<int32_t>()[0];
      } else {
        return node_.InvalidArgument(absl::StrCat(names[i], " must be int32 or int64"));
      }
      if (ints[i] <= 0) {
        return node_.InvalidArgument(absl::StrCat(names[i], " must be > 0, got ", ints[i]));
      }
    }
    const int64_t mel_bins = ints[0], dft_length = ints[1], sample_rate = ints[2];
    INFERD_ASSIGN_OR_RETURN(const Tensor* lo_t, RequiredInput(ctx, 3, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* hi_t, RequiredInput(ctx, 4, node_));
    if (lo_t->NumElements() != 1 || hi_t->NumElements() != 1 || lo_t->dtype() != hi_t->dtype()) {
      return node_.InvalidArgument(
          "lower_edge_hertz and upper_edge_hertz must be scalars of one float type");
    }
    const int64_t spectrum_bins = dft_length / 2 + 1;
    const std::vector<int64_t> out = {spectrum_bins, mel_bins};
    if (!inferd::CheckedProduct(out) || mel_bins > (int64_t{1} << 30)) {
      return node_.InvalidArgument("the output size overflows");
    }
    double lo_mel = 0, step = 0;
    INFERD_RETURN_IF_ERROR(Dispatch(FloatTypes{}, lo_t->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T lo = lo_t->data<T>()[0], hi = hi_t->data<T>()[0];
      if (!(lo >= 0 && lo <= hi)) {
        return node_.InvalidArgument("the edges must satisfy 0 <= lower_edge_hertz <= upper");
      }
      const T lo_m = T(2595) * std::log10(T(1) + lo / T(700));
      const T hi_m = T(2595) * std::log10(T(1) + hi / T(700));
      lo_mel = static_cast<double>(lo_m);
      step = static_cast<double>((hi_m - lo_m) / static_cast<T>(mel_bins + 2));
      return absl::OkStatus();
    }));
    // Edge i as a spectrogram bin.
    auto edge = [&](int64_t i) {
      const double mel = static_cast<double>(i) * step + lo_mel;
      const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
      const double bin =
          std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
      // Far past the spectrum (or infinite): any bin past it cuts the same.
      return bin < 4e18 ? static_cast<int64_t>(bin) : int64_t{4} << 60;
    };
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, type_, Shape(out)));
    return Dispatch(FloatTypes{}, type_, node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* w = y->mutable_data<T>();
      std::fill(w, w + y->NumElements(), T(0));
      // Writes inside the matrix only: edges past the spectrum (upper edge above Nyquist) are cut.
      auto set = [&](int64_t j, int64_t i, double v) {
        if (j >= 0 && j < spectrum_bins) w[j * mel_bins + i] = static_cast<T>(v);
      };
      int64_t left = edge(0), center = edge(1);
      for (int64_t i = 0; i < mel_bins; ++i) {
        const int64_t right = edge(i + 2);
        if (center == left) {
          set(center, i, 1.0);
        } else {
          for (int64_t j = std::max<int64_t>(left, 0); j <= std::min(center, spectrum_bins); ++j) {
            set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
          }
        }
        for (int64_t j = std::max<int64_t>(center, 0); j < std::min(right, spectrum_bins); ++j) {
          set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
        }
        left = center;
        center = right;
      }
      return absl::OkStatus();
    });
  }

 private:
  MelWeightMatrixKernel(const KernelInfo& info, DataType type) : node_(info), type_(type) {}

  const NodeLabel node_;
  const DataType type_;
};

}  // namespace

std::vector<engine::KernelDef> MelWeightMatrixKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "MelWeightMatrix", 17, kMaxOpset,
                 {DataType::kInt32, DataType::kInt64}, FactoryOf<MelWeightMatrixKernel>())};
}

}  // namespace inferd::kernels::cpu
