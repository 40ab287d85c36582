#include "kernels/cpu/fft.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/checked_math.h"

namespace inferd::kernels::cpu {
namespace {

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// a * b without std::complex's NaN/infinity recovery (a library call per product).
inline std::complex<double> Mul(std::complex<double> a, std::complex<double> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

}  // namespace

FftPlan::FftPlan(int64_t n, bool inverse) : n_(n), inverse_(inverse), m_(n) {
  if (!IsPowerOfTwo(n)) {
    m_ = 1;
    while (m_ < 2 * n - 1) m_ *= 2;
  }
}

// Table layout: [twiddles m/2 | chirp n | filter spectrum m] (the last two for Bluestein only).
std::optional<int64_t> FftPlan::TableSize() const {
  if (n_ <= 0 || n_ > (int64_t{1} << 40)) return std::nullopt;
  int64_t size = m_ / 2;
  if (bluestein()) size += n_ + m_;
  return std::max<int64_t>(size, 1);
}

void FftPlan::Init(Complex* table) const {
  // Forward twiddles exp(-2 pi i j / m); the inverse radix-2 pass conjugates them.
  for (int64_t j = 0; j < m_ / 2; ++j) {
    const double a = -2.0 * M_PI * static_cast<double>(j) / static_cast<double>(m_);
    table[j] = Complex(std::cos(a), std::sin(a));
  }
  if (!bluestein()) return;
  Complex* chirp = table + m_ / 2;
  Complex* filter = chirp + n_;
  // chirp[k] = exp(-+ pi i k^2 / n); k^2 is taken mod 2n (the chirp's period) to keep the angle
  // small and exact.
  const double sign = inverse_ ? 1.0 : -1.0;
  for (int64_t k = 0; k < n_; ++k) {
    const int64_t k2 = static_cast<int64_t>((static_cast<unsigned __int128>(k) * k) %
                                            static_cast<unsigned __int128>(2 * n_));
    const double a = sign * M_PI * static_cast<double>(k2) / static_cast<double>(n_);
    chirp[k] = Complex(std::cos(a), std::sin(a));
  }
  // The filter conj(chirp) at +-k, circularly, transformed once.
  for (int64_t k = 0; k < m_; ++k) filter[k] = 0;
  filter[0] = std::conj(chirp[0]);
  for (int64_t k = 1; k < n_; ++k) filter[k] = filter[m_ - k] = std::conj(chirp[k]);
  Radix2(table, filter, false);
}

void FftPlan::Transform(const Complex* table, Complex* data) const {
  if (!bluestein()) {
    Radix2(table, data, inverse_);
    return;
  }
  const Complex* chirp = table + m_ / 2;
  const Complex* filter = chirp + n_;
  // pass 1: premultiply by the chirp, zero-pad to m.
  for (int64_t k = 0; k < n_; ++k) data[k] = Mul(data[k], chirp[k]);
  for (int64_t k = n_; k < m_; ++k) data[k] = 0;
  // pass 2: circular convolution with the filter through forward and inverse FFTs.
  Radix2(table, data, false);
  for (int64_t k = 0; k < m_; ++k) data[k] = Mul(data[k], filter[k]);
  Radix2(table, data, true);
  // pass 3: postmultiply by the chirp; 1/m undoes the unscaled inverse FFT.
  const double scale = 1.0 / static_cast<double>(m_);
  for (int64_t k = 0; k < n_; ++k) data[k] = Mul(data[k], chirp[k]) * scale;
}

void FftPlan::Radix2(const Complex* twiddles, Complex* data, bool inverse) const {
  const int64_t m = m_;
  // Bit-reversal permutation.
  for (int64_t i = 1, j = 0; i < m; ++i) {
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(data[i], data[j]);
  }
  // Butterflies, stage lengths 2, 4, ..., m; twiddle j of a stage of length len is the table's
  // entry j * (m / len).
  for (int64_t len = 2; len <= m; len <<= 1) {
    const int64_t half = len / 2, step = m / len;
    for (int64_t start = 0; start < m; start += len) {
      for (int64_t j = 0; j < half; ++j) {
        Complex w = twiddles[j * step];
        if (inverse) w = std::conj(w);
        const Complex u = data[start + j];
        const Complex v = Mul(data[start + j + half], w);
        data[start + j] = u + v;
        data[start + j + half] = u - v;
      }
    }
  }
}

}  // namespace inferd::kernels::cpu
