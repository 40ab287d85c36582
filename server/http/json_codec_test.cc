// The HTTP JSON codec: JSON tensors of every KServe datatype into the bytes the model gets
// (through InferRequest::Bind), Triton's binary tensor data extension (borrowed in place), every
// malformed request, the response's JSON and binary outputs (views into the leases), and
// protobuf messages as Triton's JSON.
#include "server/http/json_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include <rapidjson/document.h>

#include "memory/io_arena.h"
#include "memory/system_allocator.h"
#include "proto/model_config.pb.h"

namespace inferd::server::http {
namespace {

using engine::DataType;
using engine::DimInfo;
using engine::ShapeInfo;
using ::testing::HasSubstr;

ShapeInfo Dims(std::initializer_list<int64_t> dims) {
  ShapeInfo s;
  s.rank_known = true;
  for (int64_t d : dims) s.dims.push_back(DimInfo{d, ""});
  return s;
}

class JsonCodecTest : public ::testing::Test {
 protected:
  // Parses `json` (+ `binary` after it when given) and binds it to a model with the one input
  // `name` of `type` and `shape`.
  absl::StatusOr<ParsedInfer> Parse(const std::string& json, DataType type,
                                    std::initializer_list<int64_t> shape,
                                    const std::string& binary = "", bool with_header = false) {
    auto body = std::make_shared<std::string>(json + binary);
    body_ = body;
    std::optional<uint64_t> length;
    if (with_header || !binary.empty()) length = json.size();
    absl::StatusOr<ParsedInfer> p = ParseInferRequest("m", "", body, length);
    if (!p.ok()) return p;
    ModelSignature sig;
    sig.name = "m";
    sig.version = "1";
    sig.inputs = {{"x", type, Dims(shape)}};
    sig.outputs = {{"y", DataType::kFloat32, Dims({1})}};
    if (absl::Status s = p->request->Bind(sig, io_); !s.ok()) return s;
    return p;
  }

  // The bytes the model gets for the only input.
  static std::string Bytes(const ParsedInfer& p) {
    const engine::InputTensor& t = p.request->inputs()[0];
    return std::string(static_cast<const char*>(t.data), t.bytes);
  }

  template <typename T>
  static std::string Raw(std::initializer_list<T> values) {
    std::string s;
    for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof(T));
    return s;
  }

  LeasedOutput Leased(const std::string& name, DataType type, std::initializer_list<int64_t> dims,
                      const std::string& bytes) {
    absl::StatusOr<memory::AllocationHandle> h = io_.Allocate(bytes.size());
    EXPECT_TRUE(h.ok());
    std::memcpy(h->data(), bytes.data(), bytes.size());
    absl::StatusOr<memory::IOLease> lease = io_.Export(*std::move(h));
    EXPECT_TRUE(lease.ok());
    return {name, type, engine::Shape(std::vector<int64_t>(dims)), *std::move(lease)};
  }

