#include "server/config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace inferd::server {
namespace {

constexpr uint64_t kKiB = uint64_t{1} << 10;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

std::string ReadTestFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The error message ParseConfig gives for `yaml` ("" when it parses).
std::string ErrorOf(const std::string& yaml) {
  absl::StatusOr<std::shared_ptr<const Config>> config = ParseConfig(yaml, "inferd.yaml");
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

std::shared_ptr<const Config> MustParse(const std::string& yaml) {
  absl::StatusOr<std::shared_ptr<const Config>> config = ParseConfig(yaml, "inferd.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : std::make_shared<const Config>();
}

static_assert(
    std::is_same_v<decltype(LoadConfig("")), absl::StatusOr<std::shared_ptr<const Config>>>,
    "a loaded Config is shared read-only");

// ---------------------------------------------------------------------------------------------
// The documented example

TEST(ConfigTest, FullExampleParses) {
  const std::string text = ReadTestFile("server/testdata/inferd.yaml");
  absl::StatusOr<std::shared_ptr<const Config>> parsed = ParseConfig(text, "inferd.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Config& c = **parsed;

  EXPECT_EQ(c.file, "inferd.yaml");
  EXPECT_EQ(c.server.grpc_address, "0.0.0.0:8001");
  EXPECT_EQ(c.server.admin_address, "0.0.0.0:8002");
  EXPECT_EQ(c.server.metrics_address, "0.0.0.0:8003");
  EXPECT_EQ(c.server.admin_token_env, "INFERD_ADMIN_TOKEN");
  EXPECT_EQ(c.server.admin_token, "");  // resolved by LoadConfig only
  ASSERT_TRUE(c.server.tls.has_value());
  EXPECT_EQ(c.server.tls->cert_file, "tls/server.crt");
  EXPECT_EQ(c.server.tls->key_file, "tls/server.key");
  EXPECT_EQ(c.server.max_message_bytes, 64 * kMiB);
  EXPECT_EQ(c.server.model_repository, "models");
  EXPECT_EQ(c.server.drain_timeout, absl::Seconds(15));
  EXPECT_EQ(c.server.log_level, LogLevel::kInfo);
  EXPECT_TRUE(c.server.log_json);
  EXPECT_TRUE(c.server.load_all_models);

  ASSERT_EQ(c.models.size(), 3u);
  const ModelConfig& mlp = c.models[0];
  EXPECT_EQ(mlp.name, "mlp");
  EXPECT_EQ(mlp.path, "mlp/model.onnx");
  EXPECT_EQ(mlp.version, "1");
  EXPECT_EQ(mlp.threads, 2);
  EXPECT_EQ(mlp.max_concurrent_runs, 2);
  EXPECT_EQ(mlp.queue_length, 128);
  EXPECT_EQ(mlp.when_busy, WhenBusy::kFailFast);
  EXPECT_TRUE(mlp.pre_allocate);
  EXPECT_EQ(mlp.fixed_input_shapes.at("x"), (std::vector<int64_t>{8, 64}));
  EXPECT_TRUE(mlp.max_input_shapes.empty());
  EXPECT_TRUE(mlp.partition.devices.empty());
  EXPECT_EQ(mlp.partition.fallback_device, "cpu:0");
  ASSERT_EQ(mlp.retention_caps.size(), 1u);
  EXPECT_EQ(mlp.retention_caps.at("cpu:0").execution_bytes, 64 * kMiB);
  EXPECT_EQ(mlp.retention_caps.at("cpu:0").io_bytes, 256 * kMiB);
  EXPECT_TRUE(mlp.enable_fusions);
  EXPECT_EQ(mlp.source, "inferd.yaml:22");

  const ModelConfig& decoder = c.models[1];
  EXPECT_EQ(decoder.name, "decoder");
  EXPECT_EQ(decoder.path, "llm/decoder_step.onnx");
  EXPECT_EQ(decoder.version, "3");
  EXPECT_EQ(decoder.threads, 4);
  EXPECT_EQ(decoder.max_concurrent_runs, 1);
  EXPECT_EQ(decoder.queue_length, 64);
  EXPECT_EQ(decoder.when_busy, WhenBusy::kWait);
  EXPECT_FALSE(decoder.pre_allocate);
  EXPECT_EQ(decoder.max_input_shapes.at("input_ids"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(decoder.max_input_shapes.at("past_key"), (std::vector<int64_t>{1, 8, 2048, 64}));
  ASSERT_EQ(decoder.partition.devices.size(), 2u);
  EXPECT_EQ(decoder.partition.devices[0].device, "cpu:1");  // file order
  EXPECT_EQ(decoder.partition.devices[0].budget_bytes, 512 * kMiB);
  EXPECT_EQ(decoder.partition.devices[1].device, "cpu:0");
  EXPECT_EQ(decoder.partition.devices[1].budget_bytes, 2 * kGiB);
  EXPECT_EQ(decoder.partition.name_rules, "cpu:1(layers.[0-15]/); cpu:0(layers.[16-31]/)");
  EXPECT_EQ(decoder.partition.annotation_rules, "");
  EXPECT_EQ(decoder.partition.fallback_device, "cpu:0");
  EXPECT_FALSE(decoder.partition.fallback_on_missing_device);
  EXPECT_EQ(decoder.retention_caps.at("cpu:0").execution_bytes, 512 * kMiB);
  EXPECT_EQ(decoder.retention_caps.at("cpu:0").io_bytes, 1 * kGiB);
  EXPECT_EQ(decoder.retention_caps.at("cpu:1").execution_bytes, std::nullopt);  // unbounded
  EXPECT_EQ(decoder.retention_caps.at("cpu:1").io_bytes, 128 * kMiB);
  EXPECT_FALSE(decoder.enable_fusions);

  const ModelConfig& cnn = c.models[2];
  EXPECT_EQ(cnn.name, "cnn");
  ASSERT_EQ(cnn.partition.devices.size(), 2u);
  EXPECT_EQ(cnn.partition.devices[0].device, "cuda:0");
  EXPECT_EQ(cnn.partition.devices[0].budget_bytes, 6 * kGiB);
  EXPECT_EQ(cnn.partition.devices[1].device, "cpu:0");  // "cpu" normalised
  EXPECT_EQ(cnn.partition.devices[1].budget_bytes, std::nullopt);
  EXPECT_EQ(cnn.partition.annotation_rules, "cuda:0(backbone); cpu:0(=head)");
  EXPECT_TRUE(cnn.partition.fallback_on_missing_device);
  EXPECT_TRUE(cnn.retention_caps.empty());

  EXPECT_EQ(c.FindModel("decoder"), &decoder);
  EXPECT_EQ(c.FindModel("nope"), nullptr);
}

TEST(ConfigTest, Defaults) {
  const std::shared_ptr<const Config> c = MustParse("server:\n  model_repository: /srv/models\n");
  EXPECT_EQ(c->server.grpc_address, "127.0.0.1:8001");
  EXPECT_EQ(c->server.admin_address, "127.0.0.1:8002");
  EXPECT_EQ(c->server.metrics_address, "127.0.0.1:8003");
  EXPECT_FALSE(c->server.tls.has_value());
  EXPECT_EQ(c->server.max_message_bytes, 256 * kMiB);
  EXPECT_EQ(c->server.admin_token, "");
  EXPECT_EQ(c->server.admin_token_env, "");
  EXPECT_EQ(c->server.model_repository, "/srv/models");
  EXPECT_EQ(c->server.drain_timeout, absl::Seconds(10));
  EXPECT_EQ(c->server.log_level, LogLevel::kInfo);
  EXPECT_FALSE(c->server.log_json);
  EXPECT_TRUE(c->server.load_all_models);
  EXPECT_TRUE(c->models.empty());

  const std::shared_ptr<const Config> one =
      MustParse("server: {model_repository: m}\nmodels:\n  - name: resnet\n");
  ASSERT_EQ(one->models.size(), 1u);
  const ModelConfig& m = one->models[0];
  EXPECT_EQ(m.path, "resnet/model.onnx");
  EXPECT_EQ(m.version, "1");
  EXPECT_EQ(m.threads, 1);
  EXPECT_EQ(m.max_concurrent_runs, 1);
  EXPECT_EQ(m.queue_length, 64);
  EXPECT_EQ(m.when_busy, WhenBusy::kWait);
  EXPECT_FALSE(m.pre_allocate);
  EXPECT_TRUE(m.fixed_input_shapes.empty());
  EXPECT_TRUE(m.partition.devices.empty());
  EXPECT_EQ(m.partition.fallback_device, "cpu:0");
  EXPECT_FALSE(m.partition.fallback_on_missing_device);
  EXPECT_TRUE(m.retention_caps.empty());
  EXPECT_TRUE(m.enable_fusions);
  EXPECT_TRUE(m.keys_set.empty());
}

TEST(ConfigTest, ModelsAsMapByName) {
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

TEST(ConfigTest, KeysSetTracksWrittenSettings) {
  const std::shared_ptr<const Config> c = MustParse(R"y(server: {model_repository: m}
models:
  - name: a
    threads: 2
    partition: {annotation_rules: "cpu:0(x)", devices: {cpu: 1GiB}}
)y");
  EXPECT_EQ(c->models[0].keys_set,
            (std::set<std::string>{"threads", "partition.rules", "partition.devices"}));
}

// ---------------------------------------------------------------------------------------------
// Errors: each with its file, line and reason

TEST(ConfigErrorTest, BadValueWithLine) {
  EXPECT_EQ(ErrorOf(R"y(server:
  model_repository: m
models:
  - name: a
  - name: b
    threads: two
)y"),
            "inferd.yaml:6: models[1].threads: expected a positive integer, got 'two'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels: [{name: a, threads: 0}]\n"),
            "inferd.yaml:2: models[0].threads: expected a positive integer, got '0'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels: [{name: a, queue_length: -1}]\n"),
            "inferd.yaml:2: models[0].queue_length: expected a non-negative integer, got '-1'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels: [{name: a, max_concurrent_runs: "
                    "99999999999}]\n"),
            "inferd.yaml:2: models[0].max_concurrent_runs: expected a positive integer up to "
            "2147483647, got '99999999999'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels: [{name: a, threads: [1]}]\n"),
            "inferd.yaml:2: models[0].threads: expected a positive integer, got a list");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  log_json: yes\n"),
            "inferd.yaml:3: server.log_json: expected true or false, got 'yes'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  log_level: verbose\n"),
            "inferd.yaml:3: server.log_level: expected one of trace, debug, info, warn, error; "
            "got 'verbose'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels: [{name: a, when_busy: drop}]\n"),
            "inferd.yaml:2: models[0].when_busy: expected one of wait, fail_fast; got 'drop'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  tls: yes\n"),
            "inferd.yaml:3: server.tls: expected a map, got 'yes'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository:\n"),
            "inferd.yaml:2: server.model_repository: expected a string, got nothing");
}

