// AdminService in process, on a ModelRepository with the generated mlp (on cpu:0) and the same
// model as "split", partitioned over cpu:1 (40 KiB budget) and cpu:0: every call, its filters and
// errors (calling the Do* methods, no gRPC), then the bearer token over a real gRPC listener.
#include "server/admin_service.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "engine/testing/runfiles.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd::server {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class AdminServiceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    registry_ = new engine::KernelRegistry();
    ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(*registry_).ok());
    const fs::path dir = fs::path(engine::testing::TempDir()) / "admin_service_test";
    fs::remove_all(dir);
    fs::create_directories(dir / "broken");
    fs::create_directory_symlink(engine::testing::Runfile("tools/models/mlp"), dir / "mlp");
    fs::create_directory_symlink(engine::testing::Runfile("tools/models/mlp"), dir / "idle");
    fs::create_directory_symlink(engine::testing::Runfile("tools/models/mlp"), dir / "split");
    std::ofstream(dir / "broken" / "model.onnx") << "not a model";
    auto config =
        ParseConfig("server:\n  model_repository: " + dir.string() +
                        "\nmodels:\n  - name: mlp\n    version: \"3\"\n"
                        "  - name: split\n    partition: {devices: {cpu:1: 40KiB, cpu:0: ~}}\n",
                    "test.yaml");
    ASSERT_TRUE(config.ok()) << config.status();
    repo_ = new ModelRepository(*config, *registry_);
    ASSERT_TRUE(repo_->Load("mlp").ok());
    ASSERT_TRUE(repo_->Load("split").ok());
    ASSERT_FALSE(repo_->Load("broken").ok());
    service_ = new AdminService(*repo_, AdminAuth(""));
  }
  static void TearDownTestSuite() {
    delete service_;
    delete repo_;
    delete registry_;
  }

  static absl::Span<const engine::DeviceArenas> Devices(const std::string& model) {
    return repo_->Find(model)->session()->devices();
  }
  static memory::Arena& Cpu0Io() { return *Devices("mlp")[0].io; }
  // Allocates and frees `n` buffers of `bytes`: they stay retained (unbounded cap).
  static void Churn(memory::Arena& a, int n, size_t bytes) {
    std::vector<memory::AllocationHandle> hs;
    for (int i = 0; i < n; ++i) hs.push_back(*a.Allocate(bytes));
  }

  static engine::KernelRegistry* registry_;
  static ModelRepository* repo_;
  static AdminService* service_;
};
engine::KernelRegistry* AdminServiceTest::registry_ = nullptr;
ModelRepository* AdminServiceTest::repo_ = nullptr;
AdminService* AdminServiceTest::service_ = nullptr;

TEST_F(AdminServiceTest, MemoryStatsHasEveryArenaInOrderWithItsCounters) {
  Churn(Cpu0Io(), 2, 100 << 10);
  adminpb::GetMemoryStatsRequest req;
  req.set_model("mlp");
  adminpb::GetMemoryStatsResponse resp;
  ASSERT_TRUE(service_->DoGetMemoryStats(req, &resp).ok());
  ASSERT_EQ(resp.arenas_size(), 2);
  const std::vector<std::string> expected = {"mlp cpu:0 execution", "mlp cpu:0 io"};
  for (int i = 0; i < 2; ++i) {
    const adminpb::ArenaMemoryStats& e = resp.arenas(i);
    EXPECT_EQ(e.model() + " " + e.device() + " " + e.arena(), expected[i]);
    EXPECT_TRUE(e.unbounded());
    EXPECT_EQ(e.retention_cap_bytes(), 0u);
  }
  const adminpb::ArenaMemoryStats& io = resp.arenas(1);
  const memory::ArenaStats s = Cpu0Io().Stats();
  EXPECT_EQ(io.retained_bytes(), s.retained_bytes);
  EXPECT_GE(io.retained_bytes(), 200u << 10);
  EXPECT_EQ(io.retained_buffers(), s.retained_buffers);
  EXPECT_EQ(io.system_allocations(), s.system_allocations);
  EXPECT_EQ(io.allocations(), s.allocations);
  EXPECT_EQ(io.peak_live_bytes(), s.peak_live_bytes);
  EXPECT_EQ(io.live_bytes(), s.live_bytes);

  // No filter: every arena of every loaded model, by model, device, arena.
  resp.Clear();
  ASSERT_TRUE(service_->DoGetMemoryStats({}, &resp).ok());
  std::vector<std::string> keys;
  for (const auto& e : resp.arenas())
    keys.push_back(e.model() + " " + e.device() + " " + e.arena());
  EXPECT_EQ(keys, (std::vector<std::string>{"mlp cpu:0 execution", "mlp cpu:0 io",
                                            "split cpu:0 execution", "split cpu:0 io",
                                            "split cpu:1 execution", "split cpu:1 io"}));
}

