// Test helpers: ModelInfer wire bytes and multi-slice ByteBuffers built by hand (tests only).
#ifndef INFERD_SERVER_TESTING_WIRE_H_
#define INFERD_SERVER_TESTING_WIRE_H_

#include <grpc/grpc.h>
#include <grpc/slice.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "proto/inference.pb.h"

namespace inferd::server::testing {

// Starts gRPC's library once per process (ByteBuffer needs it).
inline void InitGrpc() {
  static const bool done = [] {
    grpc_init();
    return true;
  }();
  (void)done;
}

// Field 7 (raw_input_contents) tag and varint length, without the payload.
inline std::string RawInputPrefix(size_t len) {
  std::string s(1, static_cast<char>((7 << 3) | 2));
  uint64_t v = len;
  while (v >= 0x80) {
    s.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}

// The request's wire bytes: header fields, then each raw_input_contents entry.
inline std::string Serialize(const inference::ModelInferRequest& request) {
  std::string s;
  request.SerializeToString(&s);
  return s;
}

// Memory for slices whose address the test controls (alignment, identity). Keeps every buffer
// until destroyed; slices made here must not outlive it.
class SliceMemory {
 public:
  // A slice over a copy of `bytes` starting `offset` bytes past a 64-byte boundary.
  grpc::Slice Make(const std::string& bytes, size_t offset = 0) {
    auto buf = std::unique_ptr<uint8_t[]>(new uint8_t[bytes.size() + 128]);
    uint8_t* base = buf.get();
    uint8_t* p = base + (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64 + offset;
    std::memcpy(p, bytes.data(), bytes.size());
    buffers_.push_back(std::move(buf));
    return grpc::Slice(grpc_slice_new_with_user_data(
                           p, bytes.size(), [](void*) {}, nullptr),
                       grpc::Slice::STEAL_REF);
  }

 private:
  std::vector<std::unique_ptr<uint8_t[]>> buffers_;
};

inline grpc::ByteBuffer ToByteBuffer(const std::vector<grpc::Slice>& slices) {
  return grpc::ByteBuffer(slices.data(), slices.size());
}

// `bytes` cut into slices of `piece` bytes (copied into heap slices; gRPC would merge small
// inlined slices).
inline grpc::ByteBuffer Chopped(const std::string& bytes, size_t piece) {
  std::vector<grpc::Slice> slices;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    const size_t n = std::min(piece, bytes.size() - at);
    void* p = std::malloc(n);
    std::memcpy(p, bytes.data() + at, n);
    slices.emplace_back(grpc_slice_new(p, n, std::free), grpc::Slice::STEAL_REF);
  }
  return ToByteBuffer(slices);
}

// Contiguous bytes of a ByteBuffer (copied; tests only).
inline std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string s;
  for (const grpc::Slice& sl : slices) {
    s.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
  }
  return s;
}

}  // namespace inferd::server::testing

#endif  // INFERD_SERVER_TESTING_WIRE_H_
