#include "base/device_name.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace inferd {

int DeviceIndex(absl::string_view device, absl::string_view kind) {
  absl::string_view index = device;
  if (!absl::ConsumePrefix(&index, kind) || !absl::ConsumePrefix(&index, ":")) return -1;
  int n = 0;
  if (index.empty() || index.size() > kMaxDeviceIndexDigits ||
      !std::all_of(index.begin(), index.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(index, &n)) {
    return -1;
  }
  return n;
}

absl::StatusOr<std::string> NormalizeDeviceName(absl::string_view text) {
  if (text == "cpu") return std::string("cpu:0");
  for (absl::string_view kind : {"cpu", "cuda"}) {
    const int n = DeviceIndex(text, kind);
    if (n >= 0) return absl::StrCat(kind, ":", n);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device '", text, "': expected cpu, cpu:N or cuda:N"));
}

}  // namespace inferd
