// One test per correctness invariant of the buffer-reuse design
// (docs/arenas.md, "Correctness invariants").
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "memory/execution_arena.h"
#include "memory/fake_system_allocator.h"
#include "memory/io_arena.h"
#include "memory/testing/arena_inspector.h"

namespace inferd::memory {
namespace {

uint64_t Checksum(const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

class ArenaInvariants : public ::testing::Test {
 protected:
  std::shared_ptr<FakeSystemAllocator> sys_ = std::make_shared<FakeSystemAllocator>();
  ExecutionArena exec_{sys_};
  IOArena io_{sys_};
};

// 1. A buffer belongs to exactly one arena.
TEST_F(ArenaInvariants, ABufferBelongsToExactlyOneArena) {
  AllocationHandle e = *exec_.Allocate(1024);
  AllocationHandle i = *io_.Allocate(1024);
  EXPECT_TRUE(exec_.Owns(e));
  EXPECT_FALSE(io_.Owns(e));
  EXPECT_TRUE(io_.Owns(i));
  EXPECT_FALSE(exec_.Owns(i));
  EXPECT_TRUE(testing::HoldsPointer(exec_, e.data()));
  EXPECT_FALSE(testing::HoldsPointer(io_, e.data()));
  e.Release();  // goes back to its own arena only
  EXPECT_EQ(exec_.Stats().retained_buffers, 1u);
  EXPECT_EQ(io_.Stats().retained_buffers, 0u);
  AllocationHandle again = *io_.Allocate(1024);  // cannot take the execution arena's buffer
  EXPECT_EQ(io_.Stats().reuses, 0u);
}

// 2. A live allocation is owned by exactly one tensor, binding or external lease.
TEST_F(ArenaInvariants, ALiveAllocationHasExactlyOneOwner) {
  static_assert(!std::is_copy_constructible_v<AllocationHandle>);
  AllocationHandle a = *io_.Allocate(512);
  AllocationHandle b = std::move(a);
  EXPECT_FALSE(a.valid());
  a.Release();  // the moved-from handle owns nothing: no effect
  EXPECT_EQ(io_.Stats().live_buffers, 1u);
  IOLease lease = *io_.Export(std::move(b));
  EXPECT_FALSE(b.valid());
  b.Release();
  EXPECT_EQ(io_.Stats().live_buffers, 1u);
  EXPECT_EQ(io_.Stats().outstanding_leases, 1u);
}

// 3. A buffer appears on a free list only after its last owner releases it.
TEST_F(ArenaInvariants, ABufferReachesAFreeListOnlyAfterItsLastOwnerReleasesIt) {
  IOLease first = *io_.Export(*io_.Allocate(2048));
  std::vector<IOLease> copies(5, first);
  first.Reset();
  for (size_t k = 0; k < copies.size(); ++k) {
    EXPECT_EQ(io_.Stats().retained_buffers, 0u) << k;
    copies[k].Reset();
  }
  EXPECT_EQ(io_.Stats().retained_buffers, 1u);
}

// 4. Clearing a runtime context cannot invalidate an exported output.
TEST_F(ArenaInvariants, ClearingARunsStateCannotInvalidateAnExportedBuffer) {
  struct RunState {
    std::vector<AllocationHandle> intermediates;
    AllocationHandle output;
  };
  auto run = std::make_unique<RunState>();
  for (int k = 0; k < 4; ++k) run->intermediates.push_back(*exec_.Allocate(4096));
  run->output = *io_.Allocate(4096);
  auto* out = static_cast<unsigned char*>(run->output.data());
  std::iota(out, out + 4096, 0);
  const uint64_t sum = Checksum(out, 4096);
  IOLease exported = *io_.Export(std::move(run->output));
  run.reset();  // clear the run
  exec_.Trim();
  io_.Trim();
  for (int k = 0; k < 8; ++k) {  // later runs with the same sizes
    AllocationHandle o = *io_.Allocate(4096);
    std::memset(o.data(), 0xEE, 4096);
  }
  EXPECT_EQ(Checksum(exported.data(), 4096), sum);
}

// 5. A new run cannot reuse storage pinned by an output from an older run.
TEST_F(ArenaInvariants, ANewAllocationNeverReusesALeasedBuffer) {
  IOLease pinned = *io_.Export(*io_.Allocate(1000));
  for (int k = 0; k < 100; ++k) {
    AllocationHandle h = *io_.Allocate(1000);
    EXPECT_NE(h.data(), pinned.data());
  }
}

// 6. Borrowed input memory is never inserted into an arena free list.
TEST_F(ArenaInvariants, BorrowedMemoryNeverEntersAFreeList) {
  // There is no way to make a handle from a pointer: only arenas mint handles.
  static_assert(!std::is_constructible_v<AllocationHandle, void*, size_t>);
  static_assert(!std::is_constructible_v<AllocationHandle, void*>);
  std::vector<float> borrowed(1024, 1.0f);
  for (int k = 0; k < 50; ++k) {
    AllocationHandle h = *exec_.Allocate(borrowed.size() * sizeof(float));
  }
  EXPECT_FALSE(testing::HoldsPointer(exec_, borrowed.data()));
  EXPECT_FALSE(testing::HoldsPointer(io_, borrowed.data()));
  // A handle of one arena cannot be slipped into another's lease machinery either.
  AllocationHandle foreign = *exec_.Allocate(64);
  EXPECT_FALSE(io_.Export(std::move(foreign)).ok());
  EXPECT_FALSE(testing::HoldsPointer(io_, foreign.data()));
}

// 7. Transferring an allocation between owners does not move or copy its bytes.
TEST_F(ArenaInvariants, MovingAHandleOrALeaseMovesNoBytes) {
  static_assert(std::is_nothrow_move_constructible_v<AllocationHandle>);
  static_assert(std::is_nothrow_move_constructible_v<IOLease>);
  AllocationHandle h = *io_.Allocate(1 << 16);
  void* p = h.data();
  std::memset(p, 0x42, 1 << 16);
  const uint64_t allocations = sys_->stats().allocations;
  AllocationHandle moved = std::move(h);
  IOLease lease = *io_.Export(std::move(moved));
  IOLease lease2 = std::move(lease);
  EXPECT_EQ(lease2.data(), p);
  EXPECT_EQ(Checksum(lease2.data(), 1 << 16), Checksum(p, 1 << 16));
  EXPECT_EQ(sys_->stats().allocations, allocations);  // no new buffer was made for a copy
}

}  // namespace
}  // namespace inferd::memory
