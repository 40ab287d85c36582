// Tests of config.pbtxt parsing, its mapping into ModelConfig, version policies, the signature
// check and auto-complete (server/triton_config.h).
#include "server/triton_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferd::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseTritonConfig, ReadsTheHonouredFields) {
  std::vector<std::string> warnings;
  absl::StatusOr<inference::ModelConfig> c = ParseTritonConfig(R"pb(
                                                                 name: "mlp"
                                                                 platform: "onnxruntime_onnx"
                                                                 max_batch_size: 8 input
                                                                 [ {
                                                                   name: "x"
                                                                   data_type: TYPE_FP32
                                                                   dims: [ 16 ]
                                                                 }]
                                                                 version_policy: { all: {} }
                                                                 dynamic_batching {
                                                                   preferred_batch_size: [ 4, 8 ]
                                                                   max_queue_delay_microseconds: 100
                                                                 }
                                                               )pb",
                                                               "mlp/config.pbtxt", &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(c->name(), "mlp");
  EXPECT_EQ(c->max_batch_size(), 8);
  ASSERT_EQ(c->input_size(), 1);
  EXPECT_EQ(c->input(0).data_type(), inference::TYPE_FP32);
  EXPECT_TRUE(c->version_policy().has_all());
  EXPECT_THAT(c->dynamic_batching().preferred_batch_size(), ElementsAre(4, 8));
}

TEST(ParseTritonConfig, WarnsOfEachUnknownFieldWithItsLine) {
  std::vector<std::string> warnings;
  absl::StatusOr<inference::ModelConfig> c = ParseTritonConfig(
      "name: \"m\"\noptimization { cuda { graphs: true } }\nmax_batch_size: 2\n"
      "response_cache { enable: true }\n",
      "m/config.pbtxt", &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_batch_size(), 2);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_THAT(warnings[0], HasSubstr("m/config.pbtxt:2:"));
  EXPECT_THAT(warnings[0], HasSubstr("optimization"));
  EXPECT_THAT(warnings[1], HasSubstr("m/config.pbtxt:4:"));
  EXPECT_THAT(warnings[1], HasSubstr("response_cache"));
}

TEST(ParseTritonConfig, SyntaxErrorNamesLineAndColumn) {
  absl::StatusOr<inference::ModelConfig> c =
      ParseTritonConfig("name: \"m\"\nmax_batch_size: eight\n", "m/config.pbtxt", nullptr);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("m/config.pbtxt:2:"));
  c = ParseTritonConfig("input [{ name: \"x\" \n", "m/config.pbtxt", nullptr);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("m/config.pbtxt:"));
}

inference::ModelConfig Parse(const std::string& text) {
  absl::StatusOr<inference::ModelConfig> c = ParseTritonConfig(text, "f", nullptr);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : inference::ModelConfig();
}

TEST(TritonToModelConfig, MapsBatchingInstancesAndKeepsTheProto) {
  const inference::ModelConfig t = Parse(R"pb(
    max_batch_size: 8 instance_group
    [ { count: 3 kind: KIND_CPU }]
    dynamic_batching {
      preferred_batch_size: [ 2, 8 ]
      max_queue_delay_microseconds: 500
      preserve_ordering: true
      priority_levels: 2
      default_priority_level: 1
      default_queue_policy { default_timeout_microseconds: 1000 timeout_action: DELAY }
      priority_queue_policy {
        key: 2
        value { max_queue_size: 5 }
      }
    }
    parameters {
      key: "k"
      value { string_value: "v" }
    }
  )pb");
  absl::StatusOr<ModelConfig> c = TritonToModelConfig(t, "mlp", "mlp/config.pbtxt");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->name, "mlp");
  EXPECT_EQ(c->path, "mlp/model.onnx");
  EXPECT_EQ(c->max_batch_size, 8);
  EXPECT_EQ(c->max_concurrent_runs, 3);
  ASSERT_TRUE(c->dynamic_batching.has_value());
  EXPECT_THAT(c->dynamic_batching->preferred_batch_sizes, ElementsAre(2, 8));
  EXPECT_EQ(c->dynamic_batching->max_queue_delay, absl::Microseconds(500));
  EXPECT_TRUE(c->dynamic_batching->preserve_ordering);
  EXPECT_EQ(c->dynamic_batching->priority_levels, 2);
  EXPECT_EQ(c->dynamic_batching->default_queue_policy.default_timeout, absl::Milliseconds(1));
  EXPECT_FALSE(c->dynamic_batching->default_queue_policy.reject_on_timeout);
  EXPECT_EQ(c->dynamic_batching->priority_queue_policy.at(2).max_queue_size, 5);
  ASSERT_NE(c->triton, nullptr);
  EXPECT_EQ(c->triton->parameters().at("k").string_value(), "v");
}

