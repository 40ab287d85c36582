// End to end under load, with 8 MiB outputs (tests/server:wide_large): concurrent clients whose
// every output is checked against the reference, a full queue answering RESOURCE_EXHAUSTED, and
// an unload while large responses are queued, running and being sent (they all arrive intact).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/server/infer_client.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

using ::testing::HasSubstr;

class LoadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    InferdProcess::Options o;
    o.models = {{"wide", "tests/server/wide_large"}};
    o.server_yaml = "  load_all_models: false\n  model_control: explicit\n";
    o.models_yaml =
        "  - {name: wide, max_concurrent_runs: 2, queue_length: 64}\n"
        "  - {name: wide_q1, path: wide/model.onnx, max_concurrent_runs: 1, queue_length: 1}\n"
        "  - {name: wide_unload, path: wide/model.onnx, max_concurrent_runs: 1, "
        "queue_length: 16}\n";
    auto p = InferdProcess::Start("load", o);
    ASSERT_TRUE(p.ok()) << p.status();
    inferd_ = p->release();
    wide_ = new engine::TestDataSet(LoadDataSet("tests/server/wide_large"));
  }
  static void TearDownTestSuite() {
    delete inferd_;
    delete wide_;
  }
  void SetUp() override { ASSERT_NE(inferd_, nullptr); }
  void TearDown() override {
    if (HasFailure()) std::cerr << "inferd log:\n" << inferd_->Log();
  }

  struct Result {
    grpc::Status status;
    absl::Status check;
    absl::Time done;
  };

  // `n` clients, each on its own channel, send `per_client` requests to `model` at once.
  std::vector<Result> Burst(const std::string& model, int n, int per_client,
                            std::function<void(int)> on_done = nullptr) {
    std::vector<Result> results(n * per_client);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    const inference::ModelInferRequest req = RawRequest(model, *wide_);
    for (int c = 0; c < n; ++c) {
      threads.emplace_back([&, c] {
        auto stub = inference::GRPCInferenceService::NewStub(inferd_->Channel());
        ready++;
        while (ready.load() < n) std::this_thread::yield();
        for (int i = 0; i < per_client; ++i) {
          grpc::ClientContext ctx;
          inference::ModelInferResponse resp;
          Result& r = results[c * per_client + i];
          r.status = stub->ModelInfer(&ctx, req, &resp);
          r.done = absl::Now();
          if (r.status.ok()) r.check = CheckOutputs(resp, *wide_);
          if (on_done) on_done(c);
        }
      });
    }
    for (std::thread& t : threads) t.join();
    return results;
  }

  static InferdProcess* inferd_;
  static engine::TestDataSet* wide_;
};
InferdProcess* LoadTest::inferd_ = nullptr;
engine::TestDataSet* LoadTest::wide_ = nullptr;

TEST_F(LoadTest, EightConcurrentClientsGetCorrectLargeOutputs) {
  const std::vector<Result> results = Burst("wide", 8, 3);
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(results[i].status.ok()) << i << ": " << results[i].status.error_message();
    EXPECT_TRUE(results[i].check.ok()) << i << ": " << results[i].check;
  }
}

TEST_F(LoadTest, FullQueueAnswersResourceExhaustedAtOnce) {
  const std::vector<Result> results = Burst("wide_q1", 8, 1);
  int ok = 0, exhausted = 0;
  for (const Result& r : results) {
    if (r.status.ok()) {
      ++ok;
      EXPECT_TRUE(r.check.ok()) << r.check;
    } else {
      EXPECT_EQ(r.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
          << r.status.error_message();
      EXPECT_THAT(r.status.error_message(), HasSubstr("model 'wide_q1' is busy"));
      ++exhausted;
    }
  }
  EXPECT_GE(ok, 1);
  EXPECT_GE(exhausted, 1) << "1 running + 1 queued; 8 at once cannot all fit";
}

TEST_F(LoadTest, UnloadDuringLargeInFlightResponsesDeliversThemIntact) {
  std::atomic<bool> first_done{false};
  absl::Time unload_started = absl::InfiniteFuture();
  grpc::Status unload_status;
  std::thread unloader([&] {
    while (!first_done.load()) absl::SleepFor(absl::Microseconds(200));
    auto stub = inferd_->Stub();
    grpc::ClientContext ctx;
    inference::RepositoryModelUnloadRequest req;
    req.set_model_name("wide_unload");
    inference::RepositoryModelUnloadResponse resp;
    unload_started = absl::Now();
    unload_status = stub->RepositoryModelUnload(&ctx, req, &resp);
  });
  // 6 requests on one worker: when the first answer arrives, the others are queued or running.
  const std::vector<Result> results = Burst("wide_unload", 6, 1, [&](int) { first_done = true; });
  unloader.join();
  ASSERT_TRUE(unload_status.ok()) << unload_status.error_message();
  int ok_after_unload = 0;
  for (const Result& r : results) {
    if (r.status.ok()) {
      EXPECT_TRUE(r.check.ok()) << r.check;
      if (r.done > unload_started) ++ok_after_unload;
    } else {
      EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
    }
  }
  EXPECT_GE(ok_after_unload, 1) << "some response should have been in flight during the unload";
  // Unloaded now.
  auto stub = inferd_->Stub();
  grpc::ClientContext ctx;
  inference::ModelInferResponse resp;
  EXPECT_EQ(stub->ModelInfer(&ctx, RawRequest("wide_unload", *wide_), &resp).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // The other models serve on.
  EXPECT_TRUE(Burst("wide", 1, 1)[0].status.ok());
}

}  // namespace
}  // namespace inferd::testing
