// Tensor sequences and optionals (docs/sequences.md), own code:
//   SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase, SequenceLength
//                        (opset 11+)
//   SplitToSequence, ConcatFromSequence (opset 11+)
//   SequenceMap (opset 17+): the body runs once per position through the SubgraphRunner
//   Optional, OptionalHasElement, OptionalGetElement (opset 15+; 18+ also take a plain tensor or
//                        sequence, and OptionalHasElement an absent input)
// A sequence's tensors each own a buffer from the execution side (MakeTemporaryTensor); a kernel
// that makes a sequence from its inputs copies them, since the inputs' buffers go back to their
// arena at their last use. The runtime hands the value to the output slot without a copy, or
// copies it tensor by tensor into the IOArena when it is a graph output. Positions may be
// negative (counted from the end); one out of range is INVALID_ARGUMENT naming the range.
// Kernels are immutable after creation: thread-safe.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;
using engine::ValueKind;

// Input `i` as a sequence, or INVALID_ARGUMENT.
absl::StatusOr<const Tensor*> SequenceInput(const KernelContext& ctx, int i,
                                            const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, i, node));
  if (!t->is_sequence()) {
    return node.InvalidArgument(
        absl::StrCat("input ", i, " must be a sequence, got ", ValueKindName(t->kind())));
  }
  return t;
}

// Input `i` as a tensor, or INVALID_ARGUMENT.
absl::StatusOr<const Tensor*> TensorInput(const KernelContext& ctx, int i, const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, i, node));
  if (!t->is_tensor()) {
    return node.InvalidArgument(
        absl::StrCat("input ", i, " must be a tensor, got ", ValueKindName(t->kind())));
  }
  return t;
}

// A position input: one int32 or int64 element.
absl::StatusOr<int64_t> ReadPosition(const Tensor& t, const NodeLabel& node) {
  if (!t.is_tensor() || t.NumElements() != 1 || t.shape().rank() > 1) {
    return node.InvalidArgument(
        absl::StrCat("'position' must be a scalar, got ", t.shape().ToString()));
  }
  if (t.dtype() == DataType::kInt64) return t.data<int64_t>()[0];
  if (t.dtype() == DataType::kInt32) return t.data<int32_t>()[0];
  return node.InvalidArgument(
      absl::StrCat("'position' must be int32 or int64, got ", DataTypeName(t.dtype())));
}

// `pos` in [-size, size - 1] (or [-size, size] when `end_ok`, for insertion) made non-negative.
absl::StatusOr<int64_t> NormalizePosition(int64_t pos, int64_t size, bool end_ok,
                                          const NodeLabel& node) {
  const int64_t hi = end_ok ? size : size - 1;
  if (pos < -size || pos > hi) {
    if (size == 0 && !end_ok) {
      return node.InvalidArgument(absl::StrCat("position ", pos, " in an empty sequence"));
    }
    return node.InvalidArgument(absl::StrCat("position ", pos, " is out of range [", -size, ", ",
                                             hi, "] for a sequence of ", size, " tensors"));
  }
  return pos < 0 ? pos + size : pos;
}

// Output `slot` becomes a copy of the tensor `t` (its own buffer in the slot's arena).
absl::Status CopyToOutput(KernelContext& ctx, int slot, const Tensor& t) {
  INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(slot, t.dtype(), t.shape()));
  if (t.bytes() > 0) std::memcpy(out->raw_mutable_data(), t.raw_data(), t.bytes());
  return absl::OkStatus();
}

// The element type a node declares for output 0 (shape inference), or `fallback`.
DataType DeclaredOutputType(const KernelInfo& info, DataType fallback) {
  const DataType t = info.output(0).type;
  return t != DataType::kUndefined ? t : fallback;
}

// ---------------------------------------------------------------------------------------------
class SequenceEmptyKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SequenceEmptyKernel>> Create(const KernelInfo& info) {
    const int64_t dtype = info.GetInt("dtype", static_cast<int64_t>(DataType::kFloat32));
    if (dtype > INT32_MAX || !engine::IsKnownDataType(static_cast<int32_t>(dtype))) {
      return info.Error(absl::StrCat("'dtype' ", dtype, " is not a known element type"));
    }
    return std::unique_ptr<SequenceEmptyKernel>(
        new SequenceEmptyKernel(static_cast<DataType>(dtype)));
  }
  absl::Status Compute(KernelContext& ctx) const override {
    return ctx.SetOutput(0, Tensor::Sequence(type_, {}));
  }

 private:
  explicit SequenceEmptyKernel(DataType type) : type_(type) {}
  const DataType type_;
};

class SequenceConstructKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SequenceConstructKernel>> Create(const KernelInfo& info) {
    if (info.num_inputs() < 1) return info.Error("needs at least one input tensor");
    return std::unique_ptr<SequenceConstructKernel>(new SequenceConstructKernel(info));
  }
  absl::Status Compute(KernelContext& ctx) const override {
    std::vector<Tensor> items;
    items.reserve(ctx.num_inputs());
    DataType type = DataType::kUndefined;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      INFERD_ASSIGN_OR_RETURN(const Tensor* t, TensorInput(ctx, i, node_));
      if (i > 0 && t->dtype() != type) {
        return node_.InvalidArgument(absl::StrCat("input ", i, " is ", DataTypeName(t->dtype()),
                                                  ", input 0 is ", DataTypeName(type)));
      }
      type = t->dtype();
      INFERD_ASSIGN_OR_RETURN(Tensor copy, engine::CopyValue(ctx, *t));
      items.push_back(std::move(copy));
    }
    return ctx.SetOutput(0, Tensor::Sequence(type, std::move(items)));
  }

 private:
  explicit SequenceConstructKernel(const KernelInfo& info) : node_(info) {}
  const NodeLabel node_;
};

class SequenceInsertKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SequenceInsertKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<SequenceInsertKernel>(new SequenceInsertKernel(info));
  }
  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* seq, SequenceInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* t, TensorInput(ctx, 1, node_));
    if (t->dtype() != seq->dtype()) {
      return node_.InvalidArgument(absl::StrCat("cannot insert a ", DataTypeName(t->dtype()),
                                                " tensor into a sequence of ",
                                                DataTypeName(seq->dtype())));
    }
    const int64_t size = static_cast<int64_t>(seq->items().size());
    int64_t pos = size;
    if (const Tensor* p = ctx.input(2)) {
      INFERD_ASSIGN_OR_RETURN(const int64_t given, ReadPosition(*p, node_));
      INFERD_ASSIGN_OR_RETURN(pos, NormalizePosition(given, size, /*end_ok=*/true, node_));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor out, engine::CopyValue(ctx, *seq));
    INFERD_ASSIGN_OR_RETURN(Tensor inserted, engine::CopyValue(ctx, *t));
    std::vector<Tensor>& items = out.mutable_items();
    items.insert(items.begin() + pos, std::move(inserted));
    return ctx.SetOutput(0, std::move(out));
  }

 private:
  explicit SequenceInsertKernel(const KernelInfo& info) : node_(info) {}
  const NodeLabel node_;
};

class SequenceAtKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SequenceAtKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<SequenceAtKernel>(new SequenceAtKernel(info));
  }
  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* seq, SequenceInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* p, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const int64_t given, ReadPosition(*p, node_));
    const int64_t size = static_cast<int64_t>(seq->items().size());
    INFERD_ASSIGN_OR_RETURN(const int64_t pos,
                            NormalizePosition(given, size, /*end_ok=*/false, node_));
    return CopyToOutput(ctx, 0, seq->items()[pos]);
  }

 private:
  explicit SequenceAtKernel(const KernelInfo& info) : node_(info) {}
  const NodeLabel node_;
};

class SequenceEraseKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SequenceEraseKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<SequenceEraseKernel>(new SequenceEraseKernel(info));
  }
  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* seq, SequenceInput(ctx, 0, node_));
    const int64_t size = static_cast<int64_t>(seq->items().size());
    int64_t given = -1;  // the last tensor
    if (const Tensor* p = ctx.input(1)) {
      INFERD_ASSIGN_OR_RETURN(given, ReadPosition(*p, node_));
    }
    INFERD_ASSIGN_OR_RETURN(const int64_t pos,
                            NormalizePosition(given, size, /*end_ok=*/false, node_));
    std::vector<Tensor> items;
    items.reserve(size - 1);
    for (int64_t i = 0; i < size; ++i) {
      if (i == pos) continue;
      INFERD_ASSIGN_OR_RETURN(Tensor copy, engine::CopyValue(ctx, seq->items()[i]));
      items.push_back(std::move(copy));
    }
    return ctx.SetOutput(0, Tensor::Sequence(seq->dtype(), std::move(items)));
  }

 private:
  explicit SequenceEraseKernel(const KernelInfo& info) : node_(info) {}
  const NodeLabel node_;
};

class SequenceLengthKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SequenceLengthKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<SequenceLengthKernel>(new SequenceLengthKernel(info));
  }
  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* seq, SequenceInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, DataType::kInt64, Shape()));
    out->mutable_data<int64_t>()[0] = static_cast<int64_t>(seq->items().size());
    return absl::OkStatus();
  }

 private:
  explicit SequenceLengthKernel(const KernelInfo& info) : node_(info) {}
  const NodeLabel node_;
};

// ---------------------------------------------------------------------------------------------
// SplitToSequence: `split` absent: pieces of 1 along `axis` (the axis dropped when keepdims = 0);
// a scalar: pieces of that length, the last one shorter when it does not divide; a 1-D list:
// those lengths, which must add up to the axis' extent.
class SplitToSequenceKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SplitToSequenceKernel>> Create(const KernelInfo& info) {
    const int64_t keepdims = info.GetInt("keepdims", 1);
    if (keepdims != 0 && keepdims != 1) {
      return info.Error(absl::StrCat("'keepdims' must be 0 or 1, got ", keepdims));
    }
    return std::unique_ptr<SplitToSequenceKernel>(
        new SplitToSequenceKernel(info, info.GetInt("axis", 0), keepdims == 1));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, TensorInput(ctx, 0, node_));
    const absl::Span<const int64_t> dims = x->shape().dims();
    const int64_t rank = static_cast<int64_t>(dims.size());
    INFERD_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(axis_, rank, node_));
    const int64_t extent = dims[axis];
    // pass 1: the lengths of the pieces.
    std::vector<int64_t> lengths;
    bool drop_axis = false;
    const Tensor* split = ctx.input(1);
    if (split == nullptr) {
      lengths.assign(extent, 1);
      drop_axis = !keepdims_;
    } else {
      if (!split->is_tensor() ||
          (split->dtype() != DataType::kInt64 && split->dtype() != DataType::kInt32) ||
          split->shape().rank() > 1) {
        return node_.InvalidArgument("'split' must be an int32 or int64 scalar or 1-D tensor");
      }
      std::vector<int64_t> values(split->NumElements());
      for (size_t i = 0; i < values.size(); ++i) {
        values[i] = split->dtype() == DataType::kInt64 ? split->data<int64_t>()[i]
                                                       : split->data<int32_t>()[i];
      }
      if (split->shape().rank() == 0) {
        const int64_t piece = values[0];
        if (piece <= 0) {
          return node_.InvalidArgument(absl::StrCat("'split' ", piece, " must be positive"));
        }
        for (int64_t at = 0; at < extent; at += std::min(piece, extent - at)) {
          lengths.push_back(std::min(piece, extent - at));
        }
      } else {
        int64_t sum = 0;
        for (int64_t v : values) {
          if (v < 0)
            return node_.InvalidArgument(absl::StrCat("'split' has a negative length ", v));
          std::optional<int64_t> next = CheckedAdd<int64_t>(sum, v);
          if (!next || *next > extent) {
            sum = -1;
            break;
          }
          sum = *next;
        }
        if (sum != extent) {
          return node_.InvalidArgument(absl::StrCat("the 'split' lengths do not add up to the ",
                                                    "extent ", extent, " of axis ", axis));
        }
        lengths = std::move(values);
      }
    }
    // pass 2: copy each piece (outer rows of `length * inner` elements).
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= dims[d];
      if (d > axis) inner *= dims[d];
    }
    const size_t elem = ElementSize(x->dtype());
    const auto* src = static_cast<const unsigned char*>(x->raw_data());
    std::vector<Tensor> items;
    items.reserve(lengths.size());
    int64_t start = 0;
    for (int64_t len : lengths) {
      std::vector<int64_t> piece_dims(dims.begin(), dims.end());
      piece_dims[axis] = len;
      if (drop_axis) piece_dims.erase(piece_dims.begin() + axis);
      INFERD_ASSIGN_OR_RETURN(Tensor piece, ctx.MakeTemporaryTensor(x->dtype(), Shape(piece_dims)));
      const size_t row = static_cast<size_t>(len * inner) * elem;
      auto* dst = static_cast<unsigned char*>(piece.raw_mutable_data());
      for (int64_t o = 0; o < outer && row > 0; ++o) {
        std::memcpy(dst + o * row, src + (static_cast<size_t>(o * extent + start) * inner) * elem,
                    row);
      }
      start += len;
      items.push_back(std::move(piece));
    }
    return ctx.SetOutput(0, Tensor::Sequence(x->dtype(), std::move(items)));
  }

 private:
  SplitToSequenceKernel(const KernelInfo& info, int64_t axis, bool keepdims)
      : node_(info), axis_(axis), keepdims_(keepdims) {}
  const NodeLabel node_;
  const int64_t axis_;
  const bool keepdims_;
};

