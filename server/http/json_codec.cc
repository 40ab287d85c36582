#include "server/http/json_codec.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>
#include <utility>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/message_text.h"
#include "server/kserve_types.h"

namespace inferd::server::http {
namespace {

using engine::DataType;
using rapidjson::Value;
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                     rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;
constexpr unsigned kParseFlags = rapidjson::kParseNanAndInfFlag;

absl::Status Invalid(absl::string_view input, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("input ", QuoteForMessage(input), ": ", what));
}

// What the request's bytes keep alive: the body (binary inputs are views into it) and the
// buffers JSON inputs were converted into.
struct Keepalive {
  std::shared_ptr<const std::string> body;
  std::vector<std::vector<uint8_t>> converted;
};

template <typename T>
void AppendRaw(T value, std::vector<uint8_t>& out) {
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

// One JSON element of an integer tensor: an integer within T's range.
template <typename T>
absl::Status AppendInteger(const Value& v, const std::string& name, std::vector<uint8_t>& out) {
  if constexpr (std::is_signed_v<T>) {
    if (v.IsInt64() && v.GetInt64() >= std::numeric_limits<T>::min() &&
        v.GetInt64() <= std::numeric_limits<T>::max()) {
      AppendRaw(static_cast<T>(v.GetInt64()), out);
      return absl::OkStatus();
    }
  } else {
    if (v.IsUint64() && v.GetUint64() <= std::numeric_limits<T>::max()) {
      AppendRaw(static_cast<T>(v.GetUint64()), out);
      return absl::OkStatus();
    }
  }
  const bool integer = v.IsInt64() || v.IsUint64();
  return Invalid(
      name, absl::StrCat("expected integers from ", int64_t{std::numeric_limits<T>::min()}, " to ",
                         uint64_t{std::numeric_limits<T>::max()}, " in data, got ",
                         integer ? "a number outside" : "a non-integer"));
}

// One JSON element of a tensor of `type`, appended in its raw (KServe) layout.
absl::Status AppendElement(const Value& v, DataType type, const std::string& name,
                           std::vector<uint8_t>& out) {
  switch (type) {
    case DataType::kBool:
      if (!v.IsBool()) return Invalid(name, "BOOL data are true / false");
      out.push_back(v.GetBool() ? 1 : 0);
      return absl::OkStatus();
    case DataType::kInt8:
      return AppendInteger<int8_t>(v, name, out);
    case DataType::kInt16:
      return AppendInteger<int16_t>(v, name, out);
    case DataType::kInt32:
      return AppendInteger<int32_t>(v, name, out);
    case DataType::kInt64:
      return AppendInteger<int64_t>(v, name, out);
    case DataType::kUint8:
      return AppendInteger<uint8_t>(v, name, out);
    case DataType::kUint16:
      return AppendInteger<uint16_t>(v, name, out);
    case DataType::kUint32:
      return AppendInteger<uint32_t>(v, name, out);
    case DataType::kUint64:
      return AppendInteger<uint64_t>(v, name, out);
    case DataType::kFloat32:
    case DataType::kFloat64:
      if (!v.IsNumber()) return Invalid(name, "expected numbers in data");
      if (type == DataType::kFloat32) {
        AppendRaw(static_cast<float>(v.GetDouble()), out);
      } else {
        AppendRaw(v.GetDouble(), out);
      }
      return absl::OkStatus();
    case DataType::kString: {
      if (!v.IsString()) return Invalid(name, "BYTES data are strings");
      const uint32_t length = v.GetStringLength();
      AppendRaw(length, out);  // Triton's layout: a 4-byte little-endian length, then the bytes
      out.insert(out.end(), v.GetString(), v.GetString() + length);
      return absl::OkStatus();
    }
    default:
      return Invalid(name, absl::StrCat(KServeDataTypeName(type),
                                        " data can only be sent as binary data "
                                        "(parameters.binary_data_size)"));
  }
}

// Walks `data` (flat or nested arrays) in row-major order.
absl::Status Flatten(const Value& data, const std::function<absl::Status(const Value&)>& leaf) {
  if (!data.IsArray()) return leaf(data);
  for (const Value& e : data.GetArray()) {
    if (absl::Status s = Flatten(e, leaf); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint8_t>> ConvertData(const Value& data, DataType type,
                                                 const std::string& name, int64_t elements) {
  if (!data.IsArray()) return Invalid(name, "data must be an array");
  std::vector<uint8_t> out;
  const size_t element_size = ElementSize(type);
  if (element_size > 0 && elements > 0 &&
      !CheckedMul<uint64_t>(static_cast<uint64_t>(elements), element_size)) {
    return Invalid(name, "the shape is too large");
  }
  int64_t count = 0;
  absl::Status s = Flatten(data, [&](const Value& v) -> absl::Status {
    if (++count > elements) return absl::OkStatus();  // counted, reported below
    return AppendElement(v, type, name, out);
  });
  if (!s.ok()) return s;
  if (count != elements) {
    return Invalid(name, absl::StrCat("the shape has ", elements, " elements, data has ", count));
  }
  return out;
}

// parameters.<key> of `object` as a bool (absent: false).
absl::StatusOr<bool> BoolParameter(const Value& object, const char* key, absl::string_view what) {
  auto params = object.FindMember("parameters");
  if (params == object.MemberEnd()) return false;
  if (!params->value.IsObject()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": parameters must be an object"));
  }
  if (params->value.HasMember("classification")) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the classification extension is not supported"));
  }
  auto it = params->value.FindMember(key);
  if (it == params->value.MemberEnd()) return false;
  if (!it->value.IsBool()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": parameters.", key, " must be a bool"));
  }
  return it->value.GetBool();
}

