#include "engine/control_flow.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"

namespace inferd::engine {
namespace {

constexpr char kBody[] = "body";

// The declared dims of a body output, unknown dims as 0; empty optional when the rank is unknown.
// Used only for the shape of a scan output of zero iterations (which has no elements).
std::optional<std::vector<int64_t>> DeclaredDims(const onnx::ValueInfoProto& vi) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : vi.type().tensor_type().shape().dim()) {
    dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : 0);
  }
  return dims;
}

DataType DeclaredType(const onnx::ValueInfoProto& vi) {
  if (!vi.type().has_tensor_type()) return DataType::kUndefined;
  const int32_t t = vi.type().tensor_type().elem_type();
  return IsKnownDataType(t) ? static_cast<DataType>(t) : DataType::kUndefined;
}

// What a kernel knows of its body's outputs at creation: for the scan outputs of zero
// iterations, their type and dims.
struct BodyOutput {
  DataType type = DataType::kUndefined;
  std::optional<std::vector<int64_t>> dims;
};

std::vector<BodyOutput> BodyOutputs(const onnx::GraphProto& body) {
  std::vector<BodyOutput> outs;
  for (const auto& vi : body.output()) outs.push_back({DeclaredType(vi), DeclaredDims(vi)});
  return outs;
}

// A scalar input of one element of type `type` (int64 trip count, bool condition).
absl::Status CheckScalar(const Tensor& t, DataType type, const char* what) {
  if (t.dtype() != type || t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be one ", DataTypeName(type),
                                                   ", got ", DataTypeName(t.dtype()), " ",
                                                   t.shape().ToString()));
  }
  return absl::OkStatus();
}

bool ReadBool(const Tensor& t) { return static_cast<const uint8_t*>(t.raw_data())[0] != 0; }

// The output of zero iterations for a scan output: `extent` = 0 inserted at `axis` of the dims
// the body declares (rank 1 when it declares none).
Shape EmptyScanShape(const BodyOutput& declared, int64_t axis) {
  std::vector<int64_t> dims = declared.dims.value_or(std::vector<int64_t>{});
  if (axis < 0) axis += static_cast<int64_t>(dims.size()) + 1;
  if (axis < 0 || axis > static_cast<int64_t>(dims.size())) axis = 0;
  dims.insert(dims.begin() + axis, 0);
  return Shape(dims);
}

