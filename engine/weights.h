// WeightStore: the model's weights (initializers and folded Constant nodes) as borrowed Tensor
// views. Weights are never copied into arenas: raw data is viewed where the parsed model holds
// it, external data (`data_location: EXTERNAL`) is mapped with mmap relative to the model file
// and bounds-checked, and only typed fields that need widening (int32_data holding int8, ...)
// or misaligned external data are converted into owned buffers (counted in owned_bytes()).
// Not thread-safe while loading; read-only afterwards.
#ifndef INFERD_ENGINE_WEIGHTS_H_
#define INFERD_ENGINE_WEIGHTS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/tensor.h"
#include "onnx/onnx_pb.h"

namespace inferd::engine {

// A read-only mapping of a whole file.
class MappedFile {
 public:
  // Maps `path`, which must be a regular file: it is opened without blocking (a FIFO or a device
  // in its place would block open() or read() forever) and checked on the opened descriptor, so
  // a file swapped after a check cannot slip in. With `inside_dirs`, the opened file must also
  // lie inside one of those directories once every symbolic link (of both) is resolved.
  static absl::StatusOr<std::unique_ptr<MappedFile>> Open(
      const std::string& path, const std::vector<std::string>& inside_dirs = {});
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const unsigned char* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  MappedFile(const unsigned char* data, uint64_t size) : data_(data), size_(size) {}
  const unsigned char* data_;
  uint64_t size_;
};

class WeightStore {
 public:
  // `model_dir`: directory that external data locations are relative to ("" = none allowed).
  explicit WeightStore(std::string model_dir) : model_dir_(std::move(model_dir)) {}

  // A view of `proto`'s data. `proto` must outlive the store (it is part of the parsed model).
  // `what` names the tensor in messages ("initializer 'w'").
  absl::StatusOr<const Tensor*> Add(const onnx::TensorProto& proto, const std::string& what);

  // External data files must lie, links resolved, inside model_dir or, when the model file is
  // itself a link (a Bazel runfiles tree, a volume of links to a store), inside the folder of
  // the file it resolves to. Model::Load sets that folder.
  void set_linked_model_dir(std::string dir) { linked_model_dir_ = std::move(dir); }

  const std::string& model_dir() const { return model_dir_; }
  uint64_t total_bytes() const { return total_bytes_; }
  uint64_t owned_bytes() const { return owned_bytes_; }
  uint64_t mapped_bytes() const { return mapped_bytes_; }

 private:
  absl::StatusOr<const unsigned char*> External(const onnx::TensorProto& proto, uint64_t bytes,
                                                const std::string& what);

  std::string model_dir_;
  std::string linked_model_dir_;  // "" when the model file is no link (or there is no file)
  std::map<std::string, std::unique_ptr<MappedFile>> files_;
  std::vector<std::unique_ptr<unsigned char[]>> owned_;
  std::deque<Tensor> tensors_;  // stable addresses
  uint64_t total_bytes_ = 0, owned_bytes_ = 0, mapped_bytes_ = 0;
};

// Decodes a TensorProto into an owned, contiguous byte vector (for test data, .pb files, and
// Constant attributes read by tools). Handles raw and typed fields; no external data; a string
// tensor is UNIMPLEMENTED here (TensorProtoStrings).
absl::StatusOr<std::vector<unsigned char>> TensorProtoBytes(const onnx::TensorProto& proto,
                                                            DataType* type, Shape* shape);
// The elements of a string TensorProto (string_data), its shape in `shape`. INVALID_ARGUMENT for
// another type or a count that does not match the dims.
absl::StatusOr<std::vector<std::string>> TensorProtoStrings(const onnx::TensorProto& proto,
                                                            Shape* shape);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_WEIGHTS_H_
