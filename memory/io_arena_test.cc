#include "memory/io_arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "memory/execution_arena.h"
#include "memory/fake_system_allocator.h"

namespace inferd::memory {
namespace {

class IOArenaTest : public ::testing::Test {
 protected:
  std::shared_ptr<FakeSystemAllocator> sys_ = std::make_shared<FakeSystemAllocator>();
  IOArena arena_{sys_};
};

TEST_F(IOArenaTest, ExportKeepsTheBufferAndEmptiesTheHandle) {
  AllocationHandle h = *arena_.Allocate(1000);
  void* p = h.data();
  std::memset(p, 3, 1000);
  absl::StatusOr<IOLease> lease = arena_.Export(std::move(h));
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_FALSE(h.valid());
  EXPECT_EQ(lease->data(), p);
  EXPECT_EQ(lease->size(), 1000u);
  EXPECT_EQ(lease->capacity(), 1024u);
  EXPECT_EQ(lease->use_count(), 1);
  EXPECT_EQ(static_cast<const unsigned char*>(lease->data())[999], 3);
  ArenaStats s = arena_.Stats();
  EXPECT_EQ(s.outstanding_leases, 1u);
  EXPECT_EQ(s.live_bytes, 1024u);  // a leased buffer is live, not retained
  EXPECT_EQ(s.retained_bytes, 0u);
}

TEST_F(IOArenaTest, CopiesShareThePinAndTheLastOneReturnsTheBuffer) {
  IOLease a = *arena_.Export(*arena_.Allocate(4096));
  IOLease b = a;
  IOLease c;
  c = b;
  EXPECT_EQ(a.use_count(), 3);
  a.Reset();
  b.Reset();
  EXPECT_EQ(arena_.Stats().retained_buffers, 0u);
  EXPECT_EQ(arena_.Stats().outstanding_leases, 1u);
  c.Reset();
  EXPECT_EQ(arena_.Stats().retained_buffers, 1u);
  EXPECT_EQ(arena_.Stats().outstanding_leases, 0u);
  EXPECT_EQ(arena_.Stats().system_frees, 0u);
}

TEST_F(IOArenaTest, SlicesShareThePinAndOutliveTheWholeLease) {
  IOLease whole = *arena_.Export(*arena_.Allocate(1000));
  auto* bytes = static_cast<unsigned char*>(whole.mutable_data());
  for (int i = 0; i < 1000; ++i) bytes[i] = static_cast<unsigned char>(i % 251);
  absl::StatusOr<IOLease> first = whole.Slice(0, 400);
  absl::StatusOr<IOLease> second = whole.Slice(400, 600);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->data(), whole.data());
  EXPECT_EQ(first->size(), 400u);
  EXPECT_EQ(second->size(), 600u);
  EXPECT_EQ(second->capacity(), 600u);
  EXPECT_EQ(static_cast<const unsigned char*>(second->data())[0], 400 % 251);
  EXPECT_EQ(whole.use_count(), 3);
  whole.Reset();
  first->Reset();
  EXPECT_EQ(arena_.Stats().outstanding_leases, 1u);  // the second slice still pins it
  EXPECT_EQ(static_cast<const unsigned char*>(second->data())[599], 999 % 251);
  second->Reset();
  EXPECT_EQ(arena_.Stats().outstanding_leases, 0u);
  EXPECT_EQ(arena_.Stats().retained_buffers, 1u);
}

TEST_F(IOArenaTest, SliceOutsideTheLeaseIsRefused) {
  IOLease whole = *arena_.Export(*arena_.Allocate(100));
  absl::StatusOr<IOLease> at_end = whole.Slice(100, 0);  // an empty slice at the end
  EXPECT_TRUE(at_end.ok());
  EXPECT_EQ(whole.Slice(0, 101).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(whole.Slice(101, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(whole.Slice(50, SIZE_MAX).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(IOLease().Slice(0, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(whole.use_count(), 2);  // the refused slices took no share
}

TEST_F(IOArenaTest, MovingALeaseKeepsOneReference) {
  IOLease a = *arena_.Export(*arena_.Allocate(64));
  const void* p = a.data();
  IOLease b = std::move(a);
  EXPECT_FALSE(a.valid());
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.use_count(), 1);
}

TEST_F(IOArenaTest, ExportOfAnotherArenasHandleIsRefusedAndLeavesItUntouched) {
  ExecutionArena other(sys_);
  AllocationHandle h = *other.Allocate(128);
  void* p = h.data();
  absl::StatusOr<IOLease> lease = arena_.Export(std::move(h));
  EXPECT_EQ(lease.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(h.valid());
  EXPECT_EQ(h.data(), p);
  EXPECT_EQ(arena_.Export(AllocationHandle()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(IOArenaTest, TrimAndCapLeaveLeasedBuffersAlone) {
  IOLease lease = *arena_.Export(*arena_.Allocate(8192));
  std::memset(lease.mutable_data(), 9, 8192);
  arena_.SetRetentionCap(0);
  EXPECT_EQ(arena_.Trim(), 0u);
  EXPECT_EQ(static_cast<const unsigned char*>(lease.data())[8191], 9);
  EXPECT_EQ(sys_->Outstanding().size(), 1u);
}

TEST_F(IOArenaTest, LeaseOutlivesTheArenaAndThenFreesToTheSystem) {
  auto arena = std::make_unique<IOArena>(sys_);
  { AllocationHandle retained = *arena->Allocate(256); }
  IOLease lease = *arena->Export(*arena->Allocate(4096));
  std::memset(lease.mutable_data(), 1, 4096);
  arena.reset();  // frees the retained buffer; the leased one stays
  EXPECT_EQ(sys_->Outstanding().size(), 1u);
  EXPECT_EQ(static_cast<const unsigned char*>(lease.data())[4095], 1);
  IOLease copy = lease;
  lease.Reset();
  EXPECT_EQ(sys_->Outstanding().size(), 1u);
  copy.Reset();
  EXPECT_TRUE(sys_->Outstanding().empty());
  EXPECT_EQ(sys_->misuses(), 0u);
}

TEST_F(IOArenaTest, LastLeaseMayDropOnAnotherThread) {
  IOLease lease = *arena_.Export(*arena_.Allocate(2048));
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([copy = lease]() mutable { copy.Reset(); });
  }
  lease.Reset();
  for (auto& t : threads) t.join();
  EXPECT_EQ(arena_.Stats().outstanding_leases, 0u);
  EXPECT_EQ(arena_.Stats().retained_buffers, 1u);
}

}  // namespace
}  // namespace inferd::memory