TEST(ConfigErrorTest, BadByteSizeDurationDevice) {
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  max_message_bytes: 6gib\n"),
            "inferd.yaml:3: server.max_message_bytes: unknown unit 'gib' in '6gib' (units, "
            "case-sensitive: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  max_message_bytes: 4GiB\n"),
            "inferd.yaml:3: server.max_message_bytes: must be between 1 and 2147483647 bytes "
            "(gRPC's limit), got '4GiB'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  drain_timeout: 10\n"),
            "inferd.yaml:3: server.drain_timeout: expected a duration such as 250ms, 10s or 2m, "
            "got '10'");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    partition:
      devices:
        cpu:0: 1GiB
        gpu:0: 1GiB
)y"),
            "inferd.yaml:7: models[0].partition.devices.gpu:0: unknown device 'gpu:0': expected "
            "cpu, cpu:N or cuda:N");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    partition:
      devices: {cpu: 1GiB, cpu:0: 2GiB}
)y"),
            "inferd.yaml:5: models[0].partition.devices.cpu:0: device cpu:0 is listed twice");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    partition: {fallback_device: cuda}
)y"),
            "inferd.yaml:4: models[0].partition.fallback_device: unknown device 'cuda': expected "
            "cpu, cpu:N or cuda:N");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    retention_caps:
      cpu:0: {execution: lots}
)y"),
            "inferd.yaml:5: models[0].retention_caps.cpu:0.execution: expected a byte size such "
            "as 512MiB, 6GiB or 1048576, got 'lots'");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    retention_caps:
      cpu:0: {exec: 1MiB}
)y"),
            "inferd.yaml:5: models[0].retention_caps.cpu:0.exec: unknown key (known keys: "
            "execution, io)");
}

