// SpmProcessor: libsentencepiece through libinferd_sentencepiece.so (spm_shim.cc), a C shim
// loaded on first use with RTLD_LOCAL | RTLD_DEEPBIND: Debian's libsentencepiece exports its own
// protobuf-lite, which crashes a process that also links libprotobuf when linked directly. The
// shim is looked for in $INFERD_SENTENCEPIECE_SHIM, beside the binary, in its Bazel runfiles,
// then on the loader's path. Internal to genai/ (used by SentencePieceTokenizer). Immutable
// after Load; thread-safe.
#ifndef INFERD_GENAI_SPM_PROCESSOR_H_
#define INFERD_GENAI_SPM_PROCESSOR_H_

#include <memory>
#include <string>
#include <vector>

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
  void* handle_ = nullptr;  // the shim's processor
};

}  // namespace inferd::genai

#endif  // INFERD_GENAI_SPM_PROCESSOR_H_