struct InputPlan {
  std::string name;
  DataType type;
  int64_t elements;
  std::optional<uint64_t> binary_size;
  const Value* data = nullptr;
};

// One entry of "inputs": name, datatype, shape into `header`, the rest into the plan.
absl::StatusOr<InputPlan> ParseInput(const Value& in, inference::ModelInferRequest& header) {
  if (!in.IsObject()) return absl::InvalidArgumentError("every entry of inputs is an object");
  auto name = in.FindMember("name");
  if (name == in.MemberEnd() || !name->value.IsString()) {
    return absl::InvalidArgumentError("an input has no name (a string)");
  }
  InputPlan plan;
  plan.name.assign(name->value.GetString(), name->value.GetStringLength());
  auto datatype = in.FindMember("datatype");
  if (datatype == in.MemberEnd() || !datatype->value.IsString()) {
    return Invalid(plan.name, "datatype (a string) is missing");
  }
  const absl::string_view dt(datatype->value.GetString(), datatype->value.GetStringLength());
  std::optional<DataType> type = DataTypeFromKServe(dt);
  if (!type) {
    return Invalid(plan.name, absl::StrCat("unknown datatype ", QuoteForMessage(dt), "; one of ",
                                           KServeDataTypeList()));
  }
  plan.type = *type;
  auto shape = in.FindMember("shape");
  if (shape == in.MemberEnd() || !shape->value.IsArray()) {
    return Invalid(plan.name, "shape (an array of integers) is missing");
  }
  auto* tensor = header.add_inputs();
  tensor->set_name(plan.name);
  tensor->set_datatype(std::string(dt));
  std::vector<int64_t> dims;
  for (const Value& d : shape->value.GetArray()) {
    if (!d.IsInt64() || d.GetInt64() < 0) {
      return Invalid(plan.name, "shape holds non-negative integers");
    }
    dims.push_back(d.GetInt64());
    tensor->add_shape(d.GetInt64());
  }
  std::optional<int64_t> elements = CheckedProduct(dims);
  if (!elements) return Invalid(plan.name, "the shape's element count overflows");
  plan.elements = *elements;
  auto params = in.FindMember("parameters");
  if (params != in.MemberEnd()) {
    if (!params->value.IsObject()) return Invalid(plan.name, "parameters must be an object");
    auto size = params->value.FindMember("binary_data_size");
    if (size != params->value.MemberEnd()) {
      if (!size->value.IsUint64()) {
        return Invalid(plan.name, "parameters.binary_data_size is a non-negative integer");
      }
      plan.binary_size = size->value.GetUint64();
    }
  }
  auto data = in.FindMember("data");
  if (data != in.MemberEnd()) plan.data = &data->value;
  if (plan.binary_size.has_value() == (plan.data != nullptr)) {
    return Invalid(plan.name, plan.data != nullptr
                                  ? "has both data and parameters.binary_data_size"
                                  : "has neither data nor parameters.binary_data_size");
  }
  return plan;
}