TEST(TritonToModelConfig, GpuInstanceGroupPlacesOnThatDevice) {
  absl::StatusOr<ModelConfig> c =
      TritonToModelConfig(Parse("instance_group [{ kind: KIND_GPU gpus: [ 1 ] }]"), "m", "f");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->partition.devices.size(), 1u);
  EXPECT_EQ(c->partition.devices[0].device, "cuda:1");
  EXPECT_EQ(c->partition.fallback_device, "cuda:1");
}

TEST(TritonToModelConfig, RefusesWhatInferdCannotServe) {
  const auto error = [](const std::string& text) {
    absl::StatusOr<ModelConfig> c = TritonToModelConfig(Parse(text), "m", "m/config.pbtxt");
    return c.ok() ? std::string("ok") : std::string(c.status().message());
  };
  EXPECT_THAT(error("name: \"other\""), HasSubstr("differs from the model's folder 'm'"));
  EXPECT_THAT(error("platform: \"tensorrt_plan\""), HasSubstr("inferd serves ONNX models"));
  EXPECT_THAT(error("backend: \"python\""), HasSubstr("is not served"));
  EXPECT_THAT(error("max_batch_size: -1"), HasSubstr("max_batch_size"));
  EXPECT_THAT(error("dynamic_batching {}"), HasSubstr("needs max_batch_size > 0"));
  EXPECT_THAT(error("max_batch_size: 4 dynamic_batching { preferred_batch_size: [ 8 ] }"),
              HasSubstr("preferred_batch_size"));
  EXPECT_THAT(error("instance_group [{ kind: KIND_MODEL }]"), HasSubstr("KIND_MODEL"));
  EXPECT_THAT(error("instance_group [{ count: 1 }, { count: 2 }]"),
              HasSubstr("one instance_group"));
  EXPECT_THAT(error("input [{ name: \"x\" }, { name: \"x\" }]"), HasSubstr("listed twice"));
  EXPECT_THAT(error("input [{ name: \"x\" dims: [ -2 ] }]"), HasSubstr("dims"));
  EXPECT_THAT(error("model_warmup [{ name: \"w\" inputs { key: \"x\" value { input_data_file: "
                    "\"x.bin\" } } }]"),
              HasSubstr("input_data_file"));
  EXPECT_EQ(error("platform: \"onnxruntime_onnx\" backend: \"onnxruntime\" name: \"m\""), "ok");
}

TEST(SelectVersions, Policies) {
  const std::vector<int64_t> dirs = {1, 3, 2};
  inference::ModelVersionPolicy p;
  EXPECT_THAT(*SelectVersions(p, dirs, "m"), ElementsAre(3));
  p.mutable_latest()->set_num_versions(2);
  EXPECT_THAT(*SelectVersions(p, dirs, "m"), ElementsAre(3, 2));
  p.mutable_all();
  EXPECT_THAT(*SelectVersions(p, dirs, "m"), ElementsAre(3, 2, 1));
  p.mutable_specific()->add_versions(1);
  p.mutable_specific()->add_versions(3);
  EXPECT_THAT(*SelectVersions(p, dirs, "m"), ElementsAre(3, 1));
  p.mutable_specific()->add_versions(7);
  absl::StatusOr<std::vector<int64_t>> missing = SelectVersions(p, dirs, "m");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("version 7"));
  EXPECT_FALSE(SelectVersions(inference::ModelVersionPolicy(), {}, "m").ok());
}

ModelSignature BatchSignature() {
  ModelSignature s;
  s.name = "mlp";
  s.version = "1";
  engine::ShapeInfo shape;
  shape.rank_known = true;
  shape.dims = {engine::DimInfo{-1, "batch"}, engine::DimInfo{16, ""}};
  s.inputs.push_back({"x", engine::DataType::kFloat32, shape});
  shape.dims[1].value = 4;
  s.outputs.push_back({"y", engine::DataType::kFloat32, shape});
  return s;
}

