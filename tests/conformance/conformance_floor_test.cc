// Guards the conformance floor: at least 500 of the ONNX `node` backend tests pass, and every
// pytorch-converted, pytorch-operator and simple test whose operators all have kernels passes.
// No test may crash the runner or hang (the runner aborts on a hang, failing this test).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "kernels/cpu/cpu_kernels.h"
#include "tests/conformance/conformance.h"

namespace inferd::tests {
namespace {

constexpr char kData[] = "/usr/share/libonnx-testdata/data";

TEST(ConformanceFloor, NodeTestsAndModelSuites) {
  if (std::ifstream(std::string(kData) + "/node/test_add/model.onnx").fail()) {
    GTEST_SKIP() << "libonnx-testdata is not installed (deploy/bootstrap.sh installs it)";
  }
  engine::KernelRegistry registry;
  ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(registry).ok());
  ConformanceOptions options;
  options.data_dir = kData;
  const std::vector<TestResult> results = RunConformance(registry, options);
  std::printf("%s", FormatTable(results).c_str());
  if (const char* out = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    std::ofstream(std::string(out) + "/conformance.json") << ToJson(results);
  }
  const auto counts = CountBySuite(results);
  ASSERT_TRUE(counts.count("node"));
  EXPECT_GE(counts.at("node").passed, 500);
  for (const TestResult& r : results) {
    if (r.suite == "node" || !r.ops_all_registered) continue;
    EXPECT_EQ(r.outcome, Outcome::kPassed) << r.suite << "/" << r.name << ": " << r.message;
  }
}

}  // namespace
}  // namespace inferd::tests
