// End to end, every RPC of the real inferd: KServe v2 core and repository methods, health,
// reflection, UNIMPLEMENTED extensions, every validation error, the message size limit.
// One inferd (mlp, mlp_dynamic, cnn and a broken model) serves the whole suite.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "tests/server/infer_client.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

class ApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    InferdProcess::Options o;
    o.models = {{"mlp", "tools/models/mlp"},
                {"mlp_dynamic", "tools/models/mlp_dynamic"},
                {"cnn", "tools/models/cnn"}};
    o.files = {{"broken/model.onnx", "not an onnx file"}};
    o.server_yaml = "  max_message_bytes: 4MiB\n  model_control: explicit\n";
    o.models_yaml = "  - name: mlp\n    version: \"7\"\n    max_concurrent_runs: 2\n";
    auto p = InferdProcess::Start("api", o);
    ASSERT_TRUE(p.ok()) << p.status();
    inferd_ = p->release();
    mlp_ = new engine::TestDataSet(LoadDataSet("tools/models/mlp"));
    cnn_ = new engine::TestDataSet(LoadDataSet("tools/models/cnn"));
  }
  static void TearDownTestSuite() {
    delete inferd_;
    delete mlp_;
    delete cnn_;
  }
  void SetUp() override {
    ASSERT_NE(inferd_, nullptr);
    stub_ = inferd_->Stub();
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "inferd log:\n" << inferd_->Log();
  }

  grpc::Status Infer(const inference::ModelInferRequest& req,
                     inference::ModelInferResponse* resp = nullptr) {
    inference::ModelInferResponse unused;
    grpc::ClientContext ctx;
    return stub_->ModelInfer(&ctx, req, resp != nullptr ? resp : &unused);
  }

  static InferdProcess* inferd_;
  static engine::TestDataSet* mlp_;
  static engine::TestDataSet* cnn_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};
InferdProcess* ApiTest::inferd_ = nullptr;
engine::TestDataSet* ApiTest::mlp_ = nullptr;
engine::TestDataSet* ApiTest::cnn_ = nullptr;

TEST_F(ApiTest, ServerLiveReadyAndMetadata) {
  grpc::ClientContext c1, c2, c3;
  inference::ServerLiveResponse live;
  ASSERT_TRUE(stub_->ServerLive(&c1, {}, &live).ok());
  EXPECT_TRUE(live.live());
  inference::ServerReadyResponse ready;
  ASSERT_TRUE(stub_->ServerReady(&c2, {}, &ready).ok());
  // Triton's strict readiness: the repository's broken model failed to load, so not ready.
  EXPECT_FALSE(ready.ready());
  inference::ServerMetadataResponse meta;
  ASSERT_TRUE(stub_->ServerMetadata(&c3, {}, &meta).ok());
  EXPECT_EQ(meta.name(), "inferd");
  EXPECT_FALSE(meta.version().empty());
  EXPECT_THAT(meta.extensions(), Contains("model_repository"));
  for (const char* e : {"model_configuration", "statistics", "system_shared_memory"}) {
    EXPECT_THAT(meta.extensions(), Contains(e));
  }
}

TEST_F(ApiTest, HealthOverallAndPerModel) {
  int status = -1;
  ASSERT_TRUE(HealthCheck(inferd_->Channel(), "", &status).ok());
  EXPECT_EQ(status, 1) << "SERVING";
  ASSERT_TRUE(HealthCheck(inferd_->Channel(), "mlp", &status).ok());
  EXPECT_EQ(status, 1);
  ASSERT_TRUE(HealthCheck(inferd_->Channel(), "broken", &status).ok());
  EXPECT_EQ(status, 2) << "NOT_SERVING";
  EXPECT_EQ(HealthCheck(inferd_->Channel(), "nope", &status).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ApiTest, ReflectionListsTheServices) {
  std::vector<std::string> services;
  grpc::Status s = ReflectionServices(inferd_->Channel(), &services);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_THAT(services, Contains("inference.GRPCInferenceService"));
  EXPECT_THAT(services, Contains("grpc.health.v1.Health"));
}

TEST_F(ApiTest, OtherTritonExtensionsAreUnimplemented) {
  // ModelConfig, ModelStatistics and SystemSharedMemory* are served (tests/server/triton_api_test),
  // and ModelStreamInfer (tests/genai/stream_infer_test).
  for (const char* method : {"CudaSharedMemoryStatus", "TraceSetting"}) {
    grpc::Status s = RawUnaryCall(
        inferd_->Channel(), std::string("/inference.GRPCInferenceService/") + method, "", nullptr);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED) << method;
  }
}

