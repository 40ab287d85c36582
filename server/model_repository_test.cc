// ModelRepository on the generated models: start-up loading with a broken model beside good
// ones, per-model config.yaml, unload waiting for in-flight requests, leases outliving the
// session, reload, and the index.
#include "server/model_repository.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "engine/test_data_set.h"
#include "engine/testing/model_builder.h"
#include "engine/testing/runfiles.h"
#include "kernels/cpu/cpu_kernels.h"
#include "proto/model_config.pb.h"

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
    fs::copy_file(Runfile("tools/models/cnn/model.onnx"), dir_ / "cnn" / "model.onnx");
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

// KServe v2 has no sequence type: a model with a sequence graph output is refused at load,
// saying so (the engine itself runs it, docs/sequences.md).
TEST_F(ModelRepositoryTest, SequenceGraphOutputIsRefused) {
  engine::testing::ModelBuilder b(17);
  b.Input("x", engine::DataType::kFloat32, {2});
  b.Node("SequenceConstruct", {"x"}, {"s"});
  onnx::ValueInfoProto* out = b.proto().mutable_graph()->add_output();
  out->set_name("s");
  out->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(static_cast<int>(engine::DataType::kFloat32));
  fs::create_directories(dir_ / "seq");
  std::ofstream(dir_ / "seq" / "model.onnx", std::ios::binary) << b.Serialize();
  auto repo = Make("  load_all_models: false\n", "");
  absl::Status st = repo->Load("seq");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(st.message()), HasSubstr("output 's' is a sequence"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("KServe v2 has no sequence"));
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

// Issue 12 case 2: a model name is a name, never a path, and no error tells what exists outside.
TEST_F(ModelRepositoryTest, NamesThatArePathsAreRefusedWithoutTouchingTheDisk) {
  const fs::path outside = dir_.parent_path() / (dir_.filename().string() + "_outside");
  fs::remove_all(outside);
  fs::create_directories(outside);
  fs::create_directory_symlink(Runfile("tools/models/mlp"), outside / "evil");
  auto repo = Make("  load_all_models: false\n");
  const std::string up = "../" + outside.filename().string() + "/evil";
  for (const std::string& name :
       {up, (outside / "evil").string(), std::string("/etc"), std::string("./mlp"),
        std::string("././mlp"), std::string("mlp/"), std::string(".."), std::string("")}) {
    const absl::Status s = repo->Load(name);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << name << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("invalid model name")) << name;
    EXPECT_THAT(std::string(s.message()), ::testing::Not(HasSubstr("model.onnx"))) << name;
    EXPECT_EQ(repo->Unload(name).code(), absl::StatusCode::kInvalidArgument) << name;
  }
  // Issue 12 case 3: aliases of one model load nothing; only the name itself does.
  EXPECT_TRUE(repo->Snapshot().empty());
  ASSERT_TRUE(repo->Load("mlp").ok());
  EXPECT_EQ(repo->Snapshot().size(), 1u);
  fs::remove_all(outside);
}