  std::shared_ptr<const std::string> body_;
  memory::IOArena io_{std::make_shared<memory::CpuSystemAllocator>()};
};

std::string Input(const std::string& datatype, const std::string& shape, const std::string& data) {
  return R"({"inputs":[{"name":"x","datatype":")" + datatype + R"(","shape":)" + shape +
         R"(,"data":)" + data + "}]}";
}

TEST_F(JsonCodecTest, EveryNumericDatatypeFromJson) {
  struct Case {
    const char* datatype;
    DataType type;
    const char* data;
    std::string want;
  };
  const Case cases[] = {
      {"BOOL", DataType::kBool, "[true,false,true]", Raw<uint8_t>({1, 0, 1})},
      {"INT8", DataType::kInt8, "[-128,0,127]", Raw<int8_t>({-128, 0, 127})},
      {"INT16", DataType::kInt16, "[-32768,1,32767]", Raw<int16_t>({-32768, 1, 32767})},
      {"INT32", DataType::kInt32, "[-5,0,2147483647]", Raw<int32_t>({-5, 0, 2147483647})},
      {"INT64", DataType::kInt64, "[-9223372036854775808,0,9223372036854775807]",
       Raw<int64_t>({INT64_MIN, 0, INT64_MAX})},
      {"UINT8", DataType::kUint8, "[0,1,255]", Raw<uint8_t>({0, 1, 255})},
      {"UINT16", DataType::kUint16, "[0,1,65535]", Raw<uint16_t>({0, 1, 65535})},
      {"UINT32", DataType::kUint32, "[0,1,4294967295]", Raw<uint32_t>({0, 1, 4294967295u})},
      {"UINT64", DataType::kUint64, "[0,1,18446744073709551615]",
       Raw<uint64_t>({0, 1, UINT64_MAX})},
      {"FP32", DataType::kFloat32, "[1.5,-2,3e2]", Raw<float>({1.5f, -2.f, 300.f})},
      {"FP64", DataType::kFloat64, "[0.1,-2,1e300]", Raw<double>({0.1, -2.0, 1e300})},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ParsedInfer> p = Parse(Input(c.datatype, "[3]", c.data), c.type, {3});
    ASSERT_TRUE(p.ok()) << c.datatype << ": " << p.status();
    EXPECT_EQ(Bytes(*p), c.want) << c.datatype;
  }
}

TEST_F(JsonCodecTest, NestedDataIsRowMajor) {
  absl::StatusOr<ParsedInfer> p =
      Parse(Input("INT32", "[2,3]", "[[1,2,3],[4,5,6]]"), DataType::kInt32, {2, 3});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(Bytes(*p), Raw<int32_t>({1, 2, 3, 4, 5, 6}));
}

TEST_F(JsonCodecTest, BytesAreLengthPrefixedStrings) {
  auto body = std::make_shared<std::string>(Input("BYTES", "[2]", R"(["ab",""])"));
  absl::StatusOr<ParsedInfer> p = ParseInferRequest("m", "", body, std::nullopt);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->request->raw_input_count(), 1u);
  EXPECT_EQ(p->request->header().inputs(0).datatype(), "BYTES");
}

TEST_F(JsonCodecTest, RequestFieldsReachTheHeader) {
  auto body = std::make_shared<std::string>(
      R"({"id":"r7","parameters":{"binary_data_output":true,"timeout":2500},)"
      R"("inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}],)"
      R"("outputs":[{"name":"a"},{"name":"b","parameters":{"binary_data":false}}]})");
  absl::StatusOr<ParsedInfer> p = ParseInferRequest("m", "3", body, std::nullopt);
  ASSERT_TRUE(p.ok()) << p.status();
  const inference::ModelInferRequest& h = p->request->header();
  EXPECT_EQ(h.model_name(), "m");
  EXPECT_EQ(h.model_version(), "3");
  EXPECT_EQ(h.id(), "r7");
  ASSERT_EQ(h.outputs_size(), 2);
  EXPECT_EQ(h.outputs(1).name(), "b");
  EXPECT_TRUE(p->default_binary);
  ASSERT_EQ(p->output_binary.size(), 2u);
  EXPECT_TRUE(p->output_binary[0].second);
  EXPECT_FALSE(p->output_binary[1].second);
  EXPECT_EQ(p->timeout, absl::Microseconds(2500));
}

TEST_F(JsonCodecTest, BinaryInputsAreBorrowedFromTheBody) {
  const std::string json =
      R"({"inputs":[{"name":"x","datatype":"FP16","shape":[2],"parameters":{"binary_data_size":4}}]})";
  // Pad the JSON so that the binary data starts 8-aligned within the body's buffer.
  const std::string padded = json + std::string((8 - json.size() % 8) % 8, ' ');
  const std::string half = Raw<uint16_t>({0x3c00, 0x4000});
  absl::StatusOr<ParsedInfer> p = Parse(padded, DataType::kFloat16, {2}, half);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(Bytes(*p), half);
  EXPECT_EQ(p->request->inputs()[0].data, body_->data() + padded.size()) << "not copied";
  EXPECT_EQ(p->request->borrowed_bytes(), 4u);
  EXPECT_EQ(p->request->staged_bytes(), 0u);
}

