// The config as a whole (config.cc): the documented example, defaults, the server section and
// its rules, the admin token rule, LoadConfig (files, relative paths, the environment). The
// models section, the YAML reading rules and the value formats are tested beside their files.
#include "server/config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <type_traits>

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

static_assert(
    std::is_same_v<decltype(LoadConfig("")), absl::StatusOr<std::shared_ptr<const Config>>>,
    "a loaded Config is shared read-only");

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
  EXPECT_EQ(c.server.model_control, ModelControl::kExplicit);
  EXPECT_EQ(c.server.limits.max_loaded_models, 32);
  EXPECT_EQ(c.server.limits.host_memory_bytes, 48 * kGiB);

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
  EXPECT_EQ(mlp.source, "inferd.yaml:29");

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
  // Triton's ports: HTTP 8000, gRPC 8001, metrics 8002; the admin API beside them.
  EXPECT_EQ(c->server.http_address, "127.0.0.1:8000");
  EXPECT_EQ(c->server.grpc_address, "127.0.0.1:8001");
  EXPECT_EQ(c->server.metrics_address, "127.0.0.1:8002");
  EXPECT_EQ(c->server.admin_address, "127.0.0.1:8003");
  EXPECT_EQ(c->server.repository_poll_interval, absl::Seconds(15));
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
            "inferd.yaml:1: server.admin_address: '127.0.0.1:8003' collides with "
            "server.grpc_address ('0.0.0.0:8003')");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  http_address: 127.0.0.1:8001\n"),
            "inferd.yaml:1: server.grpc_address: '127.0.0.1:8001' collides with "
            "server.http_address ('127.0.0.1:8001')");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  http_address: none\n"
                    "  grpc_address: 127.0.0.1:8000\n"),
            "");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  repository_poll_interval: 1ms\n"),
            "inferd.yaml:3: server.repository_poll_interval: at least 100ms, got '1ms'");
  // Port 0 ("pick a free port") never collides.
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  grpc_address: 127.0.0.1:0\n"
                    "  admin_address: 127.0.0.1:0\n  metrics_address: 127.0.0.1:0\n"),
            "");
  EXPECT_EQ(ErrorOf("[1, 2]\n"),
            "inferd.yaml:1: expected a map with keys server and models, got a list");
}

TEST(ConfigAdminTokenTest, LoopbackNeedsNoToken) {
  for (const char* address : {"127.0.0.1:8003", "127.1.2.3:9", "localhost:8003", "\"[::1]:8003\"",
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
      "server:\n  model_repository: m\n  admin_address: 0.0.0.0:8003\n  admin_token: s3cret\n");
  EXPECT_EQ(c->server.admin_token, "s3cret");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_address: 0.0.0.0:8003\n"
                    "  admin_token_env: INFERD_TOKEN\n"),
            "");  // resolved (and checked) by LoadConfig
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_token: a\n  admin_token_env: B\n"),
            "inferd.yaml:4: server: set admin_token or admin_token_env, not both");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_token: \"\"\n"),
            "inferd.yaml:3: server.admin_token: the admin token is empty");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_token_env: $TOKEN\n"),
            "inferd.yaml:3: server.admin_token_env: expected an environment variable name, got "
            "'$TOKEN'");
}

// Issue 12 case 11: a token of spaces, or with whitespace or control characters, is refused.
TEST(ConfigAdminTokenTest, TokenMustBeVisibleAscii) {
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_token: \"   \"\n"),
            "inferd.yaml:3: server.admin_token: the admin token has a space at offset 0; use "
            "visible ASCII characters only (no whitespace)");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_token: \"ab\\tcd\"\n"),
            "inferd.yaml:3: server.admin_token: the admin token has a control or non-ASCII byte "
            "at offset 2; use visible ASCII characters only (no whitespace)");
  EXPECT_EQ(ErrorOf(absl::StrCat(
                "server:\n  model_repository: m\n  admin_token: ", std::string(4097, 'a'), "\n")),
            "inferd.yaml:3: server.admin_token: the admin token is 4097 bytes; at most 4096");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  admin_token: \"a-Z_0.9~+/=\"\n"), "");
}

