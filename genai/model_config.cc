#include "genai/model_config.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"

namespace inferd::genai {
namespace {

// Parses dir/name into `doc`; false when the file is absent.
absl::StatusOr<bool> ReadJson(const std::string& dir, const char* name, rapidjson::Document* doc) {
  std::ifstream f(dir + "/" + name, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  doc->Parse(text.c_str(), text.size());
  if (doc->HasParseError() || !doc->IsObject()) {
    return absl::InvalidArgumentError(absl::StrCat(dir, "/", name, " is not a JSON object"));
  }
  return true;
}

std::optional<int64_t> Int(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsInt64()) return std::nullopt;
  return it->value.GetInt64();
}

// eos_token_id: an int or a list of ints.
void AddIds(const rapidjson::Value& obj, const char* key, std::vector<int32_t>* ids) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return;
  auto add = [&](int32_t id) {
    if (std::find(ids->begin(), ids->end(), id) == ids->end()) ids->push_back(id);
  };
  if (it->value.IsInt()) add(it->value.GetInt());
  if (it->value.IsArray()) {
    for (const auto& v : it->value.GetArray()) {
      if (v.IsInt()) add(v.GetInt());
    }
  }
}

}  // namespace

const char* ChatTemplateName(ChatTemplate t) {
  switch (t) {
    case ChatTemplate::kChatMl:
      return "chatml";
    case ChatTemplate::kLlama3:
      return "llama3";
    case ChatTemplate::kLlama2:
      return "llama2";
    case ChatTemplate::kPlain:
      break;
  }
  return "plain";
}

absl::StatusOr<ModelConfig> LoadModelConfig(const std::string& dir) {
  ModelConfig c;
  c.dir = dir;
  rapidjson::Document doc;
  absl::StatusOr<bool> found = ReadJson(dir, "config.json", &doc);
  if (!found.ok()) return found.status();
  if (*found) {
    auto type = doc.FindMember("model_type");
    if (type != doc.MemberEnd() && type->value.IsString()) c.model_type = type->value.GetString();
    for (const char* key : {"max_position_embeddings", "n_positions"}) {
      if (auto v = Int(doc, key)) c.max_position_embeddings = static_cast<int>(*v);
    }
    if (auto v = Int(doc, "bos_token_id")) c.bos_token_id = static_cast<int32_t>(*v);
    AddIds(doc, "eos_token_id", &c.eos_token_ids);
  }
  rapidjson::Document gen;
  found = ReadJson(dir, "generation_config.json", &gen);
  if (!found.ok()) return found.status();
  if (*found) {
    AddIds(gen, "eos_token_id", &c.eos_token_ids);
    if (auto v = Int(gen, "max_length")) c.max_length = static_cast<int>(*v);
    if (auto v = Int(gen, "bos_token_id")) c.bos_token_id = static_cast<int32_t>(*v);
  }
  rapidjson::Document genai;
  found = ReadJson(dir, "genai_config.json", &genai);
  if (!found.ok()) return found.status();
  if (*found && genai.HasMember("model") && genai["model"].IsObject()) {
    const rapidjson::Value& m = genai["model"];
    c.genai_layout = true;
    if (auto v = Int(m, "context_length")) c.max_position_embeddings = static_cast<int>(*v);
    if (auto v = Int(m, "bos_token_id")) c.bos_token_id = static_cast<int32_t>(*v);
    AddIds(m, "eos_token_id", &c.eos_token_ids);
    auto type = m.FindMember("type");
    if (type != m.MemberEnd() && type->value.IsString()) c.model_type = type->value.GetString();
    if (m.HasMember("decoder") && m["decoder"].IsObject()) {
      auto file = m["decoder"].FindMember("filename");
      if (file != m["decoder"].MemberEnd() && file->value.IsString()) {
        c.model_file = file->value.GetString();
      }
      if (auto v = Int(m["decoder"], "head_size")) c.head_size = static_cast<int>(*v);
      if (auto v = Int(m["decoder"], "num_key_value_heads")) c.kv_heads = static_cast<int>(*v);
    }
    if (genai.HasMember("search") && genai["search"].IsObject() && !c.max_length) {
      if (auto v = Int(genai["search"], "max_length")) c.max_length = static_cast<int>(*v);
    }
  }
  rapidjson::Document tok;
  found = ReadJson(dir, "tokenizer_config.json", &tok);
  if (!found.ok()) return found.status();
  if (*found) {
    auto t = tok.FindMember("chat_template");
    const std::string tmpl =
        t != tok.MemberEnd() && t->value.IsString() ? t->value.GetString() : "";
    if (absl::StrContains(tmpl, "<|im_start|>")) {
      c.chat_template = ChatTemplate::kChatMl;
    } else if (absl::StrContains(tmpl, "<|start_header_id|>")) {
      c.chat_template = ChatTemplate::kLlama3;
    } else if (absl::StrContains(tmpl, "[INST]")) {
      c.chat_template = ChatTemplate::kLlama2;
    }
  }
  return c;
}

}  // namespace inferd::genai
