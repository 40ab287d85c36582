// End to end, the hardening cases of the listeners, the signals, the metrics exporter and the
// error messages (issue 12, cases 4, 5, 9, 10, 11): a port is never shared silently; SIGHUP
// reloads the model repository without touching calls in flight; SIGTERM during start-up
// loading exits within a second or two; idle connections do not stall /metrics; error messages
// stay small whatever the request echoes; unparsable bytes get INVALID_ARGUMENT, not
// UNIMPLEMENTED.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "engine/testing/runfiles.h"
#include "tests/server/infer_client.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The model's metadata: the first input's shape, as text ("[4,64]").
std::string FirstInputShape(InferdProcess& inferd, const std::string& model) {
  grpc::ClientContext ctx;
  inference::ModelMetadataRequest req;
  req.set_name(model);
  inference::ModelMetadataResponse resp;
  grpc::Status s = inferd.Stub()->ModelMetadata(&ctx, req, &resp);
  if (!s.ok()) return "error: " + s.error_message();
  if (resp.inputs_size() == 0) return "no inputs";
  std::string text = "[";
  for (int64_t d : resp.inputs(0).shape()) absl::StrAppend(&text, text.size() > 1 ? "," : "", d);
  return text + "]";
}

bool ModelReady(InferdProcess& inferd, const std::string& model) {
  grpc::ClientContext ctx;
  inference::ModelReadyRequest req;
  req.set_name(model);
  inference::ModelReadyResponse resp;
  return inferd.Stub()->ModelReady(&ctx, req, &resp).ok() && resp.ready();
}

// ---- case 4: ports are not shared ----

TEST(PortTest, ASecondInferdOnTheSamePortIsRefusedAndTheFirstKeepsServing) {
  const int port = PickFreePort();
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  o.grpc_address = absl::StrCat("127.0.0.1:", port);
  auto first = InferdProcess::Start("port_first", o);
  ASSERT_TRUE(first.ok()) << first.status();

  o.retry_taken_ports = false;
  auto second = InferdProcess::Start("port_second", o);
  ASSERT_FALSE(second.ok()) << "a second inferd started on port " << port;
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("exited with 1"));
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr(absl::StrCat("cannot listen on 127.0.0.1:", port, ": address in use")));

  // Every call still reaches the first (with SO_REUSEPORT the kernel split new connections).
  for (int i = 0; i < 20; ++i) {
    auto stub = inference::GRPCInferenceService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    inference::ServerReadyResponse ready;
    ASSERT_TRUE(stub->ServerReady(&ctx, {}, &ready).ok()) << i;
    EXPECT_TRUE(ready.ready()) << i;
  }
  EXPECT_TRUE((*first)->running());
}

TEST(PortTest, LoopbackAndLocalhostOnOnePortInOneConfigAreRefused) {
  const int port = PickFreePort();
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  o.grpc_address = absl::StrCat("127.0.0.1:", port);
  o.admin_host = "localhost";
  o.admin_port = port;
  o.retry_taken_ports = false;
  auto inferd = InferdProcess::Start("port_alias", o);
  ASSERT_FALSE(inferd.ok()) << "inferd served gRPC and admin on one port";
  EXPECT_THAT(std::string(inferd.status().message()),
              HasSubstr(absl::StrCat("cannot listen on localhost:", port, ": address in use")));
}

// ---- case 5: SIGHUP reloads the repository ----

