// Pad's arguments, shared by the CPU and CUDA Pad kernels (pad.cc, kernels/cuda/pad_kernel.cc):
// the mode, read at creation, and per run the full pads, the constant value and the output shape,
// from the attributes (opsets 2-10) or the inputs (11+: pads, constant_value; 18+: axes). The
// inputs are read on the host (the CUDA kernel declares them as host inputs). Immutable after
// creation; thread-safe.
//
// Example:
//   INFERD_ASSIGN_OR_RETURN(PadArgs args, PadArgs::FromInfo(info));      // at creation
//   INFERD_ASSIGN_OR_RETURN(PadPlan plan, args.Resolve(ctx, *x));        // in Compute
#ifndef INFERD_KERNELS_CPU_PAD_ARGS_H_
#define INFERD_KERNELS_CPU_PAD_ARGS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/kernel.h"
#include "engine/tensor.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"

namespace inferd::kernels::cpu {

// constant: the value; edge: repeat the border element; reflect: mirror without repeating the
// border (pads wider than the dimension reflect again, as numpy does); wrap (opset 19): circular.
enum class PadMode { kConstant, kEdge, kReflect, kWrap };

struct PadPlan {
  Dims pads;                    // 2 * rank: the begins, then the ends; negative ones crop
  unsigned char value[8] = {};  // constant mode: the value's bytes in the input's type
  engine::Shape out_shape;
};

class PadArgs {
 public:
  // INVALID_ARGUMENT for an unknown mode (wrap before opset 19) or missing `pads` (opsets 2-10).
  static absl::StatusOr<PadArgs> FromInfo(const engine::KernelInfo& info);

  PadMode mode() const { return mode_; }

  // The plan for input `x` (of at most 8-byte elements): pads expanded to every dimension,
  // checked against x's rank; INVALID_ARGUMENT for a dimension cropped below 0 or an empty one
  // padded in a mode other than constant.
  absl::StatusOr<PadPlan> Resolve(const engine::KernelContext& ctx, const engine::Tensor& x) const;

 private:
  PadArgs(const engine::KernelInfo& info, PadMode mode);

  absl::Status ExpandAxesPads(const engine::Tensor& axes_tensor, size_t rank, Dims* pads) const;
  absl::Status AttributeValue(engine::DataType type, unsigned char* value) const;

  NodeLabel node_;
  PadMode mode_;
  bool inputs_;  // opset 11+
  std::vector<int64_t> pads_attr_;
  float value_attr_;
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_PAD_ARGS_H_