// ---------------------------------------------------------------------------------------------
// Loop: inputs (M, cond, v_initial...), outputs (v_final..., scan_outputs...); body inputs
// (iteration_num, cond, v...), body outputs (cond, v..., scan slices...).
class LoopKernel final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const onnx::GraphProto* body = info.GetGraph(kBody);
    if (body == nullptr) return info.Error("the graph attribute 'body' is missing");
    const int carried = info.num_inputs() - 2;
    if (carried < 0) return info.Error("Loop needs the inputs M and cond (each may be empty)");
    if (body->input_size() != carried + 2) {
      return info.Error(absl::StrCat(
          "the body declares ", body->input_size(), " inputs; the node gives it ", carried + 2,
          " (iteration number, condition, ", carried, " loop-carried values)"));
    }
    const int scans = body->output_size() - 1 - carried;
    if (scans < 0 || info.num_outputs() > carried + scans) {
      return info.Error(absl::StrCat("the body declares ", body->output_size(),
                                     " outputs; the node has ", carried,
                                     " loop-carried values and ", info.num_outputs(), " outputs"));
    }
    auto k = std::unique_ptr<LoopKernel>(new LoopKernel());
    k->carried_ = carried;
    k->scans_ = scans;
    k->body_outputs_ = BodyOutputs(*body);
    // The body's iteration number and condition: scalars, or [1] where the body says so.
    auto one_element_shape = [](const onnx::ValueInfoProto& vi) {
      std::optional<std::vector<int64_t>> d = DeclaredDims(vi);
      return d && d->size() == 1 && (*d)[0] == 1 ? Shape{1} : Shape();
    };
    k->iter_shape_ = one_element_shape(body->input(0));
    k->cond_shape_ = one_element_shape(body->input(1));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    SubgraphRunner* runner = ctx.subgraphs();
    if (runner == nullptr) return absl::InternalError("Loop without a body plan");
    const Tensor* m = ctx.input(0);
    const Tensor* cond = ctx.input(1);
    int64_t max_trips = 0;
    if (m != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckScalar(*m, DataType::kInt64, "the trip count M"));
      max_trips = m->data<int64_t>()[0];
    }
    bool keep_going = true;
    if (cond != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckScalar(*cond, DataType::kBool, "the condition"));
      keep_going = ReadBool(*cond);
    }
    std::vector<Tensor> carried(carried_);
    for (int j = 0; j < carried_; ++j) {
      const Tensor* v = ctx.input(2 + j);
      if (v == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("loop-carried input ", j, " is absent"));
      }
      carried[j] = v->View();
    }
    // The body's iteration number and condition are views of these two locals.
    int64_t iteration = 0;
    bool body_cond = keep_going;
    const Tensor iteration_t = Tensor::Borrowed(DataType::kInt64, iter_shape_, &iteration);
    const Tensor cond_t = Tensor::Borrowed(DataType::kBool, cond_shape_, &body_cond);
    std::vector<const Tensor*> inputs(2 + carried_);
    inputs[0] = &iteration_t;
    inputs[1] = &cond_t;
    std::vector<Tensor> outputs;
    std::vector<std::vector<Tensor>> scans(scans_);
    // pass 1: iterate while the trip count (when given) and the condition (when given) allow.
    while ((m == nullptr || iteration < max_trips) && keep_going) {
      body_cond = keep_going;
      for (int j = 0; j < carried_; ++j) inputs[2 + j] = &carried[j];
      INFERD_RETURN_IF_ERROR(runner->RunSubgraphWith(kBody, inputs, outputs));
      if (outputs.size() != static_cast<size_t>(1 + carried_ + scans_)) {
        return absl::InternalError("the body returned a wrong number of outputs");
      }
      INFERD_RETURN_IF_ERROR(CheckScalar(outputs[0], DataType::kBool, "the body's condition"));
      // Without a cond input the body's condition is ignored (ONNX: a for loop).
      if (cond != nullptr) keep_going = ReadBool(outputs[0]);
      for (int j = 0; j < carried_; ++j) carried[j] = std::move(outputs[1 + j]);
      for (int k = 0; k < scans_; ++k) {
        Tensor& slice = outputs[1 + carried_ + k];
        if (!scans[k].empty() &&
            (slice.dtype() != scans[k][0].dtype() || slice.shape() != scans[k][0].shape())) {
          return absl::InvalidArgumentError(
              absl::StrCat("scan output ", k, " changes from ", DataTypeName(scans[k][0].dtype()),
                           " ", scans[k][0].shape().ToString(), " to ", DataTypeName(slice.dtype()),
                           " ", slice.shape().ToString(), " at iteration ", iteration));
        }
        scans[k].push_back(std::move(slice));
      }
      ++iteration;
    }
    // pass 2: the final loop-carried values (handed over where their arena fits).
    for (int j = 0; j < carried_ && j < ctx.num_outputs(); ++j) {
      INFERD_RETURN_IF_ERROR(ctx.SetOutput(j, std::move(carried[j])));
    }
    // pass 3: the scan outputs, the iterations' slices stacked on a new first axis.
    for (int k = 0; k < scans_ && carried_ + k < ctx.num_outputs(); ++k) {
      const int slot = carried_ + k;
      if (!ctx.output_wanted(slot)) continue;
      const std::vector<Tensor>& parts = scans[k];
      if (parts.empty()) {
        const BodyOutput& declared = body_outputs_[1 + carried_ + k];
        const DataType type =
            declared.type != DataType::kUndefined ? declared.type : DataType::kFloat32;
        INFERD_RETURN_IF_ERROR(
            ctx.MakeOutputTensor(slot, type, EmptyScanShape(declared, 0)).status());
        continue;
      }
      std::vector<int64_t> dims = {static_cast<int64_t>(parts.size())};
      for (int64_t d : parts[0].shape().dims()) dims.push_back(d);
      INFERD_ASSIGN_OR_RETURN(Tensor * out,
                              ctx.MakeOutputTensor(slot, parts[0].dtype(), Shape(dims)));
      if (parts[0].is_string()) {  // heap strings (docs/strings.md): element by element
        std::string* to = out->mutable_data<std::string>();
        for (const Tensor& p : parts) {
          to = std::copy_n(p.data<std::string>(), p.NumElements(), to);
        }
        continue;
      }
      auto* dst = static_cast<unsigned char*>(out->raw_mutable_data());
      const size_t part_bytes = parts[0].bytes();
      for (const Tensor& p : parts) {
        if (part_bytes > 0) std::memcpy(dst, p.raw_data(), part_bytes);
        dst += part_bytes;
      }
    }
    return absl::OkStatus();
  }

 private:
  LoopKernel() = default;
  int carried_ = 0;
  int scans_ = 0;
  std::vector<BodyOutput> body_outputs_;
  Shape iter_shape_, cond_shape_;
};

