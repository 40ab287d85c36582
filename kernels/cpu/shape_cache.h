// ShapeCache: state a kernel builds for one set of input shapes (oneDNN primitives and their
// descriptors), kept for the next run with the same shapes. A kernel creates its plan at load when
// every shape is known (Pin), and otherwise builds one per distinct set of shapes at run time.
// Bounded: past kCapacity unpinned entries the oldest is dropped; a run still using it keeps it
// alive through its shared_ptr.
//
// Lookups allocate nothing: shapes are compared in place against the pinned entries (no lock),
// then against the cached ones under the mutex with a heterogeneous map lookup; a key is built
// only on a miss, to insert the new entry.
//
// Thread-safety: GetOrCreate and the readers are thread-safe (Compute is const and runs
// concurrently). Pin is not: call it only while the cache is not yet shared (kernel creation).
//
// Example:
//   const Shape* shapes[] = {&a->shape(), &b->shape()};
//   absl::StatusOr<std::shared_ptr<const Plan>> plan =
//       cache_.GetOrCreate(shapes, threads_, [&] { return BuildPlan(a->shape(), b->shape()); });
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

// The shapes a lookup is keyed on, by pointer (so that a lookup copies nothing).
using ShapeRefs = absl::Span<const engine::Shape* const>;

namespace shape_cache_internal {

// A key flattened as (threads, then rank, dims... of each shape).
using Key = std::vector<int64_t>;

// The same sequence, not materialized.
struct KeyView {
  ShapeRefs shapes;
  int threads;
};

// Three-way lexicographic comparison of a key with a view (<0, 0, >0).
inline int Compare(const Key& key, const KeyView& view) {
  size_t i = 0;
  auto step = [&](int64_t v) -> int {
    if (i == key.size()) return -1;  // key is a prefix: shorter sorts first
    const int64_t k = key[i++];
    return k < v ? -1 : (k > v ? 1 : 0);
  };
  if (int c = step(view.threads); c != 0) return c;
  for (const engine::Shape* s : view.shapes) {
    if (int c = step(static_cast<int64_t>(s->rank())); c != 0) return c;
    for (int64_t d : s->dims()) {
      if (int c = step(d); c != 0) return c;
    }
  }
  return i == key.size() ? 0 : 1;
}

struct KeyLess {
  using is_transparent = void;
  bool operator()(const Key& a, const Key& b) const { return a < b; }
  bool operator()(const Key& a, const KeyView& b) const { return Compare(a, b) < 0; }
  bool operator()(const KeyView& a, const Key& b) const { return Compare(b, a) > 0; }
};

}  // namespace shape_cache_internal

template <typename Entry>
class ShapeCache {
 public:
  static constexpr size_t kCapacity = 32;
  using Key = shape_cache_internal::Key;

  ShapeCache() = default;
  ShapeCache(const ShapeCache&) = delete;
  ShapeCache& operator=(const ShapeCache&) = delete;

  static Key MakeKey(ShapeRefs shapes, int threads) {
    Key key = {threads};
    for (const engine::Shape* s : shapes) {
      key.push_back(static_cast<int64_t>(s->rank()));
      key.insert(key.end(), s->dims().begin(), s->dims().end());
    }
    return key;
  }

  // Keeps `entry` for these shapes for the cache's lifetime (never evicted). Not thread-safe:
  // only before the cache is shared.
  void Pin(ShapeRefs shapes, int threads, std::shared_ptr<const Entry> entry) {
    const shape_cache_internal::KeyView view{shapes, threads};
    for (auto& [key, pinned] : pinned_) {
      if (shape_cache_internal::Compare(key, view) == 0) {
        pinned = std::move(entry);
        return;
      }
    }
    pinned_.emplace_back(MakeKey(shapes, threads), std::move(entry));
  }

  // The entry for these shapes, built by make() (returning StatusOr<shared_ptr<const Entry>>) on
  // a miss. Failures are not cached. No heap allocation on a hit.
  template <typename MakeFn>
  absl::StatusOr<std::shared_ptr<const Entry>> GetOrCreate(ShapeRefs shapes, int threads,
                                                           MakeFn&& make) {
    const shape_cache_internal::KeyView view{shapes, threads};
    for (const auto& [key, entry] : pinned_) {
      if (shape_cache_internal::Compare(key, view) == 0) return entry;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = entries_.find(view); it != entries_.end()) return it->second;
    // Built under the lock: a concurrent run with the same new shapes waits instead of building
    // the same primitive twice.
    absl::StatusOr<std::shared_ptr<const Entry>> entry = make();
    if (!entry.ok()) return entry.status();
    if (order_.size() >= kCapacity) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
    Key key = MakeKey(shapes, threads);
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
  // Constant once the cache is shared (written by Pin only).
  std::vector<std::pair<Key, std::shared_ptr<const Entry>>> pinned_;

  mutable std::mutex mu_;
  // State below is protected by mu_.
  std::map<Key, std::shared_ptr<const Entry>, shape_cache_internal::KeyLess> entries_;
  std::deque<Key> order_;  // insertion order of entries_, oldest first
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_SHAPE_CACHE_H_