TEST_F(AdminServiceTest, FiltersSelectModelDeviceAndArena) {
  adminpb::GetMemoryStatsRequest req;
  req.set_model("mlp");
  req.set_device("cpu");  // cpu:0
  adminpb::GetMemoryStatsResponse resp;
  ASSERT_TRUE(service_->DoGetMemoryStats(req, &resp).ok());
  ASSERT_EQ(resp.arenas_size(), 2);
  EXPECT_EQ(resp.arenas(0).device(), "cpu:0");
  EXPECT_EQ(resp.arenas(1).arena(), "io");

  req.Clear();
  req.set_arena("io");
  resp.Clear();
  ASSERT_TRUE(service_->DoGetMemoryStats(req, &resp).ok());
  ASSERT_EQ(resp.arenas_size(), 3);
  for (const auto& e : resp.arenas()) EXPECT_EQ(e.arena(), "io");
}

TEST_F(AdminServiceTest, ErrorsListWhatExists) {
  auto stats = [](const std::string& model, const std::string& device, const std::string& arena) {
    adminpb::GetMemoryStatsRequest req;
    req.set_model(model);
    req.set_device(device);
    req.set_arena(arena);
    adminpb::GetMemoryStatsResponse resp;
    return service_->DoGetMemoryStats(req, &resp);
  };
  absl::Status s = stats("nope", "", "");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("broken, idle, mlp"));

  s = stats("broken", "", "");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("loaded models: mlp"));

  s = stats("idle", "", "");  // in the repository directory, never loaded
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'idle' is not loaded"));

  s = stats("mlp", "cuda:0", "");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("model 'mlp'; devices: cpu:0"));
  s = stats("", "cuda:0", "");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("devices: cpu:0, cpu:1"));
  s = stats("", "cpu:7", "");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);

  s = stats("mlp", "gpu0", "");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  s = stats("mlp", "", "heap");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'execution' or 'io'"));
}

TEST_F(AdminServiceTest, SetRetentionCapEvictsAtOnce) {
  memory::Arena& io = Cpu0Io();
  io.Trim();
  Churn(io, 3, 64 << 10);
  const memory::ArenaStats before = io.Stats();
  ASSERT_EQ(before.retained_buffers, 3u);

  adminpb::SetRetentionCapRequest req;
  req.set_model("mlp");
  req.set_device("cpu:0");
  req.set_arena("io");
  req.set_bytes(before.retained_bytes / 3 + 1);  // room for one buffer
  adminpb::SetRetentionCapResponse resp;
  ASSERT_TRUE(service_->DoSetRetentionCap(req, &resp).ok());
  ASSERT_EQ(resp.applied_size(), 1);
  const adminpb::AppliedRetentionCap& a = resp.applied(0);
  EXPECT_EQ(a.retention_cap_bytes(), before.retained_bytes / 3 + 1);
  EXPECT_FALSE(a.unbounded());
  EXPECT_EQ(a.evicted_buffers(), 2u);
  EXPECT_EQ(a.evicted_bytes(), before.retained_bytes / 3 * 2);
  EXPECT_EQ(a.retained_bytes(), before.retained_bytes / 3);
  EXPECT_EQ(resp.total_evicted_bytes(), a.evicted_bytes());
  EXPECT_EQ(io.retention_cap(), before.retained_bytes / 3 + 1);

  adminpb::GetMemoryStatsRequest sreq;
  sreq.set_device("cpu:0");
  sreq.set_arena("io");
  adminpb::GetMemoryStatsResponse sresp;
  ASSERT_TRUE(service_->DoGetMemoryStats(sreq, &sresp).ok());
  EXPECT_FALSE(sresp.arenas(0).unbounded());
  EXPECT_EQ(sresp.arenas(0).evictions(), before.evictions + 2);

  req.set_unbounded(true);
  resp.Clear();
  ASSERT_TRUE(service_->DoSetRetentionCap(req, &resp).ok());
  EXPECT_TRUE(resp.applied(0).unbounded());
  EXPECT_EQ(resp.applied(0).evicted_bytes(), 0u);
  EXPECT_EQ(io.retention_cap(), memory::Arena::kUnbounded);
}

