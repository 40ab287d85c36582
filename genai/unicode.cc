#include "genai/unicode.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/uscript.h>

#include "absl/strings/str_cat.h"

namespace inferd::genai {
namespace {

// Decodes one code point at text[i]; returns its byte length (1 for an invalid byte, whose
// code point is U+FFFD).
size_t DecodeOne(absl::string_view text, size_t i, char32_t* out) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) {
    *out = b0;
    return 1;
  }
  size_t len = 0;
  char32_t c = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, c = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, c = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, c = b0 & 0x07, min = 0x10000;
  } else {
    *out = kReplacementChar;
    return 1;
  }
  if (i + len > text.size()) {
    *out = kReplacementChar;
    return 1;
  }
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) {
      *out = kReplacementChar;
      return 1;
    }
    c = (c << 6) | (b & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
    *out = kReplacementChar;
    return 1;
  }
  *out = c;
  return len;
}

}  // namespace

std::u32string DecodeUtf8(absl::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char32_t c;
    i += DecodeOne(text, i, &c);
    out.push_back(c);
  }
  return out;
}

std::vector<size_t> Utf8Offsets(absl::string_view text) {
  std::vector<size_t> out;
  out.reserve(text.size() + 1);
  for (size_t i = 0; i < text.size();) {
    out.push_back(i);
    char32_t c;
    i += DecodeOne(text, i, &c);
  }
  out.push_back(text.size());
  return out;
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string EncodeUtf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) AppendUtf8(c, &out);
  return out;
}

size_t CompleteUtf8Prefix(absl::string_view text) {
  // Look back at most 3 bytes for the lead byte of an unfinished sequence.
  const size_t n = text.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<unsigned char>(text[n - back]);
    if ((b & 0xC0) == 0x80) continue;  // a continuation byte: keep looking
    size_t need = 1;
    if ((b & 0xE0) == 0xC0) need = 2;
    if ((b & 0xF0) == 0xE0) need = 3;
    if ((b & 0xF8) == 0xF0) need = 4;
    return need > back ? n - back : n;
  }
  return n;
}

bool IsValidUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    char32_t c;
    const size_t len = DecodeOne(text, i, &c);
    if (c == kReplacementChar && len == 1) return false;
    i += len;
  }
  return true;
}

bool IsLetter(char32_t c) { return (U_GET_GC_MASK(c) & U_GC_L_MASK) != 0; }
bool IsNumber(char32_t c) { return (U_GET_GC_MASK(c) & U_GC_N_MASK) != 0; }
bool IsWhiteSpace(char32_t c) { return u_isUWhiteSpace(static_cast<UChar32>(c)); }
bool IsDigit(char32_t c) { return u_charType(static_cast<UChar32>(c)) == U_DECIMAL_DIGIT_NUMBER; }
bool IsWordChar(char32_t c) {
  return (U_GET_GC_MASK(c) & (U_GC_L_MASK | U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) != 0;
}
char32_t FoldCase(char32_t c) {
  return static_cast<char32_t>(u_foldCase(static_cast<UChar32>(c), U_FOLD_CASE_DEFAULT));
}

bool UnicodeProperty::Contains(char32_t c) const {
  if (is_script) {
    UErrorCode err = U_ZERO_ERROR;
    return uscript_getScript(static_cast<UChar32>(c), &err) == script;
  }
  return (U_GET_GC_MASK(c) & category_mask) != 0;
}

absl::StatusOr<UnicodeProperty> FindUnicodeProperty(absl::string_view name) {
  const std::string n(name);
  UnicodeProperty p;
  const int32_t mask = u_getPropertyValueEnum(UCHAR_GENERAL_CATEGORY_MASK, n.c_str());
  if (mask != UCHAR_INVALID_CODE) {
    p.category_mask = static_cast<uint32_t>(mask);
    return p;
  }
  const int32_t script = u_getPropertyValueEnum(UCHAR_SCRIPT, n.c_str());
  if (script != UCHAR_INVALID_CODE) {
    p.is_script = true;
    p.script = script;
    return p;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown Unicode property \\p{", name, "}"));
}

absl::StatusOr<std::string> Normalize(absl::string_view text, absl::string_view form) {
  UErrorCode err = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  if (form == "NFC") {
    n = icu::Normalizer2::getNFCInstance(err);
  } else if (form == "NFD") {
    n = icu::Normalizer2::getNFDInstance(err);
  } else if (form == "NFKC") {
    n = icu::Normalizer2::getNFKCInstance(err);
  } else if (form == "NFKD") {
    n = icu::Normalizer2::getNFKDInstance(err);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown normalization form '", form, "'"));
  }
  if (U_FAILURE(err)) return absl::InternalError(absl::StrCat("ICU: ", u_errorName(err)));
  const icu::UnicodeString in = icu::UnicodeString::fromUTF8(
      icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  icu::UnicodeString out = n->normalize(in, err);
  if (U_FAILURE(err)) return absl::InternalError(absl::StrCat("ICU: ", u_errorName(err)));
  std::string result;
  out.toUTF8String(result);
  return result;
}

}  // namespace inferd::genai
