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

// Reads decoder.inputs / decoder.outputs names into `names`; a cache template must hold exactly
// one %d and no other %.
absl::Status ReadNames(const rapidjson::Value& decoder, const std::string& dir,
                       DecoderNames* names) {
  struct Key {
    const char* group;
    const char* key;
    std::string* name;
    bool layer_template;
  };
  const Key keys[] = {
      {"inputs", "input_ids", &names->input_ids, false},
      {"inputs", "attention_mask", &names->attention_mask, false},
      {"inputs", "position_ids", &names->position_ids, false},
      {"inputs", "past_key_names", &names->past_key, true},
      {"inputs", "past_value_names", &names->past_value, true},
      {"outputs", "logits", &names->logits, false},
      {"outputs", "present_key_names", &names->present_key, true},
      {"outputs", "present_value_names", &names->present_value, true},
  };
  for (const Key& k : keys) {
    auto group = decoder.FindMember(k.group);
    if (group == decoder.MemberEnd() || !group->value.IsObject()) continue;
    auto it = group->value.FindMember(k.key);
    if (it == group->value.MemberEnd()) continue;
    const std::string where =
        absl::StrCat(dir, "/genai_config.json: model.decoder.", k.group, ".", k.key);
    if (!it->value.IsString() || it->value.GetStringLength() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, " must be a non-empty string"));
    }
    const std::string value = it->value.GetString();
    if (k.layer_template) {
      const size_t at = value.find("%d");
      if (at == std::string::npos || value.find('%', at + 2) != std::string::npos ||
          value.find('%') != at) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, " is '", value, "': it must contain %d (the layer index) once, and no other %"));
      }
      names->caches_configured = true;
    }
    *k.name = value;
  }
  return absl::OkStatus();
}

}  // namespace

std::string LayerName(const std::string& name_template, int layer) {
  const size_t at = name_template.find("%d");
  if (at == std::string::npos) return name_template;
  return absl::StrCat(name_template.substr(0, at), layer, name_template.substr(at + 2));
}

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
      if (absl::Status s = ReadNames(m["decoder"], dir, &c.names); !s.ok()) return s;
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
