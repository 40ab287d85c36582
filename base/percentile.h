// Percentiles of a set of samples, one definition for every tool that prints them (loadtest's
// latency summary, `inferctl run`), so two tools given the same samples print the same p99.
//
// The rule is NEAREST RANK, without interpolation: Percentile(sorted, p) is the smallest sample
// such that at least p% of the samples are <= it, i.e. sorted[ceil(p / 100 * n) - 1], and
// sorted[0] for p = 0. The figure is always one of the samples (a latency that was measured), and
// p100 is the maximum. Ranks that are exact in decimal stay exact despite binary fractions: p99.9
// of 1000 samples is rank 999, p90 of 10 is rank 9.
//
// Example:
//   std::vector<double> ms = ...;
//   std::sort(ms.begin(), ms.end());
//   double p99 = inferd::Percentile(ms, 99);
//
// Pure functions; thread-safe.
#ifndef INFERD_BASE_PERCENTILE_H_
#define INFERD_BASE_PERCENTILE_H_

#include <cassert>
#include <cstddef>
#include <vector>

namespace inferd {

// The 0-based index of the nearest-rank p-th percentile among `n` sorted samples; n > 0, p in
// [0, 100] (clamped).
size_t NearestRankIndex(size_t n, double p);

// `sorted` ascending and non-empty.
template <typename T>
T Percentile(const std::vector<T>& sorted, double p) {
  assert(!sorted.empty());
  return sorted[NearestRankIndex(sorted.size(), p)];
}

}  // namespace inferd

#endif  // INFERD_BASE_PERCENTILE_H_
