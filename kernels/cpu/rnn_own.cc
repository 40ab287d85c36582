#include "kernels/cpu/rnn_own.h"

#include <algorithm>
#include <cstring>

#include "base/status_macros.h"
#include "dnnl.h"
#include "kernels/cpu/onednn_util.h"
#include "kernels/cpu/quant_layout.h"

namespace inferd::kernels::cpu {
namespace {

// Byte offsets of the regions in the workspace (each 64-byte aligned).
struct OwnLayout {
  size_t xw = 0;     // [D][rows of X][G*C]: X * W^T, rows in X's memory order
  size_t gates = 0;  // [D][N][G*C]: H_{t-1} * R^T, then the gates in place
  size_t h = 0;      // [D][N][C]: hidden state
  size_t c = 0;      // [D][N][C]: LSTM cell state
  size_t rh = 0;     // [D][N][C]: GRU (linear_before_reset 0) r (.) H_{t-1}
  size_t bias = 0;   // [D][G*C]: Wb + Rb (GRU linear_before_reset 1: Wb only for h)
  size_t rbias = 0;  // [D][C]: GRU linear_before_reset 1: Rbh
  size_t qx = 0;     // quantized: [rows of X][I rounded up to 4] uint8 X
  size_t qh = 0;     // quantized: [D][N][C rounded up to 4] uint8 H_{t-1}
  size_t total = 0;
};

int64_t Round4(int64_t v) { return (v + 3) / 4 * 4; }

bool IsGruLbr(const RnnAttributes& a) { return a.op == RnnOp::kGru && a.linear_before_reset; }
bool IsGruNoLbr(const RnnAttributes& a) { return a.op == RnnOp::kGru && !a.linear_before_reset; }

OwnLayout MakeLayout(const RnnAttributes& a, const RnnGeometry& g, bool quantized) {
  const size_t d = g.dirs, n = g.batch, t = g.seq, c = g.hidden, gc = g.gate_width();
  OwnLayout l;
  size_t at = 0;
  auto take = [&](size_t floats) {
    const size_t here = at;
    at += AlignUp(floats * sizeof(float));
    return here;
  };
  l.xw = take(d * t * n * gc);
  l.gates = take(d * n * gc);
  l.h = take(d * n * c);
  l.c = take(a.op == RnnOp::kLstm ? d * n * c : 0);
  l.rh = take(IsGruNoLbr(a) ? d * n * c : 0);
  l.bias = take(d * gc);
  l.rbias = take(IsGruLbr(a) ? d * c : 0);
  auto take_bytes = [&](size_t bytes) {
    const size_t here = at;
    at += AlignUp(bytes);
    return here;
  };
  l.qx = take_bytes(quantized ? t * n * Round4(g.input) : 0);
  l.qh = take_bytes(quantized ? d * n * Round4(g.hidden) : 0);
  l.total = at;
  return l;
}

// c[m, n] (row stride ldc) = a[m, k] (lda) * b, b being [k, n] row-major (ldb) or, with
// trans_b, [n, k] row-major (ONNX's W and R as they are). Single-threaded (the caller set
// OpenMP's team to 1).
absl::Status Gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                  int64_t ldb, bool trans_b, float* c, int64_t ldc, const NodeLabel& node) {
  if (m == 0 || n == 0) return absl::OkStatus();
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return absl::OkStatus();
  }
  return DnnlStatus(
      dnnl_sgemm('N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc), node,
      "running sgemm");
}

// Columns [col, col + n) of direction d's W^T or R^T ([k, G*C]) as a Gemm operand: our
// transposed copy when there is one (sgemm without a transpose runs 1.5x faster on these
// shapes), else ONNX's [G*C, k] rows.
struct Operand {
  const float* b;
  int64_t ldb;
  bool trans;
};
Operand WeightColumns(const float* onnx, const float* transposed, int d, int64_t k, int64_t gc,
                      int64_t col) {
  if (transposed != nullptr) return {transposed + d * k * gc + col, gc, false};
  return {onnx + d * gc * k + col * k, k, true};
}

// dst[0, n) = src[0, n), or zeros when src is nullptr.
void CopyOrZero(float* dst, const float* src, int64_t n) {
  if (src != nullptr) {
    std::memcpy(dst, src, n * sizeof(float));
  } else {
    std::fill_n(dst, n, 0.0f);
  }
}

void ClipTo(const std::optional<float>& clip, float* x, int64_t n) {
  if (!clip) return;
  const float hi = *clip, lo = -*clip;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) x[i] = std::min(std::max(x[i], lo), hi);
}

