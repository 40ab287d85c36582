#include "base/flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, flags_test_port, 8001, "the port to listen on");
ABSL_FLAG(std::string, flags_test_name, "", "a name");

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

}  // namespace
}  // namespace inferd
