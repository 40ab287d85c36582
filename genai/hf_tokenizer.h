// HfTokenizer: a Hugging Face tokenizer.json with a BPE model, byte-level (GPT-2, Llama 3,
// Qwen2) or with metaspace and byte fallback (Llama 2, Mistral, TinyLlama), run as the
// `tokenizers` library runs it:
//   1. added tokens (special or not) are cut out of the raw text first, longest match first,
//      with their lstrip / rstrip whitespace;
//   2. each remaining span is normalized, pre-tokenized, and each piece is BPE-tokenized;
//   3. with add_special_tokens, the post-processor adds its tokens (TemplateProcessing,
//      Bert / Roberta processing; ByteLevel adds none).
// Decode maps ids to token strings (added tokens by content; specials skipped on request) and
// runs the decoder chain. Immutable after Load; thread-safe.
#ifndef INFERD_GENAI_HF_TOKENIZER_H_
#define INFERD_GENAI_HF_TOKENIZER_H_

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "genai/bpe_model.h"
#include "genai/hf_components.h"
#include "genai/tokenizer.h"

namespace inferd::genai {

class HfTokenizer : public Tokenizer {
 public:
  static absl::StatusOr<std::unique_ptr<HfTokenizer>> Load(const std::string& path);
  static absl::StatusOr<std::unique_ptr<HfTokenizer>> Parse(absl::string_view json);

  absl::StatusOr<std::vector<int32_t>> Encode(absl::string_view text,
                                              bool add_special_tokens) const override;
  std::string Decode(absl::Span<const int32_t> ids, bool skip_special_tokens) const override;
  int32_t vocab_size() const override;
  std::optional<int32_t> TokenToId(absl::string_view token) const override;
  std::string IdToToken(int32_t id) const override;
  bool IsSpecial(int32_t id) const override;

 private:
  struct AddedToken {
    std::string content;
    int32_t id = 0;
    bool special = false;
    bool lstrip = false;
    bool rstrip = false;
    bool single_word = false;
  };
  // One element of the post-processor's template: a special token's ids or the sequence.
  struct TemplateItem {
    bool sequence = false;
    std::vector<int32_t> ids;
  };

  HfTokenizer() = default;
  absl::Status ParseAddedTokens(const rapidjson::Value& json);
  absl::Status ParsePostProcessor(const rapidjson::Value& json);
  // Longest added token matching at text[pos], or nullptr.
  const AddedToken* MatchAdded(absl::string_view text, size_t pos) const;
  absl::Status EncodeSpan(absl::string_view span, bool at_start, std::vector<int32_t>* ids) const;

  std::unique_ptr<BpeModel> model_;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Decoder> decoder_;
  std::vector<AddedToken> added_;
  std::unordered_map<int32_t, size_t> added_by_id_;
  std::vector<std::vector<size_t>> added_by_first_byte_;  // 256 lists of indices into added_
  std::optional<std::vector<TemplateItem>> template_;     // none: no special tokens added
};

}  // namespace inferd::genai

#endif  // INFERD_GENAI_HF_TOKENIZER_H_
