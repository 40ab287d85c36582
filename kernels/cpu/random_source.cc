#include "kernels/cpu/random_source.h"

#include <atomic>
#include <cmath>
#include <cstring>

namespace inferd::kernels::cpu {

uint64_t RandomSource::SeedFromAttribute(float seed) {
  uint32_t bits;
  std::memcpy(&bits, &seed, sizeof(bits));
  return 0x9E3779B97F4A7C15ull ^ bits;
}

uint64_t RandomSource::FreshSeed() {
  static std::atomic<uint64_t> counter{0};
  std::random_device device;
  const uint64_t a = (static_cast<uint64_t>(device()) << 32) ^ device();
  return a ^ (counter.fetch_add(1) * 0xBF58476D1CE4E5B9ull);
}

double RandomSource::Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

double RandomSource::Normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // Box-Muller on (0, 1] x [0, 1).
  const double u1 = 1.0 - Uniform(), u2 = Uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * M_PI * u2;
  spare_ = radius * std::sin(angle);
  has_spare_ = true;
  return radius * std::cos(angle);
}

}  // namespace inferd::kernels::cpu