// Issue 12 case 8: invalid names leave no entry; unloaded models of neither the repository nor
// the config leave the index; those still in the repository stay listed as unloaded.
TEST_F(ModelRepositoryTest, IndexStaysBoundedByRepositoryAndConfig) {
  auto repo = Make("  load_all_models: false\n");
  for (int i = 0; i < 200; ++i) {
    const std::string name = std::string("junk\0", 5) + std::string(1000, 'x') + std::to_string(i);
    EXPECT_EQ(repo->Load(name).code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(repo->Load("valid_but_absent_" + std::to_string(i)).code(),
              absl::StatusCode::kNotFound);
  }
  EXPECT_TRUE(repo->Snapshot().empty());
  EXPECT_EQ(repo->Index().size(), 3u);  // broken, cnn, mlp: never loaded

  ASSERT_TRUE(repo->Load("cnn").ok());
  ASSERT_TRUE(repo->Load("mlp").ok());
  ASSERT_TRUE(repo->Unload("mlp").ok());
  fs::remove_all(dir_ / "cnn");  // removed from the repository while loaded: still listed
  std::vector<ModelRepository::IndexEntry> index = repo->Index();
  ASSERT_EQ(index.size(), 3u);
  EXPECT_EQ(index[1].name, "cnn");
  EXPECT_EQ(index[1].state, ModelState::kReady);
  EXPECT_EQ(index[2].name, "mlp");
  EXPECT_EQ(index[2].reason, "unloaded");
  ASSERT_TRUE(repo->Unload("cnn").ok());
  index = repo->Index();
  ASSERT_EQ(index.size(), 2u);
  EXPECT_EQ(index[0].name, "broken");
  EXPECT_EQ(index[1].name, "mlp");
  EXPECT_EQ(repo->Find("cnn"), nullptr);
  EXPECT_EQ(repo->Unload("cnn").code(), absl::StatusCode::kNotFound);
}

// Files loaded from a model's folder are regular files inside it after links (the folder itself,
// the operator's entry in the repository, may be a link: mlp is one).
TEST_F(ModelRepositoryTest, ModelFilesMustResolveInsideTheirFolder) {
  fs::create_directories(dir_ / "linked");
  fs::create_symlink(Runfile("tools/models/mlp/model.onnx"), dir_ / "linked" / "model.onnx");
  fs::create_directories(dir_ / "fifo_model");
  ASSERT_EQ(mkfifo((dir_ / "fifo_model" / "model.onnx").c_str(), 0600), 0);
  fs::create_directories(dir_ / "redirect");
  fs::create_symlink(Runfile("tools/models/mlp/model.onnx"), dir_ / "redirect" / "inner.onnx");
  std::ofstream(dir_ / "redirect" / "config.yaml") << "path: inner.onnx\n";
  fs::create_directories(dir_ / "foreign_config");
  fs::copy_file(Runfile("tools/models/cnn/model.onnx"), dir_ / "foreign_config" / "model.onnx");
  std::ofstream(dir_.parent_path() / "foreign.yaml") << "threads: 2\n";
  fs::create_symlink(dir_.parent_path() / "foreign.yaml", dir_ / "foreign_config" / "config.yaml");
  fs::create_directories(dir_ / "fifo");
  fs::copy_file(Runfile("tools/models/cnn/model.onnx"), dir_ / "fifo" / "model.onnx");
  ASSERT_EQ(mkfifo((dir_ / "fifo" / "config.yaml").c_str(), 0600), 0);
  auto repo = Make("  load_all_models: false\n");

  for (const char* name : {"redirect", "foreign_config"}) {
    const absl::Status s = repo->Load(name);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << name << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("resolves outside the model's folder"));
    EXPECT_EQ(repo->Find(name)->state(), ModelState::kUnavailable) << name;
  }
  const absl::Time start = absl::Now();
  const absl::Status fifo = repo->Load("fifo");  // must not block on the FIFO
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(fifo.code(), absl::StatusCode::kFailedPrecondition) << fifo;
  EXPECT_THAT(std::string(fifo.message()), HasSubstr("is not a regular file"));
  const absl::Status fifo_model = repo->Load("fifo_model");
  EXPECT_EQ(fifo_model.code(), absl::StatusCode::kFailedPrecondition) << fifo_model;
  EXPECT_THAT(std::string(fifo_model.message()), HasSubstr("model.onnx is not a regular file"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  // A linked folder is the operator's entry; a linked default model.onnx may point anywhere.
  EXPECT_TRUE(repo->Load("mlp").ok());
  EXPECT_TRUE(repo->Load("linked").ok());
}

// server.limits: max_loaded_models refuses the (N+1)th model; host_memory refuses a model that
// does not fit beside the loaded ones (a reload's new copy counts beside the old one), and the
// loaded one keeps serving.
TEST_F(ModelRepositoryTest, LimitsRefuseLoadsPastThemAndTheLoadedModelsServe) {
  {
    auto repo = Make("  load_all_models: false\n  limits: {max_loaded_models: 1}\n");
    ASSERT_TRUE(repo->Load("mlp").ok());
    const absl::Status s = repo->Load("cnn");
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("server.limits.max_loaded_models is 1 and 1 models are loaded (mlp)"));
    EXPECT_EQ(repo->Find("cnn"), nullptr);
    EXPECT_TRUE(repo->Load("mlp").ok()) << "a reload is not one more model";
    ASSERT_TRUE(repo->Unload("mlp").ok());
    EXPECT_TRUE(repo->Load("cnn").ok());
  }
  uint64_t mlp_bytes = 0;
  {
    auto repo = Make("  load_all_models: false\n  limits: {host_memory: unbounded}\n");
    ASSERT_TRUE(repo->Load("mlp").ok());
    for (const partition::DeviceReport& d :
         repo->Find("mlp")->session()->partition_report().devices) {
      mlp_bytes += d.accounted.total();
    }
  }
  ASSERT_GT(mlp_bytes, 0u);
  auto repo = Make(
      absl::StrCat("  load_all_models: false\n  limits: {host_memory: ", mlp_bytes + 16, "}\n"));
  ASSERT_TRUE(repo->Load("mlp").ok());
  const absl::Status s = repo->Load("cnn");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("on host devices (cpu:0: weights"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("server.limits.host_memory is"));
  EXPECT_EQ(repo->Find("cnn")->state(), ModelState::kUnavailable);
  const absl::Status reload = repo->Load("mlp");
  EXPECT_EQ(reload.code(), absl::StatusCode::kResourceExhausted) << "two copies do not fit";
  EXPECT_EQ(repo->Find("mlp")->state(), ModelState::kReady);
  EXPECT_TRUE(repo->Find("mlp")->Acquire().ok()) << "the loaded model keeps serving";
}

// ---- Triton's layout: config.pbtxt, version directories, version policies ----

class TritonRepositoryTest : public ModelRepositoryTest {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_THREAD__)
    // Under --config=tsan, protobuf's text parser (Debian's uninstrumented libprotobuf) crashes
    // in MapField::SyncRepeatedFieldWithMap when it fills config.pbtxt's `parameters` map of the
    // instrumented generated code: not understood yet. These tests run in the normal build; the
    // concurrency of the repository is still checked here by ModelRepositoryTest.
    GTEST_SKIP() << "config.pbtxt parsing crashes inside libprotobuf under ThreadSanitizer";
#endif
    ModelRepositoryTest::SetUp();
  }
  // <dir>/<name>/<v>/model.onnx for each of `versions`, a copy of tools/models/<model>.
  void AddVersions(const std::string& name, std::vector<int> versions,
                   const std::string& model = "mlp") {
    for (int v : versions) {
      const fs::path d = dir_ / name / std::to_string(v);
      fs::create_directories(d);
      fs::copy_file(Runfile("tools/models/" + model + "/model.onnx"), d / "model.onnx",
                    fs::copy_options::overwrite_existing);
    }
  }
  void WritePbtxt(const std::string& name, const std::string& text) {
    fs::create_directories(dir_ / name);
    std::ofstream(dir_ / name / "config.pbtxt") << text;
  }
  // An empty repository (SetUp's models out of the way).
  void MakeTriton() {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
};

