#include "loadtest/request_builder.h"

#include <grpc/slice.h>

#include <cstring>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/npy.h"
#include "loadtest/wire.h"
#include "proto/inference.pb.h"

namespace inferd::loadtest {
namespace {

constexpr int kRawInputContentsField = 7;

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  const uint32_t mant = x & 0x7fffff;
  if (exp <= 0) return static_cast<uint16_t>(sign);  // flush tiny values to zero
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  return static_cast<uint16_t>(sign | (exp << 10) | (mant >> 13));
}

// Writes element i (of `size` bytes) for value v, as `datatype`.
void Store(absl::string_view datatype, double v, uint8_t* out) {
  auto put = [out](auto x) { std::memcpy(out, &x, sizeof(x)); };
  if (datatype == "FP32") return put(static_cast<float>(v));
  if (datatype == "FP64") return put(v);
  if (datatype == "FP16") return put(FloatToHalf(static_cast<float>(v)));
  if (datatype == "BF16") {
    const float f = static_cast<float>(v);
    uint32_t x;
    std::memcpy(&x, &f, 4);
    return put(static_cast<uint16_t>(x >> 16));
  }
  if (datatype == "BOOL") return put(static_cast<uint8_t>(v != 0));
  if (datatype == "INT8") return put(static_cast<int8_t>(v));
  if (datatype == "INT16") return put(static_cast<int16_t>(v));
  if (datatype == "INT32") return put(static_cast<int32_t>(v));
  if (datatype == "INT64") return put(static_cast<int64_t>(v));
  if (datatype == "UINT8") return put(static_cast<uint8_t>(v));
  if (datatype == "UINT16") return put(static_cast<uint16_t>(v));
  if (datatype == "UINT32") return put(static_cast<uint32_t>(v));
  if (datatype == "UINT64") return put(static_cast<uint64_t>(v));
}

bool IsFloat(absl::string_view datatype) {
  return datatype == "FP32" || datatype == "FP64" || datatype == "FP16" || datatype == "BF16";
}

// A reference-counted slice of n bytes. Never an inlined slice: those keep their bytes inside
// the grpc_slice struct, which moves when the slice is copied.
grpc::Slice NewSlice(size_t n) {
  return grpc::Slice(grpc_slice_malloc_large(n), grpc::Slice::STEAL_REF);
}

// Where to write a slice made by NewSlice (its bytes are on the heap, not in the struct).
uint8_t* MutableBytes(const grpc::Slice& s) { return const_cast<uint8_t*>(s.begin()); }

}  // namespace

size_t DataTypeSize(absl::string_view t) {
  if (t == "BOOL" || t == "UINT8" || t == "INT8") return 1;
  if (t == "UINT16" || t == "INT16" || t == "FP16" || t == "BF16") return 2;
  if (t == "UINT32" || t == "INT32" || t == "FP32") return 4;
  if (t == "UINT64" || t == "INT64" || t == "FP64") return 8;
  return 0;
}

std::string DataTypeOfNpy(absl::string_view d) {
  if (d == "<f4") return "FP32";
  if (d == "<f8") return "FP64";
  if (d == "<f2") return "FP16";
  if (d == "|b1") return "BOOL";
  if (d == "|i1") return "INT8";
  if (d == "|u1") return "UINT8";
  if (d == "<i2") return "INT16";
  if (d == "<u2") return "UINT16";
  if (d == "<i4") return "INT32";
  if (d == "<u4") return "UINT32";
  if (d == "<i8") return "INT64";
  if (d == "<u8") return "UINT64";
  return "";
}

int64_t ElementCount(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

absl::StatusOr<std::vector<int64_t>> ParseDims(absl::string_view text) {
  std::vector<int64_t> dims;
  if (text.empty()) return dims;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t d;
    if (!absl::SimpleAtoi(part, &d) || d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad dimension '", part, "' in '", text, "': expected an integer >= 0"));
    }
    dims.push_back(d);
  }
  return dims;
}

absl::StatusOr<InputSource> ParseInputSource(absl::string_view text) {
  InputSource s;
  if (text == "random") return s;
  if (text == "zeros") {
    s.kind = InputSource::Kind::kZeros;
    return s;
  }
  if (absl::StartsWith(text, "const:")) {
    s.kind = InputSource::Kind::kConst;
    if (!absl::SimpleAtod(text.substr(6), &s.value)) {
      return absl::InvalidArgumentError(absl::StrCat("bad constant in '", text, "'"));
    }
    return s;
  }
  if (absl::StartsWith(text, "npy:") && text.size() > 4) {
    s.kind = InputSource::Kind::kNpy;
    s.path = std::string(text.substr(4));
    return s;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "bad input source '", text, "': expected random, zeros, const:VALUE or npy:PATH"));
}

