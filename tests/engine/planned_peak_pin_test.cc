// Memory regression pin: the static plan's planned peak (ExecutionPlan's DevicePlan::block_bytes,
// the "planned peak" `inferctl run` prints) of every generated model whose shapes are all known
// at load, per device, against the figure written below. The test fails when a figure grows by
// more than kTolerancePercent (a change made the plan worse) and when it shrinks by more
// than kTolerancePercent (the pin is lowered, so that it stays tight). See docs/memory-planner.md.
//
// Sessions are made as `inferctl run` makes them: engine::Session with the CPU kernels and the
// default SessionOptions (fusions on, one thread, everything on cpu:0).
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "engine/session.h"
#include "engine/testing/runfiles.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd {
namespace {

// Allowed change either way, in percent of the pin.
constexpr uint64_t kTolerancePercent = 3;

struct Pin {
  const char* model;  // directory under tools/models
  const char* device;
  uint64_t planned_peak_bytes;
};

// Measured with this test (it prints every figure). The figures include the kernels' declared
// workspaces, which for oneDNN primitives are the library's scratchpad sizes and depend on the
// instruction set oneDNN picks (on an AVX-512 machine mlp needs 4736 bytes, under AVX2 4096).
// The BUILD target therefore runs the test with ONEDNN_MAX_CPU_ISA=AVX2, which every machine
// the build targets (x86-64-v3) has, so the pins are the same on every such machine. To update
// a pin, write the figure the failure message gives.
constexpr Pin kPins[] = {
    {"cnn", "cpu:0", 81920},
    {"cnn_b8", "cpu:0", 655360},
    {"decoder_step", "cpu:0", 3008},
    {"mlp", "cpu:0", 4096},
    {"transformer", "cpu:0", 36864},
    {"transformer_32", "cpu:0", 5120},
    {"transformer_ext", "cpu:0", 36864},
    {"transformer_large", "cpu:0", 1179648},
    {"wide_bottleneck", "cpu:0", 33554432},
    {"wide_output", "cpu:0", 4194304},
};

// gtest prints a failing case's parameter with this.
void PrintTo(const Pin& pin, std::ostream* os) {
  *os << pin.model << " on " << pin.device << " (" << pin.planned_peak_bytes << " bytes)";
}

class PlannedPeakPin : public ::testing::TestWithParam<Pin> {
 protected:
  static void SetUpTestSuite() {
    registry_ = new engine::KernelRegistry();
    ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(*registry_).ok());
  }
  static engine::KernelRegistry* registry_;
};
engine::KernelRegistry* PlannedPeakPin::registry_ = nullptr;

// The message for a figure outside the pin's band, or "" when it is within it.
std::string Judge(const Pin& pin, uint64_t measured) {
  const uint64_t pinned = pin.planned_peak_bytes;
  const double change_percent =
      pinned > 0 ? 100.0 * (static_cast<double>(measured) - pinned) / pinned : 100.0;
  const std::string where = absl::StrFormat("%s on %s", pin.model, pin.device);
  const std::string update = absl::StrFormat(
      "update its pin in tests/engine/planned_peak_pin_test.cc to {\"%s\", \"%s\", %d}", pin.model,
      pin.device, measured);
  if (measured * 100 > pinned * (100 + kTolerancePercent)) {
    return absl::StrFormat(
        "%s: the planned peak grew from %d to %d bytes (%+.1f%%, more than the %d%% allowed). "
        "If the growth is intended (say why in the commit), %s.",
        where, pinned, measured, change_percent, kTolerancePercent, update);
  }
  if (measured * 100 < pinned * (100 - kTolerancePercent)) {
    return absl::StrFormat(
        "%s: the planned peak shrank from %d to %d bytes (%+.1f%%, more than %d%%): good; "
        "lower the pin so it stays tight: %s.",
        where, pinned, measured, change_percent, kTolerancePercent, update);
  }
  return "";
}

TEST_P(PlannedPeakPin, StaysWithinThreePercentOfThePin) {
  const Pin& pin = GetParam();
  const std::string path =
      engine::testing::Runfile(std::string("tools/models/") + pin.model + "/model.onnx");
  auto session = engine::Session::Load(path, engine::SessionOptions{}, *registry_);
  ASSERT_TRUE(session.ok()) << session.status();
  const engine::ExecutionPlan& plan = (*session)->plan();
  ASSERT_TRUE(plan.is_static()) << pin.model << " has no static plan: " << plan.dynamic_reason();
  const engine::DevicePlan* device = nullptr;
  for (const engine::DevicePlan& d : plan.devices()) {
    std::printf("%s %s: planned peak %zu bytes (naive sum %zu, workspaces %zu)\n", pin.model,
                d.name.c_str(), d.block_bytes, d.naive_bytes, d.workspace_bytes);
    if (d.name == pin.device) {
      device = &d;
    } else {
      ADD_FAILURE() << pin.model << " plans device " << d.name
                    << ", which has no pin: add one with the figure above";
    }
  }
  ASSERT_NE(device, nullptr) << pin.model << " has no device " << pin.device;
  const std::string verdict = Judge(pin, device->block_bytes);
  EXPECT_TRUE(verdict.empty()) << verdict;
}

std::string Name(const ::testing::TestParamInfo<Pin>& info) {
  std::string name = std::string(info.param.model) + "_" + info.param.device;
  for (char& c : name) {
    if (c == ':') c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(GeneratedModels, PlannedPeakPin, ::testing::ValuesIn(kPins), Name);

// The band itself: 3% either way passes, beyond fails, with the figures in the message.
TEST(PlannedPeakPinJudge, AllowsThreePercentEitherWay) {
  const Pin pin{"m", "cpu:0", 1000};
  EXPECT_EQ(Judge(pin, 1030), "");
  EXPECT_EQ(Judge(pin, 970), "");
  const std::string grew = Judge(pin, 1031);
  EXPECT_NE(grew.find("grew from 1000 to 1031 bytes"), std::string::npos) << grew;
  EXPECT_NE(grew.find("{\"m\", \"cpu:0\", 1031}"), std::string::npos) << grew;
  const std::string shrank = Judge(pin, 969);
  EXPECT_NE(shrank.find("shrank from 1000 to 969 bytes"), std::string::npos) << shrank;
  EXPECT_NE(shrank.find("lower the pin"), std::string::npos) << shrank;
}

}  // namespace
}  // namespace inferd
