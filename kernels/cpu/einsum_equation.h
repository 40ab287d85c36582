// EinsumEquation: an Einsum equation parsed once ("bij,bjk->bik", "...ii->...i", "i,i"), and
// bound per run to the operands' shapes: every letter's size, the output's letters and shape, and
// each operand as a strided view with one dim per distinct letter (a repeated letter's strides
// add up: the diagonal; size-1 dims are left out: numpy broadcasting). Internal to the Einsum
// kernel. Immutable after Parse; Bind is const and thread-safe.
//
// Example:
//   EinsumEquation eq = *EinsumEquation::Parse("bij,bjk->bik", node);
//   EinsumBinding b = *eq.Bind({Shape{2, 3, 4}, Shape{2, 4, 5}}, node);
//   b.out_shape;             // [2,3,5]
//   b.views[1].StrideOf('k' - 'a');  // 1
#ifndef INFERD_KERNELS_CPU_EINSUM_EQUATION_H_
#define INFERD_KERNELS_CPU_EINSUM_EQUATION_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/shape.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/strided_walk.h"

namespace inferd::kernels::cpu {

// Letters are 0..51 ('a'-'z', then 'A'-'Z'); the dims an ellipsis stands for are
// kEllipsisLabel + i, right-aligned across operands.
inline constexpr int kEllipsisLabel = 52;
inline constexpr int kMaxEllipsisRank = 16;
inline constexpr int kMaxLabels = kEllipsisLabel + kMaxEllipsisRank;

using LabelList = absl::InlinedVector<int, 8>;

struct EinsumBinding;

// One tensor seen through its distinct letters.
struct EinsumView {
  LabelList labels;
  Dims sizes, strides;

  bool Has(int label) const;
  int64_t StrideOf(int label) const;  // 0 when absent
  LabelList LabelsNotIn(const LabelList& others) const;
  bool Empty() const;  // some dim is 0
  // A row-major tensor over `labels` (sizes from the binding; size-1 letters left out).
  static EinsumView Contiguous(const LabelList& labels, const EinsumBinding& binding);
};

struct EinsumBinding {
  std::array<int64_t, kMaxLabels> size{};  // per letter (meaningful for those used)
  LabelList out_labels;
  engine::Shape out_shape;
  absl::InlinedVector<EinsumView, 2> views;  // one per operand

  Dims SizesOf(const LabelList& labels) const;
};

class EinsumEquation {
 public:
  // INVALID_ARGUMENT naming the node for a malformed equation.
  static absl::StatusOr<EinsumEquation> Parse(absl::string_view equation, const NodeLabel& node);

  int num_operands() const { return static_cast<int>(inputs_.size()); }
  // INVALID_ARGUMENT for shapes that do not fit the equation (ranks, letter sizes).
  absl::StatusOr<EinsumBinding> Bind(absl::Span<const engine::Shape> shapes,
                                     const NodeLabel& node) const;

 private:
  // A term's letters in order; kEllipsisLabel marks where "..." stands.
  std::vector<LabelList> inputs_;
  LabelList output_;
  bool explicit_output_ = false;
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_EINSUM_EQUATION_H_
