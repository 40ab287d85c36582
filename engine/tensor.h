// Tensor: element type, shape and a pointer to the data, which is either owned through an
// AllocationHandle (an arena buffer) or borrowed (a caller's input, a weight, a slice of a
// static plan's block). Borrowed data is never freed or put on a free list by the tensor.
// Move-only; thread-compatible.
//
// Example:
//   Tensor in = Tensor::Borrowed(DataType::kFloat32, Shape{2, 3}, user_ptr);
//   const float* x = in.data<float>();
#ifndef INFERD_ENGINE_TENSOR_H_
#define INFERD_ENGINE_TENSOR_H_

#include <cstddef>
#include <utility>

#include "engine/data_type.h"
#include "engine/shape.h"
#include "memory/allocation_handle.h"

namespace inferd::engine {

class Tensor {
 public:
  Tensor() = default;
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  static Tensor Borrowed(DataType type, Shape shape, const void* data) {
    Tensor t;
    t.type_ = type;
    t.shape_ = std::move(shape);
    t.data_ = const_cast<void*>(data);
    return t;
  }
  static Tensor Owned(DataType type, Shape shape, memory::AllocationHandle handle) {
    Tensor t;
    t.type_ = type;
    t.shape_ = std::move(shape);
    t.data_ = handle.data();
    t.handle_ = std::move(handle);
    return t;
  }

  DataType dtype() const { return type_; }
  const Shape& shape() const { return shape_; }
  int64_t NumElements() const { return shape_.NumElements(); }
  size_t bytes() const { return static_cast<size_t>(NumElements()) * ElementSize(type_); }
  bool empty() const { return type_ == DataType::kUndefined; }

  const void* raw_data() const { return data_; }
  void* raw_mutable_data() { return data_; }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }
  template <typename T>
  T* mutable_data() {
    return static_cast<T*>(data_);
  }

  // A borrowed view of the same bytes (the view must not outlive this tensor's storage).
  Tensor View() const { return Borrowed(type_, shape_, data_); }
  // Same storage, another shape of the same byte size (for view ops).
  void Reshape(Shape shape) { shape_ = std::move(shape); }

  bool owns_buffer() const { return handle_.valid(); }
  const memory::AllocationHandle& handle() const { return handle_; }
  // Hands the owned buffer to the caller; the tensor keeps pointing at it as a view.
  memory::AllocationHandle TakeHandle() { return std::move(handle_); }
  // Drops the data (returns an owned buffer to its arena).
  void Reset() { *this = Tensor(); }

 private:
  DataType type_ = DataType::kUndefined;
  Shape shape_;
  void* data_ = nullptr;
  memory::AllocationHandle handle_;
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_TENSOR_H_
