#include "server/model_stats.h"

namespace inferd::server {

void LatencyHistogram::Record(absl::Duration d) {
  const double s = absl::ToDoubleSeconds(d);
  size_t b = 0;
  while (b < kBoundsSeconds.size() && s > kBoundsSeconds[b]) ++b;
  buckets_[b].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, absl::ToInt64Nanoseconds(d))),
                    std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

LatencyHistogram::Snapshot LatencyHistogram::Read() const {
  Snapshot s;
  s.buckets.reserve(buckets_.size());
  for (const auto& b : buckets_) s.buckets.push_back(b.load(std::memory_order_relaxed));
  s.count = count_.load(std::memory_order_relaxed);
  s.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) * 1e-9;
  return s;
}

}  // namespace inferd::server
