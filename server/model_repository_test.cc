// ModelRepository on the generated models: start-up loading with a broken model beside good
// ones, per-model config.yaml, unload waiting for in-flight requests, leases outliving the
// session, reload, and the index.
#include "server/model_repository.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/test_data_set.h"
#include "engine/testing/runfiles.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd::server {
namespace {

namespace fs = std::filesystem;
using engine::testing::Runfile;
using ::testing::HasSubstr;

class ModelRepositoryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    registry_ = new engine::KernelRegistry();
    ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(*registry_).ok());
  }

  void SetUp() override {
    dir_ = fs::path(engine::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::create_directory_symlink(Runfile("tools/models/mlp"), dir_ / "mlp");
    fs::create_directories(dir_ / "cnn");
    fs::create_symlink(Runfile("tools/models/cnn/model.onnx"), dir_ / "cnn" / "model.onnx");
    std::ofstream(dir_ / "cnn" / "config.yaml") << "queue_length: 3\nthreads: 2\n";
    fs::create_directories(dir_ / "broken");
    std::ofstream(dir_ / "broken" / "model.onnx") << "this is not an onnx model";
  }

  std::unique_ptr<ModelRepository> Make(const std::string& extra_server = "",
                                        const std::string& models = "") {
    const std::string yaml = "server:\n  model_repository: " + dir_.string() + "\n" + extra_server +
                             (models.empty() ? "" : "models:\n" + models);
    auto config = ParseConfig(yaml, "test.yaml");
    EXPECT_TRUE(config.ok()) << config.status();
    config_ = *config;
    auto repo = std::make_unique<ModelRepository>(config_, *registry_);
    repo->SetStateListener([this](const std::string& name, ModelState state) {
      std::lock_guard<std::mutex> lock(events_mu_);
      events_.push_back(name + ":" + ModelStateName(state));
    });
    return repo;
  }

  std::vector<std::string> Events() {
    std::lock_guard<std::mutex> lock(events_mu_);
    return events_;
  }

  static engine::KernelRegistry* registry_;
  fs::path dir_;
  std::shared_ptr<const Config> config_;
  std::mutex events_mu_;
  std::vector<std::string> events_;
};
engine::KernelRegistry* ModelRepositoryTest::registry_ = nullptr;

TEST_F(ModelRepositoryTest, StartupLoadsGoodModelsAndReportsTheBrokenOne) {
  auto repo = Make("", "  - name: mlp\n    version: \"2\"\n    max_concurrent_runs: 2\n");
  EXPECT_EQ(repo->StartupModels(), (std::vector<std::string>{"broken", "cnn", "mlp"}));
  EXPECT_EQ(repo->LoadStartupModels(), 2);

  auto mlp = repo->Find("mlp");
  ASSERT_NE(mlp, nullptr);
  EXPECT_EQ(mlp->state(), ModelState::kReady);
  EXPECT_EQ(mlp->version(), "2");
  ASSERT_NE(mlp->session(), nullptr);
  EXPECT_EQ(mlp->signature().inputs.size(), 1u);
  EXPECT_EQ(mlp->signature().inputs[0].name, "x");
  EXPECT_EQ(mlp->signature().outputs.size(), 2u);

  auto cnn = repo->Find("cnn");
  ASSERT_NE(cnn, nullptr);
  EXPECT_EQ(cnn->state(), ModelState::kReady);
  EXPECT_EQ(cnn->config().queue_length, 3) << "from cnn/config.yaml";
  EXPECT_EQ(cnn->config().threads, 2);

  auto broken = repo->Find("broken");
  ASSERT_NE(broken, nullptr);
  EXPECT_EQ(broken->state(), ModelState::kUnavailable);
  EXPECT_FALSE(broken->reason().empty());
  EXPECT_EQ(broken->session(), nullptr);
  EXPECT_EQ(broken->Acquire().status().code(), absl::StatusCode::kUnavailable);

  const auto index = repo->Index();
  ASSERT_EQ(index.size(), 3u);
  EXPECT_EQ(index[0].name, "broken");
  EXPECT_EQ(index[0].state, ModelState::kUnavailable);
  EXPECT_EQ(index[2].version, "2");
  EXPECT_THAT(Events(), ::testing::Contains("mlp:READY"));
  EXPECT_THAT(Events(), ::testing::Contains("broken:UNAVAILABLE"));
}