TEST(ConfigModelControlTest, DefaultIsNoneAndExplicitIsOneLineAway) {
  EXPECT_EQ(MustParse("server:\n  model_repository: m\n")->server.model_control,
            ModelControl::kNone);
  EXPECT_EQ(MustParse("server:\n  model_repository: m\n  model_control: explicit\n")
                ->server.model_control,
            ModelControl::kExplicit);
  EXPECT_EQ(
      MustParse("server:\n  model_repository: m\n  model_control: poll\n")->server.model_control,
      ModelControl::kPoll);
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  model_control: auto\n"),
            "inferd.yaml:3: server.model_control: expected one of none, explicit, poll; got "
            "'auto'");
}

TEST(ConfigModelControlTest, ExplicitOnANonLoopbackGrpcAddressNeedsAToken) {
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  grpc_address: 0.0.0.0:8001\n"
                    "  model_control: explicit\n"),
            "inferd.yaml:4: server.model_control: explicit model control on the non-loopback "
            "grpc_address '0.0.0.0:8001' requires a bearer token: set server.admin_token or "
            "server.admin_token_env (model load/unload calls must then carry it), or bind "
            "grpc_address to 127.0.0.1");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  grpc_address: 0.0.0.0:8001\n"
                    "  model_control: explicit\n  admin_token: s3cret\n"),
            "");
  // Without model control a public inference port needs no token (as before).
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  grpc_address: 0.0.0.0:8001\n"), "");
}

TEST(ConfigLimitsTest, DefaultsAndBounds) {
  const std::shared_ptr<const Config> d = MustParse("server:\n  model_repository: m\n");
  EXPECT_EQ(d->server.limits.max_loaded_models, 256);
  EXPECT_EQ(d->server.limits.host_memory_bytes, ResourceLimits::DefaultHostMemory());
  EXPECT_TRUE(d->server.limits.host_memory_bytes.has_value());
  const std::shared_ptr<const Config> c = MustParse(
      "server:\n  model_repository: m\n  limits:\n    max_loaded_models: 3\n"
      "    host_memory: 1GiB\n");
  EXPECT_EQ(c->server.limits.max_loaded_models, 3);
  EXPECT_EQ(c->server.limits.host_memory_bytes, kGiB);
  EXPECT_FALSE(MustParse("server:\n  model_repository: m\n  limits: {host_memory: unbounded}\n")
                   ->server.limits.host_memory_bytes.has_value());
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  limits:\n    max_loaded_models: 5000\n"),
            "inferd.yaml:4: server.limits.max_loaded_models: at most 4096, got '5000'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  limits:\n    host_memory: 0\n"),
            "inferd.yaml:4: server.limits.host_memory: expected a size above 0 or 'unbounded'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  limits:\n    max_models: 1\n"),
            "inferd.yaml:4: server.limits.max_models: unknown key (known keys: "
            "max_loaded_models, host_memory)");
}

TEST(ModelNameTest, NamesAreNeverPaths) {
  for (const char* good : {"mlp", "wide_output", "a.b-c_1", "A"}) {
    EXPECT_TRUE(ValidateModelName(good).ok()) << good;
  }
  EXPECT_TRUE(ValidateModelName(std::string(128, 'x')).ok());
  for (const std::string bad :
       {std::string(""), std::string("."), std::string(".."), std::string("../outside/evil"),
        std::string("/abs/dir/evil"), std::string("./wide_output"), std::string("a/b"),
        std::string("a\0b", 3), std::string("a b"), std::string(".hidden"),
        std::string(129, 'x')}) {
    const absl::Status s = ValidateModelName(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(
      std::string(ValidateModelName(std::string("a\0b", 3)).message()),
      "invalid model name 'a\\x00\\x62': a model name is 1 to 128 letters, digits, '_', '-' or "
      "'.', not starting with '.'");
  // A huge name is quoted in at most 64 bytes.
  const std::string message(ValidateModelName(std::string(200000, 'y')).message());
  EXPECT_LT(message.size(), 250u);
  EXPECT_NE(message.find("'... (200000 bytes)"), std::string::npos) << message;
}

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
  admin_address: 0.0.0.0:8003
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
  admin_address: 0.0.0.0:8003
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

TEST(NamesTest, EnumNames) {
  EXPECT_STREQ(LogLevelName(LogLevel::kWarn), "warn");
  EXPECT_STREQ(WhenBusyName(WhenBusy::kFailFast), "fail_fast");
  EXPECT_STREQ(ModelControlName(ModelControl::kExplicit), "explicit");
}

}  // namespace
}  // namespace inferd::server
