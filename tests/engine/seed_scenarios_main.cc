// Prints the buffer-reuse scenarios' figures (tests/engine/seed_scenarios.h):
//   seed_scenarios [MODELS_DIR] [RUNS]
// MODELS_DIR and RUNS may also be given as --models_dir and --runs; a positional argument wins.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "base/flags.h"
#include "tests/engine/seed_scenarios.h"

ABSL_FLAG(std::string, models_dir, "bazel-bin/tools/models",
          "directory of the generated models (mlp/, mlp_dynamic/, wide_bottleneck/); the first "
          "positional argument, when given, wins");
ABSL_FLAG(int, runs, 100, "measured runs per scenario; the second positional argument wins");

int main(int argc, char** argv) {
  const std::vector<std::string> args = inferd::ParseCommandLine(
      argc, argv,
      "usage: seed_scenarios [MODELS_DIR] [RUNS]\n\n"
      "Runs the buffer-reuse scenarios through the engine on the generated models and prints,\n"
      "per scenario, system allocations and frees, minor page faults, copied payload bytes,\n"
      "peaks and time per run (docs/arenas.md).");
  const std::string dir = args.size() > 0 ? args[0] : absl::GetFlag(FLAGS_models_dir);
  const int runs = args.size() > 1 ? std::atoi(args[1].c_str()) : absl::GetFlag(FLAGS_runs);
  auto results = inferd::tests::RunSeedScenarios(dir, runs);
  if (!results.ok()) {
    std::fprintf(stderr, "seed_scenarios: %s\n", results.status().ToString().c_str());
    return 1;
  }
  std::printf("%s", inferd::tests::FormatResults(*results).c_str());
  return 0;
}
