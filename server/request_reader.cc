#include "server/request_reader.h"

#include <cstring>
#include <limits>
#include <set>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/message_text.h"
#include "base/status_macros.h"
#include "server/kserve_types.h"

namespace inferd::server {
namespace {

using engine::DataType;

constexpr int kRawInputContentsField = 7;

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed ModelInferRequest: ", what));
}

constexpr char kShmRegion[] = "shared_memory_region";
constexpr char kShmByteSize[] = "shared_memory_byte_size";
constexpr char kShmOffset[] = "shared_memory_offset";

using Parameters = google::protobuf::Map<std::string, inference::InferParameter>;

// A non-negative integer parameter (int64_param or uint64_param), as tritonclient sends them.
absl::StatusOr<uint64_t> UnsignedParam(absl::string_view what, const std::string& key,
                                       const inference::InferParameter& p) {
  if (p.parameter_choice_case() == inference::InferParameter::kUint64Param) {
    return p.uint64_param();
  }
  if (p.parameter_choice_case() == inference::InferParameter::kInt64Param && p.int64_param() >= 0) {
    return static_cast<uint64_t>(p.int64_param());
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": parameter ", key, " must be a non-negative integer"));
}

std::string Names(const std::vector<TensorSpec>& specs) {
  return absl::StrJoin(specs, ", ",
                       [](std::string* out, const TensorSpec& s) { out->append(s.name); });
}

// The typed-contents field that carries `type`, and its element count in `c`.
struct TypedField {
  const char* name = nullptr;  // nullptr: the type cannot be sent typed
  int count = 0;
};

TypedField FieldFor(DataType type, const inference::InferTensorContents& c) {
  switch (type) {
    case DataType::kBool:
      return {"bool_contents", c.bool_contents_size()};
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
      return {"int_contents", c.int_contents_size()};
    case DataType::kInt64:
      return {"int64_contents", c.int64_contents_size()};
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
      return {"uint_contents", c.uint_contents_size()};
    case DataType::kUint64:
      return {"uint64_contents", c.uint64_contents_size()};
    case DataType::kFloat32:
      return {"fp32_contents", c.fp32_contents_size()};
    case DataType::kFloat64:
      return {"fp64_contents", c.fp64_contents_size()};
    case DataType::kString:
      return {"bytes_contents", c.bytes_contents_size()};
    default:
      return {};
  }
}

// Names of the non-empty typed fields of `c`.
std::vector<std::string> NonEmptyFields(const inference::InferTensorContents& c) {
  std::vector<std::string> names;
  if (c.bool_contents_size() > 0) names.push_back("bool_contents");
  if (c.int_contents_size() > 0) names.push_back("int_contents");
  if (c.int64_contents_size() > 0) names.push_back("int64_contents");
  if (c.uint_contents_size() > 0) names.push_back("uint_contents");
  if (c.uint64_contents_size() > 0) names.push_back("uint64_contents");
  if (c.fp32_contents_size() > 0) names.push_back("fp32_contents");
  if (c.fp64_contents_size() > 0) names.push_back("fp64_contents");
  if (c.bytes_contents_size() > 0) names.push_back("bytes_contents");
  return names;
}

// Copies `src` into `dst` as `To`; false (and the index) when a value does not fit.
template <typename To, typename Src>
bool ConvertInto(const Src& src, void* dst, int* bad_index) {
  To* out = static_cast<To*>(dst);
  for (int i = 0; i < src.size(); ++i) {
    const auto v = src.Get(i);
    using From = std::remove_cv_t<decltype(v)>;
    if constexpr (std::is_integral_v<To> && !std::is_same_v<From, bool> &&
                  !std::is_same_v<To, From>) {
      if (v < std::numeric_limits<To>::min() || v > std::numeric_limits<To>::max()) {
        *bad_index = i;
        return false;
      }
    }
    out[i] = static_cast<To>(v);
  }
  return true;
}