TEST(SignalTest, SighupWhileCallsAreInFlightKeepsServing) {
  InferdProcess::Options o;
  o.models = {{"wide", "tests/server/wide_large"}};
  o.models_yaml = "  - {name: wide, max_concurrent_runs: 1, queue_length: 16}\n";
  auto inferd = InferdProcess::Start("sighup_inflight", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  const engine::TestDataSet wide = LoadDataSet("tests/server/wide_large");
  const inference::ModelInferRequest req = RawRequest("wide", wide);

  constexpr int kClients = 5;
  std::atomic<bool> first_done{false};
  std::vector<grpc::Status> status(kClients);
  std::vector<absl::Status> check(kClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      grpc::ClientContext ctx;
      inference::ModelInferResponse resp;
      status[c] = (*inferd)->Stub()->ModelInfer(&ctx, req, &resp);
      if (status[c].ok()) check[c] = CheckOutputs(resp, wide);
      first_done = true;
    });
  }
  // One worker: when the first answer arrives, the others are queued or running.
  while (!first_done.load()) absl::SleepFor(absl::Microseconds(200));
  (*inferd)->Signal(SIGHUP);
  for (std::thread& t : threads) t.join();

  ASSERT_TRUE((*inferd)->WaitForLog("SIGHUP: reloaded", absl::Seconds(30))) << (*inferd)->Log();
  const std::string log = (*inferd)->Log();
  EXPECT_TRUE((*inferd)->running()) << log;
  for (int c = 0; c < kClients; ++c) {
    EXPECT_TRUE(status[c].ok()) << c << ": " << status[c].error_message() << "\n" << log;
    EXPECT_TRUE(check[c].ok()) << c << ": " << check[c];
  }
  EXPECT_THAT(log, HasSubstr("SIGHUP: reloaded 0, loaded 0, unloaded 0, failed 0, unchanged 1"));
  EXPECT_THAT(log, HasSubstr("the main config file is not re-read"));
  EXPECT_TRUE(ModelReady(**inferd, "wide"));
}

