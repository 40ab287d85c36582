// Dynamic batching end to end (mlp_dynamic, a batch dimension): concurrent gRPC clients whose
// requests are gathered into runs of several requests (fewer model runs than requests, the
// log's batch lines), every response equal to the unbatched answer and to the reference, every
// output lease returned afterwards; a request larger than max_batch_size is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <regex>
#include <thread>

#include "tests/server/infer_client.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kModel[] = "tools/models/mlp_dynamic";  // reference data: batch 4

class BatchingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    InferdProcess::Options o;
    o.models = {{"mlp", kModel}};
    o.log_level = "debug";  // the per-batch lines
    o.models_yaml =
        "  - {name: mlp, max_concurrent_runs: 2, queue_length: 64}\n"
        "  - name: mlpb\n"
        "    path: mlp/model.onnx\n"
        "    max_concurrent_runs: 2\n"
        "    max_batch_size: 16\n"
        "    dynamic_batching: {max_queue_delay: 20ms, preferred_batch_sizes: [16]}\n"
        "  - {name: mlp2, path: mlp/model.onnx, max_batch_size: 2,\n"
        "     dynamic_batching: {}}\n";
    auto p = InferdProcess::Start("batching", o);
    ASSERT_TRUE(p.ok()) << p.status();
    inferd_ = p->release();
    set_ = new engine::TestDataSet(LoadDataSet(kModel));
  }
  static void TearDownTestSuite() {
    delete inferd_;
    delete set_;
  }
  void SetUp() override { ASSERT_NE(inferd_, nullptr); }
  void TearDown() override {
    if (HasFailure()) std::cerr << "inferd log:\n" << inferd_->Log();
  }
  static double Value(const std::string& series) {
    absl::StatusOr<std::string> text = inferd_->ScrapeMetrics();
    return text.ok() ? MetricValue(*text, series).value_or(-1) : -1;
  }

  static InferdProcess* inferd_;
  static engine::TestDataSet* set_;
};
InferdProcess* BatchingTest::inferd_ = nullptr;
engine::TestDataSet* BatchingTest::set_ = nullptr;

TEST_F(BatchingTest, ConcurrentRequestsShareRunsAndGetTheUnbatchedAnswer) {
  // The unbatched answer: the same request to the model entry without batching.
  inference::ModelInferResponse unbatched;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(inferd_->Stub()->ModelInfer(&ctx, RawRequest("mlp", *set_), &unbatched).ok());
  }
  constexpr int kClients = 8, kPerClient = 6;
  const inference::ModelInferRequest req = RawRequest("mlpb", *set_);
  std::atomic<int> ready{0}, ok{0};
  std::vector<std::string> errors(kClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      auto stub = inference::GRPCInferenceService::NewStub(inferd_->Channel());
      ready++;
      while (ready.load() < kClients) std::this_thread::yield();
      for (int i = 0; i < kPerClient; ++i) {
        grpc::ClientContext ctx;
        inference::ModelInferResponse resp;
        grpc::Status s = stub->ModelInfer(&ctx, req, &resp);
        if (!s.ok()) {
          errors[c] = s.error_message();
          return;
        }
        absl::Status check = CheckOutputs(resp, *set_);
        if (!check.ok()) {
          errors[c] = check.ToString();
          return;
        }
        for (int k = 0; k < resp.outputs_size(); ++k) {
          if (resp.outputs(k).name() != unbatched.outputs(k).name() ||
              resp.raw_output_contents(k) != unbatched.raw_output_contents(k)) {
            errors[c] = "output " + resp.outputs(k).name() + " differs from the unbatched one";
            return;
          }
        }
        ok++;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int c = 0; c < kClients; ++c) EXPECT_EQ(errors[c], "") << "client " << c;
  EXPECT_EQ(ok.load(), kClients * kPerClient);
  // Fewer model runs than requests: requests shared runs.
  const double runs = Value(R"(inferd_inferences_total{model="mlpb"})");
  EXPECT_GT(runs, 0);
  EXPECT_LT(runs, kClients * kPerClient);
  const std::string log = inferd_->Log();
  std::smatch m;
  int largest = 0;
  const std::regex line(R"(batch of (\d+) requests \((\d+) rows\): OK)");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator();
       ++it) {
    largest = std::max(largest, std::stoi((*it)[2].str()));
  }
  EXPECT_GT(largest, 4) << "no batch held more than one 4-row request";
  EXPECT_LE(largest, 16);
  // Every slice of every batch output was released once its response had been sent.
  EXPECT_EQ(Value(R"(inferd_io_outstanding_leases{model="mlpb",device="cpu:0"})"), 0);
}

TEST_F(BatchingTest, ARequestLargerThanMaxBatchSizeIsRefused) {
  grpc::ClientContext ctx;
  inference::ModelInferResponse resp;
  grpc::Status s = inferd_->Stub()->ModelInfer(&ctx, RawRequest("mlp2", *set_), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("batch size (dim 0) is 4"));
  EXPECT_THAT(s.error_message(), HasSubstr("max_batch_size 2"));
  // The server goes on serving.
  grpc::ClientContext ctx2;
  EXPECT_TRUE(inferd_->Stub()->ModelInfer(&ctx2, RawRequest("mlpb", *set_), &resp).ok());
}

TEST_F(BatchingTest, AnUnknownPriorityIsRefused) {
  inference::ModelInferRequest req = RawRequest("mlpb", *set_);
  (*req.mutable_parameters())["priority"].set_uint64_param(2);  // one level only: ignored
  grpc::ClientContext ctx;
  inference::ModelInferResponse resp;
  EXPECT_TRUE(inferd_->Stub()->ModelInfer(&ctx, req, &resp).ok());
  (*req.mutable_parameters())["priority"].set_string_param("high");
  grpc::ClientContext ctx2;
  grpc::Status s = inferd_->Stub()->ModelInfer(&ctx2, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("parameter 'priority'"));
}

}  // namespace
}  // namespace inferd::testing
