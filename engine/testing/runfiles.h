// Paths of data files inside a Bazel test's runfiles (tests only).
#ifndef INFERD_ENGINE_TESTING_RUNFILES_H_
#define INFERD_ENGINE_TESTING_RUNFILES_H_

#include <cstdlib>
#include <string>

namespace inferd::engine::testing {

// "tools/models/mlp/model.onnx" -> "$TEST_SRCDIR/inferd/tools/models/mlp/model.onnx".
inline std::string Runfile(const std::string& workspace_relative) {
  const char* root = std::getenv("TEST_SRCDIR");
  return std::string(root != nullptr ? root : ".") + "/inferd/" + workspace_relative;
}

// A fresh directory for this test's files ($TEST_TMPDIR, or /tmp).
inline std::string TempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp != nullptr ? tmp : "/tmp";
}

}  // namespace inferd::engine::testing

#endif  // INFERD_ENGINE_TESTING_RUNFILES_H_
