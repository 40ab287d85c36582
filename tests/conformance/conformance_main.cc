// conformance: runs the ONNX backend test data through the engine and prints a table by
// operator (passed / failed / unsupported); --json writes every result.
//   conformance [--data DIR] [--suites node,simple] [--filter SUBSTR] [--json FILE] [--failures]
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_split.h"
#include "kernels/cpu/cpu_kernels.h"
#include "tests/conformance/conformance.h"

int main(int argc, char** argv) {
  inferd::tests::ConformanceOptions options;
  std::string json;
  bool show = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--data") {
      options.data_dir = next();
    } else if (arg == "--suites") {
      options.suites = absl::StrSplit(next(), ',');
    } else if (arg == "--filter") {
      options.filter = next();
    } else if (arg == "--json") {
      json = next();
    } else if (arg == "--failures") {
      show = true;
    } else {
      std::fprintf(stderr, "conformance: unknown argument '%s'\n", arg.c_str());
      return 2;
    }
  }
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
  return 0;
}
