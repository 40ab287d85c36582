// Naive reference implementations for the CPU kernel tests (tests only): straightforward loops
// over every output element, written from the ONNX operator specifications, no shortcuts.
#ifndef INFERD_KERNELS_CPU_TESTING_REFERENCE_H_
#define INFERD_KERNELS_CPU_TESTING_REFERENCE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "engine/shape.h"

namespace inferd::kernels::cpu::testing {

using engine::Shape;

inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

inline std::vector<int64_t> Strides(const Shape& s) {
  std::vector<int64_t> st(s.rank(), 1);
  for (size_t i = s.rank(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// Multi-index of flat position `flat` in shape `s`.
inline std::vector<int64_t> Unflatten(int64_t flat, const Shape& s) {
  std::vector<int64_t> idx(s.rank());
  for (size_t i = s.rank(); i-- > 0;) {
    idx[i] = s[i] == 0 ? 0 : flat % s[i];
    flat = s[i] == 0 ? 0 : flat / s[i];
  }
  return idx;
}

// Flat position in `s` of the output index `out_idx` (of a higher or equal rank), broadcasting.
inline int64_t BroadcastOffset(const std::vector<int64_t>& out_idx, const Shape& s) {
  const size_t lead = out_idx.size() - s.rank();
  const std::vector<int64_t> st = Strides(s);
  int64_t off = 0;
  for (size_t i = 0; i < s.rank(); ++i) off += (s[i] == 1 ? 0 : out_idx[lead + i]) * st[i];
  return off;
}

inline Shape RefBroadcastShape(const Shape& a, const Shape& b) {
  const size_t r = std::max(a.rank(), b.rank());
  Shape out;
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.rank() ? 1 : a[i - (r - a.rank())];
    const int64_t db = i < r - b.rank() ? 1 : b[i - (r - b.rank())];
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

template <typename T, typename F>
std::vector<T> RefBinary(const std::vector<T>& a, const Shape& as, const std::vector<T>& b,
                         const Shape& bs, F f, Shape* out_shape) {
  *out_shape = RefBroadcastShape(as, bs);
  std::vector<T> out(out_shape->NumElements());
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
    const std::vector<int64_t> idx = Unflatten(i, *out_shape);
    out[i] = f(a[BroadcastOffset(idx, as)], b[BroadcastOffset(idx, bs)]);
  }
  return out;
}

// numpy.matmul, including 1-D promotion and batch broadcasting.
inline std::vector<float> RefMatMul(const std::vector<float>& a, const Shape& as,
                                    const std::vector<float>& b, const Shape& bs,
                                    Shape* out_shape) {
  Shape a2 = as.rank() == 1 ? Shape{1, as[0]} : as;
  Shape b2 = bs.rank() == 1 ? Shape{bs[0], 1} : bs;
  const int64_t m = a2[a2.rank() - 2], k = a2[a2.rank() - 1], n = b2[b2.rank() - 1];
  const Shape a_batch(a2.dims().subspan(0, a2.rank() - 2));
  const Shape b_batch(b2.dims().subspan(0, b2.rank() - 2));
  const Shape batch = RefBroadcastShape(a_batch, b_batch);
  std::vector<float> out(batch.NumElements() * m * n);
  for (int64_t bi = 0; bi < batch.NumElements(); ++bi) {
    const std::vector<int64_t> idx = Unflatten(bi, batch);
    const float* pa = a.data() + BroadcastOffset(idx, a_batch) * m * k;
    const float* pb = b.data() + BroadcastOffset(idx, b_batch) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += double(pa[i * k + p]) * pb[p * n + j];
        out[(bi * m + i) * n + j] = static_cast<float>(acc);
      }
    }
  }
  *out_shape = batch;
  if (as.rank() > 1) out_shape->push_back(m);
  if (bs.rank() > 1) out_shape->push_back(n);
  return out;
}

// Gemm; `c` may be null.
inline std::vector<float> RefGemm(const std::vector<float>& a, const Shape& as,
                                  const std::vector<float>& b, const Shape& bs,
                                  const std::vector<float>* c, const Shape& cs, bool trans_a,
                                  bool trans_b, float alpha, float beta) {
  const int64_t m = trans_a ? as[1] : as[0], k = trans_a ? as[0] : as[1];
  const int64_t n = trans_b ? bs[0] : bs[1];
  std::vector<float> out(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        const float av = trans_a ? a[p * m + i] : a[i * k + p];
        const float bv = trans_b ? b[j * k + p] : b[p * n + j];
        acc += double(av) * bv;
      }
      double v = alpha * acc;
      if (c != nullptr) v += beta * (*c)[BroadcastOffset({i, j}, cs)];
      out[i * n + j] = static_cast<float>(v);
    }
  }
  return out;
}

