// SentencePieceTokenizer: a SentencePiece .model (BPE or unigram) run by Debian's
// libsentencepiece, the library that made the file, so ids match Python's `sentencepiece`.
// Encode adds BOS (and EOS where the model enables it) with add_special_tokens; control and
// unknown pieces count as special. Immutable after Load; thread-safe (the library's processor
// is const for encoding and decoding).
#ifndef INFERD_GENAI_SENTENCEPIECE_TOKENIZER_H_
#define INFERD_GENAI_SENTENCEPIECE_TOKENIZER_H_

#include <memory>
#include <string>

#include "genai/spm_processor.h"
#include "genai/tokenizer.h"

namespace inferd::genai {

class SentencePieceTokenizer : public Tokenizer {
 public:
  static absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> Load(const std::string& path);
  ~SentencePieceTokenizer() override;

  absl::StatusOr<std::vector<int32_t>> Encode(absl::string_view text,
                                              bool add_special_tokens) const override;
  std::string Decode(absl::Span<const int32_t> ids, bool skip_special_tokens) const override;
  int32_t vocab_size() const override;
  std::optional<int32_t> TokenToId(absl::string_view token) const override;
  std::string IdToToken(int32_t id) const override;
  bool IsSpecial(int32_t id) const override;

 private:
  SentencePieceTokenizer() = default;
  std::unique_ptr<SpmProcessor> sp_;
};

}  // namespace inferd::genai

#endif  // INFERD_GENAI_SENTENCEPIECE_TOKENIZER_H_
