// The CUDA system allocators, alone and under the arenas. Tests that need a GPU skip themselves
// ("no CUDA device: ...") where there is none; the others run everywhere --config=cuda builds.
#include "memory/cuda_system_allocator.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "base/cuda_status.h"
#include "base/testing/cuda_device.h"
#include "gtest/gtest.h"
#include "memory/execution_arena.h"
#include "memory/io_arena.h"

namespace inferd::memory {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(CudaSystemAllocatorTest, RefusesADeviceThatDoesNotExist) {
  absl::StatusOr<std::shared_ptr<CudaSystemAllocator>> a = CudaSystemAllocator::Create(4096);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(a.status().message().rfind("no CUDA device", 0), 0u) << a.status().message();
  EXPECT_FALSE(CudaDeviceMemory(4096).ok());
}

TEST(CudaSystemAllocatorTest, AllocateMemsetAndCopyRoundTrip) {
  SKIP_WITHOUT_CUDA_DEVICE();
  auto gpu = CudaSystemAllocator::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  EXPECT_EQ((*gpu)->device(), "cuda:0");
  const size_t n = 3 * kMiB + 123;
  absl::StatusOr<void*> p = (*gpu)->Allocate(n);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % kCudaAlignment, 0u);
  cudaPointerAttributes attributes;
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, *p), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attributes.device, 0);

  std::vector<unsigned char> back(n, 0);
  ASSERT_EQ(cudaMemset(*p, 0x5A, n), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), *p, n, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, std::vector<unsigned char>(n, 0x5A));

  std::vector<unsigned char> pattern(n);
  for (size_t i = 0; i < n; ++i) pattern[i] = static_cast<unsigned char>(i * 131 + 7);
  ASSERT_EQ(cudaMemcpy(*p, pattern.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), *p, n, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, pattern);

  EXPECT_EQ((*gpu)->stats().bytes_in_use, n);
  (*gpu)->Free(*p, n);
  const SystemAllocatorStats stats = (*gpu)->stats();
  EXPECT_EQ(stats.allocations, 1u);
  EXPECT_EQ(stats.frees, 1u);
  EXPECT_EQ(stats.bytes_in_use, 0u);
}

// The arenas are the pool: a retained buffer holds device memory until Trim, which gives it back
// to the driver at once.
TEST(CudaSystemAllocatorTest, ArenaTrimReturnsMemoryToTheDevice) {
  SKIP_WITHOUT_CUDA_DEVICE();
  auto gpu = CudaSystemAllocator::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  ExecutionArena arena(*gpu);
  const uint64_t size = 512 * kMiB;
  auto before = CudaDeviceMemory(0);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_GT(before->free_bytes, 2 * size) << "the device has too little free memory for the test";
  {
    absl::StatusOr<AllocationHandle> h = arena.Allocate(size);
    ASSERT_TRUE(h.ok()) << h.status();
  }  // released: retained by the arena
  auto retained = CudaDeviceMemory(0);
  ASSERT_TRUE(retained.ok());
  EXPECT_LE(retained->free_bytes + size, before->free_bytes + 16 * kMiB);
  EXPECT_GE(arena.Stats().retained_bytes, size);

  // The same size again comes from the free list: no second cudaMalloc.
  {
    absl::StatusOr<AllocationHandle> h = arena.Allocate(size);
    ASSERT_TRUE(h.ok()) << h.status();
  }
  EXPECT_EQ((*gpu)->stats().allocations, 1u);

  EXPECT_GE(arena.Trim(), size);
  auto after = CudaDeviceMemory(0);
  ASSERT_TRUE(after.ok());
  EXPECT_GE(after->free_bytes + 16 * kMiB, retained->free_bytes + size);
  EXPECT_EQ((*gpu)->stats().bytes_in_use, 0u);
  EXPECT_EQ((*gpu)->stats().frees, 1u);
}

TEST(CudaSystemAllocatorTest, OutOfMemoryIsResourceExhaustedAndLeavesTheDeviceUsable) {
  SKIP_WITHOUT_CUDA_DEVICE();
  auto gpu = CudaSystemAllocator::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  auto mem = CudaDeviceMemory(0);
  ASSERT_TRUE(mem.ok());
  ExecutionArena arena(*gpu);
  absl::StatusOr<AllocationHandle> h = arena.Allocate(mem->total_bytes * 2);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), absl::StatusCode::kResourceExhausted) << h.status();
  EXPECT_NE(h.status().message().find("cuda:0"), absl::string_view::npos) << h.status();
  EXPECT_EQ((*gpu)->stats().failures, 1u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  absl::StatusOr<AllocationHandle> small = arena.Allocate(kMiB);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(cudaMemset(small->data(), 0, kMiB), cudaSuccess);
}

TEST(CudaSystemAllocatorTest, DeviceMemoryIsConsistent) {
  SKIP_WITHOUT_CUDA_DEVICE();
  auto mem = CudaDeviceMemory(0);
  ASSERT_TRUE(mem.ok()) << mem.status();
  EXPECT_GT(mem->total_bytes, 0u);
  EXPECT_LE(mem->free_bytes, mem->total_bytes);
}

// Graph outputs live in a host IOArena over pinned memory: page-locked, plain host pointers that
// a lease hands to gRPC, and the target of asynchronous device-to-host copies.
TEST(PinnedHostSystemAllocatorTest, IOArenaBuffersArePinnedAndReceiveAsyncCopies) {
  SKIP_WITHOUT_CUDA_DEVICE();
  auto pinned = PinnedHostSystemAllocator::Create();
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  auto gpu = CudaSystemAllocator::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  IOArena io(*pinned);
  ExecutionArena device(*gpu);
  const size_t n = kMiB;
  absl::StatusOr<AllocationHandle> out = io.Allocate(n);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<AllocationHandle> src = device.Allocate(n);
  ASSERT_TRUE(src.ok()) << src.status();

  cudaPointerAttributes attributes;
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, out->data()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);

  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  std::memset(out->data(), 0, n);
  ASSERT_EQ(cudaMemsetAsync(src->data(), 0x3C, n, stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(out->data(), src->data(), n, cudaMemcpyDeviceToHost, stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  const auto* bytes = static_cast<const unsigned char*>(out->data());
  EXPECT_EQ(std::vector<unsigned char>(bytes, bytes + n), std::vector<unsigned char>(n, 0x3C));

  absl::StatusOr<IOLease> lease = io.Export(std::move(*out));
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_EQ(static_cast<const unsigned char*>(lease->data())[n - 1], 0x3C);
  lease->Reset();
  EXPECT_GE(io.Trim(), n);
  EXPECT_EQ((*pinned)->stats().bytes_in_use, 0u);
}

}  // namespace
}  // namespace inferd::memory
