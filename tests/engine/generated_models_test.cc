// The engine against numpy references on the generated models (tools/models): every model, with
// fusions on and off, one and two threads, static and dynamic shapes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/copy.h"
#include "engine/session.h"
#include "engine/test_data_set.h"
#include "engine/testing/runfiles.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd {
namespace {

using engine::testing::Runfile;

struct Case {
  std::string model;
  bool fusions;
  int threads;
};

std::string Name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.model + (info.param.fusions ? "_fused" : "_unfused") + "_t" +
         std::to_string(info.param.threads);
}

class GeneratedModels : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    registry_ = new engine::KernelRegistry();
    ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(*registry_).ok());
  }
  static engine::KernelRegistry* registry_;
};
engine::KernelRegistry* GeneratedModels::registry_ = nullptr;

TEST_P(GeneratedModels, MatchTheirReferences) {
  const Case& c = GetParam();
  const std::string dir = Runfile("tools/models/" + c.model);
  engine::SessionOptions opts;
  opts.enable_fusions = c.fusions;
  opts.intra_op_threads = c.threads;
  auto session = engine::Session::Load(dir + "/model.onnx", opts, *registry_);
  ASSERT_TRUE(session.ok()) << session.status();
  if (c.fusions && c.model != "wide_bottleneck" && c.model.find("decoder") == std::string::npos) {
    EXPECT_GT((*session)->fused_nodes(), 0) << "expected MatMul+Add or Conv+Relu fusions";
  }
  auto sets = engine::ReadTestDataSets(dir);
  ASSERT_TRUE(sets.ok()) << sets.status();
  ASSERT_FALSE(sets->empty());
  for (const engine::TestDataSet& set : *sets) {
    std::vector<engine::InputTensor> inputs;
    const auto graph_inputs = (*session)->inputs();
    ASSERT_EQ(graph_inputs.size(), set.inputs.size());
    for (size_t i = 0; i < set.inputs.size(); ++i) {
      const engine::NamedData& d = set.inputs[i];
      inputs.push_back({graph_inputs[i]->name, d.type, d.shape, d.bytes.data(), d.bytes.size()});
    }
    for (int repeat = 0; repeat < 2; ++repeat) {  // a second run reuses the arenas' buffers
      const uint64_t copied = engine::PayloadBytesCopied();
      auto outputs = (*session)->Run(inputs);
      // Views (Reshape) alias their input; nothing is copied on the engine's account.
      EXPECT_EQ(engine::PayloadBytesCopied(), copied);
      ASSERT_TRUE(outputs.ok()) << outputs.status();
      ASSERT_EQ(outputs->size(), set.outputs.size());
      for (size_t o = 0; o < outputs->size(); ++o) {
        const engine::OutputTensor& out = (*outputs)[o];
        absl::Status st =
            engine::CompareData(set.outputs[o], out.type, out.shape, out.buffer.data(),
                                out.buffer.size(), engine::Tolerance{1e-3, 1e-4});
        EXPECT_TRUE(st.ok()) << st;
      }
    }
  }
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const char* m : {"mlp", "mlp_dynamic", "cnn", "transformer", "transformer_dynamic",
                        "transformer_32", "transformer_ext", "decoder_step", "wide_bottleneck"}) {
    cases.push_back({m, true, 1});
    cases.push_back({m, false, 1});
    cases.push_back({m, true, 2});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(All, GeneratedModels, ::testing::ValuesIn(Cases()), Name);

}  // namespace
}  // namespace inferd
