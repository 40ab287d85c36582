// The real inferd started as tritonserver is (no YAML: --model-repository and port flags) on a
// Triton-layout repository: versions 1 and 2 of one model served at once (version_policy all),
// each inferred over gRPC, ModelReady / ModelMetadata / RepositoryIndex per version, and poll
// mode loading a version directory added while it runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "engine/testing/runfiles.h"
#include "tests/server/infer_client.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::map<std::string, std::string> IndexOf(inference::GRPCInferenceService::Stub& stub,
                                           const std::string& name) {
  grpc::ClientContext ctx;
  inference::RepositoryIndexResponse index;
  EXPECT_TRUE(stub.RepositoryIndex(&ctx, {}, &index).ok());
  std::map<std::string, std::string> states;  // version -> state
  for (const auto& m : index.models()) {
    if (m.name() == name) states[m.version()] = m.state();
  }
  return states;
}

bool VersionReady(inference::GRPCInferenceService::Stub& stub, const std::string& version) {
  grpc::ClientContext ctx;
  inference::ModelReadyRequest req;
  req.set_name("tm");
  req.set_version(version);
  inference::ModelReadyResponse resp;
  return stub.ModelReady(&ctx, req, &resp).ok() && resp.ready();
}

TEST(TritonRepositoryE2E, ServesEveryVersionAndPollsForNewOnes) {
  InferdProcess::Options o;
  o.triton_command_line = true;
  o.models = {{"tm/1", "tools/models/mlp"}, {"tm/2", "tools/models/mlp"}};
  o.files = {{"tm/config.pbtxt",
              "name: \"tm\"\nplatform: \"onnxruntime_onnx\"\nversion_policy: { all: {} }\n"
              "optimization { cuda { graphs: true } }\n"}};
  o.extra_args = {"--model-control-mode=poll", "--repository-poll-secs=1"};
  auto inferd = InferdProcess::Start("triton_repo", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  auto stub = (*inferd)->Stub();
  const engine::TestDataSet mlp = LoadDataSet("tools/models/mlp");
  // The unknown field is a warning naming it and its line, not a refusal.
  EXPECT_THAT((*inferd)->Log(), HasSubstr("config.pbtxt:4:"));
  EXPECT_THAT((*inferd)->Log(), HasSubstr("optimization"));

  EXPECT_EQ(IndexOf(*stub, "tm"),
            (std::map<std::string, std::string>{{"1", "READY"}, {"2", "READY"}}));
  for (const std::string v : {"1", "2", ""}) {
    EXPECT_TRUE(VersionReady(*stub, v)) << v;
    inference::ModelInferRequest req = RawRequest("tm", mlp);
    req.set_model_version(v);
    inference::ModelInferResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = stub->ModelInfer(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << v << ": " << s.error_message();
    EXPECT_EQ(resp.model_version(), v.empty() ? "2" : v);  // no version: the highest
    EXPECT_TRUE(CheckOutputs(resp, mlp).ok()) << v;
    grpc::ClientContext mctx;
    inference::ModelMetadataRequest mreq;
    mreq.set_name("tm");
    mreq.set_version(v);
    inference::ModelMetadataResponse meta;
    ASSERT_TRUE(stub->ModelMetadata(&mctx, mreq, &meta).ok()) << v;
    ASSERT_EQ(meta.versions_size(), 1);
    EXPECT_EQ(meta.versions(0), v.empty() ? "2" : v);
  }
  {
    grpc::ClientContext ctx;
    inference::ModelReadyRequest req;
    req.set_name("tm");
    req.set_version("3");
    inference::ModelReadyResponse resp;
    grpc::Status s = stub->ModelReady(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(s.error_message(), HasSubstr("version(s) 1, 2"));
  }

  // Poll mode: a version directory added while serving loads without a signal.
  fs::create_directory_symlink(engine::testing::Runfile("tools/models/mlp"),
                               fs::path((*inferd)->repository()) / "tm" / "3");
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (!VersionReady(*stub, "3") && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(100));
  EXPECT_TRUE(VersionReady(*stub, "3")) << (*inferd)->Log();
  EXPECT_EQ(IndexOf(*stub, "tm"),
            (std::map<std::string, std::string>{{"1", "READY"}, {"2", "READY"}, {"3", "READY"}}));
  inference::ModelInferRequest req = RawRequest("tm", mlp);
  inference::ModelInferResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->ModelInfer(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.model_version(), "3");
}

TEST(TritonRepositoryE2E, UnknownTritonFlagIsRefused) {
  InferdProcess::Options o;
  o.triton_command_line = true;
  o.models = {{"tm/1", "tools/models/mlp"}};
  o.extra_args = {"--backend-config=onnxruntime,x=1"};
  auto inferd = InferdProcess::Start("triton_flag", o);
  ASSERT_FALSE(inferd.ok());
  EXPECT_THAT(std::string(inferd.status().message()), HasSubstr("backend-config"));
}

}  // namespace
}  // namespace inferd::testing
