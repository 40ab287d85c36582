// `inferctl run`: runs a model offline through the engine, as the server would, and prints
// latency percentiles (nearest rank, base/percentile.h, as loadtest), the static plan's peak next
// to the naive sum, arena live / retained / peak, and system allocations, frees and minor page
// faults per run after warm-up.
#ifndef INFERD_TOOLS_INFERCTL_RUN_COMMAND_H_
#define INFERD_TOOLS_INFERCTL_RUN_COMMAND_H_

#include <string>
#include <vector>

namespace inferd::tools {

// argv after "run"; returns the process exit code.
int RunCommand(const std::vector<std::string>& args);

}  // namespace inferd::tools

#endif  // INFERD_TOOLS_INFERCTL_RUN_COMMAND_H_
