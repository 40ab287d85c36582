// Acceptance of the buffer-reuse design through the engine: after warm-up with stable shapes,
// no system allocation or free, no new minor page fault, no payload copy; kept outputs unchanged.
#include "tests/engine/seed_scenarios.h"

#include <gtest/gtest.h>

#include "engine/testing/runfiles.h"

namespace inferd::tests {
namespace {

TEST(SeedScenarios, SteadyStateAllocatesFaultsAndCopiesNothing) {
  auto results = RunSeedScenarios(engine::testing::Runfile("tools/models"), 20);
  ASSERT_TRUE(results.ok()) << results.status();
  std::printf("%s", FormatResults(*results).c_str());
  ASSERT_EQ(results->size(), 5u);
  for (const ScenarioResult& r : *results) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(r.exec_system_allocations, 0u);
    EXPECT_EQ(r.exec_system_frees, 0u);
    EXPECT_EQ(r.payload_bytes_copied, 0u);
    EXPECT_EQ(r.io_system_frees, 0u);
    if (r.name == "every earlier output kept alive") {
      // Each kept output pins its buffer: the IOArena grows by the outputs of every run (mlp has
      // two), less the two buffers the warm-up left retained; new buffers mean new pages.
      EXPECT_EQ(r.io_system_allocations, 2u * r.runs - 2);
      EXPECT_TRUE(r.kept_outputs_unchanged);
    } else {
      EXPECT_EQ(r.io_system_allocations, 0u);
      EXPECT_EQ(r.minor_faults, 0);
    }
  }
  const ScenarioResult& wide = (*results)[2];
  EXPECT_GT(wide.planned_peak, 0u);
  EXPECT_LT(wide.planned_peak, wide.naive_sum);
  const ScenarioResult& trim = (*results)[4];
  EXPECT_GT(trim.trimmed_bytes, 16u << 20);
  EXPECT_LT(trim.rss_after_trim, trim.rss_before_trim - static_cast<long>(trim.trimmed_bytes) / 2);
}

}  // namespace
}  // namespace inferd::tests