TEST_F(JsonCodecTest, MalformedRequestsAreRefusedWithAReason) {
  struct Case {
    std::string body;
    std::optional<uint64_t> header_length;
    const char* why;
  };
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  const Case cases[] = {
      {"{", std::nullopt, "not valid JSON"},
      {"[]", std::nullopt, "not a JSON object"},
      {R"({"inputs":)" + deep + "}", std::nullopt, "nests deeper"},
      {R"({"outputs":[]})", std::nullopt, "no inputs"},
      {R"({"inputs":[{"datatype":"FP32","shape":[1],"data":[1]}]})", std::nullopt, "no name"},
      {Input("FP99", "[1]", "[1]"), std::nullopt, "unknown datatype"},
      {Input("FP32", "[-1]", "[1]"), std::nullopt, "non-negative"},
      {Input("FP32", "[4611686018427387904,4]", "[1]"), std::nullopt, "overflows"},
      {Input("FP32", "[3]", "[1,2]"), std::nullopt, "3 elements, data has 2"},
      {Input("FP32", "[1]", "[1,2]"), std::nullopt, "1 elements, data has 2"},
      {Input("FP32", "[1]", R"(["a"])"), std::nullopt, "expected numbers"},
      {Input("INT8", "[1]", "[128]"), std::nullopt, "outside"},
      {Input("UINT8", "[1]", "[-1]"), std::nullopt, "outside"},
      {Input("INT32", "[1]", "[1.5]"), std::nullopt, "non-integer"},
      {Input("BOOL", "[1]", "[1]"), std::nullopt, "true / false"},
      {Input("BYTES", "[1]", "[1]"), std::nullopt, "strings"},
      {Input("FP16", "[1]", "[1]"), std::nullopt, "only be sent as binary"},
      {Input("BF16", "[1]", "[1]"), std::nullopt, "only be sent as binary"},
      {R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}}]})",
       std::nullopt, "needs the Inference-Header-Content-Length"},
      {R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1]}]})", std::nullopt,
       "neither data nor"},
      {Input("FP32", "[1]", "[1]"), 1000, "but the body has only"},
      {Input("FP32", "[1]", "[1]") + "junk", Input("FP32", "[1]", "[1]").size(),
       "4 bytes after the JSON header"},
      {R"({"id":3,"inputs":[]})", std::nullopt, "id must be a string"},
      {R"({"parameters":{"binary_data_output":1},"inputs":[]})", std::nullopt, "must be a bool"},
      {R"({"inputs":[],"outputs":[{"name":"y","parameters":{"classification":2}}]})", std::nullopt,
       "classification"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ParsedInfer> p =
        ParseInferRequest("m", "", std::make_shared<std::string>(c.body), c.header_length);
    ASSERT_FALSE(p.ok()) << c.body;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(p.status().message(), HasSubstr(c.why)) << c.body;
  }
  // A binary size past the end, and one that overflows the offset.
  const std::string json =
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":18446744073709551615}}]})";
  absl::StatusOr<ParsedInfer> p =
      ParseInferRequest("m", "", std::make_shared<std::string>(json + "abcd"), json.size());
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("goes past the end of the body"));
}

