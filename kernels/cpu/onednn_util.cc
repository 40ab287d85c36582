#include "kernels/cpu/onednn_util.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace inferd::kernels::cpu {

absl::StatusOr<const dnnl::engine*> CpuEngine() {
  // Leaked on purpose: kernels of models being unloaded at exit may still use it.
  static const absl::StatusOr<const dnnl::engine*> kEngine =
      []() -> absl::StatusOr<const dnnl::engine*> {
    try {
      return new dnnl::engine(dnnl::engine::kind::cpu, 0);
    } catch (const dnnl::error& e) {
      return absl::InternalError(absl::StrCat("oneDNN: cannot create the CPU engine: ", e.what()));
    }
  }();
  return kEngine;
}

dnnl::memory::dims ToDnnlDims(absl::Span<const int64_t> dims) {
  return dnnl::memory::dims(dims.begin(), dims.end());
}

dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::data_type type) {
  dnnl::memory::dims strides(dims.size());
  dnnl::memory::dim stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<dnnl::memory::dim>(dims[i], 1);
  }
  return dnnl::memory::desc(dims, type, strides);
}

dnnl::memory::desc AnyDesc(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
}

dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::memory::dims StridesOf(const dnnl::memory::desc& d) {
  const dnnl_blocking_desc_t& b = d.data.format_desc.blocking;
  return dnnl::memory::dims(b.strides, b.strides + d.data.ndims);
}

absl::Status DnnlStatus(dnnl_status_t status, const NodeLabel& node, absl::string_view what) {
  if (status == dnnl_success) return absl::OkStatus();
  const std::string message =
      absl::StrCat(node.prefix(), "oneDNN failed ", what, ": status ", static_cast<int>(status));
  switch (status) {
    case dnnl_unimplemented:
      return absl::UnimplementedError(message);
    case dnnl_invalid_arguments:
      return absl::InvalidArgumentError(message);
    case dnnl_out_of_memory:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status DnnlErrorStatus(const NodeLabel& node, absl::string_view what, const dnnl::error& e) {
  absl::Status s = DnnlStatus(e.status, node, what);
  if (s.ok()) return node.Internal(absl::StrCat("oneDNN failed ", what, ": ", e.what()));
  return absl::Status(s.code(), absl::StrCat(s.message(), " (", e.what(), ")"));
}

int PartCount(int threads, double work, int64_t max_parts) {
  if (threads <= 1 || work < kMinSplitWork) return 1;
  // Up to 4 parts per thread: enough for the threads that are awake to even out a late one;
  // more would only cost memory objects (MemoryPool keeps one set per part).
  const double fit = std::min<double>({work / kPartWork, 4.0 * threads, double{kMaxParts}});
  return static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(max_parts, static_cast<int64_t>(fit))));
}

int Slots(const engine::ThreadPool& pool, int parts) { return Slots(pool.num_threads(), parts); }

int Slots(int threads, int parts) { return std::max(1, std::min(threads, parts)); }

absl::Status RunParts(engine::ThreadPool& pool, int parts,
                      absl::FunctionRef<absl::Status(int part, int slot)> run) {
  if (parts <= 1) return run(0, 0);
  const int slots = Slots(pool, parts);
  std::atomic<int> next{0};
  std::array<absl::Status, kMaxParts> status;  // per slot
  pool.ParallelFor(slots, 1, [&](int64_t begin, int64_t end) {
    for (int64_t slot = begin; slot < end; ++slot) {
      for (int part = next.fetch_add(1); part < parts; part = next.fetch_add(1)) {
        absl::Status s = run(part, static_cast<int>(slot));
        if (!s.ok() && status[slot].ok()) status[slot] = std::move(s);
      }
    }
  });
  for (int i = 0; i < slots; ++i) INFERD_RETURN_IF_ERROR(status[i]);
  return absl::OkStatus();
}

