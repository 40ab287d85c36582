#include "loadtest/latency_stats.h"

#include <algorithm>

namespace inferd::loadtest {

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
