// ShapeCache: state a kernel builds for one set of input shapes (oneDNN primitives and their
// descriptors), kept for the next run with the same shapes. A kernel creates its plan at load when
// every shape is known (Pin), and otherwise builds one per distinct set of shapes at run time.
// Bounded: past kCapacity unpinned entries the oldest is dropped; a run still using it keeps it
// alive through its shared_ptr. Thread-safe: Compute is const and runs concurrently.
//
// Example:
//   absl::StatusOr<std::shared_ptr<const Plan>> plan = cache_.GetOrCreate(
//       ShapeCache<Plan>::MakeKey(shapes, threads), [&] { return BuildPlan(shapes, threads); });
#ifndef INFERD_KERNELS_CPU_SHAPE_CACHE_H_
#define INFERD_KERNELS_CPU_SHAPE_CACHE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/shape.h"

namespace inferd::kernels::cpu {

template <typename Entry>
class ShapeCache {
 public:
  static constexpr size_t kCapacity = 32;
  using Key = std::vector<int64_t>;

  ShapeCache() = default;
  ShapeCache(const ShapeCache&) = delete;
  ShapeCache& operator=(const ShapeCache&) = delete;

  // (threads, then rank, dims... of each shape).
  static Key MakeKey(absl::Span<const engine::Shape> shapes, int threads) {
    Key key = {threads};
    for (const engine::Shape& s : shapes) {
      key.push_back(static_cast<int64_t>(s.rank()));
      key.insert(key.end(), s.dims().begin(), s.dims().end());
    }
    return key;
  }

  // Keeps `entry` for `key` for the cache's lifetime (never evicted).
  void Pin(Key key, std::shared_ptr<const Entry> entry) {
    std::lock_guard<std::mutex> lock(mu_);
    pinned_[std::move(key)] = std::move(entry);
  }

  // The entry for `key`, built by make() (returning StatusOr<shared_ptr<const Entry>>) on a
  // miss. Failures are not cached.
  template <typename MakeFn>
  absl::StatusOr<std::shared_ptr<const Entry>> GetOrCreate(Key key, MakeFn&& make) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = pinned_.find(key); it != pinned_.end()) return it->second;
    if (auto it = entries_.find(key); it != entries_.end()) return it->second;
    // Built under the lock: a concurrent run with the same new shapes waits instead of building
    // the same primitive twice.
    absl::StatusOr<std::shared_ptr<const Entry>> entry = make();
    if (!entry.ok()) return entry.status();
    if (order_.size() >= kCapacity) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
    entries_.emplace(key, *entry);
    order_.push_back(std::move(key));
    return entry;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return pinned_.size() + entries_.size();
  }

  // Sum of bytes(entry) over the entries held now (pinned and cached).
  template <typename BytesFn>
  size_t SumBytes(BytesFn&& bytes) const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t total = 0;
    for (const auto& [key, entry] : pinned_) total += bytes(*entry);
    for (const auto& [key, entry] : entries_) total += bytes(*entry);
    return total;
  }

 private:
  mutable std::mutex mu_;
  // State below is protected by mu_.
  std::map<Key, std::shared_ptr<const Entry>> pinned_;
  std::map<Key, std::shared_ptr<const Entry>> entries_;
  std::deque<Key> order_;  // insertion order of entries_, oldest first
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_SHAPE_CACHE_H_