TEST(ConfigErrorTest, UnknownKeys) {
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  grcp_address: 0.0.0.0:1\n"),
            "inferd.yaml:3: server.grcp_address: unknown key; did you mean 'grpc_address'?");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodles: []\n"),
            "inferd.yaml:2: modles: unknown key; did you mean 'models'?");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels:\n  - name: a\n    gpu: true\n"),
            "inferd.yaml:4: models[0].gpu: unknown key (known keys: name, path, version, "
            "threads, max_concurrent_runs, queue_length, when_busy, pre_allocate, "
            "fixed_input_shapes, max_input_shapes, partition, retention_caps, enable_fusions)");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    partition:
      device: {cpu: 1GiB}
)y"),
            "inferd.yaml:5: models[0].partition.device: unknown key; did you mean 'devices'?");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  tls: {cert_file: a, key: b}\n"),
            "inferd.yaml:3: server.tls.key: unknown key (known keys: cert_file, key_file)");
}

TEST(ConfigErrorTest, DuplicateKeysAndModels) {
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  log_json: true\n  log_json: false\n"),
            "inferd.yaml:4: server.log_json: duplicate key (first at line 3)");
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

TEST(ConfigErrorTest, RulesAndShapes) {
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

TEST(ConfigErrorTest, ServerRules) {
  EXPECT_EQ(ErrorOf("server:\n  grpc_address: 0.0.0.0:8001\n"),
            "inferd.yaml:1: server.model_repository: required (the directory holding "
            "<name>/model.onnx)");
  EXPECT_EQ(ErrorOf(""),
            "inferd.yaml:1: server.model_repository: required (the directory holding "
            "<name>/model.onnx)");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  tls:\n    cert_file: a.crt\n"),
            "inferd.yaml:3: server.tls: set both cert_file and key_file (or neither)");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  grpc_address: 8001\n"),
            "inferd.yaml:3: server.grpc_address: expected host:port such as 127.0.0.1:8001 or "
            "[::1]:8001 or unix:/path, got '8001'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  metrics_address: ::1:9000\n"),
            "inferd.yaml:3: server.metrics_address: write an IPv6 host in brackets, e.g. "
            "[::1]:8001; got '::1:9000'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  metrics_address: 0.0.0.0:70000\n"),
            "inferd.yaml:3: server.metrics_address: expected host:port such as 127.0.0.1:8001 "
            "or [::1]:8001, got '0.0.0.0:70000'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  grpc_address: 0.0.0.0:8003\n"),
            "inferd.yaml:1: server.metrics_address: '127.0.0.1:8003' collides with "
            "server.grpc_address ('0.0.0.0:8003')");
  // Port 0 ("pick a free port") never collides.
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  grpc_address: 127.0.0.1:0\n"
                    "  admin_address: 127.0.0.1:0\n  metrics_address: 127.0.0.1:0\n"),
            "");
  EXPECT_EQ(ErrorOf("[1, 2]\n"),
            "inferd.yaml:1: expected a map with keys server and models, got a list");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\n---\nserver: {}\n"),
            "inferd.yaml:3: only one YAML document is allowed per file");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: [m\n  log_json: true\n"),
            "inferd.yaml:3: invalid YAML: end of sequence flow not found");
}

