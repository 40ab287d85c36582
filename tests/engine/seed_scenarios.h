// The buffer-reuse acceptance scenarios, run through the engine on generated models
// (docs/arenas.md#the-scenarios). Shared by the test that asserts the counts and the program that
// prints the figures.
#ifndef INFERD_TESTS_ENGINE_SEED_SCENARIOS_H_
#define INFERD_TESTS_ENGINE_SEED_SCENARIOS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace inferd::tests {

struct ScenarioResult {
  std::string name;
  std::string model;
  int runs = 0;                          // measured runs, after warm-up
  uint64_t exec_system_allocations = 0;  // during the measured runs
  uint64_t exec_system_frees = 0;
  uint64_t io_system_allocations = 0;
  uint64_t io_system_frees = 0;
  long minor_faults = 0;
  uint64_t payload_bytes_copied = 0;
  uint64_t exec_peak_live = 0, io_peak_live = 0;
  uint64_t exec_retained = 0, io_retained = 0;
  uint64_t planned_peak = 0, naive_sum = 0;  // static plan, when there is one
  bool kept_outputs_unchanged = true;        // scenario 2
  uint64_t trimmed_bytes = 0;                // scenario 5
  long rss_before_trim = 0, rss_after_trim = 0;
  double ms_per_run = 0;
};

// `models_dir` holds the generated models (mlp/, mlp_dynamic/, wide_bottleneck/).
absl::StatusOr<std::vector<ScenarioResult>> RunSeedScenarios(const std::string& models_dir,
                                                             int runs);
std::string FormatResults(const std::vector<ScenarioResult>& results);

}  // namespace inferd::tests

#endif  // INFERD_TESTS_ENGINE_SEED_SCENARIOS_H_