// The request-level parameters: binary_data_output, timeout (microseconds).
absl::Status ParseRequestParameters(const Value& root, ParsedInfer& parsed) {
  auto params = root.FindMember("parameters");
  if (params == root.MemberEnd()) return absl::OkStatus();
  if (!params->value.IsObject()) {
    return absl::InvalidArgumentError("the request's parameters must be an object");
  }
  for (const auto& p : params->value.GetObject()) {
    const absl::string_view key(p.name.GetString(), p.name.GetStringLength());
    if (key == "binary_data_output") {
      if (!p.value.IsBool()) {
        return absl::InvalidArgumentError("parameters.binary_data_output must be a bool");
      }
      parsed.default_binary = p.value.GetBool();
    } else if (key == "timeout") {
      if (!p.value.IsUint64()) {
        return absl::InvalidArgumentError(
            "parameters.timeout is a non-negative integer (microseconds)");
      }
      const uint64_t us = std::min<uint64_t>(p.value.GetUint64(), uint64_t{1} << 53);
      parsed.timeout = absl::Microseconds(static_cast<int64_t>(us));
    }  // others (sequence_id, priority, ...) do not change how inferd runs a request
  }
  return absl::OkStatus();
}

absl::Status ParseOutputs(const Value& root, inference::ModelInferRequest& header,
                          ParsedInfer& parsed) {
  auto outputs = root.FindMember("outputs");
  if (outputs == root.MemberEnd()) return absl::OkStatus();
  if (!outputs->value.IsArray()) return absl::InvalidArgumentError("outputs must be an array");
  for (const Value& out : outputs->value.GetArray()) {
    if (!out.IsObject() || !out.HasMember("name") || !out["name"].IsString()) {
      return absl::InvalidArgumentError("every entry of outputs is an object with a name");
    }
    std::string name(out["name"].GetString(), out["name"].GetStringLength());
    const std::string what = absl::StrCat("output ", QuoteForMessage(name));
    bool is_binary = parsed.default_binary;
    if (auto params = out.FindMember("parameters"); params != out.MemberEnd()) {
      absl::StatusOr<bool> b = BoolParameter(out, "binary_data", what);
      if (!b.ok()) return b.status();
      if (params->value.HasMember("binary_data")) is_binary = *b;
    }
    header.add_outputs()->set_name(name);
    parsed.output_binary.emplace_back(std::move(name), is_binary);
  }
  return absl::OkStatus();
}

absl::StatusOr<rapidjson::Document> ParseHeader(absl::string_view json) {
  if (NestsDeeperThan(json, kMaxJsonDepth)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request's JSON nests deeper than ", kMaxJsonDepth, " levels"));
  }
  rapidjson::Document doc;
  doc.Parse<kParseFlags>(json.data(), json.size());
  if (doc.HasParseError()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the request is not valid JSON: ", rapidjson::GetParseError_En(doc.GetParseError()),
        " at offset ", doc.GetErrorOffset()));
  }
  if (!doc.IsObject()) return absl::InvalidArgumentError("the request is not a JSON object");
  return doc;
}

float HalfToFloat(uint16_t h) {
  const bool negative = (h & 0x8000u) != 0;
  const int exponent = (h >> 10) & 0x1f;
  const uint32_t mantissa = h & 0x3ffu;
  float f;
  if (exponent == 0) {
    f = std::ldexp(static_cast<float>(mantissa), -24);  // zero or subnormal
  } else if (exponent == 31) {
    f = mantissa == 0 ? std::numeric_limits<float>::infinity()
                      : std::numeric_limits<float>::quiet_NaN();
  } else {
    f = std::ldexp(static_cast<float>(mantissa | 0x400u), exponent - 25);
  }
  return negative ? -f : f;
}