TEST_F(TritonRepositoryTest, PolicyAllServesEveryVersionAndTheHighestByDefault) {
  MakeTriton();
  AddVersions("tm", {1, 2});
  WritePbtxt("tm",
             "name: \"tm\"\nplatform: \"onnxruntime_onnx\"\nversion_policy: { all: {} }\n"
             "optimization { cuda { graphs: true } }\n"
             "input [{ name: \"x\" data_type: TYPE_FP32 dims: [ 4, 64 ] }]\n"
             "parameters { key: \"note\" value { string_value: \"kept\" } }\n");
  auto repo = Make();
  EXPECT_EQ(repo->StartupModels(), (std::vector<std::string>{"tm"}));
  EXPECT_EQ(repo->LoadStartupModels(), 1);
  ASSERT_NE(repo->Find("tm"), nullptr);
  EXPECT_EQ(repo->Find("tm")->version(), "2");
  for (const char* v : {"1", "2"}) {
    absl::StatusOr<std::shared_ptr<LoadedModel>> m = repo->FindVersion("tm", v);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ((*m)->state(), ModelState::kReady) << v;
    EXPECT_EQ((*m)->config().path, absl::StrCat("tm/", v, "/model.onnx"));
    ModelStats* stats = nullptr;
    absl::StatusOr<LoadedModel::Ref> ref = repo->AcquireForInference("tm", v, &stats);
    ASSERT_TRUE(ref.ok()) << ref.status();
    EXPECT_EQ((*ref)->version(), v);
    EXPECT_EQ(stats, &(*ref)->stats());
    ASSERT_NE((*ref)->triton_config(), nullptr);
    EXPECT_EQ((*ref)->triton_config()->parameters().at("note").string_value(), "kept");
    EXPECT_EQ((*ref)->triton_config()->output_size(), 2);  // completed from the model
  }
  // Each version counts its own statistics.
  EXPECT_NE(&(*repo->FindVersion("tm", "1"))->stats(), &(*repo->FindVersion("tm", "2"))->stats());
  absl::StatusOr<std::shared_ptr<LoadedModel>> missing = repo->FindVersion("tm", "3");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("version(s) 1, 2"));
  ModelStats* stats = nullptr;
  EXPECT_EQ(repo->AcquireForInference("tm", "3", &stats).status().code(),
            absl::StatusCode::kNotFound);

  std::vector<ModelRepository::IndexEntry> index = repo->Index();
  ASSERT_EQ(index.size(), 2u);
  EXPECT_EQ(index[0].version, "1");
  EXPECT_EQ(index[1].version, "2");
  EXPECT_EQ(index[1].state, ModelState::kReady);

  ASSERT_TRUE(repo->Unload("tm").ok());
  for (const ModelRepository::IndexEntry& e : repo->Index()) {
    EXPECT_EQ(e.state, ModelState::kUnavailable) << e.version;
  }
}

