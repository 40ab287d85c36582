// The `models:` section (model_config_reader.cc): models as a list or a map, names, partition
// rules and shapes, the per-model config.yaml (ParseModelConfig) and the merge rule
// (MergeModelConfig).
#include "server/config.h"

#include <string>

#include "absl/strings/str_cat.h"
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
  EXPECT_EQ(
      ErrorOf("server: {model_repository: m}\nmodels:\n  - name: my model\n"),
      "inferd.yaml:3: models[0].name: expected a model name (1 to 128 letters, digits, '_', '-', "
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
            "my model/config.yaml:1: the model directory's name is not a model name: invalid "
            "model name 'my model': a model name is 1 to 128 letters, digits, '_', '-' or '.', "
            "not starting with '.'");
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
  EXPECT_EQ(m->source, "inferd.yaml:41 + models/decoder/config.yaml");

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

// Issue 12 case 6: every count of a model has a bound, named in the error.
TEST(ModelBoundsTest, CountsAreBounded) {
  const std::string head = "server: {model_repository: m}\nmodels:\n  - name: a\n";
  EXPECT_EQ(ErrorOf(head + "    threads: 30000\n"),
            "inferd.yaml:4: models[0].threads: at most 256, got 30000");
  EXPECT_EQ(ErrorOf(head + "    max_concurrent_runs: 100000\n"),
            "inferd.yaml:4: models[0].max_concurrent_runs: at most 256, got 100000");
  EXPECT_EQ(ErrorOf(head + "    queue_length: 1000000\n"),
            "inferd.yaml:4: models[0].queue_length: at most 65536, got 1000000");
  EXPECT_EQ(ErrorOf(head + "    threads: 256\n    max_concurrent_runs: 256\n"),
            "inferd.yaml:3: models[0]: threads x max_concurrent_runs at most 4096, got 256 x 256 "
            "= 65536");
  EXPECT_EQ(ErrorOf(head + "    threads: 256\n    max_concurrent_runs: 16\n"), "");
  EXPECT_EQ(ErrorOf(head + "    max_input_shapes: {x: [1099511627776, 64]}\n"),
            "inferd.yaml:4: models[0].max_input_shapes.x[0]: expected a positive integer up to "
            "2147483647, got '1099511627776'");
  EXPECT_EQ(ErrorOf(head + "    max_input_shapes: {x: [2147483647, 2147483647]}\n"),
            "inferd.yaml:4: models[0].max_input_shapes.x: at most 2^40 elements (1099511627776); "
            "the dims up to [1] already pass it");
  std::string rank65 = "[1";
  for (int i = 1; i < 65; ++i) rank65 += ", 1";
  EXPECT_EQ(ErrorOf(head + "    fixed_input_shapes: {x: " + rank65 + "]}\n"),
            "inferd.yaml:4: models[0].fixed_input_shapes.x: rank at most 64, got 65");
  std::string devices = "{";
  for (int i = 0; i < 65; ++i) devices += absl::StrCat(i == 0 ? "" : ", ", "cpu:", i, ": 1MiB");
  EXPECT_EQ(ErrorOf(head + "    partition:\n      devices: " + devices + "}\n"),
            "inferd.yaml:5: models[0].partition.devices: at most 64 devices, got 65");
  EXPECT_EQ(ErrorOf(head + "    partition: {name_rules: '" + std::string(70000, 'x') + "'}\n"),
            "inferd.yaml:4: models[0].partition.name_rules: at most 65536 bytes, got 70000");
  std::string models = "server: {model_repository: m}\nmodels:\n";
  for (int i = 0; i < 1025; ++i) models += absl::StrCat("  m", i, ": {}\n");
  EXPECT_EQ(ErrorOf(models), "inferd.yaml:1027: models.m1024: at most 1024 models, got more");
  // A model directory's config.yaml has the same bounds, and so has a merge of the two files.
  absl::StatusOr<ModelConfig> m = ParseModelConfig("threads: 100000\n", "config.yaml", "a");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "config.yaml:1: threads: at most 256, got 100000");
  absl::StatusOr<ModelConfig> dir = ParseModelConfig("threads: 64\n", "a/config.yaml", "a");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::shared_ptr<const Config> main = MustParse(head + "    max_concurrent_runs: 128\n");
  m = MergeModelConfig(main->models[0], *dir);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "model 'a' (inferd.yaml:3 + a/config.yaml): threads x max_concurrent_runs at most "
            "4096, got 64 x 128 = 8192");
}