TEST_F(JsonCodecTest, ResponseWritesJsonDataAndPointsBinaryOutputsIntoTheLeases) {
  InferResult result;
  result.header.set_model_name("m");
  result.header.set_model_version("1");
  result.header.set_id("q");
  result.outputs.push_back(Leased("f", DataType::kFloat32, {2}, Raw<float>({0.1f, -3.f})));
  result.outputs.push_back(Leased("i", DataType::kInt64, {2}, Raw<int64_t>({INT64_MIN, 7})));
  result.outputs.push_back(Leased("h", DataType::kFloat16, {2}, Raw<uint16_t>({0x3c00, 0xc000})));
  result.outputs.push_back(Leased("bf", DataType::kBFloat16, {1}, Raw<uint16_t>({0x3fc0})));
  result.outputs.push_back(Leased("b", DataType::kBool, {2}, Raw<uint8_t>({1, 0})));
  result.outputs.push_back(Leased("u", DataType::kUint64, {1}, Raw<uint64_t>({UINT64_MAX})));
  result.outputs.push_back(
      Leased("s", DataType::kString, {2}, Raw<uint32_t>({2}) + "hi" + Raw<uint32_t>({0})));
  result.outputs.push_back(Leased("bin", DataType::kFloat32, {2}, Raw<float>({1.f, 2.f})));
  ParsedInfer opts;
  opts.output_binary = {{"bin", true}};
  absl::StatusOr<EncodedInfer> e = EncodeInferResponse(result, opts);
  ASSERT_TRUE(e.ok()) << e.status();
  rapidjson::Document doc;
  doc.Parse(e->json.c_str());
  ASSERT_FALSE(doc.HasParseError()) << e->json;
  EXPECT_STREQ(doc["model_name"].GetString(), "m");
  EXPECT_STREQ(doc["id"].GetString(), "q");
  const auto& outs = doc["outputs"];
  ASSERT_EQ(outs.Size(), 8u);
  EXPECT_FLOAT_EQ(static_cast<float>(outs[0]["data"][0].GetDouble()), 0.1f);
  EXPECT_EQ(outs[0]["shape"][0].GetInt64(), 2);
  EXPECT_STREQ(outs[0]["datatype"].GetString(), "FP32");
  EXPECT_EQ(outs[1]["data"][0].GetInt64(), INT64_MIN);
  EXPECT_EQ(outs[2]["data"][0].GetDouble(), 1.0);
  EXPECT_EQ(outs[2]["data"][1].GetDouble(), -2.0);
  EXPECT_EQ(outs[3]["data"][0].GetDouble(), 1.5);
  EXPECT_TRUE(outs[4]["data"][0].GetBool());
  EXPECT_EQ(outs[5]["data"][0].GetUint64(), UINT64_MAX);
  EXPECT_STREQ(outs[6]["data"][0].GetString(), "hi");
  EXPECT_STREQ(outs[6]["data"][1].GetString(), "");
  EXPECT_FALSE(outs[7].HasMember("data"));
  EXPECT_EQ(outs[7]["parameters"]["binary_data_size"].GetUint64(), 8u);
  ASSERT_EQ(e->binary.size(), 1u);
  EXPECT_EQ(e->binary[0].data(), result.outputs[7].lease.data()) << "sent from the lease";
  EXPECT_EQ(e->binary_bytes, 8u);
}

TEST_F(JsonCodecTest, BrokenBytesOutputIsAnErrorNotACrash) {
  InferResult result;
  result.outputs.push_back(Leased("s", DataType::kString, {1}, Raw<uint32_t>({100}) + "x"));
  absl::StatusOr<EncodedInfer> e = EncodeInferResponse(result, ParsedInfer{});
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("length prefixes"));
}

TEST(ProtoToJsonTest, NumbersAreNumbersDefaultsArePrintedEnumsByName) {
  inference::ModelConfig c;
  c.set_name("m");
  c.set_max_batch_size(0);
  auto* in = c.add_input();
  in->set_name("x");
  in->set_data_type(inference::TYPE_FP32);
  in->add_dims(-1);
  in->add_dims(int64_t{1} << 40);
  (*c.mutable_parameters())["k"].set_string_value("v");
  const std::string json = ProtoToJson(c);
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  ASSERT_FALSE(doc.HasParseError()) << json;
  ASSERT_TRUE(doc["max_batch_size"].IsInt()) << json;
  EXPECT_EQ(doc["max_batch_size"].GetInt(), 0);
  EXPECT_EQ(doc["input"][0]["dims"][1].GetInt64(), int64_t{1} << 40);
  EXPECT_STREQ(doc["input"][0]["data_type"].GetString(), "TYPE_FP32");
  EXPECT_STREQ(doc["parameters"]["k"]["string_value"].GetString(), "v");
  EXPECT_TRUE(doc["output"].IsArray());
}

TEST(HttpStatusTest, TritonsCodes) {
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kOk), 200);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInternal), 500);
  EXPECT_EQ(ErrorJson("a \"b\""), R"({"error":"a \"b\""})");
}

TEST(NestingTest, BracketsInStringsDoNotCount) {
  EXPECT_FALSE(NestsDeeperThan(R"({"a":"[[[[[[\"[["})", 2));
  EXPECT_TRUE(NestsDeeperThan("[[[]]]", 2));
  EXPECT_FALSE(NestsDeeperThan("[[]]", 2));
}

}  // namespace
}  // namespace inferd::server::http