// ---------------------------------------------------------------------------------------------
// The admin token rule

TEST(ConfigAdminTokenTest, LoopbackNeedsNoToken) {
  for (const char* address : {"127.0.0.1:8002", "127.1.2.3:9", "localhost:8002", "\"[::1]:8002\"",
                              "unix:/run/inferd/admin.sock"}) {
    EXPECT_EQ(
        ErrorOf(absl::StrCat("server:\n  model_repository: m\n  admin_address: ", address, "\n")),
        "")
        << address;
  }
}

TEST(ConfigAdminTokenTest, OtherHostsNeedAToken) {
  for (const char* address : {"0.0.0.0:8002", "[::]:8002", "10.1.2.3:8002", "admin.example:1"}) {
    EXPECT_EQ(
        ErrorOf(absl::StrCat("server:\n  model_repository: m\n  admin_address: '", address, "'\n")),
        absl::StrCat("inferd.yaml:3: server.admin_address: '", address,
                     "' is not a loopback address, so the admin API requires a bearer "
                     "token: set server.admin_token or server.admin_token_env (or bind it "
                     "to 127.0.0.1)"))
        << address;
  }
  // Unquoted, a bracketed IPv6 address is a YAML list.
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_address: [::1]:8002\n"),
            "inferd.yaml:3: invalid YAML: end of map not found");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_address: [::1]\n"),
            "inferd.yaml:3: server.admin_address: expected host:port (quote an IPv6 address: "
            "\"[::]:8001\"), got a list");
  const std::shared_ptr<const Config> c = MustParse(
      "server:\n  model_repository: m\n  admin_address: 0.0.0.0:8002\n  admin_token: s3cret\n");
  EXPECT_EQ(c->server.admin_token, "s3cret");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_address: 0.0.0.0:8002\n"
                    "  admin_token_env: INFERD_TOKEN\n"),
            "");  // resolved (and checked) by LoadConfig
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_token: a\n  admin_token_env: B\n"),
            "inferd.yaml:4: server: set admin_token or admin_token_env, not both");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_token: \"\"\n"),
            "inferd.yaml:3: server.admin_token: the token is empty");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_token_env: $TOKEN\n"),
            "inferd.yaml:3: server.admin_token_env: expected an environment variable name, got "
            "'$TOKEN'");
}

