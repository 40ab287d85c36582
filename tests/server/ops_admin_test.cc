// End to end, the admin API of the real inferd (inferd.admin.v1.Admin on its own port): every
// RPC and its errors. One inferd serves the suite: mlp and cnn (cpu:0), transformer_32 as "t32"
// (named layers; partitioned: layers 0-1 on cpu:1 with a 256 KiB budget), and a broken model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/server/infer_client.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

namespace adminpb = ::inferd::admin::v1;
using ::testing::HasSubstr;

class OpsAdminTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    InferdProcess::Options o;
    o.models = {{"mlp", "tools/models/mlp"},
                {"cnn", "tools/models/cnn"},
                {"t32", "tools/models/transformer_32"}};
    o.files = {{"broken/model.onnx", "not an onnx file"}};
    o.server_yaml = "  model_control: explicit\n";
    o.models_yaml =
        "  - name: mlp\n    version: \"2\"\n"
        "  - name: t32\n"
        "    partition: {devices: {cpu:1: 256KiB, cpu:0: ~}, name_rules: "
        "\"cpu:1(layers.[0-1]/)\"}\n";
    auto p = InferdProcess::Start("admin", o);
    ASSERT_TRUE(p.ok()) << p.status();
    inferd_ = p->release();
    mlp_ = new engine::TestDataSet(LoadDataSet("tools/models/mlp"));
  }
  static void TearDownTestSuite() {
    delete inferd_;
    delete mlp_;
  }
  void SetUp() override {
    ASSERT_NE(inferd_, nullptr);
    admin_ = inferd_->AdminStub();
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "inferd log:\n" << inferd_->Log();
  }

  void InferMlp(int times = 1) {
    auto stub = inferd_->Stub();
    for (int i = 0; i < times; ++i) {
      grpc::ClientContext ctx;
      inference::ModelInferResponse resp;
      grpc::Status s = stub->ModelInfer(&ctx, RawRequest("mlp", *mlp_), &resp);
      ASSERT_TRUE(s.ok()) << s.error_message();
      ASSERT_TRUE(CheckOutputs(resp, *mlp_).ok());
    }
    // gRPC may drop the last output slice (returning its lease) just after the client has the
    // response: wait until the IO arenas hold nothing live.
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    for (;;) {
      adminpb::GetMemoryStatsRequest req;
      req.set_model("mlp");
      req.set_arena("io");
      adminpb::GetMemoryStatsResponse resp;
      ASSERT_TRUE(Stats(req, &resp).ok());
      uint64_t live = 0;
      for (const auto& e : resp.arenas()) live += e.live_bytes() + e.outstanding_leases();
      if (live == 0) break;
      ASSERT_LT(absl::Now(), deadline) << "mlp's IO arenas still hold live buffers";
      absl::SleepFor(absl::Milliseconds(5));
    }
  }

  grpc::Status Stats(const adminpb::GetMemoryStatsRequest& req,
                     adminpb::GetMemoryStatsResponse* resp) {
    grpc::ClientContext ctx;
    return admin_->GetMemoryStats(&ctx, req, resp);
  }
  adminpb::ArenaMemoryStats One(const std::string& model, const std::string& device,
                                const std::string& arena) {
    adminpb::GetMemoryStatsRequest req;
    req.set_model(model);
    req.set_device(device);
    req.set_arena(arena);
    adminpb::GetMemoryStatsResponse resp;
    grpc::Status s = Stats(req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.arenas_size(), 1);
    return resp.arenas_size() > 0 ? resp.arenas(0) : adminpb::ArenaMemoryStats();
  }

  static InferdProcess* inferd_;
  static engine::TestDataSet* mlp_;
  std::unique_ptr<adminpb::Admin::Stub> admin_;
};
InferdProcess* OpsAdminTest::inferd_ = nullptr;
engine::TestDataSet* OpsAdminTest::mlp_ = nullptr;

TEST_F(OpsAdminTest, GetMemoryStatsListsEveryLoadedArena) {
  InferMlp();
  adminpb::GetMemoryStatsResponse resp;
  ASSERT_TRUE(Stats({}, &resp).ok());
  std::vector<std::string> keys;
  for (const auto& e : resp.arenas())
    keys.push_back(e.model() + "/" + e.device() + "/" + e.arena());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"cnn/cpu:0/execution", "cnn/cpu:0/io", "mlp/cpu:0/execution",
                                      "mlp/cpu:0/io", "t32/cpu:0/execution", "t32/cpu:0/io",
                                      "t32/cpu:1/execution", "t32/cpu:1/io"}));

  // The mlp's outputs were made in cpu:0's IO arena, sent, and returned to its free list.
  const adminpb::ArenaMemoryStats io = One("mlp", "cpu:0", "io");
  EXPECT_GT(io.system_allocations(), 0u);
  EXPECT_GT(io.allocations(), 0u);
  EXPECT_GT(io.peak_live_bytes(), 0u);
  EXPECT_TRUE(io.unbounded());
  EXPECT_EQ(io.outstanding_leases(), 0u);
  EXPECT_EQ(io.live_bytes() + io.retained_bytes() > 0, true);
}

