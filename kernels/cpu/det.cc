// Det (opset 11), own code: the determinant of each square matrix in X [*, M, M], float32 and
// float64, output [*]. LU decomposition with partial pivoting in double, one matrix at a time in
// a declared workspace of M * M doubles (nothing allocated per run). Immutable after creation:
// thread-safe.
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>

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

using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

constexpr int kMatrix = 0;

class DetKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<DetKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<DetKernel>(new DetKernel(info));
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (shapes.empty() || shapes[0].rank() < 2) return {};
    const int64_t m = shapes[0][shapes[0].rank() - 1];
    const std::optional<int64_t> n = inferd::CheckedMul<int64_t>(m, m);
    if (!n || !inferd::CheckedMul<int64_t>(*n, 8)) return {};
    return {{kMatrix, static_cast<size_t>(std::max<int64_t>(*n * 8, 8))}};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const Shape& s = x->shape();
    if (s.rank() < 2 || s[s.rank() - 1] != s[s.rank() - 2]) {
      return node_.InvalidArgument(
          absl::StrCat("X must be [*, M, M] (square matrices), got ", s.ToString()));
    }
    const int64_t m = s[s.rank() - 1];
    if (!inferd::CheckedMul<int64_t>(m, m)) return node_.InvalidArgument("M * M overflows");
    const std::vector<int64_t> batch(s.dims().begin(), s.dims().end() - 2);
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), Shape(batch)));
    if (y->NumElements() == 0) return absl::OkStatus();
    INFERD_ASSIGN_OR_RETURN(void* ws, ctx.GetWorkspace(kMatrix));
    double* a = static_cast<double*>(ws);
    return Dispatch(FloatTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int64_t b = 0; b < y->NumElements(); ++b) {
        const T* src = x->data<T>() + b * m * m;
        for (int64_t i = 0; i < m * m; ++i) a[i] = static_cast<double>(src[i]);
        y->mutable_data<T>()[b] = static_cast<T>(Determinant(a, m));
      }
      return absl::OkStatus();
    });
  }

 private:
  explicit DetKernel(const KernelInfo& info) : node_(info) {}

  // Overwrites a (row-major m x m) with its LU factors; returns the determinant (1 for m = 0).
  static double Determinant(double* a, int64_t m) {
    double det = 1;
    for (int64_t k = 0; k < m; ++k) {
      int64_t pivot = k;
      for (int64_t r = k + 1; r < m; ++r) {
        if (std::fabs(a[r * m + k]) > std::fabs(a[pivot * m + k])) pivot = r;
      }
      if (a[pivot * m + k] == 0) return 0;
      if (pivot != k) {
        for (int64_t c = 0; c < m; ++c) std::swap(a[k * m + c], a[pivot * m + c]);
        det = -det;
      }
      const double p = a[k * m + k];
      det *= p;
      for (int64_t r = k + 1; r < m; ++r) {
        const double f = a[r * m + k] / p;
        for (int64_t c = k + 1; c < m; ++c) a[r * m + c] -= f * a[k * m + c];
      }
    }
    return det;
  }

  const NodeLabel node_;
};

}  // namespace

std::vector<engine::KernelDef> DetKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "Det", 11, kMaxOpset, TypesOf(FloatTypes{}),
                 FactoryOf<DetKernel>())};
}

}  // namespace inferd::kernels::cpu
