#include "loadtest/verifier.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "loadtest/wire.h"
#include "proto/inference.pb.h"

namespace inferd::loadtest {
namespace {

constexpr int kRawOutputContentsField = 6;

absl::Status Mismatch(const std::string& output, const std::string& what) {
  return absl::DataLossError(absl::StrCat("output '", output, "': ", what));
}

template <typename T>
absl::Status CompareFloats(const std::string& name, const uint8_t* got, const uint8_t* want,
                           size_t bytes, double rtol, double atol) {
  const size_t n = bytes / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T g, w;
    std::memcpy(&g, got + i * sizeof(T), sizeof(T));
    std::memcpy(&w, want + i * sizeof(T), sizeof(T));
    if (std::isnan(w) && std::isnan(g)) continue;
    if (!(std::fabs(static_cast<double>(g) - w) <=
          atol + rtol * std::fabs(static_cast<double>(w)))) {
      return Mismatch(name, absl::StrCat("element ", i, ": got ", g, ", want ", w, " (rtol ", rtol,
                                         ", atol ", atol, ")"));
    }
  }
  return absl::OkStatus();
}

// Entry `i` of `m` against `want`: exact bytes first; then, for FP32/FP64 with a tolerance, value
// by value (on a contiguous copy: only on this slow path).
absl::Status CompareBytes(const SplitMessage& m, size_t i, const std::string& name,
                          const std::string& datatype, const uint8_t* want, size_t size,
                          double rtol, double atol) {
  if (m.EntryEquals(i, want, size)) return absl::OkStatus();
  if (m.entry(i).size != size) {
    return Mismatch(name, absl::StrCat(m.entry(i).size, " bytes, want ", size));
  }
  std::vector<uint8_t> got(size);
  m.CopyEntry(i, got.data());
  if ((rtol > 0 || atol > 0) && (datatype == "FP32" || datatype == "FP64")) {
    return datatype == "FP32" ? CompareFloats<float>(name, got.data(), want, size, rtol, atol)
                              : CompareFloats<double>(name, got.data(), want, size, rtol, atol);
  }
  size_t at = 0;
  while (at < size && got[at] == want[at]) ++at;
  return Mismatch(name, absl::StrCat("byte ", at, " of ", size, " differs (got 0x",
                                     absl::Hex(static_cast<int>(got[at])), ", want 0x",
                                     absl::Hex(static_cast<int>(want[at])), ")"));
}

}  // namespace

absl::StatusOr<VerifyMode> ParseVerifyMode(const std::string& text) {
  if (text == "none") return VerifyMode::kNone;
  if (text == "first") return VerifyMode::kFirst;
  if (text == "echo") return VerifyMode::kEcho;
  if (text == "ref" || text == "reference") return VerifyMode::kReference;
  return absl::InvalidArgumentError(
      absl::StrCat("--verify '", text, "': expected none, first, echo or ref"));
}

const char* VerifyModeName(VerifyMode mode) {
  switch (mode) {
    case VerifyMode::kNone:
      return "none";
    case VerifyMode::kFirst:
      return "first";
    case VerifyMode::kEcho:
      return "echo";
    case VerifyMode::kReference:
      return "ref";
  }
  return "?";
}

Verifier::Verifier(VerifierOptions options, const std::vector<RequestTemplate>& templates)
    : options_(std::move(options)), templates_(templates), first_(templates.size()) {}