// ---------------------------------------------------------------------------------------------
// LoadConfig: the file, relative paths, the environment

class LoadConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/load_config_test");
    mkdir(dir_.c_str(), 0755);
    mkdir((dir_ + "/models").c_str(), 0755);
    unsetenv("INFERD_TEST_ADMIN_TOKEN");
  }
  void TearDown() override { unsetenv("INFERD_TEST_ADMIN_TOKEN"); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
};

TEST_F(LoadConfigTest, ResolvesPathsAndTokenFromEnvironment) {
  Write("server.crt", "cert");
  Write("server.key", "key");
  const std::string path = Write("inferd.yaml", R"y(server:
  admin_address: 0.0.0.0:8002
  admin_token_env: INFERD_TEST_ADMIN_TOKEN
  model_repository: models
  tls: {cert_file: server.crt, key_file: server.key}
models:
  - name: mlp
)y");
  setenv("INFERD_TEST_ADMIN_TOKEN", "t0ken", 1);
  absl::StatusOr<std::shared_ptr<const Config>> c = LoadConfig(path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->file, path);
  EXPECT_EQ((*c)->server.admin_token, "t0ken");
  EXPECT_EQ((*c)->server.admin_token_env, "INFERD_TEST_ADMIN_TOKEN");
  EXPECT_EQ((*c)->server.model_repository, dir_ + "/models");
  EXPECT_EQ((*c)->server.tls->cert_file, dir_ + "/server.crt");
  EXPECT_EQ((*c)->server.tls->key_file, dir_ + "/server.key");
  EXPECT_EQ((*c)->models[0].path, "mlp/model.onnx");  // stays relative to the repository
}

TEST_F(LoadConfigTest, UnsetOrEmptyTokenVariableIsAnError) {
  const std::string path = Write("inferd.yaml", R"y(server:
  admin_address: 0.0.0.0:8002
  admin_token_env: INFERD_TEST_ADMIN_TOKEN
  model_repository: models
)y");
  absl::StatusOr<std::shared_ptr<const Config>> c = LoadConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            path +
                ":3: server.admin_token_env: environment variable INFERD_TEST_ADMIN_TOKEN "
                "is not set");
  setenv("INFERD_TEST_ADMIN_TOKEN", "", 1);
  c = LoadConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            path +
                ":3: server.admin_token_env: environment variable INFERD_TEST_ADMIN_TOKEN "
                "is empty");
}

TEST_F(LoadConfigTest, MissingRepositoryTlsOrFile) {
  std::string path = Write("inferd.yaml", "server:\n  model_repository: nowhere\n");
  absl::StatusOr<std::shared_ptr<const Config>> c = LoadConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), path + ":2: server.model_repository: '" + dir_ +
                                      "/nowhere' is not a directory (No such file or directory)");

  path = Write("inferd.yaml",
               "server:\n  model_repository: models\n  tls:\n    cert_file: missing.crt\n"
               "    key_file: missing.key\n");
  c = LoadConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), path + ":3: server.tls: cannot read '" + dir_ +
                                      "/missing.crt': No such file or directory");

  c = LoadConfig(dir_ + "/absent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(c.status().message(),
            "cannot read config file '" + dir_ + "/absent.yaml': No such file or directory");
}

