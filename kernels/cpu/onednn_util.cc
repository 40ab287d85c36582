#include "kernels/cpu/onednn_util.h"

#include <omp.h>

#include <memory>

#include "absl/strings/str_cat.h"

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

dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims) {
  dnnl::memory::dims strides(dims.size());
  dnnl::memory::dim stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<dnnl::memory::dim>(dims[i], 1);
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

dnnl::memory::desc AnyDesc(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
}

dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

absl::Status DnnlErrorStatus(const NodeLabel& node, absl::string_view what, const dnnl::error& e) {
  const std::string message = absl::StrCat(node.prefix(), "oneDNN failed ", what, ": ", e.what());
  switch (e.status) {
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

ScopedOmpThreads::ScopedOmpThreads(int num_threads) : saved_(omp_get_max_threads()) {
  omp_set_num_threads(std::max(1, num_threads));
}

ScopedOmpThreads::~ScopedOmpThreads() { omp_set_num_threads(saved_); }

void ExecutePrimitive(const dnnl::engine& eng, const dnnl::primitive& primitive,
                      const std::unordered_map<int, dnnl::memory>& args, int num_threads) {
  // One stream per thread: oneDNN streams are not meant to be shared by concurrent callers, and
  // a CPU stream is only a handle. There is one CPU engine per process (CpuEngine()).
  thread_local dnnl::stream stream(eng);
  // The calling thread's OpenMP team size for the primitive's parallel regions. Left set: the
  // next oneDNN call on this thread sets its own.
  omp_set_num_threads(std::max(1, num_threads));
  primitive.execute(stream, args);
  stream.wait();
}

std::vector<engine::WorkspaceRequirement> ScratchpadRequirement(size_t bytes) {
  if (bytes == 0) return {};
  return {engine::WorkspaceRequirement{kScratchpadSlot, bytes}};
}

absl::Status AddScratchpadArg(engine::KernelContext& ctx, const dnnl::memory::desc& desc,
                              const dnnl::engine& eng, std::unordered_map<int, dnnl::memory>& args,
                              const NodeLabel& node) {
  if (desc.get_size() == 0) return absl::OkStatus();
  absl::StatusOr<void*> ws = ctx.GetWorkspace(kScratchpadSlot);
  if (!ws.ok()) {
    return node.Internal(
        absl::StrCat("the ", desc.get_size(),
                     "-byte oneDNN scratchpad workspace is unavailable: ", ws.status().message()));
  }
  args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(desc, eng, *ws));
  return absl::OkStatus();
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

}  // namespace inferd::kernels::cpu
