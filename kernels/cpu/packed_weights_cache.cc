#include "kernels/cpu/packed_weights_cache.h"

#include "kernels/cpu/onednn_util.h"

namespace inferd::kernels::cpu {

dnnl::memory PackedWeightsCache::GetOrPack(const dnnl::engine& eng, const dnnl::memory::desc& plain,
                                           const void* data, const dnnl::memory::desc& packed) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.data == data && e.plain == plain && e.packed_desc == packed) return e.packed;
  }
  entries_.push_back(Entry{data, plain, packed, ReorderWeights(eng, plain, data, packed)});
  return entries_.back().packed;
}

size_t PackedWeightsCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t total = 0;
  for (const Entry& e : entries_) total += e.packed_desc.get_size();
  return total;
}

}  // namespace inferd::kernels::cpu
