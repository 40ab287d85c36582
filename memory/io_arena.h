// IOArena: the buffers of one device that cross the runtime boundary: graph outputs and input
// staging buffers. Same reuse, cap, trim and accounting as ExecutionArena, plus IOLease.
//
// IOLease: a reference-counted pin on one IOArena buffer. Export(AllocationHandle&&) turns a live
// handle into a lease without touching its bytes; copies of a lease share the pin; the last one
// returns the buffer to the arena's free list. A lease keeps the arena's shared state alive: if
// the IOArena object is destroyed first, the buffer is freed to the system when the last lease
// goes. A leased buffer is never handed to a new allocation.
//
// Slice(offset, size) makes a lease of a byte range of the same buffer (same pin, no copy); its
// capacity is its size.
//
// Example (a gRPC response slice owning an output):
//   absl::StatusOr<IOLease> lease = io_arena.Export(std::move(output_handle));
//   auto* pin = new IOLease(*lease);              // dropped by the slice's destroy callback
//   grpc_slice s = grpc_slice_new_with_user_data(pin->mutable_data(), pin->size(), Unpin, pin);
//
// Thread-safe: leases of one buffer may be copied and dropped on different threads.
#ifndef INFERD_MEMORY_IO_ARENA_H_
#define INFERD_MEMORY_IO_ARENA_H_

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "memory/arena.h"

namespace inferd::memory {

struct BufferRecord;

class IOLease {
 public:
  IOLease() = default;
  ~IOLease() { Reset(); }
  IOLease(const IOLease& other);
  IOLease& operator=(const IOLease& other);
  IOLease(IOLease&& other) noexcept;
  IOLease& operator=(IOLease&& other) noexcept;

  bool valid() const { return record_ != nullptr; }
  const void* data() const { return data_; }
  void* mutable_data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  const void* arena_id() const { return core_.get(); }
  // Number of leases sharing this pin (0 for an empty lease).
  int use_count() const;
  // Drops this lease's share of the pin.
  void Reset();
  // A lease of `size` bytes at `offset` inside this one, sharing its pin (the buffer returns to
  // the arena when the last lease or slice goes): a batched run's output split per request
  // without a copy. INVALID_ARGUMENT for an empty lease or a range past size().
  absl::StatusOr<IOLease> Slice(size_t offset, size_t size) const;

 private:
  friend class IOArena;
  IOLease(std::shared_ptr<ArenaCore> core, BufferRecord* record, void* data, size_t size,
          size_t capacity)
      : core_(std::move(core)), record_(record), data_(data), size_(size), capacity_(capacity) {}

  std::shared_ptr<ArenaCore> core_;
  BufferRecord* record_ = nullptr;
  void* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

class IOArena final : public Arena {
 public:
  explicit IOArena(std::shared_ptr<SystemAllocator> system)
      : Arena(ArenaKind::kIO, std::move(system)) {}

  // Pins `handle`'s buffer as a lease. On success the handle is left empty and no byte moves;
  // a handle of another arena is refused (INVALID_ARGUMENT) and left untouched.
  absl::StatusOr<IOLease> Export(AllocationHandle&& handle);
};

}  // namespace inferd::memory

#endif  // INFERD_MEMORY_IO_ARENA_H_
