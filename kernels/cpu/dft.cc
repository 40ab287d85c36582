// DFT (opsets 17 and 20) and STFT (opset 17), own code, float32 and float64, computed in double
// through FftPlan (fft.h: radix-2 for powers of two, Bluestein otherwise; O(n log n) either way).
//   DFT: input [..., 1 or 2] (real, or complex as (re, im) pairs) transformed along `axis` (an
//     attribute, default 1, in opset 17; an optional scalar input, default -2, in opset 20; it may
//     not be the last dim). dft_length (optional scalar) truncates or zero-pads the signal;
//     inverse scales by 1 / n; onesided keeps bins 0 .. n / 2. Output [..., 2].
//   STFT: signal [batch, length, 1 or 2], frame_step (scalar), window [frame_length] (optional),
//     frame_length (optional scalar; the window's length, else the signal's). Frame f is the
//     window times signal[f * step, f * step + frame_length); onesided (default 1) keeps bins 0 ..
//     frame_length / 2. Output [batch, frames, bins, 2], frames = (length - frame_length) / step
//     + 1.
// Decisions where the spec is silent: onesided on a complex input keeps the first n / 2 + 1 bins
// of the full transform; onesided together with inverse is refused.
// Scratch (the plan's table, one buffer per thread) is a declared workspace when its size follows
// from the input shapes and constant inputs, else an execution-arena temporary. Transforms are
// split over the intra-op pool. Immutable after creation: thread-safe.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/fft.h"
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
using Complex = FftPlan::Complex;

constexpr int kScratch = 0;

// A scalar int32 / int64 tensor's value, or INVALID_ARGUMENT naming `what`.
absl::StatusOr<int64_t> ScalarInt(const Tensor& t, absl::string_view what, const NodeLabel& node) {
  if (t.NumElements() != 1 || t.shape().rank() > 1) {
    return node.InvalidArgument(
        absl::StrCat(what, " must be a scalar, got ", t.shape().ToString()));
  }
  if (t.dtype() == DataType::kInt64) return t.data<int64_t>()[0];
  if (t.dtype() == DataType::kInt32) return t.data<int32_t>()[0];
  return node.InvalidArgument(absl::StrCat(what, " must be int32 or int64"));
}

// Bytes of a plan's table plus one scratch buffer per thread.
std::optional<int64_t> ScratchBytes(int64_t n, int threads) {
  if (n <= 0) return std::nullopt;
  const FftPlan plan(n, false);
  const std::optional<int64_t> table = plan.TableSize();
  if (!table) return std::nullopt;
  const std::optional<int64_t> per = inferd::CheckedMul<int64_t>(*plan.ScratchSize(), threads);
  const std::optional<int64_t> all = per ? inferd::CheckedAdd<int64_t>(*table, *per) : per;
  return all ? inferd::CheckedMul<int64_t>(*all, sizeof(Complex)) : all;
}

// The scratch memory of one run: the declared workspace when `declared`, else a temporary.
absl::StatusOr<Complex*> Scratch(KernelContext& ctx, bool declared, int64_t bytes, Tensor& tmp) {
  if (declared) {
    INFERD_ASSIGN_OR_RETURN(void* ws, ctx.GetWorkspace(kScratch));
    return static_cast<Complex*>(ws);
  }
  INFERD_ASSIGN_OR_RETURN(
      tmp, ctx.MakeTemporaryTensor(DataType::kFloat64, Shape{bytes / int64_t{sizeof(double)}}));
  return reinterpret_cast<Complex*>(tmp.mutable_data<double>());
}

// Runs `count` transforms of length n: load(t, buf) fills buf[0, n), store(t, buf) reads the
// result. The table comes first in `scratch`, then one buffer per pool thread.
template <typename Load, typename Store>
void RunTransforms(int64_t n, bool inverse, int64_t count, Complex* scratch,
                   engine::ThreadPool& pool, Load&& load, Store&& store) {
  const FftPlan plan(n, inverse);
  plan.Init(scratch);
  const Complex* table = scratch;
  Complex* buffers = scratch + *plan.TableSize();
  const int64_t per = *plan.ScratchSize();
  const int64_t threads = pool.num_threads();
  pool.ParallelFor(threads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t w = begin; w < end; ++w) {
      Complex* buf = buffers + w * per;
      for (int64_t t = count * w / threads; t < count * (w + 1) / threads; ++t) {
        load(t, buf);
        plan.Transform(table, buf);
        store(t, buf);
      }
    }
  });
}

class DftKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<DftKernel>> Create(const KernelInfo& info) {
    const bool v20 = info.opset() >= 20;
    const bool inverse = info.GetInt("inverse", 0) != 0;
    const bool onesided = info.GetInt("onesided", 0) != 0;
    if (inverse && onesided) {
      return info.Error("onesided with inverse is not supported (give the full spectrum)");
    }
    // Whether the scratch size follows from shapes and constants (then it is declared).
    const bool length_known = !info.input_present(1) || info.input(1).constant != nullptr;
    const bool axis_known = !v20 || !info.input_present(2) || info.input(2).constant != nullptr;
    auto k = std::unique_ptr<DftKernel>(
        new DftKernel(info, v20, inverse, onesided, length_known && axis_known));
    k->axis_ = v20 ? -2 : info.GetInt("axis", 1);
    if (v20 && info.input_present(2) && info.input(2).constant != nullptr) {
      INFERD_ASSIGN_OR_RETURN(k->axis_, ScalarInt(*info.input(2).constant, "axis", k->node_));
    }
    if (info.input_present(1) && info.input(1).constant != nullptr) {
      INFERD_ASSIGN_OR_RETURN(const int64_t n,
                              ScalarInt(*info.input(1).constant, "dft_length", k->node_));
      k->const_length_ = n;
    }
    return k;
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (!declared_ || shapes.empty()) return {};
    const absl::StatusOr<Geometry> g = GeometryOf(shapes[0], axis_, const_length_);
    if (!g.ok()) return {};
    const std::optional<int64_t> bytes = ScratchBytes(g->n, threads_);
    if (!bytes) return {};
    return {{kScratch, static_cast<size_t>(*bytes)}};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    std::optional<int64_t> length;
    if (ctx.num_inputs() > 1 && ctx.input(1) != nullptr) {
      INFERD_ASSIGN_OR_RETURN(length, ScalarInt(*ctx.input(1), "dft_length", node_));
    }
    int64_t axis = axis_;
    if (v20_ && ctx.num_inputs() > 2 && ctx.input(2) != nullptr) {
      INFERD_ASSIGN_OR_RETURN(axis, ScalarInt(*ctx.input(2), "axis", node_));
    }
    INFERD_ASSIGN_OR_RETURN(const Geometry g, GeometryOf(x->shape(), axis, length));
    std::vector<int64_t> out(x->shape().dims().begin(), x->shape().dims().end());
    out[g.axis] = g.out_len;
    out.back() = 2;
    if (!inferd::CheckedProduct(out)) return node_.InvalidArgument("the output size overflows");
    const std::optional<int64_t> bytes = ScratchBytes(g.n, ctx.threads().num_threads());
    if (!bytes) return node_.InvalidArgument("the transform's scratch size overflows");
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), Shape(out)));
    if (y->NumElements() == 0) return absl::OkStatus();
    Tensor tmp;
    INFERD_ASSIGN_OR_RETURN(Complex * scratch, Scratch(ctx, declared_, *bytes, tmp));
    return Dispatch(FloatTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xd = x->data<T>();
      T* yd = y->mutable_data<T>();
      const int64_t copy = std::min(g.len_in, g.n);
      const double scale = inverse_ ? 1.0 / static_cast<double>(g.n) : 1.0;
      RunTransforms(
          g.n, inverse_, g.outer * g.inner, scratch, ctx.threads(),
          [&](int64_t t, Complex* buf) {
            const int64_t o = t / g.inner, i = t % g.inner;
            const T* src = xd + (o * g.len_in * g.inner + i) * g.comps;
            for (int64_t j = 0; j < copy; ++j) {
              const T* e = src + j * g.inner * g.comps;
              buf[j] = Complex(static_cast<double>(e[0]),
                               g.comps == 2 ? static_cast<double>(e[1]) : 0.0);
            }
            for (int64_t j = copy; j < g.n; ++j) buf[j] = 0;
          },
          [&](int64_t t, const Complex* buf) {
            const int64_t o = t / g.inner, i = t % g.inner;
            T* dst = yd + (o * g.out_len * g.inner + i) * 2;
            for (int64_t k = 0; k < g.out_len; ++k) {
              dst[k * g.inner * 2] = static_cast<T>(buf[k].real() * scale);
              dst[k * g.inner * 2 + 1] = static_cast<T>(buf[k].imag() * scale);
            }
          });
      return absl::OkStatus();
    });
  }

 private:
  DftKernel(const KernelInfo& info, bool v20, bool inverse, bool onesided, bool declared)
      : node_(info),
        v20_(v20),
        inverse_(inverse),
        onesided_(onesided),
        declared_(declared),
        threads_(info.intra_op_threads()) {}

  // The input seen as [outer, len_in, inner, comps] around the axis, and the transform's size.
  struct Geometry {
    int axis;
    int64_t outer, len_in, inner, comps, n, out_len;
  };

  absl::StatusOr<Geometry> GeometryOf(const Shape& s, int64_t axis,
                                      std::optional<int64_t> length) const {
    const int64_t rank = static_cast<int64_t>(s.rank());
    if (rank < 2 || (s[rank - 1] != 1 && s[rank - 1] != 2)) {
      return node_.InvalidArgument(
          absl::StrCat("input must be [..., 1] (real) or [..., 2] (complex), got ", s.ToString()));
    }
    if (axis < -rank || axis >= rank - 1 || axis == -1) {
      return node_.InvalidArgument(absl::StrCat("axis ", axis, " is outside [", -rank,
                                                ", -2] and [0, ", rank - 2, "] for input ",
                                                s.ToString()));
    }
    Geometry g;
    g.axis = static_cast<int>(axis < 0 ? axis + rank : axis);
    g.outer = s.SizeBetween(0, g.axis);
    g.len_in = s[g.axis];
    g.inner = s.SizeBetween(g.axis + 1, rank - 1);
    g.comps = s[rank - 1];
    g.n = length.value_or(g.len_in);
    if (g.n <= 0) {
      return node_.InvalidArgument(absl::StrCat("dft_length must be > 0, got ", g.n));
    }
    g.out_len = onesided_ ? g.n / 2 + 1 : g.n;
    return g;
  }

  const NodeLabel node_;
  const bool v20_, inverse_, onesided_, declared_;
  const int threads_;
  // Set once in Create.
  int64_t axis_ = 1;
  std::optional<int64_t> const_length_;
};

class StftKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<StftKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<StftKernel>(new StftKernel(info));
    if (info.input_present(3) && info.input(3).constant != nullptr) {
      INFERD_ASSIGN_OR_RETURN(const int64_t n,
                              ScalarInt(*info.input(3).constant, "frame_length", k->node_));
      k->const_length_ = n;
    }
    // The frame length follows from shapes (window, signal) or a constant, or only at run time.
    k->declared_ = info.input_present(2) || !info.input_present(3) || k->const_length_;
    return k;
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (!declared_ || shapes.empty() || shapes[0].rank() != 3) return {};
    int64_t n = const_length_.value_or(shapes[0][1]);
    if (shapes.size() > 2 && shapes[2].rank() == 1) n = shapes[2][0];
    const std::optional<int64_t> bytes = ScratchBytes(n, threads_);
    if (!bytes) return {};
    return {{kScratch, static_cast<size_t>(*bytes)}};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* step_t, RequiredInput(ctx, 1, node_));
    const Tensor* window = ctx.num_inputs() > 2 ? ctx.input(2) : nullptr;
    const Tensor* length_t = ctx.num_inputs() > 3 ? ctx.input(3) : nullptr;
    const Shape& s = x->shape();
    if (s.rank() != 3 || (s[2] != 1 && s[2] != 2)) {
      return node_.InvalidArgument(
          absl::StrCat("signal must be [batch, length, 1 or 2], got ", s.ToString()));
    }
    INFERD_ASSIGN_OR_RETURN(const int64_t step, ScalarInt(*step_t, "frame_step", node_));
    if (step <= 0) return node_.InvalidArgument(absl::StrCat("frame_step must be > 0, got ", step));
    int64_t n = s[1];
    if (window != nullptr) {
      if (window->shape().rank() != 1) {
        return node_.InvalidArgument(
            absl::StrCat("window must be 1-D, got ", window->shape().ToString()));
      }
      if (window->dtype() != x->dtype()) {
        return node_.InvalidArgument("window must have the signal's element type");
      }
      n = window->shape()[0];
    }
    if (length_t != nullptr) {
      INFERD_ASSIGN_OR_RETURN(const int64_t fl, ScalarInt(*length_t, "frame_length", node_));
      if (window != nullptr && fl != n) {
        return node_.InvalidArgument(
            absl::StrCat("frame_length ", fl, " differs from the window's length ", n));
      }
      n = fl;
    }
    if (n <= 0 || n > s[1]) {
      return node_.InvalidArgument(
          absl::StrCat("frame_length ", n, " is outside [1, ", s[1], "] (the signal's length)"));
    }
    const int64_t frames = (s[1] - n) / step + 1;
    const int64_t bins = onesided_ ? n / 2 + 1 : n;
    const std::vector<int64_t> out = {s[0], frames, bins, 2};
    if (!inferd::CheckedProduct(out)) return node_.InvalidArgument("the output size overflows");
    const std::optional<int64_t> bytes = ScratchBytes(n, ctx.threads().num_threads());
    if (!bytes) return node_.InvalidArgument("the transform's scratch size overflows");
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), Shape(out)));
    if (y->NumElements() == 0) return absl::OkStatus();
    Tensor tmp;
    INFERD_ASSIGN_OR_RETURN(Complex * scratch, Scratch(ctx, declared_, *bytes, tmp));
    return Dispatch(FloatTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xd = x->data<T>();
      const T* wd = window != nullptr ? window->data<T>() : nullptr;
      T* yd = y->mutable_data<T>();
      const int64_t comps = s[2];
      RunTransforms(
          n, false, s[0] * frames, scratch, ctx.threads(),
          [&](int64_t t, Complex* buf) {
            const int64_t b = t / frames, f = t % frames;
            const T* src = xd + (b * s[1] + f * step) * comps;
            for (int64_t j = 0; j < n; ++j) {
              const double w = wd != nullptr ? static_cast<double>(wd[j]) : 1.0;
              buf[j] = Complex(w * static_cast<double>(src[j * comps]),
                               comps == 2 ? w * static_cast<double>(src[j * comps + 1]) : 0.0);
            }
          },
          [&](int64_t t, const Complex* buf) {
            T* dst = yd + t * bins * 2;
            for (int64_t k = 0; k < bins; ++k) {
              dst[2 * k] = static_cast<T>(buf[k].real());
              dst[2 * k + 1] = static_cast<T>(buf[k].imag());
            }
          });
      return absl::OkStatus();
    });
  }

 private:
  explicit StftKernel(const KernelInfo& info)
      : node_(info),
        onesided_(info.GetInt("onesided", 1) != 0),
        threads_(info.intra_op_threads()) {}

  const NodeLabel node_;
  const bool onesided_;
  const int threads_;
  // Set once in Create.
  bool declared_ = false;
  std::optional<int64_t> const_length_;
};

}  // namespace

std::vector<engine::KernelDef> DftKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "DFT", 17, 19, TypesOf(FloatTypes{}), FactoryOf<DftKernel>()),
          CpuDef(engine::kOnnxDomain, "DFT", 20, kMaxOpset, TypesOf(FloatTypes{}),
                 FactoryOf<DftKernel>()),
          CpuDef(engine::kOnnxDomain, "STFT", 17, kMaxOpset, TypesOf(FloatTypes{}),
                 FactoryOf<StftKernel>())};
}

}  // namespace inferd::kernels::cpu
