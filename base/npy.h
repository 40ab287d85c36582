// Reading and writing NumPy .npy files (format versions 1.0-3.0, little-endian, C order), the
// format users have their inputs and expect their outputs in. Dtype strings are NumPy's
// ("<f4", "<i8", "|b1", ...); callers map them to their own element types.
#ifndef INFERD_BASE_NPY_H_
#define INFERD_BASE_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace inferd {

struct NpyArray {
  std::string dtype;                // NumPy descr, e.g. "<f4"
  std::vector<int64_t> shape;       // empty for a scalar
  std::vector<unsigned char> data;  // row-major bytes
};

// Parses .npy bytes; INVALID_ARGUMENT naming what is wrong (Fortran order, big-endian, object
// arrays and truncated data are refused).
absl::StatusOr<NpyArray> ParseNpy(absl::string_view bytes);
absl::StatusOr<NpyArray> ReadNpy(const std::string& path);
// Serializes as format 1.0 (or 2.0 when the header needs it).
std::string SerializeNpy(const NpyArray& array);
absl::Status WriteNpy(const std::string& path, const NpyArray& array);
// Bytes per element of a NumPy descr, or 0 if unsupported.
size_t NpyItemSize(absl::string_view dtype);

}  // namespace inferd

#endif  // INFERD_BASE_NPY_H_