// gate[j] += x[j] + b[j] (+ peep[j] * cell[j] with peepholes). The branch stays outside the
// loops: a select inside one became masked loads from a null pointer, 3x slower for the LSTM.
void AddInputs(float* gate, const float* x, const float* b, const float* peep, const float* cell,
               int64_t n) {
  if (peep != nullptr) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) gate[j] += x[j] + b[j] + peep[j] * cell[j];
  } else {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) gate[j] += x[j] + b[j];
  }
}

// One run's operands, resolved to pointers.
struct OwnRun {
  const RnnAttributes& a;
  const RnnGeometry& g;
  const RnnTensors& t;
  const NodeLabel& node;
  float *xw, *gates, *h, *c, *rh, *bias, *rbias;
  uint8_t *qx, *qh;

  int64_t Length(int64_t n) const { return t.sequence_lens ? t.sequence_lens[n] : g.seq; }
  // Row of xw for step t of batch row n: X's memory order.
  int64_t XwRow(int64_t step, int64_t n) const {
    return g.layout == 0 ? step * g.batch + n : n * g.seq + step;
  }

  void PrepareBias() const;
  absl::Status Sequence(int d, int64_t b0, int64_t b1) const;
  void Finish(int d, int64_t b0, int64_t b1, const float* hs, const float* cs) const;
  // The elementwise part of one step for one batch row: `gate` holds H_{t-1} * R^T (GRU without
  // linear_before_reset: its z and r parts; Finish does h), `x` the row's X * W^T, `h`/`cell`
  // its states, updated in place.
  void LstmRow(int d, float* gate, const float* x, float* h, float* cell) const;
  void GruRow(int d, float* gate, const float* x, float* h, float* rh_row) const;
  void GruFinishRow(int d, float* gate, const float* x, float* h) const;
  // h = (1 - z) (.) g(clip(h~)) + z (.) h, the gate row holding z and h~'s pre-activation.
  void GruUpdate(int d, float* gate, float* h) const;
  void RnnRow(int d, float* gate, const float* x, float* h) const;
};

void OwnRun::PrepareBias() const {
  const int64_t gc = g.gate_width(), hc = g.hidden;
  for (int d = 0; d < g.dirs; ++d) {
    const float* wb = t.b != nullptr ? t.b + d * 2 * gc : nullptr;
    for (int64_t k = 0; k < gc; ++k) {
      const float w = wb ? wb[k] : 0.0f, r = wb ? wb[gc + k] : 0.0f;
      if (IsGruLbr(a) && k >= 2 * hc) {
        bias[d * gc + k] = w;
        rbias[d * hc + k - 2 * hc] = r;
      } else {
        bias[d * gc + k] = w + r;
      }
    }
  }
}

void OwnRun::LstmRow(int d, float* gate, const float* x, float* h, float* cell) const {
  const int64_t n = g.hidden;
  const float* b = bias + d * g.gate_width();
  const float* p = t.p != nullptr ? t.p + d * 3 * n : nullptr;  // P: i, o, f
  float *gi = gate, *go = gate + n, *gf = gate + 2 * n, *gc = gate + 3 * n;
  const Activation &f = a.activation(d, 0), &gact = a.activation(d, 1), &hact = a.activation(d, 2);
  AddInputs(gi, x, b, p, cell, n);
  ClipTo(a.clip, gi, n);
  ApplyActivation(f, gi, n);
  if (a.input_forget) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) gf[j] = 1.0f - gi[j];
  } else {
    AddInputs(gf, x + 2 * n, b + 2 * n, p ? p + 2 * n : nullptr, cell, n);
    ClipTo(a.clip, gf, n);
    ApplyActivation(f, gf, n);
  }
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) gc[j] += x[3 * n + j] + b[3 * n + j];
  ClipTo(a.clip, gc, n);
  ApplyActivation(gact, gc, n);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) cell[j] = gf[j] * cell[j] + gi[j] * gc[j];
  AddInputs(go, x + n, b + n, p ? p + n : nullptr, cell, n);
  ClipTo(a.clip, go, n);
  ApplyActivation(f, go, n);
  std::memcpy(gc, cell, n * sizeof(float));  // h(C_t), in the spent cell gate
  ApplyActivation(hact, gc, n);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) h[j] = go[j] * gc[j];
}

