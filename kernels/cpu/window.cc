#include "kernels/cpu/window.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace inferd::kernels::cpu {
namespace {

absl::Status CheckCount(const std::vector<int64_t>& v, size_t expected, absl::string_view name,
                        const NodeLabel& node) {
  if (v.empty() || v.size() == expected) return absl::OkStatus();
  return node.InvalidArgument(
      absl::StrCat("attribute '", name, "' has ", v.size(), " values, expected ", expected, " for ",
                   expected / (name == "pads" ? 2 : 1), " spatial dimensions"));
}

// The value of a per-spatial-dim attribute `v` (empty: `fallback`), checked for count.
absl::StatusOr<std::vector<int64_t>> PerDim(const std::vector<int64_t>& v, size_t n,
                                            int64_t fallback, absl::string_view name,
                                            const NodeLabel& node) {
  if (v.empty()) return std::vector<int64_t>(n, fallback);
  if (v.size() != n) {
    return node.InvalidArgument(
        absl::StrCat("attribute '", name, "' has ", v.size(), " values, expected ", n));
  }
  return v;
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

absl::StatusOr<TransposedWindowAttributes> TransposedWindowAttributes::Read(
    const engine::KernelInfo& info) {
  TransposedWindowAttributes a;
  INFERD_ASSIGN_OR_RETURN(a.window, WindowAttributes::Read(info));
  a.output_padding = info.GetInts("output_padding");
  a.output_shape = info.GetInts("output_shape");
  for (int64_t p : a.output_padding) {
    if (p < 0) {
      return info.Error(absl::StrCat("output_padding [", absl::StrJoin(a.output_padding, ","),
                                     "] must not be negative"));
    }
  }
  return a;
}

absl::StatusOr<WindowGeometry> ComputeTransposedWindow(const TransposedWindowAttributes& attrs,
                                                       absl::Span<const int64_t> in,
                                                       absl::Span<const int64_t> kernel,
                                                       const NodeLabel& node) {
  const size_t sp = in.size();
  const WindowAttributes& window = attrs.window;
  INFERD_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                          PerDim(window.strides, sp, 1, "strides", node));
  INFERD_ASSIGN_OR_RETURN(std::vector<int64_t> dilations,
                          PerDim(window.dilations, sp, 1, "dilations", node));
  INFERD_ASSIGN_OR_RETURN(std::vector<int64_t> out_padding,
                          PerDim(attrs.output_padding, sp, 0, "output_padding", node));
  INFERD_ASSIGN_OR_RETURN(std::vector<int64_t> pads, PerDim(window.pads, 2 * sp, 0, "pads", node));
  std::vector<int64_t> out_spatial = attrs.output_shape;
  if (out_spatial.size() == sp + 2) out_spatial.erase(out_spatial.begin(), out_spatial.begin() + 2);
  if (!out_spatial.empty() && out_spatial.size() != sp) {
    return node.InvalidArgument(absl::StrCat("output_shape [",
                                             absl::StrJoin(attrs.output_shape, ","),
                                             "] does not have ", sp, " spatial dimensions"));
  }
  if (kernel.size() != sp) {
    return node.InvalidArgument(absl::StrCat("the window has ", kernel.size(),
                                             " dimensions but the input has ", sp,
                                             " spatial dimensions"));
  }
  const std::string& auto_pad = window.auto_pad;
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  WindowGeometry g;
  g.kernel.assign(kernel.begin(), kernel.end());
  g.strides = strides;
  g.dilations = dilations;
  for (size_t i = 0; i < sp; ++i) {
    const int64_t s = strides[i], d = dilations[i], k = kernel[i];
    if (s < 1 || d < 1 || k < 1) {
      return node.InvalidArgument(absl::StrCat("spatial dimension ", i, ": kernel ", k, ", stride ",
                                               s, " and dilation ", d, " must all be >= 1"));
    }
    const int64_t ext = (k - 1) * d + 1;
    const int64_t natural = s * (in[i] - 1) + out_padding[i] + ext;
    int64_t out = 0, head = 0;
    if (!out_spatial.empty() || same) {
      out = !out_spatial.empty() ? out_spatial[i] : in[i] * s;
      const int64_t total = std::max<int64_t>(0, natural - out);
      head = auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
    } else {
      if (pads[i] < 0 || pads[i + sp] < 0) {
        return node.InvalidArgument(
            absl::StrCat("pads [", absl::StrJoin(pads, ","), "] must not be negative"));
      }
      if (auto_pad == "NOTSET") head = pads[i];
      out = natural - head - (auto_pad == "NOTSET" ? pads[i + sp] : 0);
    }
    if (out < 0) {
      return node.InvalidArgument(
          absl::StrCat("spatial dimension ", i, ": the output size ", out, " is negative"));
    }
    g.out.push_back(out);
    g.pad_begin.push_back(head);
    g.pad_end.push_back(s * (in[i] - 1) + ext - head - out);
  }
  g.pad_end_floor = g.pad_end;
  return g;
}

}  // namespace inferd::kernels::cpu