int ChannelBlock() {
  static const int kBlock = [] {
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::avx512_core:
      case dnnl::cpu_isa::avx512_core_vnni:
      case dnnl::cpu_isa::avx512_core_bf16:
      case dnnl::cpu_isa::avx512_core_amx:
        return 16;
      default:
        return 8;
    }
  }();
  return kBlock;
}

dnnl::memory::format_tag BlockedTag(size_t rank) {
  using tag = dnnl::memory::format_tag;
  const bool b16 = ChannelBlock() == 16;
  switch (rank) {
    case 3:
      return b16 ? tag::aBc16b : tag::aBc8b;
    case 4:
      return b16 ? tag::aBcd16b : tag::aBcd8b;
    case 5:
      return b16 ? tag::aBcde16b : tag::aBcde8b;
    default:
      return tag::any;
  }
}

ScopedOmpThreads::ScopedOmpThreads(int num_threads) : saved_(omp_get_max_threads()) {
  omp_set_num_threads(std::max(1, num_threads));
}

ScopedOmpThreads::~ScopedOmpThreads() { omp_set_num_threads(saved_); }

// --- MemoryPool ----------------------------------------------------------------------------------

struct MemoryPool::Set {
  std::vector<dnnl_memory_t> memories;  // nullptr for zero-sized descriptors
  ~Set() {
    for (dnnl_memory_t m : memories) {
      if (m != nullptr) dnnl_memory_destroy(m);
    }
  }
};

MemoryPool::MemoryPool(std::vector<dnnl::memory::desc> descs) : descs_(std::move(descs)) {}

MemoryPool::~MemoryPool() = default;

absl::StatusOr<MemoryPool::Lease> MemoryPool::Acquire(const NodeLabel& node) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      Set* set = free_.back();
      free_.pop_back();
      return Lease(this, set);
    }
  }
  // More runs at once than ever before on this plan: one more set (the only allocation here).
  absl::StatusOr<const dnnl::engine*> eng = CpuEngine();
  if (!eng.ok()) return eng.status();
  auto set = std::make_unique<Set>();
  set->memories.assign(descs_.size(), nullptr);
  for (size_t i = 0; i < descs_.size(); ++i) {
    if (descs_[i].get_size() == 0) continue;
    const dnnl_status_t status =
        dnnl_memory_create(&set->memories[i], &descs_[i].data, (*eng)->get(), DNNL_MEMORY_NONE);
    if (status != dnnl_success) return DnnlStatus(status, node, "creating a memory object");
  }
  Set* raw = set.get();
  std::lock_guard<std::mutex> lock(mu_);
  sets_.push_back(std::move(set));
  free_.reserve(sets_.size());
  return Lease(this, raw);
}

MemoryPool::Lease::~Lease() {
  if (set_ == nullptr) return;
  std::lock_guard<std::mutex> lock(pool_->mu_);
  pool_->free_.push_back(static_cast<Set*>(set_));  // within the reserved capacity
}

dnnl_memory_t MemoryPool::Lease::operator[](int i) const {
  return static_cast<Set*>(set_)->memories[i];
}

absl::Status MemoryPool::Lease::Bind(int i, const void* data, const NodeLabel& node) const {
  return DnnlStatus(dnnl_memory_set_data_handle((*this)[i], const_cast<void*>(data)), node,
                    "binding a buffer");
}

absl::Status BindOperands(const MemoryPool::Lease& mem, absl::Span<const PrimitivePart> parts,
                          const OperandArgs& args, const void* src, const void* weights,
                          const void* bias, void* dst, const NodeLabel& node) {
  auto at = [](const void* p, int64_t offset) { return static_cast<const char*>(p) + offset; };
  for (size_t i = 0; i < parts.size(); ++i) {
    const PrimitivePart& part = parts[i];
    const int b = static_cast<int>(i) * args.per_part;
    INFERD_RETURN_IF_ERROR(mem.Bind(b + args.src, at(src, part.src_offset), node));
    if (part.packed < 0) {
      INFERD_RETURN_IF_ERROR(mem.Bind(b + args.weights, at(weights, part.weights_offset), node));
    }
    if (mem[b + args.bias] != nullptr) {  // absent: a zero-sized descriptor, no memory
      INFERD_RETURN_IF_ERROR(mem.Bind(b + args.bias, at(bias, part.bias_offset), node));
    }
    INFERD_RETURN_IF_ERROR(mem.Bind(b + args.dst, at(dst, part.dst_offset), node));
  }
  return absl::OkStatus();
}

