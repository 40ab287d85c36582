#include "tools/inferctl/plan_command.h"

#include <string>
#include <vector>

#include "engine/testing/runfiles.h"
#include "gtest/gtest.h"
#include "kernels/build_kernels.h"

namespace inferd::tools {
namespace {

bool Contains(absl::string_view text, absl::string_view part) {
  return text.find(part) != absl::string_view::npos;
}

std::string Model(const std::string& name) {
  return engine::testing::Runfile("tools/models/" + name + "/model.onnx");
}

TEST(PlanArgsTest, DevicesWithBudgets) {
  absl::StatusOr<std::vector<partition::DeviceSpec>> d =
      ParseDeviceList("cuda:0=6GiB, cpu:1 = 512MiB,cpu,cpu:2=1048576");
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->size(), 4u);
  EXPECT_EQ((*d)[0].name, "cuda:0");
  EXPECT_EQ((*d)[0].budget_bytes, uint64_t{6} << 30);
  EXPECT_EQ((*d)[1].name, "cpu:1");
  EXPECT_EQ((*d)[1].budget_bytes, uint64_t{512} << 20);
  EXPECT_EQ((*d)[2].name, "cpu:0");
  EXPECT_EQ((*d)[2].budget_bytes, std::nullopt);
  EXPECT_EQ((*d)[3].budget_bytes, 1048576u);
}

TEST(PlanArgsTest, BadDevices) {
  EXPECT_TRUE(Contains(ParseDeviceList("gpu=1GiB").status().message(), "unknown device 'gpu'"));
  EXPECT_TRUE(Contains(ParseDeviceList("cuda:0=6GB5").status().message(), "budget of cuda:0"));
  EXPECT_FALSE(ParseDeviceList("cpu,").ok());
}

TEST(PlanArgsTest, ParsesEveryFlag) {
  absl::StatusOr<PlanArgs> a =
      ParsePlanArgs({"m.onnx", "--devices", "cuda:0=6GiB,cpu", "--rules", "cuda:0(layers.[0-15]/)",
                     "--input-shape", "input_ids=1x128", "--fallback", "cpu:0",
                     "--fallback-on-missing-device", "--no-fusions", "--nodes"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->model, "m.onnx");
  EXPECT_EQ(a->devices.size(), 2u);
  EXPECT_EQ(a->rules, "cuda:0(layers.[0-15]/)");
  EXPECT_EQ(a->input_shapes.at("input_ids"), (std::vector<int64_t>{1, 128}));
  EXPECT_TRUE(a->fallback_on_missing_device);
  EXPECT_FALSE(a->fusions);
  EXPECT_TRUE(a->show_nodes);
  // Defaults: cpu only.
  a = ParsePlanArgs({"m.onnx"});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->devices.size(), 1u);
  EXPECT_EQ(a->devices[0].name, "cpu:0");
}

TEST(PlanArgsTest, Errors) {
  EXPECT_FALSE(ParsePlanArgs({}).ok());
  EXPECT_FALSE(ParsePlanArgs({"m.onnx", "--devices"}).ok());
  EXPECT_FALSE(ParsePlanArgs({"m.onnx", "--input-shape", "x=1xA"}).ok());
  EXPECT_FALSE(ParsePlanArgs({"m.onnx", "--input-shape", "1x2"}).ok());
  EXPECT_FALSE(ParsePlanArgs({"m.onnx", "--bogus"}).ok());
}

TEST(PlanCommandTest, SplitsTransformer32AcrossTwoHostDomains) {
  absl::StatusOr<PlanArgs> a =
      ParsePlanArgs({Model("transformer_32"), "--devices", "cpu:1=200KiB,cpu:0", "--rules",
                     "cpu:1(layers.[0-15]/); cpu:0(layers.[16-31]/)", "--nodes"});
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<std::string> plan = MakePlan(*a);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(Contains(*plan, "name rules (2 rules, 32 patterns); fallback cpu:0")) << *plan;
  EXPECT_TRUE(Contains(*plan, "200.0 KiB")) << *plan;
  EXPECT_TRUE(Contains(*plan, "cpu:1: budget of 200.0 KiB reached at node")) << *plan;
  EXPECT_TRUE(Contains(*plan, "boundary copies: ")) << *plan;
  EXPECT_TRUE(Contains(*plan, "layers.31")) << *plan;
  EXPECT_TRUE(Contains(*plan, "/MatMulAddFusion")) << *plan;  // --nodes, after fusions
}

TEST(PlanCommandTest, CudaNeedsNoDevice) {
  absl::StatusOr<PlanArgs> a = ParsePlanArgs(
      {Model("transformer_32"), "--devices", "cuda:0=6GiB,cpu", "--rules", "cuda:0(layers.)"});
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<std::string> plan = MakePlan(*a);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // The embedding (no rule) stays on cpu:0; its output goes to cuda:0, where the layers run,
  // and back for the final norm. A CPU-only build plans every layer node there with heuristic
  // workspace (it has no cuda kernels to ask); a --config=cuda build asks its CUDA kernels.
  EXPECT_TRUE(Contains(*plan, "cpu:0 -> cuda:0")) << *plan;
  EXPECT_TRUE(Contains(*plan, "cuda:0 -> cpu:0")) << *plan;
  if (!kernels::BuiltWithCuda()) {
    EXPECT_TRUE(Contains(*plan, "workspace of nodes: 0 kernel estimates / ")) << *plan;
  }
}

TEST(PlanCommandTest, RefusesWithTheNumbers) {
  absl::StatusOr<PlanArgs> a =
      ParsePlanArgs({Model("transformer_32"), "--devices", "cpu:1=100KiB,cpu:0=100KiB"});
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<std::string> plan = MakePlan(*a);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(Contains(plan.status().message(), "the fallback device cpu:0 must hold"))
      << plan.status();
  EXPECT_TRUE(Contains(plan.status().message(), "available 100.0 KiB (102400 bytes)"))
      << plan.status();
}

TEST(PlanCommandTest, DynamicModelNeedsInputShapes) {
  absl::StatusOr<PlanArgs> a = ParsePlanArgs({Model("transformer_dynamic")});
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<std::string> plan = MakePlan(*a);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(Contains(*plan, "unknown shape, counted as 0 bytes")) << *plan;
  EXPECT_TRUE(Contains(*plan, "(?)")) << *plan;
}

TEST(PlanCommandTest, InputShapesMakeDynamicModelsStatic) {
  absl::StatusOr<PlanArgs> a =
      ParsePlanArgs({Model("transformer_dynamic"), "--input-shape", "input_ids=2x16"});
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<std::string> plan = MakePlan(*a);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(Contains(*plan, "unknown shape")) << *plan;
  EXPECT_FALSE(Contains(*plan, "(?)")) << *plan;
}

TEST(PlanCommandTest, BadModelPath) {
  absl::StatusOr<PlanArgs> a = ParsePlanArgs({"/nonexistent/model.onnx"});
  ASSERT_TRUE(a.ok());
  absl::StatusOr<std::string> plan = MakePlan(*a);
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(Contains(plan.status().message(), "cannot load '/nonexistent/model.onnx'"));
}

}  // namespace
}  // namespace inferd::tools
