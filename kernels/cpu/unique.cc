// Unique (opset 11), own code: the distinct elements of X (no `axis`: X flattened), or its
// distinct slices along `axis`, with
//   Y                 the unique elements / slices: ascending when `sorted` (1, the default;
//                     slices compare lexicographically), else in order of first occurrence;
//   indices           [U] int64: where each one first occurs in X (along the axis);
//   inverse_indices   [L] int64: for each element / slice of X, its position in Y;
//   counts            [U] int64: how often each occurs.
// Every numeric type and bool. Items are sorted by (value, position) once, so equal items are
// adjacent with their first occurrence first. Scratch: one declared workspace of 5 int64 per
// item (order, group of each item, first position, count, output rank); nothing allocated per
// run beyond the outputs. Immutable after creation: thread-safe.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>

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

using UniqueTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                             uint32_t, uint64_t, bool>;
constexpr int kScratch = 0;

class UniqueKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<UniqueKernel>> Create(const KernelInfo& info) {
    std::optional<int64_t> axis;
    if (info.HasAttribute("axis")) axis = info.GetInt("axis", 0);
    return std::unique_ptr<UniqueKernel>(
        new UniqueKernel(info, axis, info.GetInt("sorted", 1) != 0));
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (shapes.empty()) return {};
    const Geometry g = GeometryOf(shapes[0]);
    if (g.len < 0) return {};
    const std::optional<int64_t> bytes = inferd::CheckedMul<int64_t>(g.len, 5 * 8);
    if (!bytes) return {};
    return {{kScratch, static_cast<size_t>(std::max<int64_t>(*bytes, 8))}};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const Shape& s = x->shape();
    int axis = -1;
    if (axis_.has_value()) {
      INFERD_ASSIGN_OR_RETURN(axis, NormalizeAxis(*axis_, s.rank(), node_));
    }
    const Geometry g = GeometryOf(s);
    if (g.len < 0) return node_.InvalidArgument("bad axis");
    if (!inferd::CheckedMul<int64_t>(g.len, 5 * 8)) {
      return node_.InvalidArgument("input too large (size overflow)");
    }
    INFERD_ASSIGN_OR_RETURN(void* ws, ctx.GetWorkspace(kScratch));
    int64_t* order = static_cast<int64_t*>(ws);
    int64_t* group = order + g.len;  // group of item i (sorted-group index)
    int64_t* first = group + g.len;  // per sorted group: first position
    int64_t* count = first + g.len;  // per sorted group: occurrences
    int64_t* rank = count + g.len;   // per sorted group: its index in Y
    return Dispatch(UniqueTypes{}, x->dtype(), node_, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      const T* data = x->data<T>();
      // Lexicographic comparison of items a and b (slices x[o, a, :] over all o).
      auto less = [&](int64_t a, int64_t b) {
        for (int64_t o = 0; o < g.outer; ++o) {
          const T* pa = data + (o * g.len + a) * g.inner;
          const T* pb = data + (o * g.len + b) * g.inner;
          for (int64_t k = 0; k < g.inner; ++k) {
            if (pa[k] < pb[k]) return true;
            if (pb[k] < pa[k]) return false;
          }
        }
        return false;
      };
      // pass 1: sort items by (value, position); equal items end up adjacent.
      for (int64_t i = 0; i < g.len; ++i) order[i] = i;
      std::stable_sort(order, order + g.len, less);
      // pass 2: groups of equal items, their first position and count.
      int64_t groups = 0;
      for (int64_t k = 0; k < g.len; ++k) {
        if (k == 0 || less(order[k - 1], order[k])) {
          first[groups] = order[k];
          count[groups] = 0;
          ++groups;
        }
        group[order[k]] = groups - 1;
        ++count[groups - 1];
      }
      // pass 3: each group's index in Y: sorted order, or by first occurrence.
      if (sorted_) {
        for (int64_t gi = 0; gi < groups; ++gi) rank[gi] = gi;
      } else {
        // order[] is free again: reuse it for the groups sorted by first position.
        for (int64_t gi = 0; gi < groups; ++gi) order[gi] = gi;
        std::sort(order, order + groups, [&](int64_t a, int64_t b) { return first[a] < first[b]; });
        for (int64_t r = 0; r < groups; ++r) rank[order[r]] = r;
      }
      // pass 4: outputs.
      std::vector<int64_t> ydims{groups};
      if (axis >= 0) {
        ydims.assign(s.dims().begin(), s.dims().end());
        ydims[axis] = groups;
      }
      INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), Shape(ydims)));
      T* yd = y->mutable_data<T>();
      for (int64_t gi = 0; gi < groups; ++gi) {
        for (int64_t o = 0; o < g.outer; ++o) {
          std::memcpy(yd + (o * groups + rank[gi]) * g.inner,
                      data + (o * g.len + first[gi]) * g.inner, sizeof(T) * g.inner);
        }
      }
      if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
        INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(1, DataType::kInt64, {groups}));
        for (int64_t gi = 0; gi < groups; ++gi) t->mutable_data<int64_t>()[rank[gi]] = first[gi];
      }
      if (ctx.num_outputs() > 2 && ctx.output_wanted(2)) {
        INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(2, DataType::kInt64, {g.len}));
        for (int64_t i = 0; i < g.len; ++i) t->mutable_data<int64_t>()[i] = rank[group[i]];
      }
      if (ctx.num_outputs() > 3 && ctx.output_wanted(3)) {
        INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(3, DataType::kInt64, {groups}));
        for (int64_t gi = 0; gi < groups; ++gi) t->mutable_data<int64_t>()[rank[gi]] = count[gi];
      }
      return absl::OkStatus();
    });
  }

 private:
  // X seen as [outer, len, inner] around the axis; items are the len slices. len < 0: bad axis.
  struct Geometry {
    int64_t outer = 1, len = -1, inner = 1;
  };

  Geometry GeometryOf(const Shape& s) const {
    Geometry g;
    if (!axis_.has_value()) {
      g.len = s.NumElements();
      return g;
    }
    const int64_t rank = static_cast<int64_t>(s.rank());
    if (*axis_ < -rank || *axis_ >= rank) return g;
    const size_t a = static_cast<size_t>(*axis_ < 0 ? *axis_ + rank : *axis_);
    g.outer = s.SizeBetween(0, a);
    g.len = s[a];
    g.inner = s.SizeFrom(a + 1);
    return g;
  }

  UniqueKernel(const KernelInfo& info, std::optional<int64_t> axis, bool sorted)
      : node_(info), axis_(axis), sorted_(sorted) {}

  const NodeLabel node_;
  const std::optional<int64_t> axis_;
  const bool sorted_;
};

}  // namespace

std::vector<engine::KernelDef> UniqueKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "Unique", 11, kMaxOpset, TypesOf(UniqueTypes{}),
                 FactoryOf<UniqueKernel>())};
}

}  // namespace inferd::kernels::cpu
