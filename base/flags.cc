#include "base/flags.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace inferd {
namespace {

bool IsHelp(const char* arg) {
  return std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-help") == 0 ||
         std::strcmp(arg, "-h") == 0;
}

// Abseil's own flags (--flagfile, --fromenv, ...) are defined in its sources; ours are not.
bool IsOurs(const absl::CommandLineFlag& flag) {
  return !absl::StrContains(flag.Filename(), "absl/");
}

}  // namespace

std::string FlagsHelp(absl::string_view usage) {
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsOurs(*flag)) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const auto* a, const auto* b) { return a->Name() < b->Name(); });
  std::string out(usage);
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (!flags.empty()) out += "\nflags:\n";
  for (const absl::CommandLineFlag* flag : flags) {
    const std::string def = flag->DefaultValue();
    absl::StrAppend(&out, "  --", flag->Name(), "  ", flag->Help(),
                    " (default: ", def.empty() ? "\"\"" : def, ")\n");
  }
  return out;
}

std::vector<std::string> ParseCommandLine(int argc, char** argv, absl::string_view usage) {
  static const bool usage_set = (absl::SetProgramUsageMessage(usage), true);  // once only
  (void)usage_set;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) break;
    if (IsHelp(argv[i])) {
      std::fputs(FlagsHelp(usage).c_str(), stdout);
      std::exit(0);
    }
  }
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  return std::vector<std::string>(positional.begin() + 1, positional.end());
}

}  // namespace inferd