TEST_F(ApiTest, ModelReadyAndMetadata) {
  auto ready = [&](const std::string& name, const std::string& version, bool* r) {
    grpc::ClientContext ctx;
    inference::ModelReadyRequest req;
    req.set_name(name);
    req.set_version(version);
    inference::ModelReadyResponse resp;
    grpc::Status s = stub_->ModelReady(&ctx, req, &resp);
    *r = resp.ready();
    return s.error_code();
  };
  bool r = false;
  EXPECT_EQ(ready("mlp", "", &r), grpc::StatusCode::OK);
  EXPECT_TRUE(r);
  EXPECT_EQ(ready("mlp", "7", &r), grpc::StatusCode::OK);
  EXPECT_TRUE(r);
  EXPECT_EQ(ready("mlp", "1", &r), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(ready("nope", "", &r), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(ready("broken", "", &r), grpc::StatusCode::OK);
  EXPECT_FALSE(r);

  auto metadata = [&](const std::string& name, inference::ModelMetadataResponse* resp) {
    grpc::ClientContext ctx;
    inference::ModelMetadataRequest req;
    req.set_name(name);
    return stub_->ModelMetadata(&ctx, req, resp);
  };
  inference::ModelMetadataResponse m;
  ASSERT_TRUE(metadata("mlp", &m).ok());
  EXPECT_EQ(m.name(), "mlp");
  EXPECT_THAT(m.versions(), ::testing::ElementsAre("7"));
  ASSERT_EQ(m.inputs_size(), 1);
  EXPECT_EQ(m.inputs(0).name(), "x");
  EXPECT_EQ(m.inputs(0).datatype(), "FP32");
  EXPECT_THAT(m.inputs(0).shape(), ::testing::ElementsAre(4, 64));
  ASSERT_EQ(m.outputs_size(), 2);
  EXPECT_EQ(m.outputs(0).name(), "probs");
  EXPECT_THAT(m.outputs(1).shape(), ::testing::ElementsAre(4, 10));
  inference::ModelMetadataResponse d;
  ASSERT_TRUE(metadata("mlp_dynamic", &d).ok());
  EXPECT_THAT(d.inputs(0).shape(), ::testing::ElementsAre(-1, 64)) << "dynamic dims are -1";
  inference::ModelMetadataResponse unused;
  EXPECT_EQ(metadata("nope", &unused).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(metadata("broken", &unused).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(ApiTest, InferMatchesTheReferenceRawTypedAndSelected) {
  inference::ModelInferResponse resp;
  inference::ModelInferRequest req = RawRequest("mlp", *mlp_);
  req.set_id("abc");
  grpc::Status s = Infer(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.model_name(), "mlp");
  EXPECT_EQ(resp.model_version(), "7");
  EXPECT_EQ(resp.id(), "abc");
  ASSERT_EQ(resp.outputs_size(), 2);
  EXPECT_TRUE(CheckOutputs(resp, *mlp_).ok()) << CheckOutputs(resp, *mlp_);

  // Only `logits`.
  req.add_outputs()->set_name("logits");
  ASSERT_TRUE(Infer(req, &resp).ok());
  ASSERT_EQ(resp.outputs_size(), 1);
  EXPECT_EQ(resp.outputs(0).name(), "logits");
  EXPECT_TRUE(CheckOutputs(resp, *mlp_).ok());

  // Typed contents.
  inference::ModelInferRequest typed = RawRequest("mlp", *mlp_);
  const std::string raw = typed.raw_input_contents(0);
  typed.clear_raw_input_contents();
  for (size_t i = 0; i < raw.size(); i += 4) {
    float f;
    std::memcpy(&f, raw.data() + i, 4);
    typed.mutable_inputs(0)->mutable_contents()->add_fp32_contents(f);
  }
  ASSERT_TRUE(Infer(typed, &resp).ok());
  EXPECT_TRUE(CheckOutputs(resp, *mlp_).ok());

  // CNN.
  ASSERT_TRUE(Infer(RawRequest("cnn", *cnn_), &resp).ok());
  EXPECT_TRUE(CheckOutputs(resp, *cnn_).ok()) << CheckOutputs(resp, *cnn_);
}

TEST_F(ApiTest, DynamicBatchOfOneGivesTheFirstRowOfTheReference) {
  inference::ModelInferRequest req = RawRequest("mlp_dynamic", *mlp_);
  req.mutable_inputs(0)->set_shape(0, 1);
  req.mutable_raw_input_contents(0)->resize(64 * 4);
  inference::ModelInferResponse resp;
  ASSERT_TRUE(Infer(req, &resp).ok());
  ASSERT_EQ(resp.outputs_size(), 2);
  EXPECT_THAT(resp.outputs(0).shape(), ::testing::ElementsAre(1, 10));
  engine::TestDataSet first = *mlp_;
  for (engine::NamedData& out : first.outputs) {
    out.shape = engine::Shape{1, 10};
    out.bytes.resize(10 * 4);
  }
  EXPECT_TRUE(CheckOutputs(resp, first).ok()) << CheckOutputs(resp, first);
}

struct Bad {
  const char* name;
  std::function<void(inference::ModelInferRequest&)> mutate;
  grpc::StatusCode code;
  const char* message;
};

TEST_F(ApiTest, EveryValidationErrorOverTheWire) {
  const std::vector<Bad> cases = {
      {"unknown model", [](auto& r) { r.set_model_name("nope"); }, grpc::StatusCode::NOT_FOUND,
       "unknown model 'nope'"},
      {"unknown version", [](auto& r) { r.set_model_version("1"); }, grpc::StatusCode::NOT_FOUND,
       "model 'mlp' has no version '1'"},
      {"not ready", [](auto& r) { r.set_model_name("broken"); }, grpc::StatusCode::UNAVAILABLE,
       "model 'broken' is not ready"},
      {"no model name", [](auto& r) { r.clear_model_name(); }, grpc::StatusCode::INVALID_ARGUMENT,
       "model_name is empty"},
      {"raw count", [](auto& r) { r.add_raw_input_contents("x"); },
       grpc::StatusCode::INVALID_ARGUMENT, "the request has 2 raw_input_contents for 1 inputs"},
      {"unknown input", [](auto& r) { r.mutable_inputs(0)->set_name("y"); },
       grpc::StatusCode::INVALID_ARGUMENT, "unknown input 'y'; model 'mlp' has inputs: x"},
      {"duplicate input",
       [](auto& r) {
         const auto input = r.inputs(0);
         const std::string raw = r.raw_input_contents(0);
         *r.add_inputs() = input;
         r.add_raw_input_contents(raw);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "input 'x' is given twice"},
      {"missing input",
       [](auto& r) {
         r.clear_inputs();
         r.clear_raw_input_contents();
       },
       grpc::StatusCode::INVALID_ARGUMENT, "input 'x' is missing"},
      {"unknown datatype", [](auto& r) { r.mutable_inputs(0)->set_datatype("float"); },
       grpc::StatusCode::INVALID_ARGUMENT, "input 'x': unknown datatype 'float'"},
      {"datatype mismatch", [](auto& r) { r.mutable_inputs(0)->set_datatype("FP16"); },
       grpc::StatusCode::INVALID_ARGUMENT, "input 'x': expected datatype FP32, got FP16"},
      {"shape mismatch", [](auto& r) { r.mutable_inputs(0)->set_shape(0, 2); },
       grpc::StatusCode::INVALID_ARGUMENT, "input 'x': expected shape [4,64] (FP32), got [2,64]"},
      {"byte size", [](auto& r) { r.mutable_raw_input_contents(0)->resize(1020); },
       grpc::StatusCode::INVALID_ARGUMENT,
       "input 'x': expected FP32 [4,64] (1024 bytes), got 1020 bytes"},
      {"raw and typed",
       [](auto& r) { r.mutable_inputs(0)->mutable_contents()->add_fp32_contents(1); },
       grpc::StatusCode::INVALID_ARGUMENT, "has both raw_input_contents and contents"},
      {"unknown output", [](auto& r) { r.add_outputs()->set_name("hidden"); },
       grpc::StatusCode::INVALID_ARGUMENT, "unknown output 'hidden'; model 'mlp' has outputs: "},
  };
  for (const Bad& c : cases) {
    inference::ModelInferRequest req = RawRequest("mlp", *mlp_);
    c.mutate(req);
    grpc::Status s = Infer(req);
    EXPECT_EQ(s.error_code(), c.code) << c.name << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.message)) << c.name;
  }
  grpc::Status junk = RawUnaryCall(inferd_->Channel(), "/inference.GRPCInferenceService/ModelInfer",
                                   std::string("\x0a\xff\xff\xff", 4), nullptr);
  EXPECT_EQ(junk.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(junk.error_message(), HasSubstr("malformed ModelInferRequest"));
  // The server is still fine.
  inference::ModelInferResponse resp;
  ASSERT_TRUE(Infer(RawRequest("mlp", *mlp_), &resp).ok());
  EXPECT_TRUE(CheckOutputs(resp, *mlp_).ok());
}

TEST_F(ApiTest, MessageLargerThanTheLimitIsRefused) {
  inference::ModelInferRequest req = RawRequest("mlp", *mlp_);
  req.mutable_raw_input_contents(0)->resize(5 << 20);
  grpc::Status s = Infer(req);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("larger than max"));
}

TEST_F(ApiTest, RepositoryIndexLoadAndUnload) {
  auto index = [&](bool ready_only) {
    grpc::ClientContext ctx;
    inference::RepositoryIndexRequest req;
    req.set_ready(ready_only);
    inference::RepositoryIndexResponse resp;
    EXPECT_TRUE(stub_->RepositoryIndex(&ctx, req, &resp).ok());
    std::map<std::string, std::string> states;
    for (const auto& m : resp.models()) {
      states[m.name()] = m.state() + (m.reason().empty() ? "" : ": " + m.reason());
    }
    return states;
  };
  auto load = [&](const std::string& name) {
    grpc::ClientContext ctx;
    inference::RepositoryModelLoadRequest req;
    req.set_model_name(name);
    inference::RepositoryModelLoadResponse resp;
    return stub_->RepositoryModelLoad(&ctx, req, &resp);
  };
  auto unload = [&](const std::string& name) {
    grpc::ClientContext ctx;
    inference::RepositoryModelUnloadRequest req;
    req.set_model_name(name);
    inference::RepositoryModelUnloadResponse resp;
    return stub_->RepositoryModelUnload(&ctx, req, &resp);
  };

  auto all = index(false);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all["mlp"], "READY");
  EXPECT_EQ(all["cnn"], "READY");
  EXPECT_THAT(all["broken"], HasSubstr("UNAVAILABLE: "));
  EXPECT_THAT(all["broken"], HasSubstr("not a valid ONNX model"));
  EXPECT_EQ(index(true).size(), 3u);

  ASSERT_TRUE(unload("cnn").ok());
  EXPECT_EQ(index(false)["cnn"], "UNAVAILABLE: unloaded");
  int health = -1;
  ASSERT_TRUE(HealthCheck(inferd_->Channel(), "cnn", &health).ok());
  EXPECT_EQ(health, 2);
  EXPECT_EQ(Infer(RawRequest("cnn", *cnn_)).error_code(), grpc::StatusCode::UNAVAILABLE);

  grpc::Status s = load("cnn");
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(index(false)["cnn"], "READY");
  ASSERT_TRUE(HealthCheck(inferd_->Channel(), "cnn", &health).ok());
  EXPECT_EQ(health, 1);
  inference::ModelInferResponse resp;
  ASSERT_TRUE(Infer(RawRequest("cnn", *cnn_), &resp).ok());
  EXPECT_TRUE(CheckOutputs(resp, *cnn_).ok());

  EXPECT_EQ(load("nope").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(unload("nope").error_code(), grpc::StatusCode::NOT_FOUND);
  grpc::Status broken = load("broken");
  EXPECT_FALSE(broken.ok());
  EXPECT_THAT(broken.error_message(), HasSubstr("failed to load model 'broken'"));
  EXPECT_EQ(load("").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace inferd::testing
