// Devices as partition rules and budgets name them: `cpu` (read as `cpu:0`), `cpu:N` (further
// host memory domains, each with its own arenas and budget) and `cuda:N`; and DeviceSpec, one
// device of a model's partition settings. Names are normalised by base's NormalizeDeviceName,
// the one rule (and message) the server config and the tools use too. Pure functions and plain
// values; thread-safe.
#ifndef INFERD_PARTITION_DEVICE_H_
#define INFERD_PARTITION_DEVICE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/device_name.h"

namespace inferd::partition {

// One device a model may use, with its memory budget.
struct DeviceSpec {
  std::string name;                      // "cpu:0", "cpu:1", "cuda:0" (normalised or not)
  std::optional<uint64_t> budget_bytes;  // nullopt: no budget
  bool present = true;                   // exists on this machine (the engine decides)
};

// "cuda:1" -> "cuda", "cpu:0" -> "cpu": the device type kernels are registered for.
std::string DeviceType(absl::string_view device);

// True for cpu:N devices: host memory, where graph inputs are borrowed without a copy.
bool IsHostDevice(absl::string_view device);

// Order in which budget-only mode fills devices, most capable first: cuda:N (by N), then
// cpu:N with N > 0 (by N), then cpu:0. Lower rank = filled earlier.
int CapabilityRank(absl::string_view device);

}  // namespace inferd::partition

#endif  // INFERD_PARTITION_DEVICE_H_
