// The pipeline stages of a Hugging Face tokenizer.json, each parsed from its JSON object:
//   Normalizer    NFC / NFD / NFKC / NFKD, Prepend, Replace (string or regex), Lowercase, Strip,
//                 Sequence
//   PreTokenizer  ByteLevel (GPT-2 regex, byte-to-unicode map), Split (regex or string, all five
//                 behaviors, invert), Metaspace (replacement, prepend_scheme, split), Digits,
//                 Sequence
//   Decoder       ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence
// A stage type outside these lists is refused at load with UNIMPLEMENTED naming it, never
// silently skipped. Internal to genai/ (HfTokenizer is the public face). Immutable after
// parsing; const methods are thread-safe.
#ifndef INFERD_GENAI_HF_COMPONENTS_H_
#define INFERD_GENAI_HF_COMPONENTS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "genai/pretokenizer_regex.h"
#include "rapidjson/document.h"

namespace inferd::genai {

// One piece of text on its way to the model; `at_start`: it begins the original text (for
// Metaspace's prepend_scheme "first").
struct Piece {
  std::string text;
  bool at_start = false;
};

// GPT-2's byte-to-unicode table: printable bytes map to themselves, the others to U+0100 + n.
char32_t ByteToUnicode(unsigned char b);
// The inverse; -1 for a code point outside the table.
int UnicodeToByte(char32_t c);

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual absl::StatusOr<std::string> Apply(std::string text) const = 0;
};
// nullptr for a JSON null.
absl::StatusOr<std::unique_ptr<Normalizer>> ParseNormalizer(const rapidjson::Value& json);

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void Apply(std::vector<Piece>& pieces) const = 0;
};
absl::StatusOr<std::unique_ptr<PreTokenizer>> ParsePreTokenizer(const rapidjson::Value& json);

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Hugging Face's decode_chain: tokens in, tokens out (joined by the caller).
  virtual std::vector<std::string> Apply(std::vector<std::string> tokens) const = 0;
};
absl::StatusOr<std::unique_ptr<Decoder>> ParseDecoder(const rapidjson::Value& json);

// Reads a pattern object {"String": s} or {"Regex": r}.
struct Pattern {
  std::string literal;  // when no regex
  std::optional<PretokenizerRegex> regex;
};
absl::StatusOr<Pattern> ParsePattern(const rapidjson::Value& json);
// Replaces every match of `pattern` in `text` by `content`.
std::string ReplaceAll(const Pattern& pattern, absl::string_view text, absl::string_view content);

// JSON helpers (missing member: the default).
std::string JsonString(const rapidjson::Value& obj, const char* key, absl::string_view dflt = "");
bool JsonBool(const rapidjson::Value& obj, const char* key, bool dflt);
int64_t JsonInt(const rapidjson::Value& obj, const char* key, int64_t dflt);

}  // namespace inferd::genai

#endif  // INFERD_GENAI_HF_COMPONENTS_H_
