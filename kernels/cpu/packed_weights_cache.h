// PackedWeightsCache: constant weights reordered once into the layout a oneDNN primitive wants,
// shared by every plan a kernel builds (one per set of input shapes) that wants the same layout
// of the same bytes. oneDNN's packed layouts for weights depend on the weights' dims and the
// implementation, not on the batch or the rows of A, so a kernel seeing many input shapes keeps
// one copy instead of one per shape. Used by MatMul / Gemm (matmul_primitive.h) and the
// convolutions (conv_primitive.h). Thread-safe.
#ifndef INFERD_KERNELS_CPU_PACKED_WEIGHTS_CACHE_H_
#define INFERD_KERNELS_CPU_PACKED_WEIGHTS_CACHE_H_

#include <cstddef>
#include <mutex>
#include <vector>

#include "dnnl.hpp"

namespace inferd::kernels::cpu {

class PackedWeightsCache {
 public:
  // The packed copy of the `plain` weights at `data` in layout `packed`, made on first use.
  dnnl::memory GetOrPack(const dnnl::engine& eng, const dnnl::memory::desc& plain, const void* data,
                         const dnnl::memory::desc& packed);
  size_t bytes() const;

 private:
  struct Entry {
    const void* data;
    dnnl::memory::desc plain, packed_desc;
    dnnl::memory packed;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_PACKED_WEIGHTS_CACHE_H_
