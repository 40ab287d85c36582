// MetricsCollector on a ModelRepository with the generated mlp (cpu:0, a retention cap on its
// execution arena) and the same model as "split" over cpu:1 (40 KiB budget) and cpu:0: the
// exposition passes `promtool check metrics` (no errors, no lint warnings), and its values are
// the arenas' and ModelStats' at the time of the scrape. MetricsExporter serves it over HTTP.
#include "server/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "absl/strings/str_cat.h"
#include "engine/testing/fake_device.h"
#include "engine/testing/runfiles.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd::server {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// The value of the sample `series` (name and labels exactly as exposed), or -1.
double Sample(const std::string& text, const std::string& series) {
  const std::string prefix = series + " ";
  size_t pos = 0;
  while ((pos = text.find(prefix, pos)) != std::string::npos) {
    if (pos == 0 || text[pos - 1] == '\n') {
      const std::string value =
          text.substr(pos + prefix.size(), text.find('\n', pos) - pos - prefix.size());
      return value == "+Inf" ? INFINITY : std::stod(value);
    }
    pos += prefix.size();
  }
  return -1;
}

// promtool's output and exit status for `text`.
std::pair<int, std::string> Promtool(const std::string& text) {
  const std::string path = engine::testing::TempDir() + "/metrics.txt";
  std::ofstream(path) << text;
  FILE* p = popen(("/usr/bin/promtool check metrics < " + path + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// promtool's output without the two lint notes Triton's own names draw (they keep Triton's
// names, for its dashboards: counters without _total, and nv_inference_count /
// nv_inference_exec_count ending in _count, the _us unit). Anything else stays.
std::string WithoutTritonNameLint(const std::string& out) {
  static const std::regex kTritonLint(
      R"(^nv_inference_[a-z_]+ (counter metrics should have "_total" suffix|)"
      R"(non-histogram and non-summary metrics should not have "_count" suffix|)"
      R"(metric names should not contain abbreviated units)$)");
  std::string rest;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(start, end - start);
    if (!line.empty() && !std::regex_match(line, kTritonLint)) absl::StrAppend(&rest, line, "\n");
    start = end + 1;
  }
  return rest;
}

class MetricsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    registry_ = new engine::KernelRegistry();
    ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(*registry_).ok());
    const fs::path dir = fs::path(engine::testing::TempDir()) / "metrics_test";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::create_directory_symlink(engine::testing::Runfile("tools/models/mlp"), dir / "mlp");
    fs::create_directory_symlink(engine::testing::Runfile("tools/models/mlp"), dir / "idle");
    fs::create_directory_symlink(engine::testing::Runfile("tools/models/mlp"), dir / "split");
    fs::create_directory_symlink(engine::testing::Runfile("tools/models/mlp"), dir / "tight");
    fs::create_directories(dir / "broken");
    std::ofstream(dir / "broken" / "model.onnx") << "not an onnx model";
    auto config = ParseConfig("server:\n  model_repository: " + dir.string() +
                                  "\nmodels:\n  - name: mlp\n"
                                  "    retention_caps: {cpu:0: {execution: 1MiB}}\n"
                                  "  - name: split\n"
                                  "    partition: {devices: {cpu:1: 40KiB, cpu:0: ~}}\n"
                                  "  - name: tight\n"
                                  "    partition: {devices: {cpu:0: 1KiB}}\n",
                              "test.yaml");
    ASSERT_TRUE(config.ok()) << config.status();
    repo_ = new ModelRepository(*config, *registry_);
    ASSERT_TRUE(repo_->Load("mlp").ok());
    ASSERT_TRUE(repo_->Load("split").ok());
    ASSERT_EQ(repo_->Load("tight").code(), absl::StatusCode::kResourceExhausted);
    ASSERT_FALSE(repo_->Load("broken").ok());
  }
  static void TearDownTestSuite() {
    delete repo_;
    delete registry_;
  }

  static memory::IOArena& Io(const std::string& device) {
    for (const engine::DeviceArenas& d : repo_->Find("mlp")->session()->devices()) {
      if (d.device == device) return *d.io;
    }
    std::abort();
  }

  static engine::KernelRegistry* registry_;
  static ModelRepository* repo_;
};
engine::KernelRegistry* MetricsTest::registry_ = nullptr;
ModelRepository* MetricsTest::repo_ = nullptr;

