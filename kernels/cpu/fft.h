// One-dimensional discrete Fourier transforms of any length n, in double, for DFT and STFT
// (internal to //kernels/cpu). Powers of two go through an iterative radix-2 FFT; other lengths
// through Bluestein's chirp-z algorithm, which turns the transform into a circular convolution of
// power-of-two length m >= 2n - 1 (three radix-2 FFTs, one of them done once per plan): both are
// O(n log n). The plan owns no memory: the caller gives it a shared table (written once by Init,
// then read-only, so many threads may Transform at once) and each thread its own scratch.
//
// Example:
//   FftPlan plan(n, /*inverse=*/false);
//   std::vector<std::complex<double>> table(plan.TableSize()), scratch(plan.ScratchSize());
//   plan.Init(table.data());
//   plan.Transform(table.data(), scratch.data());  // scratch[0, n) in: signal, out: spectrum
#ifndef INFERD_KERNELS_CPU_FFT_H_
#define INFERD_KERNELS_CPU_FFT_H_

#include <complex>
#include <cstdint>
#include <optional>

namespace inferd::kernels::cpu {

class FftPlan {
 public:
  using Complex = std::complex<double>;

  // n > 0. The inverse transform is unscaled (no 1/n): the caller scales.
  FftPlan(int64_t n, bool inverse);

  // Sizes in Complex elements, nullopt when they overflow.
  std::optional<int64_t> TableSize() const;
  std::optional<int64_t> ScratchSize() const { return m_; }

  // Fills the table (twiddles; for Bluestein also the chirp and the filter's spectrum).
  void Init(Complex* table) const;
  // Transforms data[0, n) in place; data holds ScratchSize() elements (the rest is scratch).
  void Transform(const Complex* table, Complex* data) const;

  int64_t n() const { return n_; }
  bool bluestein() const { return m_ != n_; }

 private:
  // In-place radix-2 FFT of length m_ over data with the table's twiddles; sign -1 forward.
  void Radix2(const Complex* twiddles, Complex* data, bool inverse) const;

  int64_t n_;
  bool inverse_;
  int64_t m_;  // n_ when a power of two, else the Bluestein convolution length
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_FFT_H_