// ---------------------------------------------------------------------------------------------
// Scan-8: inputs (sequence_lens (optional, int64 [batch]), initial state..., scan inputs...),
// every state and scan input with a leading batch axis, the scan inputs [batch, max_len, ...];
// outputs (final state..., scan outputs [batch, max_len, ...]). Each batch entry b runs its own
// scan of sequence_lens[b] (default max_len) iterations over its slices, the scan inputs read
// forward or backward (`directions`); the scan outputs are written in iteration order, zero past
// sequence_lens[b]. The body sees no batch axis (as in opset 9+).
class Scan8Kernel final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const onnx::GraphProto* body = info.GetGraph(kBody);
    if (body == nullptr) return info.Error("the graph attribute 'body' is missing");
    INFERD_ASSIGN_OR_RETURN(const int64_t num_scan_inputs, info.RequireInt("num_scan_inputs"));
    const int64_t state = info.num_inputs() - 1 - num_scan_inputs;
    if (num_scan_inputs < 1 || state < 0) {
      return info.Error(absl::StrCat("num_scan_inputs ", num_scan_inputs, " must be in [1, ",
                                     info.num_inputs() - 1, "] (input 0 is sequence_lens)"));
    }
    if (body->input_size() != info.num_inputs() - 1) {
      return info.Error(absl::StrCat("the body declares ", body->input_size(),
                                     " inputs; the node has ", info.num_inputs() - 1,
                                     " besides sequence_lens"));
    }
    const int64_t scan_outputs = body->output_size() - state;
    if (scan_outputs < 0 || info.num_outputs() > body->output_size()) {
      return info.Error(absl::StrCat("the body declares ", body->output_size(),
                                     " outputs; the node has ", state, " state values and ",
                                     info.num_outputs(), " outputs"));
    }
    auto k = std::unique_ptr<Scan8Kernel>(new Scan8Kernel());
    k->state_ = static_cast<int>(state);
    k->scan_inputs_ = static_cast<int>(num_scan_inputs);
    k->scan_outputs_ = static_cast<int>(scan_outputs);
    k->dirs_ = info.GetInts("directions");
    if (k->dirs_.empty()) k->dirs_.assign(num_scan_inputs, 0);
    if (static_cast<int64_t>(k->dirs_.size()) != num_scan_inputs) {
      return info.Error(absl::StrCat("'directions' has ", k->dirs_.size(), " values, expected ",
                                     num_scan_inputs));
    }
    for (int64_t d : k->dirs_) {
      if (d != 0 && d != 1) {
        return info.Error(absl::StrCat("'directions' values must be 0 or 1, got ", d));
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    SubgraphRunner* runner = ctx.subgraphs();
    if (runner == nullptr) return absl::InternalError("Scan without a body plan");
    // pass 1: the batch, the sequence lengths, per-batch views of the states and scan inputs.
    std::vector<const Tensor*> states(state_), scans(scan_inputs_);
    int64_t batch = -1, max_len = -1;
    for (int i = 0; i < scan_inputs_; ++i) {
      scans[i] = ctx.input(1 + state_ + i);
      if (scans[i] == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("scan input ", i, " is absent"));
      }
      const Shape& s = scans[i]->shape();
      if (s.rank() < 2 || (batch >= 0 && (s[0] != batch || s[1] != max_len))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "scan input ", i, " ", s.ToString(), " must be [batch, sequence, ...]",
            batch >= 0 ? absl::StrCat(" with batch ", batch, " and sequence ", max_len) : ""));
      }
      batch = s[0];
      max_len = s[1];
    }
    for (int j = 0; j < state_; ++j) {
      states[j] = ctx.input(1 + j);
      if (states[j] == nullptr || states[j]->shape().rank() < 1 || states[j]->shape()[0] != batch) {
        return absl::InvalidArgumentError(absl::StrCat(
            "state input ", j, " must be present with a leading batch axis of ", batch));
      }
    }
    std::vector<int64_t> lens(batch, max_len);
    if (const Tensor* sl = ctx.input(0); sl != nullptr) {
      if (sl->dtype() != DataType::kInt64 || sl->NumElements() != batch) {
        return absl::InvalidArgumentError(absl::StrCat("sequence_lens must be int64 [", batch,
                                                       "], got ", DataTypeName(sl->dtype()), " ",
                                                       sl->shape().ToString()));
      }
      for (int64_t b = 0; b < batch; ++b) {
        lens[b] = sl->data<int64_t>()[b];
        if (lens[b] < 0 || lens[b] > max_len) {
          return absl::InvalidArgumentError(
              absl::StrCat("sequence_lens[", b, "] = ", lens[b], " is outside [0, ", max_len, "]"));
        }
      }
    }
    // Final states: the inputs' shapes; filled per batch entry.
    std::vector<Tensor*> final_state(state_, nullptr);
    std::vector<Tensor> final_tmp(state_);
    for (int j = 0; j < state_; ++j) {
      if (j < ctx.num_outputs() && ctx.output_wanted(j)) {
        INFERD_ASSIGN_OR_RETURN(final_state[j],
                                ctx.MakeOutputTensor(j, states[j]->dtype(), states[j]->shape()));
      } else {
        INFERD_ASSIGN_OR_RETURN(final_tmp[j],
                                ctx.MakeTemporaryTensor(states[j]->dtype(), states[j]->shape()));
        final_state[j] = &final_tmp[j];
      }
    }
    // pass 2: each batch entry's scan.
    std::vector<Tensor*> scan_out(scan_outputs_, nullptr);
    std::vector<Tensor> scan_tmp(scan_outputs_);
    std::vector<Shape> part_shape(scan_outputs_);
    std::vector<DataType> part_type(scan_outputs_);
    std::vector<Tensor> state(state_), slices(scan_inputs_), outputs;
    std::vector<const Tensor*> inputs(state_ + scan_inputs_);
    for (int64_t b = 0; b < batch; ++b) {
      for (int j = 0; j < state_; ++j) {
        state[j] = Slice(*states[j], b, 1);
      }
      for (int64_t t = 0; t < lens[b]; ++t) {
        for (int i = 0; i < scan_inputs_; ++i) {
          const int64_t pos = dirs_[i] == 1 ? lens[b] - 1 - t : t;
          slices[i] = Slice(*scans[i], b * max_len + pos, 2);
          inputs[state_ + i] = &slices[i];
        }
        for (int j = 0; j < state_; ++j) inputs[j] = &state[j];
        INFERD_RETURN_IF_ERROR(runner->RunSubgraphWith(kBody, inputs, outputs));
        if (outputs.size() != static_cast<size_t>(state_ + scan_outputs_)) {
          return absl::InternalError("the body returned a wrong number of outputs");
        }
        for (int j = 0; j < state_; ++j) state[j] = std::move(outputs[j]);
        for (int k = 0; k < scan_outputs_; ++k) {
          const Tensor& part = outputs[state_ + k];
          if (scan_out[k] == nullptr) {
            std::vector<int64_t> dims = {batch, max_len};
            for (int64_t d : part.shape().dims()) dims.push_back(d);
            const int slot = state_ + k;
            if (slot < ctx.num_outputs() && ctx.output_wanted(slot)) {
              INFERD_ASSIGN_OR_RETURN(scan_out[k],
                                      ctx.MakeOutputTensor(slot, part.dtype(), Shape(dims)));
            } else {
              INFERD_ASSIGN_OR_RETURN(scan_tmp[k],
                                      ctx.MakeTemporaryTensor(part.dtype(), Shape(dims)));
              scan_out[k] = &scan_tmp[k];
            }
            if (scan_out[k]->bytes() > 0) {
              std::memset(scan_out[k]->raw_mutable_data(), 0, scan_out[k]->bytes());
            }
            part_shape[k] = part.shape();
            part_type[k] = part.dtype();
          } else if (part.shape() != part_shape[k] || part.dtype() != part_type[k]) {
            return absl::InvalidArgumentError(
                absl::StrCat("scan output ", k, " changes from ", DataTypeName(part_type[k]), " ",
                             part_shape[k].ToString(), " to ", DataTypeName(part.dtype()), " ",
                             part.shape().ToString()));
          }
          CopyInto(part, *scan_out[k], b * max_len + t);
        }
      }
      for (int j = 0; j < state_; ++j) {
        if (state[j].dtype() != states[j]->dtype() ||
            state[j].NumElements() * batch != states[j]->NumElements()) {
          return absl::InvalidArgumentError(
              absl::StrCat("the body's state output ", j, " ", DataTypeName(state[j].dtype()), " ",
                           state[j].shape().ToString(), " does not match state input ",
                           states[j]->shape().ToString()));
        }
        CopyInto(state[j], *final_state[j], b);
      }
    }
    // Scan outputs of no iteration at all: their shapes are unknown.
    for (int k = 0; k < scan_outputs_; ++k) {
      if (scan_out[k] == nullptr && state_ + k < ctx.num_outputs() &&
          ctx.output_wanted(state_ + k)) {
        return absl::UnimplementedError(
            "Scan-8 with no iteration in any batch entry: the scan outputs' shapes are unknown");
      }
    }
    return absl::OkStatus();
  }

 private:
  Scan8Kernel() = default;

  // Entry `index` of `t` seen without its first `axes` dims (a view).
  static Tensor Slice(const Tensor& t, int64_t index, int axes) {
    const absl::Span<const int64_t> dims = t.shape().dims();
    const Shape rest(dims.subspan(axes));
    const size_t bytes = static_cast<size_t>(rest.NumElements()) * ElementSize(t.dtype());
    return Tensor::Borrowed(t.dtype(), rest,
                            static_cast<const unsigned char*>(t.raw_data()) + index * bytes);
  }

  // `part`'s bytes into entry `index` of `out` (entries of part's size).
  static void CopyInto(const Tensor& part, Tensor& out, int64_t index) {
    const size_t bytes = static_cast<size_t>(part.NumElements()) * ElementSize(part.dtype());
    if (bytes == 0) return;
    std::memcpy(static_cast<unsigned char*>(out.raw_mutable_data()) + index * bytes,
                part.raw_data(), bytes);
  }

  int state_ = 0, scan_inputs_ = 0, scan_outputs_ = 0;
  std::vector<int64_t> dirs_;
};

