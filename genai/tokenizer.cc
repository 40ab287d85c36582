#include "genai/tokenizer.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "genai/hf_tokenizer.h"
#include "genai/sentencepiece_tokenizer.h"
#include "genai/unicode.h"

namespace inferd::genai {
namespace {

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Ids decoded again before the new one, so that decoders that look at neighbours (metaspace's
// leading space, byte fallback's byte runs) see context.
constexpr size_t kContextIds = 6;

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& model_dir) {
  const std::string json = model_dir + "/tokenizer.json";
  if (FileExists(json)) {
    absl::StatusOr<std::unique_ptr<HfTokenizer>> t = HfTokenizer::Load(json);
    if (!t.ok()) return t.status();
    return std::unique_ptr<Tokenizer>(std::move(*t));
  }
  const std::string spm = model_dir + "/tokenizer.model";
  if (FileExists(spm)) {
    absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> t = SentencePieceTokenizer::Load(spm);
    if (!t.ok()) return t.status();
    return std::unique_ptr<Tokenizer>(std::move(*t));
  }
  return absl::NotFoundError(
      absl::StrCat(model_dir, " has no tokenizer.json and no tokenizer.model"));
}

// The text of ids_[read_..] is what the window ids_[prefix_..] decodes to beyond what the window
// ids_[prefix_..read_) decoded to; it is released when it is complete UTF-8 and does not end in
// U+FFFD (a byte run still open).
std::string StreamingDecoder::Add(int32_t id) {
  ids_.push_back(id);
  const absl::Span<const int32_t> all(ids_);
  const std::string before =
      tokenizer_.Decode(all.subspan(prefix_, read_ - prefix_), skip_special_);
  const std::string now = tokenizer_.Decode(all.subspan(prefix_), skip_special_);
  if (now.size() <= before.size() || now.compare(0, before.size(), before) != 0) {
    return std::string();  // nothing new yet (or the window re-decoded differently: wait)
  }
  std::string fresh = now.substr(before.size());
  const size_t complete = CompleteUtf8Prefix(fresh);
  if (complete < fresh.size()) return std::string();
  if (fresh.size() >= 3 && fresh.compare(fresh.size() - 3, 3, "\xEF\xBF\xBD") == 0) {
    return std::string();  // a byte-fallback character still incomplete
  }
  read_ = ids_.size();
  if (read_ - prefix_ > kContextIds) prefix_ = read_ - kContextIds;
  return fresh;
}

std::string StreamingDecoder::Flush() {
  const absl::Span<const int32_t> all(ids_);
  const std::string before =
      tokenizer_.Decode(all.subspan(prefix_, read_ - prefix_), skip_special_);
  const std::string now = tokenizer_.Decode(all.subspan(prefix_), skip_special_);
  read_ = ids_.size();
  if (now.size() <= before.size() || now.compare(0, before.size(), before) != 0) return "";
  return now.substr(before.size());
}

}  // namespace inferd::genai
