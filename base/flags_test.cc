#include "base/flags.h"

#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, flags_test_port, 8001, "the port to listen on");
ABSL_FLAG(std::string, flags_test_name, "", "a name");
ABSL_FLAG(bool, flags_test_quiet, false, "say less");
ABSL_FLAG(bool, flags_test_fusions, true, "fuse nodes");
ABSL_FLAG(inferd::RepeatedFlag, flags_test_input, {}, "NAME=FILE");
ABSL_FLAG(std::string, flags_test_model_version, "", "the model version");

namespace inferd {
namespace {

std::vector<std::string> Parse(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data(), "usage: t [flags] ARGS");
}

TEST(FlagsTest, ParsesBothFormsAndKeepsPositionalsInOrder) {
  std::vector<std::string> pos =
      Parse({"t", "a", "--flags_test_port=9", "b", "--flags_test_name", "x", "--", "--c"});
  EXPECT_EQ(absl::GetFlag(FLAGS_flags_test_port), 9);
  EXPECT_EQ(absl::GetFlag(FLAGS_flags_test_name), "x");
  EXPECT_EQ(pos, (std::vector<std::string>{"a", "b", "--c"}));
}

TEST(FlagsTest, HelpListsOurFlagsWithDefaultsAndNotAbseilsOwn) {
  const std::string help = FlagsHelp("usage: t [flags] ARGS");
  EXPECT_EQ(help.rfind("usage: t [flags] ARGS\n", 0), 0u) << help;
  EXPECT_NE(help.find("--flags_test_port  the port to listen on (default: 8001)"),
            std::string::npos)
      << help;
  EXPECT_NE(help.find("--flags_test_name  a name (default: \"\")"), std::string::npos) << help;
  EXPECT_EQ(help.find("--flagfile"), std::string::npos) << help;
}

TEST(FlagsTest, HelpExitsZeroAndUnknownFlagsExitOne) {
  EXPECT_EXIT(Parse({"t", "--help"}), testing::ExitedWithCode(0), "");
  EXPECT_EXIT(Parse({"t", "--no_such_flag=1"}), testing::ExitedWithCode(1), "no_such_flag");
  EXPECT_EXIT(Parse({"t", "--flags_test_port=abc"}), testing::ExitedWithCode(1), "flags_test_port");
}

TEST(FlagsTest, DashesBoolsAndRepeatedFlags) {
  std::vector<std::string> pos =
      Parse({"t", "--flags-test-port", "10", "-flags_test_quiet", "--noflags-test-fusions",
             "--flags-test-input", "a=x,y.npy", "m.onnx",
             "--flags_test_input=b=", "-flags-test-input", "c=z"});
  EXPECT_EQ(absl::GetFlag(FLAGS_flags_test_port), 10);
  EXPECT_TRUE(absl::GetFlag(FLAGS_flags_test_quiet));
  EXPECT_FALSE(absl::GetFlag(FLAGS_flags_test_fusions));
  EXPECT_EQ(absl::GetFlag(FLAGS_flags_test_input).values,
            (std::vector<std::string>{"a=x,y.npy", "b=", "c=z"}));
  EXPECT_EQ(pos, (std::vector<std::string>{"m.onnx"}));
  Parse({"t", "--flags_test_quiet=false", "--no-flags-test-fusions", "--flags_test_input="});
  EXPECT_FALSE(absl::GetFlag(FLAGS_flags_test_quiet));
  EXPECT_FALSE(absl::GetFlag(FLAGS_flags_test_fusions));
  EXPECT_EQ(absl::GetFlag(FLAGS_flags_test_input).values, (std::vector<std::string>{""}));
}

TEST(FlagsTest, ParseArgsTakesOnlyTheSpecsFlagsFromTheirDefaults) {
  const CommandLineSpec spec{"usage: t sub [flags]", {"flags-test-port", "flags-test-input"}};
  absl::StatusOr<ParsedArgs> a =
      ParseArgs({"--flags-test-port=7", "x", "--flags-test-input", "i"}, spec);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->help);
  EXPECT_EQ(a->positional, (std::vector<std::string>{"x"}));
  EXPECT_EQ(a->given, (std::set<std::string>{"flags_test_port", "flags_test_input"}));
  EXPECT_EQ(absl::GetFlag(FLAGS_flags_test_port), 7);

  // A second parse starts from the defaults: nothing carries over, not even a flag that this
  // spec does not take.
  ASSERT_TRUE(ParseArgs({"--flags-test-name=n"}, CommandLineSpec{"", {"flags-test-name"}}).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_flags_test_name), "n");
  a = ParseArgs({}, spec);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->given.empty());
  EXPECT_EQ(absl::GetFlag(FLAGS_flags_test_port), 8001);
  EXPECT_TRUE(absl::GetFlag(FLAGS_flags_test_input).values.empty());
  EXPECT_EQ(absl::GetFlag(FLAGS_flags_test_name), "");

  EXPECT_EQ(ParseArgs({"--flags_test_name=x"}, spec).status().message(),
            "unknown flag --flags_test_name");  // defined, but not this command's
  EXPECT_EQ(ParseArgs({"--flags-test-port"}, spec).status().message(),
            "--flags-test-port needs a value");
  EXPECT_FALSE(ParseArgs({"--flags-test-port", "x"}, spec).ok());
  EXPECT_TRUE(ParseArgs({"a", "-h", "--bogus"}, spec)->help);
  EXPECT_EQ(ParseArgs({"--", "-h"}, spec)->positional, (std::vector<std::string>{"-h"}));
}

TEST(FlagsTest, HelpOfASpecListsItsFlagsInOrderAsSpelled) {
  const std::string help = FlagsHelp(
      CommandLineSpec{"usage: t sub", {"flags-test-port", "flags-test-input", "flags-test-quiet"}});
  EXPECT_EQ(help,
            "usage: t sub\n\nflags:\n"
            "  --flags-test-port  the port to listen on (default: 8001)\n"
            "  --flags-test-input  NAME=FILE (repeatable)\n"
            "  --flags-test-quiet  say less (default: false)\n");
}

TEST(FlagsTest, ASpecMaySpellAFlagUnderAnotherName) {
  // Abseil's usage library defines --version itself; a command can still take one.
  const CommandLineSpec spec{"usage: t", {"version=flags_test_model_version"}};
  absl::StatusOr<ParsedArgs> a = ParseArgs({"--version", "3"}, spec);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(absl::GetFlag(FLAGS_flags_test_model_version), "3");
  EXPECT_EQ(a->given, (std::set<std::string>{"flags_test_model_version"}));
  EXPECT_NE(FlagsHelp(spec).find("  --version  the model version (default: \"\")\n"),
            std::string::npos)
      << FlagsHelp(spec);
  EXPECT_FALSE(ParseArgs({"--flags_test_model_version=3"}, spec).ok());
}

TEST(FlagsTest, ErrorExitCodeIsTheSpecs) {
  std::vector<std::string> args = {"t", "--no_such_flag"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  EXPECT_EXIT(ParseCommandLine(2, argv.data(), CommandLineSpec{"usage: t", {}, 64}),
              testing::ExitedWithCode(64), "t: unknown flag --no_such_flag\nusage: t");
}

}  // namespace
}  // namespace inferd
