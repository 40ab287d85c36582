// inferctl's client commands against the real inferd (//server:inferd with the generated mlp and
// an admin token), run in process with their output captured; and their argument errors.
#include "tools/inferctl/client_commands.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <sstream>

#include "base/npy.h"
#include "engine/test_data_set.h"
#include "engine/testing/runfiles.h"
#include "tests/server/inferd_process.h"

namespace inferd::tools {
namespace {

namespace fs = std::filesystem;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ClientArgsTest, RequiredAndUnknownFlags) {
  absl::StatusOr<ClientArgs> a = ParseClientArgs("set-cap", {"--model", "m"});
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(std::string(a.status().message()), HasSubstr("--device, --arena, --bytes"));
  EXPECT_FALSE(ParseClientArgs("stats", {"--input", "x=y.npy"}).ok());  // not a stats flag
  EXPECT_FALSE(ParseClientArgs("stats", {"--model"}).ok());             // value missing
  EXPECT_FALSE(ParseClientArgs("infer", {}).ok());                      // --model required
  EXPECT_FALSE(ParseClientArgs("infer", {"--model", "m", "--input", "x"}).ok());
  EXPECT_FALSE(ParseClientArgs("models", {"--timeout", "soon"}).ok());

  a = ParseClientArgs("set-cap", {"--model=m", "--device", "cpu", "--arena=io", "--bytes", "512MiB",
                                  "--admin-addr", "10.0.0.1:9", "--token", "t"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->model, "m");
  EXPECT_EQ(a->arena, "io");
  EXPECT_EQ(a->cap_bytes, std::optional<uint64_t>(512u << 20));
  EXPECT_EQ(a->admin_addr, "10.0.0.1:9");
  EXPECT_EQ(a->token, "t");

  a = ParseClientArgs("infer", {"--model", "m", "--input", "x=a.npy", "--input", "y=b.npy",
                                "--random", "--timeout", "2s"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->inputs.size(), 2u);
  EXPECT_TRUE(a->random);
  EXPECT_EQ(a->timeout, absl::Seconds(2));

  std::ostringstream out, err;
  EXPECT_EQ(RunClientCommand("stats", {"--bogus"}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("does not take '--bogus'"));
  EXPECT_THAT(err.str(), HasSubstr("set-cap --model M"));  // the usage follows
}

TEST(ClientArgsTest, CapBytes) {
  EXPECT_EQ(*ParseCapBytes("unbounded"), std::nullopt);
  EXPECT_EQ(*ParseCapBytes("512MiB"), std::optional<uint64_t>(512u << 20));
  EXPECT_EQ(*ParseCapBytes("0"), std::optional<uint64_t>(0));
  EXPECT_FALSE(ParseCapBytes("lots").ok());
  EXPECT_FALSE(ParseCapBytes("-1").ok());
}

class ClientCommandsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    unsetenv("INFERD_ADMIN_TOKEN");
    inferd::testing::InferdProcess::Options o;
    o.models = {{"mlp", "tools/models/mlp"}};
    o.server_yaml = "  admin_token: cli-secret\n  model_control: explicit\n";
    auto p = inferd::testing::InferdProcess::Start("inferctl", o);
    ASSERT_TRUE(p.ok()) << p.status();
    inferd_ = p->release();
  }
  static void TearDownTestSuite() { delete inferd_; }
  void TearDown() override {
    if (HasFailure())
      std::cerr << "out:\n" << out_ << "err:\n" << err_ << "\ninferd log:\n" << inferd_->Log();
  }

  // Runs `command` against the test's inferd (its KServe or admin address; the token for admin
  // commands unless `token` is false); output in out_ and err_.
  int Run(const std::string& command, std::vector<std::string> args, bool token = true) {
    const bool admin =
        command != "infer" && command != "models" && command != "load" && command != "unload";
    args.insert(args.end(), {admin ? "--admin-addr" : "--addr",
                             admin ? inferd_->admin_address() : inferd_->address()});
    // Model control (load, unload) is on the KServe port but takes the admin token.
    const bool control = command == "load" || command == "unload";
    if ((admin || control) && token) args.insert(args.end(), {"--token", "cli-secret"});
    std::ostringstream out, err;
    const int rc = RunClientCommand(command, args, out, err);
    out_ = out.str();
    err_ = err.str();
    return rc;
  }

  static inferd::testing::InferdProcess* inferd_;
  std::string out_, err_;
};
inferd::testing::InferdProcess* ClientCommandsTest::inferd_ = nullptr;

TEST_F(ClientCommandsTest, Models) {
  ASSERT_EQ(Run("models", {}), 0) << err_;
  EXPECT_THAT(out_, HasSubstr("MODEL"));
  EXPECT_THAT(out_, ContainsRegex("mlp +1 +READY"));
}

TEST_F(ClientCommandsTest, InferWithNpyInputWritesReferenceOutputs) {
  absl::StatusOr<std::vector<engine::TestDataSet>> sets =
      engine::ReadTestDataSets(engine::testing::Runfile("tools/models/mlp"));
  ASSERT_TRUE(sets.ok() && !sets->empty());
  const engine::TestDataSet& set = (*sets)[0];
  const fs::path dir = fs::path(engine::testing::TempDir()) / "infer_npy";
  fs::create_directories(dir);
  const engine::NamedData& x = set.inputs[0];
  NpyArray in{
      "<f4", {x.shape.dims().begin(), x.shape.dims().end()}, {x.bytes.begin(), x.bytes.end()}};
  ASSERT_TRUE(WriteNpy((dir / "x.npy").string(), in).ok());

  ASSERT_EQ(Run("infer", {"--model", "mlp", "--input", x.name + "=" + (dir / "x.npy").string(),
                          "--output-dir", (dir / "out").string()}),
            0)
      << err_;
  EXPECT_THAT(out_, HasSubstr("model mlp version 1: 2 output(s)"));
  EXPECT_THAT(out_, ContainsRegex("probs +FP32 +\\[4,10\\] +160"));
  for (const engine::NamedData& want : set.outputs) {
    absl::StatusOr<NpyArray> got = ReadNpy((dir / "out" / (want.name + ".npy")).string());
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->dtype, "<f4");
    absl::Status same = engine::CompareData(want, engine::DataType::kFloat32,
                                            engine::Shape(absl::MakeConstSpan(got->shape)),
                                            got->data.data(), got->data.size(), {});
    EXPECT_TRUE(same.ok()) << want.name << ": " << same;
  }
}

TEST_F(ClientCommandsTest, InferRandomAndInputErrors) {
  ASSERT_EQ(Run("infer", {"--model", "mlp", "--random"}), 0) << err_;
  EXPECT_THAT(out_, ContainsRegex("logits +FP32 +\\[4,10\\]"));

  EXPECT_EQ(Run("infer", {"--model", "mlp"}), 2);
  EXPECT_THAT(err_, HasSubstr("no data for input(s) x"));
  EXPECT_EQ(Run("infer", {"--model", "mlp", "--input", "y=/nonexistent.npy"}), 2);
  EXPECT_THAT(err_, HasSubstr("has no input 'y'; its inputs: x"));
  EXPECT_EQ(Run("infer", {"--model", "mlp", "--input", "x=/nonexistent.npy"}), 1);
  EXPECT_EQ(Run("infer", {"--model", "nope", "--random"}), 1);
  EXPECT_THAT(err_, HasSubstr("NOT_FOUND"));
}

TEST_F(ClientCommandsTest, StatsTable) {
  ASSERT_EQ(Run("infer", {"--model", "mlp", "--random"}), 0) << err_;
  ASSERT_EQ(Run("stats", {}), 0) << err_;
  EXPECT_THAT(out_, HasSubstr("MODEL  DEVICE  ARENA"));
  EXPECT_THAT(out_, ContainsRegex("mlp +cpu:0 +execution .* unbounded"));
  EXPECT_THAT(out_, ContainsRegex("mlp +cpu:0 +io "));
  EXPECT_THAT(out_, HasSubstr("total: live "));

  ASSERT_EQ(Run("stats", {"--arena", "io"}), 0) << err_;
  EXPECT_THAT(out_, Not(HasSubstr("execution")));
  EXPECT_EQ(Run("stats", {"--model", "nope"}), 1);
  EXPECT_THAT(err_, HasSubstr("inferctl stats: NOT_FOUND: no model 'nope'"));
  EXPECT_EQ(Run("stats", {"--arena", "heap"}), 1);
  EXPECT_THAT(err_, HasSubstr("INVALID_ARGUMENT"));
}

TEST_F(ClientCommandsTest, SetCapTrimResetPeakReport) {
  ASSERT_EQ(Run("infer", {"--model", "mlp", "--random"}), 0) << err_;
  ASSERT_EQ(
      Run("set-cap", {"--model", "mlp", "--device", "cpu", "--arena", "io", "--bytes", "1KiB"}), 0)
      << err_;
  EXPECT_THAT(out_, ContainsRegex("mlp +cpu:0 +io +1.0 KiB"));
  EXPECT_THAT(out_, HasSubstr("evicted "));
  ASSERT_EQ(Run("stats", {"--arena", "io"}), 0);
  EXPECT_THAT(out_, ContainsRegex("mlp +cpu:0 +io .* 1.0 KiB"));
  ASSERT_EQ(Run("set-cap",
                {"--model", "mlp", "--device", "cpu:0", "--arena", "io", "--bytes", "unbounded"}),
            0)
      << err_;
  EXPECT_THAT(out_, ContainsRegex("mlp +cpu:0 +io +unbounded"));
  EXPECT_EQ(
      Run("set-cap", {"--model", "mlp", "--device", "cuda:0", "--arena", "io", "--bytes", "0"}), 1);
  EXPECT_THAT(err_, HasSubstr("NOT_FOUND"));

  ASSERT_EQ(Run("infer", {"--model", "mlp", "--random"}), 0) << err_;
  ASSERT_EQ(Run("trim", {"--model", "mlp"}), 0) << err_;
  EXPECT_THAT(out_, HasSubstr("RELEASED"));
  EXPECT_THAT(out_, HasSubstr(" in total"));

  ASSERT_EQ(Run("reset-peak", {"--model", "mlp", "--arena", "execution"}), 0) << err_;
  EXPECT_THAT(out_, ContainsRegex("mlp +cpu:0 +execution"));

  ASSERT_EQ(Run("report", {"--model", "mlp"}), 0) << err_;
  EXPECT_THAT(out_, HasSubstr("model mlp version 1\npartition plan: "));
  EXPECT_EQ(Run("report", {"--model", "mlp", "--version", "9"}), 1);
}

TEST_F(ClientCommandsTest, AdminTokenFromFlagOrEnvironment) {
  EXPECT_EQ(Run("stats", {}, /*token=*/false), 1);
  EXPECT_THAT(err_, HasSubstr("UNAUTHENTICATED"));
  EXPECT_EQ(Run("stats", {"--token", "wrong"}, /*token=*/false), 1);
  setenv("INFERD_ADMIN_TOKEN", "cli-secret", 1);
  EXPECT_EQ(Run("stats", {}, /*token=*/false), 0) << err_;
  unsetenv("INFERD_ADMIN_TOKEN");
}

// Last: unloads and reloads mlp.
TEST_F(ClientCommandsTest, ZUnloadAndLoad) {
  ASSERT_EQ(Run("unload", {"--model", "mlp"}), 0) << err_;
  EXPECT_EQ(out_, "unloaded mlp\n");
  ASSERT_EQ(Run("models", {}), 0);
  EXPECT_THAT(out_, ContainsRegex("mlp +1 +UNAVAILABLE +unloaded"));
  EXPECT_EQ(Run("stats", {"--model", "mlp"}), 1);
  EXPECT_THAT(err_, HasSubstr("FAILED_PRECONDITION"));
  ASSERT_EQ(Run("load", {"--model", "mlp"}), 0) << err_;
  ASSERT_EQ(Run("models", {}), 0);
  EXPECT_THAT(out_, ContainsRegex("mlp +1 +READY"));
  EXPECT_EQ(Run("load", {"--model", "nope"}), 1);
  EXPECT_EQ(Run("unload", {"--model", "mlp"}, /*token=*/false), 1);
  EXPECT_THAT(err_, HasSubstr("UNAUTHENTICATED"));
}

}  // namespace
}  // namespace inferd::tools