TEST_F(AdminServiceTest, TrimReleasesRetainedBytes) {
  Churn(Cpu0Io(), 2, 32 << 10);
  Churn(*Devices("split")[0].execution, 1, 8 << 10);
  uint64_t retained = 0;
  int arenas = 0;
  for (const char* model : {"mlp", "split"}) {
    for (const engine::DeviceArenas& d : Devices(model)) {
      retained += d.execution->Stats().retained_bytes + d.io->Stats().retained_bytes;
      arenas += 2;
    }
  }
  ASSERT_GT(retained, 0u);
  adminpb::TrimResponse resp;
  ASSERT_TRUE(service_->DoTrim({}, &resp).ok());
  EXPECT_EQ(resp.arenas_size(), arenas);
  EXPECT_EQ(resp.total_released_bytes(), retained);
  uint64_t sum = 0, buffers = 0;
  for (const auto& e : resp.arenas()) {
    sum += e.released_bytes();
    buffers += e.released_buffers();
  }
  EXPECT_EQ(sum, retained);
  EXPECT_GE(buffers, 3u);
  EXPECT_GT(resp.process_resident_bytes_before(), 0u);
  EXPECT_GT(resp.process_resident_bytes_after(), 0u);
  EXPECT_EQ(Cpu0Io().Stats().retained_bytes, 0u);
  EXPECT_GE(Cpu0Io().Stats().trims, 1u);
}

TEST_F(AdminServiceTest, ResetPeakSetsThePeakToLiveBytes) {
  memory::Arena& io = Cpu0Io();
  Churn(io, 1, 1 << 20);
  adminpb::ResetPeakRequest req;
  req.set_model("mlp");
  req.set_device("cpu:0");
  req.set_arena("io");
  adminpb::ResetPeakResponse resp;
  ASSERT_TRUE(service_->DoResetPeak(req, &resp).ok());
  ASSERT_EQ(resp.arenas_size(), 1);
  EXPECT_GE(resp.arenas(0).previous_peak_live_bytes(), 1u << 20);
  EXPECT_EQ(resp.arenas(0).peak_live_bytes(), io.Stats().live_bytes);
}

TEST_F(AdminServiceTest, PartitionReport) {
  adminpb::GetPartitionReportRequest req;
  req.set_model("mlp");
  adminpb::GetPartitionReportResponse resp;
  ASSERT_TRUE(service_->DoGetPartitionReport(req, &resp).ok());
  EXPECT_EQ(resp.model(), "mlp");
  EXPECT_EQ(resp.version(), "3");
  ASSERT_EQ(resp.devices_size(), 1);
  EXPECT_EQ(resp.devices(0).device(), "cpu:0");
  EXPECT_EQ(resp.devices(0).budget_bytes(), 0u);
  EXPECT_EQ(resp.devices(0).headroom_bytes(), 0);
  EXPECT_GT(resp.devices(0).nodes(), 0u);
  EXPECT_GT(resp.devices(0).weight_bytes(), 0u);
  const partition::PlanReport& r = repo_->Find("mlp")->session()->partition_report();
  EXPECT_EQ(resp.text(), r.ToString());
  EXPECT_EQ(resp.devices(0).weight_bytes(), r.devices[0].accounted.weights);
  EXPECT_EQ(resp.devices(0).activation_peak_bytes(), r.devices[0].activation_peak_bytes);
  EXPECT_EQ(resp.layers_size(), 0);  // mlp has no named layers

  req.set_version("3");
  EXPECT_TRUE(service_->DoGetPartitionReport(req, &resp).ok());
  req.set_version("4");
  EXPECT_EQ(service_->DoGetPartitionReport(req, &resp).code(), absl::StatusCode::kNotFound);
  req.Clear();
  EXPECT_EQ(service_->DoGetPartitionReport(req, &resp).code(), absl::StatusCode::kInvalidArgument);
  req.set_model("broken");
  EXPECT_EQ(service_->DoGetPartitionReport(req, &resp).code(),
            absl::StatusCode::kFailedPrecondition);
}

// Memory freed to the C heap in the middle of it (what gRPC's large receive buffers leave) stays
// resident: free() only gives back the heap's top. Trim returns those pages too (malloc_trim),
// whatever arenas it selects: here 64 MiB freed in 64 KiB chunks, pinned by one live chunk
// after them, and a Trim of one small arena.
TEST_F(AdminServiceTest, TrimReturnsTheHeapsFreePages) {
  constexpr size_t kChunk = 64 << 10, kChunks = 1024;  // below glibc's mmap threshold
  std::vector<char*> chunks;
  for (size_t i = 0; i <= kChunks; ++i) {
    chunks.push_back(static_cast<char*>(std::malloc(kChunk)));
    std::memset(chunks.back(), 1, kChunk);  // resident
  }
  for (size_t i = 0; i < kChunks; ++i) std::free(chunks[i]);  // chunks[kChunks] pins the top
  adminpb::TrimRequest req;
  req.set_model("mlp");
  req.set_arena("execution");
  adminpb::TrimResponse resp;
  ASSERT_TRUE(service_->DoTrim(req, &resp).ok());
  std::free(chunks[kChunks]);
  const uint64_t before = resp.process_resident_bytes_before();
  const uint64_t after = resp.process_resident_bytes_after();
  ASSERT_GT(after, 0u);
  EXPECT_GE(before, after + kChunk * kChunks / 2)
      << "resident " << before << " -> " << after << " bytes; arenas released "
      << resp.total_released_bytes();
}

