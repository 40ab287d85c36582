#include "memory/system_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "memory/fake_system_allocator.h"

namespace inferd::memory {
namespace {

TEST(CpuSystemAllocator, AlignsSmallAndLargeBuffersTo64Bytes) {
  CpuSystemAllocator a;
  for (size_t bytes : {1u, 64u, 1000u, 64u * 1024, 3u << 20}) {
    absl::StatusOr<void*> p = a.Allocate(bytes);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % 64, 0u);
    std::memset(*p, 0xAB, bytes);
    a.Free(*p, bytes);
  }
  EXPECT_EQ(a.stats().allocations, 5u);
  EXPECT_EQ(a.stats().frees, 5u);
  EXPECT_EQ(a.stats().bytes_in_use, 0u);
  EXPECT_EQ(a.stats().peak_bytes_in_use, 3u << 20);
}

TEST(CpuSystemAllocator, LimitIsResourceExhaustedWithSizes) {
  CpuSystemAllocator a("cpu:1", 1 << 20);
  absl::StatusOr<void*> p = a.Allocate(768 << 10);
  ASSERT_TRUE(p.ok());
  absl::StatusOr<void*> q = a.Allocate(512 << 10);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(q.status().message().find("cpu:1"), std::string::npos);
  EXPECT_NE(q.status().message().find("524288"), std::string::npos) << q.status();
  EXPECT_NE(q.status().message().find("1048576"), std::string::npos) << q.status();
  EXPECT_EQ(a.stats().failures, 1u);
  a.Free(*p, 768 << 10);
  q = a.Allocate(512 << 10);
  ASSERT_TRUE(q.ok());
  a.Free(*q, 512 << 10);
}

TEST(CpuSystemAllocator, RejectsBadAlignment) {
  CpuSystemAllocator a;
  EXPECT_EQ(a.Allocate(128, 96).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(a.Allocate(128, 8192).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FakeSystemAllocator, CountsAndFailsOnRequest) {
  FakeSystemAllocator f;
  f.FailNextAllocations(2);
  EXPECT_FALSE(f.Allocate(100).ok());
  EXPECT_FALSE(f.Allocate(100).ok());
  absl::StatusOr<void*> p = f.Allocate(100);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(f.Outstanding().size(), 1u);
  f.Free(*p, 99);  // wrong size: a misuse, not freed
  EXPECT_EQ(f.misuses(), 1u);
  f.Free(*p, 100);
  EXPECT_TRUE(f.Outstanding().empty());
  EXPECT_EQ(f.stats().failures, 2u);
  f.SetLimit(1000);
  EXPECT_FALSE(f.Allocate(2000).ok());
  f.SetFailAll(true);
  EXPECT_FALSE(f.Allocate(10).ok());
}

}  // namespace
}  // namespace inferd::memory