size_t PrepackedBytes(const std::vector<dnnl::memory>& packed) {
  size_t total = 0;
  for (const dnnl::memory& m : packed) total += m.get_desc().get_size();
  return total;
}

// --- execution -----------------------------------------------------------------------------------

absl::Status Execute(const dnnl::primitive& primitive, absl::Span<const dnnl_exec_arg_t> args,
                     int num_threads, const NodeLabel& node, absl::string_view what) {
  // One stream per thread: oneDNN streams are not meant to be shared by concurrent callers, and
  // a CPU stream is only a handle. There is one CPU engine per process (CpuEngine()), created
  // before any primitive exists, hence before this runs.
  struct ThreadStream {
    dnnl_stream_t stream = nullptr;
    ThreadStream() {
      absl::StatusOr<const dnnl::engine*> eng = CpuEngine();
      if (eng.ok()) dnnl_stream_create(&stream, (*eng)->get(), dnnl_stream_default_flags);
    }
    ~ThreadStream() {
      if (stream != nullptr) dnnl_stream_destroy(stream);
    }
  };
  thread_local ThreadStream tls;
  if (tls.stream == nullptr) return node.Internal(absl::StrCat("no oneDNN stream while ", what));
  // The calling thread's OpenMP team size for the primitive's parallel regions. Left set: the
  // next oneDNN call on this thread sets its own.
  omp_set_num_threads(std::max(1, num_threads));
  dnnl_status_t status = dnnl_primitive_execute(primitive.get(), tls.stream,
                                                static_cast<int>(args.size()), args.data());
  if (status == dnnl_success) status = dnnl_stream_wait(tls.stream);
  return DnnlStatus(status, node, what);
}

std::vector<engine::WorkspaceRequirement> ScratchpadRequirement(size_t bytes) {
  if (bytes == 0) return {};
  return {engine::WorkspaceRequirement{kScratchpadSlot, bytes}};
}

absl::StatusOr<void*> ScratchpadFor(engine::KernelContext& ctx, size_t bytes,
                                    const NodeLabel& node) {
  if (bytes == 0) return nullptr;
  absl::StatusOr<void*> ws = ctx.GetWorkspace(kScratchpadSlot);
  if (!ws.ok()) {
    return node.Internal(absl::StrCat(
        "the ", bytes, "-byte oneDNN workspace is unavailable: ", ws.status().message()));
  }
  return *ws;
}

dnnl::memory ReorderWeights(const dnnl::engine& eng, const dnnl::memory::desc& plain,
                            const void* weights, const dnnl::memory::desc& target) {
  dnnl::memory src(plain, eng, const_cast<void*>(weights));
  dnnl::memory dst(target, eng);  // allocated by oneDNN
  dnnl::stream stream(eng);
  dnnl::reorder(src, dst).execute(stream, src, dst);
  stream.wait();
  return dst;
}

