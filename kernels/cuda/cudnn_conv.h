// CudnnConvPlan: one Conv or ConvTranspose node's cuDNN convolution for one set of input shapes
// on one device: its descriptors, the algorithm cuDNN's heuristic picks (no benchmarking), and
// the exact workspace it needs (the staging buffer of conv_geometry.h, then cuDNN's own
// workspace). The kernel (conv.cc) and the load-time estimate (KernelDef::estimate_workspace)
// both build plans with MakeCudnnConvPlan, so they pick the same algorithm and bytes.
//
// Full float32: the convolution descriptor's math type is CUDNN_FMA_MATH and algorithms that
// use tensor cores (TF32) are skipped, as cuBLAS's default math mode does for MatMul.
//
// A plan is immutable once made; Run may be called from several threads at once, each with its
// own handle (cudnn_handle.h) and workspace. Built only with --config=cuda.
//
// Example:
//   INFERD_ASSIGN_OR_RETURN(ConvGeometry g, ComputeConvGeometry(attrs, x, w, b, node));
//   INFERD_ASSIGN_OR_RETURN(auto plan, MakeCudnnConvPlan(g, has_bias, device, node));
//   ... plan->workspace_bytes() from the arena ...
//   INFERD_RETURN_IF_ERROR(plan->Run(handle, x, w, b, y, workspace, stream));
#ifndef INFERD_KERNELS_CUDA_CUDNN_CONV_H_
#define INFERD_KERNELS_CUDA_CUDNN_CONV_H_

#include <cudnn.h>

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cuda/conv_geometry.h"

namespace inferd::kernels::cuda {

namespace cudnn_internal {
struct Descriptors;  // cudnn_conv.cc
}  // namespace cudnn_internal

class CudnnConvPlan {
 public:
  ~CudnnConvPlan();
  CudnnConvPlan(const CudnnConvPlan&) = delete;
  CudnnConvPlan& operator=(const CudnnConvPlan&) = delete;

  const ConvGeometry& geometry() const { return geometry_; }
  // Arena workspace for one run: the staging buffer (rounded up to 256 bytes), then cuDNN's.
  size_t workspace_bytes() const { return staging_bytes_ + cudnn_bytes_; }
  // cuDNN's algorithm (cudnnConvolutionFwdAlgo_t, or cudnnConvolutionBwdDataAlgo_t for
  // ConvTranspose), -1 for a degenerate node.
  int algorithm() const { return algorithm_; }

  // Enqueues the convolution on `handle`'s stream (bound by CudnnHandleFor): y = conv(x, w) + b
  // (b nullptr: no bias). `workspace` holds workspace_bytes() (nullptr when 0). Device pointers.
  absl::Status Run(cudnnHandle_t handle, cudaStream_t stream, const float* x, const float* w,
                   const float* b, float* y, void* workspace, const cpu::NodeLabel& node) const;

 private:
  friend absl::StatusOr<std::shared_ptr<const CudnnConvPlan>> MakeCudnnConvPlan(
      const ConvGeometry&, bool, int, const cpu::NodeLabel&);
  explicit CudnnConvPlan(ConvGeometry geometry);

  const ConvGeometry geometry_;
  std::unique_ptr<cudnn_internal::Descriptors> desc_;
  int algorithm_ = -1;
  size_t staging_bytes_ = 0, cudnn_bytes_ = 0;
};

// The plan for `geometry` on CUDA device `device`: descriptors, then the heuristic's first
// full-float32 algorithm that cuDNN supports for them (preferring one whose workspace is at most
// 256 MiB), and its workspace size. Needs the device (the heuristic asks cuDNN, which asks the
// GPU): FAILED_PRECONDITION "no CUDA device ..." without one.
absl::StatusOr<std::shared_ptr<const CudnnConvPlan>> MakeCudnnConvPlan(const ConvGeometry& geometry,
                                                                       bool has_bias, int device,
                                                                       const cpu::NodeLabel& node);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_CUDNN_CONV_H_
