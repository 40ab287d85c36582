// inferctl: inferd's command-line tool.
//   inferctl run MODEL ...     run a model offline through the engine (see run_command.h)
//   inferctl plan MODEL ...    print a model's partition plan (see plan_command.h)
#include <cstdio>
#include <string>
#include <vector>

#include "tools/inferctl/plan_command.h"
#include "tools/inferctl/run_command.h"

namespace {

constexpr char kUsage[] =
    "usage: inferctl COMMAND [ARGS]\n"
    "commands:\n"
    "  run MODEL [...]   run a model offline; prints latency, plan and arena figures\n"
    "  plan MODEL [...]  print the partition plan (devices, budgets, layers); runs nothing\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "run") return inferd::tools::RunCommand(args);
  if (command == "plan") return inferd::tools::PlanCommand(args);
  if (command == "help" || command == "--help" || command == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "inferctl: unknown command '%s'\n%s", command.c_str(), kUsage);
  return 2;
}
