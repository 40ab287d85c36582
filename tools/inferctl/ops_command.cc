#include "tools/inferctl/ops_command.h"

#include "absl/status/status.h"
#include "engine/kernel_registry.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd::tools {

int RunOpsCommand(std::ostream& out, std::ostream& err, bool json) {
  engine::KernelRegistry registry;
  if (absl::Status st = kernels::cpu::RegisterCpuKernels(registry); !st.ok()) {
    err << "inferctl ops: " << st << "\n";
    return 1;
  }
  out << (json ? engine::FormatKernelJson(registry) : engine::FormatKernelTable(registry));
  return 0;
}

}  // namespace inferd::tools
