#include "genai/hf_components.h"

#include <unicode/uchar.h>
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "genai/unicode.h"

namespace inferd::genai {
namespace {

// GPT-2's split pattern, which ByteLevel(use_regex=true) applies.
constexpr char kGpt2Pattern[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct ByteTables {
  char32_t to_unicode[256];
  ByteTables() {
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
      to_unicode[b] = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
    }
  }
};
const ByteTables& Tables() {
  static const ByteTables* t = new ByteTables();
  return *t;
}

absl::Status Unsupported(absl::string_view stage, absl::string_view type) {
  return absl::UnimplementedError(
      absl::StrCat("tokenizer.json: ", stage, " type '", type, "' is not supported"));
}

// ---- normalizers ----

class UnicodeNormalizer : public Normalizer {
 public:
  explicit UnicodeNormalizer(std::string form) : form_(std::move(form)) {}
  absl::StatusOr<std::string> Apply(std::string text) const override {
    return Normalize(text, form_);
  }

 private:
  std::string form_;
};

class PrependNormalizer : public Normalizer {
 public:
  explicit PrependNormalizer(std::string s) : prepend_(std::move(s)) {}
  absl::StatusOr<std::string> Apply(std::string text) const override {
    if (text.empty()) return text;
    return prepend_ + text;
  }

 private:
  std::string prepend_;
};

class ReplaceNormalizer : public Normalizer {
 public:
  ReplaceNormalizer(Pattern p, std::string content)
      : pattern_(std::move(p)), content_(std::move(content)) {}
  absl::StatusOr<std::string> Apply(std::string text) const override {
    return ReplaceAll(pattern_, text, content_);
  }

 private:
  Pattern pattern_;
  std::string content_;
};

class LowercaseNormalizer : public Normalizer {
 public:
  absl::StatusOr<std::string> Apply(std::string text) const override {
    std::u32string cps = DecodeUtf8(text);
    for (char32_t& c : cps) c = static_cast<char32_t>(u_tolower(static_cast<UChar32>(c)));
    return EncodeUtf8(cps);
  }
};

class StripNormalizer : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  absl::StatusOr<std::string> Apply(std::string text) const override {
    std::u32string cps = DecodeUtf8(text);
    size_t b = 0, e = cps.size();
    while (left_ && b < e && IsWhiteSpace(cps[b])) ++b;
    while (right_ && e > b && IsWhiteSpace(cps[e - 1])) --e;
    return EncodeUtf8(std::u32string_view(cps).substr(b, e - b));
  }

