// KernelTester (tests only): runs one kernel outside any graph. Describe the node (op, opset,
// attributes, inputs, number of outputs), then Run() looks the kernel up in a registry, creates it
// from a KernelInfo as the session would, and runs it with a KernelContext whose outputs come from
// an IOArena and whose temporaries and workspaces come from an ExecutionArena.
//
// Example:
//   KernelTester t("Softmax", 13);
//   t.Attr("axis", int64_t{-1}).Input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).Outputs(1);
//   absl::StatusOr<std::vector<Tensor>> out = t.Run(registry);
#ifndef INFERD_ENGINE_TESTING_KERNEL_TESTER_H_
#define INFERD_ENGINE_TESTING_KERNEL_TESTER_H_

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/kernel.h"
#include "engine/kernel_registry.h"
#include "engine/tensor.h"
#include "memory/execution_arena.h"
#include "memory/io_arena.h"

namespace inferd::engine::testing {

class KernelTester {
 public:
  explicit KernelTester(std::string op_type, int opset = 17, std::string domain = "");

  KernelTester& Attr(const std::string& name, int64_t v);
  KernelTester& Attr(const std::string& name, float v);
  KernelTester& Attr(const std::string& name, const std::string& v);
  KernelTester& Attr(const std::string& name, const std::vector<int64_t>& v);
  KernelTester& Attr(const std::string& name, const std::vector<float>& v);
  KernelTester& Attr(const std::string& name, const std::vector<std::string>& v);
  KernelTester& Attr(const onnx::AttributeProto& a);

  // Adds an input with these values; `constant` makes it visible to the kernel at creation (like
  // an initializer). `shape_known_at_load` false hides its shape from KernelInfo.
  template <typename T>
  KernelTester& Input(const Shape& shape, const std::vector<T>& values, bool constant = false) {
    return RawInput(DataTypeOf<T>::value, shape, values.data(), values.size() * sizeof(T),
                    constant);
  }
  KernelTester& RawInput(DataType type, const Shape& shape, const void* data, size_t bytes,
                         bool constant = false);
  KernelTester& AbsentInput();
  // Declares `n` outputs; `wanted` false for optional outputs the graph would not use.
  KernelTester& Outputs(int n);
  KernelTester& UnwantedOutput(int slot);
  // The element type graph inference would give output `slot` (kernels keyed on their output
  // type, such as Cast or ConstantOfShape, need it).
  KernelTester& OutputType(int slot, DataType type);
  KernelTester& Threads(int n);
  KernelTester& DeviceType(std::string device_type);

  // Creates the kernel and runs it once. Outputs in slot order (an unwanted or unwritten slot is
  // an empty Tensor).
  absl::StatusOr<std::vector<Tensor>> Run(const KernelRegistry& registry);

  // Counters of the last Run.
  const memory::ExecutionArena& execution_arena() const { return *exec_; }
  const memory::IOArena& io_arena() const { return *io_; }
  size_t workspace_bytes_declared() const { return workspace_bytes_; }

 private:
  struct InputSpec {
    bool present = false;
    bool constant = false;
    DataType type = DataType::kUndefined;
    Shape shape;
    std::vector<unsigned char> bytes;
    Tensor tensor;  // view over `bytes` (kept 64-byte aligned through a copy below)
  };
  std::string op_type_, domain_;
  int opset_;
  std::vector<onnx::AttributeProto> attributes_;
  std::vector<std::unique_ptr<InputSpec>> inputs_;
  int num_outputs_ = 1;
  std::vector<bool> unwanted_;
  std::vector<DataType> output_types_;
  int threads_ = 1;
  std::string device_type_ = "cpu";
  std::unique_ptr<memory::ExecutionArena> exec_;
  std::unique_ptr<memory::IOArena> io_;
  size_t workspace_bytes_ = 0;
};

// Reads a tensor's values (for assertions).
template <typename T>
std::vector<T> Values(const Tensor& t) {
  std::vector<T> v(static_cast<size_t>(t.NumElements()));
  if (!v.empty()) std::memcpy(v.data(), t.raw_data(), v.size() * sizeof(T));
  return v;
}

}  // namespace inferd::engine::testing

#endif  // INFERD_ENGINE_TESTING_KERNEL_TESTER_H_