absl::StatusOr<std::vector<EltwisePostOp>> ActivationPostOps(absl::string_view activation,
                                                             absl::Span<const float> params) {
  using dnnl::algorithm;
  struct Known {
    const char* name;
    size_t params;
  };
  static constexpr Known kKnown[] = {{"", 0},        {"Relu", 0},        {"LeakyRelu", 1},
                                     {"Elu", 1},     {"HardSigmoid", 2}, {"HardSwish", 0},
                                     {"Sigmoid", 0}, {"Tanh", 0},        {"Clip", 2},
                                     {"Silu", 0},    {"Gelu", 0},        {"GeluTanh", 0}};
  const Known* known = nullptr;
  for (const Known& k : kKnown) {
    if (activation == k.name) known = &k;
  }
  if (known == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "activation '", activation,
        "' is not supported (Relu, LeakyRelu, Elu, HardSigmoid, HardSwish, Sigmoid, Tanh, Clip, "
        "Silu, Gelu, GeluTanh)"));
  }
  if (params.size() != known->params) {
    return absl::InvalidArgumentError(absl::StrCat("activation '", activation, "' takes ",
                                                   known->params, " activation_params, got ",
                                                   params.size()));
  }
  if (activation.empty()) return std::vector<EltwisePostOp>{};
  if (activation == "Relu") return std::vector<EltwisePostOp>{{algorithm::eltwise_relu}};
  if (activation == "LeakyRelu") {
    return std::vector<EltwisePostOp>{{algorithm::eltwise_relu, params[0]}};
  }
  if (activation == "Elu") return std::vector<EltwisePostOp>{{algorithm::eltwise_elu, params[0]}};
  if (activation == "HardSigmoid") {
    return std::vector<EltwisePostOp>{{algorithm::eltwise_linear, params[0], params[1]},
                                      {algorithm::eltwise_clip, 0.0f, 1.0f}};
  }
  if (activation == "HardSwish") return std::vector<EltwisePostOp>{{algorithm::eltwise_hardswish}};
  if (activation == "Sigmoid") return std::vector<EltwisePostOp>{{algorithm::eltwise_logistic}};
  if (activation == "Tanh") return std::vector<EltwisePostOp>{{algorithm::eltwise_tanh}};
  if (activation == "Silu") return std::vector<EltwisePostOp>{{algorithm::eltwise_swish, 1.0f}};
  if (activation == "Gelu") return std::vector<EltwisePostOp>{{algorithm::eltwise_gelu_erf}};
  if (activation == "GeluTanh") return std::vector<EltwisePostOp>{{algorithm::eltwise_gelu_tanh}};
  if (!(params[0] <= params[1])) {
    return absl::InvalidArgumentError(
        absl::StrCat("Clip's min ", params[0], " is above its max ", params[1]));
  }
  return std::vector<EltwisePostOp>{{algorithm::eltwise_clip, params[0], params[1]}};
}

float ApplyPostOps(float v, absl::Span<const EltwisePostOp> ops) {
  using dnnl::algorithm;
  for (const EltwisePostOp& op : ops) {
    switch (op.alg) {
      case algorithm::eltwise_relu:
        v = v < 0.0f ? op.alpha * v : v;
        break;
      case algorithm::eltwise_elu:
        v = v < 0.0f ? op.alpha * std::expm1(v) : v;
        break;
      case algorithm::eltwise_linear:
        v = op.alpha * v + op.beta;
        break;
      case algorithm::eltwise_clip:
        v = std::min(std::max(v, op.alpha), op.beta);
        break;
      case algorithm::eltwise_hardswish:
        v = v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f;
        break;
      case algorithm::eltwise_logistic:
        v = 1.0f / (1.0f + std::exp(-v));
        break;
      case algorithm::eltwise_tanh:
        v = std::tanh(v);
        break;
      case algorithm::eltwise_swish:
        v = v / (1.0f + std::exp(-op.alpha * v));
        break;
      case algorithm::eltwise_gelu_erf:
        v = 0.5f * v * (1.0f + std::erf(v * 0.70710678f));
        break;
      case algorithm::eltwise_gelu_tanh:
        v = 0.5f * v * (1.0f + std::tanh(0.79788456f * (v + 0.044715f * v * v * v)));
        break;
      default:
        break;  // EltwisePostOps makes no other
    }
  }
  return v;
}

void AppendPostOps(absl::Span<const EltwisePostOp> ops, dnnl::post_ops& to) {
  for (const EltwisePostOp& op : ops) to.append_eltwise(1.0f, op.alg, op.alpha, op.beta);
}

}  // namespace inferd::kernels::cpu
