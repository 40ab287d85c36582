// Tokenizer: text to token ids and back, for the decode loop. Two implementations:
// HfTokenizer (a Hugging Face tokenizer.json: BPE, byte-level or with metaspace and byte
// fallback, added and special tokens) and SentencePieceTokenizer (a SentencePiece .model through
// libsentencepiece). LoadTokenizer picks one from a model folder.
// Immutable after loading; every method is const and thread-safe.
//
// Example:
//   auto tok = LoadTokenizer("/models/llama");            // tokenizer.json or tokenizer.model
//   std::vector<int32_t> ids = *(*tok)->Encode("Hello", /*add_special_tokens=*/true);
//   std::string text = (*tok)->Decode(ids, /*skip_special_tokens=*/true);
#ifndef INFERD_GENAI_TOKENIZER_H_
#define INFERD_GENAI_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace inferd::genai {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Token ids of `text`; with add_special_tokens, the ones the tokenizer's post-processor adds
  // (a BOS for Llama). INVALID_ARGUMENT when the text cannot be tokenized (a character with no
  // token and no unknown token).
  virtual absl::StatusOr<std::vector<int32_t>> Encode(absl::string_view text,
                                                      bool add_special_tokens) const = 0;
  // Text of `ids`; ids out of range are skipped. Invalid UTF-8 from byte tokens becomes U+FFFD.
  virtual std::string Decode(absl::Span<const int32_t> ids, bool skip_special_tokens) const = 0;

  virtual int32_t vocab_size() const = 0;
  // The id of token `token` (vocabulary or added), if any.
  virtual std::optional<int32_t> TokenToId(absl::string_view token) const = 0;
  // The token string of `id` ("" when out of range).
  virtual std::string IdToToken(int32_t id) const = 0;
  // Special tokens (control tokens): skipped by Decode(..., skip_special_tokens=true).
  virtual bool IsSpecial(int32_t id) const = 0;
};

// Loads the tokenizer of a model folder: tokenizer.json (preferred) or tokenizer.model.
// NOT_FOUND when the folder has neither.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& model_dir);

// Turns a growing list of generated ids into text pieces as they become printable: a piece is
// released once its bytes are complete UTF-8, so a character split over several byte tokens is
// printed whole. Decodes a short window of recent ids each time (not the whole list), so each
// step costs the same however long the answer. Not thread-safe (one per sequence).
class StreamingDecoder {
 public:
  StreamingDecoder(const Tokenizer& tokenizer, bool skip_special_tokens)
      : tokenizer_(tokenizer), skip_special_(skip_special_tokens) {}
  // Adds one id; returns the text it completes (possibly empty).
  std::string Add(int32_t id);
  // Text still held back (an unfinished character at the end), decoded lossily.
  std::string Flush();

 private:
  const Tokenizer& tokenizer_;
  const bool skip_special_;
  std::vector<int32_t> ids_;
  size_t prefix_ = 0;  // ids_[prefix_..read_) decode to text already emitted
  size_t read_ = 0;
};

}  // namespace inferd::genai

#endif  // INFERD_GENAI_TOKENIZER_H_
