// inferctl: inferd's command-line tool.
//   inferctl run MODEL ...     run a model offline through the engine (see run_command.h)
//   inferctl plan MODEL ...    print a model's partition plan (see plan_command.h)
//   inferctl ops [--json]      list every kernel (operator, opsets, device, types)
//   inferctl check MODEL ...   can the model run, or every reason it cannot (check_command.h)
//   inferctl generate|chat DIR generate from / chat with a decoder model (generate_command.h)
//   inferctl infer|models|load|unload|stats|trim|set-cap|reset-peak|report ...
//                              talk to a running inferd (see client_commands.h)
//
// `inferctl SUBCOMMAND [flags] ARGS`: each subcommand parses its own flags (base/flags.h, the
// flags in inferctl_flags.h) and answers `inferctl SUBCOMMAND --help`; `inferctl --help` lists
// the subcommands. A new subcommand is one more row of kSubcommands.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "tools/inferctl/check_command.h"
#include "tools/inferctl/chat_command.h"
#include "tools/inferctl/client_commands.h"
#include "tools/inferctl/generate_command.h"
#include "tools/inferctl/ops_command.h"
#include "tools/inferctl/plan_command.h"
#include "tools/inferctl/run_command.h"

namespace {

// One subcommand: its name, its line in `inferctl --help` (empty: listed by another row), and
// the function that runs it on the arguments after its name and returns the exit status.
struct Subcommand {
  const char* name;
  const char* help;
  int (*run)(const std::string& name, const std::vector<std::string>& args);
};

int Run(const std::string&, const std::vector<std::string>& args) {
  return inferd::tools::RunCommand(args);
}

int Plan(const std::string&, const std::vector<std::string>& args) {
  return inferd::tools::PlanCommand(args);
}

int Ops(const std::string&, const std::vector<std::string>& args) {
  return inferd::tools::OpsCommand(args);
}

int Check(const std::string&, const std::vector<std::string>& args) {
  return inferd::tools::CheckCommand(args, std::cout, std::cerr);
}

int Generate(const std::string&, const std::vector<std::string>& args) {
  return inferd::tools::GenerateCommand(args);
}

int Chat(const std::string&, const std::vector<std::string>& args) {
  return inferd::tools::ChatCommand(args);
}

int Client(const std::string& name, const std::vector<std::string>& args) {
  return inferd::tools::RunClientCommand(name, args, std::cout, std::cerr);
}

constexpr Subcommand kSubcommands[] = {
    {"run", "  run MODEL [...]   run a model offline; prints latency, plan and arena figures\n",
     Run},
    {"plan",
     "  plan MODEL [...]  print the partition plan (devices, budgets, layers); runs nothing\n",
     Plan},
    {"ops", "  ops [--json]      list every kernel: operator, opset range, device, element types\n",
     Ops},
    {"check",
     "  check MODEL [...] can the model run here: its operators and plan, or every reason it "
     "cannot\n",
     Check},
    {"generate",
     "  generate DIR --prompt TEXT [...]  generate from a decoder model folder (streams text)\n",
     Generate},
    {"chat", "  chat DIR [...]    chat with a decoder model folder (one turn per line)\n", Chat},
    // Against a running inferd; their lines are kClientCommandsUsage.
    {"infer", "", Client},
    {"models", "", Client},
    {"load", "", Client},
    {"unload", "", Client},
    {"stats", "", Client},
    {"trim", "", Client},
    {"set-cap", "", Client},
    {"reset-peak", "", Client},
    {"report", "", Client},
};

void PrintUsage(FILE* to) {
  std::fputs(
      "usage: inferctl COMMAND [flags] [ARGS]   (inferctl COMMAND --help: its flags)\n"
      "commands:\n",
      to);
  for (const Subcommand& c : kSubcommands) std::fputs(c.help, to);
  std::fputs("client commands (a running inferd):\n", to);
  std::fputs(inferd::tools::kClientCommandsUsage, to);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  for (const Subcommand& c : kSubcommands) {
    if (command == c.name) return c.run(command, args);
  }
  if (command == "help" || command == "--help" || command == "-help" || command == "-h") {
    PrintUsage(stdout);
    return 0;
  }
  std::fprintf(stderr, "inferctl: unknown command '%s'\n", command.c_str());
  PrintUsage(stderr);
  return 2;
}
