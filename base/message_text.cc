#include "base/message_text.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace inferd {

std::string QuoteForMessage(absl::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return absl::StrCat("'", absl::CHexEscape(s), "'");
  return absl::StrCat("'", absl::CHexEscape(s.substr(0, max_bytes)), "'... (", s.size(), " bytes)");
}

std::string BoundMessage(absl::string_view message) {
  if (message.size() <= kMaxMessageBytes) return std::string(message);
  const std::string tail = absl::StrCat("... (", message.size(), " bytes in all)");
  size_t keep = kMaxMessageBytes - tail.size();
  // Do not split a UTF-8 sequence: back up over continuation bytes (10xxxxxx).
  while (keep > 0 && (static_cast<unsigned char>(message[keep]) & 0xC0) == 0x80) --keep;
  return absl::StrCat(message.substr(0, keep), tail);
}

}  // namespace inferd
