// The `models:` section (model_config_reader.cc): models as a list or a map, names, partition
// rules and shapes, the per-model config.yaml (ParseModelConfig) and the merge rule
// (MergeModelConfig).
#include "server/config.h"

#include <string>

#include "gtest/gtest.h"
#include "server/config_testing.h"

namespace inferd::server {
namespace {

using config_testing::ErrorOf;
using config_testing::kGiB;
using config_testing::kMiB;
using config_testing::MustParse;
using config_testing::ReadTestFile;

TEST(ModelConfigReaderTest, ModelsAsMapByName) {
  const std::shared_ptr<const Config> c = MustParse(R"y(server: {model_repository: m}
models:
  mlp: {threads: 3}
  cnn:
)y");
  ASSERT_EQ(c->models.size(), 2u);
  EXPECT_EQ(c->models[0].name, "mlp");
  EXPECT_EQ(c->models[0].threads, 3);
  EXPECT_EQ(c->models[1].name, "cnn");
  EXPECT_EQ(c->models[1].path, "cnn/model.onnx");
  EXPECT_EQ(c->models[1].source, "inferd.yaml:4");
}

TEST(ModelConfigReaderTest, DuplicateAndMissingModels) {
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: mlp
  - name: cnn
  - name: mlp
    threads: 2
)y"),
            "inferd.yaml:5: models[2].name: duplicate model name 'mlp' (first defined at line 3)");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels:\n  - threads: 2\n"),
            "inferd.yaml:3: models[0]: missing required key 'name'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels:\n  - name: my model\n"),
            "inferd.yaml:3: models[0].name: expected a model name (letters, digits, '_', '-', "
            "'.'; not starting with '.'), got 'my model'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels:\n  mlp: {name: x}\n"),
            "inferd.yaml:3: models.mlp.name: not allowed here: the map key names the model");
}

TEST(ModelConfigReaderTest, RulesAndShapes) {
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    partition:
      name_rules: "cpu:1(layers.[0-3]/)"
      annotation_rules: "cpu:1(block)"
)y"),
            "inferd.yaml:6: models[0].partition: name_rules and annotation_rules are both set: "
            "choose one");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    fixed_input_shapes: {x: [1, 3]}
    max_input_shapes:
      y: [4]
      x: [8, 3]
)y"),
            "inferd.yaml:7: models[0]: input 'x' is in both fixed_input_shapes and "
            "max_input_shapes; keep one");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    max_input_shapes:
      x:
        - 1
        - 0
)y"),
            "inferd.yaml:7: models[0].max_input_shapes.x[1]: expected a positive integer, got "
            "'0'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels: [{name: a, fixed_input_shapes: "
                    "{x: 3}}]\n"),
            "inferd.yaml:2: models[0].fixed_input_shapes.x: expected a shape such as [1, 3, 224, "
            "224], got '3'");
}

TEST(ModelConfigTest, ParsesModelDirectoryConfig) {
  const std::string text = ReadTestFile("server/testdata/models/decoder/config.yaml");
  absl::StatusOr<ModelConfig> m = ParseModelConfig(text, "models/decoder/config.yaml", "decoder");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->name, "decoder");
  EXPECT_EQ(m->path, "decoder/decoder_step.onnx");  // made relative to the repository
  EXPECT_EQ(m->threads, 8);
  EXPECT_EQ(m->max_concurrent_runs, 3);
  EXPECT_EQ(m->queue_length, 16);
  ASSERT_EQ(m->partition.devices.size(), 1u);
  EXPECT_EQ(m->partition.devices[0].budget_bytes, 1 * kGiB);
  EXPECT_EQ(m->partition.annotation_rules, "cpu:0(block)");
  EXPECT_TRUE(m->partition.fallback_on_missing_device);
  EXPECT_EQ(m->retention_caps.at("cpu:0").io_bytes, 64 * kMiB);
  EXPECT_TRUE(m->enable_fusions);
  EXPECT_EQ(m->source, "models/decoder/config.yaml");
}