void OwnRun::GruRow(int d, float* gate, const float* x, float* h, float* rh_row) const {
  const int64_t n = g.hidden;
  const float* b = bias + d * g.gate_width();
  float *gz = gate, *gr = gate + n;
  const Activation& f = a.activation(d, 0);
#pragma omp simd
  for (int64_t j = 0; j < 2 * n; ++j) gate[j] += x[j] + b[j];
  ClipTo(a.clip, gate, 2 * n);
  ApplyActivation(f, gz, 2 * n);
  if (!a.linear_before_reset) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) rh_row[j] = gr[j] * h[j];  // Finish runs after R_h's product
    return;
  }
  float* gh = gate + 2 * n;
  const float* rb = rbias + d * n;
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) gh[j] = x[2 * n + j] + b[2 * n + j] + gr[j] * (gh[j] + rb[j]);
  GruUpdate(d, gate, h);
}

void OwnRun::GruFinishRow(int d, float* gate, const float* x, float* h) const {
  const int64_t n = g.hidden;
  const float* b = bias + d * g.gate_width() + 2 * n;
  float* gh = gate + 2 * n;
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) gh[j] += x[2 * n + j] + b[j];
  GruUpdate(d, gate, h);
}

void OwnRun::GruUpdate(int d, float* gate, float* h) const {
  const int64_t n = g.hidden;
  float *gz = gate, *gh = gate + 2 * n;
  ClipTo(a.clip, gh, n);
  ApplyActivation(a.activation(d, 1), gh, n);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) h[j] = (1.0f - gz[j]) * gh[j] + gz[j] * h[j];
}

void OwnRun::RnnRow(int d, float* gate, const float* x, float* h) const {
  const int64_t n = g.hidden;
  const float* b = bias + d * n;
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) gate[j] += x[j] + b[j];
  ClipTo(a.clip, gate, n);
  ApplyActivation(a.activation(d, 0), gate, n);
  std::memcpy(h, gate, n * sizeof(float));
}

// Past each row's length: zeros in Y; its last state (zeros for a length of 0) in Y_h, Y_c.
// `hs` / `cs` are the states of rows [b0, b1) of direction d.
void OwnRun::Finish(int d, int64_t b0, int64_t b1, const float* hs, const float* cs) const {
  const int64_t hc = g.hidden;
  for (int64_t n = b0; n < b1; ++n) {
    const int64_t len = Length(n), i = n - b0;
    if (t.y != nullptr) {
      for (int64_t step = len; step < g.seq; ++step)
        std::fill_n(t.y + g.YRow(step, d, n), hc, 0.0f);
    }
    if (t.y_h != nullptr) CopyOrZero(t.y_h + g.StateRow(d, n), len > 0 ? hs + i * hc : nullptr, hc);
    if (t.y_c != nullptr && cs != nullptr) {
      CopyOrZero(t.y_c + g.StateRow(d, n), len > 0 ? cs + i * hc : nullptr, hc);
    }
  }
}