bool ConvertTyped(DataType type, const inference::InferTensorContents& c, void* dst,
                  int* bad_index) {
  switch (type) {
    case DataType::kBool:
      return ConvertInto<uint8_t>(c.bool_contents(), dst, bad_index);
    case DataType::kInt8:
      return ConvertInto<int8_t>(c.int_contents(), dst, bad_index);
    case DataType::kInt16:
      return ConvertInto<int16_t>(c.int_contents(), dst, bad_index);
    case DataType::kInt32:
      return ConvertInto<int32_t>(c.int_contents(), dst, bad_index);
    case DataType::kInt64:
      return ConvertInto<int64_t>(c.int64_contents(), dst, bad_index);
    case DataType::kUint8:
      return ConvertInto<uint8_t>(c.uint_contents(), dst, bad_index);
    case DataType::kUint16:
      return ConvertInto<uint16_t>(c.uint_contents(), dst, bad_index);
    case DataType::kUint32:
      return ConvertInto<uint32_t>(c.uint_contents(), dst, bad_index);
    case DataType::kUint64:
      return ConvertInto<uint64_t>(c.uint64_contents(), dst, bad_index);
    case DataType::kFloat32:
      return ConvertInto<float>(c.fp32_contents(), dst, bad_index);
    case DataType::kFloat64:
      return ConvertInto<double>(c.fp64_contents(), dst, bad_index);
    default:
      *bad_index = 0;
      return false;
  }
}

// "FP32 [1,3,224,224]" or, for a model's tensor, "FP32 [batch,3,224,224]".
std::string Describe(DataType type, const std::vector<int64_t>& dims) {
  return absl::StrCat(KServeDataTypeName(type), " ", engine::ShapeForMessage(dims));
}

// Checks an input's shape against the model's input; returns its element count.
absl::StatusOr<int64_t> CheckInputShape(const std::string& name, const std::string& datatype,
                                        const TensorSpec& spec, DataType type,
                                        const std::vector<int64_t>& dims,
                                        const engine::Shape& shape) {
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat("input ", QuoteForMessage(name), ": shape ",
                                                     engine::ShapeForMessage(dims),
                                                     " has a negative dimension"));
    }
  }
  if (!spec.shape.Matches(shape)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input ", QuoteForMessage(name), ": expected shape ", spec.shape.ToString(), " (",
        KServeDataTypeName(spec.type), "), got ", engine::ShapeForMessage(dims)));
  }
  // BYTES: counted as std::strings (docs/strings.md).
  const size_t element_size =
      type == DataType::kString ? sizeof(std::string) : engine::ElementSize(type);
  if (element_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat("input ", QuoteForMessage(name), ": ", datatype,
                                                   " tensors are not supported"));
  }
  if (absl::Status bounds = engine::CheckShapeBounds(dims, element_size); !bounds.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("input ", QuoteForMessage(name), ": shape ",
                                                   engine::ShapeForMessage(dims), ": ",
                                                   bounds.message()));
  }
  // Within the bounds (and every dim >= 0, checked above), the count is exact.
  const std::optional<int64_t> elements = engine::CheckedNumElements(dims, element_size);
  return *elements;
}

// A raw_input_contents entry of `raw_size` bytes for an input of `bytes`, with the typed fields
// `typed` also set: the entry must be the only data and hold exactly the shape's bytes.
absl::Status CheckRawEntry(const std::string& name, const std::vector<std::string>& typed,
                           size_t raw_size, size_t bytes, DataType type,
                           const std::vector<int64_t>& dims) {
  if (!typed.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("input ", QuoteForMessage(name),
                                                   " has both raw_input_contents and contents.",
                                                   typed[0], "; send the data in one of them"));
  }
  if (raw_size != bytes) {
    return absl::InvalidArgumentError(absl::StrCat("input ", QuoteForMessage(name), ": expected ",
                                                   Describe(type, dims), " (", bytes,
                                                   " bytes), got ", raw_size, " bytes"));
  }
  return absl::OkStatus();
}

