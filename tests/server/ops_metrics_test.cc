// End to end, the Prometheus endpoint of the real inferd: the scraped exposition passes
// `promtool check metrics`, and its values follow inference, failed requests, an admin Trim and
// an admin SetRetentionCap (they are read from the arenas at scrape time).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "engine/testing/runfiles.h"
#include "tests/server/infer_client.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

namespace adminpb = ::inferd::admin::v1;
using ::testing::HasSubstr;

constexpr char kIo0[] = R"({model="mlp",device="cpu:0",arena="io"})";

class OpsMetricsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    InferdProcess::Options o;
    o.models = {{"mlp", "tools/models/mlp"}};
    o.models_yaml = "  - name: mlp\n    partition: {devices: {cpu:1: 40KiB, cpu:0: ~}}\n";
    auto p = InferdProcess::Start("metrics", o);
    ASSERT_TRUE(p.ok()) << p.status();
    inferd_ = p->release();
    mlp_ = new engine::TestDataSet(LoadDataSet("tools/models/mlp"));
  }
  static void TearDownTestSuite() {
    delete inferd_;
    delete mlp_;
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "inferd log:\n" << inferd_->Log();
  }

  std::string Scrape() {
    absl::StatusOr<std::string> text = inferd_->ScrapeMetrics();
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? *text : "";
  }
  static double Value(const std::string& text, const std::string& series) {
    return MetricValue(text, series).value_or(-1);
  }

  // Runs the mlp `n` times, then waits until every output lease is back (serialize histogram).
  void Infer(int n) {
    auto stub = inferd_->Stub();
    const double before =
        Value(Scrape(), R"(inferd_serialize_duration_seconds_count{model="mlp"})");
    for (int i = 0; i < n; ++i) {
      grpc::ClientContext ctx;
      inference::ModelInferResponse resp;
      grpc::Status s = stub->ModelInfer(&ctx, RawRequest("mlp", *mlp_), &resp);
      ASSERT_TRUE(s.ok()) << s.error_message();
    }
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (Value(Scrape(), R"(inferd_serialize_duration_seconds_count{model="mlp"})") <
           before + n) {
      ASSERT_LT(absl::Now(), deadline) << "output leases not returned";
      absl::SleepFor(absl::Milliseconds(5));
    }
  }

  static InferdProcess* inferd_;
  static engine::TestDataSet* mlp_;
};
InferdProcess* OpsMetricsTest::inferd_ = nullptr;
engine::TestDataSet* OpsMetricsTest::mlp_ = nullptr;

TEST_F(OpsMetricsTest, ScrapePassesPromtool) {
  Infer(1);
  const std::string text = Scrape();
  const std::string path = engine::testing::TempDir() + "/scrape.txt";
  std::ofstream(path) << text;
  FILE* p = popen(("/usr/bin/promtool check metrics < " + path + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  // promtool exits 3 for lint notes; the only ones allowed are those Triton's own names draw
  // (counters without _total; nv_inference_count / _exec_count ending in _count, _us units).
  const int status = pclose(p);
  EXPECT_TRUE(status == 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 3)) << out;
  std::string rest;
  static const std::regex kTritonLint(
      R"(^nv_inference_[a-z_]+ (counter metrics should have "_total" suffix|)"
      R"(non-histogram and non-summary metrics should not have "_count" suffix|)"
      R"(metric names should not contain abbreviated units)$)");
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && !std::regex_match(line, kTritonLint)) rest += line + "\n";
  }
  EXPECT_EQ(rest, "") << text;
  EXPECT_THAT(text, HasSubstr("# TYPE nv_inference_request_success counter"));
  EXPECT_THAT(text, HasSubstr("# TYPE inferd_batch_size histogram"));
  EXPECT_THAT(text, HasSubstr(std::string("inferd_arena_live_bytes") + kIo0));
  const std::string budget = "inferd_partition_budget_bytes";
  EXPECT_THAT(text, HasSubstr(budget + R"({model="mlp",device="cpu:0"} +Inf)"));
  EXPECT_THAT(text, HasSubstr(budget + R"({model="mlp",device="cpu:1"} 40960)"));
  EXPECT_GT(Value(text, R"(inferd_partition_assigned_bytes{model="mlp",device="cpu:1"})"), 0);
  EXPECT_GT(Value(text, R"(inferd_partition_nodes{model="mlp",device="cpu:1"})"), 0);
  EXPECT_GT(Value(text, R"(inferd_partition_assigned_bytes{model="mlp",device="cpu:0"})"), 0);
  EXPECT_THAT(text, HasSubstr(R"(inferd_model_state{model="mlp",state="READY"} 1)"));
}

