// What this build runs on: the kernels and device runtimes the server and the tools register.
// The default build has the CPU kernels and no device runtime (cuda:N devices are absent, with a
// message saying so); a --config=cuda build adds the CUDA kernels and the CUDA runtime, whose
// devices are present where the driver finds them.
//
// Example:
//   engine::KernelRegistry registry;
//   INFERD_RETURN_IF_ERROR(kernels::RegisterBuildKernels(registry));
//   engine::SessionOptions options;
//   options.device_runtimes = kernels::BuildDeviceRuntimes();
#ifndef INFERD_KERNELS_BUILD_KERNELS_H_
#define INFERD_KERNELS_BUILD_KERNELS_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "engine/device_runtime.h"
#include "engine/kernel_registry.h"

namespace inferd::kernels {

// Registers the CPU kernels, and the CUDA kernels in a --config=cuda build.
absl::Status RegisterBuildKernels(engine::KernelRegistry& registry);

// The runtimes of this build's device kinds (one shared instance per process): empty, or the
// CUDA runtime in a --config=cuda build.
std::vector<std::shared_ptr<const engine::DeviceRuntime>> BuildDeviceRuntimes();

// Whether this is a --config=cuda build.
bool BuiltWithCuda();

}  // namespace inferd::kernels

#endif  // INFERD_KERNELS_BUILD_KERNELS_H_
