#include "memory/allocation_handle.h"

#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>
#include <utility>

#include "memory/execution_arena.h"
#include "memory/fake_system_allocator.h"

namespace inferd::memory {
namespace {

static_assert(!std::is_copy_constructible_v<AllocationHandle>);
static_assert(!std::is_copy_assignable_v<AllocationHandle>);
static_assert(std::is_nothrow_move_constructible_v<AllocationHandle>);
static_assert(std::is_nothrow_move_assignable_v<AllocationHandle>);

class AllocationHandleTest : public ::testing::Test {
 protected:
  std::shared_ptr<FakeSystemAllocator> sys_ = std::make_shared<FakeSystemAllocator>();
  ExecutionArena arena_{sys_};
};

TEST_F(AllocationHandleTest, ReportsSizeCapacityAndArena) {
  AllocationHandle h = *arena_.Allocate(100);
  EXPECT_TRUE(h.valid());
  EXPECT_EQ(h.size(), 100u);
  EXPECT_EQ(h.capacity(), 112u);
  EXPECT_EQ(h.arena_kind(), ArenaKind::kExecution);
  EXPECT_TRUE(arena_.Owns(h));
}

TEST_F(AllocationHandleTest, ReleaseIsIdempotent) {
  AllocationHandle h = *arena_.Allocate(256);
  h.Release();
  EXPECT_FALSE(h.valid());
  h.Release();
  EXPECT_EQ(arena_.Stats().live_buffers, 0u);
  EXPECT_EQ(arena_.Stats().retained_buffers, 1u);
}

TEST_F(AllocationHandleTest, DestructionReleases) {
  { AllocationHandle h = *arena_.Allocate(256); }
  EXPECT_EQ(arena_.Stats().live_bytes, 0u);
  EXPECT_EQ(arena_.Stats().retained_bytes, 256u);
}

TEST_F(AllocationHandleTest, MoveAssignmentReleasesTheOverwrittenBuffer) {
  AllocationHandle a = *arena_.Allocate(256);
  AllocationHandle b = *arena_.Allocate(512);
  void* pb = b.data();
  a = std::move(b);
  EXPECT_EQ(a.data(), pb);
  EXPECT_FALSE(b.valid());
  EXPECT_EQ(arena_.Stats().live_buffers, 1u);
  EXPECT_EQ(arena_.Stats().retained_bytes, 256u);
}

TEST_F(AllocationHandleTest, OutlivesItsArenaObject) {
  auto arena = std::make_unique<ExecutionArena>(sys_);
  AllocationHandle h = *arena->Allocate(4096);
  std::memset(h.data(), 7, 4096);
  arena.reset();
  EXPECT_EQ(static_cast<unsigned char*>(h.data())[4095], 7);
  EXPECT_EQ(sys_->Outstanding().size(), 1u);
  h.Release();  // the arena is gone: straight back to the system
  EXPECT_TRUE(sys_->Outstanding().empty());
  EXPECT_EQ(sys_->misuses(), 0u);
}

}  // namespace
}  // namespace inferd::memory
