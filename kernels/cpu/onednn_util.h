// oneDNN plumbing for the CPU kernels: the process-wide CPU engine, plain (row-major) memory
// descriptors, dnnl::error -> absl::Status, and execution with a user scratchpad taken from the
// kernel's declared workspace. Internal to //kernels/cpu. Thread-safe.
//
// oneDNN's C++ API throws; every call into it from a kernel goes through CatchDnnl so that no
// exception leaves a kernel:
//   return CatchDnnl(node_, "executing the convolution", [&]() -> absl::Status {
//     ExecutePrimitive(plan.primitive, args, ctx.threads().num_threads());
//     return absl::OkStatus();
//   });
#ifndef INFERD_KERNELS_CPU_ONEDNN_UTIL_H_
#define INFERD_KERNELS_CPU_ONEDNN_UTIL_H_

#include <cstddef>
#include <exception>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "dnnl.hpp"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"

namespace inferd::kernels::cpu {

// The workspace slot id under which oneDNN kernels declare their scratchpad.
inline constexpr int kScratchpadSlot = 0;

// The process's oneDNN CPU engine, created on first use.
absl::StatusOr<const dnnl::engine*> CpuEngine();

dnnl::memory::dims ToDnnlDims(absl::Span<const int64_t> dims);
// f32 with row-major strides.
dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims);
// f32, any layout the primitive prefers (for weights to prepack).
dnnl::memory::desc AnyDesc(const dnnl::memory::dims& dims);
// Attributes every primitive here is built with: scratchpad_mode::user.
dnnl::primitive_attr UserScratchpadAttr();

// A dnnl::error as a Status naming the node and what was being done.
absl::Status DnnlErrorStatus(const NodeLabel& node, absl::string_view what, const dnnl::error& e);

// Runs fn (returning absl::Status) and converts anything oneDNN throws into a Status.
template <typename Fn>
absl::Status CatchDnnl(const NodeLabel& node, absl::string_view what, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const dnnl::error& e) {
    return DnnlErrorStatus(node, what, e);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(node.prefix(), "out of memory while ", what));
  } catch (const std::exception& e) {
    return node.Internal(absl::StrCat(what, ": ", e.what()));
  }
}

// Sets the calling thread's OpenMP team size for its scope. oneDNN sizes some primitives'
// partitioning (and per-thread scratchpad) when the primitive descriptor is created, so build
// under the same thread count the primitive will run with.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int num_threads);
  ~ScopedOmpThreads();
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int saved_;
};

// Executes `primitive` with `args` on the calling thread's stream using `num_threads` OpenMP
// threads, and waits for it. Throws dnnl::error: call it inside CatchDnnl.
void ExecutePrimitive(const dnnl::engine& eng, const dnnl::primitive& primitive,
                      const std::unordered_map<int, dnnl::memory>& args, int num_threads);

// The scratchpad requirement of a primitive descriptor (none when it needs 0 bytes).
std::vector<engine::WorkspaceRequirement> ScratchpadRequirement(size_t bytes);

// Adds the scratchpad argument, taken from the workspace the kernel declared, when one is
// needed. Throws dnnl::error.
absl::Status AddScratchpadArg(engine::KernelContext& ctx, const dnnl::memory::desc& desc,
                              const dnnl::engine& eng, std::unordered_map<int, dnnl::memory>& args,
                              const NodeLabel& node);

// Copies `weights` (plain layout, given by `plain`) into `target` layout, once at kernel
// creation ("prepacking"). The returned memory is owned by oneDNN's allocator. Throws.
dnnl::memory ReorderWeights(const dnnl::engine& eng, const dnnl::memory::desc& plain,
                            const void* weights, const dnnl::memory::desc& target);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_ONEDNN_UTIL_H_
