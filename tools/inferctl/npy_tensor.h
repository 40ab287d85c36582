// Conversions between .npy arrays and engine tensors' element types (inferctl).
#ifndef INFERD_TOOLS_INFERCTL_NPY_TENSOR_H_
#define INFERD_TOOLS_INFERCTL_NPY_TENSOR_H_

#include <string>

#include "absl/status/statusor.h"
#include "engine/data_type.h"

namespace inferd::tools {

// NumPy descr of an element type ("<f4"), or "" when .npy has none.
std::string NpyDtype(engine::DataType t);
// Element type of a NumPy descr, or INVALID_ARGUMENT.
absl::StatusOr<engine::DataType> DataTypeOfNpy(const std::string& dtype);

}  // namespace inferd::tools

#endif  // INFERD_TOOLS_INFERCTL_NPY_TENSOR_H_
