#include "genai/hf_tokenizer.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "genai/unicode.h"

namespace inferd::genai {
namespace {

absl::Status Bad(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("tokenizer.json: ", what));
}

bool IsSpaceByte(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

absl::Status ParseVocabAndMerges(const rapidjson::Value& model,
                                 std::unordered_map<std::string, int32_t>* vocab,
                                 std::vector<std::pair<std::string, std::string>>* merges) {
  if (!model.HasMember("vocab") || !model["vocab"].IsObject()) return Bad("model.vocab missing");
  for (const auto& m : model["vocab"].GetObject()) {
    if (!m.value.IsInt()) return Bad("a vocabulary id is not an integer");
    vocab->emplace(std::string(m.name.GetString(), m.name.GetStringLength()), m.value.GetInt());
  }
  if (!model.HasMember("merges")) return absl::OkStatus();
  if (!model["merges"].IsArray()) return Bad("model.merges is not a list");
  for (const auto& m : model["merges"].GetArray()) {
    if (m.IsString()) {  // "left right" (older files)
      const absl::string_view s(m.GetString(), m.GetStringLength());
      const size_t space = s.find(' ', 1);
      if (space == absl::string_view::npos) return Bad(absl::StrCat("merge '", s, "'"));
      merges->emplace_back(std::string(s.substr(0, space)), std::string(s.substr(space + 1)));
    } else if (m.IsArray() && m.Size() == 2 && m[0].IsString() && m[1].IsString()) {
      merges->emplace_back(std::string(m[0].GetString(), m[0].GetStringLength()),
                           std::string(m[1].GetString(), m[1].GetStringLength()));
    } else {
      return Bad("a merge is neither \"a b\" nor [a, b]");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<HfTokenizer>> HfTokenizer::Load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << f.rdbuf();
  absl::StatusOr<std::unique_ptr<HfTokenizer>> t = Parse(ss.str());
  if (!t.ok())
    return absl::Status(t.status().code(), absl::StrCat(path, ": ", t.status().message()));
  return t;
}

absl::StatusOr<std::unique_ptr<HfTokenizer>> HfTokenizer::Parse(absl::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return Bad("not a JSON object");
  std::unique_ptr<HfTokenizer> t(new HfTokenizer());
  if (!doc.HasMember("model") || !doc["model"].IsObject()) return Bad("no model");
  const rapidjson::Value& model = doc["model"];
  const std::string type = JsonString(model, "type", "BPE");
  if (type != "BPE") {
    return absl::UnimplementedError(
        absl::StrCat("tokenizer.json: model type '", type, "' is not supported (BPE is)"));
  }
  std::unordered_map<std::string, int32_t> vocab;
  std::vector<std::pair<std::string, std::string>> merges;
  INFERD_RETURN_IF_ERROR(ParseVocabAndMerges(model, &vocab, &merges));
  BpeOptions options;
  if (model.HasMember("unk_token") && model["unk_token"].IsString()) {
    options.unk_token = JsonString(model, "unk_token");
  }
  options.fuse_unk = JsonBool(model, "fuse_unk", false);
  options.byte_fallback = JsonBool(model, "byte_fallback", false);
  options.ignore_merges = JsonBool(model, "ignore_merges", false);
  options.continuing_subword_prefix = JsonString(model, "continuing_subword_prefix");
  options.end_of_word_suffix = JsonString(model, "end_of_word_suffix");
  INFERD_ASSIGN_OR_RETURN(BpeModel bpe,
                          BpeModel::Create(std::move(vocab), merges, std::move(options)));
  t->model_ = std::make_unique<BpeModel>(std::move(bpe));
  static const rapidjson::Value kNull;
  auto member = [&](const char* key) -> const rapidjson::Value& {
    auto it = doc.FindMember(key);
    return it == doc.MemberEnd() ? kNull : it->value;
  };
  INFERD_ASSIGN_OR_RETURN(t->normalizer_, ParseNormalizer(member("normalizer")));
  INFERD_ASSIGN_OR_RETURN(t->pre_tokenizer_, ParsePreTokenizer(member("pre_tokenizer")));
  INFERD_ASSIGN_OR_RETURN(t->decoder_, ParseDecoder(member("decoder")));
  INFERD_RETURN_IF_ERROR(t->ParseAddedTokens(member("added_tokens")));
  INFERD_RETURN_IF_ERROR(t->ParsePostProcessor(member("post_processor")));
  return t;
}

absl::Status HfTokenizer::ParseAddedTokens(const rapidjson::Value& json) {
  added_by_first_byte_.resize(256);
  if (json.IsNull()) return absl::OkStatus();
  if (!json.IsArray()) return Bad("added_tokens is not a list");
  for (const auto& a : json.GetArray()) {
    AddedToken tok;
    tok.content = JsonString(a, "content");
    if (tok.content.empty() || !a.HasMember("id") || !a["id"].IsInt() || a["id"].GetInt() < 0) {
      return Bad("an added token has no content or id");
    }
    tok.id = a["id"].GetInt();
    tok.special = JsonBool(a, "special", false);
    tok.lstrip = JsonBool(a, "lstrip", false);
    tok.rstrip = JsonBool(a, "rstrip", false);
    tok.single_word = JsonBool(a, "single_word", false);
    added_by_id_[tok.id] = added_.size();
    added_by_first_byte_[static_cast<unsigned char>(tok.content[0])].push_back(added_.size());
    added_.push_back(std::move(tok));
  }
  return absl::OkStatus();
}

absl::Status HfTokenizer::ParsePostProcessor(const rapidjson::Value& json) {
  if (json.IsNull()) return absl::OkStatus();
  const std::string type = JsonString(json, "type");
  auto id_of = [&](const std::string& token) -> absl::StatusOr<int32_t> {
    std::optional<int32_t> id = TokenToId(token);
    if (!id)
      return Bad(absl::StrCat("post_processor token '", token, "' is not in the vocabulary"));
    return *id;
  };
  if (type == "ByteLevel") return absl::OkStatus();
  if (type == "Sequence" && json.HasMember("processors") && json["processors"].IsArray()) {
    for (const auto& p : json["processors"].GetArray()) {
      INFERD_RETURN_IF_ERROR(ParsePostProcessor(p));
    }
    return absl::OkStatus();
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    // {"cls": ["[CLS]", 101], "sep": ["[SEP]", 102]}: cls A sep.
    std::vector<TemplateItem> items(3);
    for (const char* key : {"cls", "sep"}) {
      if (!json.HasMember(key) || !json[key].IsArray() || json[key].Size() != 2 ||
          !json[key][1].IsInt()) {
        return Bad(absl::StrCat(type, ": '", key, "' is not [token, id]"));
      }
    }
    items[0].ids = {json["cls"][1].GetInt()};
    items[1].sequence = true;
    items[2].ids = {json["sep"][1].GetInt()};
    template_ = std::move(items);
    return absl::OkStatus();
  }
  if (type == "TemplateProcessing" && json.HasMember("single") && json["single"].IsArray()) {
    std::vector<TemplateItem> items;
    for (const auto& piece : json["single"].GetArray()) {
      TemplateItem item;
      if (piece.HasMember("Sequence")) {
        item.sequence = true;
      } else if (piece.HasMember("SpecialToken")) {
        const std::string name = JsonString(piece["SpecialToken"], "id");
        const rapidjson::Value* specials =
            json.HasMember("special_tokens") ? &json["special_tokens"] : nullptr;
        if (specials != nullptr && specials->IsObject() && specials->HasMember(name.c_str()) &&
            (*specials)[name.c_str()].HasMember("ids") &&
            (*specials)[name.c_str()]["ids"].IsArray()) {
          for (const auto& id : (*specials)[name.c_str()]["ids"].GetArray()) {
            if (!id.IsInt()) return Bad("a template special token id is not an integer");
            item.ids.push_back(id.GetInt());
          }
        } else {
          INFERD_ASSIGN_OR_RETURN(int32_t id, id_of(name));
          item.ids.push_back(id);
        }
      } else {
        return Bad("TemplateProcessing: an item is neither Sequence nor SpecialToken");
      }
      items.push_back(std::move(item));
    }
    template_ = std::move(items);
    return absl::OkStatus();
  }
  return absl::UnimplementedError(
      absl::StrCat("tokenizer.json: post_processor type '", type, "' is not supported"));
}

const HfTokenizer::AddedToken* HfTokenizer::MatchAdded(absl::string_view text, size_t pos) const {
  const AddedToken* best = nullptr;
  for (size_t i : added_by_first_byte_[static_cast<unsigned char>(text[pos])]) {
    const AddedToken& a = added_[i];
    if (text.compare(pos, a.content.size(), a.content) != 0) continue;
    if (a.single_word) {
      const bool left_ok = pos == 0 || !isalnum(static_cast<unsigned char>(text[pos - 1]));
      const size_t end = pos + a.content.size();
      const bool right_ok = end >= text.size() || !isalnum(static_cast<unsigned char>(text[end]));
      if (!left_ok || !right_ok) continue;
    }
    if (best == nullptr || a.content.size() > best->content.size()) best = &a;
  }
  return best;
}

absl::Status HfTokenizer::EncodeSpan(absl::string_view span, bool at_start,
                                     std::vector<int32_t>* ids) const {
  if (span.empty()) return absl::OkStatus();
  std::string text(span);
  if (normalizer_) {
    INFERD_ASSIGN_OR_RETURN(text, normalizer_->Apply(std::move(text)));
  }
  std::vector<Piece> pieces{Piece{std::move(text), at_start}};
  if (pre_tokenizer_) pre_tokenizer_->Apply(pieces);
  for (const Piece& p : pieces) model_->Tokenize(p.text, ids);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int32_t>> HfTokenizer::Encode(absl::string_view text,
                                                         bool add_special_tokens) const {
  std::vector<int32_t> ids;
  // pass 1: cut added tokens out of the raw text; encode the spans between them.
  size_t span_begin = 0;
  for (size_t pos = 0; pos < text.size();) {
    const AddedToken* a = MatchAdded(text, pos);
    if (a == nullptr) {
      ++pos;
      continue;
    }
    size_t span_end = pos;
    if (a->lstrip) {
      while (span_end > span_begin && IsSpaceByte(text[span_end - 1])) --span_end;
    }
    INFERD_RETURN_IF_ERROR(
        EncodeSpan(text.substr(span_begin, span_end - span_begin), span_begin == 0, &ids));
    ids.push_back(a->id);
    pos += a->content.size();
    if (a->rstrip) {
      while (pos < text.size() && IsSpaceByte(text[pos])) ++pos;
    }
    span_begin = pos;
  }
  INFERD_RETURN_IF_ERROR(EncodeSpan(text.substr(span_begin), span_begin == 0, &ids));
  // pass 2: the post-processor's special tokens.
  if (!add_special_tokens || !template_) return ids;
  std::vector<int32_t> out;
  out.reserve(ids.size() + 4);
  for (const TemplateItem& item : *template_) {
    if (item.sequence) {
      out.insert(out.end(), ids.begin(), ids.end());
    } else {
      out.insert(out.end(), item.ids.begin(), item.ids.end());
    }
  }
  return out;
}

std::string HfTokenizer::Decode(absl::Span<const int32_t> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    auto added = added_by_id_.find(id);
    if (added != added_by_id_.end()) {
      if (skip_special_tokens && added_[added->second].special) continue;
      tokens.push_back(added_[added->second].content);
      continue;
    }
    const std::string* t = model_->IdToToken(id);
    if (t != nullptr) tokens.push_back(*t);
  }
  if (!decoder_) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) absl::StrAppend(&out, i ? " " : "", tokens[i]);
    return out;
  }
  std::string out;
  for (const std::string& t : decoder_->Apply(std::move(tokens))) out += t;
  return out;
}

int32_t HfTokenizer::vocab_size() const {
  int32_t n = model_->size();
  for (const AddedToken& a : added_) n = std::max(n, a.id + 1);
  return n;
}

std::optional<int32_t> HfTokenizer::TokenToId(absl::string_view token) const {
  for (const AddedToken& a : added_) {
    if (a.content == token) return a.id;
  }
  return model_->TokenToId(token);
}

std::string HfTokenizer::IdToToken(int32_t id) const {
  auto added = added_by_id_.find(id);
  if (added != added_by_id_.end()) return added_[added->second].content;
  const std::string* t = model_->IdToToken(id);
  return t == nullptr ? std::string() : *t;
}

bool HfTokenizer::IsSpecial(int32_t id) const {
  auto added = added_by_id_.find(id);
  return added != added_by_id_.end() && added_[added->second].special;
}

}  // namespace inferd::genai
