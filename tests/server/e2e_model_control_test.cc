// End to end, model control and model names (issue 12, cases 2, 3, 8 and 11's NUL label): the
// default `model_control: none` refuses RepositoryModelLoad/Unload; `explicit` with an admin
// token requires it; a name is never a path (no load from outside the repository, no oracle for
// what exists there, no aliases of a loaded model); junk names leave no index entries or metric
// labels; RPCs taking a name answer bounded INVALID_ARGUMENT; max_loaded_models refuses the next.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "absl/strings/str_cat.h"

#include "engine/testing/runfiles.h"
#include "tests/server/infer_client.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "ctl-secret";

grpc::Status Load(inference::GRPCInferenceService::Stub& stub, const std::string& name,
                  const char* token = kToken) {
  grpc::ClientContext ctx;
  if (token != nullptr) ctx.AddMetadata("authorization", std::string("Bearer ") + token);
  inference::RepositoryModelLoadRequest req;
  req.set_model_name(name);
  inference::RepositoryModelLoadResponse resp;
  return stub.RepositoryModelLoad(&ctx, req, &resp);
}

grpc::Status Unload(inference::GRPCInferenceService::Stub& stub, const std::string& name,
                    const char* token = kToken) {
  grpc::ClientContext ctx;
  if (token != nullptr) ctx.AddMetadata("authorization", std::string("Bearer ") + token);
  inference::RepositoryModelUnloadRequest req;
  req.set_model_name(name);
  inference::RepositoryModelUnloadResponse resp;
  return stub.RepositoryModelUnload(&ctx, req, &resp);
}

inference::RepositoryIndexResponse Index(inference::GRPCInferenceService::Stub& stub) {
  grpc::ClientContext ctx;
  inference::RepositoryIndexResponse resp;
  EXPECT_TRUE(stub.RepositoryIndex(&ctx, {}, &resp).ok());
  return resp;
}

TEST(ModelControlDefaultTest, LoadAndUnloadAreRefusedAndTheModelsServe) {
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}, {"cnn", "tools/models/cnn"}};
  auto p = InferdProcess::Start("control_none", o);
  ASSERT_TRUE(p.ok()) << p.status();
  auto stub = (*p)->Stub();
  for (const grpc::Status& s : {Load(*stub, "mlp", nullptr), Unload(*stub, "mlp", nullptr),
                                Load(*stub, "../outside/evil", nullptr)}) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_THAT(s.error_message(), HasSubstr("set server.model_control: explicit"));
  }
  grpc::ClientContext ctx;
  inference::ModelReadyRequest req;
  req.set_name("mlp");
  inference::ModelReadyResponse resp;
  ASSERT_TRUE(stub->ModelReady(&ctx, req, &resp).ok());
  EXPECT_TRUE(resp.ready());
}

// Case 6: a count past its bound is a config error naming the bound; inferd does not start
// 30000 threads (or abort on 100000).
TEST(ConfigBoundsEndToEndTest, ThreadsPastTheBoundAreAConfigError) {
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  o.models_yaml = "  - name: mlp\n    threads: 30000\n";
  auto p = InferdProcess::Start("threads_bound", o);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("models[0].threads: at most 256, got 30000"));
}

class ModelControlExplicitTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // A model outside the repository, reachable from it as ../../outside/evil.
    outside_ = new fs::path(fs::path(engine::testing::TempDir()) / "outside");
    fs::remove_all(*outside_);
    fs::create_directories(*outside_);
    fs::create_directory_symlink(engine::testing::Runfile("tools/models/mlp"), *outside_ / "evil");
    InferdProcess::Options o;
    o.models = {{"mlp", "tools/models/mlp"},
                {"cnn", "tools/models/cnn"},
                {"mlp_dynamic", "tools/models/mlp_dynamic"}};
    o.server_yaml = absl::StrCat("  model_control: explicit\n  admin_token: ", kToken,
                                 "\n  load_all_models: false\n  limits: {max_loaded_models: 2}\n");
    o.models_yaml = "  - name: mlp\n  - name: cnn\n";
    auto p = InferdProcess::Start("control_explicit", o);
    ASSERT_TRUE(p.ok()) << p.status();
    inferd_ = p->release();
  }
  static void TearDownTestSuite() {
    delete inferd_;
    fs::remove_all(*outside_);
    delete outside_;
  }
  void SetUp() override {
    ASSERT_NE(inferd_, nullptr);
    stub_ = inferd_->Stub();
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "inferd log:\n" << inferd_->Log();
  }

  static InferdProcess* inferd_;
  static fs::path* outside_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};