// ---------------------------------------------------------------------------------------------
// Per-model config.yaml and the merge rule

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

// ---------------------------------------------------------------------------------------------
// Value parsers

TEST(ParseByteSizeTest, Accepts) {
  const std::pair<const char*, uint64_t> cases[] = {
      {"0", 0},
      {"1048576", 1048576},
      {"12B", 12},
      {"1KiB", kKiB},
      {"512MiB", 512 * kMiB},
      {"512 MiB", 512 * kMiB},
      {" 6GiB ", 6 * kGiB},
      {"2TiB", 2 * kGiB * kKiB},
      {"1KB", 1000},
      {"5MB", 5000000},
      {"3GB", 3000000000},
      {"1TB", 1000000000000},
      {"1.5GiB", 3 * kGiB / 2},
      {"0.5KiB", 512},
      {"2.5GB", 2500000000},
      {".25MiB", kMiB / 4},
  };
  for (const auto& [text, bytes] : cases) {
    absl::StatusOr<uint64_t> parsed = ParseByteSize(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
    EXPECT_EQ(*parsed, bytes) << text;
  }
  EXPECT_EQ(*ParseByteSize("18446744073709551615"), UINT64_MAX);
}

TEST(ParseByteSizeTest, Refuses) {
  for (const char* text :
       {"", " ", "MiB", "-1", "1.", "1.5", "1.3B", "6gib", "6 gb", "1 KiBs", "1e6", "0x10", "1,000",
        "18446744073709551616", "16777216TiB", "1 000"}) {
    EXPECT_FALSE(ParseByteSize(text).ok()) << "'" << text << "'";
  }
  EXPECT_EQ(ParseByteSize("1.3B").status().message(), "'1.3B' is not a whole number of bytes");
  EXPECT_EQ(ParseByteSize("16777216TiB").status().message(), "'16777216TiB' is too large");
  EXPECT_EQ(ParseByteSize("-1").status().message(),
            "expected a byte size such as 512MiB, 6GiB or 1048576, got '-1'");
}

TEST(ParseDurationTest, AcceptsAndRefuses) {
  EXPECT_EQ(*ParseDuration("250ms"), absl::Milliseconds(250));
  EXPECT_EQ(*ParseDuration("10s"), absl::Seconds(10));
  EXPECT_EQ(*ParseDuration("2m"), absl::Minutes(2));
  EXPECT_EQ(*ParseDuration("1h"), absl::Hours(1));
  EXPECT_EQ(*ParseDuration("1m30s"), absl::Seconds(90));
  EXPECT_EQ(*ParseDuration("1.5s"), absl::Milliseconds(1500));
  EXPECT_EQ(*ParseDuration("0"), absl::ZeroDuration());
  EXPECT_EQ(*ParseDuration(" 500us "), absl::Microseconds(500));
  for (const char* text : {"", "10", "-1s", "inf", "10 s", "ten seconds", "10S", "1d"}) {
    EXPECT_FALSE(ParseDuration(text).ok()) << "'" << text << "'";
  }
  EXPECT_EQ(ParseDuration("10").status().message(),
            "expected a duration such as 250ms, 10s or 2m, got '10'");
}

TEST(NormalizeDeviceNameTest, AcceptsAndRefuses) {
  EXPECT_EQ(*NormalizeDeviceName("cpu"), "cpu:0");
  EXPECT_EQ(*NormalizeDeviceName("cpu:0"), "cpu:0");
  EXPECT_EQ(*NormalizeDeviceName("cpu:3"), "cpu:3");
  EXPECT_EQ(*NormalizeDeviceName("cuda:0"), "cuda:0");
  EXPECT_EQ(*NormalizeDeviceName("cuda:01"), "cuda:1");
  for (const char* text : {"", "cuda", "gpu:0", "cpu:", "cpu:-1", "cpu:+1", "CPU", "cpu:0:1",
                           "cuda:x", "cpu 0", "cuda:9999999"}) {
    EXPECT_FALSE(NormalizeDeviceName(text).ok()) << "'" << text << "'";
  }
}

TEST(NamesTest, EnumNames) {
  EXPECT_STREQ(LogLevelName(LogLevel::kWarn), "warn");
  EXPECT_STREQ(WhenBusyName(WhenBusy::kFailFast), "fail_fast");
}

}  // namespace
}  // namespace inferd::server