float Bfloat16ToFloat(uint16_t h) {
  const uint32_t bits = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// The shortest text that reads back as the same float (NaN / Infinity as RapidJSON writes them).
void WriteFloat(JsonWriter& w, float f) {
  if (!std::isfinite(f)) {
    w.Double(f);
    return;
  }
  char buf[32];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), f);
  w.RawValue(buf, static_cast<size_t>(r.ptr - buf), rapidjson::kNumberType);
}

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// BYTES: a 4-byte little-endian length, then the bytes, per element.
absl::Status WriteStrings(JsonWriter& w, const LeasedOutput& out) {
  const uint8_t* p = static_cast<const uint8_t*>(out.lease.data());
  size_t left = out.lease.size();
  while (left > 0) {
    if (left < 4) break;
    const uint32_t length = Load<uint32_t>(p);
    if (length > left - 4) break;
    w.String(reinterpret_cast<const char*>(p + 4), length);
    p += 4 + length;
    left -= 4 + length;
  }
  if (left != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("output ", QuoteForMessage(out.name),
                     ": its BYTES length prefixes do not add up; ask for it as binary data"));
  }
  return absl::OkStatus();
}

// The output's elements as a flat JSON array.
absl::Status WriteData(JsonWriter& w, const LeasedOutput& out) {
  w.StartArray();
  if (out.type == DataType::kString) {
    if (absl::Status s = WriteStrings(w, out); !s.ok()) return s;
    w.EndArray();
    return absl::OkStatus();
  }
  const size_t size = ElementSize(out.type);
  if (size == 0) {
    return absl::InternalError(
        absl::StrCat("output ", QuoteForMessage(out.name), " has an unknown element type"));
  }
  const uint8_t* p = static_cast<const uint8_t*>(out.lease.data());
  const size_t n = out.lease.size() / size;
  for (size_t i = 0; i < n; ++i, p += size) {
    switch (out.type) {
      case DataType::kBool:
        w.Bool(*p != 0);
        break;
      case DataType::kInt8:
        w.Int(Load<int8_t>(p));
        break;
      case DataType::kInt16:
        w.Int(Load<int16_t>(p));
        break;
      case DataType::kInt32:
        w.Int(Load<int32_t>(p));
        break;
      case DataType::kInt64:
        w.Int64(Load<int64_t>(p));
        break;
      case DataType::kUint8:
        w.Uint(Load<uint8_t>(p));
        break;
      case DataType::kUint16:
        w.Uint(Load<uint16_t>(p));
        break;
      case DataType::kUint32:
        w.Uint(Load<uint32_t>(p));
        break;
      case DataType::kUint64:
        w.Uint64(Load<uint64_t>(p));
        break;
      case DataType::kFloat32:
        WriteFloat(w, Load<float>(p));
        break;
      case DataType::kFloat64:
        w.Double(Load<double>(p));
        break;
      case DataType::kFloat16:
        WriteFloat(w, HalfToFloat(Load<uint16_t>(p)));
        break;
      case DataType::kBFloat16:
        WriteFloat(w, Bfloat16ToFloat(Load<uint16_t>(p)));
        break;
      default:
        break;
    }
  }
  w.EndArray();
  return absl::OkStatus();
}

void WriteString(JsonWriter& w, absl::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void WriteField(JsonWriter& w, const google::protobuf::Message& m,
                const google::protobuf::FieldDescriptor* f, int index);
void WriteMessage(JsonWriter& w, const google::protobuf::Message& m);

// One value of `f` (element `index` of a repeated field, -1 for a singular one).
void WriteField(JsonWriter& w, const google::protobuf::Message& m,
                const google::protobuf::FieldDescriptor* f, int index) {
  using FD = google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FD::CPPTYPE_INT32:
      w.Int(rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
      break;
    case FD::CPPTYPE_INT64:
      w.Int64(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
      break;
    case FD::CPPTYPE_UINT32:
      w.Uint(rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
      break;
    case FD::CPPTYPE_UINT64:
      w.Uint64(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
      break;
    case FD::CPPTYPE_DOUBLE:
      w.Double(rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f));
      break;
    case FD::CPPTYPE_FLOAT:
      WriteFloat(w, rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f));
      break;
    case FD::CPPTYPE_BOOL:
      w.Bool(rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f));
      break;
    case FD::CPPTYPE_ENUM: {
      const google::protobuf::EnumValueDescriptor* e =
          rep ? r->GetRepeatedEnum(m, f, index) : r->GetEnum(m, f);
      WriteString(w, e->name());
      break;
    }
    case FD::CPPTYPE_STRING: {
      std::string s = rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
      WriteString(w, f->type() == FD::TYPE_BYTES ? absl::Base64Escape(s) : s);
      break;
    }
    case FD::CPPTYPE_MESSAGE:
      WriteMessage(w, rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f));
      break;
  }
}

