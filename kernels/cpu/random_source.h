// The random source of the random operators (random_ops.cc) and of Dropout in training mode:
// std::mt19937_64 seeded from a node's `seed` attribute (the same sequence in every run and
// process) or, without one, freshly per run. One RandomSource per run: not thread-safe.
#ifndef INFERD_KERNELS_CPU_RANDOM_SOURCE_H_
#define INFERD_KERNELS_CPU_RANDOM_SOURCE_H_

#include <cstdint>
#include <optional>
#include <random>

namespace inferd::kernels::cpu {

class RandomSource {
 public:
  // `seed`: from SeedFromAttribute, or nullopt for a fresh seed.
  explicit RandomSource(std::optional<uint64_t> seed) : engine_(seed ? *seed : FreshSeed()) {}

  // The generator seed for a `seed` attribute value (distinct floats give distinct seeds).
  static uint64_t SeedFromAttribute(float seed);
  static uint64_t FreshSeed();

  double Uniform();  // [0, 1), 53 random bits
  double Normal();   // standard normal

 private:
  std::mt19937_64 engine_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_RANDOM_SOURCE_H_
