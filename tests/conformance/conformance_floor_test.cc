// Guards the conformance floors on two copies of the ONNX backend test data:
//   - Debian's libonnx-testdata (ONNX 1.12, opsets up to 17): at least kNodeFloor of the `node`
//     tests pass, and every pytorch-converted, pytorch-operator and simple test whose operators
//     all have kernels passes;
//   - the node tests of the onnx 1.16 wheel in the test virtualenv (deploy/requirements-test.txt),
//     written at the newest opset of each operator, up to 21: at least kNewNodeFloor pass.
// No test may crash the runner or hang (the runner aborts on a hang, failing this test).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "kernels/cpu/cpu_kernels.h"
#include "tests/conformance/conformance.h"

namespace inferd::tests {
namespace {

constexpr char kData[] = "/usr/share/libonnx-testdata/data";
constexpr char kNewData[] = "/opt/inferd/venv/lib/python3.11/site-packages/onnx/backend/test/data";
constexpr int kNodeFloor = 917;
constexpr int kNewNodeFloor = 1254;

bool Present(const std::string& dir) {
  return !std::ifstream(dir + "/node/test_add/model.onnx").fail();
}

std::vector<TestResult> RunData(const std::string& dir, std::vector<std::string> suites,
                                const char* json_name) {
  engine::KernelRegistry registry;
  EXPECT_TRUE(kernels::cpu::RegisterCpuKernels(registry).ok());
  ConformanceOptions options;
  options.data_dir = dir;
  options.suites = std::move(suites);
  std::vector<TestResult> results = RunConformance(registry, options);
  std::printf("%s\n%s", dir.c_str(), FormatTable(results).c_str());
  if (const char* out = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    std::ofstream(std::string(out) + "/" + json_name) << ToJson(results);
  }
  return results;
}

TEST(ConformanceFloor, NodeTestsAndModelSuites) {
  if (!Present(kData)) {
    GTEST_SKIP() << "libonnx-testdata is not installed (deploy/bootstrap.sh installs it)";
  }
  const std::vector<TestResult> results =
      RunData(kData, ConformanceOptions().suites, "conformance.json");
  const auto counts = CountBySuite(results);
  ASSERT_TRUE(counts.count("node"));
  EXPECT_GE(counts.at("node").passed, kNodeFloor);
  for (const TestResult& r : results) {
    if (r.suite == "node" || !r.ops_all_registered) continue;
    EXPECT_EQ(r.outcome, Outcome::kPassed) << r.suite << "/" << r.name << ": " << r.message;
  }
}

TEST(ConformanceFloor, NewerOpsetNodeTests) {
  if (!Present(kNewData)) {
    GTEST_SKIP() << "the test virtualenv's onnx 1.16 is not installed (deploy/bootstrap.sh)";
  }
  const std::vector<TestResult> results = RunData(kNewData, {"node"}, "conformance_opset21.json");
  const auto counts = CountBySuite(results);
  ASSERT_TRUE(counts.count("node"));
  EXPECT_GE(counts.at("node").passed, kNewNodeFloor);
}

}  // namespace
}  // namespace inferd::tests