TEST(ModelConfigTest, ModelDirectoryErrors) {
  absl::StatusOr<ModelConfig> m = ParseModelConfig("threads: 2\nname: other\n", "config.yaml", "a");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "config.yaml:2: name: not allowed in a model directory's config.yaml (the "
            "directory's name, 'a', is the model's name)");
  m = ParseModelConfig("path: ../b/model.onnx\n", "config.yaml", "a");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "config.yaml:1: path: '../b/model.onnx' leaves the model directory (use a path "
            "inside it)");
  m = ParseModelConfig("path: /etc/model.onnx\n", "config.yaml", "a");
  EXPECT_FALSE(m.ok());
  m = ParseModelConfig("\n\nthreds: 2\n", "config.yaml", "a");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "config.yaml:3: threds: unknown key; did you mean 'threads'?");
  m = ParseModelConfig("threads: 2\n", "my model/config.yaml", "my model");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "my model/config.yaml:1: the model directory's name, 'my model', is not a valid model "
            "name (letters, digits, '_', '-', '.'; not starting with '.')");
  m = ParseModelConfig("", "config.yaml", "a");  // an empty file: all defaults
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->path, "a/model.onnx");
}

TEST(ModelConfigTest, MainConfigWinsKeyByKey) {
  const std::string text = ReadTestFile("server/testdata/inferd.yaml");
  absl::StatusOr<std::shared_ptr<const Config>> config = ParseConfig(text, "inferd.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<ModelConfig> dir =
      ParseModelConfig(ReadTestFile("server/testdata/models/decoder/config.yaml"),
                       "models/decoder/config.yaml", "decoder");
  ASSERT_TRUE(dir.ok()) << dir.status();

  absl::StatusOr<ModelConfig> m = MergeModelConfig(*(*config)->FindModel("decoder"), *dir);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->name, "decoder");
  EXPECT_EQ(m->path, "llm/decoder_step.onnx");  // main
  EXPECT_EQ(m->version, "3");                   // main
  EXPECT_EQ(m->threads, 4);                     // main (dir says 8)
  EXPECT_EQ(m->max_concurrent_runs, 3);         // dir only
  EXPECT_EQ(m->queue_length, 16);               // dir only
  EXPECT_EQ(m->max_input_shapes.size(), 2u);    // main
  ASSERT_EQ(m->partition.devices.size(), 2u);   // main's map, whole
  EXPECT_EQ(m->partition.devices[0].device, "cpu:1");
  // The rule mode comes from one file: main's name_rules, and the dir's annotation_rules go.
  EXPECT_EQ(m->partition.name_rules, "cpu:1(layers.[0-15]/); cpu:0(layers.[16-31]/)");
  EXPECT_EQ(m->partition.annotation_rules, "");
  EXPECT_FALSE(m->partition.fallback_on_missing_device);  // main says false
  EXPECT_EQ(m->retention_caps.size(), 2u);                // main's map, whole
  EXPECT_EQ(m->retention_caps.at("cpu:0").io_bytes, 1 * kGiB);
  EXPECT_FALSE(m->enable_fusions);  // main
  EXPECT_EQ(m->source, "inferd.yaml:34 + models/decoder/config.yaml");

  // A model the main config does not list: the directory's settings over the defaults.
  m = MergeModelConfig(DefaultModelConfig("decoder"), *dir);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->threads, 8);
  EXPECT_EQ(m->path, "decoder/decoder_step.onnx");
  EXPECT_EQ(m->partition.annotation_rules, "cpu:0(block)");
  EXPECT_EQ(m->source, "models/decoder/config.yaml");
}

TEST(ModelConfigTest, MergeRefusesFixedAndMaxShapeForOneInput) {
  const std::shared_ptr<const Config> c = MustParse(
      "server: {model_repository: m}\nmodels:\n  - name: a\n    max_input_shapes: {x: [4]}\n");
  absl::StatusOr<ModelConfig> dir =
      ParseModelConfig("fixed_input_shapes: {x: [2]}\n", "a/config.yaml", "a");
  ASSERT_TRUE(dir.ok());
  absl::StatusOr<ModelConfig> m = MergeModelConfig(c->models[0], *dir);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "model 'a' (inferd.yaml:3 + a/config.yaml): input 'x' has a fixed shape in one file "
            "and a max shape in the other; keep one");
}

}  // namespace
}  // namespace inferd::server
