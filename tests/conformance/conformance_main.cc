// conformance: runs the ONNX backend test data through the engine and prints a table by
// operator (passed / failed / unsupported); --json writes every result.
//   conformance [--data DIR] [--suites node,simple] [--filter SUBSTR] [--json FILE] [--failures]
//   [--require_pass]
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "base/flags.h"
#include "kernels/cpu/cpu_kernels.h"
#include "tests/conformance/conformance.h"

ABSL_FLAG(std::string, data, inferd::tests::ConformanceOptions().data_dir,
          "directory of the ONNX backend test data (one folder per suite)");
ABSL_FLAG(std::vector<std::string>, suites, inferd::tests::ConformanceOptions().suites,
          "suites to run, comma-separated");
ABSL_FLAG(std::string, filter, "", "run only tests whose name contains this; empty: all");
ABSL_FLAG(std::string, json, "", "also write every result to this file as JSON");
ABSL_FLAG(bool, no_widening, false,
          "run float16/bfloat16 nodes without the precision widening pass (to compare)");
ABSL_FLAG(bool, failures, false, "after the table, print each test that did not pass");
ABSL_FLAG(bool, require_pass, false,
          "exit with status 1 unless every test run passed (and at least one ran)");

int main(int argc, char** argv) {
  const std::vector<std::string> args = inferd::ParseCommandLine(
      argc, argv,
      "usage: conformance [--data DIR] [--suites node,simple] [--filter SUBSTR] [--json FILE] "
      "[--failures]\n\n"
      "Runs the ONNX backend test data through the engine with the CPU kernels and prints a\n"
      "table by operator: passed / failed / unsupported.");
  if (!args.empty()) {
    std::fprintf(stderr, "conformance: unknown argument '%s'\n", args[0].c_str());
    return 2;
  }
  inferd::tests::ConformanceOptions options;
  options.data_dir = absl::GetFlag(FLAGS_data);
  options.suites = absl::GetFlag(FLAGS_suites);
  options.filter = absl::GetFlag(FLAGS_filter);
  options.widen_half_precision = !absl::GetFlag(FLAGS_no_widening);
  const std::string json = absl::GetFlag(FLAGS_json);
  const bool show = absl::GetFlag(FLAGS_failures);
  inferd::engine::KernelRegistry registry;
  if (auto st = inferd::kernels::cpu::RegisterCpuKernels(registry); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  const auto results = inferd::tests::RunConformance(registry, options);
  std::printf("%s", inferd::tests::FormatTable(results).c_str());
  if (show) {
    for (const auto& r : results) {
      if (r.outcome == inferd::tests::Outcome::kPassed) continue;
      std::printf("%-12s %s/%s: %s\n", inferd::tests::OutcomeName(r.outcome), r.suite.c_str(),
                  r.name.c_str(), r.message.substr(0, 300).c_str());
    }
  }
  if (!json.empty()) {
    std::ofstream(json) << inferd::tests::ToJson(results);
    std::printf("wrote %s\n", json.c_str());
  }
  if (absl::GetFlag(FLAGS_require_pass)) {
    size_t passed = 0;
    for (const auto& r : results) passed += r.outcome == inferd::tests::Outcome::kPassed;
    if (results.empty() || passed != results.size()) {
      std::fprintf(stderr, "conformance: %zu of %zu tests passed (--require_pass)\n", passed,
                   results.size());
      return 1;
    }
  }
  return 0;
}