// Typed contents: the field of the datatype, and only it, with the shape's element count.
absl::StatusOr<TypedField> CheckTypedContents(const std::string& name,
                                              const inference::InferTensorContents& contents,
                                              const std::string& datatype, DataType type,
                                              const std::vector<int64_t>& dims, int64_t elements,
                                              const std::vector<std::string>& typed) {
  const TypedField field = FieldFor(type, contents);
  if (field.name == nullptr || type == DataType::kString) {
    return absl::InvalidArgumentError(absl::StrCat("input ", QuoteForMessage(name), ": ", datatype,
                                                   " data can only be sent in raw_input_contents"));
  }
  for (const std::string& f : typed) {
    if (f != field.name) {
      return absl::InvalidArgumentError(absl::StrCat("input ", QuoteForMessage(name), ": ",
                                                     datatype, " data goes in contents.",
                                                     field.name, ", got contents.", f));
    }
  }
  if (field.count != elements) {
    if (field.count == 0 && elements > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", QuoteForMessage(name),
                       " has no data; send raw_input_contents or contents.", field.name));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "input ", QuoteForMessage(name), ": expected ", Describe(type, dims), " (", elements,
        " elements) in contents.", field.name, ", got ", field.count, " elements"));
  }
  return field;
}

alignas(64) const uint8_t kEmpty[64] = {};

}  // namespace

// Reads the protobuf wire format across the slices. Each read either succeeds or leaves the
// walker failed (truncated input); bytes of header fields are appended to `copy` as they pass.
class InferRequest::Walker {
 public:
  explicit Walker(const std::vector<grpc::Slice>& slices) : slices_(slices) {
    for (const grpc::Slice& s : slices) remaining_ += s.size();
    SkipEmpty();
  }

  bool AtEnd() const { return remaining_ == 0; }
  size_t remaining() const { return remaining_; }

  bool ReadByte(uint8_t* b, std::string* copy) {
    if (remaining_ == 0) return false;
    *b = slices_[slice_].begin()[pos_];
    if (copy != nullptr) copy->push_back(static_cast<char>(*b));
    Advance(1);
    return true;
  }

  bool ReadVarint(uint64_t* v, std::string* copy) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!ReadByte(&b, copy)) return false;
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;  // more than 10 bytes
  }

  // Skips `n` bytes, appending them to `copy`.
  bool Copy(size_t n, std::string* copy) {
    if (n > remaining_) return false;
    while (n > 0) {
      const size_t here = std::min(n, slices_[slice_].size() - pos_);
      copy->append(reinterpret_cast<const char*>(slices_[slice_].begin() + pos_), here);
      Advance(here);
      n -= here;
    }
    return true;
  }

  // Records where the next `n` bytes lie (one piece per slice they touch).
  bool Take(size_t n, RawEntry* entry) {
    if (n > remaining_) return false;
    entry->size = n;
    while (n > 0) {
      const size_t here = std::min(n, slices_[slice_].size() - pos_);
      entry->pieces.push_back({slices_[slice_].begin() + pos_, here});
      Advance(here);
      n -= here;
    }
    return true;
  }

 private:
  void Advance(size_t n) {
    pos_ += n;
    remaining_ -= n;
    if (pos_ == slices_[slice_].size()) {
      ++slice_;
      pos_ = 0;
      SkipEmpty();
    }
  }
  void SkipEmpty() {
    while (slice_ < slices_.size() && slices_[slice_].size() == 0) ++slice_;
  }

  const std::vector<grpc::Slice>& slices_;
  size_t slice_ = 0;
  size_t pos_ = 0;
  size_t remaining_ = 0;
};

InferRequest::~InferRequest() = default;

absl::StatusOr<std::unique_ptr<InferRequest>> InferRequest::Parse(const grpc::ByteBuffer& buffer) {
  std::unique_ptr<InferRequest> req(new InferRequest());
  if (buffer.Valid()) {
    grpc::Status dumped = buffer.Dump(&req->slices_);
    if (!dumped.ok()) return Malformed(dumped.error_message());
  }
  Walker w(req->slices_);
  std::string header_bytes;
  while (!w.AtEnd()) {
    std::string tag_bytes;
    uint64_t tag;
    if (!w.ReadVarint(&tag, &tag_bytes)) return Malformed("truncated field tag");
    const uint64_t field = tag >> 3;
    const int wire_type = static_cast<int>(tag & 7);
    if (field == 0 || field > 536870911) return Malformed("invalid field number");
    if (field == kRawInputContentsField) {
      if (wire_type != 2) return Malformed("raw_input_contents is not length-delimited");
      uint64_t len;
      if (!w.ReadVarint(&len, nullptr)) return Malformed("truncated raw_input_contents length");
      if (len > w.remaining()) {
        return Malformed(absl::StrCat("raw_input_contents[", req->raw_.size(), "] claims ", len,
                                      " bytes, only ", w.remaining(), " follow"));
      }
      RawEntry entry;
      w.Take(len, &entry);
      req->raw_.push_back(std::move(entry));
      continue;
    }
    header_bytes += tag_bytes;
    uint64_t value;
    bool ok = true;
    switch (wire_type) {
      case 0:  // varint
        ok = w.ReadVarint(&value, &header_bytes);
        break;
      case 1:  // fixed64
        ok = w.Copy(8, &header_bytes);
        break;
      case 2:  // length-delimited
        ok = w.ReadVarint(&value, &header_bytes) && value <= w.remaining() &&
             w.Copy(value, &header_bytes);
        break;
      case 5:  // fixed32
        ok = w.Copy(4, &header_bytes);
        break;
      default:  // groups (3, 4) and invalid wire types
        return Malformed(absl::StrCat("field ", field, " has unsupported wire type ", wire_type));
    }
    if (!ok) return Malformed(absl::StrCat("field ", field, " is truncated"));
  }
  if (!req->header_.ParseFromString(header_bytes)) {
    return Malformed("the header fields do not parse as inference.ModelInferRequest");
  }
  return req;
}

