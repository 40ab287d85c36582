#include "kernels/cuda/cudnn_conv.h"

#include <cuda_runtime_api.h>

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"
#include "kernels/cuda/cudnn_handle.h"

namespace inferd::kernels::cuda {
namespace cudnn_internal {

struct TensorDeleter {
  void operator()(cudnnTensorDescriptor_t d) const { cudnnDestroyTensorDescriptor(d); }
};
struct FilterDeleter {
  void operator()(cudnnFilterDescriptor_t d) const { cudnnDestroyFilterDescriptor(d); }
};
struct ConvDeleter {
  void operator()(cudnnConvolutionDescriptor_t d) const { cudnnDestroyConvolutionDescriptor(d); }
};
using TensorDesc = std::unique_ptr<cudnnTensorStruct, TensorDeleter>;
using FilterDesc = std::unique_ptr<cudnnFilterStruct, FilterDeleter>;
using ConvDesc = std::unique_ptr<cudnnConvolutionStruct, ConvDeleter>;

// A plan's descriptors (host objects, read-only once made). Which are set:
//   always: out (the node's output), bias (when there is one);
//   not degenerate: x, w, y, conv (cuDNN's convolution, conv_geometry.h);
//   staged: node (the node's input for Conv, output for ConvTranspose, packed) and view (the
//     same dims with the staging buffer's strides).
struct Descriptors {
  TensorDesc out, bias, x, y, node, view;
  FilterDesc w;
  ConvDesc conv;
  int64_t view_offset = 0;  // elements from the staging buffer's start to the view's
};

}  // namespace cudnn_internal

namespace {

using cudnn_internal::ConvDesc;
using cudnn_internal::Descriptors;
using cudnn_internal::FilterDesc;
using cudnn_internal::TensorDesc;

// Algorithms whose workspace is at most this are preferred over faster ones that need more.
constexpr size_t kPreferredWorkspace = size_t{256} << 20;
constexpr size_t kStagingAlignment = 256;

std::vector<int64_t> PackedStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = s;
    s *= dims[i];
  }
  return strides;
}

int64_t Elements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int> Ints(const std::vector<int64_t>& v) {
  return std::vector<int>(v.begin(), v.end());
}

// A float32 tensor of `dims` with `strides` (empty: packed).
absl::StatusOr<TensorDesc> MakeTensor(const std::vector<int64_t>& dims,
                                      std::vector<int64_t> strides = {}) {
  if (strides.empty()) strides = PackedStrides(dims);
  cudnnTensorDescriptor_t d = nullptr;
  INFERD_RETURN_IF_ERROR(
      CudnnStatus(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor"));
  TensorDesc desc(d);
  const std::vector<int> di = Ints(dims), st = Ints(strides);
  INFERD_RETURN_IF_ERROR(
      CudnnStatus(cudnnSetTensorNdDescriptor(d, CUDNN_DATA_FLOAT, static_cast<int>(di.size()),
                                             di.data(), st.data()),
                  "cudnnSetTensorNdDescriptor"));
  return desc;
}

// The bias as [1, M, 1, ...] in the output's rank.
absl::StatusOr<TensorDesc> MakeBias(const std::vector<int64_t>& output) {
  std::vector<int64_t> dims(output.size(), 1);
  dims[1] = output[1];
  return MakeTensor(dims);
}

absl::StatusOr<FilterDesc> MakeFilter(const std::vector<int64_t>& dims) {
  cudnnFilterDescriptor_t d = nullptr;
  INFERD_RETURN_IF_ERROR(
      CudnnStatus(cudnnCreateFilterDescriptor(&d), "cudnnCreateFilterDescriptor"));
  FilterDesc desc(d);
  const std::vector<int> di = Ints(dims);
  INFERD_RETURN_IF_ERROR(
      CudnnStatus(cudnnSetFilterNdDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                             static_cast<int>(di.size()), di.data()),
                  "cudnnSetFilterNdDescriptor"));
  return desc;
}

absl::StatusOr<ConvDesc> MakeConvolution(const ConvGeometry& g) {
  cudnnConvolutionDescriptor_t d = nullptr;
  INFERD_RETURN_IF_ERROR(
      CudnnStatus(cudnnCreateConvolutionDescriptor(&d), "cudnnCreateConvolutionDescriptor"));
  ConvDesc desc(d);
  const std::vector<int> pad = Ints(g.pad), strides = Ints(g.strides),
                         dilations = Ints(g.dilations);
  INFERD_RETURN_IF_ERROR(CudnnStatus(
      cudnnSetConvolutionNdDescriptor(d, static_cast<int>(pad.size()), pad.data(), strides.data(),
                                      dilations.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
      "cudnnSetConvolutionNdDescriptor"));
  INFERD_RETURN_IF_ERROR(CudnnStatus(cudnnSetConvolutionGroupCount(d, static_cast<int>(g.group)),
                                     "cudnnSetConvolutionGroupCount"));
  INFERD_RETURN_IF_ERROR(
      CudnnStatus(cudnnSetConvolutionMathType(d, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType"));
  return desc;
}

struct Choice {
  int algorithm = -1;
  size_t bytes = 0;
};

// The first of the heuristic's `count` results (best first) that cuDNN supports, that is full
// float32 (no tensor-op math) and whose workspace cuDNN can size with `size(algo, &bytes)`;
// the first of those within kPreferredWorkspace if there is one.
template <typename Perf, typename SizeFn>
std::optional<Choice> Choose(const std::vector<Perf>& perf, int count, SizeFn size) {
  std::optional<Choice> first;
  for (int i = 0; i < count; ++i) {
    const Perf& p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS || p.mathType == CUDNN_TENSOR_OP_MATH ||
        p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) {
      continue;
    }
    size_t bytes = 0;
    if (size(p.algo, &bytes) != CUDNN_STATUS_SUCCESS) continue;
    const Choice c{static_cast<int>(p.algo), bytes};
    if (bytes <= kPreferredWorkspace) return c;
    if (!first) first = c;
  }
  return first;
}

absl::StatusOr<Choice> ChooseForward(cudnnHandle_t h, const Descriptors& d,
                                     const cpu::NodeLabel& node) {
  int max_count = 0;
  INFERD_RETURN_IF_ERROR(CudnnStatus(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max_count),
                                     "cudnnGetConvolutionForwardAlgorithmMaxCount"));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(max_count, 1));
  int count = 0;
  INFERD_RETURN_IF_ERROR(CudnnStatus(
      cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                             static_cast<int>(perf.size()), &count, perf.data()),
      absl::StrCat(node.prefix(), "cudnnGetConvolutionForwardAlgorithm_v7")));
  std::optional<Choice> c = Choose(perf, count, [&](cudnnConvolutionFwdAlgo_t algo, size_t* b) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                   algo, b);
  });
  if (!c) return node.Unimplemented("cuDNN has no full-float32 forward algorithm for it");
  return *c;
}

