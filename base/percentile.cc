#include "base/percentile.h"

#include <cmath>

namespace inferd {

size_t NearestRankIndex(size_t n, double p) {
  assert(n > 0);
  const double count = static_cast<double>(n);
  // Nearest rank: ceil(p/100 * n), 1-based; the epsilon keeps p = 99.9 with n = 1000 at rank 999
  // although 99.9 / 100 * 1000 comes out a hair above 999 in binary.
  double rank = std::ceil(p / 100.0 * count - 1e-9);
  if (rank < 1) rank = 1;
  if (rank > count) rank = count;
  return static_cast<size_t>(rank) - 1;
}

}  // namespace inferd