// ConcatFromSequence: the tensors joined along `axis` (new_axis = 0: every other dim equal), or
// stacked on a new axis (new_axis = 1: all shapes equal; axis in [-rank-1, rank]).
class ConcatFromSequenceKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ConcatFromSequenceKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(const int64_t axis, info.RequireInt("axis"));
    const int64_t new_axis = info.GetInt("new_axis", 0);
    if (new_axis != 0 && new_axis != 1) {
      return info.Error(absl::StrCat("'new_axis' must be 0 or 1, got ", new_axis));
    }
    return std::unique_ptr<ConcatFromSequenceKernel>(
        new ConcatFromSequenceKernel(info, axis, new_axis == 1));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* seq, SequenceInput(ctx, 0, node_));
    const std::vector<Tensor>& items = seq->items();
    if (items.empty()) return node_.InvalidArgument("cannot concatenate an empty sequence");
    const absl::Span<const int64_t> first = items[0].shape().dims();
    const int64_t rank = static_cast<int64_t>(first.size());
    INFERD_ASSIGN_OR_RETURN(const int axis,
                            NormalizeAxis(axis_, new_axis_ ? rank + 1 : rank, node_));
    // pass 1: check the shapes and sum the extents along the axis.
    int64_t total = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      const absl::Span<const int64_t> d = items[i].shape().dims();
      bool same = static_cast<int64_t>(d.size()) == rank;
      for (int64_t k = 0; same && k < rank; ++k) {
        same = d[k] == first[k] || (!new_axis_ && k == axis);
      }
      if (!same) {
        return node_.InvalidArgument(absl::StrCat("tensor ", i, " ", items[i].shape().ToString(),
                                                  " does not fit tensor 0 ",
                                                  items[0].shape().ToString(), " on axis ", axis));
      }
      std::optional<int64_t> sum = CheckedAdd<int64_t>(total, new_axis_ ? 1 : d[axis]);
      if (!sum) return node_.InvalidArgument("the concatenated extent overflows");
      total = *sum;
    }
    std::vector<int64_t> out_dims(first.begin(), first.end());
    if (new_axis_) {
      out_dims.insert(out_dims.begin() + axis, total);
    } else {
      out_dims[axis] = total;
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, seq->dtype(), Shape(out_dims)));
    // pass 2: copy; each tensor contributes `outer` rows of (its extent * inner) elements.
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < static_cast<int64_t>(out_dims.size()); ++k) {
      if (k < axis) outer *= out_dims[k];
      if (k > axis) inner *= out_dims[k];
    }
    const size_t elem = ElementSize(seq->dtype());
    const size_t out_row = static_cast<size_t>(total * inner) * elem;
    auto* dst = static_cast<unsigned char*>(out->raw_mutable_data());
    size_t offset = 0;
    for (const Tensor& t : items) {
      const int64_t extent = new_axis_ ? 1 : t.shape().dims()[axis];
      const size_t row = static_cast<size_t>(extent * inner) * elem;
      const auto* src = static_cast<const unsigned char*>(t.raw_data());
      for (int64_t o = 0; o < outer && row > 0; ++o) {
        std::memcpy(dst + o * out_row + offset, src + o * row, row);
      }
      offset += row;
    }
    return absl::OkStatus();
  }

 private:
  ConcatFromSequenceKernel(const KernelInfo& info, int64_t axis, bool new_axis)
      : node_(info), axis_(axis), new_axis_(new_axis) {}
  const NodeLabel node_;
  const int64_t axis_;
  const bool new_axis_;
};

