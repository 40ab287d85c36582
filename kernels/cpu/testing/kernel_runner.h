// Test helpers for //kernels/cpu (tests only).
//
// NodeSpec describes one node as the session would present it to a kernel: attributes, inputs
// whose shapes may be hidden at load (dynamic models) or which may be constants, outputs, the
// intra-op thread count. It builds the KernelInfo, asks the registry's workspace estimate, and
// creates the kernel. RunKernel then runs a created kernel on concrete inputs any number of
// times, from any thread, with workspaces declared per run as for dynamic shapes. Together they
// cover what engine::testing::KernelTester does not: one kernel instance across runs and shapes,
// concurrent runs, shapes unknown at load, and KernelInfo-only estimates.
//
// Example:
//   NodeSpec spec("MatMul", 13);
//   spec.Input(a, /*shape_known=*/false).Input(b, true, /*constant=*/true);
//   auto kernel = spec.Create(registry);
//   auto out = RunKernel(**kernel, {&a, &b}, /*num_outputs=*/1, /*threads=*/2);
#ifndef INFERD_KERNELS_CPU_TESTING_KERNEL_RUNNER_H_
#define INFERD_KERNELS_CPU_TESTING_KERNEL_RUNNER_H_

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/data_type.h"
#include "engine/kernel.h"
#include "engine/kernel_registry.h"
#include "engine/shape.h"
#include "onnx/onnx_pb.h"

namespace inferd::kernels::cpu::testing {

// A tensor owning its bytes.
struct TestTensor {
  engine::DataType type = engine::DataType::kUndefined;
  engine::Shape shape;
  std::vector<unsigned char> bytes;

  template <typename T>
  static TestTensor Of(const engine::Shape& shape, const std::vector<T>& values) {
    TestTensor t;
    t.type = engine::DataTypeOf<T>::value;
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

class NodeSpec {
 public:
  explicit NodeSpec(std::string op_type, int opset = 17, std::string domain = "");

  NodeSpec& Attr(const std::string& name, int64_t v);
  NodeSpec& Attr(const std::string& name, float v);
  NodeSpec& Attr(const std::string& name, const std::string& v);
  NodeSpec& Attr(const std::string& name, const std::vector<int64_t>& v);
  // `shape_known` false: the KernelInfo knows the type but not the rank or dims.
  NodeSpec& Input(const TestTensor& t, bool shape_known = true, bool constant = false);
  NodeSpec& AbsentInput();
  NodeSpec& Outputs(int n);
  NodeSpec& Threads(int n);

  // Valid while this NodeSpec lives (it points at the spec's attributes and constants).
  engine::KernelInfo Info() const;
  const engine::KernelDef* Find(const engine::KernelRegistry& registry) const;
  absl::StatusOr<size_t> Estimate(const engine::KernelRegistry& registry) const;
  absl::StatusOr<std::unique_ptr<engine::OpKernel>> Create(
      const engine::KernelRegistry& registry) const;

 private:
  struct InputSpec {
    bool present = false, shape_known = true, constant = false;
    TestTensor tensor;
    std::unique_ptr<engine::Tensor> view;  // for constants
  };
  std::string op_type_, domain_;
  int opset_;
  std::vector<onnx::AttributeProto> attributes_;
  std::vector<std::unique_ptr<InputSpec>> inputs_;
  int num_outputs_ = 1;
  int threads_ = 1;
};

// The registry with every CPU kernel (RegisterCpuKernels), built once.
const engine::KernelRegistry& CpuRegistry();

// EXPECTs |actual[i] - expected[i]| <= tolerance for all i (and equal sizes); reports the first
// few mismatches.
void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected,
                float tolerance);

// Runs `kernel` once: declares its workspaces for these input shapes, allocates them, runs
// Compute on a fresh context with a pool of `threads`. nullptr inputs are absent. Outputs are
// copied out (an aliased output reads the input's bytes).
absl::StatusOr<std::vector<TestTensor>> RunKernel(const engine::OpKernel& kernel,
                                                  const std::vector<const TestTensor*>& inputs,
                                                  int num_outputs, int threads);

}  // namespace inferd::kernels::cpu::testing

#endif  // INFERD_KERNELS_CPU_TESTING_KERNEL_RUNNER_H_