 private:
  bool left_, right_;
};

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> n) : steps_(std::move(n)) {}
  absl::StatusOr<std::string> Apply(std::string text) const override {
    for (const auto& s : steps_) {
      INFERD_ASSIGN_OR_RETURN(text, s->Apply(std::move(text)));
    }
    return text;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

// ---- pre-tokenizers ----

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// Splits each piece at the matches of `pattern` (or, inverted, at what lies between them).
void SplitPieces(const Pattern& pattern, SplitBehavior behavior, bool invert,
                 std::vector<Piece>& pieces) {
  std::vector<Piece> out;
  for (Piece& p : pieces) {
    const std::u32string cps = DecodeUtf8(p.text);
    // Segments [begin, end) with whether they are matches.
    struct Seg {
      size_t b, e;
      bool match;
    };
    std::vector<Seg> segs;
    size_t pos = 0, last = 0;
    if (pattern.regex) {
      size_t b, e;
      while (pos <= cps.size() && pattern.regex->Find(cps, pos, &b, &e)) {
        if (e == b) {  // empty matches split nothing
          pos = b + 1;
          continue;
        }
        if (b > last) segs.push_back({last, b, false});
        segs.push_back({b, e, true});
        last = pos = e;
      }
    } else if (!pattern.literal.empty()) {
      const std::u32string lit = DecodeUtf8(pattern.literal);
      for (size_t at; (at = cps.find(lit, pos)) != std::u32string::npos; pos = at + lit.size()) {
        if (at > last) segs.push_back({last, at, false});
        segs.push_back({at, at + lit.size(), true});
        last = at + lit.size();
      }
    }
    if (last < cps.size()) segs.push_back({last, cps.size(), false});
    if (invert) {
      for (Seg& s : segs) s.match = !s.match;
    }
    // Group segments into pieces by the behavior.
    std::vector<std::pair<size_t, size_t>> ranges;
    bool prev_match = false, merge_next = false;
    for (const Seg& s : segs) {
      switch (behavior) {
        case SplitBehavior::kRemoved:
          if (!s.match) ranges.push_back({s.b, s.e});
          break;
        case SplitBehavior::kIsolated:
          ranges.push_back({s.b, s.e});
          break;
        case SplitBehavior::kMergedWithPrevious:
          if (s.match && !ranges.empty() && !prev_match) {
            ranges.back().second = s.e;
          } else {
            ranges.push_back({s.b, s.e});
          }
          break;
        case SplitBehavior::kMergedWithNext:
          if (merge_next && !ranges.empty()) {
            ranges.back().second = s.e;
          } else {
            ranges.push_back({s.b, s.e});
          }
          merge_next = s.match;
          break;
        case SplitBehavior::kContiguous:
          if (s.match && prev_match && !ranges.empty()) {
            ranges.back().second = s.e;
          } else {
            ranges.push_back({s.b, s.e});
          }
          break;
      }
      prev_match = s.match;
    }
    for (const auto& [b, e] : ranges) {
      out.push_back(
          Piece{EncodeUtf8(std::u32string_view(cps).substr(b, e - b)), p.at_start && b == 0});
    }
  }
  pieces = std::move(out);
}

class SplitPreTokenizer : public PreTokenizer {
 public:
  SplitPreTokenizer(Pattern p, SplitBehavior b, bool invert)
      : pattern_(std::move(p)), behavior_(b), invert_(invert) {}
  void Apply(std::vector<Piece>& pieces) const override {
    SplitPieces(pattern_, behavior_, invert_, pieces);
  }

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, std::optional<Pattern> split)
      : add_prefix_space_(add_prefix_space), split_(std::move(split)) {}
  void Apply(std::vector<Piece>& pieces) const override {
    if (add_prefix_space_) {
      for (Piece& p : pieces) {
        if (p.text.empty() || p.text[0] != ' ') p.text.insert(0, " ");
      }
    }
    if (split_) SplitPieces(*split_, SplitBehavior::kIsolated, false, pieces);
    for (Piece& p : pieces) {
      std::string mapped;
      mapped.reserve(p.text.size() * 2);
      for (unsigned char b : p.text) AppendUtf8(ByteToUnicode(b), &mapped);
      p.text = std::move(mapped);
    }
  }

 private:
  bool add_prefix_space_;
  std::optional<Pattern> split_;
};

class MetaspacePreTokenizer : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, std::string scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(std::move(scheme)), split_(split) {}
  void Apply(std::vector<Piece>& pieces) const override {
    for (Piece& p : pieces) {
      p.text = absl::StrReplaceAll(p.text, {{" ", replacement_}});
      const bool prepend = scheme_ == "always" || (scheme_ == "first" && p.at_start);
      if (prepend && p.text.compare(0, replacement_.size(), replacement_) != 0) {
        p.text.insert(0, replacement_);
      }
    }
    if (split_) {
      Pattern pat;
      pat.literal = replacement_;
      SplitPieces(pat, SplitBehavior::kMergedWithNext, false, pieces);
    }
  }

 private:
  std::string replacement_, scheme_;
  bool split_;
};

class DigitsPreTokenizer : public PreTokenizer {
 public:
  explicit DigitsPreTokenizer(bool individual) : individual_(individual) {}
  void Apply(std::vector<Piece>& pieces) const override {
    Pattern pat;
    pat.regex = *PretokenizerRegex::Compile(individual_ ? R"(\p{Nd})" : R"(\p{Nd}+)");
    SplitPieces(pat, SplitBehavior::kIsolated, false, pieces);
  }

 private:
  bool individual_;
};