std::unique_ptr<InferRequest> InferRequest::FromParts(inference::ModelInferRequest header,
                                                      std::vector<absl::Span<const uint8_t>> raw,
                                                      std::shared_ptr<const void> keepalive) {
  std::unique_ptr<InferRequest> req(new InferRequest());
  req->header_ = std::move(header);
  req->keepalive_ = std::move(keepalive);
  req->raw_.reserve(raw.size());
  for (absl::Span<const uint8_t> bytes : raw) {
    RawEntry entry;
    entry.pieces.push_back({bytes.data(), bytes.size()});
    entry.size = bytes.size();
    req->raw_.push_back(std::move(entry));
  }
  return req;
}

absl::StatusOr<void*> InferRequest::Stage(size_t bytes, memory::IOArena& staging) {
  absl::StatusOr<memory::AllocationHandle> h = staging.Allocate(bytes);
  if (!h.ok()) return h.status();
  void* data = h->data();
  staged_.push_back(*std::move(h));
  staged_bytes_ += bytes;
  return data;
}

void InferRequest::ReleaseStaging() {
  inputs_.clear();
  staged_.clear();
}

absl::Status InferRequest::Bind(const ModelSignature& model, memory::IOArena& staging) {
  if (bound_) return absl::FailedPreconditionError("InferRequest::Bind called twice");
  bound_ = true;
  const int n_inputs = header_.inputs_size();
  // pass 0: the inputs in shared memory, which have no raw_input_contents entry.
  shared_inputs_.resize(n_inputs);
  int n_shared = 0;
  for (int i = 0; i < n_inputs; ++i) {
    const auto& in = header_.inputs(i);
    INFERD_ASSIGN_OR_RETURN(
        shared_inputs_[i],
        ParseShared(absl::StrCat("input ", QuoteForMessage(in.name())), in.parameters()));
    n_shared += shared_inputs_[i].has_value() ? 1 : 0;
  }
  if (!raw_.empty() && raw_.size() != static_cast<size_t>(n_inputs - n_shared)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the request has ", raw_.size(), " raw_input_contents for ", n_inputs - n_shared,
        " inputs not in shared memory; send one raw_input_contents entry per such input, in the "
        "order of 'inputs'"));
  }
  int raw_index = 0;
  std::vector<bool> seen(model.inputs.size(), false);
  inputs_.reserve(n_inputs);
  for (int i = 0; i < n_inputs; ++i) {
    const auto& in = header_.inputs(i);
    int k = 0;
    while (k < static_cast<int>(model.inputs.size()) && model.inputs[k].name != in.name()) ++k;
    if (k == static_cast<int>(model.inputs.size())) {
      return absl::InvalidArgumentError(absl::StrCat("unknown input ", QuoteForMessage(in.name()),
                                                     "; model '", model.name,
                                                     "' has inputs: ", Names(model.inputs)));
    }
    if (seen[k]) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", QuoteForMessage(in.name()), " is given twice"));
    }
    seen[k] = true;
    const TensorSpec& spec = model.inputs[k];
    const std::optional<DataType> type = DataTypeFromKServe(in.datatype());
    if (!type) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", QuoteForMessage(in.name()), ": unknown datatype ",
                       QuoteForMessage(in.datatype()), "; expected one of ", KServeDataTypeList()));
    }
    if (*type != spec.type) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", QuoteForMessage(in.name()), ": expected datatype ",
                       KServeDataTypeName(spec.type), ", got ", in.datatype()));
    }
    const std::vector<int64_t> dims(in.shape().begin(), in.shape().end());
    const int raw_at = shared_inputs_[i] ? -1 : raw_index++;
    INFERD_RETURN_IF_ERROR(BindOne(i, raw_at, spec, *type, dims, staging));
  }
  for (size_t k = 0; k < model.inputs.size(); ++k) {
    if (!seen[k]) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", QuoteForMessage(model.inputs[k].name), " is missing; model '",
                       model.name, "' needs: ", Names(model.inputs)));
    }
  }
  std::set<std::string> asked;
  for (const auto& out : header_.outputs()) {
    bool known = false;
    for (const TensorSpec& s : model.outputs) known = known || s.name == out.name();
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat("unknown output ", QuoteForMessage(out.name()),
                                                     "; model '", model.name,
                                                     "' has outputs: ", Names(model.outputs)));
    }
    if (!asked.insert(out.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("output ", QuoteForMessage(out.name()), " is requested twice"));
    }
    outputs_.push_back(out.name());
  }
  return BindSharedOutputs();
}