TEST_F(TritonRepositoryTest, LatestPolicyFollowsNewVersionDirectories) {
  MakeTriton();
  AddVersions("tm", {1, 2});  // no config.pbtxt: latest 1, auto-complete
  auto repo = Make();
  EXPECT_EQ(repo->LoadStartupModels(), 1);
  EXPECT_EQ(repo->Snapshot().size(), 1u);
  EXPECT_EQ(repo->Find("tm")->version(), "2");
  const std::vector<std::string> before = repo->ModelFiles("tm");
  AddVersions("tm", {10});
  EXPECT_NE(repo->ModelFiles("tm"), before);  // what a reload detects
  ASSERT_TRUE(repo->Load("tm").ok());
  ASSERT_EQ(repo->Snapshot().size(), 1u);        // 2 is no longer selected: unloaded and dropped
  EXPECT_EQ(repo->Find("tm")->version(), "10");  // numbers, not strings, order versions
  EXPECT_FALSE(repo->FindVersion("tm", "2").ok());

  WritePbtxt("tm", "version_policy: { specific: { versions: [ 1, 2 ] } }\n");
  ASSERT_TRUE(repo->Load("tm").ok());
  std::vector<ModelRepository::IndexEntry> index = repo->Index();
  ASSERT_EQ(index.size(), 2u);
  EXPECT_EQ(index[0].version, "1");
  EXPECT_EQ(index[1].version, "2");
}

TEST_F(TritonRepositoryTest, AutoCompleteGivesDynamicBatchModelsTritonsMaxBatchSize) {
  MakeTriton();
  AddVersions("dyn", {1}, "mlp_dynamic");
  AddVersions("fixed", {1}, "mlp");
  auto repo = Make();
  EXPECT_EQ(repo->LoadStartupModels(), 2);
  ModelStats* stats = nullptr;
  absl::StatusOr<LoadedModel::Ref> dyn = repo->AcquireForInference("dyn", "", &stats);
  ASSERT_TRUE(dyn.ok()) << dyn.status();
  EXPECT_EQ((*dyn)->triton_config()->max_batch_size(), 4);
  EXPECT_TRUE((*dyn)->triton_config()->has_dynamic_batching());
  absl::StatusOr<LoadedModel::Ref> fixed = repo->AcquireForInference("fixed", "", &stats);
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_EQ((*fixed)->triton_config()->max_batch_size(), 0);
}

TEST_F(TritonRepositoryTest, BadConfigsRefuseTheModelClearly) {
  MakeTriton();
  AddVersions("syntax", {1});
  WritePbtxt("syntax", "name: \"syntax\"\nmax_batch_size: eight\n");
  AddVersions("named", {1});
  WritePbtxt("named", "name: \"other\"\n");
  AddVersions("sig", {1});
  WritePbtxt("sig", "input [{ name: \"z\" data_type: TYPE_FP32 dims: [ 1 ] }]\n");
  AddVersions("missing", {1});
  WritePbtxt("missing", "version_policy: { specific: { versions: [ 4 ] } }\n");
  AddVersions("pathed", {1});
  std::ofstream(dir_ / "pathed" / "config.yaml") << "path: other.onnx\n";
  fs::create_directories(dir_ / "nofile" / "1");
  auto repo = Make();
  EXPECT_EQ(repo->LoadStartupModels(), 0);
  const auto reason = [&](const std::string& name) {
    std::shared_ptr<LoadedModel> m = repo->Find(name);
    return m == nullptr ? std::string("(none)") : m->reason();
  };
  EXPECT_THAT(reason("syntax"), HasSubstr("syntax/config.pbtxt:2:"));
  EXPECT_THAT(reason("named"), HasSubstr("differs from the model's folder 'named'"));
  EXPECT_THAT(reason("sig"), HasSubstr("input 'z' is not in the model"));
  EXPECT_THAT(reason("missing"), HasSubstr("version 4"));
  EXPECT_THAT(reason("pathed"), HasSubstr("do not apply to a Triton model folder"));
  EXPECT_THAT(reason("nofile"), HasSubstr("model file"));
}

