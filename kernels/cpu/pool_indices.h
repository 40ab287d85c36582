// MaxPool with its Indices output, as plain loops (oneDNN's inference pooling does not report
// where the maximum was). Internal to //kernels/cpu. Pure function; thread-safe.
#ifndef INFERD_KERNELS_CPU_POOL_INDICES_H_
#define INFERD_KERNELS_CPU_POOL_INDICES_H_

#include "absl/status/status.h"
#include "engine/tensor.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/type_dispatch.h"
#include "kernels/cpu/window.h"

namespace inferd::kernels::cpu {

// MaxPool's element types (oneDNN and the Indices loops alike).
using MaxPoolTypes = TypeList<float, uint8_t, int8_t>;

// y[n, c, o...] = max of x over the window of o (padding never wins); indices (may be null)
// the flat position of that maximum in x, the first one on ties: row-major over [N, C, spatial]
// when storage_order is 0, spatial dims column-major when it is 1 (ONNX MaxPool-8+). float32,
// int8 and uint8; y and indices already have the output shape.
absl::Status MaxPoolWithIndices(const engine::Tensor& x, const WindowGeometry& window,
                                int64_t storage_order, engine::ThreadPool& pool, engine::Tensor& y,
                                engine::Tensor* indices, const NodeLabel& node);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_POOL_INDICES_H_
