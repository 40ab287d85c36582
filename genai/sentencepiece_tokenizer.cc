#include "genai/sentencepiece_tokenizer.h"

#include "absl/strings/str_cat.h"

namespace inferd::genai {

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::Load(
    const std::string& path) {
  std::unique_ptr<SentencePieceTokenizer> t(new SentencePieceTokenizer());
  std::string error;
  t->sp_ = SpmProcessor::Load(path, &error);
  if (t->sp_ == nullptr) return absl::InvalidArgumentError(absl::StrCat(path, ": ", error));
  return t;
}

absl::StatusOr<std::vector<int32_t>> SentencePieceTokenizer::Encode(absl::string_view text,
                                                                    bool add_special_tokens) const {
  std::vector<int> ids;
  std::string error;
  if (!sp_->Encode(std::string(text), &ids, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("sentencepiece: ", error));
  }
  std::vector<int32_t> out;
  out.reserve(ids.size() + 1);
  if (add_special_tokens && sp_->bos_id() >= 0) out.push_back(sp_->bos_id());
  out.insert(out.end(), ids.begin(), ids.end());
  return out;
}

std::string SentencePieceTokenizer::Decode(absl::Span<const int32_t> ids,
                                           bool skip_special_tokens) const {
  std::vector<int> keep;
  keep.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= sp_->size()) continue;
    if (skip_special_tokens && IsSpecial(id)) continue;
    keep.push_back(id);
  }
  return sp_->Decode(keep);
}

int32_t SentencePieceTokenizer::vocab_size() const { return sp_->size(); }

std::optional<int32_t> SentencePieceTokenizer::TokenToId(absl::string_view token) const {
  const int id = sp_->PieceToId(std::string(token));
  if (id == sp_->unk_id() && sp_->IdToPiece(id) != token) return std::nullopt;
  return id;
}

std::string SentencePieceTokenizer::IdToToken(int32_t id) const {
  if (id < 0 || id >= sp_->size()) return std::string();
  return sp_->IdToPiece(id);
}

bool SentencePieceTokenizer::IsSpecial(int32_t id) const {
  if (id < 0 || id >= sp_->size()) return false;
  return sp_->IsControl(id) || sp_->IsUnknown(id);
}

}  // namespace inferd::genai
