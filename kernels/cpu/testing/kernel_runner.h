// Test helpers for //kernels/cpu (tests only): the registry of every CPU kernel and a float
// comparison. The harness itself (KernelTester, RunKernel, TestTensor) is
// engine/testing/kernel_tester.h.
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

// The registry with every CPU kernel (RegisterCpuKernels), built once.
const engine::KernelRegistry& CpuRegistry();

// EXPECTs |actual[i] - expected[i]| <= tolerance for all i (and equal sizes); reports the first
// few mismatches.
void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected,
                float tolerance);

}  // namespace inferd::kernels::cpu::testing

#endif  // INFERD_KERNELS_CPU_TESTING_KERNEL_RUNNER_H_