// Window parameters for 1 to 3 spatial dims.
struct RefWindow {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end;
};

// Convolution over N-d input [N, C, spatial...] with weights [M, C/group, kernel...].
inline std::vector<float> RefConv(const std::vector<float>& x, const Shape& xs,
                                  const std::vector<float>& w, const Shape& ws,
                                  const std::vector<float>& bias, int64_t group,
                                  const RefWindow& win, Shape* out_shape) {
  const size_t sp = xs.rank() - 2;
  // Pad to 3 spatial dims with size-1 leading dims.
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, pb[3] = {},
          out[3] = {1, 1, 1};
  *out_shape = Shape{xs[0], ws[0]};
  for (size_t i = 0; i < sp; ++i) {
    const size_t j = 3 - sp + i;
    in[j] = xs[2 + i];
    k[j] = ws[2 + i];
    s[j] = win.strides[i];
    d[j] = win.dilations[i];
    pb[j] = win.pad_begin[i];
    out[j] = (in[j] + win.pad_begin[i] + win.pad_end[i] - ((k[j] - 1) * d[j] + 1)) / s[j] + 1;
    out_shape->push_back(out[j]);
  }
  const int64_t batch = xs[0], c = xs[1], m = ws[0], cg = c / group, mg = m / group;
  std::vector<float> y(out_shape->NumElements());
  int64_t pos = 0;
  for (int64_t nb = 0; nb < batch; ++nb)
    for (int64_t oc = 0; oc < m; ++oc)
      for (int64_t o0 = 0; o0 < out[0]; ++o0)
        for (int64_t o1 = 0; o1 < out[1]; ++o1)
          for (int64_t o2 = 0; o2 < out[2]; ++o2) {
            double acc = bias.empty() ? 0.0 : bias[oc];
            const int64_t g = oc / mg;
            for (int64_t ic = 0; ic < cg; ++ic)
              for (int64_t k0 = 0; k0 < k[0]; ++k0)
                for (int64_t k1 = 0; k1 < k[1]; ++k1)
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    const int64_t i0 = o0 * s[0] - pb[0] + k0 * d[0];
                    const int64_t i1 = o1 * s[1] - pb[1] + k1 * d[1];
                    const int64_t i2 = o2 * s[2] - pb[2] + k2 * d[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2])
                      continue;
                    const int64_t xc = g * cg + ic;
                    const float xv = x[(((nb * c + xc) * in[0] + i0) * in[1] + i1) * in[2] + i2];
                    const float wv = w[(((oc * cg + ic) * k[0] + k0) * k[1] + k1) * k[2] + k2];
                    acc += double(xv) * wv;
                  }
            y[pos++] = static_cast<float>(acc);
          }
  return y;
}