TEST_F(TritonRepositoryTest, ConfigYamlBesidePbtxtAddsInferdSettings) {
  MakeTriton();
  AddVersions("tm", {1});
  WritePbtxt("tm", "instance_group [{ count: 2 kind: KIND_CPU }]\n");
  std::ofstream(dir_ / "tm" / "config.yaml") << "threads: 2\nqueue_length: 5\n";
  auto repo = Make();
  EXPECT_EQ(repo->LoadStartupModels(), 1);
  const ModelConfig& c = repo->Find("tm")->config();
  EXPECT_EQ(c.threads, 2);
  EXPECT_EQ(c.queue_length, 5);
  EXPECT_EQ(c.max_concurrent_runs, 2);
  EXPECT_EQ(c.version, "1");
}

TEST_F(TritonRepositoryTest, GpuInstanceGroupFailsClearlyWithoutTheDevice) {
  MakeTriton();
  AddVersions("gpu", {1});
  WritePbtxt("gpu", "instance_group [{ kind: KIND_GPU gpus: [ 0 ] }]\n");
  auto repo = Make();
  absl::Status s = repo->Load("gpu");
  if (s.ok()) GTEST_SKIP() << "this build has cuda:0";
  EXPECT_THAT(std::string(s.message()), HasSubstr("cuda:0"));
}

TEST_F(TritonRepositoryTest, AllServingIsTritonsStrictReadiness) {
  MakeTriton();
  AddVersions("tm", {1, 2});
  WritePbtxt("tm", "version_policy: { all: {} }\n");
  auto repo = Make();
  EXPECT_TRUE(repo->AllServing());  // nothing tried yet
  EXPECT_EQ(repo->LoadStartupModels(), 1);
  EXPECT_TRUE(repo->AllServing());
  // A failed load (here: a new broken folder loaded explicitly) makes the server not ready.
  fs::create_directories(dir_ / "bad" / "1");
  std::ofstream(dir_ / "bad" / "1" / "model.onnx") << "not onnx";
  EXPECT_FALSE(repo->Load("bad").ok());
  std::string why;
  EXPECT_FALSE(repo->AllServing(&why));
  EXPECT_THAT(why, HasSubstr("model 'bad' version 1 is UNAVAILABLE"));
  // Unloaded on purpose: no longer expected to serve.
  ASSERT_TRUE(repo->Unload("bad").ok());
  ASSERT_TRUE(repo->Unload("tm").ok());
  EXPECT_TRUE(repo->AllServing(&why)) << why;
}

TEST_F(TritonRepositoryTest, WarmupRunsBeforeReadyAndABadSampleFailsTheLoad) {
  MakeTriton();
  AddVersions("warm", {1});
  WritePbtxt("warm",
             "model_warmup [{ name: \"zeros\" count: 2 inputs { key: \"x\" value { data_type: "
             "TYPE_FP32 dims: [ 4, 64 ] zero_data: true } } },\n"
             "  { name: \"noise\" inputs { key: \"x\" value { data_type: TYPE_FP32 dims: [ 4, "
             "64 ] random_data: true } } }]\n");
  AddVersions("cold", {1});
  WritePbtxt("cold",
             "model_warmup [{ name: \"w\" inputs { key: \"x\" value { data_type: TYPE_FP32 "
             "dims: [ 4, 65 ] zero_data: true } } }]\n");
  AddVersions("huge", {1});
  WritePbtxt("huge",
             "model_warmup [{ name: \"big\" inputs { key: \"x\" value { data_type: TYPE_FP32 "
             "dims: [ 100000, 100000 ] zero_data: true } } }]\n");
  auto repo = Make();
  EXPECT_EQ(repo->LoadStartupModels(), 1);
  std::shared_ptr<LoadedModel> warm = repo->Find("warm");
  ASSERT_EQ(warm->state(), ModelState::kReady) << warm->reason();
  EXPECT_EQ(warm->session()->stats().runs, 3u);  // 2 + 1 warmup runs, before any request
  EXPECT_THAT(repo->Find("cold")->reason(), HasSubstr("model_warmup 'w'"));
  EXPECT_THAT(repo->Find("huge")->reason(), HasSubstr("at most 256 MiB"));
}

TEST_F(ModelRepositoryTest, IndexOfAModelNotLoadedShowsItsConfigsVersion) {
  auto repo = Make("", "  - name: mlp\n    version: \"3\"\n");
  std::map<std::string, std::string> versions;
  for (const ModelRepository::IndexEntry& e : repo->Index()) versions[e.name] += e.version;
  EXPECT_EQ(versions["mlp"], "3");  // one entry, the config's version, not the folder's "1"
  EXPECT_EQ(versions["cnn"], "1");
}
}  // namespace
}  // namespace inferd::server