// Triton's counters {model, version} follow ModelStats' Triton fields, and the batch-size
// histogram its runs by batch size.
TEST_F(MetricsTest, TritonCountersAndBatchSizeHistogram) {
  ModelStats& st = repo_->Find("mlp")->stats();
  const std::string v = repo_->Find("mlp")->version();
  MetricsCollector collector(*repo_);
  const std::string before = RenderMetrics(collector);
  auto series = [&](const char* name) {
    return absl::StrCat(name, "{model=\"mlp\",version=\"", v, "\"}");
  };
  st.success.Add(absl::Microseconds(500), 2);
  st.fail.Add(absl::Microseconds(70));
  st.queue_ok.Add(absl::Microseconds(40), 2);
  st.compute_input.Add(absl::Microseconds(10), 2);
  st.compute_infer.Add(absl::Microseconds(300), 2);
  st.compute_output.Add(absl::Microseconds(5), 2);
  st.inference_count.fetch_add(6);
  st.executions.fetch_add(2);
  st.batches.Record(1, absl::ZeroDuration(), absl::ZeroDuration(), absl::ZeroDuration());
  st.batches.Record(5, absl::ZeroDuration(), absl::ZeroDuration(), absl::ZeroDuration());
  const std::string text = RenderMetrics(collector);
  auto delta = [&](const char* name) {
    return Sample(text, series(name)) - Sample(before, series(name));
  };
  EXPECT_THAT(text, HasSubstr("# TYPE nv_inference_request_success counter"));
  EXPECT_THAT(text, HasSubstr("# TYPE nv_inference_queue_duration_us counter"));
  EXPECT_EQ(delta("nv_inference_request_success"), 2);
  EXPECT_EQ(delta("nv_inference_request_failure"), 1);
  EXPECT_EQ(delta("nv_inference_count"), 6);
  EXPECT_EQ(delta("nv_inference_exec_count"), 2);
  EXPECT_EQ(delta("nv_inference_request_duration_us"), 500);  // successes only, as Triton
  EXPECT_EQ(delta("nv_inference_queue_duration_us"), 40);
  EXPECT_EQ(delta("nv_inference_compute_input_duration_us"), 10);
  EXPECT_EQ(delta("nv_inference_compute_infer_duration_us"), 300);
  EXPECT_EQ(delta("nv_inference_compute_output_duration_us"), 5);
  // Runs of 1 and 5: buckets le=1 and le=8 (cumulative), sum 6.
  EXPECT_EQ(Sample(text, R"(inferd_batch_size_bucket{model="mlp",version="1",le="1"})") -
                Sample(before, R"(inferd_batch_size_bucket{model="mlp",version="1",le="1"})"),
            1);
  EXPECT_EQ(Sample(text, R"(inferd_batch_size_bucket{model="mlp",version="1",le="4"})") -
                Sample(before, R"(inferd_batch_size_bucket{model="mlp",version="1",le="4"})"),
            1);
  EXPECT_EQ(Sample(text, R"(inferd_batch_size_bucket{model="mlp",version="1",le="8"})") -
                Sample(before, R"(inferd_batch_size_bucket{model="mlp",version="1",le="8"})"),
            2);
  EXPECT_EQ(Sample(text, R"(inferd_batch_size_count{model="mlp",version="1"})") -
                Sample(before, R"(inferd_batch_size_count{model="mlp",version="1"})"),
            2);
  EXPECT_EQ(Sample(text, R"(inferd_batch_size_sum{model="mlp",version="1"})") -
                Sample(before, R"(inferd_batch_size_sum{model="mlp",version="1"})"),
            6);
}