TEST_F(ModelRepositoryTest, UnloadWaitsForInFlightRequests) {
  auto repo = Make("  load_all_models: false\n", "  - name: mlp\n");
  ASSERT_EQ(repo->LoadStartupModels(), 1);
  auto mlp = repo->Find("mlp");
  absl::StatusOr<LoadedModel::Ref> ref = mlp->Acquire();
  ASSERT_TRUE(ref.ok());
  std::atomic<bool> unloaded{false};
  std::thread unloader([&] {
    EXPECT_TRUE(repo->Unload("mlp").ok());
    unloaded = true;
  });
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_FALSE(unloaded.load()) << "unload must wait for the request";
  EXPECT_EQ(mlp->state(), ModelState::kUnloading);
  EXPECT_EQ(mlp->Acquire().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(mlp->session(), nullptr);
  ref->Reset();
  unloader.join();
  EXPECT_TRUE(unloaded.load());
  EXPECT_EQ(mlp->state(), ModelState::kUnavailable);
  EXPECT_EQ(mlp->reason(), "unloaded");
  EXPECT_EQ(mlp->session(), nullptr);
  EXPECT_THAT(Events(), ::testing::ElementsAre("mlp:LOADING", "mlp:READY", "mlp:UNLOADING",
                                               "mlp:UNAVAILABLE"));
  EXPECT_EQ(repo->Unload("mlp").code(), absl::StatusCode::kOk) << "already unloaded";
  EXPECT_EQ(repo->Unload("nope").code(), absl::StatusCode::kNotFound);
}

TEST_F(ModelRepositoryTest, OutputLeasesOutliveTheUnloadedSession) {
  auto repo = Make("  load_all_models: false\n", "  - name: mlp\n");
  ASSERT_TRUE(repo->Load("mlp").ok());
  auto sets = engine::ReadTestDataSets(Runfile("tools/models/mlp"));
  ASSERT_TRUE(sets.ok()) << sets.status();
  const engine::TestDataSet& set = (*sets)[0];
  std::vector<memory::IOLease> leases;
  {
    auto mlp = repo->Find("mlp");
    absl::StatusOr<LoadedModel::Ref> ref = mlp->Acquire();
    ASSERT_TRUE(ref.ok());
    engine::Session& session = (*ref)->session_ref();
    const engine::NamedData& x = set.inputs[0];
    engine::InputTensor in{"x", x.type, x.shape, x.bytes.data(), x.bytes.size()};
    auto outs = session.Run({in});
    ASSERT_TRUE(outs.ok()) << outs.status();
    for (engine::OutputTensor& o : *outs) {
      auto lease = session.devices()[0].io->Export(std::move(o.buffer));
      ASSERT_TRUE(lease.ok());
      leases.push_back(*std::move(lease));
    }
  }
  ASSERT_TRUE(repo->Unload("mlp").ok());
  EXPECT_EQ(repo->Find("mlp")->session(), nullptr);
  for (size_t i = 0; i < leases.size(); ++i) {
    const engine::NamedData& want = set.outputs[i];
    EXPECT_TRUE(
        engine::CompareData(want, want.type, want.shape, leases[i].data(), leases[i].size(), {})
            .ok())
        << "output " << i << " changed after unload";
  }
}

TEST_F(ModelRepositoryTest, ReloadSwapsInANewSessionAndKeepsTheCounters) {
  auto repo = Make("  load_all_models: false\n", "  - name: mlp\n");
  ASSERT_TRUE(repo->Load("mlp").ok());
  auto first = repo->Find("mlp");
  first->stats().inferences += 5;
  ASSERT_TRUE(repo->Load("mlp").ok());
  auto second = repo->Find("mlp");
  EXPECT_NE(first, second);
  EXPECT_EQ(first->state(), ModelState::kUnavailable);
  EXPECT_EQ(second->state(), ModelState::kReady);
  EXPECT_EQ(second->stats().inferences.load(), 5u) << "counters are per name";
}

TEST_F(ModelRepositoryTest, LoadOnDemandAndIndexOfModelsNotLoaded) {
  auto repo = Make("  load_all_models: false\n", "  - name: mlp\n");
  EXPECT_EQ(repo->StartupModels(), std::vector<std::string>{"mlp"});
  ASSERT_EQ(repo->LoadStartupModels(), 1);
  auto index = repo->Index();
  ASSERT_EQ(index.size(), 3u);
  EXPECT_EQ(index[1].name, "cnn");
  EXPECT_EQ(index[1].reason, "not loaded");
  EXPECT_EQ(repo->Find("cnn"), nullptr);

  ASSERT_TRUE(repo->Load("cnn").ok());
  EXPECT_EQ(repo->Find("cnn")->state(), ModelState::kReady);
  absl::Status missing = repo->Load("nope");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("model 'nope' is not in the repository"));
  absl::Status broken = repo->Load("broken");
  EXPECT_FALSE(broken.ok());
  EXPECT_THAT(std::string(broken.message()), HasSubstr("failed to load model 'broken'"));
  EXPECT_EQ(repo->Find("broken")->state(), ModelState::kUnavailable);
  EXPECT_EQ(repo->Snapshot().size(), 3u);
}

TEST_F(ModelRepositoryTest, BrokenConfigYamlMakesTheModelUnavailable) {
  std::ofstream(dir_ / "cnn" / "config.yaml") << "queue_length: many\n";
  auto repo = Make();
  EXPECT_EQ(repo->LoadStartupModels(), 1);
  auto cnn = repo->Find("cnn");
  ASSERT_NE(cnn, nullptr);
  EXPECT_EQ(cnn->state(), ModelState::kUnavailable);
  EXPECT_THAT(cnn->reason(), HasSubstr("config.yaml:1"));
}

}  // namespace
}  // namespace inferd::server
