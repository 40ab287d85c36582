// Device names as configs, partition rules and command lines write them: "cpu" (read as "cpu:0"),
// "cpu:N" (further host memory domains) and "cuda:N". One spelling rule and one error message for
// the server config, the partitioner and inferctl. Pure function; thread-safe.
//
// Example:
//   inferd::NormalizeDeviceName("cpu");     // "cpu:0"
//   inferd::NormalizeDeviceName("cuda:01"); // "cuda:1"
//   inferd::NormalizeDeviceName("gpu:0");   // INVALID_ARGUMENT "unknown device 'gpu:0': ..."
#ifndef INFERD_BASE_DEVICE_NAME_H_
#define INFERD_BASE_DEVICE_NAME_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace inferd {

// The most digits a device index may have.
inline constexpr int kMaxDeviceIndexDigits = 6;

// "cpu" -> "cpu:0"; "cpu:N" and "cuda:N" -> themselves without leading zeros ("cpu:01" ->
// "cpu:1"), N at most 6 digits. Anything else (other kinds, upper case, signs, spaces, a missing
// index): INVALID_ARGUMENT "unknown device '<text>': expected cpu, cpu:N or cuda:N".
absl::StatusOr<std::string> NormalizeDeviceName(absl::string_view text);

// "cuda:3" with kind "cuda" -> 3; -1 when `device` is not `<kind>:<digits>` as above.
int DeviceIndex(absl::string_view device, absl::string_view kind);

}  // namespace inferd

#endif  // INFERD_BASE_DEVICE_NAME_H_