// Max pooling; padding never contributes. ceil_mode as in window.h (a last window must start
// inside the input or the left padding).
inline std::vector<float> RefMaxPool(const std::vector<float>& x, const Shape& xs,
                                     const RefWindow& win, bool ceil_mode, Shape* out_shape) {
  const size_t sp = xs.rank() - 2;
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, pb[3] = {},
          out[3] = {1, 1, 1};
  *out_shape = Shape{xs[0], xs[1]};
  for (size_t i = 0; i < sp; ++i) {
    const size_t j = 3 - sp + i;
    in[j] = xs[2 + i];
    k[j] = win.kernel[i];
    s[j] = win.strides[i];
    d[j] = win.dilations[i];
    pb[j] = win.pad_begin[i];
    const int64_t span = in[j] + win.pad_begin[i] + win.pad_end[i] - ((k[j] - 1) * d[j] + 1);
    out[j] = (ceil_mode ? (span + s[j] - 1) / s[j] : span / s[j]) + 1;
    if (ceil_mode && (out[j] - 1) * s[j] >= in[j] + pb[j]) --out[j];
    out_shape->push_back(out[j]);
  }
  std::vector<float> y(out_shape->NumElements());
  int64_t pos = 0;
  for (int64_t nc = 0; nc < xs[0] * xs[1]; ++nc)
    for (int64_t o0 = 0; o0 < out[0]; ++o0)
      for (int64_t o1 = 0; o1 < out[1]; ++o1)
        for (int64_t o2 = 0; o2 < out[2]; ++o2) {
          float best = -std::numeric_limits<float>::infinity();
          for (int64_t k0 = 0; k0 < k[0]; ++k0)
            for (int64_t k1 = 0; k1 < k[1]; ++k1)
              for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                const int64_t i0 = o0 * s[0] - pb[0] + k0 * d[0];
                const int64_t i1 = o1 * s[1] - pb[1] + k1 * d[1];
                const int64_t i2 = o2 * s[2] - pb[2] + k2 * d[2];
                if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2])
                  continue;
                best = std::max(best, x[((nc * in[0] + i0) * in[1] + i1) * in[2] + i2]);
              }
          y[pos++] = best;
        }
  return y;
}

// Softmax over `n` values `stride` apart, for each (outer, inner) pair.
inline std::vector<float> RefSoftmax(const std::vector<float>& x, int64_t outer, int64_t n,
                                     int64_t inner) {
  std::vector<float> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max<double>(mx, x[(o * n + j) * inner + i]);
      for (int64_t j = 0; j < n; ++j) sum += std::exp(x[(o * n + j) * inner + i] - mx);
      for (int64_t j = 0; j < n; ++j) {
        y[(o * n + j) * inner + i] =
            static_cast<float>(std::exp(x[(o * n + j) * inner + i] - mx) / sum);
      }
    }
  return y;
}

// Layer normalization of `rows` rows of `d` values; scale and bias hold d values (bias may be
// empty). Fills mean and inv_std_dev (rows values each).
inline std::vector<float> RefLayerNorm(const std::vector<float>& x, int64_t rows, int64_t d,
                                       const std::vector<float>& scale,
                                       const std::vector<float>& bias, float epsilon,
                                       std::vector<float>* mean, std::vector<float>* inv) {
  std::vector<float> y(x.size());
  mean->assign(rows, 0);
  inv->assign(rows, 0);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < d; ++i) sum += x[r * d + i];
    const double mu = sum / d;
    for (int64_t i = 0; i < d; ++i) sq += (x[r * d + i] - mu) * (x[r * d + i] - mu);
    const double is = 1.0 / std::sqrt(sq / d + epsilon);
    for (int64_t i = 0; i < d; ++i) {
      y[r * d + i] =
          static_cast<float>((x[r * d + i] - mu) * is * scale[i] + (bias.empty() ? 0 : bias[i]));
    }
    (*mean)[r] = static_cast<float>(mu);
    (*inv)[r] = static_cast<float>(is);
  }
  return y;
}

template <typename T>
std::vector<T> RefTranspose(const std::vector<T>& x, const Shape& xs,
                            const std::vector<int64_t>& perm, Shape* out_shape) {
  out_shape->resize(0);
  for (int64_t p : perm) out_shape->push_back(xs[p]);
  const std::vector<int64_t> st = Strides(xs);
  std::vector<T> y(x.size());
  for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i) {
    const std::vector<int64_t> idx = Unflatten(i, *out_shape);
    int64_t off = 0;
    for (size_t j = 0; j < perm.size(); ++j) off += idx[j] * st[perm[j]];
    y[i] = x[off];
  }
  return y;
}

}  // namespace inferd::kernels::cpu::testing

#endif  // INFERD_KERNELS_CPU_TESTING_REFERENCE_H_