namespace {

// pass 1: what every response must satisfy: sizes that match datatype and shape, the model's
// outputs (when known), the requested outputs in order.
absl::Status CheckOutputs(const VerifierOptions& options, const SplitMessage& m,
                          const inference::ModelInferResponse& header) {
  for (int i = 0; i < header.outputs_size(); ++i) {
    const auto& out = header.outputs(i);
    const size_t esize = DataTypeSize(out.datatype());
    if (esize == 0) return Mismatch(out.name(), absl::StrCat("datatype '", out.datatype(), "'"));
    std::vector<int64_t> shape(out.shape().begin(), out.shape().end());
    for (int64_t d : shape) {
      if (d < 0) return Mismatch(out.name(), absl::StrCat("shape ", ShapeString(shape)));
    }
    const uint64_t want = static_cast<uint64_t>(ElementCount(shape)) * esize;
    if (m.entry(i).size != want) {
      return Mismatch(out.name(), absl::StrCat(m.entry(i).size, " bytes for ", out.datatype(), " ",
                                               ShapeString(shape), " (want ", want, ")"));
    }
    if (options.model_outputs.empty()) continue;
    const TensorSpec* spec = nullptr;
    for (const TensorSpec& s : options.model_outputs) {
      if (s.name == out.name()) spec = &s;
    }
    if (spec == nullptr) return Mismatch(out.name(), "not an output of the model");
    if (spec->datatype != out.datatype()) {
      return Mismatch(out.name(),
                      absl::StrCat(out.datatype(), ", the model says ", spec->datatype));
    }
    bool fits = spec->shape.size() == shape.size();
    for (size_t d = 0; fits && d < shape.size(); ++d) {
      fits = spec->shape[d] < 0 || spec->shape[d] == shape[d];
    }
    if (!fits) {
      return Mismatch(out.name(), absl::StrCat("shape ", ShapeString(shape), ", the model says ",
                                               ShapeString(spec->shape)));
    }
  }
  if (options.requested_outputs.empty()) return absl::OkStatus();
  if (static_cast<size_t>(header.outputs_size()) != options.requested_outputs.size()) {
    return absl::DataLossError(absl::StrCat("response: ", header.outputs_size(), " outputs, ",
                                            options.requested_outputs.size(), " requested"));
  }
  for (int i = 0; i < header.outputs_size(); ++i) {
    if (header.outputs(i).name() != options.requested_outputs[i]) {
      return Mismatch(header.outputs(i).name(),
                      absl::StrCat("requested '", options.requested_outputs[i], "' here"));
    }
  }
  return absl::OkStatus();
}

// kEcho: each output is the input at its position, byte for byte.
absl::Status CheckEcho(const RequestTemplate& t, const SplitMessage& m,
                       const inference::ModelInferResponse& header) {
  if (static_cast<size_t>(header.outputs_size()) != t.inputs.size()) {
    return absl::DataLossError(
        absl::StrCat("echo: ", header.outputs_size(), " outputs for ", t.inputs.size(), " inputs"));
  }
  for (int i = 0; i < header.outputs_size(); ++i) {
    const auto& out = header.outputs(i);
    const InputTensor& in = t.inputs[i];
    const std::vector<int64_t> shape(out.shape().begin(), out.shape().end());
    if (out.datatype() != in.spec.datatype || shape != in.spec.shape) {
      return Mismatch(out.name(), absl::StrCat(out.datatype(), " ", ShapeString(shape), ", input '",
                                               in.spec.name, "' is ", in.spec.datatype, " ",
                                               ShapeString(in.spec.shape)));
    }
    absl::Status s =
        CompareBytes(m, i, out.name(), out.datatype(), in.data.begin(), in.data.size(), 0, 0);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// kReference: each output with a --reference equals it (within the tolerance).
absl::Status CheckReference(const VerifierOptions& options, const SplitMessage& m,
                            const inference::ModelInferResponse& header) {
  for (int i = 0; i < header.outputs_size(); ++i) {
    const auto& out = header.outputs(i);
    auto it = options.references.find(out.name());
    if (it == options.references.end()) continue;
    const NpyArray& want = it->second;
    const std::vector<int64_t> shape(out.shape().begin(), out.shape().end());
    if (DataTypeOfNpy(want.dtype) != out.datatype() || want.shape != shape) {
      return Mismatch(out.name(),
                      absl::StrCat(out.datatype(), " ", ShapeString(shape), ", the reference is ",
                                   want.dtype, " ", ShapeString(want.shape)));
    }
    absl::Status s = CompareBytes(m, i, out.name(), out.datatype(), want.data.data(),
                                  want.data.size(), options.rtol, options.atol);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Verifier::Check(size_t index, const grpc::ByteBuffer& response) {
  absl::StatusOr<SplitMessage> m = SplitMessage::Parse(response, kRawOutputContentsField);
  if (!m.ok()) return absl::DataLossError(absl::StrCat("response: ", m.status().message()));
  inference::ModelInferResponse header;
  if (!header.ParseFromString(m->other_fields())) {
    return absl::DataLossError("response: the header does not parse as a ModelInferResponse");
  }
  if (static_cast<size_t>(header.outputs_size()) != m->entry_count()) {
    return absl::DataLossError(absl::StrCat("response: ", header.outputs_size(), " outputs but ",
                                            m->entry_count(), " raw_output_contents entries"));
  }

  // pass 1: what every response must satisfy.
  if (absl::Status s = CheckOutputs(options_, *m, header); !s.ok()) return s;

  // pass 2: the contents, by mode.
  switch (options_.mode) {
    case VerifyMode::kNone:
      return absl::OkStatus();
    case VerifyMode::kEcho:
      return CheckEcho(templates_[index], *m, header);
    case VerifyMode::kReference:
      return CheckReference(options_, *m, header);
    case VerifyMode::kFirst:
      break;
  }
  return CheckAgainstFirst(index, *m, header);
}

absl::Status Verifier::CheckAgainstFirst(size_t index, const SplitMessage& m,
                                         const inference::ModelInferResponse& header) {
  std::shared_ptr<const Outputs> first;
  {
    std::lock_guard<std::mutex> lock(mu_);
    first = first_[index];
  }
  if (first == nullptr) {
    auto outputs = std::make_shared<Outputs>();
    for (int i = 0; i < header.outputs_size(); ++i) {
      const auto& out = header.outputs(i);
      Output o{out.name(), out.datatype(), {out.shape().begin(), out.shape().end()}, {}};
      o.bytes.resize(m.entry(i).size);
      m.CopyEntry(i, o.bytes.data());
      outputs->push_back(std::move(o));
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (first_[index] == nullptr) {
      first_[index] = std::move(outputs);
      return absl::OkStatus();
    }
    first = first_[index];  // another thread was first: compare with its copy
  }
  if (static_cast<size_t>(header.outputs_size()) != first->size()) {
    return absl::DataLossError(absl::StrCat("response: ", header.outputs_size(),
                                            " outputs, the first response had ", first->size()));
  }
  for (int i = 0; i < header.outputs_size(); ++i) {
    const auto& out = header.outputs(i);
    const Output& want = (*first)[i];
    const std::vector<int64_t> shape(out.shape().begin(), out.shape().end());
    if (out.name() != want.name || out.datatype() != want.datatype || shape != want.shape) {
      return Mismatch(out.name(), absl::StrCat(out.datatype(), " ", ShapeString(shape),
                                               ", the first response had '", want.name, "' ",
                                               want.datatype, " ", ShapeString(want.shape)));
    }
    absl::Status s = CompareBytes(m, i, out.name(), out.datatype(), want.bytes.data(),
                                  want.bytes.size(), options_.rtol, options_.atol);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace inferd::loadtest