TEST_F(OpsAdminTest, GetMemoryStatsErrors) {
  auto code = [&](const std::string& model, const std::string& device, const std::string& arena,
                  std::string* message) {
    adminpb::GetMemoryStatsRequest req;
    req.set_model(model);
    req.set_device(device);
    req.set_arena(arena);
    adminpb::GetMemoryStatsResponse resp;
    grpc::Status s = Stats(req, &resp);
    *message = s.error_message();
    return s.error_code();
  };
  std::string m;
  EXPECT_EQ(code("nope", "", "", &m), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(m, HasSubstr("broken, cnn, mlp, t32"));
  EXPECT_EQ(code("broken", "", "", &m), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(m, HasSubstr("UNAVAILABLE"));
  EXPECT_EQ(code("mlp", "cuda:0", "", &m), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(m, HasSubstr("devices: cpu:0"));
  EXPECT_EQ(code("cnn", "cpu:1", "", &m), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(code("", "cpu:9", "", &m), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(code("", "tpu:0", "", &m), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code("", "", "scratch", &m), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(m, HasSubstr("'execution' or 'io'"));
}

TEST_F(OpsAdminTest, SetRetentionCapEvictsAndReportsWhatItApplied) {
  InferMlp(2);
  const adminpb::ArenaMemoryStats before = One("mlp", "cpu:0", "io");
  ASSERT_GT(before.retained_bytes(), 0u);

  adminpb::SetRetentionCapRequest req;
  req.set_model("mlp");
  req.set_device("cpu:0");
  req.set_arena("io");
  req.set_bytes(0);
  adminpb::SetRetentionCapResponse resp;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(admin_->SetRetentionCap(&ctx, req, &resp).ok());
  }
  ASSERT_EQ(resp.applied_size(), 1);
  EXPECT_EQ(resp.applied(0).retention_cap_bytes(), 0u);
  EXPECT_FALSE(resp.applied(0).unbounded());
  EXPECT_EQ(resp.applied(0).evicted_bytes(), before.retained_bytes());
  EXPECT_EQ(resp.applied(0).evicted_buffers(), before.retained_buffers());
  EXPECT_EQ(resp.applied(0).retained_bytes(), 0u);
  EXPECT_EQ(resp.total_evicted_bytes(), before.retained_bytes());

  // Cap 0: every buffer of the next request goes straight back to the system.
  InferMlp();
  const adminpb::ArenaMemoryStats capped = One("mlp", "cpu:0", "io");
  EXPECT_EQ(capped.retained_bytes(), 0u);
  EXPECT_GT(capped.evictions(), before.evictions());
  EXPECT_FALSE(capped.unbounded());

  req.set_unbounded(true);
  grpc::ClientContext ctx;
  ASSERT_TRUE(admin_->SetRetentionCap(&ctx, req, &resp).ok());
  EXPECT_TRUE(resp.applied(0).unbounded());
  EXPECT_TRUE(One("mlp", "cpu:0", "io").unbounded());

  // Errors as for the other calls.
  req.set_model("nope");
  grpc::ClientContext bad;
  EXPECT_EQ(admin_->SetRetentionCap(&bad, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(OpsAdminTest, TrimReleasesPerArenaAndInTotal) {
  InferMlp(2);
  adminpb::GetMemoryStatsResponse stats;
  ASSERT_TRUE(Stats({}, &stats).ok());
  uint64_t retained = 0;
  for (const auto& e : stats.arenas()) retained += e.retained_bytes();
  ASSERT_GT(retained, 0u);

  adminpb::TrimResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(admin_->Trim(&ctx, adminpb::TrimRequest(), &resp).ok());
  EXPECT_EQ(resp.arenas_size(), stats.arenas_size());
  EXPECT_EQ(resp.total_released_bytes(), retained);
  uint64_t sum = 0;
  for (const auto& e : resp.arenas()) sum += e.released_bytes();
  EXPECT_EQ(sum, retained);
  EXPECT_GT(resp.process_resident_bytes_before(), 0u);  // the heap part: admin_service_test
  EXPECT_GT(resp.process_resident_bytes_after(), 0u);
  const adminpb::ArenaMemoryStats io = One("mlp", "cpu:0", "io");
  EXPECT_EQ(io.retained_bytes(), 0u);
  EXPECT_GE(io.trims(), 1u);
  EXPECT_GE(io.trimmed_bytes(), 1u);

  adminpb::TrimRequest filtered;
  filtered.set_model("cnn");
  filtered.set_arena("execution");
  grpc::ClientContext ctx2;
  ASSERT_TRUE(admin_->Trim(&ctx2, filtered, &resp).ok());
  ASSERT_EQ(resp.arenas_size(), 1);
  EXPECT_EQ(resp.arenas(0).model(), "cnn");
  EXPECT_EQ(resp.arenas(0).arena(), "execution");
  filtered.set_device("cuda:1");
  grpc::ClientContext ctx3;
  EXPECT_EQ(admin_->Trim(&ctx3, filtered, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(OpsAdminTest, ResetPeak) {
  InferMlp();
  adminpb::ResetPeakRequest req;
  req.set_model("mlp");
  adminpb::ResetPeakResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(admin_->ResetPeak(&ctx, req, &resp).ok());
  ASSERT_EQ(resp.arenas_size(), 2);
  bool some_peak = false;
  for (const auto& e : resp.arenas()) {
    EXPECT_LE(e.peak_live_bytes(), e.previous_peak_live_bytes());
    some_peak |= e.previous_peak_live_bytes() > 0;
  }
  EXPECT_TRUE(some_peak);
  EXPECT_EQ(One("mlp", "cpu:0", "io").peak_live_bytes(), 0u);  // nothing live between requests

  req.set_arena("heap");
  grpc::ClientContext bad;
  EXPECT_EQ(admin_->ResetPeak(&bad, req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(OpsAdminTest, GetPartitionReport) {
  adminpb::GetPartitionReportRequest req;
  req.set_model("t32");
  adminpb::GetPartitionReportResponse resp;
  {
    grpc::ClientContext ctx;
    grpc::Status s = admin_->GetPartitionReport(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_EQ(resp.model(), "t32");
  EXPECT_EQ(resp.version(), "1");
  ASSERT_GE(resp.devices_size(), 1);
  EXPECT_EQ(resp.devices(0).device(), "cpu:0");
  EXPECT_THAT(resp.text(), HasSubstr("partition plan: "));
  EXPECT_THAT(resp.text(), HasSubstr("layers: 32"));
  // One entry per (layer, device); together they hold every node.
  bool l5_on_cpu0 = false;
  uint64_t nodes = 0, device_nodes = 0;
  for (const auto& l : resp.layers()) {
    l5_on_cpu0 |= l.layer() == "layers.5" && l.device() == "cpu:0";
    nodes += l.nodes();
    EXPECT_GT(l.bytes(), 0u) << l.layer();
  }
  for (const auto& d : resp.devices()) device_nodes += d.nodes();
  EXPECT_TRUE(l5_on_cpu0);
  EXPECT_EQ(nodes, device_nodes);

  auto code = [&](const std::string& model, const std::string& version) {
    adminpb::GetPartitionReportRequest r;
    r.set_model(model);
    r.set_version(version);
    grpc::ClientContext ctx;
    return admin_->GetPartitionReport(&ctx, r, &resp).error_code();
  };
  EXPECT_EQ(code("mlp", "2"), grpc::StatusCode::OK);
  EXPECT_EQ(resp.layers_size(), 0);  // no named layers
  EXPECT_EQ(code("mlp", "1"), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(code("", ""), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code("nope", ""), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(code("broken", ""), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(OpsAdminTest, PartitionedModelReportsBothDevices) {
  adminpb::GetPartitionReportRequest req;
  req.set_model("t32");
  adminpb::GetPartitionReportResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(admin_->GetPartitionReport(&ctx, req, &resp).ok());
  ASSERT_EQ(resp.devices_size(), 2);
  EXPECT_EQ(resp.devices(1).device(), "cpu:1");
  EXPECT_EQ(resp.devices(1).budget_bytes(), 256u << 10);
  EXPECT_GT(resp.devices(1).nodes(), 0u);
  EXPECT_GT(resp.devices(1).headroom_bytes(), 0);
  EXPECT_THAT(resp.text(), HasSubstr("partition plan: name rules"));
  bool l0_on_cpu1 = false;
  for (const auto& l : resp.layers())
    l0_on_cpu1 |= l.layer() == "layers.0" && l.device() == "cpu:1";
  EXPECT_TRUE(l0_on_cpu1);
  EXPECT_EQ(One("t32", "cpu:1", "io").device(), "cpu:1");
}

// Last: unloads cnn.
TEST_F(OpsAdminTest, ZUnloadedModelIsFailedPrecondition) {
  auto stub = inferd_->Stub();
  {
    grpc::ClientContext ctx;
    inference::RepositoryModelUnloadRequest req;
    req.set_model_name("cnn");
    inference::RepositoryModelUnloadResponse resp;
    ASSERT_TRUE(stub->RepositoryModelUnload(&ctx, req, &resp).ok());
  }
  adminpb::GetMemoryStatsRequest req;
  req.set_model("cnn");
  adminpb::GetMemoryStatsResponse resp;
  grpc::Status s = Stats(req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("unloaded"));
  // The unfiltered view simply leaves it out.
  ASSERT_TRUE(Stats({}, &resp).ok());
  for (const auto& e : resp.arenas()) EXPECT_NE(e.model(), "cnn");
}

}  // namespace
}  // namespace inferd::testing
