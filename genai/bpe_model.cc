#include "genai/bpe_model.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "genai/unicode.h"

namespace inferd::genai {

absl::StatusOr<BpeModel> BpeModel::Create(
    std::unordered_map<std::string, int32_t> vocab,
    const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options) {
  BpeModel m;
  m.options_ = std::move(options);
  int32_t max_id = -1;
  for (const auto& [token, id] : vocab) {
    if (id < 0) return absl::InvalidArgumentError(absl::StrCat("token '", token, "' has id ", id));
    max_id = std::max(max_id, id);
  }
  if (max_id >= (1 << 24)) {
    return absl::InvalidArgumentError(absl::StrCat("vocabulary id ", max_id, " is too large"));
  }
  m.by_id_.resize(static_cast<size_t>(max_id + 1));
  for (const auto& [token, id] : vocab) m.by_id_[id] = token;
  m.vocab_ = std::move(vocab);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    auto it = m.vocab_.find(name);
    m.byte_ids_[b] = it == m.vocab_.end() ? -1 : it->second;
  }
  if (m.options_.unk_token) {
    auto it = m.vocab_.find(*m.options_.unk_token);
    if (it == m.vocab_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unk_token '", *m.options_.unk_token, "' is not in the vocabulary"));
    }
    m.unk_id_ = it->second;
  }
  m.merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    auto a = m.vocab_.find(left);
    auto b = m.vocab_.find(right);
    std::string merged = left;
    if (!m.options_.continuing_subword_prefix.empty() &&
        absl::string_view(right).substr(0, m.options_.continuing_subword_prefix.size()) ==
            m.options_.continuing_subword_prefix) {
      merged += right.substr(m.options_.continuing_subword_prefix.size());
    } else {
      merged += right;
    }
    auto c = m.vocab_.find(merged);
    if (a == m.vocab_.end() || b == m.vocab_.end() || c == m.vocab_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("merge ", rank, " ('", left, "', '", right,
                                                     "') names a token outside the vocabulary"));
    }
    // The first (lowest-ranked) occurrence of a pair wins.
    m.merges_.try_emplace(PairKey(a->second, b->second),
                          Merge{static_cast<int32_t>(rank), c->second});
  }
  return m;
}

std::optional<int32_t> BpeModel::TokenToId(absl::string_view token) const {
  auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::IdToToken(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= by_id_.size() || by_id_[id].empty()) return nullptr;
  return &by_id_[id];
}

void BpeModel::Tokenize(absl::string_view word, std::vector<int32_t>* out) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    auto it = vocab_.find(std::string(word));
    if (it != vocab_.end()) {
      out->push_back(it->second);
      return;
    }
  }
  // pass 1: one symbol per character (with the subword prefix / word suffix where configured);
  // characters outside the vocabulary become byte tokens or the unknown token.
  std::vector<int32_t> symbols;
  const std::vector<size_t> offsets = Utf8Offsets(word);
  const size_t chars = offsets.size() - 1;
  bool pending_unk = false;
  auto flush_unk = [&]() {
    if (pending_unk) symbols.push_back(*unk_id_);
    pending_unk = false;
  };
  std::string piece;
  for (size_t i = 0; i < chars; ++i) {
    piece.clear();
    if (i > 0) piece += options_.continuing_subword_prefix;
    piece.append(word.data() + offsets[i], offsets[i + 1] - offsets[i]);
    if (i + 1 == chars) piece += options_.end_of_word_suffix;
    auto it = vocab_.find(piece);
    if (it != vocab_.end()) {
      flush_unk();
      symbols.push_back(it->second);
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      for (size_t k = offsets[i]; k < offsets[i + 1]; ++k) {
        all = all && byte_ids_[static_cast<unsigned char>(word[k])] >= 0;
      }
      if (all) {
        flush_unk();
        for (size_t k = offsets[i]; k < offsets[i + 1]; ++k) {
          symbols.push_back(byte_ids_[static_cast<unsigned char>(word[k])]);
        }
        continue;
      }
    }
    if (!unk_id_) continue;  // no token for it: dropped
    if (pending_unk && options_.fuse_unk) continue;
    flush_unk();
    pending_unk = true;
  }
  flush_unk();
  // pass 2: merge the lowest-ranked adjacent pair until none is left.
  while (symbols.size() > 1) {
    int32_t best_rank = INT32_MAX;
    size_t best = 0;
    int32_t best_id = -1;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      auto it = merges_.find(PairKey(symbols[i], symbols[i + 1]));
      if (it != merges_.end() && it->second.rank < best_rank) {
        best_rank = it->second.rank;
        best = i;
        best_id = it->second.id;
      }
    }
    if (best_id < 0) break;
    symbols[best] = best_id;
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  out->insert(out->end(), symbols.begin(), symbols.end());
}

}  // namespace inferd::genai