// A map entry's key as a JSON object key.
std::string MapKey(const google::protobuf::Message& entry) {
  const google::protobuf::FieldDescriptor* key = entry.GetDescriptor()->map_key();
  const google::protobuf::Reflection* r = entry.GetReflection();
  using FD = google::protobuf::FieldDescriptor;
  switch (key->cpp_type()) {
    case FD::CPPTYPE_STRING:
      return r->GetString(entry, key);
    case FD::CPPTYPE_INT32:
      return absl::StrCat(r->GetInt32(entry, key));
    case FD::CPPTYPE_INT64:
      return absl::StrCat(r->GetInt64(entry, key));
    case FD::CPPTYPE_UINT32:
      return absl::StrCat(r->GetUInt32(entry, key));
    case FD::CPPTYPE_UINT64:
      return absl::StrCat(r->GetUInt64(entry, key));
    case FD::CPPTYPE_BOOL:
      return r->GetBool(entry, key) ? "true" : "false";
    default:
      return "";
  }
}

void WriteMessage(JsonWriter& w, const google::protobuf::Message& m) {
  const google::protobuf::Descriptor* d = m.GetDescriptor();
  const google::protobuf::Reflection* r = m.GetReflection();
  w.StartObject();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    // Like Triton (MessageToJson with always_print_primitive_fields): every singular scalar,
    // even at its default; messages and the members of a oneof only when set.
    if (!f->is_repeated() &&
        (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE ||
         f->containing_oneof() != nullptr) &&
        !r->HasField(m, f)) {
      continue;
    }
    WriteString(w, f->name());
    if (f->is_map()) {
      w.StartObject();
      const google::protobuf::FieldDescriptor* value = f->message_type()->map_value();
      for (int j = 0; j < r->FieldSize(m, f); ++j) {
        const google::protobuf::Message& entry = r->GetRepeatedMessage(m, f, j);
        WriteString(w, MapKey(entry));
        WriteField(w, entry, value, -1);
      }
      w.EndObject();
    } else if (f->is_repeated()) {
      w.StartArray();
      for (int j = 0; j < r->FieldSize(m, f); ++j) WriteField(w, m, f, j);
      w.EndArray();
    } else {
      WriteField(w, m, f, -1);
    }
  }
  w.EndObject();
}

}  // namespace

