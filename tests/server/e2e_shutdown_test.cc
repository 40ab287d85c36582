// End to end, SIGTERM: inferd stops accepting calls, the requests already in flight (running and
// queued, with 8 MiB responses) complete intact, and the process exits 0.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <thread>

#include "tests/server/infer_client.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

TEST(ShutdownTest, SigtermDrainsInFlightRequestsAndExitsZero) {
  InferdProcess::Options o;
  o.models = {{"wide", "tests/server/wide_large"}};
  o.server_yaml = "  drain_timeout: 30s\n";
  o.models_yaml = "  - {name: wide, max_concurrent_runs: 1, queue_length: 16}\n";
  auto inferd = InferdProcess::Start("shutdown", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  const engine::TestDataSet wide = LoadDataSet("tests/server/wide_large");
  const inference::ModelInferRequest req = RawRequest("wide", wide);

  constexpr int kClients = 5;
  std::atomic<bool> first_done{false};
  std::atomic<int> ready{0};
  std::vector<grpc::Status> status(kClients);
  std::vector<absl::Status> check(kClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      auto stub = inference::GRPCInferenceService::NewStub((*inferd)->Channel());
      grpc::ClientContext warm;
      inference::ServerLiveResponse live;
      stub->ServerLive(&warm, {}, &live);  // connected before the burst
      ready++;
      while (ready.load() < kClients) std::this_thread::yield();
      grpc::ClientContext ctx;
      inference::ModelInferResponse resp;
      status[c] = stub->ModelInfer(&ctx, req, &resp);
      if (status[c].ok()) check[c] = CheckOutputs(resp, wide);
      first_done = true;
    });
  }
  // One worker: when the first answer arrives, the other requests are queued or running.
  while (!first_done.load()) absl::SleepFor(absl::Microseconds(200));
  (*inferd)->Signal(SIGTERM);
  for (std::thread& t : threads) t.join();

  std::optional<int> exit_status = (*inferd)->Wait(absl::Seconds(60));
  const std::string log = (*inferd)->Log();
  ASSERT_TRUE(exit_status.has_value()) << "inferd did not exit; log:\n" << log;
  EXPECT_EQ(*exit_status, 0) << log;
  for (int c = 0; c < kClients; ++c) {
    EXPECT_TRUE(status[c].ok()) << c << ": " << status[c].error_message() << "\n" << log;
    EXPECT_TRUE(check[c].ok()) << c << ": " << check[c];
  }
  EXPECT_NE(log.find("received SIGTERM"), std::string::npos) << log;
  EXPECT_NE(log.find("shut down in"), std::string::npos) << log;
}

TEST(ShutdownTest, SigintOnAnIdleServerExitsZeroAndRefusesNewCalls) {
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  auto inferd = InferdProcess::Start("sigint", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  auto channel = (*inferd)->Channel();
  (*inferd)->Signal(SIGINT);
  std::optional<int> exit_status = (*inferd)->Wait(absl::Seconds(30));
  ASSERT_TRUE(exit_status.has_value()) << (*inferd)->Log();
  EXPECT_EQ(*exit_status, 0) << (*inferd)->Log();
  auto stub = inference::GRPCInferenceService::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  inference::ServerLiveResponse live;
  EXPECT_FALSE(stub->ServerLive(&ctx, {}, &live).ok());
}

}  // namespace
}  // namespace inferd::testing
