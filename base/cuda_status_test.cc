// CudaStatus and the device checks. These run without a GPU: they only read error tables and
// the driver's answer.
#include "base/cuda_status.h"

#include "gtest/gtest.h"

namespace inferd {
namespace {

TEST(CudaStatusTest, SuccessIsOk) { EXPECT_TRUE(CudaStatus(cudaSuccess, "anything").ok()); }

TEST(CudaStatusTest, OutOfMemoryIsResourceExhaustedAndNamesTheCall) {
  const absl::Status s = CudaStatus(cudaErrorMemoryAllocation, "cudaMalloc(1 GiB) on cuda:0");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("cudaMalloc(1 GiB) on cuda:0"), absl::string_view::npos);
  EXPECT_NE(s.message().find("cudaErrorMemoryAllocation"), absl::string_view::npos);
}

TEST(CudaStatusTest, CodesByKind) {
  EXPECT_EQ(CudaStatus(cudaErrorNoDevice, "x").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CudaStatus(cudaErrorInvalidValue, "x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaStatus(cudaErrorLaunchFailure, "x").code(), absl::StatusCode::kInternal);
}

TEST(CudaStatusTest, ReturnIfErrorReturnsTheFailingExpression) {
  auto f = []() -> absl::Status {
    INFERD_CUDA_RETURN_IF_ERROR(cudaErrorInvalidValue);
    return absl::OkStatus();
  };
  const absl::Status s = f();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("cudaErrorInvalidValue"), absl::string_view::npos);
}

// With or without a GPU: a device past the count is refused with the "no CUDA device" wording
// the GPU tests skip with, and the count, when there is one, is positive.
TEST(CudaStatusTest, DeviceChecks) {
  const absl::Status far = CheckCudaDevice(4096);
  EXPECT_EQ(far.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(far.message().rfind("no CUDA device", 0), 0u) << far.message();
  EXPECT_FALSE(CheckCudaDevice(-1).ok());
  const absl::StatusOr<int> count = CudaDeviceCount();
  if (count.ok()) {
    EXPECT_GT(*count, 0);
    EXPECT_TRUE(CheckCudaDevice(0).ok());
  } else {
    EXPECT_EQ(count.status().message().rfind("no CUDA device: ", 0), 0u)
        << count.status().message();
    EXPECT_EQ(CheckCudaDevice(0).code(), absl::StatusCode::kFailedPrecondition);
  }
}

}  // namespace
}  // namespace inferd
