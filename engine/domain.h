// Operator domains. The default ONNX domain is spelled "" or "ai.onnx" in files; inferd uses "".
#ifndef INFERD_ENGINE_DOMAIN_H_
#define INFERD_ENGINE_DOMAIN_H_

#include <string>

#include "absl/strings/string_view.h"

namespace inferd::engine {

inline constexpr char kOnnxDomain[] = "";
inline constexpr char kInferdDomain[] = "com.inferd";  // fused ops made by our rewrites
// ONNX Runtime's contrib operators (its quantizer's QOperator ops, its transformer optimizer's
// fused ops, the GenAI model builder's ops), which published models carry.
inline constexpr char kMicrosoftDomain[] = "com.microsoft";

// An attribute inferd's rewrites set (never read from a model file: the loader's checker refuses
// attributes a schema does not declare): on com.microsoft GroupQueryAttention, 1 means "past and
// present are the caller's one KV block", so the kernel may write present into past's buffer
// (engine/kv_cache_rewrite.h). Without it, present is a buffer of its own and past is only read.
inline constexpr char kSharedKvBufferAttribute[] = "inferd_shared_kv_buffer";

// "ai.onnx" -> "", everything else unchanged.
inline std::string NormalizeDomain(absl::string_view domain) {
  return domain == "ai.onnx" ? std::string() : std::string(domain);
}

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_DOMAIN_H_