class SequencePreTokenizer : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> s)
      : steps_(std::move(s)) {}
  void Apply(std::vector<Piece>& pieces) const override {
    for (const auto& s : steps_) s->Apply(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

// ---- decoders ----

class ByteLevelDecoder : public Decoder {
 public:
  std::vector<std::string> Apply(std::vector<std::string> tokens) const override {
    std::string bytes;
    for (const std::string& t : tokens) {
      std::string mapped;
      bool ok = true;
      for (char32_t c : DecodeUtf8(t)) {
        const int b = UnicodeToByte(c);
        if (b < 0) {
          ok = false;
          break;
        }
        mapped.push_back(static_cast<char>(b));
      }
      bytes += ok ? mapped : t;
    }
    return {EncodeUtf8(DecodeUtf8(bytes))};  // lossy: invalid bytes become U+FFFD
  }
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(Pattern p, std::string content)
      : pattern_(std::move(p)), content_(std::move(content)) {}
  std::vector<std::string> Apply(std::vector<std::string> tokens) const override {
    for (std::string& t : tokens) t = ReplaceAll(pattern_, t, content_);
    return tokens;
  }

 private:
  Pattern pattern_;
  std::string content_;
};

// <0xXX> tokens in a row become their bytes, decoded as UTF-8 (U+FFFD per byte if invalid).
class ByteFallbackDecoder : public Decoder {
 public:
  std::vector<std::string> Apply(std::vector<std::string> tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    size_t pending = 0;
    auto flush = [&]() {
      if (pending == 0) return;
      if (IsValidUtf8(bytes)) {
        out.push_back(bytes);
      } else {
        for (size_t i = 0; i < pending; ++i) out.push_back("\xEF\xBF\xBD");
      }
      bytes.clear();
      pending = 0;
    };
    for (std::string& t : tokens) {
      int b = -1;
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' && isxdigit(t[3]) &&
          isxdigit(t[4])) {
        b = std::stoi(t.substr(3, 2), nullptr, 16);
      }
      if (b >= 0) {
        bytes.push_back(static_cast<char>(b));
        ++pending;
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    return out;
  }
};

class FuseDecoder : public Decoder {
 public:
  std::vector<std::string> Apply(std::vector<std::string> tokens) const override {
    std::string all;
    for (const std::string& t : tokens) all += t;
    return {all};
  }
};

class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, int start, int stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  std::vector<std::string> Apply(std::vector<std::string> tokens) const override {
    const std::u32string c = DecodeUtf8(content_);
    if (c.size() != 1) return tokens;
    for (std::string& t : tokens) {
      std::u32string cps = DecodeUtf8(t);
      size_t b = 0, e = cps.size();
      for (int i = 0; i < start_ && b < e && cps[b] == c[0]; ++i) ++b;
      for (int i = 0; i < stop_ && e > b && cps[e - 1] == c[0]; ++i) --e;
      t = EncodeUtf8(std::u32string_view(cps).substr(b, e - b));
    }
    return tokens;
  }

 private:
  std::string content_;
  int start_, stop_;
};

class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first)
      : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  std::vector<std::string> Apply(std::vector<std::string> tokens) const override {
    // As Hugging Face's: in the first token every replacement character is dropped (not only
    // a leading one), elsewhere each becomes a space.
    for (size_t i = 0; i < tokens.size(); ++i) {
      tokens[i] =
          absl::StrReplaceAll(tokens[i], {{replacement_, i == 0 && strip_first_ ? "" : " "}});
    }
    return tokens;
  }

 private:
  std::string replacement_;
  bool strip_first_;
};

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> s) : steps_(std::move(s)) {}
  std::vector<std::string> Apply(std::vector<std::string> tokens) const override {
    for (const auto& s : steps_) tokens = s->Apply(std::move(tokens));
    return tokens;
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

// Metaspace's prepend_scheme, from the new field or the older add_prefix_space.
std::string PrependScheme(const rapidjson::Value& json) {
  if (json.HasMember("prepend_scheme")) return JsonString(json, "prepend_scheme", "always");
  return JsonBool(json, "add_prefix_space", true) ? "always" : "never";
}

}  // namespace

