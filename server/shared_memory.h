// System shared memory (Triton's system_shared_memory extension): a registry of POSIX
// shared-memory regions that a local client has created (shm_open) and registered by name, so
// that a request's inputs are read from, and its outputs written to, a region in place instead
// of travelling through the socket.
//
// Register opens the object read-write (shm_open), checks with fstat that offset + byte_size
// lies inside it (overflow-checked), and maps exactly that range (mmap from the page below the
// offset). A request takes a shared_ptr to the region (Find), so a region unregistered while a
// request uses it stays mapped until that request is finished; the mapping goes with the last
// reference.
//
// Errors, as Triton: registering a name twice ALREADY_EXISTS; an unknown region in Status or in a
// request NOT_FOUND (Unregister of an unknown name is OK, as Triton); a bad key, a zero size, a
// range outside the object INVALID_ARGUMENT; an object that cannot be opened or mapped: the
// errno's message.
//
// Example:
//   SharedMemoryRegistry shm;
//   INFERD_RETURN_IF_ERROR(shm.Register("input0", "/client_in", 0, 64 << 20));
//   INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const SharedMemoryRegion> r, shm.Find("input0"));
//   INFERD_ASSIGN_OR_RETURN(absl::Span<uint8_t> bytes, r->Range(/*offset=*/0, /*size=*/4096));
//
// Thread-safe.
#ifndef INFERD_SERVER_SHARED_MEMORY_H_
#define INFERD_SERVER_SHARED_MEMORY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace inferd::server {

// One registered region, mapped read-write for its whole life.
class SharedMemoryRegion {
 public:
  ~SharedMemoryRegion();  // unmaps
  SharedMemoryRegion(const SharedMemoryRegion&) = delete;
  SharedMemoryRegion& operator=(const SharedMemoryRegion&) = delete;

  const std::string& name() const { return name_; }
  const std::string& key() const { return key_; }
  uint64_t offset() const { return offset_; }  // in the shared-memory object
  uint64_t byte_size() const { return byte_size_; }

  // `size` bytes at `offset` from the region's start; INVALID_ARGUMENT (naming the region) when
  // they do not lie inside it.
  absl::StatusOr<absl::Span<uint8_t>> Range(uint64_t offset, uint64_t size) const;

 private:
  friend class SharedMemoryRegistry;
  SharedMemoryRegion() = default;

  std::string name_;
  std::string key_;
  uint64_t offset_ = 0;
  uint64_t byte_size_ = 0;
  void* map_ = nullptr;  // the mapping, from the page at or below offset_
  size_t map_size_ = 0;
  uint8_t* data_ = nullptr;  // offset_ within the object
};

class SharedMemoryRegistry {
 public:
  struct RegionStatus {
    std::string name;
    std::string key;
    uint64_t offset = 0;
    uint64_t byte_size = 0;
  };

  // Maps `byte_size` bytes at `offset` of the shared-memory object `key` ("/name", as shm_open)
  // under `name`.
  absl::Status Register(absl::string_view name, absl::string_view key, uint64_t offset,
                        uint64_t byte_size);
  // Forgets `name` (empty: every region); requests using it keep it mapped until they finish.
  absl::Status Unregister(absl::string_view name);
  // Every region (`name` empty) or the one named; NOT_FOUND for an unknown name.
  absl::StatusOr<std::vector<RegionStatus>> Status(absl::string_view name) const;
  // The region `name`, NOT_FOUND if it is not registered.
  absl::StatusOr<std::shared_ptr<const SharedMemoryRegion>> Find(absl::string_view name) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const SharedMemoryRegion>, std::less<>> regions_;  // mu_
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_SHARED_MEMORY_H_