TEST_F(AdminServiceTest, SplitModelReportsEveryDevice) {
  adminpb::GetPartitionReportRequest req;
  req.set_model("split");
  adminpb::GetPartitionReportResponse resp;
  ASSERT_TRUE(service_->DoGetPartitionReport(req, &resp).ok());
  ASSERT_EQ(resp.devices_size(), 2);
  EXPECT_EQ(resp.devices(0).device(), "cpu:0");  // cuda:N, then cpu:N by N
  EXPECT_EQ(resp.devices(1).device(), "cpu:1");
  EXPECT_EQ(resp.devices(1).budget_bytes(), 40u << 10);
  EXPECT_GT(resp.devices(1).nodes(), 0u);
  const partition::PlanReport& r = repo_->Find("split")->session()->partition_report();
  EXPECT_EQ(resp.devices(1).headroom_bytes(), *r.FindDevice("cpu:1")->headroom_bytes());
  // headroom = budget - accounted, accounted = weights + activations + workspace.
  const adminpb::DevicePartition& d1 = resp.devices(1);
  EXPECT_EQ(d1.accounted_bytes(), d1.weight_bytes() + d1.activation_bytes() + d1.workspace_bytes());
  EXPECT_EQ(d1.headroom_bytes(), static_cast<int64_t>(d1.budget_bytes() - d1.accounted_bytes()));
  EXPECT_EQ(d1.activation_bytes(), r.FindDevice("cpu:1")->accounted.activations);
  // Measured after load from the engine's static plan: never above what was accounted.
  ASSERT_TRUE(r.FindDevice("cpu:1")->measured_bytes.has_value());
  EXPECT_EQ(d1.measured_bytes(), *r.FindDevice("cpu:1")->measured_bytes);
  EXPECT_GT(d1.measured_bytes(), d1.weight_bytes());
  EXPECT_LE(d1.measured_bytes(), d1.accounted_bytes());
  EXPECT_EQ(d1.activation_sum_bytes(), r.FindDevice("cpu:1")->activation_sum_bytes);

  adminpb::GetMemoryStatsRequest sreq;
  sreq.set_model("split");
  sreq.set_device("cpu:1");
  adminpb::GetMemoryStatsResponse sresp;
  ASSERT_TRUE(service_->DoGetMemoryStats(sreq, &sresp).ok());
  ASSERT_EQ(sresp.arenas_size(), 2);
  EXPECT_EQ(sresp.arenas(0).device(), "cpu:1");
}

TEST_F(AdminServiceTest, BearerTokenOverGrpc) {
  AdminService service(*repo_, AdminAuth("tok-123"));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto stub = adminpb::Admin::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  auto call = [&](const char* authorization) {
    grpc::ClientContext ctx;
    if (authorization != nullptr) ctx.AddMetadata("authorization", authorization);
    adminpb::GetMemoryStatsResponse resp;
    return stub->GetMemoryStats(&ctx, {}, &resp);
  };
  EXPECT_EQ(call(nullptr).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(call("Bearer tok-12").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(call("Basic dG9rLTEyMw==").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(call("Bearer tok-123").ok());
  // Errors come after authorization: an unauthenticated caller learns nothing about models.
  grpc::ClientContext ctx;
  adminpb::TrimRequest trim;
  trim.set_model("nope");
  adminpb::TrimResponse trim_resp;
  EXPECT_EQ(stub->Trim(&ctx, trim, &trim_resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  server->Shutdown();
}

TEST(AdminServiceEmptyTest, NothingLoadedIsAnEmptySelection) {
  engine::KernelRegistry registry;
  auto config = ParseConfig("server:\n  model_repository: /nonexistent\n", "t.yaml");
  ASSERT_TRUE(config.ok());
  ModelRepository repo(*config, registry);
  AdminService service(repo, AdminAuth(""));
  adminpb::GetMemoryStatsResponse resp;
  EXPECT_TRUE(service.DoGetMemoryStats({}, &resp).ok());
  EXPECT_EQ(resp.arenas_size(), 0);
  adminpb::TrimResponse trim;
  EXPECT_TRUE(service.DoTrim({}, &trim).ok());
  EXPECT_EQ(trim.total_released_bytes(), 0u);
}

}  // namespace
}  // namespace inferd::server
