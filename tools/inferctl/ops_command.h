// `inferctl ops`: prints every kernel inferd has, one definition per line (domain, operator,
// opset range, device, element types), from a registry filled by RegisterCpuKernels; with
// --json, the same as a JSON array (engine::FormatKernelJson). Needs no model and no device.
//
//   inferctl ops [--json]
//
// Exit codes: 0 listing printed; 1 the kernels could not be registered (the reason on stderr).
#ifndef INFERD_TOOLS_INFERCTL_OPS_COMMAND_H_
#define INFERD_TOOLS_INFERCTL_OPS_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace inferd::tools {

// Writes the listing to `out` (a table, or JSON when `json`), errors to `err`; returns the exit
// code.
int RunOpsCommand(std::ostream& out, std::ostream& err, bool json);

// `inferctl ops [--json]` on the arguments after "ops": parses them (base/flags.h), answers
// --help, and runs RunOpsCommand on stdout / stderr. 2 for a bad command line.
int OpsCommand(const std::vector<std::string>& args);

}  // namespace inferd::tools

#endif  // INFERD_TOOLS_INFERCTL_OPS_COMMAND_H_
