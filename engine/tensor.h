// Tensor: element type, shape and a pointer to the data, which is either owned through an
// AllocationHandle (an arena buffer) or borrowed (a caller's input, a weight, a slice of a
// static plan's block). Borrowed data is never freed or put on a free list by the tensor.
// Move-only; thread-compatible.
//
// A value slot may also hold a tensor sequence or an optional (ONNX's seq(tensor(T)) and
// optional(...) types, docs/sequences.md): the same class with kind() kSequence / kOptional, its
// items() being the sequence's tensors (each owning its own buffer, or borrowed) or the one value
// an optional holds (a tensor or a sequence; none when it is empty). Such a value has dtype() the
// element type, shape [0] and no payload of its own, so code written for tensors sees no bytes.
//
// A string tensor (dtype kString, docs/strings.md) holds std::string elements: data<std::string>()
// points at them. Made by Strings(), they live in a heap vector shared by the tensor and its views
// (never in an arena); a borrowed string tensor points at a caller's std::string array. bytes() is
// 0 for strings (ElementSize(kString) is 0): code that copies bytes() must take the string path.
//
// Example:
//   Tensor in = Tensor::Borrowed(DataType::kFloat32, Shape{2, 3}, user_ptr);
//   const float* x = in.data<float>();
#ifndef INFERD_ENGINE_TENSOR_H_
#define INFERD_ENGINE_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/data_type.h"
#include "engine/shape.h"
#include "memory/allocation_handle.h"

namespace inferd::engine {

// What a value slot holds.
enum class ValueKind : uint8_t { kTensor, kSequence, kOptional };

// "tensor", "sequence", "optional".
inline const char* ValueKindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kSequence:
      return "sequence";
    case ValueKind::kOptional:
      return "optional";
    default:
      return "tensor";
  }
}

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

  // A string tensor owning `values` (shape.NumElements() of them; the caller checks the count).
  static Tensor Strings(Shape shape, std::vector<std::string> values) {
    Tensor t;
    t.type_ = DataType::kString;
    t.shape_ = std::move(shape);
    t.strings_ = std::make_shared<std::vector<std::string>>(std::move(values));
    t.data_ = t.strings_->data();
    return t;
  }
  // A string tensor owning a copy of `src`'s elements, with shape `shape` (same element count).
  static Tensor StringsCopy(const Tensor& src, Shape shape) {
    const auto* p = src.data<std::string>();
    const size_t n = static_cast<size_t>(src.NumElements());
    return Strings(std::move(shape),
                   p == nullptr ? std::vector<std::string>() : std::vector<std::string>(p, p + n));
  }

  // A sequence of tensors of element type `type` (may be empty).
  static Tensor Sequence(DataType type, std::vector<Tensor> items) {
    Tensor t;
    t.kind_ = ValueKind::kSequence;
    t.type_ = type;
    t.shape_ = Shape{0};
    t.items_ = std::move(items);
    return t;
  }
  // An optional without a value; `type` is the element type it was declared with.
  static Tensor OptionalNone(DataType type) {
    Tensor t = Sequence(type, {});
    t.kind_ = ValueKind::kOptional;
    return t;
  }
  // An optional holding `value` (a tensor or a sequence).
  static Tensor OptionalOf(Tensor value) {
    Tensor t = OptionalNone(value.dtype());
    t.items_.push_back(std::move(value));
    return t;
  }

  ValueKind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == ValueKind::kTensor; }
  bool is_sequence() const { return kind_ == ValueKind::kSequence; }
  bool is_optional() const { return kind_ == ValueKind::kOptional; }
  // Sequence: its tensors. Optional: its value, when it has one.
  const std::vector<Tensor>& items() const { return items_; }
  std::vector<Tensor>& mutable_items() { return items_; }
  bool has_element() const { return kind_ == ValueKind::kOptional && !items_.empty(); }

  DataType dtype() const { return type_; }
  const Shape& shape() const { return shape_; }
  int64_t NumElements() const { return shape_.NumElements(); }
  size_t bytes() const { return static_cast<size_t>(NumElements()) * ElementSize(type_); }
  bool is_string() const { return kind_ == ValueKind::kTensor && type_ == DataType::kString; }
  // A string tensor whose elements it owns (shares with its views) on the heap.
  bool holds_strings() const { return strings_ != nullptr; }
  // The heap vector of a string tensor made by Strings() (nullptr otherwise).
  std::shared_ptr<const std::vector<std::string>> shared_strings() const { return strings_; }
  // Bytes of the characters of a string tensor's elements (0 for other tensors).
  size_t string_bytes() const {
    size_t total = 0;
    if (!is_string() || data_ == nullptr) return 0;
    const auto* p = data<std::string>();
    for (int64_t i = 0; i < NumElements(); ++i) total += p[i].size();
    return total;
  }
  // No value at all (an absent input, a slot not yet made). An empty sequence or optional is not
  // empty().
  bool empty() const { return kind_ == ValueKind::kTensor && type_ == DataType::kUndefined; }

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

  // A borrowed view of the same bytes (the view must not outlive this tensor's storage; a string
  // tensor's view shares its heap vector, which lives as long as either).
  // A sequence or optional is viewed item by item.
  Tensor View() const {
    Tensor t = Borrowed(type_, shape_, data_);
    t.kind_ = kind_;
    t.strings_ = strings_;
    t.items_.reserve(items_.size());
    for (const Tensor& item : items_) t.items_.push_back(item.View());
    return t;
  }
  // Same storage, another shape of the same byte size (for view ops).
  void Reshape(Shape shape) { shape_ = std::move(shape); }

  bool owns_buffer() const { return handle_.valid(); }
  const memory::AllocationHandle& handle() const { return handle_; }
  // Hands the owned buffer to the caller; the tensor keeps pointing at it as a view.
  memory::AllocationHandle TakeHandle() { return std::move(handle_); }
  // Drops the data (returns an owned buffer to its arena).
  void Reset() { *this = Tensor(); }

 private:
  ValueKind kind_ = ValueKind::kTensor;
  DataType type_ = DataType::kUndefined;
  Shape shape_;
  std::vector<Tensor> items_;  // sequences and optionals only
  void* data_ = nullptr;
  memory::AllocationHandle handle_;
  std::shared_ptr<std::vector<std::string>> strings_;  // string tensors made by Strings()
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_TENSOR_H_
