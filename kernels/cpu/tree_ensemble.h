// The ai.onnx.ml tree ensembles (the numeric forms skl2onnx writes for tree regressors and
// gradient boosting): TreeEnsembleRegressor (opsets 1+) and TreeEnsemble (opset 5). Listed by
// ml_ops.cc's MlKernelDefs. Kernels are immutable after creation; thread-safe.
#ifndef INFERD_KERNELS_CPU_TREE_ENSEMBLE_H_
#define INFERD_KERNELS_CPU_TREE_ENSEMBLE_H_

#include <vector>

#include "engine/kernel_registry.h"

namespace inferd::kernels::cpu {

std::vector<engine::KernelDef> TreeEnsembleKernelDefs();

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_TREE_ENSEMBLE_H_
