// oneDNN plumbing for the CPU kernels: the process-wide CPU engine, plain (row-major) memory
// descriptors, oneDNN errors -> absl::Status, and an execution path that allocates nothing of
// ours per run (MemoryPool + Execute over the C API). Internal to //kernels/cpu. Thread-safe.
//
// Building (primitive descriptors, primitives, prepacked weights) uses oneDNN's C++ API, which
// throws: wrap it in CatchDnnl so that no exception leaves a kernel. Running uses the C API
// (status codes, no exceptions):
//   INFERD_ASSIGN_OR_RETURN(MemoryPool::Lease mem, pool_->Acquire(node));  // reused memories
//   INFERD_RETURN_IF_ERROR(mem.Bind(kSrc, src, node));  // sets the data handle
//   const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, mem[kSrc]}, {DNNL_ARG_DST, mem[kDst]}};
//   return Execute(primitive_, args, /*num_threads=*/1, node, "running the pooling");
// Large problems are cut into parts that RunParts spreads over the session's threads.
//
// Heap use per run: none in our code once a plan's MemoryPool has as many sets as the most runs
// that used the plan at once. oneDNN's dnnl_primitive_execute itself still allocates a few small
// blocks per call (its argument map and scratchpad bookkeeping; see onednn_alloc_test.cc).
#ifndef INFERD_KERNELS_CPU_ONEDNN_UTIL_H_
#define INFERD_KERNELS_CPU_ONEDNN_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "dnnl.h"
#include "dnnl.hpp"
#include "engine/kernel.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/kernel_util.h"

namespace inferd::kernels::cpu {

// The workspace slot id under which oneDNN kernels declare their scratchpad.
inline constexpr int kScratchpadSlot = 0;

// The process's oneDNN CPU engine, created on first use.
absl::StatusOr<const dnnl::engine*> CpuEngine();

dnnl::memory::dims ToDnnlDims(absl::Span<const int64_t> dims);
// Row-major strides, f32 unless told otherwise.
dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims,
                             dnnl::memory::data_type type = dnnl::memory::data_type::f32);
// f32, any layout the primitive prefers (for weights to prepack).
dnnl::memory::desc AnyDesc(const dnnl::memory::dims& dims);
// Attributes every primitive here is built with: scratchpad_mode::user.
dnnl::primitive_attr UserScratchpadAttr();
// The strides of a blocking (plain or strided) descriptor, in elements.
dnnl::memory::dims StridesOf(const dnnl::memory::desc& d);

// Regions of a kernel's workspace start at multiples of kWorkspaceAlign bytes.
inline constexpr size_t kWorkspaceAlign = 64;
inline size_t AlignUp(size_t n) {
  return (n + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
}

// A dnnl::error as a Status naming the node and what was being done.
absl::Status DnnlErrorStatus(const NodeLabel& node, absl::string_view what, const dnnl::error& e);
// A C-API status as a Status (OK for dnnl_success).
absl::Status DnnlStatus(dnnl_status_t status, const NodeLabel& node, absl::string_view what);

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

// Splitting work across the session's intra-op threads. oneDNN primitives here are
// single-threaded (no OpenMP team is ever woken: under CPU contention a team spins at barriers
// for descheduled members, and 2-thread runs became 20-60x slower with two other busy processes
// on two cores). A kernel instead cuts a problem into parts of about kPartWork FLOPs (or
// equivalent) and RunParts runs them on the pool.
inline constexpr double kPartWork = 1e6;      // about 5 us on one AVX-512 core
inline constexpr double kMinSplitWork = 2e6;  // about 10 us: pool threads spin between loops
inline constexpr int kMaxParts = 64;

// How many parts to cut `work` into with `threads` threads: 1 with one thread or less than
// kMinSplitWork (waking a sleeping pool thread takes 20-50 us here), else about
// work / kPartWork, at most 4 per thread, `max_parts` (what the split axis allows) and
// kMaxParts. Small parts let the threads that are awake take over the share of one that wakes
// late. Pure: workspace estimates and kernels get the same answer.
int PartCount(int threads, double work, int64_t max_parts);

// Runs run(part, slot) for every part in [0, parts) on `pool`: each thread (the caller included)
// claims parts from a shared counter until none is left, so a thread that wakes late finds the
// work done and the caller never waits on it. `slot` is in [0, Slots(pool, parts)) and unique
// among parts running at the same time (a part's scratch memory is its slot's). Returns the first
// error. No allocation.
int Slots(const engine::ThreadPool& pool, int parts);
// The same for a pool of `threads` threads (workspace estimates: slots * the region per slot).
int Slots(int threads, int parts);
absl::Status RunParts(engine::ThreadPool& pool, int parts,
                      absl::FunctionRef<absl::Status(int part, int slot)> run);

// Channels per block of oneDNN's blocked activation layouts on this CPU (nChw16c with
// AVX-512, nChw8c otherwise).
int ChannelBlock();
// The blocked format tag (aBc16b, aBcd16b, ... or the 8b ones) for a tensor of `rank` 3-5.
dnnl::memory::format_tag BlockedTag(size_t rank);

// Sets the calling thread's OpenMP team size for its scope. oneDNN sizes some primitives'
// partitioning (and per-thread scratchpad) when the primitive descriptor is created, so build
// under the same thread count the primitive will run with (1 here: see RunParts).
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int num_threads);
  ~ScopedOmpThreads();
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int saved_;
};