absl::StatusOr<std::optional<InferRequest::SharedRef>> InferRequest::ParseShared(
    const std::string& what, const Parameters& parameters) {
  auto region = parameters.find(kShmRegion);
  if (region == parameters.end()) {
    for (const char* key : {kShmByteSize, kShmOffset}) {
      if (parameters.count(key) != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": parameter ", key, " without ", kShmRegion));
      }
    }
    return std::nullopt;
  }
  if (region->second.parameter_choice_case() != inference::InferParameter::kStringParam) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": parameter ", kShmRegion, " must be a string"));
  }
  SharedRef ref;
  ref.region = region->second.string_param();
  auto size = parameters.find(kShmByteSize);
  if (size == parameters.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", kShmRegion, " needs ", kShmByteSize));
  }
  INFERD_ASSIGN_OR_RETURN(ref.byte_size, UnsignedParam(what, kShmByteSize, size->second));
  if (auto offset = parameters.find(kShmOffset); offset != parameters.end()) {
    INFERD_ASSIGN_OR_RETURN(ref.offset, UnsignedParam(what, kShmOffset, offset->second));
  }
  return ref;
}

absl::StatusOr<std::shared_ptr<const SharedMemoryRegion>> InferRequest::Region(
    const std::string& tensor, const std::string& region) {
  if (shared_memory_ == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        tensor, ": shared memory is not available on this transport; send the data instead"));
  }
  absl::StatusOr<std::shared_ptr<const SharedMemoryRegion>> r = shared_memory_->Find(region);
  if (!r.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(tensor, ": ", r.status().message()));
  }
  regions_.push_back(*r);
  return r;
}

absl::Status InferRequest::BindShared(const std::string& name, const SharedRef& ref, size_t bytes,
                                      engine::InputTensor& tensor, memory::IOArena& staging) {
  const std::string what = absl::StrCat("input ", QuoteForMessage(name));
  if (ref.byte_size != bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected ", bytes, " bytes, ", kShmByteSize, " is ", ref.byte_size));
  }
  INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const SharedMemoryRegion> region,
                          Region(what, ref.region));
  absl::StatusOr<absl::Span<uint8_t>> range = region->Range(ref.offset, ref.byte_size);
  if (!range.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", range.status().message()));
  }
  if (bytes == 0) return absl::OkStatus();
  if (reinterpret_cast<uintptr_t>(range->data()) % engine::ElementSize(tensor.type) == 0) {
    tensor.data = range->data();  // borrowed: the client's shared memory, no copy
    borrowed_bytes_ += bytes;
    return absl::OkStatus();
  }
  INFERD_ASSIGN_OR_RETURN(void* dst, Stage(bytes, staging));
  std::memcpy(dst, range->data(), bytes);
  tensor.data = dst;
  return absl::OkStatus();
}