TEST(CheckTritonSignature, AcceptsMatchingAndNamesMismatches) {
  const ModelSignature sig = BatchSignature();
  EXPECT_TRUE(CheckTritonSignature(Parse("max_batch_size: 4 input [{ name: \"x\" data_type: "
                                         "TYPE_FP32 dims: [ 16 ] }]"),
                                   sig)
                  .ok());
  EXPECT_TRUE(CheckTritonSignature(Parse("input [{ name: \"x\" dims: [ -1, 16 ] }]"), sig).ok());
  const auto error = [&](const std::string& text) {
    return std::string(CheckTritonSignature(Parse(text), sig).message());
  };
  EXPECT_THAT(error("input [{ name: \"z\" }]"), HasSubstr("input 'z' is not in the model"));
  EXPECT_THAT(error("input [{ name: \"x\" data_type: TYPE_INT64 dims: [ -1, 16 ] }]"),
              HasSubstr("TYPE_INT64 but the model's is TYPE_FP32"));
  EXPECT_THAT(error("max_batch_size: 4 output [{ name: \"y\" dims: [ 5 ] }]"),
              HasSubstr("output 'y' dims"));
  EXPECT_THAT(error("input [{ name: \"x\" dims: [ 16 ] }]"), HasSubstr("do not match"));
  EXPECT_TRUE(CheckTritonSignature(Parse("input [{ name: \"x\" dims: [ 16 ] reshape: { shape: "
                                         "[ 2, 16 ] } }]"),
                                   sig)
                  .ok());
}

TEST(CompleteTritonConfig, DynamicFirstDimsGetTritonsDefaultBatch) {
  inference::ModelConfig c = *CompleteTritonConfig(inference::ModelConfig(), BatchSignature());
  EXPECT_EQ(c.name(), "mlp");
  EXPECT_EQ(c.platform(), "onnxruntime_onnx");
  EXPECT_EQ(c.max_batch_size(), kTritonAutoMaxBatchSize);
  EXPECT_TRUE(c.has_dynamic_batching());
  ASSERT_EQ(c.input_size(), 1);
  EXPECT_THAT(c.input(0).dims(), ElementsAre(16));  // without the batch dim
  ASSERT_EQ(c.output_size(), 1);
  EXPECT_THAT(c.output(0).dims(), ElementsAre(4));
}

TEST(CompleteTritonConfig, ListedTensorsOrFixedBatchKeepMaxBatchSizeZero) {
  // Both inputs and outputs listed: taken as written.
  inference::ModelConfig c =
      *CompleteTritonConfig(Parse("input [{ name: \"x\" data_type: TYPE_FP32 dims: [ -1, 16 ] }]\n"
                                  "output [{ name: \"y\" data_type: TYPE_FP32 dims: [ -1, 4 ] }]"),
                            BatchSignature());
  EXPECT_EQ(c.max_batch_size(), 0);
  EXPECT_FALSE(c.has_dynamic_batching());
  // Only the inputs listed: the outputs come from the model, and the batch is completed.
  c = *CompleteTritonConfig(Parse("input [{ name: \"x\" data_type: TYPE_FP32 dims: [ 16 ] }]"),
                            BatchSignature());
  EXPECT_EQ(c.max_batch_size(), kTritonAutoMaxBatchSize);
  ASSERT_EQ(c.output_size(), 1);
  EXPECT_THAT(c.output(0).dims(), ElementsAre(4));
  // max_batch_size 1 given: kept, and no dynamic batching added (as the backend).
  c = *CompleteTritonConfig(Parse("max_batch_size: 1"), BatchSignature());
  EXPECT_EQ(c.max_batch_size(), 1);
  EXPECT_FALSE(c.has_dynamic_batching());
  ModelSignature fixed = BatchSignature();
  fixed.inputs[0].shape.dims[0].value = 1;
  c = *CompleteTritonConfig(inference::ModelConfig(), fixed);
  EXPECT_EQ(c.max_batch_size(), 0);
  EXPECT_THAT(c.input(0).dims(), ElementsAre(1, 16));
  absl::StatusOr<inference::ModelConfig> bad =
      CompleteTritonConfig(Parse("max_batch_size: 8"), fixed);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("does not batch"));
}

TEST(CompleteTritonConfig, ScalarsGetTritonsReshape) {
  ModelSignature s = BatchSignature();
  s.outputs[0].shape.dims.resize(1);  // [batch]: a scalar per entry
  inference::ModelConfig c = *CompleteTritonConfig(inference::ModelConfig(), s);
  ASSERT_EQ(c.output_size(), 1);
  EXPECT_THAT(c.output(0).dims(), ElementsAre(1));
  EXPECT_TRUE(c.output(0).has_reshape());
}

}  // namespace
}  // namespace inferd::server
