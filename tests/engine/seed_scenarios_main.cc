// Prints the seed scenarios' figures: seed_scenarios [MODELS_DIR] [RUNS]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/engine/seed_scenarios.h"

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "bazel-bin/tools/models";
  const int runs = argc > 2 ? std::atoi(argv[2]) : 100;
  auto results = inferd::tests::RunSeedScenarios(dir, runs);
  if (!results.ok()) {
    std::fprintf(stderr, "seed_scenarios: %s\n", results.status().ToString().c_str());
    return 1;
  }
  std::printf("%s", inferd::tests::FormatResults(*results).c_str());
  return 0;
}
