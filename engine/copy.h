// CopyPayload: the one place where the engine copies tensor payload bytes on its own account
// (staging a misaligned input, a graph output that is also a graph input or weight, an alias the
// plan could not allow, a copy across devices). It counts the bytes process-wide, so tests and
// benchmarks can prove that steady-state runs copy nothing. Kernels' own data movement (Concat,
// Transpose, ...) is computation and does not go through here. Thread-safe.
#ifndef INFERD_ENGINE_COPY_H_
#define INFERD_ENGINE_COPY_H_

#include <cstddef>
#include <cstdint>

namespace inferd::engine {

void CopyPayload(void* dst, const void* src, size_t bytes);
// Bytes and calls through CopyPayload since the process started.
uint64_t PayloadBytesCopied();
uint64_t PayloadCopies();

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_COPY_H_