// ---------------------------------------------------------------------------------------------
// SequenceMap: inputs (input_sequence, additional_inputs...), each a sequence or a tensor; the
// body runs once per position i of the sequences (which must all have the same length) with
// the i-th tensor of each sequence and each tensor as it is; output k is the sequence of the
// body's k-th outputs.
class SequenceMapKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SequenceMapKernel>> Create(const KernelInfo& info) {
    const onnx::GraphProto* body = info.GetGraph("body");
    if (body == nullptr) return info.Error("the graph attribute 'body' is missing");
    if (body->input_size() != info.num_inputs()) {
      return info.Error(absl::StrCat("the body declares ", body->input_size(),
                                     " inputs; the node has ", info.num_inputs()));
    }
    if (body->output_size() != info.num_outputs()) {
      return info.Error(absl::StrCat("the body declares ", body->output_size(),
                                     " outputs; the node has ", info.num_outputs()));
    }
    std::vector<DataType> out_types;
    for (int k = 0; k < info.num_outputs(); ++k) {
      const DataType declared = info.output(k).type;
      const int32_t body_type = body->output(k).type().tensor_type().elem_type();
      out_types.push_back(declared != DataType::kUndefined     ? declared
                          : engine::IsKnownDataType(body_type) ? static_cast<DataType>(body_type)
                                                               : DataType::kFloat32);
    }
    return std::unique_ptr<SequenceMapKernel>(new SequenceMapKernel(info, std::move(out_types)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    engine::SubgraphRunner* runner = ctx.subgraphs();
    if (runner == nullptr) return node_.Internal("SequenceMap without a body plan");
    // pass 1: the inputs and the common length.
    std::vector<const Tensor*> ins(ctx.num_inputs());
    int64_t length = -1;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      INFERD_ASSIGN_OR_RETURN(ins[i], RequiredInput(ctx, i, node_));
      if (i == 0 && !ins[i]->is_sequence()) {
        return node_.InvalidArgument("input 0 must be a sequence");
      }
      if (!ins[i]->is_sequence()) continue;
      const int64_t n = static_cast<int64_t>(ins[i]->items().size());
      if (length >= 0 && n != length) {
        return node_.InvalidArgument(absl::StrCat("input ", i, " is a sequence of ", n,
                                                  " tensors, input 0 one of ", length));
      }
      length = n;
    }
    // pass 2: run the body per position; its outputs own execution-side buffers.
    std::vector<std::vector<Tensor>> results(ctx.num_outputs());
    std::vector<const Tensor*> body_in(ins.size());
    std::vector<Tensor> body_out;
    for (int64_t pos = 0; pos < length; ++pos) {
      for (size_t i = 0; i < ins.size(); ++i) {
        body_in[i] = ins[i]->is_sequence() ? &ins[i]->items()[pos] : ins[i];
      }
      INFERD_RETURN_IF_ERROR(runner->RunSubgraphWith("body", body_in, body_out));
      if (body_out.size() != results.size()) {
        return node_.Internal("the body returned a wrong number of outputs");
      }
      for (size_t k = 0; k < results.size(); ++k) {
        if (!body_out[k].is_tensor()) {
          return node_.Unimplemented("a body output that is not a tensor is not supported");
        }
        results[k].push_back(std::move(body_out[k]));
      }
    }
    // pass 3: one sequence per output.
    for (size_t k = 0; k < results.size(); ++k) {
      const DataType type = results[k].empty() ? out_types_[k] : results[k][0].dtype();
      INFERD_RETURN_IF_ERROR(
          ctx.SetOutput(static_cast<int>(k), Tensor::Sequence(type, std::move(results[k]))));
    }
    return absl::OkStatus();
  }

 private:
  SequenceMapKernel(const KernelInfo& info, std::vector<DataType> out_types)
      : node_(info), out_types_(std::move(out_types)) {}
  const NodeLabel node_;
  const std::vector<DataType> out_types_;
};

