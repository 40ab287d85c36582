#include "kernels/cpu/window.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace inferd::kernels::cpu {
namespace {

absl::Status CheckCount(const std::vector<int64_t>& v, size_t expected, absl::string_view name,
                        const NodeLabel& node) {
  if (v.empty() || v.size() == expected) return absl::OkStatus();
  return node.InvalidArgument(
      absl::StrCat("attribute '", name, "' has ", v.size(), " values, expected ", expected, " for ",
                   expected / (name == "pads" ? 2 : 1), " spatial dimensions"));
}

}  // namespace

absl::StatusOr<WindowAttributes> WindowAttributes::Read(const engine::KernelInfo& info) {
  WindowAttributes a;
  a.kernel_shape = info.GetInts("kernel_shape");
  a.strides = info.GetInts("strides");
  a.dilations = info.GetInts("dilations");
  a.pads = info.GetInts("pads");
  a.auto_pad = info.GetString("auto_pad", "NOTSET");
  if (a.auto_pad.empty()) a.auto_pad = "NOTSET";
  a.ceil_mode = info.GetInt("ceil_mode", 0) != 0;
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID" && a.auto_pad != "SAME_UPPER" &&
      a.auto_pad != "SAME_LOWER") {
    return info.Error(absl::StrCat("auto_pad '", a.auto_pad,
                                   "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER"));
  }
  if (a.auto_pad != "NOTSET" && !a.pads.empty() &&
      std::any_of(a.pads.begin(), a.pads.end(), [](int64_t p) { return p != 0; })) {
    return info.Error(absl::StrCat("explicit pads [", absl::StrJoin(a.pads, ","),
                                   "] cannot be combined with auto_pad ", a.auto_pad));
  }
  return a;
}

absl::StatusOr<WindowGeometry> ComputeWindow(const WindowAttributes& attrs,
                                             absl::Span<const int64_t> in,
                                             absl::Span<const int64_t> kernel,
                                             const NodeLabel& node) {
  const size_t n = in.size();
  if (kernel.size() != n) {
    return node.InvalidArgument(absl::StrCat("the window has ", kernel.size(),
                                             " dimensions but the input has ", n,
                                             " spatial dimensions"));
  }
  if (auto s = CheckCount(attrs.strides, n, "strides", node); !s.ok()) return s;
  if (auto s = CheckCount(attrs.dilations, n, "dilations", node); !s.ok()) return s;
  if (auto s = CheckCount(attrs.pads, 2 * n, "pads", node); !s.ok()) return s;
  WindowGeometry g;
  g.kernel.assign(kernel.begin(), kernel.end());
  g.strides = attrs.strides.empty() ? std::vector<int64_t>(n, 1) : attrs.strides;
  g.dilations = attrs.dilations.empty() ? std::vector<int64_t>(n, 1) : attrs.dilations;
  g.pad_begin.assign(n, 0);
  g.pad_end.assign(n, 0);
  g.out.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (g.kernel[i] < 1 || g.strides[i] < 1 || g.dilations[i] < 1) {
      return node.InvalidArgument(absl::StrCat("spatial dimension ", i, ": kernel ", g.kernel[i],
                                               ", stride ", g.strides[i], " and dilation ",
                                               g.dilations[i], " must all be >= 1"));
    }
    const int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (attrs.auto_pad == "SAME_UPPER" || attrs.auto_pad == "SAME_LOWER") {
      g.out[i] = (in[i] + g.strides[i] - 1) / g.strides[i];
      const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * g.strides[i] + extent - in[i]);
      const int64_t small = total / 2, large = total - total / 2;
      g.pad_begin[i] = attrs.auto_pad == "SAME_UPPER" ? small : large;
      g.pad_end[i] = total - g.pad_begin[i];
    } else {
      if (attrs.auto_pad == "NOTSET" && !attrs.pads.empty()) {
        g.pad_begin[i] = attrs.pads[i];
        g.pad_end[i] = attrs.pads[i + n];
        if (g.pad_begin[i] < 0 || g.pad_end[i] < 0) {
          return node.InvalidArgument(
              absl::StrCat("pads [", absl::StrJoin(attrs.pads, ","), "] must not be negative"));
        }
      }
      const int64_t span = in[i] + g.pad_begin[i] + g.pad_end[i] - extent;
      if (span < 0) {
        return node.InvalidArgument(
            absl::StrCat("spatial dimension ", i, ": the window (extent ", extent,
                         " with dilation) is larger than the padded input (",
                         in[i] + g.pad_begin[i] + g.pad_end[i], ")"));
      }
      g.out[i] =
          (attrs.ceil_mode ? (span + g.strides[i] - 1) / g.strides[i] : span / g.strides[i]) + 1;
      // A last window must start inside the input or the left padding (as PyTorch and recent
      // ONNX Runtime do), else ceil_mode would produce a window made only of right padding.
      if (attrs.ceil_mode && (g.out[i] - 1) * g.strides[i] >= in[i] + g.pad_begin[i]) --g.out[i];
    }
  }
  // Floor division gives `out` for end paddings in [needed, needed + stride - 1]: take the one
  // nearest the real padding, preferring >= 0.
  g.pad_end_floor = g.pad_end;
  for (size_t i = 0; i < n; ++i) {
    const int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t needed = (g.out[i] - 1) * g.strides[i] + extent - in[i] - g.pad_begin[i];
    const int64_t highest = needed + g.strides[i] - 1;
    g.pad_end_floor[i] =
        std::clamp(g.pad_end[i], std::min<int64_t>(std::max<int64_t>(needed, 0), highest), highest);
  }
  return g;
}

}  // namespace inferd::kernels::cpu