absl::StatusOr<Choice> ChooseBackwardData(cudnnHandle_t h, const Descriptors& d,
                                          const cpu::NodeLabel& node) {
  int max_count = 0;
  INFERD_RETURN_IF_ERROR(
      CudnnStatus(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max_count),
                  "cudnnGetConvolutionBackwardDataAlgorithmMaxCount"));
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(std::max(max_count, 1));
  int count = 0;
  // The convolution runs from y (cuDNN's dx) to x (dy, the node's input).
  INFERD_RETURN_IF_ERROR(CudnnStatus(
      cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w.get(), d.x.get(), d.conv.get(), d.y.get(),
                                                  static_cast<int>(perf.size()), &count,
                                                  perf.data()),
      absl::StrCat(node.prefix(), "cudnnGetConvolutionBackwardDataAlgorithm_v7")));
  std::optional<Choice> c = Choose(perf, count, [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* b) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w.get(), d.x.get(), d.conv.get(),
                                                        d.y.get(), algo, b);
  });
  if (!c) return node.Unimplemented("cuDNN has no full-float32 backward-data algorithm for it");
  return *c;
}

}  // namespace

CudnnConvPlan::CudnnConvPlan(ConvGeometry geometry)
    : geometry_(std::move(geometry)), desc_(std::make_unique<Descriptors>()) {}

CudnnConvPlan::~CudnnConvPlan() = default;

absl::StatusOr<std::shared_ptr<const CudnnConvPlan>> MakeCudnnConvPlan(const ConvGeometry& geometry,
                                                                       bool has_bias, int device,
                                                                       const cpu::NodeLabel& node) {
  INFERD_RETURN_IF_ERROR(CheckCudaDevice(device));
  std::shared_ptr<CudnnConvPlan> plan(new CudnnConvPlan(geometry));
  const ConvGeometry& g = plan->geometry_;
  Descriptors& d = *plan->desc_;
  if (Elements(g.output) == 0) return std::shared_ptr<const CudnnConvPlan>(std::move(plan));
  INFERD_ASSIGN_OR_RETURN(d.out, MakeTensor(g.output));
  if (has_bias) {
    INFERD_ASSIGN_OR_RETURN(d.bias, MakeBias(g.output));
  }
  if (g.degenerate) return std::shared_ptr<const CudnnConvPlan>(std::move(plan));

  // pass 1: cuDNN's tensors and the convolution.
  INFERD_ASSIGN_OR_RETURN(d.x, MakeTensor(g.x));
  INFERD_ASSIGN_OR_RETURN(d.y, MakeTensor(g.y));
  INFERD_ASSIGN_OR_RETURN(d.w, MakeFilter(g.w));
  INFERD_ASSIGN_OR_RETURN(d.conv, MakeConvolution(g));
  if (!g.transposed) {
    std::vector<int> dims(g.y.size());
    INFERD_RETURN_IF_ERROR(CudnnStatus(
        cudnnGetConvolutionNdForwardOutputDim(d.conv.get(), d.x.get(), d.w.get(),
                                              static_cast<int>(dims.size()), dims.data()),
        absl::StrCat(node.prefix(), "cudnnGetConvolutionNdForwardOutputDim")));
    if (std::vector<int64_t>(dims.begin(), dims.end()) != g.y) {
      return node.Internal("cuDNN's output shape differs from the ONNX one");
    }
  }
  // pass 2: the staging buffer: its view of the node's tensor.
  if (g.staged) {
    const std::vector<int64_t>& staged = g.transposed ? g.y : g.x;
    const std::vector<int64_t> strides = PackedStrides(staged);
    INFERD_ASSIGN_OR_RETURN(d.node, MakeTensor(g.node_tensor));
    INFERD_ASSIGN_OR_RETURN(d.view, MakeTensor(g.node_tensor, strides));
    for (size_t i = 0; i < g.offset.size(); ++i) d.view_offset += g.offset[i] * strides[2 + i];
    const size_t bytes = static_cast<size_t>(Elements(staged)) * sizeof(float);
    plan->staging_bytes_ = (bytes + kStagingAlignment - 1) / kStagingAlignment * kStagingAlignment;
  }
  // pass 3: the algorithm and its workspace (the heuristic: no benchmarking, nothing enqueued).
  INFERD_ASSIGN_OR_RETURN(cudnnHandle_t h, CudnnHandleFor(device, nullptr));
  INFERD_ASSIGN_OR_RETURN(
      Choice c, g.transposed ? ChooseBackwardData(h, d, node) : ChooseForward(h, d, node));
  plan->algorithm_ = c.algorithm;
  plan->cudnn_bytes_ = c.bytes;
  return std::shared_ptr<const CudnnConvPlan>(std::move(plan));
}

