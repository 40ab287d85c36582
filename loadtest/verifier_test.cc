#include "loadtest/verifier.h"

#include <grpc/grpc.h>

#include <cstring>

#include "gtest/gtest.h"
#include "proto/inference.pb.h"

namespace inferd::loadtest {
namespace {

class VerifierTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { grpc_init(); }

  // One template: input x FP32 [n] with values 0, 1, 2, ...
  void SetUp() override {
    TensorSpec spec{"x", "FP32", {4}};
    InputSource src;
    src.kind = InputSource::Kind::kConst;
    src.value = 0;
    absl::StatusOr<InputTensor> x = MakeInput(spec, src, 1);
    ASSERT_TRUE(x.ok());
    float v[4] = {0, 1, 2, 3};
    std::memcpy(const_cast<uint8_t*>(x->data.begin()), v, sizeof(v));
    absl::StatusOr<RequestTemplate> r = BuildRequest({"m", "", {}}, {*std::move(x)});
    ASSERT_TRUE(r.ok());
    templates_.push_back(*std::move(r));
  }

  static grpc::ByteBuffer Response(const std::string& name, const std::string& datatype,
                                   std::vector<int64_t> shape, std::vector<float> values) {
    inference::ModelInferResponse r;
    auto* o = r.add_outputs();
    o->set_name(name);
    o->set_datatype(datatype);
    for (int64_t d : shape) o->add_shape(d);
    r.add_raw_output_contents(
        std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
    grpc::Slice s(r.SerializeAsString());
    return grpc::ByteBuffer(&s, 1);
  }

  std::vector<RequestTemplate> templates_;
};

TEST_F(VerifierTest, EchoComparesWithTheInput) {
  VerifierOptions o;
  o.mode = VerifyMode::kEcho;
  Verifier v(o, templates_);
  EXPECT_TRUE(v.Check(0, Response("x", "FP32", {4}, {0, 1, 2, 3})).ok());
  absl::Status bad = v.Check(0, Response("x", "FP32", {4}, {0, 1, 2, 4}));
  EXPECT_EQ(bad.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(bad.message().find("byte 14 of 16"), std::string::npos) << bad.message();
  EXPECT_FALSE(v.Check(0, Response("x", "FP32", {2, 2}, {0, 1, 2, 3})).ok());
  EXPECT_FALSE(v.Check(0, Response("x", "INT32", {4}, {0, 1, 2, 3})).ok());
}

TEST_F(VerifierTest, FirstResponseBecomesTheReference) {
  VerifierOptions o;
  o.mode = VerifyMode::kFirst;
  Verifier v(o, templates_);
  EXPECT_TRUE(v.Check(0, Response("y", "FP32", {2}, {5, 6})).ok());
  EXPECT_TRUE(v.Check(0, Response("y", "FP32", {2}, {5, 6})).ok());
  EXPECT_FALSE(v.Check(0, Response("y", "FP32", {2}, {5, 6.0001f})).ok());
  EXPECT_FALSE(v.Check(0, Response("z", "FP32", {2}, {5, 6})).ok());
}

TEST_F(VerifierTest, ToleranceAppliesToFloats) {
  VerifierOptions o;
  o.mode = VerifyMode::kFirst;
  o.rtol = 1e-3;
  Verifier v(o, templates_);
  EXPECT_TRUE(v.Check(0, Response("y", "FP32", {2}, {5, 6})).ok());
  EXPECT_TRUE(v.Check(0, Response("y", "FP32", {2}, {5, 6.001f})).ok());
  EXPECT_FALSE(v.Check(0, Response("y", "FP32", {2}, {5, 6.1f})).ok());
}

TEST_F(VerifierTest, SizeAndMetadataAreAlwaysChecked) {
  VerifierOptions o;
  o.mode = VerifyMode::kNone;
  o.model_outputs = {{"y", "FP32", {-1, 2}}};
  Verifier v(o, templates_);
  EXPECT_TRUE(v.Check(0, Response("y", "FP32", {1, 2}, {1, 2})).ok());
  EXPECT_FALSE(v.Check(0, Response("y", "FP32", {1, 3}, {1, 2, 3})).ok());  // fixed dim
  EXPECT_FALSE(v.Check(0, Response("y", "FP32", {1, 2}, {1, 2, 3})).ok());  // byte count
  EXPECT_FALSE(v.Check(0, Response("q", "FP32", {1, 2}, {1, 2})).ok());     // unknown name
  grpc::Slice junk(std::string("\xff\xff\xff"));
  EXPECT_FALSE(v.Check(0, grpc::ByteBuffer(&junk, 1)).ok());
}

TEST_F(VerifierTest, ReferenceFromNpy) {
  VerifierOptions o;
  o.mode = VerifyMode::kReference;
  o.atol = 1e-5;
  NpyArray want;
  want.dtype = "<f4";
  want.shape = {2};
  const float vals[2] = {1.5f, -2.0f};
  want.data.assign(reinterpret_cast<const unsigned char*>(vals),
                   reinterpret_cast<const unsigned char*>(vals) + 8);
  o.references["y"] = want;
  Verifier v(o, templates_);
  EXPECT_TRUE(v.Check(0, Response("y", "FP32", {2}, {1.5f, -2.0f})).ok());
  EXPECT_TRUE(v.Check(0, Response("y", "FP32", {2}, {1.500001f, -2.0f})).ok());
  EXPECT_FALSE(v.Check(0, Response("y", "FP32", {2}, {1.6f, -2.0f})).ok());
}

}  // namespace
}  // namespace inferd::loadtest
