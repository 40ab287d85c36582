// SpmProcessor: libsentencepiece behind an interface of standard types only. The library's
// header declares its own `absl::string_view`, which clashes with Abseil's in any file that
// includes both, so only spm_processor.cc includes it. Internal to genai/ (used by
// SentencePieceTokenizer). Immutable after Load; thread-safe.
#ifndef INFERD_GENAI_SPM_PROCESSOR_H_
#define INFERD_GENAI_SPM_PROCESSOR_H_

#include <memory>
#include <string>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace inferd::genai {

class SpmProcessor {
 public:
  // nullptr and `*error` set when the file cannot be loaded.
  static std::unique_ptr<SpmProcessor> Load(const std::string& path, std::string* error);
  ~SpmProcessor();

  bool Encode(const std::string& text, std::vector<int>* ids, std::string* error) const;
  std::string Decode(const std::vector<int>& ids) const;
  int size() const;
  int PieceToId(const std::string& piece) const;
  std::string IdToPiece(int id) const;
  bool IsControl(int id) const;
  bool IsUnknown(int id) const;
  int bos_id() const;
  int unk_id() const;

 private:
  SpmProcessor() = default;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
};

}  // namespace inferd::genai

#endif  // INFERD_GENAI_SPM_PROCESSOR_H_
