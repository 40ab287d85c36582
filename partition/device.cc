#include "partition/device.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace inferd::partition {
namespace {

constexpr int kMaxIndexDigits = 6;

// "cuda:3" -> 3, or -1 when the text is not `<kind>:<digits>`.
int IndexOf(absl::string_view device, absl::string_view kind) {
  absl::string_view index = device;
  if (!absl::ConsumePrefix(&index, kind) || !absl::ConsumePrefix(&index, ":")) return -1;
  int n = 0;
  if (index.empty() || index.size() > kMaxIndexDigits ||
      !std::all_of(index.begin(), index.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(index, &n)) {
    return -1;
  }
  return n;
}

}  // namespace

absl::StatusOr<std::string> NormalizeDeviceName(absl::string_view text) {
  if (text == "cpu") return std::string("cpu:0");
  for (absl::string_view kind : {"cpu", "cuda"}) {
    const int n = IndexOf(text, kind);
    if (n >= 0) return absl::StrCat(kind, ":", n);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device '", text, "': expected cpu, cpu:N or cuda:N"));
}

std::string DeviceType(absl::string_view device) {
  const size_t colon = device.find(':');
  return std::string(colon == absl::string_view::npos ? device : device.substr(0, colon));
}

bool IsHostDevice(absl::string_view device) { return DeviceType(device) == "cpu"; }

int CapabilityRank(absl::string_view device) {
  constexpr int kBand = 1'000'000;  // more than any index (6 digits)
  if (const int n = IndexOf(device, "cuda"); n >= 0) return n;
  if (const int n = IndexOf(device, "cpu"); n > 0) return kBand + n;
  if (device == "cpu" || device == "cpu:0") return 2 * kBand;
  return 3 * kBand;  // unknown names last
}

}  // namespace inferd::partition
