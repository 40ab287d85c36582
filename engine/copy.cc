#include "engine/copy.h"

#include <atomic>
#include <cstring>

namespace inferd::engine {
namespace {
std::atomic<uint64_t> g_bytes{0};
std::atomic<uint64_t> g_copies{0};
}  // namespace

void CopyPayload(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  std::memcpy(dst, src, bytes);
  g_bytes.fetch_add(bytes, std::memory_order_relaxed);
  g_copies.fetch_add(1, std::memory_order_relaxed);
}

uint64_t PayloadBytesCopied() { return g_bytes.load(std::memory_order_relaxed); }
uint64_t PayloadCopies() { return g_copies.load(std::memory_order_relaxed); }

}  // namespace inferd::engine