// pass 2 for direction d and batch rows [b0, b1): the whole sequence, step by step.
absl::Status OwnRun::Sequence(int d, int64_t b0, int64_t b1) const {
  const int64_t nb = b1 - b0, hc = g.hidden, gc = g.gate_width();
  const size_t row_bytes = hc * sizeof(float);
  float* hs = h + (d * g.batch + b0) * hc;
  float* cs = a.op == RnnOp::kLstm ? c + (d * g.batch + b0) * hc : nullptr;
  float* rhs = IsGruNoLbr(a) ? rh + (d * g.batch + b0) * hc : nullptr;
  float* gs = gates + (d * g.batch + b0) * gc;
  const float* xw_d = xw + d * g.seq * g.batch * gc;
  int64_t max_len = 0;
  for (int64_t n = b0; n < b1; ++n) {
    const int64_t i = n - b0;
    const float* h0 = t.initial_h ? t.initial_h + g.StateRow(d, n) : nullptr;
    CopyOrZero(hs + i * hc, h0, hc);
    if (cs != nullptr) {
      const float* c0 = t.initial_c ? t.initial_c + g.StateRow(d, n) : nullptr;
      CopyOrZero(cs + i * hc, c0, hc);
    }
    if (rhs != nullptr) std::fill_n(rhs + i * hc, hc, 0.0f);  // rows past their length read it
    max_len = std::max(max_len, Length(n));
  }
  const bool reversed = a.reversed(d);
  // The step of row n at iteration s, or -1 past its length.
  auto step_of = [&](int64_t n, int64_t s) -> int64_t {
    const int64_t len = Length(n);
    return s >= len ? -1 : (reversed ? len - 1 - s : s);
  };
  // Quantized: H_{t-1} of these rows as uint8, rows padded to a multiple of 4 with zeros.
  const int64_t qh_row = Round4(hc);
  uint8_t* qhs = t.quant != nullptr ? qh + (d * g.batch + b0) * qh_row : nullptr;
  if (qhs != nullptr) std::fill_n(qhs, nb * qh_row, uint8_t{0});
  for (int64_t s = 0; s < max_len; ++s) {
    // The recurrent part of the gates (GRU without linear_before_reset: z and r first).
    if (qhs != nullptr) {
      // As ONNX Runtime: one scale and zero point for the step's H (every row of the batch).
      float scale;
      uint8_t zero;
      DynamicQuantizeParamsU8(hs, nb * hc, &scale, &zero);
      for (int64_t i = 0; i < nb; ++i) QuantizeU8(hs + i * hc, hc, scale, zero, qhs + i * qh_row);
      QgemvRows(t.quant->isa, qhs, nb, qh_row, zero, scale, t.quant->r[d], gs, gc);
    } else {
      const int64_t width = IsGruNoLbr(a) ? 2 * hc : gc;
      const Operand r = WeightColumns(t.r, t.r_t, d, hc, gc, 0);
      INFERD_RETURN_IF_ERROR(Gemm(nb, width, hc, hs, hc, r.b, r.ldb, r.trans, gs, gc, node));
    }
    for (int64_t n = b0; n < b1; ++n) {
      const int64_t step = step_of(n, s), i = n - b0;
      if (step < 0) continue;
      const float* x = xw_d + XwRow(step, n) * gc;
      float *gate = gs + i * gc, *hrow = hs + i * hc;
      switch (a.op) {
        case RnnOp::kLstm:
          LstmRow(d, gate, x, hrow, cs + i * hc);
          break;
        case RnnOp::kGru:
          GruRow(d, gate, x, hrow, rhs ? rhs + i * hc : nullptr);
          break;
        case RnnOp::kRnn:
          RnnRow(d, gate, x, hrow);
          break;
      }
    }
    if (rhs != nullptr) {  // h = g(x_h + (r (.) H_{t-1}) * R_h^T + b_h)
      const Operand rh_op = WeightColumns(t.r, t.r_t, d, hc, gc, 2 * hc);
      INFERD_RETURN_IF_ERROR(
          Gemm(nb, hc, hc, rhs, hc, rh_op.b, rh_op.ldb, rh_op.trans, gs + 2 * hc, gc, node));
      for (int64_t n = b0; n < b1; ++n) {
        const int64_t step = step_of(n, s), i = n - b0;
        if (step >= 0) GruFinishRow(d, gs + i * gc, xw_d + XwRow(step, n) * gc, hs + i * hc);
      }
    }
    if (t.y != nullptr) {
      for (int64_t n = b0; n < b1; ++n) {
        const int64_t step = step_of(n, s);
        if (step >= 0) std::memcpy(t.y + g.YRow(step, d, n), hs + (n - b0) * hc, row_bytes);
      }
    }
  }
  Finish(d, b0, b1, hs, cs);
  return absl::OkStatus();
}

}  // namespace

