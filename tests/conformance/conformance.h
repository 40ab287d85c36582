// The ONNX backend test data (Debian's libonnx-testdata: data/{node,pytorch-converted,
// pytorch-operator,simple}) through the engine: each test's model.onnx is loaded, every
// test_data_set_*/input_*.pb fed, and the outputs compared with output_*.pb (rtol 1e-3, atol
// 1e-5 unless the test has its own). A test is "passed", "failed" (loaded but wrong, or an error
// at run time), "unsupported" (refused at load because an operator, version or element type
// has no kernel: UNIMPLEMENTED), or "bad reference": a test listed in conformance.cc with the
// published reason its expected output is wrong (e.g. an ONNX issue), which ran and differs
// from that output, or "random": a test of a random operator (Bernoulli, Dropout in training
// mode) whose expected values came from numpy's generator and cannot be matched; its outputs
// are checked for type, shape and the operator's value rules instead. Neither is counted as
// passed.
#ifndef INFERD_TESTS_CONFORMANCE_CONFORMANCE_H_
#define INFERD_TESTS_CONFORMANCE_CONFORMANCE_H_

#include <map>
#include <string>
#include <vector>

#include "engine/kernel_registry.h"

namespace inferd::tests {

enum class Outcome { kPassed, kFailed, kUnsupported, kBadReference, kRandom };
const char* OutcomeName(Outcome o);

struct TestResult {
  std::string suite;  // "node"
  std::string name;   // "test_add_bcast"
  Outcome outcome = Outcome::kFailed;
  std::vector<std::string> ops;     // operator types in the model (Constant excluded)
  bool ops_all_registered = false;  // every op has some kernel in the registry
  std::string message;              // why it failed or is unsupported
  double ms = 0;
};

struct ConformanceOptions {
  std::string data_dir = "/usr/share/libonnx-testdata/data";
  std::vector<std::string> suites = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  std::string filter;           // substring of the test name; empty: all
  int per_test_timeout_s = 60;  // a test that takes longer aborts the process, naming it
  // SessionOptions::widen_half_precision (off: to compare with and without the pass).
  bool widen_half_precision = true;
};

std::vector<TestResult> RunConformance(const engine::KernelRegistry& registry,
                                       const ConformanceOptions& options);

// By operator: passed / failed / unsupported, then totals per suite.
std::string FormatTable(const std::vector<TestResult>& results);
std::string ToJson(const std::vector<TestResult>& results);

struct SuiteCounts {
  int passed = 0, failed = 0, unsupported = 0, bad_reference = 0, random = 0;
  void Add(Outcome o);
};
std::map<std::string, SuiteCounts> CountBySuite(const std::vector<TestResult>& results);

}  // namespace inferd::tests

#endif  // INFERD_TESTS_CONFORMANCE_CONFORMANCE_H_
