#include "loadtest/latency_stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace inferd::loadtest {

int64_t Percentile(const std::vector<int64_t>& sorted, double p) {
  assert(!sorted.empty());
  const double n = static_cast<double>(sorted.size());
  // Nearest rank: ceil(p/100 * n), 1-based; computed in a way that keeps p = 99.9 with n = 1000
  // at rank 999 despite floating-point rounding.
  double rank = std::ceil(p / 100.0 * n - 1e-9);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return sorted[static_cast<size_t>(rank) - 1];
}

LatencySummary Summarize(std::vector<int64_t>& samples) {
  LatencySummary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = static_cast<int64_t>(samples.size());
  s.min_ns = samples.front();
  s.max_ns = samples.back();
  long double sum = 0;
  for (int64_t v : samples) sum += v;
  s.mean_ns = static_cast<double>(sum / samples.size());
  s.p50_ns = Percentile(samples, 50);
  s.p90_ns = Percentile(samples, 90);
  s.p99_ns = Percentile(samples, 99);
  s.p999_ns = Percentile(samples, 99.9);
  return s;
}

}  // namespace inferd::loadtest