char32_t ByteToUnicode(unsigned char b) { return Tables().to_unicode[b]; }

int UnicodeToByte(char32_t c) {
  if (c < 256) {
    const bool printable = (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174;
    return printable ? static_cast<int>(c) : -1;
  }
  if (c < 256 + 68) {
    // The n-th non-printable byte maps to U+0100 + n.
    int n = static_cast<int>(c - 256);
    for (int b = 0; b < 256; ++b) {
      if (Tables().to_unicode[b] >= 256 && n-- == 0) return b;
    }
  }
  return -1;
}

std::string JsonString(const rapidjson::Value& obj, const char* key, absl::string_view dflt) {
  if (!obj.IsObject()) return std::string(dflt);
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsString()) return std::string(dflt);
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

bool JsonBool(const rapidjson::Value& obj, const char* key, bool dflt) {
  if (!obj.IsObject()) return dflt;
  auto it = obj.FindMember(key);
  return it != obj.MemberEnd() && it->value.IsBool() ? it->value.GetBool() : dflt;
}

int64_t JsonInt(const rapidjson::Value& obj, const char* key, int64_t dflt) {
  if (!obj.IsObject()) return dflt;
  auto it = obj.FindMember(key);
  return it != obj.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : dflt;
}

absl::StatusOr<Pattern> ParsePattern(const rapidjson::Value& json) {
  Pattern p;
  if (json.IsString()) {
    p.literal = std::string(json.GetString(), json.GetStringLength());
    return p;
  }
  if (json.IsObject() && json.HasMember("String") && json["String"].IsString()) {
    p.literal = JsonString(json, "String");
    return p;
  }
  if (json.IsObject() && json.HasMember("Regex") && json["Regex"].IsString()) {
    INFERD_ASSIGN_OR_RETURN(p.regex, PretokenizerRegex::Compile(JsonString(json, "Regex")));
    return p;
  }
  return absl::InvalidArgumentError("tokenizer.json: a pattern is neither String nor Regex");
}

std::string ReplaceAll(const Pattern& pattern, absl::string_view text, absl::string_view content) {
  if (!pattern.regex) {
    if (pattern.literal.empty()) return std::string(text);
    return absl::StrReplaceAll(text, {{pattern.literal, content}});
  }
  const std::u32string cps = DecodeUtf8(text);
  std::string out;
  size_t pos = 0, b, e;
  while (pos <= cps.size() && pattern.regex->Find(cps, pos, &b, &e)) {
    out += EncodeUtf8(std::u32string_view(cps).substr(pos, b - pos));
    out.append(content.data(), content.size());
    if (e == b) {
      if (b < cps.size()) AppendUtf8(cps[b], &out);
      pos = b + 1;
    } else {
      pos = e;
    }
  }
  if (pos < cps.size()) out += EncodeUtf8(std::u32string_view(cps).substr(pos));
  return out;
}

absl::StatusOr<std::unique_ptr<Normalizer>> ParseNormalizer(const rapidjson::Value& json) {
  if (json.IsNull()) return nullptr;
  const std::string type = JsonString(json, "type");
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    return std::make_unique<UnicodeNormalizer>(type);
  }
  if (type == "Prepend") return std::make_unique<PrependNormalizer>(JsonString(json, "prepend"));
  if (type == "Replace" && json.HasMember("pattern")) {
    INFERD_ASSIGN_OR_RETURN(Pattern p, ParsePattern(json["pattern"]));
    return std::make_unique<ReplaceNormalizer>(std::move(p), JsonString(json, "content"));
  }
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  if (type == "Strip") {
    return std::make_unique<StripNormalizer>(JsonBool(json, "strip_left", true),
                                             JsonBool(json, "strip_right", true));
  }
  if (type == "Sequence" && json.HasMember("normalizers") && json["normalizers"].IsArray()) {
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (const auto& n : json["normalizers"].GetArray()) {
      INFERD_ASSIGN_OR_RETURN(std::unique_ptr<Normalizer> s, ParseNormalizer(n));
      if (s) steps.push_back(std::move(s));
    }
    return std::make_unique<SequenceNormalizer>(std::move(steps));
  }
  return Unsupported("normalizer", type);
}

