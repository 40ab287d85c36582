// CudaStream, CudaEvent and CudaContextOf. Tests that need a GPU skip themselves ("no CUDA
// device: ...") where there is none.
#include "engine/cuda_stream.h"

#include <cuda_runtime_api.h>

#include <vector>

#include "base/cuda_status.h"
#include "base/testing/cuda_device.h"
#include "engine/cuda_kernel_context.h"
#include "gtest/gtest.h"

namespace inferd::engine {
namespace {

TEST(CudaStreamTest, RefusesADeviceThatDoesNotExist) {
  absl::StatusOr<CudaStream> s = CudaStream::Create(4096);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(CudaEvent::Create(4096).ok());
  CudaStream empty;
  EXPECT_FALSE(empty.valid());
}

TEST(CudaStreamTest, MovedFromStreamIsEmptyAndOwnershipMoves) {
  SKIP_WITHOUT_CUDA_DEVICE();
  absl::StatusOr<CudaStream> a = CudaStream::Create(0);
  ASSERT_TRUE(a.ok()) << a.status();
  const cudaStream_t raw = a->get();
  CudaStream b = std::move(*a);
  EXPECT_FALSE(a->valid());
  EXPECT_EQ(b.get(), raw);
  EXPECT_EQ(b.device(), 0);
  EXPECT_TRUE(b.Synchronize().ok());
}

// Stream `later` waits on an event recorded on `first`: it reads what `first` wrote, without a
// device-wide synchronization.
TEST(CudaStreamTest, EventOrdersOneStreamAfterAnother) {
  SKIP_WITHOUT_CUDA_DEVICE();
  auto first = CudaStream::Create(0);
  auto later = CudaStream::Create(0);
  auto written = CudaEvent::Create(0);
  ASSERT_TRUE(first.ok() && later.ok() && written.ok());
  const size_t n = 256 << 20;  // large enough that the fill is still running when `later` starts
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, n), cudaSuccess);
  unsigned char* host = nullptr;
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&host), 2, cudaHostAllocDefault), cudaSuccess);
  host[0] = host[1] = 0;

  for (unsigned char value : {7, 42}) {
    ASSERT_EQ(cudaMemsetAsync(device, value, n, first->get()), cudaSuccess);
    ASSERT_TRUE(written->Record(*first).ok());
    ASSERT_TRUE(later->Wait(*written).ok());
    const auto* bytes = static_cast<const unsigned char*>(device);
    ASSERT_EQ(cudaMemcpyAsync(host, bytes + n - 1, 1, cudaMemcpyDeviceToHost, later->get()),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(host + 1, bytes, 1, cudaMemcpyDeviceToHost, later->get()),
              cudaSuccess);
    ASSERT_TRUE(later->Synchronize().ok());
    EXPECT_EQ(host[0], value);
    EXPECT_EQ(host[1], value);
    absl::StatusOr<bool> done = written->Done();
    ASSERT_TRUE(done.ok()) << done.status();
    EXPECT_TRUE(*done);
  }
  ASSERT_EQ(cudaFreeHost(host), cudaSuccess);
  ASSERT_EQ(cudaFree(device), cudaSuccess);
}

TEST(CudaStreamTest, TimingEventsMeasureEnqueuedWork) {
  SKIP_WITHOUT_CUDA_DEVICE();
  auto stream = CudaStream::Create(0);
  auto start = CudaEvent::Create(0, /*timing=*/true);
  auto end = CudaEvent::Create(0, /*timing=*/true);
  ASSERT_TRUE(stream.ok() && start.ok() && end.ok());
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 64 << 20), cudaSuccess);
  ASSERT_TRUE(start->Record(*stream).ok());
  ASSERT_EQ(cudaMemsetAsync(device, 1, 64 << 20, stream->get()), cudaSuccess);
  ASSERT_TRUE(end->Record(*stream).ok());
  ASSERT_TRUE(end->Synchronize().ok());
  absl::StatusOr<float> ms = CudaEvent::ElapsedMillis(*start, *end);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GT(*ms, 0.0f);
  ASSERT_EQ(cudaFree(device), cudaSuccess);
}

// A KernelContext of a host run: every call fails; only its type matters here.
class HostContext : public KernelContext {
 public:
  int num_inputs() const override { return 0; }
  const Tensor* input(int) const override { return nullptr; }
  int num_outputs() const override { return 0; }
  bool output_wanted(int) const override { return false; }
  absl::StatusOr<Tensor*> MakeOutputTensor(int, DataType, const Shape&) override {
    return absl::UnimplementedError("host context");
  }
  absl::StatusOr<Tensor*> MakeOutputAlias(int, int, const Shape&) override {
    return absl::UnimplementedError("host context");
  }
  absl::StatusOr<Tensor> MakeTemporaryTensor(DataType, const Shape&) override {
    return absl::UnimplementedError("host context");
  }
  absl::StatusOr<void*> GetWorkspace(int) override {
    return absl::UnimplementedError("host context");
  }
  ThreadPool& threads() override { return pool_; }

 private:
  ThreadPool pool_{1};
};

class DeviceContext : public HostContext, public CudaKernelContext {
 public:
  int cuda_device() const override { return 3; }
  cudaStream_t cuda_stream() const override { return nullptr; }
};

TEST(CudaKernelContextTest, FoundOnlyInACudaRun) {
  HostContext host;
  absl::StatusOr<const CudaKernelContext*> none = CudaContextOf(host, "relu_1");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(none.status().message().find("relu_1"), absl::string_view::npos);

  DeviceContext device;
  absl::StatusOr<const CudaKernelContext*> cuda = CudaContextOf(device, "relu_1");
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_EQ((*cuda)->cuda_device(), 3);
}

}  // namespace
}  // namespace inferd::engine
