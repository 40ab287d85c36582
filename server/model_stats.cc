#include "server/model_stats.h"

#include <algorithm>

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

namespace {
uint64_t Nanos(absl::Duration d) {
  return static_cast<uint64_t>(std::max<int64_t>(0, absl::ToInt64Nanoseconds(d)));
}
}  // namespace

void DurationStat::Add(absl::Duration d, uint64_t n) {
  count.fetch_add(n, std::memory_order_relaxed);
  ns.fetch_add(Nanos(d), std::memory_order_relaxed);
}

void BatchStats::Record(int batch_size, absl::Duration compute_input, absl::Duration compute_infer,
                        absl::Duration compute_output) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = by_size_[batch_size];
  ++e.runs;
  e.compute_input_ns += Nanos(compute_input);
  e.compute_infer_ns += Nanos(compute_infer);
  e.compute_output_ns += Nanos(compute_output);
}

std::map<int, BatchStats::Entry> BatchStats::Read() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_size_;
}

}  // namespace inferd::server