TEST_F(MetricsTest, ExpositionPassesPromtool) {
  ModelStats& st = repo_->Find("mlp")->stats();
  st.CountRequest(absl::StatusCode::kOk);
  st.CountRequest(absl::StatusCode::kInvalidArgument);
  st.queue.Record(absl::Microseconds(30));
  st.compute.Record(absl::Milliseconds(3));
  st.serialize.Record(absl::Seconds(20));  // past the last bound: +Inf only
  st.request.Record(absl::Milliseconds(4));
  MetricsCollector collector(*repo_);
  const std::string text = RenderMetrics(collector);
  const auto [rc, out] = Promtool(text);
  // 3: lint notes only (Triton's names); 1 would be a format error.
  EXPECT_TRUE(rc == 0 || rc == 3) << rc << out << "\n" << text;
  EXPECT_EQ(WithoutTritonNameLint(out), "") << text;  // no other lint warnings

  for (const char* name : {"inferd_arena_live_bytes",
                           "inferd_arena_retained_bytes",
                           "inferd_arena_peak_live_bytes",
                           "inferd_arena_retention_cap_bytes",
                           "inferd_arena_system_allocations_total",
                           "inferd_arena_system_frees_total",
                           "inferd_arena_evictions_total",
                           "inferd_arena_trims_total",
                           "inferd_arena_trimmed_bytes_total",
                           "inferd_io_outstanding_leases",
                           "inferd_requests_total",
                           "inferd_inferences_total",
                           "inferd_queue_rejected_total",
                           "inferd_queue_duration_seconds",
                           "inferd_compute_duration_seconds",
                           "inferd_serialize_duration_seconds",
                           "inferd_request_duration_seconds",
                           "inferd_input_bytes_total",
                           "inferd_model_state",
                           "inferd_kernel_persistent_bytes",
                           "inferd_partition_budget_bytes",
                           "inferd_partition_assigned_bytes"}) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("# TYPE ", name, " "))) << name;
  }
  EXPECT_EQ(Sample(text, R"(inferd_requests_total{model="mlp",code="OK"})"), 1);
  EXPECT_EQ(Sample(text, R"(inferd_requests_total{model="mlp",code="INVALID_ARGUMENT"})"), 1);
  EXPECT_THAT(text, Not(HasSubstr(R"(code="NOT_FOUND")")));
  EXPECT_EQ(Sample(text, R"(inferd_serialize_duration_seconds_bucket{model="mlp",le="10"})"), 0);
  EXPECT_EQ(Sample(text, R"(inferd_serialize_duration_seconds_bucket{model="mlp",le="+Inf"})"), 1);
  EXPECT_EQ(Sample(text, R"(inferd_serialize_duration_seconds_count{model="mlp"})"), 1);
  EXPECT_EQ(Sample(text, R"(inferd_compute_duration_seconds_bucket{model="mlp",le="0.0025"})"), 0);
  EXPECT_EQ(Sample(text, R"(inferd_compute_duration_seconds_bucket{model="mlp",le="0.005"})"), 1);
  EXPECT_EQ(Sample(text, R"(inferd_model_state{model="mlp",state="READY"})"), 1);
  EXPECT_EQ(Sample(text, R"(inferd_model_state{model="mlp",state="LOADING"})"), 0);
  EXPECT_EQ(Sample(text, R"(inferd_model_state{model="idle",state="UNAVAILABLE"})"), 1);
  // Unbounded cap and no budget: +Inf; configured ones: their bytes.
  EXPECT_EQ(
      Sample(text, R"(inferd_arena_retention_cap_bytes{model="mlp",device="cpu:0",arena="io"})"),
      INFINITY);
  EXPECT_EQ(
      Sample(text,
             R"(inferd_arena_retention_cap_bytes{model="mlp",device="cpu:0",arena="execution"})"),
      1 << 20);
  EXPECT_EQ(Sample(text, R"(inferd_partition_budget_bytes{model="mlp",device="cpu:0"})"), INFINITY);
  const partition::PlanReport& report = repo_->Find("mlp")->session()->partition_report();
  EXPECT_EQ(Sample(text, R"(inferd_partition_assigned_bytes{model="mlp",device="cpu:0"})"),
            report.FindDevice("cpu:0")->accounted.total());
  EXPECT_GT(report.FindDevice("cpu:0")->accounted.total(), 0u);
  EXPECT_EQ(Sample(text, R"(inferd_kernel_persistent_bytes{model="mlp"})"),
            repo_->Find("mlp")->session()->stats().kernel_persistent_bytes);
}

TEST_F(MetricsTest, PartitionedModelHasSeriesPerDevice) {
  const std::shared_ptr<engine::Session> split = repo_->Find("split")->session();
  ASSERT_EQ(split->devices().size(), 2u);
  MetricsCollector collector(*repo_);
  const std::string text = RenderMetrics(collector);
  EXPECT_EQ(Sample(text, R"(inferd_partition_budget_bytes{model="split",device="cpu:1"})"),
            40 << 10);
  EXPECT_EQ(Sample(text, R"(inferd_partition_assigned_bytes{model="split",device="cpu:1"})"),
            split->partition_report().FindDevice("cpu:1")->accounted.total());
  EXPECT_GE(Sample(text, R"(inferd_arena_live_bytes{model="split",device="cpu:1",arena="io"})"), 0);
  EXPECT_EQ(Sample(text, R"(inferd_io_outstanding_leases{model="split",device="cpu:1"})"), 0);
}

// GPU memory gauges, on a fake GPU runtime (engine/testing/fake_device.h; no GPU here): the
// driver's total / used / free of every device, read at scrape time.
TEST_F(MetricsTest, DeviceMemoryGaugesPerGpu) {
  auto fake = std::make_shared<engine::testing::FakeDeviceRuntime>(2, 8 << 20);
  MetricsCollector collector(*repo_, {fake});
  auto used = [&](const std::string& text, int d) {
    return Sample(text, "inferd_device_memory_bytes{device=\"cuda:" + std::to_string(d) +
                            "\",state=\"used\"}");
  };
  const std::string before = RenderMetrics(collector);
  EXPECT_EQ(Sample(before, R"(inferd_device_memory_bytes{device="cuda:1",state="total"})"),
            8 << 20);
  EXPECT_EQ(used(before, 0), 0);
  absl::StatusOr<std::shared_ptr<memory::SystemAllocator>> system =
      fake->MakeAllocator("cuda:0", 0);
  ASSERT_TRUE(system.ok());
  absl::StatusOr<void*> p = (*system)->Allocate(1 << 20);
  ASSERT_TRUE(p.ok());
  const std::string during = RenderMetrics(collector);
  EXPECT_EQ(used(during, 0), 1 << 20);
  EXPECT_EQ(Sample(during, R"(inferd_device_memory_bytes{device="cuda:0",state="free"})"), 7 << 20);
  EXPECT_EQ(used(during, 1), 0);
  (*system)->Free(*p, 1 << 20);
  // Without runtimes (a CPU build) the family has no series.
  MetricsCollector cpu_only(*repo_);
  EXPECT_EQ(RenderMetrics(cpu_only).find("inferd_device_memory_bytes{"), std::string::npos);
}

