#include "engine/registry_workspace_estimator.h"

#include <memory>
#include <optional>
#include <utility>

#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::engine {
namespace {

using partition::testing::GraphBuilder;

// A kernel for `op` on `device_type`, never made; its estimate is `estimate` (a failure when it
// is negative), or there is none.
KernelDef Def(const std::string& op, const std::string& device_type,
              std::optional<int64_t> estimate) {
  KernelDef def;
  def.op_type = op;
  def.device_type = device_type;
  def.create = [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return absl::UnimplementedError("fake kernel");
  };
  if (estimate) {
    const int64_t bytes = *estimate;
    def.estimate_workspace = [bytes](const KernelInfo& info) -> absl::StatusOr<size_t> {
      if (bytes < 0) return absl::FailedPreconditionError("shapes not static");
      // The estimate sees the node: its inputs with their shapes and constants.
      if (info.num_inputs() != 2) return absl::InternalError("wrong inputs");
      return static_cast<size_t>(bytes);
    };
  }
  return def;
}

struct AddGraph {
  GraphBuilder b;
  Graph* g;
  AddGraph() {
    b.Input("x", {256}).Weight("w", {256});
    b.Node("A", "Add", {"x", "w"}, {"a"}, {256});
    b.Output("a");
    g = &b.graph();
  }
};

TEST(RegistryWorkspaceEstimatorTest, AsksTheKernelOfTheDevicesType) {
  AddGraph m;
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register(Def("Add", "cpu", 100)).ok());
  RegistryWorkspaceEstimator estimator(registry);
  EXPECT_EQ(estimator.EstimateWorkspace(*m.g, 0, "cpu:0"), 100u);
  EXPECT_EQ(estimator.EstimateWorkspace(*m.g, 0, "cpu:3"), 100u);
  // No kernel registered for cuda.
  EXPECT_EQ(estimator.EstimateWorkspace(*m.g, 0, "cuda:0"), std::nullopt);
}

TEST(RegistryWorkspaceEstimatorTest, NoEstimateOrAFailedOneIsNullopt) {
  AddGraph m;
  KernelRegistry none, failing, empty;
  ASSERT_TRUE(none.Register(Def("Add", "cpu", std::nullopt)).ok());
  ASSERT_TRUE(failing.Register(Def("Add", "cpu", -1)).ok());
  EXPECT_EQ(RegistryWorkspaceEstimator(none).EstimateWorkspace(*m.g, 0, "cpu:0"), std::nullopt);
  EXPECT_EQ(RegistryWorkspaceEstimator(failing).EstimateWorkspace(*m.g, 0, "cpu:0"), std::nullopt);
  EXPECT_EQ(RegistryWorkspaceEstimator(empty).EstimateWorkspace(*m.g, 0, "cpu:0"), std::nullopt);
}

}  // namespace
}  // namespace inferd::engine