// dnnl_memory_t objects for a fixed list of memory descriptors (a plan's arguments), handed to
// one run at a time; a run binds its buffers to them (dnnl_memory_set_data_handle) instead of
// creating memory objects. Sets are created on demand, so the pool grows to the number of runs
// that used the plan at once and then stays. Thread-safe.
class MemoryPool {
 public:
  // `descs` may include zero-sized descriptors (absent arguments); their entries stay unused.
  explicit MemoryPool(std::vector<dnnl::memory::desc> descs);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(other.pool_), set_(other.set_) { other.set_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    // nullptr for a zero-sized descriptor (an absent argument).
    dnnl_memory_t operator[](int i) const;
    // Points memory `i` at `data` (oneDNN never frees it).
    absl::Status Bind(int i, const void* data, const NodeLabel& node) const;

   private:
    friend class MemoryPool;
    Lease(MemoryPool* pool, void* set) : pool_(pool), set_(set) {}
    MemoryPool* pool_;
    void* set_;  // a MemoryPool::Set
  };

  // A set for the caller's exclusive use until the lease is destroyed.
  absl::StatusOr<Lease> Acquire(const NodeLabel& node);

 private:
  struct Set;

  const std::vector<dnnl::memory::desc> descs_;
  std::mutex mu_;
  // State below is protected by mu_.
  std::vector<std::unique_ptr<Set>> sets_;  // every set created
  std::vector<Set*> free_;                  // capacity kept >= sets_.size(): push never allocates
};

// One part of a problem cut for RunParts: a primitive shape ("kind") applied at byte offsets into
// the operands.
struct PrimitivePart {
  int kind = 0;
  int64_t src_offset = 0, weights_offset = 0, bias_offset = 0, dst_offset = 0;
  int packed = -1;  // index into the prepacked weights, -1: none (the plain weights are bound)
};

// Where a part's plain operands are in its MemoryPool set; part i's set starts at i * per_part.
struct OperandArgs {
  int src, weights, bias, dst, per_part;
};

// Binds every part's plain operands to the tensors at the part's offsets: src and dst; weights
// unless prepacked; bias where the part has a bias memory. No allocation.
absl::Status BindOperands(const MemoryPool::Lease& mem, absl::Span<const PrimitivePart> parts,
                          const OperandArgs& args, const void* src, const void* weights,
                          const void* bias, void* dst, const NodeLabel& node);

// The bytes held by prepacked weights.
size_t PrepackedBytes(const std::vector<dnnl::memory>& packed);

// Executes `primitive` with `args` on the calling thread's stream with `num_threads` OpenMP
// threads, and waits for it.
absl::Status Execute(const dnnl::primitive& primitive, absl::Span<const dnnl_exec_arg_t> args,
                     int num_threads, const NodeLabel& node, absl::string_view what);

// The scratchpad requirement of a primitive descriptor (none when it needs 0 bytes).
std::vector<engine::WorkspaceRequirement> ScratchpadRequirement(size_t bytes);

// The kernel's declared workspace (kScratchpadSlot), or nullptr when `bytes` is 0; an error
// naming the node when the runtime has none.
absl::StatusOr<void*> ScratchpadFor(engine::KernelContext& ctx, size_t bytes,
                                    const NodeLabel& node);

// Copies `weights` (plain layout, given by `plain`) into `target` layout, once at kernel
// creation ("prepacking"). The returned memory is owned by oneDNN's allocator. Throws.
dnnl::memory ReorderWeights(const dnnl::engine& eng, const dnnl::memory::desc& plain,
                            const void* weights, const dnnl::memory::desc& target);

// An activation a oneDNN primitive applies to its result as an eltwise post-op (FusedConv,
// FusedMatMul): alpha and beta as oneDNN's algorithm reads them.
struct EltwisePostOp {
  dnnl::algorithm alg = dnnl::algorithm::eltwise_relu;
  float alpha = 0.0f, beta = 0.0f;
};

// The fused ops' `activation` and `activation_params` (engine/rewrites.h) as post-ops: Relu,
// LeakyRelu [alpha], Elu [alpha], HardSigmoid [alpha, beta] (linear then clip to [0, 1]),
// HardSwish, Sigmoid, Tanh, Clip [min, max], Silu (x sigmoid(x)), Gelu (erf form), GeluTanh;
// "" is none. INVALID_ARGUMENT naming what is wrong.
absl::StatusOr<std::vector<EltwisePostOp>> ActivationPostOps(absl::string_view activation,
                                                             absl::Span<const float> params);

// `v` after `ops`, computed as the post-ops define them (for outputs that need no primitive).
float ApplyPostOps(float v, absl::Span<const EltwisePostOp> ops);

// Appends `ops` to `to`, in order.
void AppendPostOps(absl::Span<const EltwisePostOp> ops, dnnl::post_ops& to);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_ONEDNN_UTIL_H_
