// InferJob::RunBatch on a real model (tools/models/mlp_dynamic, a batch dimension) through
// SubmitInfer and a Batcher: requests of 1, 2 and 1 rows gathered into one run, each answer
// equal to the same request run alone, each answer's outputs slices of the one batch buffer that
// stay valid while the other answers are released, and the buffer back in the IOArena (no
// outstanding lease) once the last one goes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "engine/test_data_set.h"
#include "engine/testing/runfiles.h"
#include "kernels/cpu/cpu_kernels.h"
#include "server/infer_job.h"
#include "server/model_repository.h"

namespace inferd::server {
namespace {

namespace fs = std::filesystem;

// Keeps what it was answered (the result holds the output leases).
struct Answers {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<absl::Status> status;
  std::vector<InferResult> results;
  int count = 0;
};

class Capture final : public InferResponder {
 public:
  Capture(Answers* a, int slot) : a_(a), slot_(slot) {}
  void Respond(const absl::Status& status, InferResult result) override {
    std::lock_guard<std::mutex> l(a_->mu);
    a_->status[slot_] = status;
    a_->results[slot_] = std::move(result);
    a_->count++;
    a_->cv.notify_all();
  }

 private:
  Answers* a_;
  int slot_;
};

class InferBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(registry_).ok());
    dir_ = fs::path(engine::testing::TempDir()) / "infer_batch";
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::create_directory_symlink(engine::testing::Runfile("tools/models/mlp_dynamic"),
                                 dir_ / "mlp");
    const std::string yaml = "server:\n  model_repository: " + dir_.string() +
                             "\nmodels:\n"
                             "  - {name: mlp}\n"
                             "  - name: mlpb\n    path: mlp/model.onnx\n    max_batch_size: 8\n"
                             "    dynamic_batching: {max_queue_delay: 300ms}\n";
    absl::StatusOr<std::shared_ptr<const Config>> config = ParseConfig(yaml, "test.yaml");
    ASSERT_TRUE(config.ok()) << config.status();
    repo_ = std::make_unique<ModelRepository>(*config, registry_);
    ASSERT_TRUE(repo_->Load("mlp").ok());
    ASSERT_TRUE(repo_->Load("mlpb").ok());
    absl::StatusOr<std::vector<engine::TestDataSet>> sets =
        engine::ReadTestDataSets(engine::testing::Runfile("tools/models/mlp_dynamic"));
    ASSERT_TRUE(sets.ok()) << sets.status();
    input_ = (*sets)[0].inputs[0];  // x [4, 64]
  }

  // A request of rows [first, first + rows) of the reference input.
  std::unique_ptr<InferRequest> Rows(const std::string& model, int first, int rows) {
    inference::ModelInferRequest header;
    header.set_model_name(model);
    auto* in = header.add_inputs();
    in->set_name("x");
    in->set_datatype("FP32");
    in->add_shape(rows);
    in->add_shape(64);
    auto bytes = std::make_shared<std::vector<uint8_t>>(
        input_.bytes.begin() + first * 64 * 4, input_.bytes.begin() + (first + rows) * 64 * 4);
    std::vector<absl::Span<const uint8_t>> raw = {absl::MakeConstSpan(*bytes)};
    return InferRequest::FromParts(std::move(header), std::move(raw), bytes);
  }

  void Submit(Answers& a, const std::string& model, int slot, int first, int rows) {
    SubmitInfer(*repo_, Rows(model, first, rows), std::make_unique<Capture>(&a, slot), absl::Now());
  }

  static void Wait(Answers& a, int n) {
    std::unique_lock<std::mutex> l(a.mu);
    ASSERT_TRUE(a.cv.wait_for(l, std::chrono::seconds(20), [&] { return a.count >= n; }));
  }

  engine::KernelRegistry registry_;
  fs::path dir_;
  std::unique_ptr<ModelRepository> repo_;
  engine::NamedData input_;
};

TEST_F(InferBatchTest, OneRunServesEveryRequestWithSlicesOfOneBuffer) {
  // The answers of the requests run alone.
  constexpr int kFirst[] = {0, 1, 3}, kRows[] = {1, 2, 1};
  Answers alone;
  alone.status.resize(3);
  alone.results.resize(3);
  for (int i = 0; i < 3; ++i) Submit(alone, "mlp", i, kFirst[i], kRows[i]);
  Wait(alone, 3);

  Answers batched;
  batched.status.resize(3);
  batched.results.resize(3);
  for (int i = 0; i < 3; ++i) Submit(batched, "mlpb", i, kFirst[i], kRows[i]);
  Wait(batched, 3);
  std::shared_ptr<LoadedModel> model = repo_->Find("mlpb");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->stats().executions.load(), 1u);       // one run for the three
  EXPECT_EQ(model->stats().inference_count.load(), 4u);  // 1 + 2 + 1 rows
  const std::map<int, BatchStats::Entry> by_size = model->stats().batches.Read();
  ASSERT_EQ(by_size.count(4), 1u);
  EXPECT_EQ(by_size.at(4).runs, 1u);

  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(alone.status[i].ok()) << alone.status[i];
    ASSERT_TRUE(batched.status[i].ok()) << batched.status[i];
    ASSERT_EQ(batched.results[i].outputs.size(), alone.results[i].outputs.size());
    for (size_t k = 0; k < batched.results[i].outputs.size(); ++k) {
      const LeasedOutput& b = batched.results[i].outputs[k];
      const LeasedOutput& a = alone.results[i].outputs[k];
      EXPECT_EQ(b.shape, a.shape) << b.name;
      EXPECT_EQ(b.shape[0], kRows[i]);
      ASSERT_EQ(b.lease.size(), a.lease.size());
      // The batched run multiplies 4 rows where the single ones multiply 1 or 2: oneDNN may sum
      // those in a different order on some CPUs (it does on AMD EPYC without AVX-512), so the
      // answers agree within float rounding; the slicing itself is checked exactly below.
      ASSERT_EQ(a.lease.size() % sizeof(float), 0u);
      const auto* got = static_cast<const float*>(b.lease.data());
      const auto* want = static_cast<const float*>(a.lease.data());
      for (size_t e = 0; e < a.lease.size() / sizeof(float); ++e) {
        EXPECT_NEAR(got[e], want[e], 1e-5f * std::max(1.0f, std::fabs(want[e])))
            << b.name << " element " << e;
      }
    }
  }
  // The slices of one output lie back to back in one buffer, sharing its pin.
  const memory::IOLease& s0 = batched.results[0].outputs[0].lease;
  const memory::IOLease& s1 = batched.results[1].outputs[0].lease;
  EXPECT_EQ(static_cast<const uint8_t*>(s0.data()) + s0.size(), s1.data());
  EXPECT_EQ(s0.use_count(), 3);

  // Releasing the other answers leaves the middle one intact; the last release returns the
  // buffers.
  const std::vector<uint8_t> expected(static_cast<const uint8_t*>(s1.data()),
                                      static_cast<const uint8_t*>(s1.data()) + s1.size());
  alone.results.clear();
  batched.results[0] = InferResult();
  batched.results[2] = InferResult();
  EXPECT_EQ(s1.use_count(), 1);
  EXPECT_EQ(std::memcmp(s1.data(), expected.data(), expected.size()), 0);
  memory::IOArena& io = *model->session()->devices()[0].io;
  EXPECT_GT(io.Stats().outstanding_leases, 0u);
  batched.results.clear();
  EXPECT_EQ(io.Stats().outstanding_leases, 0u);
}

}  // namespace
}  // namespace inferd::server
