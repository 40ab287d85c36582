// inferctl: inferd's command-line tool.
//   inferctl run MODEL ...     run a model offline through the engine (see run_command.h)
//   inferctl plan MODEL ...    print a model's partition plan (see plan_command.h)
//   inferctl infer|models|load|unload|stats|trim|set-cap|reset-peak|report ...
//                              talk to a running inferd (see client_commands.h)
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "tools/inferctl/client_commands.h"
#include "tools/inferctl/plan_command.h"
#include "tools/inferctl/run_command.h"

namespace {

constexpr char kUsage[] =
    "usage: inferctl COMMAND [ARGS]\n"
    "commands:\n"
    "  run MODEL [...]   run a model offline; prints latency, plan and arena figures\n"
    "  plan MODEL [...]  print the partition plan (devices, budgets, layers); runs nothing\n"
    "client commands (a running inferd):\n";

void PrintUsage(FILE* to) {
  std::fputs(kUsage, to);
  std::fputs(inferd::tools::kClientCommandsUsage, to);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "run") return inferd::tools::RunCommand(args);
  if (command == "plan") return inferd::tools::PlanCommand(args);
  if (inferd::tools::IsClientCommand(command)) {
    return inferd::tools::RunClientCommand(command, args, std::cout, std::cerr);
  }
  if (command == "help" || command == "--help" || command == "-h") {
    PrintUsage(stdout);
    return 0;
  }
  std::fprintf(stderr, "inferctl: unknown command '%s'\n", command.c_str());
  PrintUsage(stderr);
  return 2;
}