absl::Status CudnnConvPlan::Run(cudnnHandle_t h, cudaStream_t stream, const float* x,
                                const float* w, const float* b, float* y, void* workspace,
                                const cpu::NodeLabel& node) const {
  const ConvGeometry& g = geometry_;
  const Descriptors& d = *desc_;
  if (Elements(g.output) == 0) return absl::OkStatus();
  const float one = 1.0f, zero = 0.0f;
  auto what = [&](const char* call) { return absl::StrCat(node.prefix(), call); };
  if (g.degenerate) {  // no input reaches the output: the bias, or zeros
    INFERD_RETURN_IF_ERROR(CudaStatus(
        cudaMemsetAsync(y, 0, static_cast<size_t>(Elements(g.output)) * sizeof(float), stream),
        what("cudaMemsetAsync")));
  } else {
    if (workspace == nullptr && workspace_bytes() != 0) {
      return node.Internal(absl::StrCat("no workspace for the ", workspace_bytes(), " bytes"));
    }
    float* staging = static_cast<float*>(workspace);
    void* cudnn_ws = cudnn_bytes_ == 0 ? nullptr : static_cast<char*>(workspace) + staging_bytes_;
    if (!g.transposed) {
      const float* src = x;
      if (g.staged) {  // x inside zeros: the part of the padding cuDNN's symmetric one lacks
        INFERD_RETURN_IF_ERROR(CudaStatus(cudaMemsetAsync(staging, 0, staging_bytes_, stream),
                                          what("cudaMemsetAsync")));
        INFERD_RETURN_IF_ERROR(
            CudnnStatus(cudnnTransformTensor(h, &one, d.node.get(), x, &zero, d.view.get(),
                                             staging + d.view_offset),
                        what("cudnnTransformTensor")));
        src = staging;
      }
      INFERD_RETURN_IF_ERROR(
          CudnnStatus(cudnnConvolutionForward(h, &one, d.x.get(), src, d.w.get(), w, d.conv.get(),
                                              static_cast<cudnnConvolutionFwdAlgo_t>(algorithm_),
                                              cudnn_ws, cudnn_bytes_, &zero, d.y.get(), y),
                      what("cudnnConvolutionForward")));
    } else {
      float* dst = g.staged ? staging : y;
      INFERD_RETURN_IF_ERROR(CudnnStatus(
          cudnnConvolutionBackwardData(h, &one, d.w.get(), w, d.x.get(), x, d.conv.get(),
                                       static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm_),
                                       cudnn_ws, cudnn_bytes_, &zero, d.y.get(), dst),
          what("cudnnConvolutionBackwardData")));
      if (g.staged) {  // the node's output: a window of cuDNN's
        INFERD_RETURN_IF_ERROR(
            CudnnStatus(cudnnTransformTensor(h, &one, d.view.get(), staging + d.view_offset, &zero,
                                             d.node.get(), y),
                        what("cudnnTransformTensor")));
      }
    }
  }
  if (b != nullptr) {
    if (d.bias == nullptr) return node.Internal("a bias for a plan made without one");
    INFERD_RETURN_IF_ERROR(CudnnStatus(
        cudnnAddTensor(h, &one, d.bias.get(), b, &one, d.out.get(), y), what("cudnnAddTensor")));
  }
  return absl::OkStatus();
}

}  // namespace inferd::kernels::cuda