TEST(SignalTest, SighupReloadsAChangedModelLoadsANewOneAndUnloadsARemovedOne) {
  InferdProcess::Options o;
  o.models = {{"gone", "tools/models/mlp"}};
  o.files = {{"m/model.onnx", ReadBytes(engine::testing::Runfile("tools/models/mlp/model.onnx"))}};
  auto inferd = InferdProcess::Start("sighup_reload", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  ASSERT_EQ(FirstInputShape(**inferd, "m"), "[4,64]");
  ASSERT_TRUE(ModelReady(**inferd, "gone"));

  // m's model.onnx replaced (a dynamic batch now), gone's folder removed, new added.
  const fs::path repo = (*inferd)->repository();
  const fs::path tmp = repo / "m" / "model.onnx.tmp";
  fs::copy_file(engine::testing::Runfile("tools/models/mlp_dynamic/model.onnx"), tmp);
  fs::rename(tmp, repo / "m" / "model.onnx");
  fs::remove(repo / "gone");
  fs::create_directory_symlink(engine::testing::Runfile("tools/models/mlp"), repo / "new");
  (*inferd)->Signal(SIGHUP);

  ASSERT_TRUE((*inferd)->WaitForLog("SIGHUP: reloaded", absl::Seconds(30))) << (*inferd)->Log();
  const std::string log = (*inferd)->Log();
  EXPECT_THAT(log, HasSubstr("SIGHUP: reloaded 1, loaded 1, unloaded 1, failed 0, unchanged 0"));
  EXPECT_THAT(log, HasSubstr("model 'm': its files changed since it loaded; reloading"));
  EXPECT_THAT(log, HasSubstr("model 'gone': its folder and config entry are gone"));
  EXPECT_EQ(FirstInputShape(**inferd, "m"), "[-1,64]") << log;
  EXPECT_TRUE(ModelReady(**inferd, "new")) << log;
  EXPECT_FALSE(ModelReady(**inferd, "gone")) << log;

  // Nothing changed since: a second SIGHUP does nothing.
  (*inferd)->Signal(SIGHUP);
  ASSERT_TRUE((*inferd)->WaitForLog("unchanged 2", absl::Seconds(30))) << (*inferd)->Log();
  EXPECT_TRUE((*inferd)->running());
}

TEST(SignalTest, SigquitDrainsAndExitsZeroLikeSigterm) {
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  auto inferd = InferdProcess::Start("sigquit", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  (*inferd)->Signal(SIGQUIT);
  std::optional<int> exit_status = (*inferd)->Wait(absl::Seconds(30));
  ASSERT_TRUE(exit_status.has_value()) << (*inferd)->Log();
  EXPECT_EQ(*exit_status, 0) << (*inferd)->Log();
  EXPECT_THAT((*inferd)->Log(), HasSubstr("received SIGQUIT"));
  EXPECT_THAT((*inferd)->Log(), HasSubstr("shut down in"));
}

// ---- case 10: SIGTERM during start-up loading ----

TEST(SignalTest, SigtermDuringStartupLoadingExitsWithinTwoSeconds) {
  // 6 models of ~1.5 s each: the start-up lasts far longer than the bound.
  InferdProcess::Options o;
  for (int i = 0; i < 6; ++i) o.models.push_back({absl::StrCat("s", i), "tests/server/slow_load"});
  o.started_when_logged = "model 's0' READY";
  auto inferd = InferdProcess::Start("sigterm_startup", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  const absl::Time start = absl::Now();
  (*inferd)->Signal(SIGTERM);
  std::optional<int> exit_status = (*inferd)->Wait(absl::Seconds(2));
  const absl::Duration took = absl::Now() - start;
  const std::string log = (*inferd)->Log();
  ASSERT_TRUE(exit_status.has_value()) << "still running 2 s after SIGTERM; log:\n" << log;
  EXPECT_EQ(*exit_status, 0) << log;
  EXPECT_THAT(log, HasSubstr("received SIGTERM during start-up"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("model 's5' READY"))) << "took " << took;
  EXPECT_THAT(log, ::testing::Not(HasSubstr(" ready\n")));  // never ready
}

// ---- case 9: idle connections do not stall /metrics ----

TEST(MetricsTest, IdleConnectionsDoNotStallAScrape) {
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  auto inferd = InferdProcess::Start("metrics_idle", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  // More idle connections (nothing sent) than the exporter has threads, old (2) and new (8).
  std::vector<int> idle;
  for (int i = 0; i < 12; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>((*inferd)->metrics_port()));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    idle.push_back(fd);
  }
  absl::SleepFor(absl::Milliseconds(200));  // every idle one taken by a thread
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> text = (*inferd)->ScrapeMetrics();
  const absl::Duration took = absl::Now() - start;
  for (int fd : idle) close(fd);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("inferd_model_state"));
  EXPECT_LT(took, absl::Seconds(6)) << "the scrape waited " << took;
}

// ---- case 11: bounded error messages; unparsable requests ----

TEST(ErrorTest, AHugeShapeAndALongNameGetBoundedMessages) {
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  auto inferd = InferdProcess::Start("errors_bounded", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  auto stub = (*inferd)->Stub();

  inference::ModelInferRequest req;
  req.set_model_name("mlp");
  auto* in = req.add_inputs();
  in->set_name("x");
  in->set_datatype("FP32");
  for (int i = 0; i < 100000; ++i) in->add_shape(1);
  req.add_raw_input_contents(std::string(4, '\0'));
  grpc::ClientContext ctx;
  inference::ModelInferResponse resp;
  grpc::Status s = stub->ModelInfer(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message().size();
  EXPECT_THAT(s.error_message(), HasSubstr("[1,1,1,1,1,1,1,1,... (rank 100000)]"));
  EXPECT_LE(s.error_message().size(), 2048u);

  in->clear_shape();
  in->add_shape(4);
  in->add_shape(64);
  in->set_name(std::string(100000, 'n') + "\n\x01");
  grpc::ClientContext ctx2;
  s = stub->ModelInfer(&ctx2, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message().size();
  EXPECT_THAT(s.error_message(), HasSubstr("'" + std::string(64, 'n') + "'... (100002 bytes)"));
  EXPECT_LE(s.error_message().size(), 2048u);

  req.set_model_name(std::string(100000, 'm'));
  grpc::ClientContext ctx3;
  s = stub->ModelInfer(&ctx3, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message().size();
  EXPECT_LE(s.error_message().size(), 2048u);
}

TEST(ErrorTest, UnparsableBytesToTypedMethodsAreInvalidArgument) {
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  auto inferd = InferdProcess::Start("errors_unparsable", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  for (const char* method : {"ServerMetadata", "ModelReady", "ModelMetadata", "RepositoryIndex"}) {
    const std::string path = std::string("/inference.GRPCInferenceService/") + method;
    grpc::Status s = RawUnaryCall((*inferd)->Channel(), path, "\xff\xff\xff", nullptr);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_THAT(s.error_message(), HasSubstr("could not be parsed")) << method;
    EXPECT_THAT(s.error_message(), HasSubstr(path)) << method;
  }
  // The health service on the same port, and well-formed calls afterwards.
  grpc::Status s =
      RawUnaryCall((*inferd)->Channel(), "/grpc.health.v1.Health/Check", "\xff\xff\xff", nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_TRUE(ModelReady(**inferd, "mlp"));
}

}  // namespace
}  // namespace inferd::testing
