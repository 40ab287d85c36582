// Unicode helpers for the tokenizers: UTF-8 decoding and encoding over code points, general
// categories and properties from ICU (Debian's libicu), and NFC / NFKC normalization.
// Stateless functions; thread-safe.
#ifndef INFERD_GENAI_UNICODE_H_
#define INFERD_GENAI_UNICODE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace inferd::genai {

inline constexpr char32_t kReplacementChar = 0xFFFD;

// Decodes `text` into code points; each invalid byte becomes U+FFFD (as a lossy decoder does).
std::u32string DecodeUtf8(absl::string_view text);
// Byte offset of each code point of DecodeUtf8(text), plus text.size() at the end.
std::vector<size_t> Utf8Offsets(absl::string_view text);
void AppendUtf8(char32_t c, std::string* out);
std::string EncodeUtf8(std::u32string_view text);
// Length of the longest prefix of `text` that is complete UTF-8: an unfinished sequence at the
// end (bytes of a character still to come) is left out. Invalid bytes count as complete.
size_t CompleteUtf8Prefix(absl::string_view text);
// True when `text` is well-formed UTF-8.
bool IsValidUtf8(absl::string_view text);

bool IsLetter(char32_t c);      // \p{L}
bool IsNumber(char32_t c);      // \p{N}
bool IsWhiteSpace(char32_t c);  // \s: the White_Space property
bool IsDigit(char32_t c);       // \d: Nd
bool IsWordChar(char32_t c);    // \w: L, M, Nd, Pc
// Simple case folding (for case-insensitive regex groups).
char32_t FoldCase(char32_t c);

// A general category (L, Lu, N, Nd, P, S, ...) or script (Han, Latin, ...) named in a regex
// \p{...}: a predicate over code points. INVALID_ARGUMENT for unknown names.
struct UnicodeProperty {
  bool is_script = false;
  uint32_t category_mask = 0;  // U_GC_*_MASK bits
  int script = 0;              // UScriptCode
  bool Contains(char32_t c) const;
};
absl::StatusOr<UnicodeProperty> FindUnicodeProperty(absl::string_view name);

// Unicode normalization forms NFC, NFD, NFKC, NFKD.
absl::StatusOr<std::string> Normalize(absl::string_view text, absl::string_view form);

}  // namespace inferd::genai

#endif  // INFERD_GENAI_UNICODE_H_
