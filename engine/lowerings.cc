#include "engine/lowerings.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/rewrite_util.h"

namespace inferd::engine {
namespace {

// A weight of an 8-bit integer type, or nullptr.
const Tensor* Int8Weight(const Graph& g, int value) {
  if (value < 0 || g.values[value].initializer == nullptr) return nullptr;
  const Tensor* t = g.values[value].initializer;
  return t->dtype() == DataType::kInt8 || t->dtype() == DataType::kUint8 ? t : nullptr;
}

int64_t IntegerAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kInt8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

// Dequantizes q [D, rows, cols] with per-direction or per-column (D * cols) scale and zero point
// and writes it transposed, [D, cols, rows]. False when the parameters do not have those shapes.
bool DequantizeTransposed(const Tensor& q, const Tensor& scale, const Tensor& zero_point,
                          float* out) {
  const int64_t d = q.shape()[0], rows = q.shape()[1], cols = q.shape()[2];
  const int64_t n = scale.NumElements();
  if (scale.dtype() != DataType::kFloat32 || zero_point.dtype() != q.dtype() ||
      zero_point.NumElements() != n || (n != d && n != d * cols)) {
    return false;
  }
  const bool per_column = n != d;
  const float* s = scale.data<float>();
  for (int64_t k = 0; k < d; ++k) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t p = per_column ? k * cols + c : k;
        const int64_t v = IntegerAt(q, (k * rows + r) * cols + c) - IntegerAt(zero_point, p);
        out[(k * cols + c) * rows + r] = static_cast<float>(v) * s[p];
      }
    }
  }
  return true;
}

// DynamicQuantizeLSTM's inputs: X, W, R, B, sequence_lens, initial_h, initial_c, P, W_scale,
// W_zero_point, R_scale, R_zero_point.
absl::StatusOr<bool> LowerDynamicQuantizeLstm(Graph& g, Node& n, DerivedWeights& derived) {
  auto in = [&](size_t i) { return i < n.inputs.size() ? n.inputs[i] : -1; };
  const Tensor* w = Int8Weight(g, in(1));
  const Tensor* r = Int8Weight(g, in(2));
  const Tensor* wz = Int8Weight(g, in(9));
  const Tensor* rz = Int8Weight(g, in(11));
  const Tensor* ws = in(8) >= 0 ? g.values[in(8)].initializer : nullptr;
  const Tensor* rs = in(10) >= 0 ? g.values[in(10)].initializer : nullptr;
  if (w == nullptr || r == nullptr || wz == nullptr || rz == nullptr || ws == nullptr ||
      rs == nullptr || w->shape().rank() != 3 || r->shape().rank() != 3 ||
      w->shape()[0] != r->shape()[0] || w->shape()[2] != r->shape()[2] ||
      r->shape()[2] != 4 * r->shape()[1]) {
    return false;
  }
  const int64_t d = w->shape()[0], input = w->shape()[1], gates = w->shape()[2];
  const int64_t hidden = r->shape()[1];
  float* w_data = nullptr;
  float* r_data = nullptr;
  INFERD_ASSIGN_OR_RETURN(const Tensor* w_float,
                          derived.NewFloat32(Shape{d, gates, input}, &w_data));
  INFERD_ASSIGN_OR_RETURN(const Tensor* r_float,
                          derived.NewFloat32(Shape{d, gates, hidden}, &r_data));
  if (!DequantizeTransposed(*w, *ws, *wz, w_data) || !DequantizeTransposed(*r, *rs, *rz, r_data)) {
    return false;  // the float copies stay unused; the node is refused as before
  }
  auto add_weight = [&](int quantized, const Tensor* t) {
    return rewrite::AddWeight(g, absl::StrCat(g.values[quantized].name, "/dequantized"), t);
  };
  std::vector<int> inputs = {in(0), add_weight(in(1), w_float), add_weight(in(2), r_float)};
  for (size_t i = 3; i < 8; ++i) inputs.push_back(in(i));
  while (!inputs.empty() && inputs.back() < 0) inputs.pop_back();
  n.inputs = std::move(inputs);
  n.op_type = "LSTM";
  n.domain = kOnnxDomain;
  n.opset = 14;
  return true;
}

}  // namespace

absl::StatusOr<int> ApplyLowerings(Graph& g, const KernelRegistry& registry,
                                   DerivedWeights& derived) {
  // A registry with DynamicQuantizeLSTM's own kernel (the CPU's: integer products) runs it as it
  // is; the float lowering is for registries with only an LSTM.
  if (!registry.HasOp(kOnnxDomain, "LSTM") ||
      registry.HasOp(kMicrosoftDomain, "DynamicQuantizeLSTM")) {
    return 0;
  }
  int lowered = 0;
  for (Node& n : g.nodes) {
    if (n.domain != kMicrosoftDomain || n.op_type != "DynamicQuantizeLSTM") continue;
    INFERD_ASSIGN_OR_RETURN(const bool done, LowerDynamicQuantizeLstm(g, n, derived));
    if (done) ++lowered;
  }
  if (lowered > 0) {
    g.RebuildEdges();
    INFERD_RETURN_IF_ERROR(g.Validate());
  }
  return lowered;
}

}  // namespace inferd::engine