bool NestsDeeperThan(absl::string_view json, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

absl::StatusOr<ParsedInfer> ParseInferRequest(absl::string_view model, absl::string_view version,
                                              std::shared_ptr<const std::string> body,
                                              std::optional<uint64_t> header_length) {
  const std::string& bytes = *body;
  if (header_length && *header_length > bytes.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Inference-Header-Content-Length is ",
                                                   *header_length, " but the body has only ",
                                                   bytes.size(), " bytes"));
  }
  const size_t json_size = header_length ? static_cast<size_t>(*header_length) : bytes.size();
  absl::StatusOr<rapidjson::Document> doc = ParseHeader(absl::string_view(bytes.data(), json_size));
  if (!doc.ok()) return doc.status();
  ParsedInfer parsed;
  inference::ModelInferRequest header;
  header.set_model_name(std::string(model));
  header.set_model_version(std::string(version));
  if (auto id = doc->FindMember("id"); id != doc->MemberEnd()) {
    if (!id->value.IsString()) return absl::InvalidArgumentError("id must be a string");
    header.set_id(std::string(id->value.GetString(), id->value.GetStringLength()));
  }
  if (absl::Status s = ParseRequestParameters(*doc, parsed); !s.ok()) return s;
  auto inputs = doc->FindMember("inputs");
  if (inputs == doc->MemberEnd() || !inputs->value.IsArray()) {
    return absl::InvalidArgumentError("the request has no inputs (an array)");
  }
  auto keepalive = std::make_shared<Keepalive>();
  keepalive->body = body;
  keepalive->converted.reserve(inputs->value.Size());
  std::vector<absl::Span<const uint8_t>> raw;
  uint64_t offset = json_size;
  for (const Value& in : inputs->value.GetArray()) {
    absl::StatusOr<InputPlan> plan = ParseInput(in, header);
    if (!plan.ok()) return plan.status();
    if (plan->binary_size) {
      if (!header_length) {
        return Invalid(plan->name,
                       "parameters.binary_data_size needs the Inference-Header-Content-Length "
                       "header");
      }
      std::optional<uint64_t> end = CheckedAdd<uint64_t>(offset, *plan->binary_size);
      if (!end || *end > bytes.size()) {
        return Invalid(plan->name,
                       absl::StrCat("binary_data_size ", *plan->binary_size,
                                    " goes past the end of the body (", bytes.size(), " bytes)"));
      }
      raw.emplace_back(reinterpret_cast<const uint8_t*>(bytes.data()) + offset,
                       static_cast<size_t>(*plan->binary_size));
      offset = *end;
      continue;
    }
    absl::StatusOr<std::vector<uint8_t>> converted =
        ConvertData(*plan->data, plan->type, plan->name, plan->elements);
    if (!converted.ok()) return converted.status();
    keepalive->converted.push_back(*std::move(converted));
    raw.emplace_back(keepalive->converted.back().data(), keepalive->converted.back().size());
  }
  if (offset != bytes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the body has ", bytes.size() - offset,
                     " bytes after the JSON header that no input's binary_data_size accounts for"));
  }
  if (absl::Status s = ParseOutputs(*doc, header, parsed); !s.ok()) return s;
  parsed.request = InferRequest::FromParts(std::move(header), std::move(raw), std::move(keepalive));
  return parsed;
}

absl::StatusOr<EncodedInfer> EncodeInferResponse(const InferResult& result,
                                                 const ParsedInfer& parsed) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  EncodedInfer encoded;
  w.StartObject();
  w.Key("model_name");
  WriteString(w, result.header.model_name());
  w.Key("model_version");
  WriteString(w, result.header.model_version());
  if (!result.header.id().empty()) {
    w.Key("id");
    WriteString(w, result.header.id());
  }
  w.Key("outputs");
  w.StartArray();
  for (const LeasedOutput& out : result.outputs) {
    bool binary = parsed.default_binary;
    for (const auto& [name, b] : parsed.output_binary) {
      if (name == out.name) binary = b;
    }
    w.StartObject();
    w.Key("name");
    WriteString(w, out.name);
    w.Key("datatype");
    w.String(KServeDataTypeName(out.type));
    w.Key("shape");
    w.StartArray();
    for (int64_t d : out.shape.dims()) w.Int64(d);
    w.EndArray();
    if (binary) {
      w.Key("parameters");
      w.StartObject();
      w.Key("binary_data_size");
      w.Uint64(out.lease.size());
      w.EndObject();
      if (out.lease.size() > 0) {
        encoded.binary.emplace_back(static_cast<const uint8_t*>(out.lease.data()),
                                    out.lease.size());
      }
      encoded.binary_bytes += out.lease.size();
    } else {
      w.Key("data");
      if (absl::Status s = WriteData(w, out); !s.ok()) return s;
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  encoded.json.assign(buffer.GetString(), buffer.GetSize());
  return encoded;
}

std::string ProtoToJson(const google::protobuf::Message& message) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  WriteMessage(w, message);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string ErrorJson(absl::string_view message) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("error");
  WriteString(w, message);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kCancelled:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

}  // namespace inferd::server::http
