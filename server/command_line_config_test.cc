// Tests of tritonserver's command line overlaid on the config (server/command_line_config.h).
#include "server/command_line_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/testing/runfiles.h"

namespace inferd::server {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class CommandLineConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(engine::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "models");
  }
  std::string WriteConfig(const std::string& text) {
    const fs::path p = dir_ / "inferd.yaml";
    std::ofstream(p) << text;
    return p.string();
  }
  CommandLineOverrides Repo() {
    CommandLineOverrides o;
    o.model_repository = (dir_ / "models").string();
    return o;
  }
  std::string Error(const CommandLineOverrides& o) {
    absl::StatusOr<std::shared_ptr<const Config>> c = BuildConfig(o);
    return c.ok() ? "ok" : std::string(c.status().message());
  }
  fs::path dir_;
};

TEST_F(CommandLineConfigTest, ModelRepositoryAloneNeedsNoYaml) {
  CommandLineOverrides o = Repo();
  o.grpc_port = 0;
  o.http_port = 9000;
  o.metrics_port = 0;
  o.repository_poll_secs = 3;
  o.model_control_mode = "poll";
  o.exit_timeout_secs = 7;
  o.log_verbose = 1;
  absl::StatusOr<std::shared_ptr<const Config>> c = BuildConfig(o);
  ASSERT_TRUE(c.ok()) << c.status();
  const ServerConfig& s = (*c)->server;
  EXPECT_EQ(s.model_repository, (dir_ / "models").string());
  EXPECT_EQ(s.grpc_address, "127.0.0.1:0");  // inferd keeps loopback unless told otherwise
  EXPECT_EQ(s.http_address, "127.0.0.1:9000");
  EXPECT_EQ(s.metrics_address, "127.0.0.1:0");
  EXPECT_EQ(s.model_control, ModelControl::kPoll);
  EXPECT_EQ(s.repository_poll_interval, absl::Seconds(3));
  EXPECT_EQ(s.drain_timeout, absl::Seconds(7));
  EXPECT_EQ(s.log_level, LogLevel::kDebug);
  EXPECT_TRUE(s.load_all_models);
}

TEST_F(CommandLineConfigTest, PortsKeepTheConfigsHostAndAddressFlagsSetIt) {
  CommandLineOverrides o;
  o.config_path = WriteConfig(
      "server:\n  model_repository: models\n  grpc_address: 127.0.0.2:8001\n"
      "  admin_token: secret-token\n");
  o.grpc_port = 0;
  o.http_host = "0.0.0.0";
  o.allow_http = true;
  absl::StatusOr<std::shared_ptr<const Config>> c = BuildConfig(o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->server.grpc_address, "127.0.0.2:0");
  EXPECT_EQ((*c)->server.http_address, "0.0.0.0:8000");
  EXPECT_EQ((*c)->server.admin_token, "secret-token");
  EXPECT_EQ((*c)->server.model_repository, (dir_ / "models").string());  // file-relative
  o.allow_http = false;
  c = BuildConfig(o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->server.http_address, "");
}

TEST_F(CommandLineConfigTest, ExplicitModeLoadsOnlyTheNamedModels) {
  CommandLineOverrides o = Repo();
  o.model_control_mode = "explicit";
  absl::StatusOr<std::shared_ptr<const Config>> c = BuildConfig(o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE((*c)->server.load_all_models);
  EXPECT_TRUE((*c)->models.empty());
  o.load_models = {"a", "b", "a"};
  c = BuildConfig(o);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ((*c)->models.size(), 2u);
  EXPECT_EQ((*c)->models[0].name, "a");
  EXPECT_EQ((*c)->models[1].name, "b");
  o.load_models = {"*"};
  c = BuildConfig(o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE((*c)->server.load_all_models);
  // Added to a config's map of models too.
  o.model_repository.clear();
  o.config_path = WriteConfig("server:\n  model_repository: models\nmodels:\n  a: {threads: 2}\n");
  o.load_models = {"a", "c"};
  c = BuildConfig(o);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ((*c)->models.size(), 2u);
  EXPECT_EQ((*c)->FindModel("a")->threads, 2);
  EXPECT_NE((*c)->FindModel("c"), nullptr);
}

TEST_F(CommandLineConfigTest, BadFlagsAndTheConfigsRulesAreRefused) {
  EXPECT_THAT(Error(CommandLineOverrides()), HasSubstr("--model-repository"));
  CommandLineOverrides o = Repo();
  o.model_control_mode = "sometimes";
  EXPECT_THAT(Error(o), HasSubstr("--model-control-mode"));
  o = Repo();
  o.load_models = {"a"};
  EXPECT_THAT(Error(o), HasSubstr("--load-model needs --model-control-mode=explicit"));
  o.model_control_mode = "explicit";
  o.load_models = {"../x"};
  EXPECT_THAT(Error(o), HasSubstr("model name"));
  o = Repo();
  o.grpc_port = 70000;
  EXPECT_THAT(Error(o), HasSubstr("--grpc-port"));
  o = Repo();
  o.repository_poll_secs = 0;
  EXPECT_THAT(Error(o), HasSubstr("--repository-poll-secs"));
  o = Repo();
  o.model_repository = (dir_ / "absent").string();
  EXPECT_THAT(Error(o), HasSubstr("absent"));
  // The security rules still decide: explicit control on every interface needs a token.
  o = Repo();
  o.grpc_host = "0.0.0.0";
  o.model_control_mode = "explicit";
  EXPECT_THAT(Error(o), HasSubstr("token"));
  o = Repo();
  o.grpc_port = 8005;
  o.http_port = 8005;
  EXPECT_NE(Error(o), "ok");  // the addresses must differ
  // A broken file names its own line.
  o = CommandLineOverrides();
  o.config_path = WriteConfig("server:\n  model_repository: models\n  threads: 2\n");
  o.grpc_port = 0;
  EXPECT_THAT(Error(o), HasSubstr("inferd.yaml:3"));
}

}  // namespace
}  // namespace inferd::server
