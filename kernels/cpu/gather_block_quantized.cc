// com.microsoft GatherBlockQuantized (ONNX Runtime's contrib op; the onnxruntime-genai model
// builder writes it for int4 token embeddings, often the tied lm_head weights read as a table):
// a Gather over rows of a block-quantized table, each gathered row dequantized to float32.
//
//   data uint8 [rows, ..., cols_stored]: with bits = 4 two values a byte, the low nibble first
//   (cols = 2 * cols_stored), with bits = 8 one a byte; indices int32 / int64 of any shape
//   (negative ones count from the end); scales float [rows, ..., ceil(cols / block_size)];
//   zero_points uint8 (optional), shaped like scales with the last dim packed ([rows, ...,
//   ceil(blocks / 2)] for 4 bits), absent meaning 2^(bits - 1) (ONNX Runtime's convention for
//   uint8 data). 4-bit zero points are read as ONNX Runtime reads them: block f of the whole
//   table (line * blocks + block) is nibble f % 2 of byte f / 2, so with an odd block count a
//   line's zero points do not start at its row of the shape (measured against ORT 1.23).
//   output float [indices..., data[1:] with the last dim cols]: (q - zero_point) * scale.
//
// Supported: uint8 data, gather_axis 0, quantize_axis the last axis, bits 4 or 8, block_size a
// power of two >= 16 (what ONNX Runtime accepts for uint8 data); anything else is refused at
// creation naming the attribute. Indices and every size are checked before anything is written.
// Own code, parallel over the gathered rows.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class GatherBlockQuantizedKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<GatherBlockQuantizedKernel>> Create(
      const KernelInfo& info) {
    const int64_t bits = info.GetInt("bits", 4);
    const int64_t block = info.GetInt("block_size", 128);
    if (bits != 4 && bits != 8) {
      return info.Error(absl::StrCat("bits must be 4 or 8, got ", bits));
    }
    if (block < 16 || block > (int64_t{1} << 20) || (block & (block - 1)) != 0) {
      return info.Error(absl::StrCat("block_size must be a power of two >= 16, got ", block));
    }
    const DataType data_type = info.input(0).type;
    if (data_type != DataType::kUndefined && data_type != DataType::kUint8) {
      return info.Error(
          absl::StrCat("data must be uint8 (int4 / uint4 tensors are not "
                       "supported), got ",
                       engine::DataTypeName(data_type)));
    }
    const DataType scale_type = info.input(2).type;
    if (scale_type != DataType::kUndefined && scale_type != DataType::kFloat32) {
      return info.Error(absl::StrCat("only float32 scales are supported, got ",
                                     engine::DataTypeName(scale_type)));
    }
    return std::unique_ptr<GatherBlockQuantizedKernel>(new GatherBlockQuantizedKernel(
        info, bits, block, info.GetInt("gather_axis", 0), info.GetInt("quantize_axis", 1)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* scales, RequiredInput(ctx, 2, node_));
    const Tensor* zp = ctx.num_inputs() > 3 ? ctx.input(3) : nullptr;
    INFERD_RETURN_IF_ERROR(CheckType(*data, DataType::kUint8, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*scales, DataType::kFloat32, 2, node_));
    if (zp != nullptr) INFERD_RETURN_IF_ERROR(CheckType(*zp, DataType::kUint8, 3, node_));
    const Shape& ds = data->shape();
    if (ds.rank() < 2) {
      return node_.InvalidArgument(absl::StrCat("data must have rank >= 2, got ", ds.ToString()));
    }
    const int rank = static_cast<int>(ds.rank());
    INFERD_ASSIGN_OR_RETURN(const int gather_axis, NormalizeAxis(gather_axis_, rank, node_));
    INFERD_ASSIGN_OR_RETURN(const int quantize_axis, NormalizeAxis(quantize_axis_, rank, node_));
    if (gather_axis != 0 || quantize_axis != rank - 1) {
      return node_.Unimplemented(
          absl::StrCat("only gather_axis 0 and quantize_axis the last axis are supported for "
                       "uint8 data, got gather_axis ",
                       gather_axis_, " and quantize_axis ", quantize_axis_));
    }
    const int64_t per_byte = bits_ == 4 ? 2 : 1;
    const int64_t stored = ds[rank - 1];
    const int64_t cols = stored * per_byte;
    const int64_t blocks = (cols + block_ - 1) / block_;
    const int64_t rows = ds[0];
    const int64_t lines = ds.SizeBetween(1, rank - 1);  // quantized lines per gathered row
    // scales: data's shape with the last dim blocks.
    Shape expect_scales = ds;
    expect_scales[rank - 1] = blocks;
    if (scales->shape() != expect_scales) {
      return node_.InvalidArgument(absl::StrCat(
          "scales must be ", expect_scales.ToString(), " (blocks of ", block_,
          " along the last axis of ", cols, " values), got ", scales->shape().ToString()));
    }
    const int64_t zp_row = (blocks + per_byte - 1) / per_byte;
    if (zp != nullptr) {
      Shape expect_zp = ds;
      expect_zp[rank - 1] = zp_row;
      if (zp->shape() != expect_zp) {
        return node_.InvalidArgument(absl::StrCat("zero_points must be ", expect_zp.ToString(),
                                                  ", got ", zp->shape().ToString()));
      }
    }
    return WithIndexType(*indices, node_, [&](auto index) -> absl::Status {
      using Index = decltype(index);
      const Index* idx = indices->data<Index>();
      const int64_t count = indices->NumElements();
      for (int64_t i = 0; i < count; ++i) {
        if (idx[i] < -rows || idx[i] >= rows) {
          return node_.InvalidArgument(absl::StrCat("index ", static_cast<int64_t>(idx[i]),
                                                    " (at position ", i, ") is out of range for ",
                                                    rows, " rows"));
        }
      }
      Shape out_shape = indices->shape();
      for (int d = 1; d < rank - 1; ++d) out_shape.push_back(ds[d]);
      out_shape.push_back(cols);
      INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, DataType::kFloat32, out_shape));
      if (out->NumElements() == 0) return absl::OkStatus();
      const uint8_t* q = data->data<uint8_t>();
      const float* s = scales->data<float>();
      const uint8_t* z = zp != nullptr ? zp->data<uint8_t>() : nullptr;
      float* y = out->mutable_data<float>();
      const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1));
      ctx.threads().ParallelFor(count * lines, grain, [&](int64_t begin, int64_t end) {
        for (int64_t j = begin; j < end; ++j) {
          const int64_t i = j / lines, l = j % lines;
          const int64_t row = idx[i] < 0 ? idx[i] + rows : idx[i];
          const int64_t line = row * lines + l;
          DequantizeLine(q + line * stored, s + line * blocks, z, line * blocks, cols,
                         y + j * cols);
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  GatherBlockQuantizedKernel(const KernelInfo& info, int64_t bits, int64_t block,
                             int64_t gather_axis, int64_t quantize_axis)
      : node_(info),
        bits_(bits),
        block_(block),
        gather_axis_(gather_axis),
        quantize_axis_(quantize_axis) {}

  // One line of `cols` values: its stored bytes, its blocks' scales, and the table's zero points
  // (or nullptr) with `first_block`, the index of the line's first block in the whole table.
  void DequantizeLine(const uint8_t* q, const float* scales, const uint8_t* zp, int64_t first_block,
                      int64_t cols, float* y) const {
    const int64_t blocks = (cols + block_ - 1) / block_;
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t f = first_block + b;
      float zero;
      if (bits_ == 4) {
        zero = zp == nullptr ? 8.0f
                             : static_cast<float>((f & 1) ? (zp[f / 2] >> 4) : (zp[f / 2] & 0x0F));
      } else {
        zero = zp == nullptr ? 128.0f : static_cast<float>(zp[f]);
      }
      const float scale = scales[b];
      const int64_t c0 = b * block_, c1 = std::min(cols, c0 + block_);
      if (bits_ == 4) {
        for (int64_t c = c0; c < c1; ++c) {
          const uint8_t v = q[c / 2];
          y[c] = (static_cast<float>((c & 1) ? (v >> 4) : (v & 0x0F)) - zero) * scale;
        }
      } else {
        for (int64_t c = c0; c < c1; ++c) y[c] = (static_cast<float>(q[c]) - zero) * scale;
      }
    }
  }

  const NodeLabel node_;
  const int64_t bits_, block_, gather_axis_, quantize_axis_;
};

}  // namespace

std::vector<engine::KernelDef> GatherBlockQuantizedKernelDefs() {
  engine::KernelDef def = CpuDef(engine::kMicrosoftDomain, "GatherBlockQuantized", 1, kMaxOpset,
                                 {DataType::kFloat32}, FactoryOf<GatherBlockQuantizedKernel>());
  def.type_input = -1;  // keyed on the output's type (data is uint8)
  return {def};
}

}  // namespace inferd::kernels::cpu
