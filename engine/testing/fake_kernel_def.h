// A kernel definition for graph-rewrite tests: the rewrites ask the registry only whether an op
// has a kernel (KernelRegistry::HasOp), so its factory never makes one.
#ifndef INFERD_ENGINE_TESTING_FAKE_KERNEL_DEF_H_
#define INFERD_ENGINE_TESTING_FAKE_KERNEL_DEF_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/kernel_registry.h"

namespace inferd::engine::testing {

// `op` of `domain` on the CPU, any opset and type; creating it fails.
inline KernelDef FakeKernelDef(const std::string& domain, const std::string& op) {
  KernelDef def;
  def.domain = domain;
  def.op_type = op;
  def.create = [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return absl::UnimplementedError("not made in this test");
  };
  return def;
}

}  // namespace inferd::engine::testing

#endif  // INFERD_ENGINE_TESTING_FAKE_KERNEL_DEF_H_