TEST(ModelConfigBatchingTest, KeysAndDefaults) {
  const std::string head = "server: {model_repository: m}\nmodels:\n  - name: a\n";
  const std::shared_ptr<const Config> c =
      MustParse(head +
                "    max_batch_size: 8\n"
                "    dynamic_batching:\n"
                "      preferred_batch_sizes: [4, 8]\n"
                "      max_queue_delay: 500us\n"
                "      preserve_ordering: true\n"
                "      priority_levels: 2\n"
                "      default_priority_level: 2\n"
                "      default_queue_policy: {timeout: 10ms, timeout_action: delay,\n"
                "                             allow_timeout_override: true, max_queue_size: 5}\n"
                "      priority_queue_policy: {1: {timeout: 1ms}}\n");
  const ModelConfig& m = c->models[0];
  EXPECT_EQ(m.max_batch_size, 8);
  ASSERT_TRUE(m.dynamic_batching.has_value());
  const DynamicBatching& b = *m.dynamic_batching;
  EXPECT_EQ(b.preferred_batch_sizes, (std::vector<int>{4, 8}));
  EXPECT_EQ(b.max_queue_delay, absl::Microseconds(500));
  EXPECT_TRUE(b.preserve_ordering);
  EXPECT_EQ(b.priority_levels, 2);
  EXPECT_EQ(b.default_priority_level, 2);
  EXPECT_EQ(b.default_queue_policy.default_timeout, absl::Milliseconds(10));
  EXPECT_FALSE(b.default_queue_policy.reject_on_timeout);
  EXPECT_TRUE(b.default_queue_policy.allow_timeout_override);
  EXPECT_EQ(b.default_queue_policy.max_queue_size, 5);
  ASSERT_EQ(b.priority_queue_policy.count(1), 1u);
  EXPECT_EQ(b.priority_queue_policy.at(1).default_timeout, absl::Milliseconds(1));
  EXPECT_TRUE(b.priority_queue_policy.at(1).reject_on_timeout);

  const ModelConfig& d = MustParse(head)->models[0];
  EXPECT_EQ(d.max_batch_size, 0);
  EXPECT_FALSE(d.dynamic_batching.has_value());
  const ModelConfig& s =
      MustParse(head +
                "    max_batch_size: 4\n    dynamic_batching: {default_queue_timeout: 2ms}\n")
          ->models[0];
  EXPECT_EQ(s.dynamic_batching->default_queue_policy.default_timeout, absl::Milliseconds(2));
  EXPECT_TRUE(s.dynamic_batching->preferred_batch_sizes.empty());
}