size_t OwnWorkspaceBytes(const RnnAttributes& attrs, const RnnGeometry& g, bool quantized) {
  return MakeLayout(attrs, g, quantized).total;
}

absl::Status RunOwnRnn(const RnnAttributes& attrs, const RnnGeometry& g, const RnnTensors& t,
                       void* workspace, engine::ThreadPool& pool, const NodeLabel& node) {
  const bool quantized = t.quant != nullptr;
  const OwnLayout l = MakeLayout(attrs, g, quantized);
  char* ws = static_cast<char*>(workspace);
  auto at = [&](size_t offset) { return reinterpret_cast<float*>(ws + offset); };
  auto bytes_at = [&](size_t offset) { return reinterpret_cast<uint8_t*>(ws + offset); };
  const OwnRun run{attrs,         g,       t,        node,       at(l.xw),    at(l.gates),
                   at(l.h),       at(l.c), at(l.rh), at(l.bias), at(l.rbias), bytes_at(l.qx),
                   bytes_at(l.qh)};
  run.PrepareBias();
  const int threads = pool.num_threads(), dirs = g.dirs;
  const int64_t gc = g.gate_width();

  // pass 1: X * W^T for every step, in row blocks per direction.
  const int64_t rows = g.seq * g.batch;
  const double projection = 2.0 * double(rows) * double(g.input) * double(gc) * dirs;
  const int p1 = PartCount(threads, projection, dirs * std::max<int64_t>(1, rows / 16));
  const int blocks = std::max(1, p1 / dirs);
  // Quantized: X as uint8 with one scale and zero point for the whole tensor (as ONNX Runtime,
  // which quantizes the A of each product as a whole), rows padded to a multiple of 4 with zeros.
  float x_scale = 1.0f;
  uint8_t x_zero = 0;
  const int64_t qx_row = Round4(g.input);
  if (quantized) {
    DynamicQuantizeParamsU8(t.x, rows * g.input, &x_scale, &x_zero);
    for (int64_t r = 0; r < rows; ++r) {
      uint8_t* dst = run.qx + r * qx_row;
      QuantizeU8(t.x + r * g.input, g.input, x_scale, x_zero, dst);
      std::fill(dst + g.input, dst + qx_row, uint8_t{0});
    }
  }
  INFERD_RETURN_IF_ERROR(RunRnnParts(pool, p1 > 1, dirs * blocks, [&](int part, int) {
    const int d = part / blocks, block = part % blocks;
    const int64_t r0 = rows * block / blocks, r1 = rows * (block + 1) / blocks;
    if (quantized) {
      QgemvRows(t.quant->isa, run.qx + r0 * qx_row, r1 - r0, qx_row, x_zero, x_scale, t.quant->w[d],
                run.xw + (d * rows + r0) * gc, gc);
      return absl::OkStatus();
    }
    const Operand w = WeightColumns(t.w, t.w_t, d, g.input, gc, 0);
    return Gemm(r1 - r0, gc, g.input, t.x + r0 * g.input, g.input, w.b, w.ldb, w.trans,
                run.xw + (d * rows + r0) * gc, gc, node);
  }));

  // pass 2: the recurrence, per direction and block of batch rows.
  RnnSplit split = SplitRecurrence(g, threads);
  if (quantized) {  // each step's H is quantized over the whole batch: one block per direction
    split.chunks = 1;
    split.parallel = split.parallel && dirs > 1;
  }
  return RunRnnParts(pool, split.parallel, split.parts(g), [&](int part, int) {
    const int d = part / split.chunks, chunk = part % split.chunks;
    return run.Sequence(d, split.begin(g, chunk), split.end(g, chunk));
  });
}

}  // namespace inferd::kernels::cpu