TEST_F(OpsMetricsTest, RequestMetricsFollowInference) {
  const std::string before = Scrape();
  Infer(3);
  const std::string after = Scrape();
  for (const char* series : {R"(inferd_requests_total{model="mlp",code="OK"})",
                             R"(inferd_inferences_total{model="mlp"})",
                             R"(inferd_compute_duration_seconds_count{model="mlp"})",
                             R"(inferd_queue_duration_seconds_count{model="mlp"})",
                             R"(inferd_request_duration_seconds_count{model="mlp"})",
                             R"(inferd_serialize_duration_seconds_count{model="mlp"})"}) {
    EXPECT_EQ(Value(after, series), Value(before, series) + 3) << series;
  }
  EXPECT_GT(Value(after, R"(inferd_input_bytes_total{model="mlp",mode="borrowed"})") +
                Value(after, R"(inferd_input_bytes_total{model="mlp",mode="staged"})"),
            Value(before, R"(inferd_input_bytes_total{model="mlp",mode="borrowed"})") +
                Value(before, R"(inferd_input_bytes_total{model="mlp",mode="staged"})"));
  EXPECT_GT(Value(after, R"(inferd_output_bytes_total{model="mlp"})"),
            Value(before, R"(inferd_output_bytes_total{model="mlp"})"));
  EXPECT_GE(Value(after, std::string("inferd_arena_allocations_total") + kIo0),
            Value(before, std::string("inferd_arena_allocations_total") + kIo0) + 3);
  EXPECT_GT(Value(after, std::string("inferd_arena_peak_live_bytes") + kIo0), 0);
  EXPECT_EQ(Value(after, R"(inferd_io_outstanding_leases{model="mlp",device="cpu:0"})"), 0);

  // A bad request is counted under its code.
  auto stub = inferd_->Stub();
  inference::ModelInferRequest bad = RawRequest("mlp", *mlp_);
  bad.mutable_inputs(0)->set_name("no_such_input");
  grpc::ClientContext ctx;
  inference::ModelInferResponse resp;
  ASSERT_EQ(stub->ModelInfer(&ctx, bad, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(
      Value(Scrape(), R"(inferd_requests_total{model="mlp",code="INVALID_ARGUMENT"})"),
      Value(after, R"(inferd_requests_total{model="mlp",code="INVALID_ARGUMENT"})") < 0
          ? 1
          : Value(after, R"(inferd_requests_total{model="mlp",code="INVALID_ARGUMENT"})") + 1);
}

// Triton's names, with Triton's labels, count what the requests did.
TEST_F(OpsMetricsTest, TritonMetricsFollowInference) {
  const std::string v = "{model=\"mlp\",version=\"1\"}";
  const std::string before = Scrape();
  Infer(3);
  const std::string after = Scrape();
  for (const char* name :
       {"nv_inference_request_success", "nv_inference_count", "nv_inference_exec_count"}) {
    EXPECT_EQ(Value(after, name + v), Value(before, name + v) + 3) << name << "\n" << after;
  }
  EXPECT_EQ(Value(after, "nv_inference_request_failure" + v),
            Value(before, "nv_inference_request_failure" + v));
  for (const char* name :
       {"nv_inference_request_duration_us", "nv_inference_compute_infer_duration_us"}) {
    EXPECT_GT(Value(after, name + v), Value(before, name + v)) << name;
  }
  EXPECT_GE(Value(after, "nv_inference_queue_duration_us" + v),
            Value(before, "nv_inference_queue_duration_us" + v));
  EXPECT_EQ(Value(after, R"(inferd_batch_size_bucket{model="mlp",version="1",le="1"})"),
            Value(before, R"(inferd_batch_size_bucket{model="mlp",version="1",le="1"})") + 3);
}

TEST_F(OpsMetricsTest, AdminTrimIsReflected) {
  Infer(2);
  const std::string before = Scrape();
  const double retained = Value(before, std::string("inferd_arena_retained_bytes") + kIo0);
  ASSERT_GT(retained, 0);

  auto admin = inferd_->AdminStub();
  adminpb::TrimRequest req;
  req.set_model("mlp");
  req.set_device("cpu:0");
  req.set_arena("io");
  adminpb::TrimResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(admin->Trim(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.total_released_bytes(), retained);

  const std::string after = Scrape();
  EXPECT_EQ(Value(after, std::string("inferd_arena_retained_bytes") + kIo0), 0);
  EXPECT_EQ(Value(after, std::string("inferd_arena_trims_total") + kIo0),
            Value(before, std::string("inferd_arena_trims_total") + kIo0) + 1);
  EXPECT_EQ(Value(after, std::string("inferd_arena_trimmed_bytes_total") + kIo0),
            Value(before, std::string("inferd_arena_trimmed_bytes_total") + kIo0) + retained);
  EXPECT_EQ(Value(after, std::string("inferd_arena_system_frees_total") + kIo0),
            Value(before, std::string("inferd_arena_system_frees_total") + kIo0) +
                resp.arenas(0).released_buffers());
}

TEST_F(OpsMetricsTest, AdminSetRetentionCapIsReflected) {
  Infer(2);
  const std::string before = Scrape();
  EXPECT_TRUE(std::isinf(Value(before, std::string("inferd_arena_retention_cap_bytes") + kIo0)));
  const double retained = Value(before, std::string("inferd_arena_retained_bytes") + kIo0);
  ASSERT_GT(retained, 0);

  auto admin = inferd_->AdminStub();
  adminpb::SetRetentionCapRequest req;
  req.set_model("mlp");
  req.set_device("cpu:0");
  req.set_arena("io");
  req.set_bytes(0);
  adminpb::SetRetentionCapResponse resp;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(admin->SetRetentionCap(&ctx, req, &resp).ok());
  }
  const std::string capped = Scrape();
  EXPECT_EQ(Value(capped, std::string("inferd_arena_retention_cap_bytes") + kIo0), 0);
  EXPECT_EQ(Value(capped, std::string("inferd_arena_retained_bytes") + kIo0), 0);
  EXPECT_EQ(Value(capped, std::string("inferd_arena_evicted_bytes_total") + kIo0),
            Value(before, std::string("inferd_arena_evicted_bytes_total") + kIo0) + retained);
  EXPECT_EQ(Value(capped, std::string("inferd_arena_evictions_total") + kIo0),
            Value(before, std::string("inferd_arena_evictions_total") + kIo0) +
                resp.applied(0).evicted_buffers());

  // With cap 0, each response's buffers are evicted when their leases return.
  Infer(1);
  const std::string after_request = Scrape();
  EXPECT_EQ(Value(after_request, std::string("inferd_arena_retained_bytes") + kIo0), 0);
  EXPECT_GT(Value(after_request, std::string("inferd_arena_evictions_total") + kIo0),
            Value(capped, std::string("inferd_arena_evictions_total") + kIo0));

  req.set_unbounded(true);
  grpc::ClientContext ctx;
  ASSERT_TRUE(admin->SetRetentionCap(&ctx, req, &resp).ok());
  EXPECT_TRUE(std::isinf(Value(Scrape(), std::string("inferd_arena_retention_cap_bytes") + kIo0)));
}

}  // namespace
}  // namespace inferd::testing