absl::StatusOr<InputTensor> MakeInput(const TensorSpec& spec, const InputSource& source,
                                      uint64_t seed, int64_t int_max) {
  InputTensor t;
  t.spec = spec;
  const size_t esize = DataTypeSize(spec.datatype);
  if (esize == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", spec.name, "': datatype '", spec.datatype, "' is not supported"));
  }
  if (source.kind == InputSource::Kind::kNpy) {
    absl::StatusOr<NpyArray> a = ReadNpy(source.path);
    if (!a.ok()) return a.status();
    if (DataTypeOfNpy(a->dtype) != spec.datatype) {
      return absl::InvalidArgumentError(absl::StrCat("input '", spec.name, "': ", source.path,
                                                     " holds ", a->dtype, ", the input is ",
                                                     spec.datatype));
    }
    if (t.spec.shape.empty()) t.spec.shape = a->shape;
    if (t.spec.shape != a->shape) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", spec.name, "': ", source.path, " has shape ",
                       ShapeString(a->shape), ", the request wants ", ShapeString(t.spec.shape)));
    }
    t.data = NewSlice(a->data.size());
    if (!a->data.empty()) std::memcpy(MutableBytes(t.data), a->data.data(), a->data.size());
    return t;
  }
  for (int64_t d : spec.shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", spec.name, "' has an unknown dimension in ", ShapeString(spec.shape),
          ": give its shape with --shape ", spec.name, ":D0,D1,..."));
    }
  }
  const int64_t n = ElementCount(spec.shape);
  t.data = NewSlice(static_cast<size_t>(n) * esize);
  uint8_t* p = MutableBytes(t.data);
  if (source.kind == InputSource::Kind::kZeros) {
    std::memset(p, 0, static_cast<size_t>(n) * esize);
    return t;
  }
  if (source.kind == InputSource::Kind::kConst) {
    for (int64_t i = 0; i < n; ++i) Store(spec.datatype, source.value, p + i * esize);
    return t;
  }
  std::mt19937_64 rng(seed);
  const bool is_float = IsFloat(spec.datatype);
  const bool is_bool = spec.datatype == "BOOL";
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> integer(0, std::max<int64_t>(int_max, 1) - 1);
  for (int64_t i = 0; i < n; ++i) {
    const double v = is_float  ? real(rng)
                     : is_bool ? static_cast<double>(rng() & 1)
                               : static_cast<double>(integer(rng));
    Store(spec.datatype, v, p + i * esize);
  }
  return t;
}

absl::StatusOr<RequestTemplate> BuildRequest(const RequestOptions& options,
                                             std::vector<InputTensor> inputs) {
  RequestTemplate r;
  inference::ModelInferRequest header;
  header.set_model_name(options.model);
  header.set_model_version(options.version);
  std::vector<std::string> labels;
  for (const InputTensor& in : inputs) {
    const uint64_t want =
        static_cast<uint64_t>(ElementCount(in.spec.shape)) * DataTypeSize(in.spec.datatype);
    if (want != in.data.size()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", in.spec.name, "': ", in.data.size(),
                                                     " bytes for ", in.spec.datatype, " ",
                                                     ShapeString(in.spec.shape)));
    }
    auto* t = header.add_inputs();
    t->set_name(in.spec.name);
    t->set_datatype(in.spec.datatype);
    for (int64_t d : in.spec.shape) t->add_shape(d);
    labels.push_back(absl::StrCat(in.spec.name, ShapeString(in.spec.shape)));
  }
  for (const std::string& o : options.outputs) header.add_outputs()->set_name(o);

  std::vector<grpc::Slice> slices;
  slices.emplace_back(header.SerializeAsString());
  r.wire_bytes = slices.back().size();
  for (const InputTensor& in : inputs) {
    slices.emplace_back(LengthDelimitedPrefix(kRawInputContentsField, in.data.size()));
    r.wire_bytes += slices.back().size() + in.data.size();
    r.payload_bytes += in.data.size();
    if (in.data.size() > 0) slices.push_back(in.data);  // a reference, not a copy
  }
  r.wire = grpc::ByteBuffer(slices.data(), slices.size());
  r.inputs = std::move(inputs);
  r.label = absl::StrJoin(labels, " ");
  return r;
}

}  // namespace inferd::loadtest
