// Latency statistics: percentiles of a set of samples (nanoseconds), by the nearest-rank rule of
// base/percentile.h (the one `inferctl run` uses too).
//
// The load generator keeps every sample (8 bytes each; a run is bounded by its request count), so
// the figures are exact, not bucketed. Percentile(p) is the smallest sample such that at least p%
// of the samples are <= it: sorted[ceil(p / 100 * n) - 1], and sorted[0] for p = 0.
//
// Example:
//   LatencyRecorder r;
//   r.Add(1500);  // ns
//   LatencySummary s = r.Summarize();  // s.p50_ns, s.p99_ns, ...
//
// Thread-compatible: one recorder per thread, merged afterwards with Merge.
#ifndef INFERD_LOADTEST_LATENCY_STATS_H_
#define INFERD_LOADTEST_LATENCY_STATS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/percentile.h"

namespace inferd::loadtest {

struct LatencySummary {
  int64_t count = 0;
  int64_t min_ns = 0;
  double mean_ns = 0;
  int64_t p50_ns = 0;
  int64_t p90_ns = 0;
  int64_t p99_ns = 0;
  int64_t p999_ns = 0;
  int64_t max_ns = 0;
};

// All zeros for no samples. Sorts `samples` in place.
LatencySummary Summarize(std::vector<int64_t>& samples);

class LatencyRecorder {
 public:
  void Reserve(size_t n) { samples_.reserve(n); }
  void Add(int64_t ns) { samples_.push_back(ns); }
  void Merge(const LatencyRecorder& other) {
    samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
  }
  size_t count() const { return samples_.size(); }
  void Clear() { samples_.clear(); }
  // Sorts the samples it holds.
  LatencySummary Summarize() { return loadtest::Summarize(samples_); }

 private:
  std::vector<int64_t> samples_;
};

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_LATENCY_STATS_H_
