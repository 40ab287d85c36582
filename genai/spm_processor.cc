#include "genai/spm_processor.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

namespace inferd::genai {
namespace {

constexpr char kShim[] = "libinferd_sentencepiece.so";

// The shim's entry points (spm_shim.cc).
struct Api {
  void* (*load)(const char*, char**) = nullptr;
  void (*free_processor)(void*) = nullptr;
  int (*encode)(void*, const char*, size_t, int**, size_t*, char**) = nullptr;
  char* (*decode)(void*, const int*, size_t, size_t*) = nullptr;
  int (*size)(void*) = nullptr;
  int (*piece_to_id)(void*, const char*, size_t) = nullptr;
  char* (*id_to_piece)(void*, int) = nullptr;
  int (*is_control)(void*, int) = nullptr;
  int (*is_unknown)(void*, int) = nullptr;
  int (*bos_id)(void*) = nullptr;
  int (*unk_id)(void*) = nullptr;
  std::string error;  // why it is not available
};

std::string ExeDir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

std::string ExePath() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n <= 0 ? std::string() : std::string(buf, static_cast<size_t>(n));
}

// Where the shim may be: $INFERD_SENTENCEPIECE_SHIM, beside the binary, in the binary's Bazel
// runfiles or a test's, in bazel-bin's genai/, then the loader's search path.
std::vector<std::string> Candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("INFERD_SENTENCEPIECE_SHIM")) out.push_back(env);
  const std::string dir = ExeDir();
  out.push_back(dir + "/" + kShim);
  out.push_back(ExePath() + ".runfiles/inferd/genai/" + kShim);
  if (const char* root = std::getenv("TEST_SRCDIR")) {
    out.push_back(std::string(root) + "/inferd/genai/" + kShim);
  }
  out.push_back(dir + "/../../genai/" + kShim);
  out.push_back(dir + "/../genai/" + kShim);
  out.push_back(kShim);
  return out;
}

template <typename F>
bool Bind(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  return *fn != nullptr;
}

const Api& GetApi() {
  static const Api* api = [] {
    auto* a = new Api();
    void* lib = nullptr;
    std::string tried;
    for (const std::string& path : Candidates()) {
      lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (lib != nullptr) break;
      tried += (tried.empty() ? "" : ", ") + path;
    }
    if (lib == nullptr) {
      a->error = std::string("cannot load ") + kShim + " (tried " + tried +
                 "; set INFERD_SENTENCEPIECE_SHIM)";
      return a;
    }
    const bool ok =
        Bind(lib, "inferd_spm_load", &a->load) &&
        Bind(lib, "inferd_spm_free", &a->free_processor) &&
        Bind(lib, "inferd_spm_encode", &a->encode) && Bind(lib, "inferd_spm_decode", &a->decode) &&
        Bind(lib, "inferd_spm_size", &a->size) &&
        Bind(lib, "inferd_spm_piece_to_id", &a->piece_to_id) &&
        Bind(lib, "inferd_spm_id_to_piece", &a->id_to_piece) &&
        Bind(lib, "inferd_spm_is_control", &a->is_control) &&
        Bind(lib, "inferd_spm_is_unknown", &a->is_unknown) &&
        Bind(lib, "inferd_spm_bos_id", &a->bos_id) && Bind(lib, "inferd_spm_unk_id", &a->unk_id);
    if (!ok) a->error = std::string(kShim) + " lacks an entry point";
    return a;
  }();
  return *api;
}

std::string TakeString(char* s) {
  if (s == nullptr) return std::string();
  std::string out(s);
  std::free(s);
  return out;
}

}  // namespace

SpmProcessor::~SpmProcessor() {
  if (handle_ != nullptr) GetApi().free_processor(handle_);
}

std::unique_ptr<SpmProcessor> SpmProcessor::Load(const std::string& path, std::string* error) {
  const Api& api = GetApi();
  if (!api.error.empty()) {
    *error = api.error;
    return nullptr;
  }
  char* err = nullptr;
  void* h = api.load(path.c_str(), &err);
  if (h == nullptr) {
    *error = TakeString(err);
    return nullptr;
  }
  std::unique_ptr<SpmProcessor> p(new SpmProcessor());
  p->handle_ = h;
  return p;
}

bool SpmProcessor::Encode(const std::string& text, std::vector<int>* ids,
                          std::string* error) const {
  int* out = nullptr;
  size_t n = 0;
  char* err = nullptr;
  if (GetApi().encode(handle_, text.data(), text.size(), &out, &n, &err) != 0) {
    *error = TakeString(err);
    return false;
  }
  ids->assign(out, out + n);
  std::free(out);
  return true;
}

std::string SpmProcessor::Decode(const std::vector<int>& ids) const {
  size_t len = 0;
  char* text = GetApi().decode(handle_, ids.data(), ids.size(), &len);
  if (text == nullptr) return std::string();
  std::string out(text, len);
  std::free(text);
  return out;
}

int SpmProcessor::size() const { return GetApi().size(handle_); }
int SpmProcessor::PieceToId(const std::string& piece) const {
  return GetApi().piece_to_id(handle_, piece.data(), piece.size());
}
std::string SpmProcessor::IdToPiece(int id) const {
  return TakeString(GetApi().id_to_piece(handle_, id));
}
bool SpmProcessor::IsControl(int id) const { return GetApi().is_control(handle_, id) != 0; }
bool SpmProcessor::IsUnknown(int id) const { return GetApi().is_unknown(handle_, id) != 0; }
int SpmProcessor::bos_id() const { return GetApi().bos_id(handle_); }
int SpmProcessor::unk_id() const { return GetApi().unk_id(handle_); }

}  // namespace inferd::genai
