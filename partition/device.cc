#include "partition/device.h"

namespace inferd::partition {

std::string DeviceType(absl::string_view device) {
  const size_t colon = device.find(':');
  return std::string(colon == absl::string_view::npos ? device : device.substr(0, colon));
}

bool IsHostDevice(absl::string_view device) { return DeviceType(device) == "cpu"; }

int CapabilityRank(absl::string_view device) {
  constexpr int kBand = 1'000'000;  // more than any index (kMaxDeviceIndexDigits)
  if (const int n = DeviceIndex(device, "cuda"); n >= 0) return n;
  if (const int n = DeviceIndex(device, "cpu"); n > 0) return kBand + n;
  if (device == "cpu" || device == "cpu:0") return 2 * kBand;
  return 3 * kBand;  // unknown names last
}

}  // namespace inferd::partition