// ---------------------------------------------------------------------------------------------
// Scan (opset 9+): inputs (initial state..., scan inputs...), outputs (final state..., scan
// outputs...); body inputs (state..., one slice of each scan input), body outputs (state...,
// one slice of each scan output).
class ScanKernel final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (info.opset() < 9) return Scan8Kernel::Create(info);
    const onnx::GraphProto* body = info.GetGraph(kBody);
    if (body == nullptr) return info.Error("the graph attribute 'body' is missing");
    INFERD_ASSIGN_OR_RETURN(const int64_t num_scan_inputs, info.RequireInt("num_scan_inputs"));
    const int64_t state = info.num_inputs() - num_scan_inputs;
    if (num_scan_inputs < 1 || state < 0) {
      return info.Error(absl::StrCat("num_scan_inputs ", num_scan_inputs, " must be in [1, ",
                                     info.num_inputs(), "]"));
    }
    if (body->input_size() != info.num_inputs()) {
      return info.Error(absl::StrCat("the body declares ", body->input_size(),
                                     " inputs; the node has ", info.num_inputs()));
    }
    const int64_t scan_outputs = body->output_size() - state;
    if (scan_outputs < 0 || info.num_outputs() > body->output_size()) {
      return info.Error(absl::StrCat("the body declares ", body->output_size(),
                                     " outputs; the node has ", state, " state values and ",
                                     info.num_outputs(), " outputs"));
    }
    auto k = std::unique_ptr<ScanKernel>(new ScanKernel());
    k->state_ = static_cast<int>(state);
    k->scan_inputs_ = static_cast<int>(num_scan_inputs);
    k->scan_outputs_ = static_cast<int>(scan_outputs);
    auto read = [&](const char* name, int64_t count, std::vector<int64_t>& out,
                    bool direction) -> absl::Status {
      out = info.GetInts(name);
      if (out.empty()) out.assign(count, 0);
      if (static_cast<int64_t>(out.size()) != count) {
        return info.Error(
            absl::StrCat("'", name, "' has ", out.size(), " values, expected ", count));
      }
      for (int64_t v : out) {
        if (direction && v != 0 && v != 1) {
          return info.Error(absl::StrCat("'", name, "' values must be 0 or 1, got ", v));
        }
      }
      return absl::OkStatus();
    };
    INFERD_RETURN_IF_ERROR(read("scan_input_axes", num_scan_inputs, k->in_axes_, false));
    INFERD_RETURN_IF_ERROR(read("scan_input_directions", num_scan_inputs, k->in_dirs_, true));
    INFERD_RETURN_IF_ERROR(read("scan_output_axes", scan_outputs, k->out_axes_, false));
    INFERD_RETURN_IF_ERROR(read("scan_output_directions", scan_outputs, k->out_dirs_, true));
    k->body_outputs_ = BodyOutputs(*body);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    SubgraphRunner* runner = ctx.subgraphs();
    if (runner == nullptr) return absl::InternalError("Scan without a body plan");
    // pass 1: the scan inputs, their axes and the common length.
    struct ScanIn {
      const Tensor* t = nullptr;
      int64_t axis = 0;
      int64_t outer = 1;       // product of the dims before the axis
      size_t inner_bytes = 0;  // bytes of the dims after the axis
      Shape slice_shape;
      Tensor gathered;  // the slice of this iteration, when the axis is not 0
    };
    std::vector<ScanIn> ins(scan_inputs_);
    int64_t length = -1;
    for (int i = 0; i < scan_inputs_; ++i) {
      ScanIn& in = ins[i];
      in.t = ctx.input(state_ + i);
      if (in.t == nullptr)
        return absl::InvalidArgumentError(absl::StrCat("scan input ", i, " is absent"));
      if (in.t->is_string()) {
        return absl::UnimplementedError(absl::StrCat("scan input ", i, " is a string tensor"));
      }
      absl::Span<const int64_t> dims = in.t->shape().dims();
      const int64_t rank = static_cast<int64_t>(dims.size());
      in.axis = in_axes_[i] < 0 ? in_axes_[i] + rank : in_axes_[i];
      if (in.axis < 0 || in.axis >= rank) {
        return absl::InvalidArgumentError(absl::StrCat(
            "scan input ", i, " ", in.t->shape().ToString(), " has no axis ", in_axes_[i]));
      }
      if (length >= 0 && dims[in.axis] != length) {
        return absl::InvalidArgumentError(
            absl::StrCat("scan inputs disagree on the sequence length: ", length, " and ",
                         dims[in.axis], " (input ", i, " ", in.t->shape().ToString(), ")"));
      }
      length = dims[in.axis];
      std::vector<int64_t> slice;
      int64_t inner = 1;
      for (int64_t d = 0; d < rank; ++d) {
        if (d == in.axis) continue;
        slice.push_back(dims[d]);
        if (d < in.axis) in.outer *= dims[d];
        if (d > in.axis) inner *= dims[d];
      }
      in.inner_bytes = static_cast<size_t>(inner) * ElementSize(in.t->dtype());
      in.slice_shape = Shape(slice);
      if (in.axis != 0 && length > 0) {
        INFERD_ASSIGN_OR_RETURN(in.gathered,
                                ctx.MakeTemporaryTensor(in.t->dtype(), in.slice_shape));
      }
    }
    std::vector<Tensor> state(state_);
    for (int j = 0; j < state_; ++j) {
      const Tensor* v = ctx.input(j);
      if (v == nullptr)
        return absl::InvalidArgumentError(absl::StrCat("state input ", j, " is absent"));
      state[j] = v->View();
    }
    // pass 2: iterate; each scan output is made at the first iteration and filled in place.
    std::vector<Tensor> slices(scan_inputs_);
    std::vector<const Tensor*> inputs(state_ + scan_inputs_);
    std::vector<Tensor> outputs;
    std::vector<Tensor*> scan_out(scan_outputs_, nullptr);
    std::vector<Tensor> unwanted(scan_outputs_);  // outputs the graph does not read
    std::vector<Shape> first_shape(scan_outputs_);
    std::vector<DataType> first_type(scan_outputs_);
    for (int64_t t = 0; t < length; ++t) {
      for (int i = 0; i < scan_inputs_; ++i) {
        ScanIn& in = ins[i];
        const int64_t pos = in_dirs_[i] == 1 ? length - 1 - t : t;
        const auto* src = static_cast<const unsigned char*>(in.t->raw_data());
        if (in.axis == 0) {
          slices[i] = Tensor::Borrowed(in.t->dtype(), in.slice_shape,
                                       src + static_cast<size_t>(pos) * in.inner_bytes);
        } else {
          auto* dst = static_cast<unsigned char*>(in.gathered.raw_mutable_data());
          for (int64_t o = 0; o < in.outer; ++o) {
            std::memcpy(dst + o * in.inner_bytes,
                        src + (static_cast<size_t>(o) * length + pos) * in.inner_bytes,
                        in.inner_bytes);
          }
          slices[i] = in.gathered.View();
        }
        inputs[state_ + i] = &slices[i];
      }
      for (int j = 0; j < state_; ++j) inputs[j] = &state[j];
      INFERD_RETURN_IF_ERROR(runner->RunSubgraphWith(kBody, inputs, outputs));
      if (outputs.size() != static_cast<size_t>(state_ + scan_outputs_)) {
        return absl::InternalError("the body returned a wrong number of outputs");
      }
      for (int j = 0; j < state_; ++j) state[j] = std::move(outputs[j]);
      for (int k = 0; k < scan_outputs_; ++k) {
        const Tensor& part = outputs[state_ + k];
        if (part.is_string()) {
          return absl::UnimplementedError(absl::StrCat("scan output ", k, " is a string tensor"));
        }
        if (t == 0) {
          INFERD_RETURN_IF_ERROR(MakeScanOutput(ctx, k, part, length, scan_out[k], unwanted[k]));
          first_shape[k] = part.shape();
          first_type[k] = part.dtype();
        } else if (part.shape() != first_shape[k] || part.dtype() != first_type[k]) {
          return absl::InvalidArgumentError(
              absl::StrCat("scan output ", k, " changes from ", DataTypeName(first_type[k]), " ",
                           first_shape[k].ToString(), " to ", DataTypeName(part.dtype()), " ",
                           part.shape().ToString(), " at iteration ", t));
        }
        WriteSlice(part, *scan_out[k], out_axes_[k], out_dirs_[k] == 1 ? length - 1 - t : t,
                   length);
      }
    }
    // pass 3: the final state, and the scan outputs of zero iterations.
    for (int j = 0; j < state_ && j < ctx.num_outputs(); ++j) {
      INFERD_RETURN_IF_ERROR(ctx.SetOutput(j, std::move(state[j])));
    }
    if (length == 0) {
      for (int k = 0; k < scan_outputs_ && state_ + k < ctx.num_outputs(); ++k) {
        const BodyOutput& declared = body_outputs_[state_ + k];
        const DataType type =
            declared.type != DataType::kUndefined ? declared.type : DataType::kFloat32;
        INFERD_RETURN_IF_ERROR(
            ctx.MakeOutputTensor(state_ + k, type, EmptyScanShape(declared, out_axes_[k]))
                .status());
      }
    }
    return absl::OkStatus();
  }

 private:
  ScanKernel() = default;

  // Makes scan output `k` for slices like `part`: the sequence axis of `length` inserted at
  // its scan_output_axes position.
  absl::Status MakeScanOutput(KernelContext& ctx, int k, const Tensor& part, int64_t length,
                              Tensor*& out, Tensor& unwanted) const {
    std::vector<int64_t> dims(part.shape().dims().begin(), part.shape().dims().end());
    const int64_t rank = static_cast<int64_t>(dims.size());
    const int64_t axis = out_axes_[k] < 0 ? out_axes_[k] + rank + 1 : out_axes_[k];
    if (axis < 0 || axis > rank) {
      return absl::InvalidArgumentError(absl::StrCat("scan_output_axes ", out_axes_[k],
                                                     " is out of range for output slices ",
                                                     part.shape().ToString()));
    }
    dims.insert(dims.begin() + axis, length);
    const int slot = state_ + k;
    if (slot < ctx.num_outputs() && ctx.output_wanted(slot)) {
      INFERD_ASSIGN_OR_RETURN(out, ctx.MakeOutputTensor(slot, part.dtype(), Shape(dims)));
      return absl::OkStatus();
    }
    INFERD_ASSIGN_OR_RETURN(unwanted, ctx.MakeTemporaryTensor(part.dtype(), Shape(dims)));
    out = &unwanted;
    return absl::OkStatus();
  }

  // Writes one iteration's slice at position `pos` of the sequence axis.
  static void WriteSlice(const Tensor& part, Tensor& out, int64_t axis_attr, int64_t pos,
                         int64_t length) {
    absl::Span<const int64_t> dims = part.shape().dims();
    const int64_t rank = static_cast<int64_t>(dims.size());
    const int64_t axis = axis_attr < 0 ? axis_attr + rank + 1 : axis_attr;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= dims[d];
    const size_t inner_bytes = static_cast<size_t>(inner) * ElementSize(part.dtype());
    if (inner_bytes == 0) return;
    const auto* src = static_cast<const unsigned char*>(part.raw_data());
    auto* dst = static_cast<unsigned char*>(out.raw_mutable_data());
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + (static_cast<size_t>(o) * length + pos) * inner_bytes,
                  src + o * inner_bytes, inner_bytes);
    }
  }

  int state_ = 0, scan_inputs_ = 0, scan_outputs_ = 0;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
  std::vector<BodyOutput> body_outputs_;
};

KernelDef Def(const char* op, int since, KernelFactory create) {
  KernelDef def;
  def.domain = kOnnxDomain;
  def.op_type = op;
  def.since_version = since;
  def.device_type = "cpu";
  def.create = std::move(create);
  return def;
}

}  // namespace

absl::Status RegisterControlFlowKernels(KernelRegistry& registry) {
  absl::Status st = registry.Register(Def("Loop", 1, &LoopKernel::Create));
  st.Update(registry.Register(Def("Scan", 8, &ScanKernel::Create)));
  return st;
}

}  // namespace inferd::engine