TEST(ModelConfigBatchingTest, Bounds) {
  const std::string head = "server: {model_repository: m}\nmodels:\n  - name: a\n";
  EXPECT_EQ(ErrorOf(head + "    max_batch_size: 70000\n"),
            "inferd.yaml:4: models[0].max_batch_size: at most 65536, got 70000");
  EXPECT_EQ(ErrorOf(head + "    dynamic_batching: {}\n"),
            "inferd.yaml:3: models[0]: dynamic_batching needs max_batch_size > 0 (the model's "
            "batch dimension)");
  const std::string b8 = head + "    max_batch_size: 8\n    dynamic_batching:\n";
  EXPECT_EQ(ErrorOf(b8 + "      preferred_batch_sizes: [4, 16]\n"),
            "inferd.yaml:3: models[0]: dynamic_batching.preferred_batch_sizes: at most "
            "max_batch_size (8), got 16");
  EXPECT_EQ(ErrorOf(b8 + "      preferred_batch_sizes: [4, 2]\n"),
            "inferd.yaml:6: models[0].dynamic_batching.preferred_batch_sizes: sizes must be "
            "ascending, got 2 after 4");
  EXPECT_EQ(ErrorOf(b8 + "      max_queue_delay: 1m\n"),
            "inferd.yaml:6: models[0].dynamic_batching.max_queue_delay: at most 10s, got 1m");
  EXPECT_EQ(ErrorOf(b8 + "      priority_levels: 2\n"),
            "inferd.yaml:3: models[0]: dynamic_batching.default_priority_level: expected 1..2, "
            "got 0");
  EXPECT_EQ(ErrorOf(b8 + "      default_queue_policy: {timeout_action: drop}\n"),
            "inferd.yaml:6: models[0].dynamic_batching.default_queue_policy.timeout_action: "
            "expected one of reject, delay; got 'drop'");
  EXPECT_EQ(ErrorOf(b8 + "      default_queue_timeout: 1ms\n      default_queue_policy: {}\n"),
            "inferd.yaml:5: models[0].dynamic_batching: default_queue_timeout and "
            "default_queue_policy are both set: put the timeout in default_queue_policy.timeout");
  // The pair is checked once both files are merged: a config.yaml may leave the size to the
  // main config.
  absl::StatusOr<ModelConfig> dir =
      ParseModelConfig("dynamic_batching: {preferred_batch_sizes: [8]}\n", "a/config.yaml", "a");
  ASSERT_TRUE(dir.ok()) << dir.status();
  absl::StatusOr<ModelConfig> merged =
      MergeModelConfig(MustParse(head + "    max_batch_size: 4\n")->models[0], *dir);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().message(),
            "model 'a' (inferd.yaml:3 + a/config.yaml): dynamic_batching.preferred_batch_sizes: "
            "at most max_batch_size (4), got 8");
  merged = MergeModelConfig(MustParse(head + "    max_batch_size: 8\n")->models[0], *dir);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->max_batch_size, 8);
  EXPECT_EQ(merged->dynamic_batching->preferred_batch_sizes, (std::vector<int>{8}));
}

}  // namespace
}  // namespace inferd::server

namespace inferd::server {
namespace {

TEST(ModelConfigGenerationTest, KeysDefaultsAndErrors) {
  const std::shared_ptr<const Config> c =
      config_testing::MustParse(R"y(server: {model_repository: m}
models:
  llm:
    generation: {max_length: 512, max_sequences: 3, kv_cache_budget: 64MiB,
                 default_max_tokens: 32}
  plain:
    generation:
)y");
  ASSERT_EQ(c->models.size(), 2u);
  ASSERT_TRUE(c->models[0].generation.has_value());
  EXPECT_EQ(c->models[0].generation->max_length, 512);
  EXPECT_EQ(c->models[0].generation->max_sequences, 3);
  EXPECT_EQ(c->models[0].generation->kv_cache_budget, 64 * config_testing::kMiB);
  EXPECT_EQ(c->models[0].generation->default_max_tokens, 32);
  ASSERT_TRUE(c->models[1].generation.has_value());  // an empty key: the defaults
  EXPECT_EQ(c->models[1].generation->max_sequences, 4);
  EXPECT_FALSE(c->models[1].generation->kv_cache_budget.has_value());
  EXPECT_NE(config_testing::ErrorOf("server: {model_repository: m}\nmodels:\n  a:\n"
                                    "    generation: {max_sequences: 0}\n")
                .find("generation.max_sequences"),
            std::string::npos);
  EXPECT_NE(config_testing::ErrorOf("server: {model_repository: m}\nmodels:\n  a:\n"
                                    "    generation: {beams: 2}\n")
                .find("unknown key"),
            std::string::npos);
}

}  // namespace
}  // namespace inferd::server