TEST_F(MetricsTest, LoadsCountedByResult) {
  MetricsCollector collector(*repo_);
  const std::string text = RenderMetrics(collector);
  auto loads = [&](const std::string& model, const std::string& result) {
    return Sample(text,
                  "inferd_model_loads_total{model=\"" + model + "\",result=\"" + result + "\"}");
  };
  EXPECT_EQ(loads("mlp", "ok"), 1);
  EXPECT_EQ(loads("mlp", "refused_budget"), 0);
  EXPECT_EQ(loads("tight", "refused_budget"), 1);
  EXPECT_EQ(loads("tight", "ok"), 0);
  EXPECT_EQ(loads("broken", "failed"), 1);
  EXPECT_EQ(loads("broken", "refused_budget"), 0);
  EXPECT_EQ(Sample(text, R"(inferd_model_state{model="tight",state="UNAVAILABLE"})"), 1);
}

TEST_F(MetricsTest, ValuesAreReadAtScrapeTime) {
  memory::IOArena& io = Io("cpu:0");
  io.Trim();
  MetricsCollector collector(*repo_);
  const std::string labels = R"({model="mlp",device="cpu:0",arena="io"})";
  const std::string before = RenderMetrics(collector);
  {
    absl::StatusOr<memory::AllocationHandle> h = io.Allocate(1 << 20);
    ASSERT_TRUE(h.ok());
    const std::string during = RenderMetrics(collector);
    EXPECT_GE(Sample(during, "inferd_arena_live_bytes" + labels), 1 << 20);
    EXPECT_EQ(Sample(during, "inferd_arena_system_allocations_total" + labels),
              Sample(before, "inferd_arena_system_allocations_total" + labels) + 1);
  }
  const std::string after = RenderMetrics(collector);
  EXPECT_EQ(Sample(after, "inferd_arena_live_bytes" + labels), 0);
  EXPECT_GE(Sample(after, "inferd_arena_retained_bytes" + labels), 1 << 20);
  EXPECT_GE(Sample(after, "inferd_arena_peak_live_bytes" + labels), 1 << 20);

  io.Trim();
  const std::string trimmed = RenderMetrics(collector);
  EXPECT_EQ(Sample(trimmed, "inferd_arena_retained_bytes" + labels), 0);
  EXPECT_EQ(Sample(trimmed, "inferd_arena_trims_total" + labels),
            Sample(after, "inferd_arena_trims_total" + labels) + 1);
  EXPECT_GE(Sample(trimmed, "inferd_arena_trimmed_bytes_total" + labels),
            Sample(after, "inferd_arena_trimmed_bytes_total" + labels) + (1 << 20));

  io.SetRetentionCap(4096);
  EXPECT_EQ(Sample(RenderMetrics(collector), "inferd_arena_retention_cap_bytes" + labels), 4096);
  io.SetRetentionCap(memory::Arena::kUnbounded);
}

TEST_F(MetricsTest, ExporterServesHttp) {
  absl::StatusOr<std::unique_ptr<MetricsExporter>> exporter =
      MetricsExporter::Start("localhost:0", *repo_);
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  ASSERT_GT((*exporter)->port(), 0);
  FILE* p = popen(
      absl::StrCat("/usr/bin/curl -sf http://127.0.0.1:", (*exporter)->port(), "/metrics").c_str(),
      "r");
  std::string body;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) body.append(buf, n);
  EXPECT_EQ(pclose(p), 0);
  EXPECT_THAT(body, HasSubstr("inferd_arena_live_bytes{"));

  // The port is taken now: a second exporter on it fails with a status, not an exception.
  absl::StatusOr<std::unique_ptr<MetricsExporter>> clash =
      MetricsExporter::Start(absl::StrCat("127.0.0.1:", (*exporter)->port()), *repo_);
  EXPECT_EQ(clash.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(MetricsExporter::Start("unix:/tmp/x", *repo_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace inferd::server
