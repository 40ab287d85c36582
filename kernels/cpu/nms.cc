// NonMaxSuppression (opsets 10 and 11), own code, float boxes and scores:
//   boxes [B, N, 4], scores [B, C, N], optional scalars max_output_boxes_per_class (int64; absent
//   or 0: nothing selected), iou_threshold (0), score_threshold (absent: no score filter);
//   center_point_box 0: [y1, x1, y2, x2] corners in any order, 1: [x_center, y_center, w, h].
//   Output selected_indices [K, 3] int64: (batch, class, box), by batch, then class, then in
//   selection order (descending score, ties to the lower box index).
// Per (batch, class): candidates with score > score_threshold sorted by score, taken greedily;
// a candidate is dropped when its IoU with an already selected box is > iou_threshold.
// Memory: one declared workspace (candidate order, N; selected boxes, B * C * N; per-class
// counts, B * C, all int64): nothing allocated per run. Immutable after creation: thread-safe.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
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

constexpr int kScratch = 0;

struct Box {
  float x_min, x_max, y_min, y_max;
};

class NmsKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<NmsKernel>> Create(const KernelInfo& info) {
    const int64_t center = info.GetInt("center_point_box", 0);
    if (center != 0 && center != 1) {
      return info.Error(absl::StrCat("center_point_box must be 0 or 1, got ", center));
    }
    return std::unique_ptr<NmsKernel>(new NmsKernel(info, center == 1));
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (shapes.size() < 2) return {};
    const std::optional<size_t> bytes = ScratchBytes(shapes[0], shapes[1]);
    if (!bytes.has_value()) return {};
    return {{kScratch, *bytes}};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* boxes, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* scores, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*boxes, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*scores, DataType::kFloat32, 1, node_));
    const Shape& bs = boxes->shape();
    const Shape& ss = scores->shape();
    if (bs.rank() != 3 || bs[2] != 4 || ss.rank() != 3 || ss[0] != bs[0] || ss[2] != bs[1]) {
      return node_.InvalidArgument(
          absl::StrCat("boxes must be [B, N, 4] and scores [B, C, N], got ", bs.ToString(), " and ",
                       ss.ToString()));
    }
    int64_t max_out = 0;
    float iou = 0;
    std::optional<float> score_min;
    if (const Tensor* t = ctx.num_inputs() > 2 ? ctx.input(2) : nullptr; t && t->NumElements()) {
      INFERD_RETURN_IF_ERROR(CheckType(*t, DataType::kInt64, 2, node_));
      max_out = std::max<int64_t>(0, t->data<int64_t>()[0]);
    }
    if (const Tensor* t = ctx.num_inputs() > 3 ? ctx.input(3) : nullptr; t && t->NumElements()) {
      INFERD_RETURN_IF_ERROR(CheckType(*t, DataType::kFloat32, 3, node_));
      iou = t->data<float>()[0];
      if (!(iou >= 0 && iou <= 1)) {
        return node_.InvalidArgument(absl::StrCat("iou_threshold must be in [0, 1], got ", iou));
      }
    }
    if (const Tensor* t = ctx.num_inputs() > 4 ? ctx.input(4) : nullptr; t && t->NumElements()) {
      INFERD_RETURN_IF_ERROR(CheckType(*t, DataType::kFloat32, 4, node_));
      score_min = t->data<float>()[0];
    }
    const int64_t batches = bs[0], num_boxes = bs[1], classes = ss[1];
    if (!ScratchBytes(bs, ss).has_value()) {
      return node_.InvalidArgument("boxes and scores are too large (size overflow)");
    }
    INFERD_ASSIGN_OR_RETURN(void* scratch, ctx.GetWorkspace(kScratch));
    int64_t* order = static_cast<int64_t*>(scratch);
    int64_t* selected = order + num_boxes;                       // [B * C, N]
    int64_t* counts = selected + batches * classes * num_boxes;  // [B * C]
    const float* box_data = boxes->data<float>();
    const float* score_data = scores->data<float>();
    int64_t total = 0;
    for (int64_t b = 0; b < batches; ++b) {
      const float* bb = box_data + b * num_boxes * 4;
      for (int64_t c = 0; c < classes; ++c) {
        const float* sc = score_data + (b * classes + c) * num_boxes;
        int64_t* sel = selected + (b * classes + c) * num_boxes;
        int64_t n_cand = 0;
        for (int64_t i = 0; i < num_boxes; ++i) {
          if (!score_min.has_value() || sc[i] > *score_min) order[n_cand++] = i;
        }
        std::stable_sort(order, order + n_cand,
                         [&](int64_t a, int64_t z) { return sc[a] > sc[z]; });
        int64_t n_sel = 0;
        for (int64_t k = 0; k < n_cand && n_sel < max_out; ++k) {
          const Box cand = Corners(bb + order[k] * 4);
          bool keep = true;
          for (int64_t s = 0; s < n_sel && keep; ++s) {
            keep = !Suppresses(cand, Corners(bb + sel[s] * 4), iou);
          }
          if (keep) sel[n_sel++] = order[k];
        }
        counts[b * classes + c] = n_sel;
        total += n_sel;
      }
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * out,
                            ctx.MakeOutputTensor(0, DataType::kInt64, Shape{total, 3}));
    int64_t* y = out->mutable_data<int64_t>();
    for (int64_t bc = 0; bc < batches * classes; ++bc) {
      for (int64_t s = 0; s < counts[bc]; ++s) {
        *y++ = bc / classes;
        *y++ = bc % classes;
        *y++ = selected[bc * num_boxes + s];
      }
    }
    return absl::OkStatus();
  }

 private:
  NmsKernel(const KernelInfo& info, bool center) : node_(info), center_(center) {}

  // Bytes of the scratch for boxes [B, N, 4] and scores [B, C, N]; nullopt on overflow or bad
  // shapes (Compute reports those).
  static std::optional<size_t> ScratchBytes(const Shape& bs, const Shape& ss) {
    if (bs.rank() != 3 || ss.rank() != 3) return std::nullopt;
    const std::optional<int64_t> bc = inferd::CheckedMul<int64_t>(bs[0], ss[1]);
    if (!bc) return std::nullopt;
    const std::optional<int64_t> sel = inferd::CheckedMul<int64_t>(*bc, bs[1]);
    if (!sel) return std::nullopt;
    std::optional<int64_t> n = inferd::CheckedAdd<int64_t>(*sel, *bc);
    if (n) n = inferd::CheckedAdd<int64_t>(*n, bs[1]);
    if (n) n = inferd::CheckedMul<int64_t>(*n, int64_t{8});
    if (!n) return std::nullopt;
    return static_cast<size_t>(std::max<int64_t>(*n, 8));
  }

  Box Corners(const float* p) const {
    if (center_) {
      const float hw = p[2] / 2, hh = p[3] / 2;
      return {p[0] - hw, p[0] + hw, p[1] - hh, p[1] + hh};
    }
    return {std::min(p[1], p[3]), std::max(p[1], p[3]), std::min(p[0], p[2]), std::max(p[0], p[2])};
  }

  static bool Suppresses(const Box& a, const Box& b, float threshold) {
    const float ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
    if (ix_max <= ix_min) return false;
    const float iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
    if (iy_max <= iy_min) return false;
    const float inter = (ix_max - ix_min) * (iy_max - iy_min);
    const float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
    const float area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
    const float uni = area_a + area_b - inter;
    if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0) return false;
    return inter / uni > threshold;
  }

  const NodeLabel node_;
  const bool center_;
};

}  // namespace

std::vector<engine::KernelDef> NmsKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "NonMaxSuppression", 10, kMaxOpset, {DataType::kFloat32},
                 FactoryOf<NmsKernel>())};
}

}  // namespace inferd::kernels::cpu
