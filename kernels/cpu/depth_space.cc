// DepthToSpace (DCR mode; CRD from opset 11) and SpaceToDepth on [N, C, H, W] tensors of any
// fixed-size element type, with `blocksize` b. Both are a 6-D transpose, written as one
// StridedCopy over the output's [N, C', H, b, W, b] (resp. [N, b, b, C, H', W']) view.
// DCR: out[n, c, h*b+i, w*b+j] = in[n, (i*b + j)*C' + c, h, w]
// CRD: out[n, c, h*b+i, w*b+j] = in[n, c*b*b + i*b + j, h, w]
// SpaceToDepth: out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b+i, w*b+j]
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class DepthSpaceKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<DepthSpaceKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(int64_t b, info.RequireInt("blocksize"));
    if (b < 1) return info.Error(absl::StrCat("blocksize ", b, " must be >= 1"));
    const bool to_space = info.op_type() == "DepthToSpace";
    bool crd = false;
    if (to_space && info.opset() >= 11) {
      const std::string mode = info.GetString("mode", "DCR");
      if (mode != "DCR" && mode != "CRD") {
        return info.Error(absl::StrCat("unknown mode '", mode, "' (expected DCR or CRD)"));
      }
      crd = mode == "CRD";
    }
    return std::unique_ptr<DepthSpaceKernel>(new DepthSpaceKernel(info, b, to_space, crd));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const size_t elem = engine::ElementSize(x->dtype());
    if (elem == 0) return UnsupportedType(x->dtype(), node_);
    const Shape& s = x->shape();
    if (s.rank() != 4) {
      return node_.InvalidArgument(absl::StrCat("expected a 4-D input, got ", s.ToString()));
    }
    const int64_t n = s[0], c = s[1], h = s[2], w = s[3], b = blocksize_;
    const int64_t hw = h * w, chw = c * hw;
    Shape out_shape;
    Dims dims, strides;
    if (to_space_) {
      if (c % (b * b) != 0) {
        return node_.InvalidArgument(
            absl::StrCat("channels ", c, " are not divisible by ", "blocksize^2 = ", b * b));
      }
      const int64_t co = c / (b * b);
      out_shape = Shape{n, co, h * b, w * b};
      dims = {n, co, h, b, w, b};
      if (crd_) {
        strides = {chw, b * b * hw, w, b * hw, 1, hw};
      } else {
        strides = {chw, hw, w, b * co * hw, 1, co * hw};
      }
    } else {
      if (h % b != 0 || w % b != 0) {
        return node_.InvalidArgument(
            absl::StrCat("spatial dims of ", s.ToString(), " are not divisible by blocksize ", b));
      }
      out_shape = Shape{n, c * b * b, h / b, w / b};
      dims = {n, b, b, c, h / b, w / b};
      strides = {chw, w, 1, hw, b * w, b};
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    StridedCopy(x->raw_data(), y->raw_mutable_data(), elem, dims, strides, 0, ctx.threads());
    return absl::OkStatus();
  }

 private:
  DepthSpaceKernel(const KernelInfo& info, int64_t b, bool to_space, bool crd)
      : node_(info), blocksize_(b), to_space_(to_space), crd_(crd) {}

  const NodeLabel node_;
  const int64_t blocksize_;
  const bool to_space_, crd_;
};

}  // namespace

std::vector<engine::KernelDef> DepthSpaceKernelDefs() {
  const auto& types = FixedSizeTypes();
  return {CpuDef(engine::kOnnxDomain, "DepthToSpace", 1, 10, types, FactoryOf<DepthSpaceKernel>()),
          CpuDef(engine::kOnnxDomain, "DepthToSpace", 11, kMaxOpset, types,
                 FactoryOf<DepthSpaceKernel>()),
          CpuDef(engine::kOnnxDomain, "SpaceToDepth", 1, kMaxOpset, types,
                 FactoryOf<DepthSpaceKernel>())};
}

}  // namespace inferd::kernels::cpu
