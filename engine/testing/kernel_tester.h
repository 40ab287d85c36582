// The kernel test harness (tests only): one node described outside any graph, looked up in a
// registry by device kind (DeviceType, cpu by default; the same case runs on every device that
// has the kernel), created from a KernelInfo as the session would, and run with one fake
// KernelContext whose outputs come from an IOArena and whose temporaries and workspaces come
// from an ExecutionArena.
//
// KernelTester describes the node (op, opset, attributes, inputs, which may be constants or have
// shapes unknown at load, outputs, threads). Run() creates and runs the kernel once; Info(),
// Estimate() and Create() stop earlier, and RunKernel runs a created kernel on concrete inputs
// any number of times, from any thread (one kernel instance across runs and shapes).
//
// Example:
//   KernelTester t("Softmax", 13);
//   t.Attr("axis", int64_t{-1}).Input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).Outputs(1);
//   absl::StatusOr<std::vector<Tensor>> out = t.Run(registry);
//
//   KernelTester mm("MatMul", 13);
//   mm.Input(a, /*shape_known_at_load=*/false).Input(b, true, /*constant=*/true);
//   auto kernel = mm.DeviceType(DeviceKind::kCpu).Create(registry);
//   auto outs = RunKernel(**kernel, {&a, &b}, /*num_outputs=*/1, /*threads=*/2);
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

// A tensor owning its bytes (inputs and outputs of RunKernel).
struct TestTensor {
  DataType type = DataType::kUndefined;
  Shape shape;
  std::vector<unsigned char> bytes;

  template <typename T>
  static TestTensor Of(const Shape& shape, const std::vector<T>& values) {
    TestTensor t;
    t.type = DataTypeOf<T>::value;
    t.shape = shape;
    t.bytes.resize(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
  }
  template <typename T>
  std::vector<T> values() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
  }
};

// Node attributes: the one attribute builder of the kernel tests and benchmarks.
onnx::AttributeProto IntAttr(const std::string& name, int64_t v);
onnx::AttributeProto FloatAttr(const std::string& name, float v);
onnx::AttributeProto StringAttr(const std::string& name, const std::string& v);
onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& v);
onnx::AttributeProto FloatsAttr(const std::string& name, const std::vector<float>& v);
onnx::AttributeProto StringsAttr(const std::string& name, const std::vector<std::string>& v);

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
  KernelTester& Input(const TestTensor& t, bool shape_known_at_load = true, bool constant = false);
  KernelTester& AbsentInput();
  // Declares `n` outputs; `wanted` false for optional outputs the graph would not use.
  KernelTester& Outputs(int n);
  KernelTester& UnwantedOutput(int slot);
  // The element type graph inference would give output `slot` (kernels keyed on their output
  // type, such as Cast or ConstantOfShape, need it).
  KernelTester& OutputType(int slot, DataType type);
  KernelTester& Threads(int n);
  // The device kind whose kernel Find, Create and Run use (cpu by default).
  KernelTester& DeviceType(DeviceKind device_type);

  // Creates the kernel and runs it once. Outputs in slot order (an unwanted or unwritten slot is
  // an empty Tensor).
  absl::StatusOr<std::vector<Tensor>> Run(const KernelRegistry& registry);

  // The node as the session presents it at load. Valid while this tester lives (it points at the
  // tester's attributes and constants).
  KernelInfo Info() const;
  // The registry's kernel for the node on the device kind, or nullptr.
  const KernelDef* Find(const KernelRegistry& registry) const;
  // The kernel's workspace estimate from Info() alone; NOT_FOUND without kernel or estimate.
  absl::StatusOr<size_t> Estimate(const KernelRegistry& registry) const;
  // Creates the kernel (NOT_FOUND naming the op without one), for RunKernel.
  absl::StatusOr<std::unique_ptr<OpKernel>> Create(const KernelRegistry& registry) const;

  // Counters of the last Run.
  const memory::ExecutionArena& execution_arena() const { return *exec_; }
  const memory::IOArena& io_arena() const { return *io_; }
  size_t workspace_bytes_declared() const { return workspace_bytes_; }

 private:
  struct InputSpec {
    bool present = false;
    bool constant = false;
    bool shape_known = true;  // false: KernelInfo knows the type but not the rank or dims
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
  DeviceKind device_type_ = DeviceKind::kCpu;
  std::unique_ptr<memory::ExecutionArena> exec_;
  std::unique_ptr<memory::IOArena> io_;
  size_t workspace_bytes_ = 0;
};

// Runs a created `kernel` once: declares its workspaces for these input shapes, allocates them,
// runs Compute on a fresh context (fresh arenas) with a pool of `threads`. nullptr inputs are
// absent. Outputs are copied out. Thread-safe: concurrent calls share nothing but the kernel.
absl::StatusOr<std::vector<TestTensor>> RunKernel(const OpKernel& kernel,
                                                  const std::vector<const TestTensor*>& inputs,
                                                  int num_outputs, int threads);

// Reads a tensor's values (for assertions).
template <typename T>
std::vector<T> Values(const Tensor& t) {
  std::vector<T> v(static_cast<size_t>(t.NumElements()));
  if (!v.empty()) std::memcpy(v.data(), t.raw_data(), v.size() * sizeof(T));
  return v;
}

}  // namespace inferd::engine::testing

#endif  // INFERD_ENGINE_TESTING_KERNEL_TESTER_H_
