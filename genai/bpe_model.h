// BpeModel: the "BPE" model of a tokenizer.json: a vocabulary, ranked merges, and how a word
// with a symbol outside the vocabulary is handled (byte fallback to <0xXX> tokens, an unknown
// token, fused or not). Tokenize() turns one pre-tokenized word into ids by applying the merges
// in rank order (lowest rank first, leftmost first among equals), as Hugging Face's tokenizers
// does; with ignore_merges (Llama 3) a word that is itself in the vocabulary is one token.
// Immutable after construction; Tokenize is const and thread-safe.
#ifndef INFERD_GENAI_BPE_MODEL_H_
#define INFERD_GENAI_BPE_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace inferd::genai {

struct BpeOptions {
  std::optional<std::string> unk_token;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
};

class BpeModel {
 public:
  // `merges`: (left, right) token strings in rank order. INVALID_ARGUMENT when a merge names a
  // token outside the vocabulary or the unknown token is missing from it.
  static absl::StatusOr<BpeModel> Create(
      std::unordered_map<std::string, int32_t> vocab,
      const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options);

  // Appends the ids of `word` (UTF-8) to `out`. A symbol with no token, no byte fallback and
  // no unknown token is dropped (as Hugging Face's BPE does).
  void Tokenize(absl::string_view word, std::vector<int32_t>* out) const;

  std::optional<int32_t> TokenToId(absl::string_view token) const;
  const std::string* IdToToken(int32_t id) const;
  int32_t size() const { return static_cast<int32_t>(by_id_.size()); }
  const BpeOptions& options() const { return options_; }

 private:
  struct Merge {
    int32_t rank;
    int32_t id;
  };
  static uint64_t PairKey(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> by_id_;  // "" for ids the vocabulary skips
  absl::flat_hash_map<uint64_t, Merge> merges_;
  std::optional<int32_t> unk_id_;
  int32_t byte_ids_[256];  // <0xXX> tokens for byte fallback, -1 when absent
  BpeOptions options_;
};

}  // namespace inferd::genai

#endif  // INFERD_GENAI_BPE_MODEL_H_