absl::Status InferRequest::BindSharedOutputs() {
  for (const auto& out : header_.outputs()) {
    const std::string what = absl::StrCat("output ", QuoteForMessage(out.name()));
    INFERD_ASSIGN_OR_RETURN(std::optional<SharedRef> ref, ParseShared(what, out.parameters()));
    if (!ref) continue;
    INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const SharedMemoryRegion> region,
                            Region(what, ref->region));
    if (absl::StatusOr<absl::Span<uint8_t>> range = region->Range(ref->offset, ref->byte_size);
        !range.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", range.status().message()));
    }
    shared_outputs_.push_back({out.name(), *std::move(ref), std::move(region)});
  }
  return absl::OkStatus();
}

absl::Status InferRequest::WriteSharedMemoryOutputs(std::vector<LeasedOutput>& outputs,
                                                    absl::Duration* elapsed) {
  if (shared_outputs_.empty()) return absl::OkStatus();
  const absl::Time start = absl::Now();
  for (const SharedOutput& s : shared_outputs_) {
    for (LeasedOutput& out : outputs) {
      if (out.name != s.name) continue;
      const uint64_t n = out.lease.size();
      if (n > s.ref.byte_size) {
        return absl::InvalidArgumentError(
            absl::StrCat("output ", QuoteForMessage(out.name), ": ", kShmByteSize, " ",
                         s.ref.byte_size, " of region ", QuoteForMessage(s.ref.region),
                         " is too small for the output's ", n, " bytes"));
      }
      // In range: Bind checked [offset, offset + byte_size), and n <= byte_size.
      absl::StatusOr<absl::Span<uint8_t>> dst = s.region->Range(s.ref.offset, n);
      if (!dst.ok()) return dst.status();
      if (n > 0) std::memcpy(dst->data(), out.lease.data(), n);
      out.shared_memory = SharedMemoryPlacement{s.ref.region, s.ref.offset, n};
      out.lease = memory::IOLease();  // the arena buffer goes back now
    }
  }
  if (elapsed != nullptr) *elapsed += absl::Now() - start;
  return absl::OkStatus();
}

absl::Status InferRequest::BindOne(int index, int raw_index, const TensorSpec& spec, DataType type,
                                   const std::vector<int64_t>& dims, memory::IOArena& staging) {
  const auto& in = header_.inputs(index);
  const std::string& name = in.name();
  const engine::Shape shape{absl::MakeConstSpan(dims)};
  INFERD_ASSIGN_OR_RETURN(const int64_t elements,
                          CheckInputShape(name, in.datatype(), spec, type, dims, shape));
  const std::vector<std::string> typed = NonEmptyFields(in.contents());
  if (type == DataType::kString) return BindStrings(index, raw_index, elements, typed, shape);
  const size_t bytes = static_cast<size_t>(elements) * engine::ElementSize(type);
  engine::InputTensor tensor{name, type, shape, kEmpty, bytes};

  if (const std::optional<SharedRef>& shared = shared_inputs_[index]) {
    // pass 0 (shared memory): the region's bytes, in place.
    if (!typed.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("input ", QuoteForMessage(name), " has both ",
                                                     kShmRegion, " and contents.", typed[0],
                                                     "; send the data in one of them"));
    }
    INFERD_RETURN_IF_ERROR(BindShared(name, *shared, bytes, tensor, staging));
    inputs_.push_back(std::move(tensor));
    return absl::OkStatus();
  }
  if (!raw_.empty()) {
    // pass 1 (raw): the entry must hold exactly the shape's bytes.
    const RawEntry& raw = raw_[raw_index];
    INFERD_RETURN_IF_ERROR(CheckRawEntry(name, typed, raw.size, bytes, type, dims));
    if (bytes == 0) {
      inputs_.push_back(std::move(tensor));
      return absl::OkStatus();
    }
    const bool one_piece = raw.pieces.size() == 1;
    if (one_piece &&
        reinterpret_cast<uintptr_t>(raw.pieces[0].data) % engine::ElementSize(type) == 0) {
      tensor.data = raw.pieces[0].data;  // borrowed: points into gRPC's receive buffer
      borrowed_bytes_ += bytes;
    } else {
      INFERD_ASSIGN_OR_RETURN(void* dst, Stage(bytes, staging));
      size_t at = 0;
      for (const Piece& p : raw.pieces) {
        std::memcpy(static_cast<uint8_t*>(dst) + at, p.data, p.size);
        at += p.size;
      }
      tensor.data = dst;
    }
    inputs_.push_back(std::move(tensor));
    return absl::OkStatus();
  }

  // pass 2 (typed contents): the field of the datatype, with the shape's element count.
  INFERD_ASSIGN_OR_RETURN(
      const TypedField field,
      CheckTypedContents(name, in.contents(), in.datatype(), type, dims, elements, typed));
  if (bytes > 0) {
    INFERD_ASSIGN_OR_RETURN(void* dst, Stage(bytes, staging));
    int bad = -1;
    if (!ConvertTyped(type, in.contents(), dst, &bad)) {
      return absl::InvalidArgumentError(absl::StrCat("input ", QuoteForMessage(name), ": contents.",
                                                     field.name, "[", bad, "] does not fit in ",
                                                     in.datatype()));
    }
    tensor.data = dst;
  }
  inputs_.push_back(std::move(tensor));
  return absl::OkStatus();
}

