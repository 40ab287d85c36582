// libinferd_sentencepiece.so: libsentencepiece behind a C interface, loaded at run time by
// SpmProcessor (spm_processor.h) with RTLD_LOCAL | RTLD_DEEPBIND. Debian's libsentencepiece
// carries its own copy of protobuf-lite (3.14) and exports it; linked into a binary that also
// links libprotobuf (3.21), its symbols interpose protobuf's and the process crashes at start.
// Loaded locally and deep-bound, each library keeps its own protobuf.
// Strings and id arrays returned are malloc'ed: the caller frees them with free().
#include <sentencepiece_processor.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

char* CopyOut(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p != nullptr) std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

sentencepiece::SentencePieceProcessor* Sp(void* h) {
  return static_cast<sentencepiece::SentencePieceProcessor*>(h);
}

}  // namespace

extern "C" {

// A processor for the .model at `path`, or nullptr with *error set (free it).
void* inferd_spm_load(const char* path, char** error) {
  auto* sp = new sentencepiece::SentencePieceProcessor();
  const sentencepiece::util::Status s = sp->Load(path);
  if (!s.ok()) {
    *error = CopyOut(s.ToString());
    delete sp;
    return nullptr;
  }
  return sp;
}

void inferd_spm_free(void* h) { delete Sp(h); }

// 0 and *ids (malloc'ed, *n of them) on success; -1 and *error otherwise.
int inferd_spm_encode(void* h, const char* text, size_t len, int** ids, size_t* n, char** error) {
  std::vector<int> out;
  const sentencepiece::util::Status s = Sp(h)->Encode(std::string(text, len), &out);
  if (!s.ok()) {
    *error = CopyOut(s.ToString());
    return -1;
  }
  *n = out.size();
  *ids = static_cast<int*>(std::malloc(std::max<size_t>(1, out.size()) * sizeof(int)));
  if (*ids == nullptr) return -1;
  if (!out.empty()) std::memcpy(*ids, out.data(), out.size() * sizeof(int));
  return 0;
}

// The text (it may hold NUL bytes: its length is *len).
char* inferd_spm_decode(void* h, const int* ids, size_t n, size_t* len) {
  std::string text;
  if (!Sp(h)->Decode(std::vector<int>(ids, ids + n), &text).ok()) text.clear();
  *len = text.size();
  return CopyOut(text);
}

int inferd_spm_size(void* h) { return Sp(h)->GetPieceSize(); }
int inferd_spm_piece_to_id(void* h, const char* piece, size_t len) {
  return Sp(h)->PieceToId(std::string(piece, len));
}
char* inferd_spm_id_to_piece(void* h, int id) { return CopyOut(Sp(h)->IdToPiece(id)); }
int inferd_spm_is_control(void* h, int id) { return Sp(h)->IsControl(id) ? 1 : 0; }
int inferd_spm_is_unknown(void* h, int id) { return Sp(h)->IsUnknown(id) ? 1 : 0; }
int inferd_spm_bos_id(void* h) { return Sp(h)->bos_id(); }
int inferd_spm_unk_id(void* h) { return Sp(h)->unk_id(); }

}  // extern "C"