absl::StatusOr<std::unique_ptr<PreTokenizer>> ParsePreTokenizer(const rapidjson::Value& json) {
  if (json.IsNull()) return nullptr;
  const std::string type = JsonString(json, "type");
  if (type == "ByteLevel") {
    std::optional<Pattern> split;
    if (JsonBool(json, "use_regex", true)) {
      split.emplace();
      INFERD_ASSIGN_OR_RETURN(split->regex, PretokenizerRegex::Compile(kGpt2Pattern));
    }
    return std::make_unique<ByteLevelPreTokenizer>(JsonBool(json, "add_prefix_space", true),
                                                   std::move(split));
  }
  if (type == "Split" && json.HasMember("pattern")) {
    INFERD_ASSIGN_OR_RETURN(Pattern p, ParsePattern(json["pattern"]));
    const std::string b = JsonString(json, "behavior", "Isolated");
    SplitBehavior behavior;
    if (b == "Removed") {
      behavior = SplitBehavior::kRemoved;
    } else if (b == "Isolated") {
      behavior = SplitBehavior::kIsolated;
    } else if (b == "MergedWithPrevious") {
      behavior = SplitBehavior::kMergedWithPrevious;
    } else if (b == "MergedWithNext") {
      behavior = SplitBehavior::kMergedWithNext;
    } else if (b == "Contiguous") {
      behavior = SplitBehavior::kContiguous;
    } else {
      return Unsupported("Split behavior", b);
    }
    return std::make_unique<SplitPreTokenizer>(std::move(p), behavior,
                                               JsonBool(json, "invert", false));
  }
  if (type == "Metaspace") {
    return std::make_unique<MetaspacePreTokenizer>(JsonString(json, "replacement", "\u2581"),
                                                   PrependScheme(json),
                                                   JsonBool(json, "split", true));
  }
  if (type == "Digits") {
    return std::make_unique<DigitsPreTokenizer>(JsonBool(json, "individual_digits", false));
  }
  if (type == "Sequence" && json.HasMember("pretokenizers") && json["pretokenizers"].IsArray()) {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (const auto& p : json["pretokenizers"].GetArray()) {
      INFERD_ASSIGN_OR_RETURN(std::unique_ptr<PreTokenizer> s, ParsePreTokenizer(p));
      if (s) steps.push_back(std::move(s));
    }
    return std::make_unique<SequencePreTokenizer>(std::move(steps));
  }
  return Unsupported("pre_tokenizer", type);
}

absl::StatusOr<std::unique_ptr<Decoder>> ParseDecoder(const rapidjson::Value& json) {
  if (json.IsNull()) return nullptr;
  const std::string type = JsonString(json, "type");
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "Replace" && json.HasMember("pattern")) {
    INFERD_ASSIGN_OR_RETURN(Pattern p, ParsePattern(json["pattern"]));
    return std::make_unique<ReplaceDecoder>(std::move(p), JsonString(json, "content"));
  }
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip") {
    return std::make_unique<StripDecoder>(JsonString(json, "content", " "),
                                          static_cast<int>(JsonInt(json, "start", 0)),
                                          static_cast<int>(JsonInt(json, "stop", 0)));
  }
  if (type == "Metaspace") {
    return std::make_unique<MetaspaceDecoder>(JsonString(json, "replacement", "\u2581"),
                                              PrependScheme(json) != "never");
  }
  if (type == "Sequence" && json.HasMember("decoders") && json["decoders"].IsArray()) {
    std::vector<std::unique_ptr<Decoder>> steps;
    for (const auto& d : json["decoders"].GetArray()) {
      INFERD_ASSIGN_OR_RETURN(std::unique_ptr<Decoder> s, ParseDecoder(d));
      if (s) steps.push_back(std::move(s));
    }
    return std::make_unique<SequenceDecoder>(std::move(steps));
  }
  return Unsupported("decoder", type);
}

}  // namespace inferd::genai
