// The element types of the kernels that only move bytes (Identity, Reshape, Flatten, Squeeze,
// Unsqueeze, Transpose, Concat): FixedSizeTypes and the one-byte float8 and int4 / uint4 types
// (one per byte inside inferd). Kernels that read values keep FixedSizeTypes.
#ifndef INFERD_KERNELS_CPU_MOVEMENT_TYPES_H_
#define INFERD_KERNELS_CPU_MOVEMENT_TYPES_H_

#include <vector>

#include "engine/data_type.h"
#include "kernels/cpu/kernel_util.h"

namespace inferd::kernels::cpu {

inline std::vector<engine::DataType> MovementTypes() {
  std::vector<engine::DataType> types = FixedSizeTypes();
  for (engine::DataType t : {engine::DataType::kFloat8E4M3FN, engine::DataType::kFloat8E4M3FNUZ,
                             engine::DataType::kFloat8E5M2, engine::DataType::kFloat8E5M2FNUZ,
                             engine::DataType::kUint4, engine::DataType::kInt4}) {
    types.push_back(t);
  }
  return types;
}

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_MOVEMENT_TYPES_H_