absl::Status InferRequest::BindStrings(int index, int raw_index, int64_t elements,
                                       const std::vector<std::string>& typed,
                                       const engine::Shape& shape) {
  const auto& in = header_.inputs(index);
  const std::string what = absl::StrCat("input ", QuoteForMessage(in.name()));
  std::vector<std::string>& values = strings_.emplace_back();
  if (shared_inputs_[index] || !raw_.empty()) {
    // The serialized form: per element a 4-byte little-endian length, then the bytes.
    std::string serialized;
    if (const std::optional<SharedRef>& shared = shared_inputs_[index]) {
      if (!typed.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(what, " has both ", kShmRegion,
                                                       " and contents.", typed[0],
                                                       "; send the data in one of them"));
      }
      INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const SharedMemoryRegion> region,
                              Region(what, shared->region));
      absl::StatusOr<absl::Span<uint8_t>> range = region->Range(shared->offset, shared->byte_size);
      if (!range.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": ", range.status().message()));
      }
      serialized.assign(reinterpret_cast<const char*>(range->data()), range->size());
    } else {
      if (!typed.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(what,
                                                       " has both raw_input_contents and contents.",
                                                       typed[0], "; send the data in one of them"));
      }
      for (const Piece& p : raw_[raw_index].pieces) {
        serialized.append(reinterpret_cast<const char*>(p.data), p.size);
      }
    }
    size_t at = 0;
    while (at < serialized.size()) {
      if (serialized.size() - at < 4) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": BYTES data ends inside the 4-byte length of element ", values.size()));
      }
      const auto* p = reinterpret_cast<const uint8_t*>(serialized.data() + at);
      const uint32_t len = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                           static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
      at += 4;
      if (len > serialized.size() - at) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": BYTES element ", values.size(),
                                                       " says ", len, " bytes, only ",
                                                       serialized.size() - at, " follow"));
      }
      if (values.size() == static_cast<size_t>(elements)) break;  // too many: reported below
      values.emplace_back(serialized, at, len);
      at += len;
    }
    if (values.size() != static_cast<size_t>(elements) || at != serialized.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": expected BYTES ", shape.ToString(), " (", elements,
          " length-prefixed elements), got ",
          at != serialized.size() ? std::string("more") : absl::StrCat(values.size())));
    }
  } else {
    if (!typed.empty() && (typed.size() != 1 || typed[0] != "bytes_contents")) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": BYTES data goes in contents.bytes_contents, got contents.", typed[0]));
    }
    if (in.contents().bytes_contents_size() != elements) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": expected BYTES ", shape.ToString(), " (", elements,
          " elements) in contents.bytes_contents, got ", in.contents().bytes_contents_size()));
    }
    values.assign(in.contents().bytes_contents().begin(), in.contents().bytes_contents().end());
  }
  uint64_t chars = 0;
  for (const std::string& v : values) chars += v.size();
  staged_bytes_ += chars;
  inputs_.push_back(
      {in.name(), DataType::kString, shape, values.data(), values.size() * sizeof(std::string)});
  return absl::OkStatus();
}

}  // namespace inferd::server
