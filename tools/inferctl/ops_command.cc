#include "tools/inferctl/ops_command.h"

#include <cstdio>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/flags.h"
#include "engine/kernel_registry.h"
#include "kernels/build_kernels.h"
#include "tools/inferctl/inferctl_flags.h"

namespace inferd::tools {

int RunOpsCommand(std::ostream& out, std::ostream& err, bool json) {
  engine::KernelRegistry registry;
  if (absl::Status st = kernels::RegisterBuildKernels(registry); !st.ok()) {
    err << "inferctl ops: " << st << "\n";
    return 1;
  }
  out << (json ? engine::FormatKernelJson(registry) : engine::FormatKernelTable(registry));
  return 0;
}

int OpsCommand(const std::vector<std::string>& args) {
  static const CommandLineSpec* spec = new CommandLineSpec{
      "usage: inferctl ops [--json]\n\nLists every kernel: domain, operator, opset range, device "
      "and element types.\n",
      {"json"}};
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, *spec);
  if (!parsed.ok()) {
    std::fprintf(stderr, "inferctl ops: %s\n%s", std::string(parsed.status().message()).c_str(),
                 spec->usage.c_str());
    return 2;
  }
  if (parsed->help) {
    std::fputs(FlagsHelp(*spec).c_str(), stdout);
    return 0;
  }
  if (!parsed->positional.empty()) {
    std::fprintf(stderr, "inferctl ops: takes no arguments\n%s", spec->usage.c_str());
    return 2;
  }
  return RunOpsCommand(std::cout, std::cerr, absl::GetFlag(FLAGS_json));
}

}  // namespace inferd::tools