// ---------------------------------------------------------------------------------------------
// Optional: wraps its input (a tensor or a sequence), or is empty when there is none; the
// element type of an empty one is the 'type' attribute's (or what inference says).
class OptionalKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OptionalKernel>> Create(const KernelInfo& info) {
    DataType type = DataType::kUndefined;
    if (const onnx::AttributeProto* a = info.FindAttribute("type"); a != nullptr && a->has_tp()) {
      const onnx::TypeProto* tp = &a->tp();
      if (tp->has_sequence_type()) tp = &tp->sequence_type().elem_type();
      if (tp->has_tensor_type() && engine::IsKnownDataType(tp->tensor_type().elem_type())) {
        type = static_cast<DataType>(tp->tensor_type().elem_type());
      }
    }
    if (!info.input_present(0) && type == DataType::kUndefined) {
      type = DeclaredOutputType(info, DataType::kUndefined);
      if (type == DataType::kUndefined) {
        return info.Error("an Optional without input needs the 'type' attribute");
      }
    }
    return std::unique_ptr<OptionalKernel>(new OptionalKernel(info, type));
  }
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return ctx.SetOutput(0, Tensor::OptionalNone(type_));
    if (x->is_optional()) return node_.InvalidArgument("the input cannot be an optional");
    INFERD_ASSIGN_OR_RETURN(Tensor copy, engine::CopyValue(ctx, *x));
    return ctx.SetOutput(0, Tensor::OptionalOf(std::move(copy)));
  }

 private:
  OptionalKernel(const KernelInfo& info, DataType type) : node_(info), type_(type) {}
  const NodeLabel node_;
  const DataType type_;
};

class OptionalHasElementKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OptionalHasElementKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<OptionalHasElementKernel>(new OptionalHasElementKernel(info));
  }
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr && opset_ < 18) return node_.InvalidArgument("the input is absent");
    // Opset 18+: a tensor or a sequence has an element; an absent input has none.
    const bool has = x != nullptr && (!x->is_optional() || x->has_element());
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, DataType::kBool, Shape()));
    out->mutable_data<bool>()[0] = has;
    return absl::OkStatus();
  }

 private:
  explicit OptionalHasElementKernel(const KernelInfo& info) : node_(info), opset_(info.opset()) {}
  const NodeLabel node_;
  const int opset_;
};

class OptionalGetElementKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OptionalGetElementKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<OptionalGetElementKernel>(new OptionalGetElementKernel(info));
  }
  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const Tensor* value = x;
    if (x->is_optional()) {
      if (!x->has_element()) return node_.InvalidArgument("the optional input is empty");
      value = &x->items()[0];
    } else if (opset_ < 18) {
      return node_.InvalidArgument(
          absl::StrCat("the input must be an optional, got ", ValueKindName(x->kind())));
    }
    if (value->is_tensor()) return CopyToOutput(ctx, 0, *value);
    INFERD_ASSIGN_OR_RETURN(Tensor copy, engine::CopyValue(ctx, *value));
    return ctx.SetOutput(0, std::move(copy));
  }

 private:
  explicit OptionalGetElementKernel(const KernelInfo& info) : node_(info), opset_(info.opset()) {}
  const NodeLabel node_;
  const int opset_;
};

template <typename K>
engine::KernelDef Def(const char* op, int since) {
  return CpuDef(engine::kOnnxDomain, op, since, kMaxOpset, {}, FactoryOf<K>());
}

}  // namespace

std::vector<engine::KernelDef> SequenceKernelDefs() {
  std::vector<engine::KernelDef> defs;
  defs.push_back(Def<SequenceEmptyKernel>("SequenceEmpty", 11));
  defs.push_back(Def<SequenceConstructKernel>("SequenceConstruct", 11));
  defs.push_back(Def<SequenceInsertKernel>("SequenceInsert", 11));
  defs.push_back(Def<SequenceAtKernel>("SequenceAt", 11));
  defs.push_back(Def<SequenceEraseKernel>("SequenceErase", 11));
  defs.push_back(Def<SequenceLengthKernel>("SequenceLength", 11));
  defs.push_back(Def<SplitToSequenceKernel>("SplitToSequence", 11));
  defs.push_back(Def<ConcatFromSequenceKernel>("ConcatFromSequence", 11));
  defs.push_back(Def<SequenceMapKernel>("SequenceMap", 17));
  defs.push_back(Def<OptionalKernel>("Optional", 15));
  defs.push_back(Def<OptionalHasElementKernel>("OptionalHasElement", 15));
  defs.push_back(Def<OptionalGetElementKernel>("OptionalGetElement", 15));
  return defs;
}

}  // namespace inferd::kernels::cpu