InferdProcess* ModelControlExplicitTest::inferd_ = nullptr;
fs::path* ModelControlExplicitTest::outside_ = nullptr;

TEST_F(ModelControlExplicitTest, CallsMustCarryTheAdminToken) {
  for (const char* token : {static_cast<const char*>(nullptr), "wrong", "   "}) {
    EXPECT_EQ(Load(*stub_, "mlp", token).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(Unload(*stub_, "mlp", token).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  // A second load of a loaded name reloads it.
  grpc::Status s = Load(*stub_, "mlp");
  EXPECT_TRUE(s.ok()) << s.error_message();
}

// Case 2 and 3: names are not paths; nothing outside the repository loads or is revealed.
TEST_F(ModelControlExplicitTest, NamesAreNeverPaths) {
  const std::string evil = (*outside_ / "evil").string();
  for (const std::string& name :
       {std::string("../../outside/evil"), evil, std::string("/etc"), std::string("./mlp"),
        std::string("././mlp"), std::string("mlp/."), std::string("..")}) {
    const grpc::Status s = Load(*stub_, name);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << name;
    EXPECT_THAT(s.error_message(), HasSubstr("invalid model name")) << name;
    EXPECT_THAT(s.error_message(), Not(HasSubstr("model.onnx"))) << name;
  }
  const inference::RepositoryIndexResponse index = Index(*stub_);
  for (const auto& m : index.models()) {
    EXPECT_THAT(m.name(), Not(HasSubstr("/"))) << "an alias or a path got an entry";
  }
  EXPECT_EQ(index.models_size(), 3);  // mlp, cnn, mlp_dynamic
}

// Case 8 and 11: junk names (a NUL byte, 100 KB) never reach the index or a metric label, and
// every RPC taking a name answers a bounded INVALID_ARGUMENT.
TEST_F(ModelControlExplicitTest, JunkNamesLeaveNoTrace) {
  const std::string nul("a\0b", 3);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(Load(*stub_, nul + std::string(1000, 'x') + std::to_string(i)).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  EXPECT_EQ(Unload(*stub_, nul).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const inference::RepositoryIndexResponse index = Index(*stub_);
  EXPECT_EQ(index.models_size(), 3);
  EXPECT_LT(index.ByteSizeLong(), 4096u);

  const std::string huge(100000, 'n');
  for (const std::string& name : {nul, huge}) {
    grpc::ClientContext ctx;
    inference::ModelReadyRequest req;
    req.set_name(name);
    inference::ModelReadyResponse resp;
    const grpc::Status s = stub_->ModelReady(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_LT(s.error_message().size(), 300u);
    grpc::ClientContext ctx2;
    inference::ModelMetadataRequest mreq;
    mreq.set_name(name);
    inference::ModelMetadataResponse mresp;
    const grpc::Status m = stub_->ModelMetadata(&ctx2, mreq, &mresp);
    EXPECT_EQ(m.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_LT(m.error_message().size(), 300u);
  }
  absl::StatusOr<std::string> metrics = inferd_->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(metrics->find('\0'), std::string::npos) << "a NUL byte reached the metrics";
  EXPECT_THAT(*metrics, Not(HasSubstr("xxxxxxxx")));
}

// server.limits.max_loaded_models: the third model is refused naming the limit; unloading one
// makes room. Unloaded models of the repository stay listed as unloaded.
TEST_F(ModelControlExplicitTest, ZMaxLoadedModelsRefusesTheNext) {
  grpc::Status s = Load(*stub_, "mlp_dynamic");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("server.limits.max_loaded_models is 2"));
  ASSERT_TRUE(Unload(*stub_, "cnn").ok());
  s = Load(*stub_, "mlp_dynamic");
  EXPECT_TRUE(s.ok()) << s.error_message();
  std::map<std::string, std::string> states;
  const inference::RepositoryIndexResponse index = Index(*stub_);
  for (const auto& m : index.models()) states[m.name()] = m.state() + " " + m.reason();
  EXPECT_EQ(states["cnn"], "UNAVAILABLE unloaded");
  EXPECT_EQ(states["mlp_dynamic"], "READY ");
}

}  // namespace
}  // namespace inferd::testing
